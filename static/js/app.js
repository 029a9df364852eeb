// Burnrate's small client-side glue. Everything works without it; it adds
// htmx's CSRF header and renders charts from JSON embedded in the page.
document.addEventListener("htmx:configRequest", function (evt) {
  var meta = document.querySelector('meta[name="csrf-token"]');
  if (meta) evt.detail.headers["X-CSRF-Token"] = meta.content;
});

// The nav collapses behind a Menu button on narrow screens (app.css); the
// "js" class tells the stylesheet the button works, so without JavaScript
// the links stay shown.
document.documentElement.classList.add("js");
document.addEventListener("click", function (evt) {
  var btn = evt.target.closest && evt.target.closest("[data-nav-toggle]");
  if (!btn) return;
  var links = document.getElementById(btn.getAttribute("aria-controls"));
  var open = btn.getAttribute("aria-expanded") !== "true";
  btn.setAttribute("aria-expanded", String(open));
  if (links) links.classList.toggle("open", open);
});

// Forms with data-validate-on-submit recompute as their inputs change, but
// only a submit shows errors: those live requests say so in a header, and
// the server answers a half-filled form with 204 (nothing swapped).
document.addEventListener("htmx:configRequest", function (evt) {
  var elt = evt.detail.elt;
  var trigger = evt.detail.triggeringEvent;
  if (elt && elt.hasAttribute && elt.hasAttribute("data-validate-on-submit") && (!trigger || trigger.type !== "submit")) {
    evt.detail.headers["X-Live-Preview"] = "1";
  }
});

// Copy buttons: data-copy="ID" copies the text of the element with that id.
document.addEventListener("click", function (evt) {
  var btn = evt.target.closest && evt.target.closest("[data-copy]");
  if (!btn) return;
  var src = document.getElementById(btn.getAttribute("data-copy"));
  if (!src || !navigator.clipboard) return;
  navigator.clipboard.writeText(src.textContent.trim()).then(function () {
    btn.textContent = "Copied";
  }, function () {
    btn.textContent = "Select and copy it";
  });
});

// What would otherwise be inline event handlers, which the CSP forbids (an
// injected handler would run as easily as ours), asked for by attributes:
//   data-confirm="Question?" on a form asks before the form is submitted;
//   data-submit-on-change submits its control's form when the value changes;
//   data-custom-range makes its form's range "custom" when the date changes
//   (a typed date once it is typed: see releaseTypedDate).
// They listen in the capture phase, before htmx's listeners on the form
// read its values or send it.
document.addEventListener("submit", function (evt) {
  var q = evt.target.getAttribute && evt.target.getAttribute("data-confirm");
  if (q && !window.confirm(q)) {
    evt.preventDefault();
    evt.stopPropagation();
  }
}, true);
document.addEventListener("change", function (evt) {
  var el = evt.target;
  if (!el.form || !el.hasAttribute) return;
  if (el.hasAttribute("data-custom-range") && el.hasAttribute("data-typing")) {
    // Typed, not picked: held until the typing is done (see below).
    el.setAttribute("data-held", "");
    evt.stopPropagation();
    return;
  }
  if (el.hasAttribute("data-custom-range")) {
    var range = el.form.elements.namedItem("range");
    if (range) range.value = "custom";
  }
  if (el.hasAttribute("data-submit-on-change")) el.form.requestSubmit();
}, true);

// A date typed into a data-custom-range field counts once it is typed: the
// browser reports a change at each digit (the first already makes a date),
// and the view reloaded then replaced the field under the cursor, losing
// the rest. Its change is held while keys are typed and let through when
// the field is left or Enter pressed. A date picked from the calendar
// counts at once.
function releaseTypedDate(el) {
  el.removeAttribute("data-typing");
  if (!el.hasAttribute("data-held")) return;
  el.removeAttribute("data-held");
  el.dispatchEvent(new Event("change", { bubbles: true }));
}
document.addEventListener("keydown", function (evt) {
  var el = evt.target;
  if (!el.hasAttribute || !el.hasAttribute("data-custom-range")) return;
  if (evt.key === "Enter") {
    evt.preventDefault(); // not the form's plain submit: the change, through htmx
    releaseTypedDate(el);
  } else if (evt.key !== "Tab" && evt.key !== "Shift") {
    el.setAttribute("data-typing", "");
  }
}, true);
document.addEventListener("focusout", function (evt) {
  var el = evt.target;
  if (el.hasAttribute && el.hasAttribute("data-custom-range")) releaseTypedDate(el);
}, true);

