// Changing the kind re-renders the form for that kind: press the
// "Show options for this kind" button (which works without this script too).
(function () {
  "use strict";
  var select = document.querySelector("[data-switch-kind]");
  var button = document.getElementById("switch-kind");
  if (!select || !button) return;
  button.hidden = true;
  select.addEventListener("change", function () { button.click(); });
})();
