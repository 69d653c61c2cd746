// The chat page: talks to the REST API with the signed-in session. Memory content is user input, so it
// is only ever placed in the page as text (textContent), never as HTML.
(function () {
  "use strict";
  const root = document.getElementById("chat-app");
  if (!root) return;
  const api = root.dataset.api;
  const csrf = root.dataset.csrf;
  const $ = (id) => document.getElementById(id);

  async function call(path, options = {}) {
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
  }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function fill(list, nodes, empty) {
    list.replaceChildren(...(nodes.length ? nodes : [el("li", "muted", empty)]));
  }

  // --- Conversation ------------------------------------------------------------------------------

  function bubble(role, text) {
    const item = el("li", `bubble ${role}`);
    item.append(el("div", "text", text));
    $("messages").append(item);
    item.scrollIntoView({ block: "end" });
    return item;
  }

  function describe(item) {
    const p = item.provenance || {};
    if (item.kind === "page" || item.kind === "short_term") return `turn #${p.seq} · session ${p.session_id ?? "—"}`;
    const pages = (p.source_page_ids || []).join(", ");
    return `entry ${p.entry_id}${p.key ? ` · ${p.key}` : ""}${pages ? ` · from pages ${pages}` : ""}`;
  }

  function usedPanel(retrieval) {
    const details = el("details", "used");
    const items = [...retrieval.pages, ...retrieval.profile, ...retrieval.user_knowledge, ...retrieval.assistant_knowledge];
    details.append(el("summary", null, `What it used: ${retrieval.pages.length} pages, ${retrieval.profile.length} profile, ` +
      `${retrieval.user_knowledge.length + retrieval.assistant_knowledge.length} knowledge · ${retrieval.tokens_used} tokens`));
    const list = el("ol", "used-list");
    for (const item of items) {
      const row = el("li", `used-item ${item.kind}`);
      row.append(el("span", "kind", item.kind.replace("_", " ")), el("span", "score", item.score.toFixed(3)));
      row.append(el("div", "used-text", item.text), el("div", "muted", describe(item)));
      list.append(row);
    }
    details.append(list);
    return details;
  }

  async function loadHistory() {
    const page = await call("turns/?newest=true&page_size=30");
    for (const turn of page.results.reverse()) {
      if (turn.user_input) bubble("user", turn.user_input);
      if (turn.agent_response) bubble("assistant", turn.agent_response);
    }
  }

  async function send(event) {
    event.preventDefault();
    const query = $("query").value;
    if (!query.trim()) return;
    $("error").hidden = true;
    $("send").disabled = true;
    $("query").value = "";
    bubble("user", query);
    const pending = bubble("assistant pending", "Thinking…");
    try {
      const answer = await call("chat/", { method: "POST", body: JSON.stringify({ query }) });
      pending.classList.remove("pending");
      pending.querySelector(".text").textContent = answer.response;
      pending.append(usedPanel(answer.retrieval));
      refresh();
    } catch (error) {
      pending.remove();
      $("query").value = query;
      $("error").textContent = error.message;
      $("error").hidden = false;
    } finally {
      $("send").disabled = false;
      $("query").focus();
    }
  }

  // --- Memory panel ------------------------------------------------------------------------------

  let polling = null;

  async function refresh() {
    const [space, short, sessions, profile, knowledge, runs] = await Promise.all([
      call(""),
      call("turns/?tier=short&newest=true&page_size=20"),
      call("sessions/?status=active&page_size=20"),
      call("profile/"),
      call("knowledge/?page_size=50"),
      call("runs/?page_size=5"),
    ]);
    const c = space.counts;
    showParameters(space.parameters);
    const counts = [["short-term", c.short_term_pages], ["mid-term", c.mid_term_pages], ["sessions", c.active_sessions],
      ["profile", c.profile_entries], ["knowledge", c.user_knowledge + c.assistant_knowledge]];
    $("counts").replaceChildren(...counts.flatMap(([name, n]) => [el("dt", null, name), el("dd", null, n)]));

    fill($("short-term"), short.results.map((t) => el("li", null, `#${t.seq} ${t.user_input || t.agent_response}`)), "empty");
    const hottest = Math.max(space.parameters.heat_threshold, ...sessions.results.map((s) => s.heat));
    fill($("sessions"), sessions.results.map((s) => {
      const item = el("li", "session");
      const bar = el("div", "heat");
      bar.style.width = `${Math.max(2, (100 * s.heat) / hottest)}%`;
      if (s.heat >= space.parameters.heat_threshold) bar.classList.add("hot");
      item.append(el("div", "session-head", `heat ${s.heat.toFixed(2)} · ${s.l_interaction} new pages · ${s.n_visit} visits since promotion`), bar,
        el("div", "summary", s.summary));
      return item;
    }), "none yet");
    const rows = Object.entries(profile.profile).flatMap(([key, value]) => [el("dt", null, key), el("dd", null, value)]);
    $("profile").replaceChildren(...(rows.length ? rows : [el("dd", "muted", "nothing learnt yet")]));
    fill($("knowledge"), knowledge.results.map((e) => el("li", e.kind, e.value)), "nothing learnt yet");
    fill($("runs"), runs.results.map((r) => el("li", `run ${r.status}`,
      `${r.status} · ${r.pages_moved} moved · ${r.sessions_promoted} promoted · ${r.items_stored} stored${r.error ? ` · ${r.error}` : ""}`)), "none yet");

    const busy = c.consolidation_pending || runs.results.some((r) => r.status === "running" || r.status === "retrying");
    $("consolidation").textContent = busy ? "consolidating…" : "idle";
    $("consolidation").classList.toggle("busy", busy);
    clearTimeout(polling);
    if (busy) polling = setTimeout(refresh, 2000);
  }

  // --- Parameters ---------------------------------------------------------------------------------

  function showParameters(parameters) {
    for (const input of $("parameters").querySelectorAll("input")) {
      if (document.activeElement !== input) input.value = parameters[input.name];
    }
  }

  async function saveParameters(event) {
    event.preventDefault();
    const changes = {};
    for (const input of $("parameters").querySelectorAll("input")) changes[input.name] = Number(input.value);
    try {
      const space = await call("", { method: "PATCH", body: JSON.stringify(changes) });
      showParameters(space.parameters);
      $("parameters-status").textContent = "saved";
      refresh();
    } catch (error) {
      $("parameters-status").textContent = error.message;
    }
  }

  // --- Import ------------------------------------------------------------------------------------

  function showImport(job) {
    $("import-progress").hidden = false;
    $("import-bar").max = job.total;
    $("import-bar").value = job.done;
    $("import-status").textContent = `${job.source}: ${job.done} / ${job.total} turns · ${job.status}` +
      (job.error ? ` · ${job.error}` : "");
  }

  async function watchImport(job) {
    showImport(job);
    if (job.status === "succeeded") {
      $("messages").replaceChildren();
      loadHistory();
    }
    if (job.status === "queued" || job.status === "running") {
      setTimeout(() => call(`imports/${job.id}/`).then(watchImport).catch((error) => {
        $("import-status").textContent = error.message;
      }), 1000);
    }
    refresh();
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
      await watchImport(await call("imports/", { method: "POST", body: JSON.stringify(body) }));
    } catch (error) {
      $("import-progress").hidden = false;
      $("import-status").textContent = error.message;
    }
  }

  $("import").addEventListener("submit", startImport);
  $("parameters").addEventListener("submit", saveParameters);
  $("ask").addEventListener("submit", send);
  $("query").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) send(event);
  });
  loadHistory().then(refresh).catch((error) => {
    $("error").textContent = error.message;
    $("error").hidden = false;
  });
})();
