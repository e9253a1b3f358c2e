// tumble lab: the requests to the server. POST /api/simulate for the settings (a newer one
// replaces the answer still awaited), asking again while the server compiles what they
// need, with the notice that says so; the status line under the controls.
"use strict";

(function (lab, parts) {
  const { $, plotlyReady, requestBody } = parts.state;

  const POLL_MS = 500;       // while the server compiles what a request needs, ask again this often

  function setStatus(text, error) {
    const el = $("status");
    el.textContent = text;
    el.classList.toggle("error", Boolean(error));
  }

  let inFlight = null;  // the AbortController of the request whose answer the page waits for

  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  // While the server compiles what a view needs it answers 202 with what it waits for
  // (`message`: "compiling jolt (3 of 6)", `done` of `total`): the notice, the status line
  // and the empty plots say so until the answer comes. Without `total` (the server is
  // still loading its API) the progress bar is indeterminate.
  function showCompiling(answer) {
    lab.compiling = answer;
    lab.compilingSeen += 1;
    const text = `${answer.message}: the plots follow when it is ready`;
    $("compile-text").textContent = text;
    const bar = $("compile-progress");
    if (answer.total) {
      bar.max = answer.total;
      bar.value = answer.done;
    } else {
      bar.removeAttribute("value");
    }
    $("compile-notice").hidden = false;
    setStatus(text);
    // The figures of the view (not error versus cost, which has its own button and line).
    for (const fig of lab.spec ? lab.spec.figures : []) $(`plot-${fig.id}`).dataset.placeholder = text;
  }

  function hideCompiling() {
    lab.compiling = null;
    $("compile-notice").hidden = true;
  }

  // POST `body` to `url`, asking again every POLL_MS while the server answers 202 (still
  // compiling; `onWait` gets that answer). Returns [response, answer, time it was asked] of
  // the final answer, or null when `current()` turned false meanwhile (a newer request
  // replaced this one).
  async function postWhenCompiled(url, body, signal, current, onWait) {
    for (;;) {
      const asked = performance.now();
      const res = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json", Prefer: "respond-async" },
        body: JSON.stringify(body),
        signal,
      });
      const answer = await res.json();
      if (!current()) return null;
      if (res.status !== 202) return [res, answer, asked];
      onWait(answer);
      await sleep(POLL_MS);
      if (!current()) return null;
    }
  }

  async function request() {
    if (inFlight) inFlight.abort();  // a newer setting replaces the answer we were waiting for
    const controller = new AbortController();
    inFlight = controller;
    const body = requestBody();
    if (body === null) {
      inFlight = null;
      setStatus("nothing to compute: tick a method (a torque scenario has no exact solution to show alone)", true);
      return;
    }
    setStatus("computing…");
    const current = () => controller === inFlight;
    try {
      const final = await postWhenCompiled("/api/simulate", body, controller.signal, current, showCompiling);
      if (final === null) return;  // superseded while compiling or while the body arrived
      const [res, answer, t0] = final;
      hideCompiling();
      await plotlyReady;
      if (!current()) return;  // superseded while plotly arrived
      if (!res.ok) {
        lab.failed += 1;
        setStatus(`${res.status}: ${answer.message || res.statusText}`, true);
        return;
      }
      const server = res.headers.get("Server-Timing") || "";
      const ms = /dur=([\d.]+)/.exec(server);
      lab.request = body;
      parts.plots.render(answer);
      lab.drawnAt = performance.now();
      if (lab.firstPlotAt === null) lab.firstPlotAt = lab.drawnAt;
      lab.completed += 1;
      const c = answer.case;
      setStatus(
        `${c.steps} steps of dt = ${c.dt.toPrecision(3)} per method, ${c.records} records; ` +
        `server ${ms ? ms[1] : "?"} ms, round trip and drawing ${Math.round(performance.now() - t0)} ms`
      );
      const note = $("decimation");
      note.hidden = c.every === 1;
      note.textContent = c.every === 1 ? "" :
        `Showing one record every ${c.every} steps (${c.records} of ${c.steps + 1}): wiggles ` +
        "faster than that are not drawn, and the orbits may show star-like aliasing that is " +
        "not the method's behaviour. Fewer steps per rotation or rotations draw every step.";
    } catch (err) {
      if (err.name === "AbortError") return;
      hideCompiling();
      lab.failed += 1;
      setStatus(`request failed: ${err.message}`, true);
    } finally {
      if (inFlight === controller) inFlight = null;
    }
  }

  // On a first run the server loads its API for about a minute (importing tumble compiles
  // kernels); GET /api/status answers meanwhile, and the notice says so.
  async function serverLoaded() {
    for (;;) {
      const status = await (await fetch("/api/status")).json();
      if (status.state !== "starting") return;
      showCompiling({ message: status.message });
      await sleep(POLL_MS);
    }
  }

  parts.requests = { setStatus, hideCompiling, postWhenCompiled, request, serverLoaded };
})(window.tumbleLab, window.tumbleLabParts);
