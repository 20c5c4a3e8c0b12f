// Live progress for the run page: while the run is active, fetch the matrix
// partial (same filters as the page) and swap it in. When the run ends,
// reload once so the header, buttons and links match the final state.
(function () {
  "use strict";
  var container = document.getElementById("matrix");
  if (!container) return;
  var interval = 1000;
  var failures = 0;

  function isLive() {
    var matrix = container.querySelector(".matrix");
    return matrix && matrix.getAttribute("data-live") === "1";
  }

  function poll() {
    var url = container.getAttribute("data-src") + window.location.search;
    fetch(url, { headers: { "Accept": "text/html" }, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      })
      .then(function (html) {
        failures = 0;
        container.innerHTML = html;
        showStatus();
        startCountdowns();
        document.dispatchEvent(new CustomEvent("rlconform:swapped"));
        if (isLive()) {
          window.setTimeout(poll, interval);
        } else {
          window.location.reload();
        }
      })
      .catch(function () {
        failures += 1;
        if (failures < 30) window.setTimeout(poll, interval * Math.min(failures + 1, 5));
      });
  }

  // The heading's status badge follows the run (queued, then running while a listen-mode run waits).
  function showStatus() {
    var fresh = container.querySelector("template.live-status");
    var heading = document.getElementById("run-status");
    if (fresh && heading && heading.innerHTML !== fresh.innerHTML.trim()) heading.innerHTML = fresh.innerHTML.trim();
  }

  // A listen-mode run waiting for its client counts down to the connect deadline between polls.
  var ticking = null;
  function startCountdowns() {
    var started = Date.now();
    var counters = container.querySelectorAll(".countdown[data-remaining]");
    if (ticking) window.clearInterval(ticking);
    ticking = counters.length ? window.setInterval(function () {
      var elapsed = Math.floor((Date.now() - started) / 1000);
      counters.forEach(function (counter) {
        var left = Math.max(0, Number(counter.getAttribute("data-remaining")) - elapsed);
        counter.textContent = "in " + left + " s";
      });
    }, 1000) : null;
  }

  startCountdowns();
  if (isLive()) window.setTimeout(poll, interval);
})();