// Drag-and-drop onto the upload form: dropped files become the file input's.
document.addEventListener("dragover", function (evt) {
  var zone = evt.target.closest && evt.target.closest("[data-dropzone]");
  if (!zone) return;
  evt.preventDefault();
  zone.classList.add("dragover");
});
document.addEventListener("dragleave", function (evt) {
  var zone = evt.target.closest && evt.target.closest("[data-dropzone]");
  if (zone) zone.classList.remove("dragover");
});
document.addEventListener("drop", function (evt) {
  var zone = evt.target.closest && evt.target.closest("[data-dropzone]");
  if (!zone) return;
  evt.preventDefault();
  zone.classList.remove("dragover");
  var input = zone.querySelector('input[type="file"]');
  if (input && evt.dataTransfer && evt.dataTransfer.files.length) {
    input.files = evt.dataTransfer.files;
    var names = Array.prototype.map.call(input.files, function (f) { return f.name; }).join(", ");
    var note = zone.querySelector("[data-dropped]") || zone.appendChild(document.createElement("p"));
    note.setAttribute("data-dropped", "");
    note.textContent = "Ready: " + names;
  }
});

// Upload progress: bytes sent, then "Processing…" while the server imports.
document.addEventListener("htmx:xhr:progress", function (evt) {
  var form = evt.target.closest && evt.target.closest("form");
  if (!form) return;
  var bar = form.querySelector("[data-upload-progress]");
  var status = form.querySelector("[data-upload-status]");
  if (!bar || !evt.detail.lengthComputable) return;
  var pct = Math.round((evt.detail.loaded / evt.detail.total) * 100);
  bar.value = pct;
  if (status) status.textContent = pct < 100 ? "Uploading… " + pct + "%" : "Processing… rows are being checked and imported";
});

// Processing progress: each upload gets a random key; once the bytes are
// sent, the page polls the server for the rows read under that key.
var uploadPoll = null;
document.addEventListener("htmx:configRequest", function (evt) {
  var input = evt.detail.elt.querySelector && evt.detail.elt.querySelector("[data-upload-key]");
  if (!input) return;
  var key = Math.random().toString(36).slice(2) + Date.now().toString(36);
  input.value = key;
  evt.detail.parameters["upload_key"] = key;
});
document.addEventListener("htmx:xhr:progress", function (evt) {
  var form = evt.target.closest && evt.target.closest("form");
  var input = form && form.querySelector("[data-upload-key]");
  if (!input || uploadPoll || !evt.detail.lengthComputable || evt.detail.loaded < evt.detail.total) return;
  var status = form.querySelector("[data-upload-status]");
  uploadPoll = setInterval(function () {
    fetch("/imports/progress?key=" + encodeURIComponent(input.value), { credentials: "same-origin" })
      .then(function (r) { return r.text(); })
      .then(function (t) { if (status && uploadPoll) status.textContent = t; });
  }, 700);
});
document.addEventListener("htmx:afterRequest", function () {
  if (uploadPoll) { clearInterval(uploadPoll); uploadPoll = null; }
});

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

// Tooltips are built as DOM nodes whose words are set with textContent,
// never as HTML strings: series names, axis labels and notes are uploaded
// data (providers, models, teams from any bill) and budget names, and an
// HTML tooltip would run whatever markup they hold. rows are
// {color, text}; the colour goes through CSSOM, which the CSP allows.
function burnrateTip(title, rows, footer) {
  var box = document.createElement("div");
  function line(tag, text) {
    var el = box.appendChild(document.createElement(tag));
    el.className = "chart-tip-line";
    el.textContent = text;
    return el;
  }
  if (title !== undefined && title !== "") line("strong", String(title));
  rows.forEach(function (r) {
    var el = line("div", "");
    if (typeof r.color === "string") {
      var marker = el.appendChild(document.createElement("span"));
      marker.className = "chart-tip-marker";
      marker.style.backgroundColor = r.color;
    }
    el.appendChild(document.createTextNode(r.text));
  });
  if (footer) line("strong", footer);
  return box;
}

