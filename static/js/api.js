// Shared by the playground's pages: a JSON call to the REST API with the signed-in session, and an
// element holding text. Memory content is user input: it is only ever placed in a page as text.
(function () {
  "use strict";

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  // call(path, options) for the API below `api`; an error's message is the API's detail.
  function caller(api, csrf) {
    return async function call(path, options = {}) {
      const response = await fetch(api + path, {
        credentials: "same-origin",
        ...options,
        headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrf },
      });
      const body = response.status === 204 ? null : await response.json().catch(() => null);
      if (!response.ok) {
        const detail = body && (body.detail || Object.values(body).flat().join(" "));
        throw new Error(detail || `${response.status} ${response.statusText}`);
      }
      return body;
    };
  }

  window.Playground = { el, caller };
})();
