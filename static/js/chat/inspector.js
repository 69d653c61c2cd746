// The inspector (what a message would retrieve: every score, what the budget cut, the exact prompt) and the
// heat timeline of the space's sessions.
(function (chat) {
  "use strict";
  if (!chat) return;
  const { $, el, call, turnLink } = chat;

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

  const SCORE_NAMES = [["match", "match"], ["chain", "neighbours"], ["said", "person's words"], ["dense", "cosine"], ["bm25", "BM25"], ["keywords", "keywords"]];

  // heatOf: session id -> its heat, for the sessions the retrieval ranked. The text comes third, so that it
  // is in view in a narrow column; the parts of the score share one cell.
  function scoreRow(item, where, heatOf) {
    const row = el("tr", `inspected ${where.replace(/\W+/g, "-")}`);
    const score = item.kind === "short_term" ? "recent" : item.score.toFixed(3);
    const parts = el("td", "parts");
    for (const [name, label] of SCORE_NAMES) {
      const value = item.scores[name];
      if (value !== undefined) parts.append(el("div", null, `${label} ${value.toFixed(3)}`));
    }
    const heat = item.provenance && heatOf.get(item.provenance.session_id);
    const why = item.provenance && item.provenance.why;  // why the item is in the prompt, or was cut
    const place = el("td", `where ${where}`, where);
    if (why && where !== "not sent") place.append(el("div", "muted why", why));
    row.append(el("td", null, item.kind.replace("_", " ")), place, el("td", "text", item.text),
      el("td", "num", score), parts, el("td", "num", heat === undefined ? "" : heat.toFixed(2)), el("td", "num", item.tokens));
    return row;
  }

  function showInspection(x) {
    const r = x.retrieval;
    const head = el("tr");
    const columns = ["kind", "prompt", "text", "score", "of which", "session heat", "tokens"];
    for (const name of columns) head.append(el("th", null, name));
    const table = el("table", "inspection-table");
    table.append(head);
    const heatOf = new Map(r.sessions.map((s) => [s.provenance.session_id, s.provenance.heat]));
    // A weak model's short prompt holds no memory: what the memory found is shown, marked as not sent.
    const found = x.compact ? "found, not sent" : "in";
    for (const item of [...r.short_term, ...r.profile, ...r.pages, ...r.user_knowledge, ...r.assistant_knowledge]) {
      table.append(scoreRow(item, found, heatOf));
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
      x.answer_from_memory.quoted.forEach((s, i) => {
        said.append(i ? ", " : " From ", turnLink(s.page_id, s.seq));
        // The reranker's likelihood that the sentence answers, when it is on (MEMORYOS_RERANKER).
        if (s.reranker != null) said.append(` (reranker ${s.reranker.toFixed(2)})`);
      });
      fromMemory.push(said);
    }
    $("inspection").replaceChildren(
      ...fromMemory,
      el("p", "budget", x.compact
        ? `The memory found ${r.tokens_used} tokens' worth within the ${r.token_budget}-token budget; the offline ` +
          `model's short prompt holds none of it (about ${x.prompt_tokens} tokens: its instructions and the message).`
        : `Memory used ${r.tokens_used} of ${r.token_budget} tokens; ${r.cut.length} items cut by the budget. ` +
          `The prompt is about ${x.prompt_tokens} tokens.`),
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
    const [space, changes] = await Promise.all([call(""), call("parameters/history/?name=heat_threshold&page_size=500")]);
    window.MemoryCharts.heatTimeline($("heat-chart"), points, space.parameters.heat_threshold,
      { height: 220, thresholdChanges: changes.results });
  }

  Object.assign(chat, { inspectLink, showHeatTimeline });

  $("inspect").addEventListener("submit", inspectNow);
  $("heat-panel").addEventListener("toggle", () => showHeatTimeline().catch((error) => {
    $("heat-chart").replaceChildren(el("p", "error", error.message));
  }));
})(window.ChatPage);
