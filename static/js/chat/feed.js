// The feed: the memory's changes, pushed by the server (GET events/); the parts of the panel it says changed
// are read again.
(function (chat) {
  "use strict";
  if (!chat) return;
  const { api, $, showError } = chat;

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
    if (parts.has("tiers") || parts.has("heat") || parts.has("parameters")) reads.push(chat.showTiers());
    if (parts.has("entries") || parts.has("tiers")) reads.push(chat.showEntries());
    if (parts.has("runs")) reads.push(chat.showRuns());
    if (parts.has("heat") && $("heat-panel").open) reads.push(chat.showHeatTimeline());
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
      chat.showSpace(change.space, [change.run]);
      // An import's progress; once it has ended, what it taught follows the memory (promotions made after it).
      if (change.import && (change.changed.includes("imports") || chat.importShownIs(change.import.id))) {
        chat.showImport(change.import);
      }
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

  Object.assign(chat, { openFeed });
})(window.ChatPage);
