// Burnrate's small client-side glue. Everything works without it; it adds
// htmx's CSRF header and renders charts from JSON embedded in the page.
document.addEventListener("htmx:configRequest", function (evt) {
  var meta = document.querySelector('meta[name="csrf-token"]');
  if (meta) evt.detail.headers["X-CSRF-Token"] = meta.content;
});

// A form re-rendered with its validation errors comes back as 422; swap it
// in like a 200 rather than dropping it.
if (window.htmx) {
  htmx.config.responseHandling = [
    { code: "204", swap: false },
    { code: "[23]..", swap: true },
    { code: "422", swap: true },
    { code: "[45]..", swap: false, error: true },
    { code: "...", swap: false },
  ];
}

// Charts: an element with data-chart="ID" is drawn with Apache ECharts from
// the option in <script type="application/json" id="ID">. Pages that chart
// load /static/vendor/echarts.min.js themselves; others skip this.
// Formatters cannot travel in JSON, so a few are named instead.
var burnrateFormatters = {
  tokens: function (v) {
    if (v >= 1e12) return v / 1e12 + "T";
    if (v >= 1e9) return v / 1e9 + "B";
    if (v >= 1e6) return v / 1e6 + "M";
    if (v >= 1e3) return v / 1e3 + "k";
    return String(v);
  },
  usd: function (v) {
    if (v >= 1e6) return "$" + v / 1e6 + "M";
    if (v >= 1e3) return "$" + v / 1e3 + "k";
    return "$" + v;
  },
};

function burnrateAxisFormatters(axes) {
  [].concat(axes || []).forEach(function (ax) {
    var f = ax && ax.axisLabel && ax.axisLabel.formatter;
    if (typeof f === "string" && burnrateFormatters[f]) ax.axisLabel.formatter = burnrateFormatters[f];
  });
}

function burnrateRenderCharts() {
  if (!window.echarts) return;
  document.querySelectorAll("[data-chart]").forEach(function (el) {
    var src = document.getElementById(el.getAttribute("data-chart"));
    if (!src) return;
    var option;
    try {
      option = JSON.parse(src.textContent);
    } catch (e) {
      return;
    }
    burnrateAxisFormatters(option.xAxis);
    burnrateAxisFormatters(option.yAxis);
    var old = echarts.getInstanceByDom(el);
    if (old) old.dispose();
    echarts.init(el, null, { renderer: "svg" }).setOption(option);
  });
}

document.addEventListener("DOMContentLoaded", burnrateRenderCharts);
document.addEventListener("htmx:afterSettle", burnrateRenderCharts);
window.addEventListener("resize", function () {
  if (!window.echarts) return;
  document.querySelectorAll("[data-chart]").forEach(function (el) {
    var c = echarts.getInstanceByDom(el);
    if (c) c.resize();
  });
});
