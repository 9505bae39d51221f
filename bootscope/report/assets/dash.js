// bootscope serve: the triage form. The token goes in a header (never a cookie, never stored), the
// answer is shown with textContent only.
"use strict";
(function () {
  const form = document.getElementById("triage");
  if (!form) return;
  const result = document.getElementById("triage-result");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    result.textContent = "…";
    try {
      const answer = await fetch(`/api/alerts/${encodeURIComponent(form.dataset.alert)}/triage`, {
        method: "POST",
        credentials: "omit",
        headers: { "Content-Type": "application/json", "X-Bootscope-Token": String(data.get("token") || "") },
        body: JSON.stringify({ state: data.get("state"), note: data.get("note"), who: data.get("who") }),
      });
      const body = await answer.json().catch(() => ({}));
      if (!answer.ok) {
        result.textContent = `refused (${answer.status}): ${body.error || answer.statusText}`;
        return;
      }
      result.textContent = `now ${body.state}`;
      const state = document.getElementById("alert-state");
      if (state) state.textContent = body.state;
    } catch (error) {
      result.textContent = `failed: ${error}`;
    }
  });
})();
