// The admin's heat timeline of one space: the chat page's chart (charts.js), from the points the page holds.
(function () {
  "use strict";

  const heat = JSON.parse(document.getElementById("heat-data").textContent);
  window.MemoryCharts.heatTimeline(document.getElementById("heat-chart"), heat.points, heat.threshold,
    { height: 360, thresholdChanges: heat.threshold_changes });
})();
