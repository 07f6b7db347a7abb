// The lesson bar's one piece of behaviour htmx does not give: the "Copy" button next to a step's
// kubectl command. Delegated from the document, so steps swapped in by htmx need no wiring.
// The clipboard API exists only on secure origins (https, localhost); elsewhere (a projector
// laptop reached by its Wi-Fi address) the command is selected instead, ready for Ctrl-C.
document.addEventListener("click", (event) => {
  const button = event.target.closest(".lesson-copy");
  if (!button) return;
  const command = button.dataset.copy || "";
  const code = button.parentElement.querySelector(".lesson-kubectl");
  const select = () => {
    if (!code) return;
    const range = document.createRange();
    range.selectNodeContents(code);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(command).then(() => { button.dataset.copied = "true"; }, select);
  } else {
    select();
  }
});
