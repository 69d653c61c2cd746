// The memory panel: the space's counts and tiers, its profile and knowledge (each with its history, edited
// in place or forgotten), its consolidation runs and its parameters.
(function (chat) {
  "use strict";
  if (!chat) return;
  const { root, $, el, call, showError, fill } = chat;

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
    fill($("short-term"), short.results.map((t) => el("li", null, `#${t.seq} ${t.user_input || t.agent_response}`)), "no turns yet");
    const hottest = Math.max(threshold, ...sessions.results.map((s) => s.heat));
    fill($("sessions"), sessions.results.map((s) => {
      const item = el("li", "session");
      const bar = el("div", "heat");
      bar.style.width = `${Math.max(2, (100 * s.heat) / hottest)}%`;
      if (s.heat >= threshold) bar.classList.add("hot");
      // N_visit and L_interaction count since the last promotion, or since the session began.
      const counts = s.promoted_at
        ? `${s.l_interaction} new pages · ${s.n_visit} visits since its promotion`
        : `${s.l_interaction} pages · ${s.n_visit} visits · not promoted yet`;
      item.append(el("div", "session-head", `heat ${s.heat.toFixed(2)} · ${counts}`), bar,
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

  // --- What the space costs --------------------------------------------------------------------------

  const USAGE_KINDS = [["replies", "replies"], ["consolidation", "consolidation"], ["imports", "imports"],
    ["experiments", "experiments"]];

  function money(value, currency) {
    if (value === null) return "no price";
    return `${value < 0.01 && value > 0 ? value.toFixed(4) : value.toFixed(2)} ${currency}`;
  }

  // A reply quoted from memory ran no model: counted apart, with no tokens and no cost.
  function usageCell(kind, currency) {
    const tokens = kind.prompt_tokens + kind.completion_tokens;
    const quoted = kind.quoted ? `${kind.quoted} quoted (no model)` : "";
    if (!kind.calls) return quoted || "—";
    const written = `${kind.calls} · ${tokens} tokens · ${money(kind.cost, currency)}`;
    return quoted ? `${written} · ${quoted}` : written;
  }

  // The last 14 days, the days with any use only, and their totals; what a cost is in: the operator's prices.
  async function showUsage() {
    if (!$("usage-panel").open) return;
    const usage = await call("usage/?days=14");
    const table = el("table", "usage");
    const head = el("tr");
    for (const name of ["day", ...USAGE_KINDS.map(([, label]) => label)]) head.append(el("th", null, name));
    table.append(head);
    const used = usage.days.filter((day) => USAGE_KINDS.some(([kind]) => day[kind].calls || day[kind].quoted));
    for (const day of used) {
      const row = el("tr");
      row.append(el("td", null, day.day), ...USAGE_KINDS.map(([kind]) => el("td", null, usageCell(day[kind], usage.currency))));
      table.append(row);
    }
    const total = el("tr", "total");
    total.append(el("th", null, "14 days"), ...USAGE_KINDS.map(([kind]) => el("th", null, usageCell(usage.totals[kind], usage.currency))));
    table.append(total);
    const notes = [el("p", "muted", "Calls to a model (replies it wrote, or LLM calls), replies quoted from memory " +
      `(no model ran), tokens read and written, and the cost in ${usage.currency} at the prices the operator set ` +
      "(MEMORYOS_LLM_PRICES, per million tokens); the bundled offline model is free.")];
    if (usage.unpriced_models.length) notes.push(el("p", "muted", `No price set for: ${usage.unpriced_models.join(", ")}.`));
    const scroll = el("div", "table-scroll");  // a phone: the table scrolls, its last column whole
    scroll.append(table);
    $("usage").replaceChildren(...(used.length ? [scroll] : [el("p", "muted", "No LLM use in the last 14 days.")]), ...notes);
  }

  $("usage-panel").addEventListener("toggle", () => showUsage().catch((error) => showError(error.message)));

  // Everything, after this page changed something (a reply, an edit, new parameters).
  async function refresh() {
    const [space, runs] = await Promise.all([call(""), showRuns()]);
    showSpace(space, runs);
    await Promise.all([showTiers(), showEntries(), showUsage()]);
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
        const rows = versions.results || versions;
        let before;
        rows.forEach((v, i) => {
          // The status where it changed (not "active" on every edit), and which version is the entry now.
          const status = v.status_after !== before ? ` · ${v.status_after}` : "";
          const current = i === rows.length - 1 && !versions.next ? " · current" : "";
          before = v.status_after;
          const li = el("li", current ? "version current" : "version");
          li.append(el("div", "muted", `${v.at.slice(0, 16).replace("T", " ")} · ${v.cause} · ${v.actor}${status}${current}`));
          const words = el("div", "diff");
          for (const [kind, run] of v.changes) {  // the admin's word diff, from the API
            words.append(kind === "same" ? document.createTextNode(run) : el(kind, null, run), " ");
          }
          li.append(words);
          list.append(li);
        });
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

  // Deleting an entry keeps its history (an admin can revert it); replies stop using it at once, and the
  // statements of the turns it was drawn from with it (the turns stay, those words marked).
  function forgetButton(entry, path, text) {
    const button = el("button", "forget", "×");
    button.type = "button";
    button.title = "Forget this";
    button.setAttribute("aria-label", `Forget ${text}`);
    button.addEventListener("click", async () => {
      const asked = `Forget “${text}”? Replies stop using it, and what you said of it, at once; its history is kept.`;
      if (!window.confirm(asked)) return;
      button.disabled = true;
      try {
        const forgotten = await call(path, { method: "DELETE" });  // the entry now, with what it covered
        showCoverage(text, forgotten.covers, path);
      } catch (error) {
        showError(error.message);
      }
      refresh();
    });
    return button;
  }

  // What a forget covered: "2 statements in turns #5 and #9" (engine/curation.py), and a way back: Undo
  // reverts the entry, its statements and the entries that went with it.
  function showCoverage(text, covers, path) {
    const status = $("curation-status");
    const turns = covers.turns.map((seq) => `#${seq}`);
    const where = turns.length > 1 ? `${turns.slice(0, -1).join(", ")} and ${turns.at(-1)}` : turns[0];
    const statements = `${covers.statements} statement${covers.statements === 1 ? "" : "s"}`;
    const others = covers.entries.length ? `, and ${covers.entries.length} other entr${covers.entries.length === 1 ? "y" : "ies"} drawn from them` : "";
    status.textContent = covers.statements
      ? `Forgot “${text}”: ${statements} in turn${turns.length === 1 ? "" : "s"} ${where}${others}. `
      : `Forgot “${text}”. `;
    const undo = el("button", "undo", "Undo");
    undo.type = "button";
    undo.addEventListener("click", async () => {
      undo.disabled = true;
      try {
        await call(`${path}revert/`, { method: "POST", body: "{}" });
        status.textContent = `“${text}” is back, with what you said of it.`;
      } catch (error) {
        showError(error.message);
      }
      refresh();
    });
    status.append(undo);
    status.hidden = false;
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

  // The memory user and every space of theirs, as a person asking to be forgotten is owed.
  async function eraseUser() {
    const button = $("erase-user");
    if (!window.confirm(`Erase ${button.dataset.name} and all their memory? Every space of theirs, with each ` +
      "assistant, goes: turns, sessions, profile, knowledge, their history and vectors. This cannot be undone.")) return;
    try {
      await window.Playground.caller(button.dataset.api, root.dataset.csrf)("", { method: "DELETE" });
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

  Object.assign(chat, { showSpace, showTiers, showEntries, showRuns, refresh });

  $("parameters").addEventListener("submit", saveParameters);
  $("parameters").addEventListener("input", (event) => {
    if (event.target.name) editedParameters.add(event.target.name);
  });
  $("delete-space").addEventListener("click", deleteSpace);
  $("erase-user").addEventListener("click", eraseUser);
})(window.ChatPage);
