// The tokens page: a new token's Copy button (the secret is shown once).
"use strict";
(() => {
  const button = document.getElementById("copy-token");
  if (!button) return;
  const secret = document.getElementById("token-secret");
  const status = document.getElementById("copy-status");
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(secret.value);
      status.textContent = "copied";
    } catch {
      // No clipboard for the page (an address that is not https, a browser's setting): select it to copy.
      secret.select();
      status.textContent = "selected: copy it with Ctrl+C (⌘C)";
    }
  });
})();
