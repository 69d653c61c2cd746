// Bringing history in: a file from elsewhere (another assistant's export, chat messages, memories, a
// transcript) checked and listed by the server, its chosen conversations stored a chunk at a time (the
// progress, the time left and, at its end, what it taught come with the feed; it may be stopped); a LoCoMo
// sample; or a space's export restored.
(function (chat) {
  "use strict";
  if (!chat) return;
  const { $, call } = chat;
  const el = window.Playground.el;
  const RESTORE_MAX_BYTES = 8 * 1024 * 1024;  // an export larger than this is no LoCoMo conversation's

  // --- Import ------------------------------------------------------------------------------------

  // An import's progress, as the feed reports it turn by turn; the conversation is read again at its end.
  let importShown = null;

  function showImport(job) {
    const finished = job.status === "succeeded" && importShown && importShown.id === job.id && importShown.status !== "succeeded";
    importShown = job;
    if (finished) {
      $("messages").replaceChildren();
      chat.loadHistory();
    }
    $("import-progress").hidden = false;
    $("import-bar").max = job.total;
    $("import-bar").value = job.done;
    $("import-status").textContent = `${job.source}: ${job.done} / ${job.total} turns · ${job.status}` +
      (job.skipped ? ` · ${job.skipped} stored before` : "") +
      (job.error ? ` · ${job.error}` : "") + (job.activity ? ` · ${job.activity}` : "") +
      (job.seconds_left !== null && job.seconds_left !== undefined ? ` · ${timeLeft(job.seconds_left)} left` : "");
    $("import-cancel").hidden = !(job.status === "queued" || job.status === "running");
    $("import-taught").hidden = !job.taught;
    if (job.taught) {
      $("import-taught").textContent = `What it taught: its turns are in ${job.taught.sessions} session` +
        `${job.taught.sessions === 1 ? "" : "s"} of mid-term memory, and ${job.taught.entries} profile and ` +
        `knowledge entr${job.taught.entries === 1 ? "y" : "ies"} came from them.`;
    }
  }

  function timeLeft(seconds) {
    if (seconds < 60) return "under a minute";
    const minutes = Math.round(seconds / 60);
    return minutes < 90 ? `about ${minutes} min` : `about ${Math.round(minutes / 60)} h`;
  }

  async function stopImport() {
    if (!importShown) return;
    try {
      showImport(await call(`imports/${importShown.id}/cancel/`, { method: "POST" }));
    } catch (error) {
      say(error.message);
    }
  }

  function say(text) {
    $("import-progress").hidden = false;
    $("import-status").textContent = text;
  }

  // A file brought is checked in the background: its upload is polled until it is ready or refused.
  async function checked(upload) {
    const began = Date.now();
    while (upload.status === "checking") {
      say(`checking ${upload.name} … ${Math.round((Date.now() - began) / 1000)} s`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      upload = await call(`imports/files/${upload.id}/`);
    }
    return upload;
  }

  // A space's export (a JSON object that is none of the formats a file is imported from): restored.
  async function asExport(file) {
    if (file.size > RESTORE_MAX_BYTES || !file.name.toLowerCase().endsWith(".json")) return null;
    try {
      const document = JSON.parse(await file.text());
      const isExport = document && !Array.isArray(document) && typeof document === "object" &&
        !("results" in document || "memories" in document || "messages" in document);
      return isExport ? document : null;
    } catch (error) {
      return null;  // the server says what is wrong with it
    }
  }

  async function restore(document) {
    const job = await call("restore/", { method: "POST", body: JSON.stringify({ export: document }) });
    const restored = await window.Playground.jobDone(call, job, (j) => say(`restoring the export · ${j.status}` +
      (j.progress ? ` · ${j.progress.done} of ${j.progress.of} texts embedded` : "")));
    say(`restored: ${restored.pages} turns, ${restored.sessions} sessions, ` +
      `${restored.entries} entries with ${restored.versions} versions`);
    $("messages").replaceChildren();
    await chat.loadHistory();
    chat.refresh();
  }

  // The file's conversations, to choose from: title, dates and turns, all chosen at first.
  let uploaded = null;

  function day(iso) {
    return iso ? new Date(iso).toLocaleDateString() : "no date";
  }

  function conversationRow(c) {
    const box = document.createElement("input");
    Object.assign(box, { type: "checkbox", value: c.key, checked: c.turns > 0 && $("import-all").checked, disabled: c.turns === 0 });
    const dates = `${day(c.created)}${c.last && day(c.last) !== day(c.created) ? ` – ${day(c.last)}` : ""}`;
    const label = el("label");
    label.append(box, ` ${c.title || "(untitled)"} `, el("span", "muted", `${dates} · ${c.turns} turns`));
    const row = el("li");
    row.append(label);
    return row;
  }

  // A file's first conversations come with it; "more" reads the next page of them.
  const PAGE = 500;

  function showMore() {
    const shown = $("import-conversations").children.length;
    $("import-more").hidden = shown >= uploaded.conversations_total;
    $("import-more").textContent = `show more (${shown} of ${uploaded.conversations_total})`;
  }

  async function loadMore() {
    const shown = $("import-conversations").children.length;
    const page = await call(`imports/files/${uploaded.id}/conversations/?page=${Math.floor(shown / PAGE) + 1}&page_size=${PAGE}`);
    $("import-conversations").append(...page.results.map(conversationRow));
    showMore();
  }

  function showChoice(upload) {
    uploaded = upload;
    const what = upload.facts ? `${upload.facts} memories to store as knowledge` :
      `${upload.conversations_total} conversations, ${upload.turns} turns`;
    $("import-file").textContent = `${upload.name}: ${upload.label}, ${what}` +
      (upload.cut ? ` (${upload.cut} long messages shortened)` : "");
    $("import-all").checked = true;
    $("import-conversations").replaceChildren(...upload.conversations.map(conversationRow));
    $("import-all").parentElement.hidden = upload.conversations_total < 2;
    showMore();
    $("import-choice").hidden = false;
  }

  function chosen() {
    return [...$("import-conversations").querySelectorAll("input:checked")].map((box) => box.value);
  }

  async function importChosen(event) {
    event.preventDefault();
    const body = { upload: uploaded.id };
    // All of them (those not shown yet too) unless some were left out.
    const leftOut = $("import-conversations").querySelector("input:not(:checked):not(:disabled)");
    if (uploaded.conversations_total && (leftOut || !$("import-all").checked)) body.conversations = chosen();
    try {
      showImport(await call("imports/", { method: "POST", body: JSON.stringify(body) }));
      $("import-choice").hidden = true;
    } catch (error) {
      say(error.message);
    }
  }

  async function startImport(event) {
    event.preventDefault();
    const form = $("import");
    const file = form.transcript.files[0];
    $("import-choice").hidden = true;
    try {
      if (!file) {
        showImport(await call("imports/", { method: "POST", body: JSON.stringify({ locomo_sample: form.locomo_sample.value }) }));
        return;
      }
      const document = await asExport(file);
      if (document) {
        await restore(document);
        return;
      }
      say(`sending ${file.name} …`);
      const path = `imports/files/?name=${encodeURIComponent(file.name)}`;
      const upload = await checked(await call(path, { method: "POST", body: file, contentType: "application/octet-stream" }));
      if (upload.status === "refused") {
        say(`${file.name} was refused: ${upload.error}`);
        return;
      }
      showChoice(upload);
      say(`${file.name} checked: choose what to import`);
    } catch (error) {
      say(error.message);
    }
  }

  // A file dropped on the import panel is taken as if chosen with the button.
  const panel = $("import-panel");
  panel.addEventListener("dragover", (event) => {
    event.preventDefault();
    panel.classList.add("dropping");
  });
  panel.addEventListener("dragleave", () => panel.classList.remove("dropping"));
  panel.addEventListener("drop", (event) => {
    event.preventDefault();
    panel.classList.remove("dropping");
    if (!event.dataTransfer || !event.dataTransfer.files.length) return;
    panel.open = true;
    $("import").transcript.files = event.dataTransfer.files;
    $("import").requestSubmit();
  });

  // Whether the panel shows this import (the feed then keeps what it taught up to date).
  const importShownIs = (id) => importShown !== null && importShown.id === id;

  Object.assign(chat, { showImport, importShownIs });

  $("import").addEventListener("submit", startImport);
  $("import-cancel").addEventListener("click", stopImport);
  $("import-choice").addEventListener("submit", importChosen);
  $("import-more").addEventListener("click", () => loadMore().catch((error) => say(error.message)));
  $("import-all").addEventListener("change", (event) => {
    for (const box of $("import-conversations").querySelectorAll("input:not(:disabled)")) box.checked = event.target.checked;
  });
})(window.ChatPage);
