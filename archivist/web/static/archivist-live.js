// Search as you type: while the words change, the search page asks the server for the results
// of the words typed so far (the page's own URL with live=1, the last word a prefix) and puts
// them in place of the page's; the address bar follows, so the URL is still the view. Enter
// submits the form as without this script, which the page never needs.
(() => {
  "use strict";
  const WAIT_MS = 180; // after the last keystroke
  const form = document.querySelector("form.archivist-search-form");
  const SHORTEST = Number(form && form.dataset.shortest) || 1; // characters: the server's shortest prefix
  const box = document.getElementById("query");
  const region = document.getElementById("archivist-live");
  if (!form || !box || !region || !window.fetch || !window.AbortController || !window.history.replaceState) {
    return;
  }
  let timer = null;
  let asking = null; // the request in flight: aborted by the next one
  let asked = 0; // the number of the newest request: an older answer never replaces a newer one
  let shown = box.value.trim();

  function formState() {
    const state = new URLSearchParams();
    for (const [key, value] of new FormData(form)) {
      if (typeof value === "string" && value.trim()) {
        state.append(key, value);
      }
    }
    return state;
  }

  async function ask() {
    const words = box.value.trim();
    if (words === shown || words.length < SHORTEST) {
      return;
    }
    shown = words;
    const state = formState();
    const pageUrl = form.action + "?" + state.toString();
    state.append("live", "1");
    const number = ++asked;
    if (asking) {
      asking.abort();
    }
    asking = new AbortController();
    region.classList.add("archivist-live-asking");
    try {
      const response = await fetch(form.action + "?" + state.toString(), {
        signal: asking.signal,
        credentials: "same-origin",
        headers: { Accept: "text/html" },
      });
      const html = await response.text();
      if (number !== asked) {
        return;
      }
      if (response.ok || response.status === 400) {
        region.innerHTML = html;
        window.history.replaceState(window.history.state, "", pageUrl);
        document.title = words + " · " + document.title.replace(/^.*?(?=Search · )/, "");
      }
    } catch (error) {
      if (error.name !== "AbortError") {
        shown = null; // asked again at the next keystroke
      }
    } finally {
      if (number === asked) {
        region.classList.remove("archivist-live-asking");
      }
    }
  }

  box.addEventListener("input", () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(ask, WAIT_MS);
  });
  form.addEventListener("submit", () => {
    window.clearTimeout(timer);
    asked += 1;
    if (asking) {
      asking.abort();
    }
  });
})();
