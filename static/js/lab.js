// The experiments pages: the list with its fork form (lab.html) and one experiment beside its source
// (experiment.html). A thin script over the REST API with the signed-in session; memory content is only
// ever placed in the page as text.
(function () {
  "use strict";
  const root = document.getElementById("lab-app") || document.getElementById("experiment-app");
  if (!root) return;
  const api = root.dataset.api;
  const $ = (id) => document.getElementById(id);
  const SOURCE_COLORS = ["#3b5bdb", "#4c6ef5", "#5c7cfa", "#748ffc", "#1c7ed6", "#228be6", "#339af0", "#4dabf7"];
  const EXPERIMENT_COLORS = ["#e8590c", "#f76707", "#fd7e14", "#ff922b", "#c2255c", "#e64980", "#f06595", "#faa2c1"];

  const call = window.Playground.caller(api, root.dataset.csrf);
  const { el } = window.Playground;

  // Shows a replay's progress (an import job) or, for an experiment forked from an export, its restore's
  // (a background job); true while either is unfinished.
  function progress(bar, status, job, label, restore) {
    if (!job) {
      const state = restore ? restore.status : "succeeded";
      bar.max = 1;
      bar.value = state === "succeeded" ? 1 : 0;
      status.textContent = state === "succeeded" ? `${label}: restored from an export`
        : `${label}: restoring an export · ${state}${restore.error ? ` · ${restore.error}` : ""}`;
      return state === "queued" || state === "running";
    }
    bar.max = Math.max(1, job.total);
    bar.value = job.done;
    status.textContent = `${label}: ${job.done} / ${job.total} turns · ${job.status}${job.error ? ` · ${job.error}` : ""}` +
      (job.activity ? ` · ${job.activity}` : "");  // what it is doing: waiting behind what, storing, consolidating
    return job.status === "queued" || job.status === "running";
  }

  // The source's newest import, while it runs: an experiment forked meanwhile replays its turns too.
  async function watchSourceImport() {
    const jobs = await call("imports/?page_size=1");
    const job = jobs.results[0];
    if (!job) return;
    $("source-import").hidden = false;
    if (progress($("source-bar"), $("source-status"), job, job.source)) setTimeout(watchSourceImport, 1500);
  }

  // --- The list and the fork form -------------------------------------------------------------------

  function changedText(changed) {
    const names = Object.keys(changed);
    return names.length ? names.map((n) => `${n} ${changed[n][0]} → ${changed[n][1]}`).join(" · ") : "the same parameters";
  }

  async function listExperiments() {
    const page = await call("experiments/");
    const items = page.results.map((x) => {
      const item = el("li", "experiment");
      item.dataset.experiment = x.id;
      const link = el("a", "experiment-name", x.name);
      link.href = `${root.dataset.lab}${x.id}/`;
      const bar = el("progress");
      const status = el("span", "muted");
      progress(bar, status, x.replay, "replay", x.restore);
      const remove = el("button", "danger", "Delete");
      remove.type = "button";
      remove.addEventListener("click", async () => {
        if (!window.confirm(`Delete the experiment “${x.name}” and its shadow space? The source stays.`)) return;
        await call(`experiments/${x.id}/`, { method: "DELETE" });
        listExperiments();
      });
      item.append(link, el("div", "muted", changedText(x.changed)), bar, " ", status, " ", remove);
      return item;
    });
    $("experiments").replaceChildren(...(items.length ? items : [el("li", "muted empty", "none yet")]));
    const unfinished = (job) => job && (job.status === "queued" || job.status === "running");
    if (page.results.some((x) => unfinished(x.replay) || unfinished(x.restore))) {
      setTimeout(listExperiments, 1500);
    }
  }

  // A parameter changed from the source's value is marked as changed, with the value it had.
  function markChanged(input) {
    const changed = input.value !== "" && Number(input.value) !== Number(input.dataset.source);
    input.classList.toggle("changed", changed);
    input.title = changed ? `changed from ${input.dataset.source}` : "";
  }

  async function fork(event) {
    event.preventDefault();
    const form = $("fork");
    const parameters = {};
    for (const input of form.querySelectorAll("input[data-source]")) {
      if (input.value !== "" && Number(input.value) !== Number(input.dataset.source)) parameters[input.name] = Number(input.value);
    }
    const body = { name: form.name.value, parameters };
    $("fork-status").textContent = "forking…";
    try {
      if (form.export.files[0]) body.export = JSON.parse(await form.export.files[0].text());
      await call("experiments/", { method: "POST", body: JSON.stringify(body) });
      form.export.value = "";
      $("fork-status").textContent = `forked “${body.name}”: its progress is in the list`;
      form.name.value = "";
      listExperiments();
    } catch (error) {
      $("fork-status").textContent = error.message;
    }
  }

  // --- One experiment beside its source --------------------------------------------------------------

  const experiment = root.dataset.experiment;

  function row(cells, header = false) {
    const tr = el("tr");
    for (const cell of cells) tr.append(el(header ? "th" : "td", null, cell));
    return tr;
  }

  const LABELS = JSON.parse(document.getElementById("parameter-labels")?.textContent || "{}");

  function parameterName(name) {
    return LABELS[name] ? `${LABELS[name]} (${name})` : name;
  }

  async function watchReplay() {
    const x = await call(`experiments/${experiment}/`);
    const running = progress($("replay-bar"), $("replay-status"), x.replay, "replay", x.restore);
    const names = Object.keys(x.changed);
    $("changed").replaceChildren(row(["parameter", "source", "experiment"], true),
      ...(names.length ? names.map((n) => row([parameterName(n), x.changed[n][0], x.changed[n][1]])) : [row(["none", "", ""])]));
    const jobs = await call("imports/?page_size=1");
    const job = jobs.results[0];
    // The row is labelled "source" already: its import's own name ("LoCoMo conv-26"), not "source: ..." again.
    const sourceRunning = job ? progress($("source-bar"), $("source-status"), job, job.source) : false;
    if (!job) $("source-status").textContent = "its turns as stored";
    showSides(x.sides);
    await showHeat();
    if (running || sourceRunning) setTimeout(watchReplay, 2000);
  }

  function showSides(c) {
    const lines = [
      ["turns", (s) => s.turns],
      ["short-term pages", (s) => s.tiers.short_term_pages],
      ["mid-term pages", (s) => s.tiers.mid_term_pages],
      ["sessions now (ever)", (s) => `${s.tiers.active_sessions} (${s.sessions_ever})`],
      ["sessions promoted", (s) => s.sessions_promoted],
      ["profile entries", (s) => s.tiers.profile_entries],
      ["knowledge entries", (s) => s.tiers.user_knowledge + s.tiers.assistant_knowledge],
      ["LLM calls", (s) => s.llm_calls],
      ["consolidation runs failed", (s) => s.runs_failed],
      ["LLM tokens (prompt + completion)", (s) => `${s.prompt_tokens} + ${s.completion_tokens}`],
    ];
    $("sides").replaceChildren(row(["", "source", "experiment"], true),
      ...lines.map(([name, value]) => row([name, value(c.source), value(c.experiment)])));
  }

  async function showHeat() {
    const heat = await call(`experiments/${experiment}/heat/`);
    const lines = [];
    for (const [side, colors, dash] of [["source", SOURCE_COLORS, undefined], ["experiment", EXPERIMENT_COLORS, [2, 2]]]) {
      const points = heat[side].points.map((p) => ({ ...p, x: p.turn }));
      lines.push(...window.MemoryCharts.sessionLines(points, { limit: 4, prefix: side, colors, dash }));
    }
    const thresholds = [
      { label: "source threshold", color: SOURCE_COLORS[0], value: heat.source.threshold },
      { label: "experiment threshold", color: EXPERIMENT_COLORS[0], value: heat.experiment.threshold },
    ];
    window.MemoryCharts.heatChart($("heat-overlay"), lines, thresholds, { xLabel: "turn" });
  }

  function itemList(side, evidence) {
    const list = el("ol", "probe-items");
    for (const item of side.items) {
      const li = el("li", item.shared ? "shared" : "only");
      const found = item.turns.filter((turn) => evidence.includes(turn));
      li.append(el("span", "kind", item.kind.replace("_", " ")), el("span", "score", item.score.toFixed(3)),
        el("span", "muted", item.shared ? "both" : "only here"));
      if (found.length) li.append(el("span", "evidence", ` ✓ evidence ${found.join(", ")}`));
      li.append(el("div", "used-text", item.text));
      if (item.turns.length) li.append(el("div", "muted", `turns ${item.turns.join(", ")}`));
      list.append(li);
    }
    if (!side.items.length) list.append(el("li", "muted", "nothing ranked"));
    return list;
  }

  function recallText(value) {
    return value === null || value === undefined ? "—" : value.toFixed(3);
  }

  // The evidence each side's prompt context shows at each budget (the comparison's curve): a row a budget.
  function showCurve(c) {
    const curve = c.curve;
    const table = $("curve");
    table.hidden = !curve.source.length;
    if (table.hidden) return;
    const head = el("tr");
    head.append(el("th", null, "context budget"), el("th", null, "source: evidence shown (tokens)"),
      el("th", null, "experiment: evidence shown (tokens)"));
    const rows = curve.source.map((point, i) => {
      const row = el("tr");
      row.dataset.budget = point.budget;
      // Each side's own budget, marked: what its chat's prompt context holds.
      const own = [["source", c.source], ["experiment", c.experiment]].filter(([, side]) => side.token_budget === point.budget)
        .map(([name]) => name);
      if (own.length) row.classList.add("own-budget");
      row.append(el("th", null, `${point.budget.toLocaleString("en")} tokens` + (own.length ? ` (${own.join(" and ")}'s budget)` : "")));
      for (const side of [point, curve.experiment[i]]) {
        row.append(el("td", null, `${side.evidence.toFixed(3)} (${Math.round(side.tokens).toLocaleString("en")})`));
      }
      return row;
    });
    table.replaceChildren(el("caption", null, "Evidence in the prompt context against its size, over the questions with evidence"), head, ...rows);
  }

  async function probe(event) {
    event.preventDefault();
    const form = $("probe");
    const body = { k: Number(form.k.value) };
    const questions = form.questions.value.split("\n").map((q) => q.trim()).filter(Boolean);
    if (questions.length) body.questions = questions;
    else body.locomo_sample = form.locomo_sample.value;
    $("probe-status").textContent = "asking both sides…";
    try {
      const job = await call(`experiments/${experiment}/compare/`, { method: "POST", body: JSON.stringify(body) });
      const c = await window.Playground.jobDone(call, job, (j) => {
        $("probe-status").textContent = `asking both sides · ${j.status}` +
          (j.progress ? ` · ${j.progress.done} of ${j.progress.of} questions` : "");
      });
      // A LoCoMo sample's questions with evidence to find: its adversarial ones (category 5) have none.
      $("probe-status").textContent = body.locomo_sample
        ? `${c.probes.length} questions: the sample's with evidence to find (its adversarial questions, which have ` +
          "none, are left out)"
        : `${c.probes.length} questions`;
      showSides(c);
      // A side still being built (an import or a replay unfinished) makes figures that will change.
      $("compare-warnings").replaceChildren(...c.warnings.map((warning) => el("p", null, warning)));
      $("compare-warnings").hidden = !c.warnings.length;
      // Which parameters differ, and whether they changed anything here: what the comparison isolates.
      $("compare-verdict").textContent = c.verdict;
      $("recall").textContent = c.recall.questions
        ? `recall@${c.k} over ${c.recall.questions} questions with evidence: source ${recallText(c.recall.source)} · ` +
          `experiment ${recallText(c.recall.experiment)}`
        : "No evidence is known for these questions: compare the items.";
      showCurve(c);
      // Where the two memories differ first: the largest gap in recall, then the least overlap.
      const gap = (p) => Math.abs((p.source.recall ?? 0) - (p.experiment.recall ?? 0));
      const ordered = [...c.probes].sort((a, b) => gap(b) - gap(a) || a.overlap - b.overlap);
      const differ = c.probes.filter((p) => gap(p) > 0).length;
      const overlap = c.probes.reduce((sum, p) => sum + p.overlap, 0) / Math.max(1, c.probes.length);
      $("difference").textContent = `Recall differs on ${differ} of ${c.probes.length} questions; on average ` +
        `${overlap.toFixed(1)} of the first ${c.k} items are the same on both sides. Those that differ most come first.`;
      $("probes").replaceChildren(...ordered.map((p, number) => {
        const li = el("li", "probe-result");
        const details = el("details");
        details.open = number < 3;
        const summary = el("summary");
        summary.append(el("span", "question", p.question), el("span", "muted", ` · ${p.category ? `${p.category} · ` : ""}` +
          `${p.overlap} of ${c.k} items in both` + (p.evidence.length ? ` · evidence ${p.evidence.join(", ")} · ` +
            `recall@${c.k} source ${recallText(p.source.recall)}, experiment ${recallText(p.experiment.recall)}` : "")));
        const sides = el("div", "probe-sides");
        for (const name of ["source", "experiment"]) {
          const column = el("div", `probe-side ${name}`);
          column.append(el("h3", null, name), itemList(p[name], p.evidence));
          sides.append(column);
        }
        details.append(summary, sides);
        li.append(details);
        return li;
      }));
    } catch (error) {
      $("probe-status").textContent = error.message;
    }
  }

  if (experiment) {
    $("probe").addEventListener("submit", probe);
    watchReplay().catch((error) => { $("replay-status").textContent = error.message; });
  } else {
    $("fork").addEventListener("submit", fork);
    for (const input of $("fork").querySelectorAll("input[data-source]")) {
      // what was typed (or restored by the browser) before this script ran is marked too
      markChanged(input);
      input.addEventListener("input", () => markChanged(input));
    }
    listExperiments();
    watchSourceImport();
  }
})();