// burnrateTipValue is a point's value as tooltip text: the y of [x, y]
// pairs, numbers rounded for reading.
function burnrateTipValue(p, currency) {
  var v = p.value;
  if (Array.isArray(v)) v = p.encode && p.encode.y ? v[p.encode.y[0]] : v[v.length - 1];
  if (currency && v !== null && v !== undefined && v !== "" && isFinite(Number(v))) return burnrateMoney(v, currency);
  if (typeof v === "number") return v.toLocaleString("en-US", { maximumFractionDigits: 2 });
  return String(v);
}

// burnrateDefaultTip replaces ECharts' own tooltip on every chart drawn from
// JSON, whatever formatter the JSON carried (a formatter string is an HTML
// template in a tooltip).
function burnrateDefaultTip(currency) {
  return function (params) {
    params = [].concat(params || []).filter(function (p) { return p.value !== null && p.value !== undefined; });
    if (!params.length) return "";
    var first = params[0];
    var title = first.axisValueLabel !== undefined ? first.axisValueLabel : first.name;
    return burnrateTip(title, params.map(function (p) {
      return { color: p.color, text: p.seriesName + ": " + burnrateTipValue(p, currency) };
    }));
  };
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
    var theme = burnrateTheme();
    option.textStyle = { color: theme.text };
    [].concat(option.xAxis || [], option.yAxis || []).forEach(function (ax) {
      if (!ax) return;
      ax.axisLabel = ax.axisLabel || {};
      ax.axisLabel.color = theme.muted;
      ax.nameTextStyle = { color: theme.muted };
      ax.splitLine = ax.splitLine || {};
      ax.splitLine.lineStyle = { color: theme.grid };
    });
    if (option.legend) [].concat(option.legend).forEach(function (l) { l.textStyle = { color: theme.text }; });
    if (option.tooltip) {
      option.tooltip.formatter = burnrateDefaultTip(el.getAttribute("data-currency"));
      option.tooltip.className = "chart-tip";
    }
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
// Numbers are written the one way the server writes them
// (quantity.FormatAmount): thousands separators, two decimals, more only
// for amounts below one (0.0025), and money always with its currency
// code, which the page hands over in data-currency.
function burnrateAmount(v) {
  var n = Number(v);
  if (!isFinite(n)) return String(v);
  var a = Math.abs(n), places = 2;
  if (a > 0 && a < 1) places = Math.min(Math.max(Math.floor(-Math.log10(a)) + 2, 2), 6);
  var s = n.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: places });
  return s === "-0.00" ? "0.00" : s;
}
function burnrateMoney(v, currency) { return burnrateAmount(v) + " " + currency; }
// burnrateAxis writes an axis tick: whole numbers with separators.
function burnrateAxis(v) { return Number(v).toLocaleString("en-US", { maximumFractionDigits: 2 }); }

// burnrateTheme is the page's colours (Pico's, light or dark) for chart
// text, axes and gridlines, so that charts stay readable in dark mode.
function burnrateTheme() {
  var cs = getComputedStyle(document.body);
  var text = cs.color || "#333";
  var muted = cs.getPropertyValue("--pico-muted-color").trim() || text;
  var grid = cs.getPropertyValue("--pico-muted-border-color").trim() || "#ccc";
  return { text: text, muted: muted, grid: grid };
}

// Twelve colours told apart easily (Tableau 10 and two more), for the
// series; budgets are drawn dashed, each its own dash and colour, and
// unusual days in red.
// burnratePalette colours a chart's series, in order: twelve, a view's top
// eleven groups and Other, each its own (the last a grey, for the rest).
var burnratePalette = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
  "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#17becf", "#79706e"];
var burnrateBudgetDashes = ["dashed", "dotted", [8, 4, 2, 4], [2, 2], [12, 4]];

