// The console's one script (no inline script is allowed by its Content-Security-Policy).
// A live page (data-refresh on its body) gets a "Live" switch: while on, the page reloads
// every few seconds, unless someone is typing in one of its forms. It never builds
// markup from data: the server renders and escapes everything.
(function () {
  "use strict";
  var every = Number(document.body.dataset.refresh || 0);
  var header = document.querySelector("header");
  if (!every || !header) return;
  var key = "glove-console-live";
  var typing = false;
  var label = document.createElement("label");
  var box = document.createElement("input");
  box.type = "checkbox";
  box.id = "live";
  box.checked = sessionStorage.getItem(key) === "on";
  label.appendChild(box);
  label.appendChild(document.createTextNode(" Live"));
  label.className = "live";
  header.appendChild(label);
  box.addEventListener("change", function () {
    sessionStorage.setItem(key, box.checked ? "on" : "off");
  });
  document.addEventListener("input", function (event) {
    if (event.target !== box) typing = true;
  });
  setInterval(function () {
    if (box.checked && !typing && !document.hidden) location.reload();
  }, every * 1000);
})();
