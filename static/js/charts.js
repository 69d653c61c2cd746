// Heat charts: lines drawn with uPlot (static/vendor/uplot, vendored), each with its points as a table
// beside it, open when the chart cannot be drawn. Labels are placed as text, never as HTML.
(function () {
  "use strict";

  const { el } = window.Playground;
  // One colour per session line, the hottest first.
  const PALETTE = ["#3b5bdb", "#2b8a3e", "#c2255c", "#e67700", "#5f3dc4", "#0b7285", "#862e9c", "#5c940d"];
  // The moments a session left mid-term memory, drawn as marks over the lines.
  // Drawn as dots, so the legend says dots.
  const EVENTS = [{ cause: "promoted", label: "● promoted", color: "#f59f00" },
    { cause: "evicted", label: "● evicted", color: "#e03131" }];
  // On a phone the chart has no legend under it (it filled the screen): the lines' names are in its table.
  const PHONE = "(max-width: 600px)";
  // The sessions drawn as lines, the hottest (by their highest point); every point is in the table.
  const LINES = 5;
  // What every heat chart shows, in one sentence under it.
  const CAPTION = "Each line is a mid-term session's heat: its retrieval visits plus the turns added to it plus how " +
    "recently it was visited. A session whose heat reaches the dashed threshold is promoted (●: its turns read into " +
    "the profile and knowledge), then cools: its visits and turns are counted again from zero. Each point sits at " +
    "the turn that made it.";

  // lines: [{label, color, dash?, marks?, points: [{x, y, note?}]}] (marks: points only, no line);
  // thresholds: [{label, color, value}], or {label, color, valueAt(x), xs} for one that changed (at xs).
  // options: {xLabel, time (x is seconds since 1970), height}. Returns the chart's element.
  function heatChart(container, lines, thresholds, options = {}) {
    const figure = el("figure", "heat-chart");
    const plot = el("div", "heat-plot");
    figure.append(plot);
    container.replaceChildren(figure);  // placed first, so that its width is the one the page gives it
    const changedAt = thresholds.flatMap((t) => t.xs || []);
    const xs = [...new Set([...lines.flatMap((line) => line.points.map((p) => p.x)), ...changedAt])].sort((a, b) => a - b);
    const index = new Map(xs.map((x, i) => [x, i]));
    const data = [xs];
    const series = [{ label: options.xLabel || "x" }];
    for (const line of lines) {
      const ys = new Array(xs.length).fill(null);
      for (const p of line.points) ys[index.get(p.x)] = p.y;
      data.push(ys);
      // A session's heat holds between two changes: a step, not a slope.
      const paths = line.marks ? () => null :
        window.uPlot && window.uPlot.paths && window.uPlot.paths.stepped ? window.uPlot.paths.stepped({ align: 1 }) : undefined;
      series.push({ label: line.label, stroke: line.color, width: line.marks ? 0 : 1.5, dash: line.dash,
        spanGaps: !line.marks, paths, points: { show: true, size: line.marks ? 9 : 4, fill: line.marks ? line.color : undefined } });
    }
    for (const t of thresholds) {
      data.push(xs.map((x) => (t.valueAt ? t.valueAt(x) : t.value)));
      series.push({ label: t.label, stroke: t.color, width: 1, dash: [6, 4], points: { show: false },
        paths: t.valueAt && window.uPlot && window.uPlot.paths && window.uPlot.paths.stepped ? window.uPlot.paths.stepped({ align: 1 }) : undefined });
    }
    const table = pointsTable(lines, options);
    const drawn = typeof window.uPlot === "function" && xs.length > 0;
    if (drawn) {
      const height = options.height || 260;
      const widthNow = () => Math.max(320, plot.clientWidth || 640);
      // The axes in the page's own text colour, so that they read in dark mode as in light.
      const ink = window.getComputedStyle(container).color || "#333";
      const faint = "rgba(134, 142, 150, 0.3)";
      const axis = (label) => ({ label, stroke: ink, grid: { stroke: faint, width: 1 }, ticks: { stroke: faint, width: 1 } });
      const legend = !window.matchMedia(PHONE).matches;
      const chart = new window.uPlot({ width: widthNow(), height, series, scales: { x: { time: !!options.time } },
        axes: [axis(options.xLabel), axis("heat")], legend: { show: legend, live: false } }, data, plot);
      if (!legend) plot.append(el("p", "muted", "Each line's name is in the table below."));
      // The page's layout may change after the chart is drawn (a sidebar opening, a narrower window). A
      // chart redrawn in the same place (the chat page's, at each memory change) stops its old observer.
      if (window.ResizeObserver) {
        if (container.chartResize) container.chartResize.disconnect();
        container.chartResize = new ResizeObserver(() => chart.setSize({ width: widthNow(), height }));
        container.chartResize.observe(figure);
      }
    } else {
      plot.append(el("p", "muted", xs.length ? "The chart needs scripts and a canvas: its points are below." :
        "No heat recorded yet."));
    }
    figure.append(el("figcaption", "muted", options.caption || CAPTION));
    const details = el("details", "chart-table");
    details.open = !drawn && xs.length > 0;
    details.append(el("summary", null, "The points as a table"), table);
    figure.append(details);
    return figure;
  }

  function pointsTable(lines, options) {
    const table = el("table", "points");
    const head = el("tr");
    for (const name of ["line", options.xLabel || "x", "heat", "cause"]) head.append(el("th", null, name));
    table.append(head);
    for (const line of lines.filter((l) => !l.marks)) {  // marks repeat points the lines hold
      for (const p of line.points) {
        const row = el("tr");
        const x = options.time ? new Date(p.x * 1000).toISOString().slice(0, 19).replace("T", " ") : p.x;
        row.append(el("td", null, line.label), el("td", null, x), el("td", null, p.y.toFixed(2)), el("td", null, p.note || ""));
        table.append(row);
      }
    }
    return table;
  }

  // Points of a heat timeline ({session(_id), heat, cause, x}) as one line per session, hottest first: a
  // handful (`limit`), the rest in the table under the chart. A line is named by what its session is about (its
  // topic: the summary's first words), not by its number, which differs between a space and its experiment's copy.
  function sessionLines(points, { limit = LINES, prefix = "", colors, dash } = {}) {
    const bySession = new Map();
    const topics = new Map();
    for (const p of points) {
      const id = p.session ?? p.session_id;
      if (!bySession.has(id)) bySession.set(id, []);
      bySession.get(id).push({ x: p.x, y: p.heat, note: p.cause });
      if (p.topic) topics.set(id, p.topic);
    }
    const hottest = [...bySession.entries()]
      .sort((a, b) => Math.max(...b[1].map((p) => p.y)) - Math.max(...a[1].map((p) => p.y)))
      .slice(0, limit);
    return hottest.map(([id, pts], i) => ({ label: `${prefix}${prefix ? ": " : ""}${topics.get(id) || `session ${id}`}`,
      color: colors[i % colors.length], dash, points: pts }));
  }

  // Promotions and evictions among the points, one line of marks each.
  function eventMarks(points) {
    return EVENTS.map(({ cause, label, color }) => ({ label, color, marks: true,
      points: points.filter((p) => p.cause === cause).map((p) => ({ x: p.x, y: p.heat, note: p.topic || `session ${p.session ?? p.session_id}` })) }))
      .filter((line) => line.points.length);
  }

  // The promotion threshold as it was at each point: `changes` are its recorded changes ({at, before, after},
  // oldest first; none: it was always `now`), each placed at the first point recorded after it (`points`: {at,
  // x}, in the order recorded), since a point's x is when its turn was said, not when it was recorded.
  function thresholdOverTime(now, changes, points) {
    const steps = changes.map((c) => {
      const next = points.find((p) => Date.parse(p.at) >= Date.parse(c.at));
      return { x: next ? next.x : Infinity, after: c.after };  // after every point: none was under it
    });
    const first = changes.length ? changes[0].before : now;
    const valueAt = (x) => steps.reduce((value, step) => (step.x <= x ? step.after : value), first);
    const label = changes.length ? `promotion threshold (as it was; now ${now})` : `promotion threshold ${now}`;
    return { label, color: "#868e96", valueAt, xs: steps.map((step) => step.x).filter(Number.isFinite) };
  }

  // A space's heat timeline, as the chat page and the admin show it: points ({session_id, at, turn_at, heat,
  // cause}, ISO times, in the order recorded) drawn as the hottest sessions' lines with promotions and evictions
  // marked, each at the time its turn was said (`turn_at`: an imported history's own dates; `at` for a point
  // recorded before turns were kept), and the promotion threshold as it was (`thresholdChanges`, ParameterChange rows).
  function heatTimeline(container, points, threshold, options = {}) {
    const timed = points.map((p) => ({ ...p, x: Date.parse(p.turn_at || p.at) / 1000 }));
    const ordered = [...timed].sort((a, b) => a.x - b.x);  // stable: a promotion before its cooling
    const lines = [...sessionLines(ordered, { colors: PALETTE }), ...eventMarks(ordered)];
    const { thresholdChanges = [], ...chartOptions } = options;
    return heatChart(container, lines, [thresholdOverTime(threshold, thresholdChanges, timed)],
      { xLabel: "when said", time: true, ...chartOptions });
  }

  window.MemoryCharts = { heatChart, sessionLines, heatTimeline };
})();
