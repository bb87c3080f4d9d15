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

// Date and time pickers show dates as the browser's own locale does (often mm/dd/yyyy), while the
// pages print them in the page's language. Beside each picker, echo the chosen value the way the
// page writes dates (the browser's Intl, CLDR data like the server's ICU4X), so the two agree.
(function () {
  function locale() {
    var lang = document.documentElement.lang || "en";
    // The pages' English is British: day before month, 24-hour clock.
    return lang === "en" ? "en-GB" : lang;
  }
  function text(input) {
    var v = input.value;
    var m = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}))?/.exec(v);
    if (!m) return "";
    // The value is a wall-clock time with no zone: format it as UTC so that nothing shifts.
    var d = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +(m[4] || 0), +(m[5] || 0)));
    var opts = { timeZone: "UTC", weekday: "short", year: "numeric", month: "short", day: "numeric" };
    if (m[4] !== undefined) {
      opts.hour = "2-digit";
      opts.minute = "2-digit";
      opts.hourCycle = "h23";
    }
    try {
      return new Intl.DateTimeFormat(locale(), opts).format(d);
    } catch (e) {
      return "";
    }
  }
  function echo(input) {
    var out = input.nextElementSibling;
    if (!out || !out.classList.contains("date-echo")) {
      out = document.createElement("output");
      out.className = "date-echo";
      out.setAttribute("aria-live", "polite");
      input.insertAdjacentElement("afterend", out);
    }
    out.textContent = text(input);
  }
  function scan(root) {
    (root || document).querySelectorAll("input[type=date], input[type=datetime-local]").forEach(echo);
  }
  document.addEventListener("input", function (e) {
    var t = e.target;
    if (t && t.matches && t.matches("input[type=date], input[type=datetime-local]")) echo(t);
  });
  document.addEventListener("change", function (e) {
    var t = e.target;
    if (t && t.matches && t.matches("input[type=date], input[type=datetime-local]")) echo(t);
  });
  document.addEventListener("DOMContentLoaded", function () { scan(document); });
  document.addEventListener("htmx:afterSwap", function (e) { scan(e.target); });
})();

// A form answered with the whole page (a preview, an error, a copy) comes back scrolled to the
// top; the page marks what answers the form with data-answer, and it is brought into view (the
// first field marked invalid inside it, if any, gets the focus).
document.addEventListener("DOMContentLoaded", function () {
  // On a phone the tabs scroll sideways: the current one is brought into the strip's view.
  var tab = document.querySelector("nav.subnav a[aria-current=page]");
  if (tab && tab.parentElement && tab.parentElement.scrollWidth > tab.parentElement.clientWidth) {
    tab.parentElement.scrollLeft = tab.offsetLeft - tab.parentElement.clientWidth / 3;
  }
  var answer = document.querySelector("[data-answer]");
  if (!answer) return;
  answer.scrollIntoView({ block: "start" });
  var bad = answer.querySelector("[aria-invalid=true]");
  if (bad && bad.focus) bad.focus({ preventScroll: true });
});

// A secret shown once (an invitation link, a new password) is selected whole on a click, ready to
// copy. Here rather than in an onclick: the site's CSP runs no inline script.
document.addEventListener("click", function (e) {
  var t = e.target;
  if (t && t.matches && t.matches("input.copy-me")) t.select();
});

// The language switcher goes back to the page as it is now: htmx may have pushed another address
// (a page of a list, a sort, a filter) since the server wrote the form's `next`.
document.addEventListener("submit", function (e) {
  var form = e.target;
  if (!form.classList || !form.classList.contains("lang-switch")) return;
  var next = form.querySelector("input[name=next]");
  if (next) next.value = location.pathname + location.search;
});

// On a phone the sections scroll in one line: bring the current one into view.
document.addEventListener("DOMContentLoaded", function () {
  var nav = document.querySelector(".mainnav");
  var here = nav && nav.querySelector("[aria-current=page]");
  if (here && nav.scrollWidth > nav.clientWidth) {
    var left = here.getBoundingClientRect().left - nav.getBoundingClientRect().left + nav.scrollLeft;
    nav.scrollLeft = left - (nav.clientWidth - here.offsetWidth) / 2;
  }
});
