// Copy buttons for the command blocks: hidden without script, so the page never offers what it cannot do.
// Clicks are handled on the document, so blocks the live run page swaps in work too.
(function () {
  "use strict";
  if (!navigator.clipboard) return;

  function reveal() {
    document.querySelectorAll("button.copy[data-copy]").forEach(function (button) { button.hidden = false; });
  }

  document.addEventListener("click", async function (event) {
    const button = event.target.closest("button.copy[data-copy]");
    if (!button) return;
    const text = document.getElementById(button.dataset.copy).textContent;
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
    } catch {
      button.textContent = "Select and copy";
    }
    setTimeout(function () { button.textContent = "Copy"; }, 2000);
  });
  document.addEventListener("rlconform:swapped", reveal);
  reveal();
})();
