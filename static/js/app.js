// Burnrate's small client-side glue. Everything works without it; it adds
// htmx's CSRF header and renders charts from JSON embedded in the page.
document.addEventListener("htmx:configRequest", function (evt) {
  var meta = document.querySelector('meta[name="csrf-token"]');
  if (meta) evt.detail.headers["X-CSRF-Token"] = meta.content;
});

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
