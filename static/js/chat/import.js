// Bringing history in: a transcript or a LoCoMo sample replayed turn by turn (its progress comes with the
// feed), or a space's export restored.
(function (chat) {
  "use strict";
  if (!chat) return;
  const { $, call } = chat;

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
      (job.error ? ` · ${job.error}` : "") + (job.activity ? ` · ${job.activity}` : "");
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
        await chat.loadHistory();
        chat.refresh();
        return;
      }
      showImport(await call("imports/", { method: "POST", body: JSON.stringify(body) }));
    } catch (error) {
      $("import-progress").hidden = false;
      $("import-status").textContent = error.message;
    }
  }

  Object.assign(chat, { showImport });

  $("import").addEventListener("submit", startImport);
})(window.ChatPage);
