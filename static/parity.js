// The parity form: offer only second sides of the first target's kind, and warn when the worker labels differ.
(function () {
  const first = document.getElementById("first");
  const second = document.getElementById("second");
  const warning = document.getElementById("label-warning");
  if (!first || !second || !warning) return;

  function update() {
    const chosen = first.selectedOptions[0];
    const kind = chosen ? chosen.dataset.kind : undefined;
    for (const option of second.querySelectorAll("option[data-kind]")) {
      option.hidden = Boolean(kind) && option.dataset.kind !== kind;
    }
    const other = second.selectedOptions[0];
    if (other && other.hidden) second.value = "";
    const a = chosen && chosen.dataset.label;
    const b = second.selectedOptions[0] && second.selectedOptions[0].dataset.label;
    warning.hidden = !(a && b && a !== b);
    if (!warning.hidden) {
      warning.textContent = `The run executes on workers labelled "${a}" (the first target's); ` +
        `the second target is labelled "${b}" and may not be reachable from there.`;
    }
  }
  first.addEventListener("change", update);
  second.addEventListener("change", update);
  update();
})();
