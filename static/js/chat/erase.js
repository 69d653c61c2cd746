// Erasing a turn's words for good. The dialog asks what (the whole turn, or one of its sentences), shows what
// the erasure would take out of the memory (a dry run: nothing changes), and erases once confirmed; a worker
// does it, and the page says when it is done. Forgetting an entry (its ×) can be undone; this cannot.
(function (chat) {
  "use strict";
  if (!chat) return;
  const { $, el, call } = chat;
  let turnId = null;

  function eraseLink(pageId) {
    const button = el("button", "link erase-link", "Erase…");
    button.type = "button";
    button.title = "Erase this turn's words, or one of its sentences, for good, wherever the memory holds them";
    button.addEventListener("click", () => open(pageId).catch((error) => say(error.message)));
    return button;
  }

  function say(text) {
    $("erase-status").textContent = text;
  }

  async function open(pageId) {
    turnId = pageId;
    $("erase-choices").replaceChildren();
    $("erase-preview").replaceChildren();
    $("erase-confirm").disabled = true;
    say("reading the turn …");
    $("erase-dialog").showModal();
    const preview = await dryRun({});
    const sentences = preview.sentences.map((s) =>
      choice(String(s.index), `${s.field === "user_input" ? "You" : "The reply"}: “${s.text}”`));
    $("erase-choices").replaceChildren(choice("whole", "The whole turn", true), ...sentences);
    show(preview);
  }

  function choice(value, label, checked = false) {
    const row = el("label", "erase-choice");
    const input = el("input");
    Object.assign(input, { type: "radio", name: "erase-what", value, checked });
    input.addEventListener("change", () => previewChosen().catch((error) => say(error.message)));
    row.append(input, " ", label);
    return row;
  }

  function chosen() {
    const picked = $("erase-choices").querySelector("input:checked");
    return !picked || picked.value === "whole" ? {} : { sentence_index: Number(picked.value) };
  }

  function dryRun(body) {
    return call(`turns/${turnId}/erase/`, { method: "POST", body: JSON.stringify({ ...body, dry_run: true }) });
  }

  async function previewChosen() {
    $("erase-confirm").disabled = true;
    say("reading what it would take …");
    show(await dryRun(chosen()));
  }

  const count = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

  function show(preview) {
    const list = el("ul", "erase-preview-list");
    list.append(el("li", "", `${count(preview.turns.length, "turn")} ${preview.turns.length === 1 ? "changes" : "change"}: ` +
      preview.turns.map((turn) => `#${turn.seq}`).join(", ")));
    for (const entry of preview.entries_deleted) {
      list.append(el("li", "", `deleted with its history: ${entry.key ? `${entry.key}: ` : ""}“${entry.value}”`));
    }
    for (const entry of preview.entries_changed) {
      list.append(el("li", "", `changed: “${entry.value}” becomes “${entry.after}”`));
    }
    if (preview.forks) list.append(el("li", "", `and the copies in ${count(preview.forks, "lab fork")}`));
    const words = el("p", "erase-words", "Taken out for good, wherever they are: ");
    words.append(preview.erasing.map((text) => `“${text}”`).join(" "));
    $("erase-preview").replaceChildren(words, list);
    $("erase-confirm").disabled = false;
    say("");
  }

  async function confirmErase(event) {
    event.preventDefault();
    $("erase-confirm").disabled = true;
    try {
      const job = await call(`turns/${turnId}/erase/`, { method: "POST", body: JSON.stringify(chosen()) });
      const done = await window.Playground.jobDone(call, job, (j) => say(`erasing … ${j.status}`));
      $("erase-dialog").close();
      $("messages").replaceChildren();
      await chat.loadHistory();
      chat.refresh();
      $("curation-status").hidden = false;
      $("curation-status").textContent = `Erased for good: ${count(done.turns_changed, "turn")} changed.`;
    } catch (error) {
      say(error.message);
      $("erase-confirm").disabled = false;
    }
  }

  $("erase-form").addEventListener("submit", confirmErase);
  $("erase-cancel").addEventListener("click", () => $("erase-dialog").close());

  Object.assign(chat, { eraseLink });
})(window.ChatPage);