// burnrateLegend fills list (a <ul> above a chart) with one button per
// series, in the chart's order (budget lines first): a swatch in the
// series' colour and its name as text. The list wraps, so every series is
// in view and reachable by keyboard; pressing one hides or shows its series.
function burnrateLegend(list, chart, keys) {
  if (!list) return;
  list.textContent = "";
  keys.forEach(function (k) {
    var li = document.createElement("li");
    var btn = document.createElement("button");
    btn.type = "button";
    btn.className = "legend-item";
    btn.setAttribute("aria-pressed", "true");
    btn.dataset.series = k.name;
    var sw = document.createElement("span");
    sw.className = "legend-swatch" + (k.line ? " legend-line legend-" + k.line : "") + (k.pin ? " legend-pin" : "");
    sw.setAttribute("aria-hidden", "true");
    if (k.line) sw.style.borderTopColor = k.color; else sw.style.backgroundColor = k.color;
    var label = document.createElement("span");
    label.textContent = k.name;
    btn.appendChild(sw);
    btn.appendChild(label);
    btn.addEventListener("click", function () {
      chart.dispatchAction({ type: "legendToggleSelect", name: k.name });
      btn.setAttribute("aria-pressed", btn.getAttribute("aria-pressed") === "true" ? "false" : "true");
    });
    li.appendChild(btn);
    list.appendChild(li);
  });
}

