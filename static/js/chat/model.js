// The space's model: the server's default, the bundled model, an endpoint, or a model server found on this
// machine; tested before it is used.
(function (chat) {
  "use strict";
  if (!chat) return;
  const { $, el, call } = chat;

  // --- The model -----------------------------------------------------------------------------------

  // The space's LLM: the server's default, the bundled model, or an endpoint. A stored key is never sent
  // to the page: it shows only the key's last four characters, and a key field left empty keeps it.
  function modelValues() {
    const form = $("model");
    const values = { provider: form.provider.value, base_url: form.base_url.value, model: form.model.value };
    if (form.remove_key.checked) values.api_key = "";
    else if (form.api_key.value) values.api_key = form.api_key.value;
    return values;
  }

  function showModel(llm) {
    const form = $("model");
    form.provider.value = llm.provider;
    form.base_url.value = llm.base_url;
    form.model.value = llm.model;
    form.api_key.value = "";
    form.remove_key.checked = false;
    form.api_key.placeholder = llm.has_key ? `stored, ending in ${llm.key_hint}; type to replace` : "none";
    form.remove_key.parentElement.hidden = !llm.has_key;
    $("endpoint-fields").hidden = form.provider.value !== "openai";
    $("model-note").textContent = `The server's default is ${llm.deployment.provider} (${llm.deployment.model}).` +
      (llm.can_keep_keys ? "" : " This server keeps no API keys (it has no MEMORYOS_SECRETS_KEY).");
    $("offline-notice").hidden = !llm.weak;
  }

  // The model servers answering on this machine (in development: Ollama, LM Studio, llama.cpp on their
  // usual ports), each model a button that fills the form.
  async function showLocalServers() {
    const { servers } = await call("llm/local/");
    const items = servers.flatMap((server) => server.models.map((model) => {
      const button = el("button", "secondary", `${server.name}: ${model}`);
      button.type = "button";
      button.addEventListener("click", () => {
        const form = $("model");
        form.provider.value = "openai";
        form.base_url.value = server.base_url;
        form.model.value = model;
        $("endpoint-fields").hidden = false;
        $("model-status").textContent = `${server.name} at ${server.base_url}: Save to use ${model}`;
      });
      const item = el("li");
      item.append(button);
      return item;
    }));
    $("local-server-list").replaceChildren(...items);
    $("local-servers").hidden = !items.length;
  }

  async function loadModel() {
    if (!$("model-panel").open) return;
    showModel(await call("llm/"));
    await showLocalServers();
  }

  // An endpoint is asked for a word before it is saved: one that does not answer is saved only when Save
  // is pressed again for the same values (every reply would fail until it answers).
  let keepUntested = null;

  async function saveModel(event) {
    event.preventDefault();
    const values = modelValues();
    const asked = JSON.stringify(values);
    let tested = "";
    try {
      if (values.provider === "openai" && keepUntested !== asked) {
        $("model-status").textContent = "asking the model for a word before saving…";
        const result = await call("llm/test/", { method: "POST", body: asked });
        if (!result.ok) {
          keepUntested = asked;
          $("model-status").textContent = `not saved: no answer: ${result.detail}. Press Save again to keep it anyway (replies fail until it answers).`;
          return;
        }
        tested = ` (${result.model || "it"} answered in ${result.seconds} s)`;
      }
      $("model-status").textContent = "saving…";
      showModel(await call("llm/", { method: "PUT", body: asked }));
      const untested = values.provider === "openai" && !tested;
      keepUntested = null;
      $("model-status").textContent = untested
        ? "saved untested: replies fail until it answers"
        : `saved${tested}: the next reply uses it`;
    } catch (error) {
      $("model-status").textContent = error.message;
    }
  }

  async function testModel() {
    $("model-status").textContent = "asking the model for a word…";
    $("test-model").disabled = true;
    try {
      const result = await call("llm/test/", { method: "POST", body: JSON.stringify(modelValues()) });
      if (!result.ok) $("model-status").textContent = `no answer: ${result.detail}`;
      else if (result.provider === "offline") $("model-status").textContent = `the bundled model is installed and loaded (it runs in this process; ${result.seconds} s)`;
      else $("model-status").textContent = `connected: ${result.provider}${result.model ? ` ${result.model}` : ""} answered “${result.answer}” in ${result.seconds} s`;
    } catch (error) {
      $("model-status").textContent = error.message;
    } finally {
      $("test-model").disabled = false;
    }
  }

  // A phone shows the offline notice's first line, the rest a tap away: whole, it pushed the message box
  // below the first screen.
  if (window.matchMedia("(max-width: 820px)").matches) $("offline-details").open = false;
  $("model").addEventListener("submit", saveModel);
  $("offline-model-link").addEventListener("click", (event) => {
    event.preventDefault();
    $("model-panel").open = true;  // its toggle event loads the form and the servers found here
    $("model-panel").scrollIntoView({ block: "start", behavior: "smooth" });
  });
  $("test-model").addEventListener("click", testModel);
  $("model").provider.addEventListener("change", () => {
    $("endpoint-fields").hidden = $("model").provider.value !== "openai";
  });
  $("model-panel").addEventListener("toggle", () => loadModel().catch((error) => {
    $("model-status").textContent = error.message;
  }));
})(window.ChatPage);
