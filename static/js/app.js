// Burnrate's small client-side glue. Everything works without it; it adds
// htmx's CSRF header and renders charts from JSON embedded in the page.
document.addEventListener("htmx:configRequest", function (evt) {
  var meta = document.querySelector('meta[name="csrf-token"]');
  if (meta) evt.detail.headers["X-CSRF-Token"] = meta.content;
});
