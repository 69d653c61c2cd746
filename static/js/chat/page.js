// The chat page's shared parts: the page's element and its API, the calls to it, and what every part of the
// page shows alike. Each part (conversation, inspector, memory_panel, feed, model, import) adds its functions
// to `window.ChatPage` (`chat` in each part), where the others find them when they run; main.js starts the
// page. Memory content is user input, so it is only ever placed in the page as text (textContent), never as
// HTML.
(function () {
  "use strict";
  const root = document.getElementById("chat-app");
  if (!root) return;
  const api = root.dataset.api;
  const csrf = root.dataset.csrf;
  const $ = (id) => document.getElementById(id);
  const { el } = window.Playground;

  // A failed action's message, in the page's one error line (above the conversation).
  function showError(message) {
    $("error").textContent = message;
    $("error").hidden = false;
  }

  function fill(list, nodes, empty) {
    list.replaceChildren(...(nodes.length ? nodes : [el("li", "muted empty", empty)]));  // no number: not an item
  }

  function turnLink(pageId, seq) {
    const link = el("a", "source-link", `turn #${seq}`);
    link.href = `#turn-${pageId}`;
    link.dataset.page = pageId;
    return link;
  }

  window.ChatPage = {
    root,
    api,
    $,
    el,
    call: window.Playground.caller(api, csrf),
    stream: window.Playground.streamer(api, csrf),
    showError,
    fill,
    turnLink,
    // Shown for a turn whose reply degenerated: the server kept the user's words and dropped the reply.
    WITHHELD: "(The assistant's reply went wrong and was not kept in memory.)",
  };
})();
