// tumble lab: controls (mirrored in the page URL) -> POST /api/simulate -> plotly figures
// (laid out by the figure spec of GET /api/figure), a momentum sphere and a 3-D view on
// canvases, all at one time cursor.
// No external code besides plotly.js, which the server ships (see server.plotly_js_path).
//
// The page's plain scripts (index.html loads them deferred, in this order; no build step):
//   lab-state.js     this one: the state shared by all (window.tumbleLab), the settings and
//                    the page address that mirrors them, the request body
//   lab-requests.js  the requests to the server and the notice while it compiles
//   lab-controls.js  the sliders, number boxes and custom body; a change asks again
//   lab-presets.js   the preset menu
//   lab-methods.js   the method list and its groups
//   lab-plots.js     the plotly figures, their legend and cursor, the scores, error vs cost
//   lab-view3d.js    the 3-D view of the body (canvas) and the 3-D geometry of both canvases
//   lab-sphere.js    the momentum sphere (canvas)
//   lab-cursor.js    the time cursor: playing, the scrubber, the animation frames
//   lab-download.js  the CSV and JSON downloads
//   lab-main.js      start-up: loads what the page lists, builds it, asks the first answer
// Each script adds what the others use to window.tumbleLabParts under its name (parts.plots,
// ...). A script takes those of the scripts before it when it loads (const { $ } =
// parts.state), and looks up those of the scripts after it when it calls them
// (parts.view3d.fillViewSelect()): the scripts call each other both ways, and nothing is
// called before lab-main.js, the last, starts the page.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);

  const DEFAULTS = { min_j: 0.5, median_j: 0.5, energy: 0.4, steps_per_rotation: 64, rotations: 20 };

  // State shared with the browser tests (window.tumbleLab).
  const lab = {
    methods: [],          // from /api/methods, and compositions the address names (/api/methods/{name})
    groups: [],           // the method list's groups, from /api/groups
    presets: [],          // from /api/presets
    spec: null,           // the figure spec, from /api/figure
    info: {},             // name -> method object
    color: {},            // name -> colour (from the spec)
    dash: {},             // name -> line style (from the spec)
    state: null,          // every setting; the URL's query string mirrors it
    data: null,           // last /api/simulate answer
    compiling: null,      // what the view waits for (a 202 answer, or the start-up status), else null
    compilingSeen: 0,     // such notices shown (tests wait on it)
    request: null,        // the body that produced `data`
    completed: 0,         // answered requests (tests wait on it)
    failed: 0,
    frames: 0,            // 3-D frames drawn
    cursor: 0,            // simulated time shown by the cursor, the 3-D view and the sphere
    playing: true,
    firstPlotAt: null,    // performance.now() when the first plots were drawn
    changedAt: null,      // performance.now() of the last control change
    drawnAt: null,        // performance.now() when the answer to it was drawn
  };
  window.tumbleLab = lab;

  // plotly.js is deferred after the lab's scripts, so that the first requests are in flight
  // while it is parsed (most of the time to the first plot); drawing waits for it.
  const plotlyReady = new Promise((resolve) => {
    if (window.Plotly) resolve();
    else $("plotly-js").addEventListener("load", resolve, { once: true });
  });

  // The value of a custom property of the page's style sheet (lab.css): its colours.
  const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

  // The record shown at time `time`: the last one at or before it (`t`: the records' times).
  function recordAt(t, time) {
    let lo = 0;
    let hi = t.length - 1;
    if (time >= t[hi]) return hi;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (t[mid] <= time) lo = mid; else hi = mid;
    }
    return lo;
  }

  // The methods ticked when the address names none: the server's first view (the five of
  // the article's toy), which it also compiles first.
  const shownAtStart = () => lab.methods.filter((m) => m.shown_at_start).map((m) => m.name);

  const NUMBERS = ["min_j", "median_j", "energy", "steps_per_rotation", "rotations"];

  function parseTriple(text) {
    if (!text) return null;
    const v = text.split(",").map(Number);
    return v.length === 3 && v.every(Number.isFinite) ? v : null;
  }

  function stateFromURL() {
    const q = new URLSearchParams(location.search);
    const s = Object.assign({}, DEFAULTS, { inv_inertia: null, omega_body: null, torque: null, view: "jolt" });
    for (const k of NUMBERS) {
      if (!q.has(k)) continue;
      const v = Number(q.get(k));
      if (Number.isFinite(v)) s[k] = v;
    }
    const names = lab.methods.map((m) => m.name).filter((m) => m !== lab.spec.reference.method);
    s.methods = (q.has("methods") ? q.get("methods").split(",") : shownAtStart())
      .filter((m) => names.includes(m));
    if (q.has("view") && names.includes(q.get("view"))) s.view = q.get("view");
    s.inv_inertia = parseTriple(q.get("inv_inertia"));
    s.omega_body = parseTriple(q.get("omega_body"));
    if (!s.inv_inertia || !s.omega_body) s.inv_inertia = s.omega_body = null;
    // A torque scenario sets its own body: it replaces the sliders and a custom body.
    const torques = lab.presets.map((p) => p.torque).filter(Boolean);
    if (torques.includes(q.get("torque"))) {
      s.torque = q.get("torque");
      s.inv_inertia = s.omega_body = null;
    }
    return s;
  }

  function writeURL() {
    const s = lab.state;
    const q = new URLSearchParams();
    if (s.torque) {
      q.set("torque", s.torque);
    } else if (s.inv_inertia) {
      q.set("inv_inertia", s.inv_inertia.join(","));
      q.set("omega_body", s.omega_body.join(","));
    } else {
      for (const k of ["min_j", "median_j", "energy"]) q.set(k, String(s[k]));
    }
    q.set("steps_per_rotation", String(s.steps_per_rotation));
    q.set("rotations", String(s.rotations));
    q.set("methods", s.methods.join(","));
    q.set("view", s.view);
    // Commas and colons need no escape in a query; kept plain, "splitting:suzuki4,rk4" reads.
    const url = `${location.pathname}?${q.toString().replace(/%2C/g, ",").replace(/%3A/g, ":")}`;
    if (url !== location.pathname + location.search) history.replaceState(null, "", url);
  }

  // The request body for the state: only the ticked methods (the reference always runs).
  function requestBody() {
    const s = lab.state;
    const body = s.torque ? { torque: s.torque }
      : s.inv_inertia ? { inv_inertia: s.inv_inertia, omega_body: s.omega_body }
      : { min_j: s.min_j, median_j: s.median_j, energy: s.energy };
    body.steps_per_rotation = s.steps_per_rotation;
    body.rotations = s.rotations;
    // With nothing ticked only the reference runs; a torque scenario's reference is an ODE
    // solve, not a method, so there it has to be asked for with a method (null: nothing).
    if (s.methods.length) body.methods = s.methods.slice();
    else if (s.torque) return null;
    else body.methods = [lab.spec.reference.method];
    return body;
  }

  const parts = { state: { $, css, recordAt, plotlyReady, shownAtStart, stateFromURL, writeURL, requestBody } };
  window.tumbleLabParts = parts;
})();
