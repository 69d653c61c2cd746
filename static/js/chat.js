// The chat page: talks to the REST API with the signed-in session. Memory content is user input, so it
// is only ever placed in the page as text (textContent), never as HTML.
(function () {
  "use strict";
  const root = document.getElementById("chat-app");
  if (!root) return;
  const api = root.dataset.api;
  const csrf = root.dataset.csrf;
  const $ = (id) => document.getElementById(id);
  // Shown for a turn whose reply degenerated: the server kept the user's words and dropped the reply.
  const WITHHELD = "(The assistant's reply went wrong and was not kept in memory.)";
  // A weak model's questions about the person are answered with their own words (engine/recall.py).
  const QUOTED = "Quoted from what you said (offline mode): not the model's words.";
  const WEAK = "Written by the offline model: shown, never kept as a fact about you.";

  const call = window.Playground.caller(api, csrf);
  const stream = window.Playground.streamer(api, csrf);
  const { el } = window.Playground;

  // A failed action's message, in the page's one error line (above the conversation).
  function showError(message) {
    $("error").textContent = message;
    $("error").hidden = false;
  }

  function fill(list, nodes, empty) {
    list.replaceChildren(...(nodes.length ? nodes : [el("li", "muted", empty)]));
  }

  // --- Conversation ------------------------------------------------------------------------------

  function bubble(role, text, pageId) {
    const item = el("li", `bubble ${role}`);
    item.append(el("div", "text", text));
    $("messages").append(item);
    if (pageId) markTurn(item, pageId);
    item.scrollIntoView({ block: "end" });
    return item;
  }

  // Both bubbles of a stored turn carry its page id; the first is the anchor "What it used" links to.
  function markTurn(item, pageId) {
    item.dataset.page = pageId;
    if (!document.getElementById(`turn-${pageId}`)) item.id = `turn-${pageId}`;
  }

  function turnLink(pageId, seq) {
    const link = el("a", "source-link", `turn #${seq}`);
    link.href = `#turn-${pageId}`;
    link.dataset.page = pageId;
    return link;
  }

  function provenance(item) {
    const p = item.provenance || {};
    const line = el("div", "provenance muted");
    if (item.kind === "page" || item.kind === "short_term") {
      line.append(turnLink(p.page_id, p.seq), ` · session ${p.session_id ?? "—"}`);
      return line;
    }
    line.append(`entry ${p.entry_id}${p.key ? ` · ${p.key}` : ""}`);
    (p.source_pages || []).forEach((source, i) => line.append(i ? ", " : " · from ", turnLink(source.page_id, source.seq)));
    return line;
  }

  function usedPanel(retrieval) {
    const details = el("details", "used");
    const items = [...retrieval.pages, ...retrieval.profile, ...retrieval.user_knowledge, ...retrieval.assistant_knowledge,
      ...retrieval.short_term];
    details.append(el("summary", null, `What it used: ${retrieval.pages.length} pages, ${retrieval.profile.length} profile, ` +
      `${retrieval.user_knowledge.length + retrieval.assistant_knowledge.length} knowledge, ` +
      `${retrieval.short_term.length} recent turns · ${retrieval.tokens_used} tokens`));
    const list = el("ol", "used-list");
    for (const item of items) {
      const row = el("li", `used-item kind-${item.kind}`);
      const score = item.kind === "short_term" ? "recent" : item.score.toFixed(3);
      row.append(el("span", "kind", item.kind.replace("_", " ")), el("span", "score", score));
      row.append(el("div", "used-text", item.text), provenance(item));
      list.append(row);
    }
    details.append(list, inspectLink(retrieval.query));
    details.addEventListener("toggle", () => {
      if (details.open) details.scrollIntoView({ block: "nearest" });
    });
    return details;
  }

  // --- The inspector ------------------------------------------------------------------------------

  function inspectLink(query) {
    const link = el("button", "link inspect-link", "Inspect");
    link.type = "button";
    link.title = "What this message retrieves: every score, what the budget cut, the exact prompt";
    link.addEventListener("click", () => {
      $("inspect-query").value = query;
      $("inspector-panel").open = true;
      inspectNow();
      $("inspector-panel").scrollIntoView({ block: "start" });
    });
    return link;
  }

  const SCORE_NAMES = [["match", "match"], ["chain", "neighbours"], ["dense", "cosine"], ["bm25", "BM25"], ["keywords", "keywords"]];

  // heatOf: session id -> its heat, for the sessions the retrieval ranked.
  function scoreRow(item, where, heatOf) {
    const row = el("tr", `inspected ${where.replace(" ", "-")}`);
    const score = item.kind === "short_term" ? "recent" : item.score.toFixed(3);
    row.append(el("td", null, item.kind.replace("_", " ")), el("td", `where ${where}`, where), el("td", "num", score));
    for (const [name] of SCORE_NAMES) {
      const value = item.scores[name];
      row.append(el("td", "num", value === undefined ? "" : value.toFixed(3)));
    }
    const heat = item.provenance && heatOf.get(item.provenance.session_id);
    row.append(el("td", "num", heat === undefined ? "" : heat.toFixed(2)));
    row.append(el("td", "num", item.tokens), el("td", "text", item.text));
    return row;
  }

  function showInspection(x) {
    const r = x.retrieval;
    const head = el("tr");
    const columns = ["kind", "prompt", "score", ...SCORE_NAMES.map(([, label]) => label), "session heat", "tokens", "text"];
    for (const name of columns) head.append(el("th", null, name));
    const table = el("table", "inspection-table");
    table.append(head);
    const heatOf = new Map(r.sessions.map((s) => [s.provenance.session_id, s.provenance.heat]));
    for (const item of [...r.short_term, ...r.profile, ...r.pages, ...r.user_knowledge, ...r.assistant_knowledge]) {
      table.append(scoreRow(item, "in", heatOf));
    }
    for (const item of r.cut) table.append(scoreRow(item, "cut", heatOf));
    for (const item of r.sessions) table.append(scoreRow(item, "not sent", heatOf));
    const parts = el("ol", "prompt-parts");
    for (const part of x.parts) {
      const li = el("li", "prompt-part");
      li.append(el("div", "muted", `${part.name} · ${part.role} · ${part.tokens} tokens`), el("pre", null, part.text));
      parts.append(li);
    }
    const fromMemory = [];
    if (x.answer_from_memory) {
      const said = el("p", "notice", `The offline model would not be asked. The reply would be: “${x.answer_from_memory.text}”`);
      x.answer_from_memory.quoted.forEach((s, i) => said.append(i ? ", " : " From ", turnLink(s.page_id, s.seq)));
      fromMemory.push(said);
    }
    $("inspection").replaceChildren(
      ...fromMemory,
      el("p", "budget", `Memory used ${r.tokens_used} of ${r.token_budget} tokens; ${r.cut.length} items cut by the budget. ` +
        `The prompt is about ${x.prompt_tokens} tokens${x.compact ? " (the short prompt of a weak model)" : ""}.`),
      table,
      el("p", "muted", "A page's score is its match (BM25 and the cosine, weighed) plus its neighbours' share; heat " +
        "and recency are not in it: they decide which sessions are promoted, and a chat turn heats the sessions of " +
        "the pages it uses. The sessions ranked by their summary (cosine and keywords) are shown, not sent."),
      el("h4", null, "The prompt, as it would be sent"),
      parts,
    );
  }

  async function inspectNow(event) {
    if (event) event.preventDefault();
    const query = $("inspect-query").value;
    if (!query.trim()) return;
    $("inspection").replaceChildren(el("p", "muted", "inspecting…"));
    try {
      showInspection(await call("inspect/", { method: "POST", body: JSON.stringify({ query }) }));
    } catch (error) {
      $("inspection").replaceChildren(el("p", "error", error.message));
    }
  }

  // --- The heat timeline ---------------------------------------------------------------------------

  async function showHeatTimeline() {
    if (!$("heat-panel").open) return;
    // The newest 2,000 points at most: the last four pages of 500, oldest first.
    const first = await call("heat/?page_size=500");
    const last = Math.max(1, Math.ceil(first.count / 500));
    const points = [];
    for (let number = Math.max(1, last - 3); number <= last; number++) {
      points.push(...(number === 1 ? first : await call(`heat/?page_size=500&page=${number}`)).results);
    }
    const space = await call("");
    window.MemoryCharts.heatTimeline($("heat-chart"), points, space.parameters.heat_threshold, { height: 220 });
  }

  function flash(nodes) {
    for (const node of nodes) {
      node.classList.remove("flash");
      void node.offsetWidth; // restart the animation
      node.classList.add("flash");
    }
  }

  // A source link goes to its turn in the conversation; a turn older than the conversation shown is
  // fetched and quoted under the link instead.
  async function showSource(event) {
    const link = event.target.closest("a.source-link");
    if (!link) return;
    event.preventDefault();
    const pageId = link.dataset.page;
    const shown = document.querySelectorAll(`#messages .bubble[data-page="${pageId}"]`);
    if (shown.length) {
      shown[0].scrollIntoView({ block: "center", behavior: "smooth" });
      flash(shown);
      return;
    }
    const row = link.closest(".used-item") || link.parentElement;
    let quote = row.querySelector(`.source-quote[data-page="${pageId}"]`);
    if (!quote) {
      quote = el("blockquote", "source-quote loading");
      quote.dataset.page = pageId;
      quote.append(el("div", "muted", "loading…"));
      row.append(quote);
      try {
        const turn = await call(`turns/${pageId}/`);
        const lines = [el("div", "muted", `turn #${turn.seq} · ${turn.tier} · ${turn.timestamp.slice(0, 16).replace("T", " ")}`)];
        if (turn.user_input) lines.push(el("div", null, `User: ${turn.user_input}`));
        if (turn.agent_response) lines.push(el("div", null, `Assistant: ${turn.agent_response}`));
        if (turn.reply_withheld) lines.push(el("div", "muted", WITHHELD));
        quote.replaceChildren(...lines);
      } catch (error) {
        quote.replaceChildren(el("div", "error", `turn not found: ${error.message}`));
      }
      quote.classList.remove("loading");
    }
    flash([quote]);
  }

  async function loadHistory() {
    const page = await call("turns/?newest=true&page_size=30");
    for (const turn of page.results.reverse()) {
      if (turn.user_input) bubble("user", turn.user_input, turn.id);
      if (turn.agent_response) markSource(bubble("assistant", turn.agent_response, turn.id), turn.reply_source, []);
      if (turn.reply_withheld) bubble("assistant withheld", WITHHELD, turn.id);
      if (turn.user_input && (turn.agent_response || turn.reply_withheld)) {
        $("messages").lastElementChild.append(inspectLink(turn.user_input));
      }
    }
  }

  // The reply streams in word by word. "Stop" (or Escape) ends it: the server stops the model at its next
  // word and stores nothing, and the words shown so far stay, marked as not kept.
  let replying = null;

  // A reply made of the person's words says so, with links to the turns it quotes; a weak model's says
  // that it is not memory.
  function markSource(item, source, quoted) {
    if (source === "quoted") {
      item.classList.add("quoted");
      const note = el("div", "quote-note muted", QUOTED);
      quoted.forEach((said, i) => note.append(i ? ", " : " ", turnLink(said.page_id, said.seq)));
      item.append(note);
    } else if (source === "weak_model") {
      item.title = WEAK;
    }
    return item;
  }

  function finishReply(pending, asked, answer) {
    pending.classList.remove("pending", "streaming");
    pending.querySelector(".text").textContent = answer.response;
    if (answer.reply_withheld) {
      pending.classList.add("withheld");
      pending.title = WITHHELD;
    } else {
      markSource(pending, answer.page.reply_source, answer.quoted || []);
    }
    pending.append(usedPanel(answer.retrieval));
    pending.scrollIntoView({ block: "end" });
    markTurn(asked, answer.page.id);
    markTurn(pending, answer.page.id);
    refresh();
  }

  async function send(event) {
    event.preventDefault();
    const query = $("query").value;
    if (!query.trim() || replying) return;
    $("error").hidden = true;
    $("query").value = "";
    const asked = bubble("user", query);
    const pending = bubble("assistant pending", "");
    const text = pending.querySelector(".text");
    replying = new AbortController();
    $("send").hidden = true;
    $("stop").hidden = false;
    let answer = null;
    try {
      await stream("chat/", { query, stream: true }, (name, data) => {
        if (name === "delta") {
          pending.classList.add("streaming");  // still pending: the reply is not complete, nor stored
          text.textContent += data.text;
          pending.scrollIntoView({ block: "end" });
        } else if (name === "restart") {
          text.textContent = "";
        } else if (name === "reply") {
          answer = data;
        } else if (name === "error") {
          throw new Error(data.detail);
        }
      }, replying.signal);
      if (!answer) throw new Error("the reply broke off before it was complete; nothing was stored");
      finishReply(pending, asked, answer);
    } catch (error) {
      if (error.name === "AbortError") {
        pending.classList.remove("pending", "streaming");
        pending.classList.add("stopped");
        asked.classList.add("stopped");
        pending.append(el("div", "muted stopped-note", "Stopped: this exchange was not kept in memory."));
      } else {
        pending.remove();
        asked.remove();
        $("query").value = query;
        showError(error.message);
      }
    } finally {
      replying = null;
      $("stop").hidden = true;
      $("send").hidden = false;
      $("query").focus();
    }
  }

  function stop() {
    if (replying) replying.abort();
  }

  // --- Memory panel ------------------------------------------------------------------------------

  // The panel shows the space as the feed (GET events/) last described it; each part is read again when
  // the feed says it changed, and everything after an action of this page.
  let lastSpace = null;

  function showSpace(space, runs) {
    lastSpace = space;
    const c = space.counts;
    showParameters(space.parameters);
    const counts = [["short-term", c.short_term_pages], ["mid-term", c.mid_term_pages], ["sessions", c.active_sessions],
      ["profile", c.profile_entries], ["knowledge", c.user_knowledge + c.assistant_knowledge]];
    $("counts").replaceChildren(...counts.flatMap(([name, n]) => [el("dt", null, name), el("dd", null, n)]));
    const busy = c.consolidation_pending || runs.some((r) => r && (r.status === "running" || r.status === "retrying"));
    $("consolidation").textContent = busy ? "consolidating…" : "idle";
    $("consolidation").classList.toggle("busy", busy);
  }

  async function showTiers() {
    const [short, sessions] = await Promise.all([
      call("turns/?tier=short&newest=true&page_size=20"),
      call("sessions/?status=active&page_size=20"),
    ]);
    const threshold = lastSpace.parameters.heat_threshold;
    fill($("short-term"), short.results.map((t) => el("li", null, `#${t.seq} ${t.user_input || t.agent_response}`)), "empty");
    const hottest = Math.max(threshold, ...sessions.results.map((s) => s.heat));
    fill($("sessions"), sessions.results.map((s) => {
      const item = el("li", "session");
      const bar = el("div", "heat");
      bar.style.width = `${Math.max(2, (100 * s.heat) / hottest)}%`;
      if (s.heat >= threshold) bar.classList.add("hot");
      item.append(el("div", "session-head", `heat ${s.heat.toFixed(2)} · ${s.l_interaction} new pages · ${s.n_visit} visits since promotion`), bar,
        el("div", "summary", s.summary));
      return item;
    }), "none yet");
  }

  async function showEntries() {
    const [profile, knowledge] = await Promise.all([call("profile/"), call("knowledge/?page_size=50")]);
    // An entry being edited stays as it is until it is saved or left; a history open stays open.
    if (document.querySelector("form.edit-entry")) return;
    const openHistories = new Set([...document.querySelectorAll("button.history-toggle[aria-expanded=true]")]
      .map((button) => button.dataset.path));
    const rows = profile.entries.flatMap((e) => {
      const value = el("dd");
      value.append(el("span", "value", e.value), editButton(e, `profile/${e.id}/`, value),
        forgetButton(e, `profile/${e.id}/`, `${e.key}: ${e.value}`), historyButton(`profile/${e.id}/history/`, value));
      return [el("dt", null, e.key), value];
    });
    $("profile").replaceChildren(...(rows.length ? rows : [el("dd", "muted", "nothing learnt yet")]));
    fill($("knowledge"), knowledge.results.map((e) => {
      const item = el("li", e.kind);
      item.append(el("span", "value", e.value), editButton(e, `knowledge/${e.id}/`, item),
        forgetButton(e, `knowledge/${e.id}/`, e.value), historyButton(`knowledge/${e.id}/history/`, item));
      return item;
    }), "nothing learnt yet");
    for (const button of document.querySelectorAll("button.history-toggle")) {
      if (openHistories.has(button.dataset.path)) button.click();
    }
  }

  async function showRuns() {
    const runs = await call("runs/?page_size=5");
    fill($("runs"), runs.results.map((r) => el("li", `run ${r.status}`,
      `${r.status} · ${r.pages_moved} moved · ${r.sessions_promoted} promoted · ${r.items_stored} stored${r.error ? ` · ${r.error}` : ""}`)), "none yet");
    return runs.results;
  }

  // Everything, after this page changed something (a reply, an edit, new parameters).
  async function refresh() {
    const [space, runs] = await Promise.all([call(""), showRuns()]);
    showSpace(space, runs);
    await Promise.all([showTiers(), showEntries()]);
  }

  // The parts the feed said changed, read once even when events come faster than the reads.
  const due = new Set();
  let reading = null;

  function readSoon(parts) {
    parts.forEach((part) => due.add(part));
    if (!reading) reading = readDue().finally(() => { reading = null; if (due.size) readSoon([]); });
  }

  async function readDue() {
    const parts = new Set(due);
    due.clear();
    const reads = [];
    if (parts.has("tiers") || parts.has("heat") || parts.has("parameters")) reads.push(showTiers());
    if (parts.has("entries") || parts.has("tiers")) reads.push(showEntries());
    if (parts.has("runs")) reads.push(showRuns());
    if (parts.has("heat") && $("heat-panel").open) reads.push(showHeatTimeline());
    await Promise.all(reads).catch((error) => {
      showError(error.message);
    });
  }

  // --- The feed: the memory's changes, pushed -----------------------------------------------------------

  let lastEventId = "";
  let retryMs = 1000;

  function feedState(text, live) {
    $("feed").textContent = text;
    $("feed").classList.toggle("live", live);
  }

  function openFeed() {
    const source = new EventSource(`${api}events/${lastEventId ? `?last_event_id=${encodeURIComponent(lastEventId)}` : ""}`);
    source.addEventListener("open", () => {
      retryMs = 1000;
      feedState("live", true);
    });
    source.addEventListener("memory", (event) => {
      lastEventId = event.lastEventId;  // the browser sends it back when it reconnects by itself
      const change = JSON.parse(event.data);
      showSpace(change.space, [change.run]);
      if (change.import && change.changed.includes("imports")) showImport(change.import);
      readSoon(change.changed);
    });
    source.addEventListener("gone", () => {
      source.close();
      feedState("deleted", false);
      showError("This memory space was deleted.");
    });
    source.addEventListener("error", () => {
      if (source.readyState === EventSource.CONNECTING) {
        feedState("reconnecting…", false);  // the browser retries by itself, with the last id
        return;
      }
      // Refused (the server restarting behind a proxy, a 503): try again, waiting longer each time.
      source.close();
      feedState("reconnecting…", false);
      setTimeout(openFeed, retryMs);
      retryMs = Math.min(retryMs * 2, 30000);
    });
  }

  // --- An entry's history ------------------------------------------------------------------------

  function historyButton(path, holder) {
    const button = el("button", "link history-toggle", "history");
    button.type = "button";
    button.dataset.path = path;
    button.setAttribute("aria-expanded", "false");
    button.addEventListener("click", async () => {
      const shown = holder.querySelector(".history");
      if (shown) {
        shown.remove();
        button.setAttribute("aria-expanded", "false");
        return;
      }
      const list = el("ol", "history");
      holder.append(list);
      button.setAttribute("aria-expanded", "true");
      try {
        const versions = await call(path);
        for (const v of versions.results || versions) {
          const li = el("li", "version");
          li.append(el("div", "muted", `${v.at.slice(0, 16).replace("T", " ")} · ${v.cause} · ${v.actor} · ${v.status_after}`));
          const words = el("div", "diff");
          for (const [kind, run] of v.changes) {  // the admin's word diff, from the API
            words.append(kind === "same" ? document.createTextNode(run) : el(kind, null, run), " ");
          }
          li.append(words);
          list.append(li);
        }
      } catch (error) {
        list.append(el("li", "error", error.message));
      }
    });
    return button;
  }

  // --- Editing in place ----------------------------------------------------------------------------

  // The value becomes a text box: Enter or Save stores it through the engine (recorded in the entry's
  // history as an owner edit; the next reply uses it), Escape or Cancel leaves it as it was.
  function editButton(entry, path, holder) {
    const button = el("button", "link edit-toggle", "edit");
    button.type = "button";
    button.setAttribute("aria-label", `Edit ${entry.value}`);
    button.addEventListener("click", () => {
      const shown = holder.querySelector(".value");
      const form = el("form", "edit-entry");
      const input = el("input");
      input.value = entry.value;
      input.setAttribute("aria-label", "New value");
      const save = el("button", null, "Save");
      save.type = "submit";
      const cancel = el("button", "link", "Cancel");
      cancel.type = "button";
      form.append(input, save, cancel);
      shown.replaceWith(form);
      button.hidden = true;
      input.focus();
      const close = () => {
        form.replaceWith(shown);
        button.hidden = false;
        button.focus();
      };
      cancel.addEventListener("click", close);
      input.addEventListener("keydown", (event) => {
        if (event.key === "Escape") close();
      });
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        save.disabled = true;
        try {
          await call(path, { method: "PATCH", body: JSON.stringify({ value: input.value }) });
          form.remove();
          refresh();
        } catch (error) {
          showError(error.message);
          save.disabled = false;
        }
      });
    });
    return button;
  }

  // --- Forgetting -------------------------------------------------------------------------------

  // Deleting an entry keeps its history (an admin can revert it); retrieval stops using it at once.
  function forgetButton(entry, path, text) {
    const button = el("button", "forget", "×");
    button.type = "button";
    button.title = "Forget this";
    button.setAttribute("aria-label", `Forget ${text}`);
    button.addEventListener("click", async () => {
      if (!window.confirm(`Forget “${text}”? Replies stop using it at once; its history is kept.`)) return;
      button.disabled = true;
      try {
        await call(path, { method: "DELETE" });
      } catch (error) {
        showError(error.message);
      }
      refresh();
    });
    return button;
  }

  async function deleteSpace() {
    const name = root.dataset.name;
    if (!window.confirm(`Delete all of ${name}'s memory? Every turn, session, profile and knowledge entry, their ` +
      "history and vectors go, and this cannot be undone.")) return;
    try {
      await call("", { method: "DELETE" });
      window.location.assign(root.dataset.home);
    } catch (error) {
      showError(error.message);
    }
  }

  // --- Parameters ---------------------------------------------------------------------------------

  // The inputs the person changed since the form was last saved. A redraw of the memory panel (a feed
  // event, say) leaves them as they are: it used to put the stored value back into every input but the
  // focused one, so an event between filling two fields undid the first, and Save stored the old value.
  const editedParameters = new Set();

  function showParameters(parameters) {
    for (const input of $("parameters").querySelectorAll("input")) {
      if (document.activeElement !== input && !editedParameters.has(input.name)) {
        input.value = parameters[input.name];
      }
    }
  }

  async function saveParameters(event) {
    event.preventDefault();
    const changes = {};
    for (const input of $("parameters").querySelectorAll("input")) changes[input.name] = Number(input.value);
    try {
      const space = await call("", { method: "PATCH", body: JSON.stringify(changes) });
      editedParameters.clear();
      showParameters(space.parameters);
      $("parameters-status").textContent = "saved";
      refresh();
    } catch (error) {
      $("parameters-status").textContent = error.message;
    }
  }

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

  async function saveModel(event) {
    event.preventDefault();
    $("model-status").textContent = "saving…";
    try {
      showModel(await call("llm/", { method: "PUT", body: JSON.stringify(modelValues()) }));
      $("model-status").textContent = "saved: the next reply uses it";
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

  // --- Import ------------------------------------------------------------------------------------

  // An import's progress, as the feed reports it turn by turn; the conversation is read again at its end.
  let importShown = null;

  function showImport(job) {
    const finished = job.status === "succeeded" && importShown && importShown.id === job.id && importShown.status !== "succeeded";
    importShown = job;
    if (finished) {
      $("messages").replaceChildren();
      loadHistory();
    }
    $("import-progress").hidden = false;
    $("import-bar").max = job.total;
    $("import-bar").value = job.done;
    $("import-status").textContent = `${job.source}: ${job.done} / ${job.total} turns · ${job.status}` +
      (job.error ? ` · ${job.error}` : "");
  }

  async function startImport(event) {
    event.preventDefault();
    const form = $("import");
    const file = form.transcript.files[0];
    let body;
    try {
      body = file ? { transcript: JSON.parse(await file.text()) } : { locomo_sample: form.locomo_sample.value };
    } catch (error) {
      $("import-progress").hidden = false;
      $("import-status").textContent = `not a JSON file: ${error.message}`;
      return;
    }
    try {
      if (body.transcript && !Array.isArray(body.transcript)) {  // a space's export: restored, not replayed
        const job = await call("restore/", { method: "POST", body: JSON.stringify({ export: body.transcript }) });
        $("import-progress").hidden = false;
        const restored = await window.Playground.jobDone(call, job, (j) => {
          $("import-status").textContent = `restoring the export · ${j.status}`;
        });
        $("import-status").textContent = `restored: ${restored.pages} turns, ${restored.sessions} sessions, ` +
          `${restored.entries} entries with ${restored.versions} versions`;
        $("messages").replaceChildren();
        await loadHistory();
        refresh();
        return;
      }
      showImport(await call("imports/", { method: "POST", body: JSON.stringify(body) }));
    } catch (error) {
      $("import-progress").hidden = false;
      $("import-status").textContent = error.message;
    }
  }

  $("import").addEventListener("submit", startImport);
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
  $("inspect").addEventListener("submit", inspectNow);
  $("heat-panel").addEventListener("toggle", () => showHeatTimeline().catch((error) => {
    $("heat-chart").replaceChildren(el("p", "error", error.message));
  }));
  $("parameters").addEventListener("submit", saveParameters);
  $("parameters").addEventListener("input", (event) => {
    if (event.target.name) editedParameters.add(event.target.name);
  });
  $("delete-space").addEventListener("click", deleteSpace);
  $("ask").addEventListener("submit", send);
  $("messages").addEventListener("click", showSource);
  $("stop").addEventListener("click", stop);
  $("query").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) send(event);
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && replying) stop();
  });
  loadHistory().then(refresh).then(openFeed).catch((error) => {
    showError(error.message);
  });
})();
