// Burnrate's small client-side glue. Everything works without it; it adds
// htmx's CSRF header and renders charts from JSON embedded in the page.
document.addEventListener("htmx:configRequest", function (evt) {
  var meta = document.querySelector('meta[name="csrf-token"]');
  if (meta) evt.detail.headers["X-CSRF-Token"] = meta.content;
});

// Dashboard charts: one per currency (never summed together), drawn with
// ECharts from the JSON the page embeds in #chart-data. The same numbers
// are in the tables below the charts for readers without JavaScript.
(function () {
  function exactTooltip(exact, totals) {
    return function (params) {
      if (!params.length) return "";
      var i = params[0].dataIndex;
      var lines = ["<strong>" + params[0].axisValueLabel + "</strong>"];
      params.forEach(function (p) {
        var vals = exact[p.seriesName];
        if (!vals) return;
        var v = p.seriesType === "scatter" ? vals[p.dataIndex] : vals[i];
        if (v === undefined || Number(v) === 0) return;
        lines.push(p.marker + " " + p.seriesName + ": " + v);
      });
      if (totals && totals[i] !== undefined) lines.push("<strong>Total: " + totals[i] + "</strong>");
      return lines.join("<br>");
    };
  }

  function render() {
    var src = document.getElementById("chart-data");
    if (!src || !window.echarts) return;
    var data = JSON.parse(src.textContent);
    (data.charts || []).forEach(function (c) {
      var box = document.getElementById("chart-" + c.currency);
      if (!box) return;
      var old = echarts.getInstanceByDom(box);
      if (old) old.dispose();
      box.innerHTML = "";
      var chart = echarts.init(box, null, { renderer: "svg" });
      var series = [], exact = {}, totals = c.totals;
      if (data.view === "cumulative") {
        var name = "Spent this month (cumulative)";
        series.push({ name: name, type: "line", data: c.cumulative.map(Number), areaStyle: { opacity: 0.15 }, symbol: "none" });
        exact[name] = c.cumulative;
        c.budgets.forEach(function (b) {
          var n = b.name + " (pace)";
          series.push({ name: n, type: "line", data: b.pace.map(Number), symbol: "none", lineStyle: { type: "dashed", width: 2 } });
          exact[n] = b.pace;
        });
        totals = null;
      } else {
        c.series.forEach(function (s) {
          series.push({ name: s.name, type: "bar", stack: "spend", data: s.data.map(Number), emphasis: { focus: "series" } });
          exact[s.name] = s.data;
        });
        c.budgets.forEach(function (b) {
          var n = b.name + " (per day)";
          series.push({ name: n, type: "line", step: "middle", data: b.daily.map(Number), symbol: "none", lineStyle: { type: "dashed", width: 2 } });
          exact[n] = b.daily;
        });
        if (c.anomalies.length) {
          var n = "Unusual day";
          series.push({
            name: n, type: "scatter", symbol: "pin", symbolSize: 30, itemStyle: { color: "#c62828" }, z: 10,
            data: c.anomalies.map(function (a) { return [a.day, Number(a.amount)]; })
          });
          exact[n] = c.anomalies.map(function (a) { return a.note; });
        }
      }
      chart.setOption({
        animation: false,
        tooltip: { trigger: "axis", axisPointer: { type: "shadow" }, confine: true, formatter: exactTooltip(exact, totals) },
        legend: { type: "scroll", top: 0 },
        grid: { left: 70, right: 20, top: 40, bottom: 30 },
        xAxis: { type: "category", data: c.days },
        yAxis: { type: "value", name: c.currency },
        series: series
      });
      box.dataset.rendered = String((Number(box.dataset.rendered) || 0) + 1);
      box.dataset.legend = series.map(function (s) { return s.name; }).join("|");
    });
  }

  document.addEventListener("DOMContentLoaded", render);
  document.addEventListener("htmx:afterSettle", render);
  document.addEventListener("htmx:historyRestore", render);
  window.addEventListener("resize", function () {
    document.querySelectorAll("[data-testid=chart]").forEach(function (box) {
      var ch = window.echarts && echarts.getInstanceByDom(box);
      if (ch) ch.resize();
    });
  });
})();
