// The conversation: the turns shown, a reply streamed in word by word, what each reply used, and the
// turns a reply's sources link to.
(function (chat) {
  "use strict";
  if (!chat) return;
  const { $, el, call, stream, showError, turnLink, WITHHELD } = chat;

  // A weak model's questions about the person are answered with their own words (engine/recall.py).
  const QUOTED = "Quoted from what you said (offline mode): not the model's words.";
  const CURATION = "Done by the memory, as you asked: no model wrote this.";
  const PLAIN = "Said by the memory (offline mode, no model writes): nothing in it is invented.";
  const WEAK = "Written by the small offline model: not from your memory, and never kept as a fact about you.";

  function bubble(role, text, pageId, marks = []) {
    const item = el("li", `bubble ${role}`);
    item.append(marks.length ? markedText(text, marks) : el("div", "text", text));
    $("messages").append(item);
    if (pageId) markTurn(item, pageId);
    item.scrollIntoView({ block: "end" });
    return item;
  }

  // A turn as it was said, its statements that the memory no longer holds marked: struck through when
  // forgotten, with what stands in their place when corrected (engine/curation.py). Text only, never HTML.
  function markedText(text, marks) {
    const box = el("div", "text");
    let rest = text;
    for (const mark of marks) {
      const words = mark.sentence.split(/\s+/).filter(Boolean).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
      const found = words.length ? rest.match(new RegExp(words.join("\\s+"))) : null;
      if (!found) continue;
      box.append(rest.slice(0, found.index));
      const held = el(mark.kind === "corrected" ? "del" : "s", `held-out ${mark.kind}`, found[0]);
      held.title = mark.kind === "corrected"
        ? `Corrected ${mark.at.slice(0, 10)} to “${mark.replacement}”: replies use that now`
        : `Forgotten ${mark.at.slice(0, 10)} with entry #${mark.entry_id}: replies do not use it`;
      box.append(held);
      if (mark.kind === "corrected") box.append(el("ins", "held-out correction", ` ${mark.replacement}`));
      rest = rest.slice(found.index + found[0].length);
    }
    box.append(rest);
    return box;
  }

  // Both bubbles of a stored turn carry its page id; the first is the anchor "What it used" links to.
  function markTurn(item, pageId) {
    item.dataset.page = pageId;
    if (!document.getElementById(`turn-${pageId}`)) item.id = `turn-${pageId}`;
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

  // "What it used" under a reply: counts and tokens in its summary, the items inside. `usage` is the
  // model's tokens ({prompt_tokens, completion_tokens}); a reply shown again after a reload reads its items
  // when opened (`load`), as the memory holds them now.
  // What a reply used, as it was made: the memory in the model's prompt; the turns a quoted reply quotes (no
  // model ran); nothing, for the offline model's small talk (its short prompt holds no memory; the inspector
  // shows what the memory found).
  function usedSummary(counts, memoryTokens, usage, source) {
    const model = usage && (usage.prompt_tokens || usage.completion_tokens)
      ? ` · the model read ${usage.prompt_tokens} tokens and wrote ${usage.completion_tokens}` : "";
    if (source === "quoted") {
      const turns = counts.pages + counts.short_term;
      return `What it used: ${turns} of your turns, quoted · no model ran`;
    }
    if (source === "weak_model") return `What it used: no memory (the offline model's prompt holds none)${model}`;
    if (source === "plain") return `What it used: ${counts.pages + counts.short_term} of your turns, quoted · no model ran`;
    return `What it used: ${counts.pages} pages, ${counts.profile} profile, ${counts.knowledge} knowledge, ` +
      `${counts.short_term} recent turns · ${memoryTokens} tokens of memory${model}`;
  }

  function usedList(retrieval) {
    const items = [...retrieval.pages, ...retrieval.profile, ...retrieval.user_knowledge, ...retrieval.assistant_knowledge,
      ...retrieval.short_term];
    const list = el("ol", "used-list");
    for (const item of items) {
      const row = el("li", `used-item kind-${item.kind}`);
      const score = item.kind === "short_term" ? "recent" : item.score.toFixed(3);
      row.append(el("span", "kind", item.kind.replace("_", " ")), el("span", "score", score));
      row.append(el("div", "used-text", item.text), provenance(item));
      list.append(row);
    }
    return list;
  }

  function usedPanel(retrieval, usage, source) {
    const details = el("details", "used");
    const counts = { pages: retrieval.pages.length, profile: retrieval.profile.length, short_term: retrieval.short_term.length,
      knowledge: retrieval.user_knowledge.length + retrieval.assistant_knowledge.length };
    details.append(el("summary", null, usedSummary(counts, retrieval.tokens_used, usage, source)), usedList(retrieval),
      chat.inspectLink(retrieval.query));
    details.addEventListener("toggle", () => {
      if (details.open) details.scrollIntoView({ block: "nearest" });
    });
    return details;
  }

  function storedUsedPanel(turn) {
    const details = el("details", "used");
    details.append(el("summary", null, usedSummary(turn.reply.used, turn.reply.memory_tokens, turn.reply, turn.reply_source)));
    let loaded = false;
    details.addEventListener("toggle", async () => {
      if (!details.open || loaded) return;
      loaded = true;
      const waiting = el("p", "muted", "loading…");
      details.append(waiting);
      try {
        const retrieval = await call(`turns/${turn.id}/used/`);
        const gone = retrieval.gone ? [el("p", "muted", `${retrieval.gone} of them deleted or forgotten since.`)] : [];
        waiting.replaceWith(usedList(retrieval), ...gone);
      } catch (error) {
        waiting.replaceWith(el("p", "error", error.message));
        loaded = false;
      }
      details.scrollIntoView({ block: "nearest" });
    });
    return details;
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
      // A turn some of whose words were forgotten or corrected is shown as it was said, those marked.
      const said = turn.said || turn;
      const marks = (field) => (turn.marks || []).filter((mark) => mark.field === field);
      if (said.user_input) bubble("user", said.user_input, turn.id, marks("user_input")).append(chat.eraseLink(turn.id));
      if (said.agent_response) {
        // A quoted reply links to the turns it quotes, after a reload as when it was written.
        const quoted = (turn.reply && turn.reply.turns) || [];
        markSource(bubble("assistant", said.agent_response, turn.id, marks("agent_response")), turn.reply_source, quoted);
      }
      if (turn.reply_withheld) markWithheld(bubble("assistant", turn.withheld_reply || WITHHELD, turn.id));
      if (turn.user_input && (turn.agent_response || turn.reply_withheld)) {
        if (turn.reply) $("messages").lastElementChild.append(storedUsedPanel(turn));
        $("messages").lastElementChild.append(chat.inspectLink(turn.user_input));
      }
    }
    scrollToEnd();
  }

  // The conversation opens at its end, its last note ("Stopped", "not kept") in view.
  function scrollToEnd() {
    const last = $("messages").lastElementChild;
    if (last) last.scrollIntoView({ block: "end" });
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
      // Said on the page, not in a tooltip: a phone has no hover.
      item.classList.add("weak");
      item.append(el("div", "quote-note model-note muted", WEAK));
    } else if (source === "curation") {
      item.classList.add("curation");
      item.append(el("div", "quote-note muted", CURATION));
    } else if (source === "plain") {
      item.classList.add("plain");
      const note = el("div", "quote-note muted", PLAIN);
      quoted.forEach((said, i) => note.append(i ? ", " : " ", turnLink(said.page_id, said.seq)));
      item.append(note);
    }
    return item;
  }

  // A message that asked to forget something: what went, and Undo, which reverts each entry it deleted (the
  // statements come back with them), as the memory panel's Undo does.
  function undoForget(item, forgotten) {
    if (!forgotten || !forgotten.length) return;
    const undo = el("button", "undo", "Undo");
    undo.type = "button";
    undo.addEventListener("click", async () => {
      undo.disabled = true;
      try {
        for (const { entry, undo_to: version } of forgotten) {
          const kind = entry.kind === "profile" ? "profile" : "knowledge";
          await call(`${kind}/${entry.id}/revert/`, { method: "POST", body: JSON.stringify({ version_id: version }) });
        }
        undo.replaceWith(el("span", "muted", "Undone: it is back."));
      } catch (error) {
        undo.disabled = false;
        showError(error.message);
      }
      chat.refresh();
    });
    item.querySelector(".quote-note").append(" ", undo);
  }

  // A reply that went wrong reads the same live and after a reload: what the person was told, and why.
  function markWithheld(item) {
    item.classList.add("withheld");
    item.append(el("div", "muted withheld-note", WITHHELD));
    return item;
  }

  function finishReply(pending, asked, answer) {
    pending.classList.remove("pending", "streaming");
    pending.querySelector(".text").textContent = answer.response;
    if (answer.reply_withheld) {
      markWithheld(pending);
    } else {
      markSource(pending, answer.page.reply_source, answer.quoted || []);
      undoForget(pending, answer.forgotten);
    }
    pending.append(usedPanel(answer.retrieval, answer.usage, answer.reply_withheld ? "" : answer.page.reply_source));
    pending.scrollIntoView({ block: "end" });
    markTurn(asked, answer.page.id);
    markTurn(pending, answer.page.id);
    asked.append(chat.eraseLink(answer.page.id));
    chat.refresh();
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

  Object.assign(chat, { loadHistory, scrollToEnd });

  $("ask").addEventListener("submit", send);
  $("messages").addEventListener("click", showSource);
  $("stop").addEventListener("click", stop);
  $("query").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) send(event);
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && replying) stop();
  });
})(window.ChatPage);