// Dashboard charts: one per currency (never summed together), drawn with
// ECharts from the JSON the page embeds in #chart-data. The same numbers
// are in the tables below the charts for readers without JavaScript.
(function () {
  function exactTooltip(exact, totals, currency, notes) {
    return function (params) {
      if (!params.length) return "";
      var i = params[0].dataIndex;
      var rows = [];
      params.forEach(function (p) {
        var vals = exact[p.seriesName];
        if (!vals) return;
        if (notes[p.seriesName]) {
          rows.push({ color: p.color, text: p.seriesName + ": " + notes[p.seriesName][p.dataIndex] });
          return;
        }
        var v = vals[i];
        if (v === undefined || Number(v) === 0) return;
        rows.push({ color: p.color, text: p.seriesName + ": " + burnrateMoney(v, currency) });
      });
      var total = totals && totals[i] !== undefined ? "Total: " + burnrateMoney(totals[i], currency) : "";
      return burnrateTip(params[0].axisValueLabel, rows, total);
    };
  }

  function render() {
    var src = document.getElementById("chart-data");
    if (!src || !window.echarts) return;
    var data = JSON.parse(src.textContent);
    var theme = burnrateTheme();
    (data.charts || []).forEach(function (c) {
      var box = document.getElementById("chart-" + c.currency);
      if (!box) return;
      var currency = box.getAttribute("data-currency") || c.currency;
      var old = echarts.getInstanceByDom(box);
      if (old) old.dispose();
      box.textContent = "";
      var chart = echarts.init(box, null, { renderer: "svg" });
      var series = [], exact = {}, notes = {}, totals = c.totals, keys = [];
      // Budget lines come first in the legend; they are drawn above the
      // bars.
      // Budgets are drawn in the text colour, none of the bars' (they take
      // the whole palette), each with its own dash; their names tell them
      // apart in the legend and the tooltip.
      function budgetLine(b, k, name, values, step) {
        var dash = burnrateBudgetDashes[k % burnrateBudgetDashes.length];
        var color = theme.text;
        series.push({
          name: name, type: "line", step: step, data: values.map(Number), symbol: "none", z: 5,
          lineStyle: { type: dash, width: 2, color: color },
          itemStyle: { color: color }
        });
        exact[name] = values;
        keys.push({ name: name, color: color, line: dash === "dotted" ? "dotted" : "dashed" });
      }
      if (data.view === "cumulative") {
        c.budgets.forEach(function (b, k) { budgetLine(b, k, b.pace_name, b.pace, false); });
        var name = "Spent (cumulative within each month of the range)";
        series.push({ name: name, type: "line", data: c.cumulative.map(Number), areaStyle: { opacity: 0.15 }, symbol: "none",
          color: burnratePalette[0] });
        exact[name] = c.cumulative;
        keys.push({ name: name, color: burnratePalette[0] });
        totals = null;
      } else {
        c.budgets.forEach(function (b, k) { budgetLine(b, k, b.daily_name, b.daily, "middle"); });
        if (c.anomalies.length) {
          var n = "Unusual day";
          series.push({
            name: n, type: "scatter", symbol: "pin", symbolSize: 30, itemStyle: { color: "#c62828" }, z: 10,
            data: c.anomalies.map(function (a) { return [a.day, Number(a.amount)]; })
          });
          exact[n] = c.anomalies.map(function (a) { return a.amount; });
          notes[n] = c.anomalies.map(function (a) { return burnrateMoney(a.amount, currency) + " — " + a.note; });
          keys.push({ name: n, color: "#c62828", pin: true });
        }
        c.series.forEach(function (s, k) {
          var color = burnratePalette[k % burnratePalette.length];
          series.push({ name: s.name, type: "bar", stack: "spend", data: s.data.map(Number), emphasis: { focus: "series" },
            color: color });
          exact[s.name] = s.data;
          keys.push({ name: s.name, color: color });
        });
      }
      var axisText = { color: theme.muted };
      chart.setOption({
        animation: false,
        aria: { enabled: true },
        textStyle: { color: theme.text },
        tooltip: { trigger: "axis", axisPointer: { type: "shadow" }, confine: true, className: "chart-tip",
          formatter: exactTooltip(exact, totals, currency, notes) },
        // The legend is the list above the chart (burnrateLegend), which
        // wraps onto as many lines as it needs: every series stays in
        // view however many there are, and it never overlaps the axes.
        // This hidden one only keeps which series are shown.
        legend: { show: false, data: keys.map(function (k) { return k.name; }) },
        grid: { left: 8, right: 16, top: 24, bottom: 8, containLabel: true },
        xAxis: { type: "category", data: c.days, axisLabel: axisText, axisLine: { lineStyle: { color: theme.grid } } },
        yAxis: { type: "value", name: currency, nameTextStyle: { color: theme.muted, align: "left" },
          axisLabel: { color: theme.muted, formatter: burnrateAxis }, splitLine: { lineStyle: { color: theme.grid } } },
        series: series
      });
      burnrateLegend(document.getElementById("legend-" + c.currency), chart, keys);
      box.dataset.rendered = String((Number(box.dataset.rendered) || 0) + 1);
      box.dataset.legend = series.map(function (s) { return s.name; }).join("|");
    });
  }

  document.addEventListener("DOMContentLoaded", render);
  document.addEventListener("htmx:afterSettle", render);
  document.addEventListener("htmx:historyRestore", render);
  // Dark mode can change while the page is open.
  if (window.matchMedia) {
    var mq = window.matchMedia("(prefers-color-scheme: dark)");
    if (mq.addEventListener) mq.addEventListener("change", function () { render(); burnrateRenderCharts(); });
  }
  window.addEventListener("resize", function () {
    document.querySelectorAll("[data-testid=chart]").forEach(function (box) {
      var ch = window.echarts && echarts.getInstanceByDom(box);
      if (ch) ch.resize();
    });
  });
})();

// The Add a connection form: without JavaScript every provider's fields
// show; with it, only the selected provider's (data-kind-fields lists the
// kinds a fieldset serves). A hidden fieldset is disabled too, so that its
// fields are neither validated nor sent.
function burnrateKindFields(root) {
  (root || document).querySelectorAll("select[data-kind-select]").forEach(function (sel) {
    var form = sel.form;
    if (!form) return;
    form.querySelectorAll("fieldset[data-kind-fields]").forEach(function (fs) {
      var on = fs.dataset.kindFields.split(" ").indexOf(sel.value) >= 0;
      fs.hidden = !on;
      fs.disabled = !on;
    });
  });
}
document.addEventListener("DOMContentLoaded", function () { burnrateKindFields(document); });
document.addEventListener("htmx:afterSettle", function (evt) { burnrateKindFields(evt.target); });
document.addEventListener("change", function (evt) {
  if (evt.target.matches && evt.target.matches("select[data-kind-select]")) burnrateKindFields(evt.target.form);
});
