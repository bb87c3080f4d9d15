// Shows a toast when an htmx request fails (4xx other than 422, and 5xx). The sentence comes from
// the page (body[data-error-toast]) so it can be translated with the templates.
document.addEventListener("htmx:responseError", function (evt) {
  var toast = document.getElementById("toast");
  if (!toast) return;
  var text = document.body.getAttribute("data-error-toast") || "";
  var status = evt.detail && evt.detail.xhr ? evt.detail.xhr.status : "";
  toast.textContent = text + (status ? " (" + status + ")" : "");
  toast.hidden = false;
  clearTimeout(toast._timer);
  toast._timer = setTimeout(function () { toast.hidden = true; }, 6000);
});
document.addEventListener("htmx:sendError", function () {
  var toast = document.getElementById("toast");
  if (!toast) return;
  toast.textContent = document.body.getAttribute("data-error-toast") || "";
  toast.hidden = false;
});
