// tumble lab: controls (mirrored in the page URL) -> POST /api/simulate -> plotly figures
// (laid out by the figure spec of GET /api/figure), a momentum sphere and a 3-D view on
// canvases, all at one time cursor.
// No external code besides plotly.js, which the server ships (see server.plotly_js_path).
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);

  const DEFAULTS = { min_j: 0.5, median_j: 0.5, energy: 0.4, steps_per_rotation: 64, rotations: 20 };
  const DEBOUNCE_MS = 60;
  const POLL_MS = 500;       // while the server compiles what a request needs, ask again this often
  const MAX_STEPS_PER_ROTATION = 100000;
  const MAX_ROTATIONS = 100000;
  const CURSOR_MS = 200;     // plot cursor refresh interval while playing
  const TRAIL = 0.6;         // trail length of the 3-D view, in rotation periods

  // State shared with the browser tests (window.tumbleLab).
  const lab = {
    methods: [],          // from /api/methods
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

  // plotly.js is deferred after this script, so that the first requests are in flight while
  // it is parsed (most of the time to the first plot); drawing waits for it.
  const plotlyReady = new Promise((resolve) => {
    if (window.Plotly) resolve();
    else $("plotly-js").addEventListener("load", resolve, { once: true });
  });

  // ------------------------------------------------------------------ state and URL

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
    const url = `${location.pathname}?${q.toString().replace(/%2C/g, ",")}`;
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

  // ------------------------------------------------------------------ controls

  function showState() {
    const s = lab.state;
    $("min-j").value = s.min_j;
    $("median-j").value = s.median_j;
    $("energy").value = s.energy;
    $("steps-per-rotation").value = s.steps_per_rotation;
    $("rotations").value = s.rotations;
    const custom = Boolean(s.inv_inertia);
    $("custom-on").checked = custom;
    $("custom-on").disabled = false;
    if (custom) {
      $("custom").open = true;
      ["x", "y", "z"].forEach((c, i) => {
        $(`inv-${c}`).value = s.inv_inertia[i];
        $(`omega-${c}`).value = s.omega_body[i];
      });
    }
    for (const id of ["min-j", "median-j", "energy"]) $(id).disabled = custom || Boolean(s.torque);
    for (const box of document.querySelectorAll("#method-list input")) {
      box.checked = s.methods.includes(box.value);
    }
    showReadouts();
  }

  function showReadouts() {
    const s = lab.state;
    $("min-j-value").textContent = s.min_j.toFixed(3).replace(/0$/, "");
    $("median-j-value").textContent = s.median_j.toFixed(2);
    $("energy-value").textContent = s.energy.toFixed(2);
    if (s.torque) {
      $("inertia-readout").textContent =
        `torque scenario ${s.torque}: its body and initial state replace the sliders (pick ` +
        "another preset to leave it); steps per rotation and rotations still apply";
      return;
    }
    if (s.inv_inertia) {
      $("inertia-readout").textContent =
        `custom body: inverse moments J = (${s.inv_inertia.join(", ")}), ` +
        `initial body ω = (${s.omega_body.join(", ")})`;
      return;
    }
    const J = [s.min_j, s.min_j + s.median_j, s.min_j + 1].map((x) => x.toFixed(3));
    $("inertia-readout").textContent =
      `inverse moments J = (${J.join(", ")}); initial energy factor J_L = ` +
      `${(s.min_j + s.energy).toFixed(3)}` +
      (Math.abs(s.energy - s.median_j) < 0.03 ? " (near the separatrix: Dzhanibekov flips)" : "");
  }

  function setStatus(text, error) {
    const el = $("status");
    el.textContent = text;
    el.classList.toggle("error", Boolean(error));
  }

  let timer = null;
  let inFlight = null;

  // A setting changed: URL now, request after a short pause (slider drags come in bursts).
  function changed() {
    lab.changedAt = performance.now();
    showReadouts();
    writeURL();
    clearTimeout(timer);
    timer = setTimeout(request, DEBOUNCE_MS);
  }

  function onSlider(id, key) {
    $(id).addEventListener("input", () => {
      lab.state[key] = parseFloat($(id).value);
      $("preset").value = "";
      changed();
    });
  }

  // Number boxes commit on change (Enter or leaving the box); a bad value is marked and
  // explained next to the box, and nothing is computed until it is fixed.
  function checkNumber(id, key, integer, lo, hi) {
    const el = $(id);
    const text = el.value.trim();
    const v = Number(text);
    let problem = null;
    if (text === "" || !Number.isFinite(v)) problem = `expected a number, got "${text}"`;
    else if (integer && !Number.isInteger(v)) problem = `expected a whole number, got ${text}`;
    else if (v < lo || v > hi) problem = `expected a value from ${lo} to ${hi}, got ${text}`;
    el.setAttribute("aria-invalid", problem ? "true" : "false");
    $(`${id}-error`).textContent = problem ? `${key.replace(/_/g, " ")}: ${problem}` : "";
    return problem ? null : v;
  }

  function onNumber(id, key, integer, lo, hi) {
    $(id).addEventListener("change", () => {
      const v = checkNumber(id, key, integer, lo, hi);
      if (v === null) {
        setStatus(`not computed: fix ${key.replace(/_/g, " ")}`, true);
        return;
      }
      lab.state[key] = v;
      changed();
    });
  }

  function onCustom() {
    const read = (prefix) => ["x", "y", "z"].map((c) => Number($(`${prefix}-${c}`).value));
    const apply = () => {
      const err = $("custom-error");
      if (!$("custom-on").checked) {
        err.textContent = "";
        lab.state.inv_inertia = lab.state.omega_body = null;
      } else {
        const J = read("inv");
        const w = read("omega");
        const bad = !J.concat(w).every(Number.isFinite) || J.some((x) => x < 0) || !J.some((x) => x > 0);
        err.textContent = bad ? "custom body: expected inverse moments ≥ 0 (one > 0) and finite ω" : "";
        if (bad) return;
        lab.state.inv_inertia = J;
        lab.state.omega_body = w;
        lab.state.torque = null;
        $("preset").value = "";
        $("preset-note").textContent = "";
      }
      for (const id of ["min-j", "median-j", "energy"]) $(id).disabled = $("custom-on").checked;
      changed();
    };
    $("custom-on").addEventListener("change", apply);
    for (const prefix of ["inv", "omega"]) {
      for (const c of ["x", "y", "z"]) $(`${prefix}-${c}`).addEventListener("change", apply);
    }
  }

  function applyPreset(id) {
    const p = lab.presets.find((x) => x.id === id);
    const s = lab.state;
    if (!p) {
      // "(custom)" after a torque scenario: back to the free body of the sliders.
      if (!s.torque) return;
      s.torque = null;
      $("preset-note").textContent = "";
      showState();
      changed();
      return;
    }
    s.torque = p.torque || null;
    if (p.torque) {
      s.inv_inertia = s.omega_body = null;
    } else if (p.params.inv_inertia) {
      s.inv_inertia = p.params.inv_inertia.slice();
      s.omega_body = p.params.omega_body.slice();
    } else {
      s.inv_inertia = s.omega_body = null;
      Object.assign(s, p.params);
    }
    $("preset-note").textContent = p.note;
    showState();
    changed();
  }

  function buildMethodList() {
    const box = $("method-list");
    for (const m of lab.methods) {
      if (m.name === lab.spec.reference.method) continue;
      const label = document.createElement("label");
      label.title = m.description;
      const input = document.createElement("input");
      input.type = "checkbox";
      input.value = m.name;
      input.addEventListener("change", () => setShown(m.name, input.checked));
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.style.setProperty("--swatch", lab.color[m.name]);
      if (lab.dash[m.name] !== "solid") swatch.style.borderTopStyle = "dotted";
      label.append(input, swatch, document.createTextNode(m.name));
      box.appendChild(label);
    }
  }

  // Tick or untick a method (checkbox or legend): hidden methods are not computed, so
  // showing one again asks the server for it.
  function setShown(name, shown) {
    const s = lab.state;
    const order = lab.methods.map((m) => m.name);
    const set = new Set(s.methods);
    if (shown) set.add(name); else set.delete(name);
    s.methods = order.filter((m) => set.has(m));
    showState();
    fillViewSelect();
    changed();
  }

  function fillViewSelect() {
    const select = $("anim-method");
    const s = lab.state;
    const options = s.methods.length ? s.methods : [];
    if (!options.includes(s.view) && options.length) s.view = options.includes("jolt") ? "jolt" : options[0];
    select.innerHTML = "";
    for (const name of options) {
      const opt = document.createElement("option");
      opt.value = name;
      opt.textContent = name;
      select.appendChild(opt);
    }
    select.value = s.view;
  }

  // ------------------------------------------------------------------ requests

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
      render(answer);
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

  // ------------------------------------------------------------------ figures
  // Drawn from the figure spec of GET /api/figure (tumble.figures): each spec figure is one
  // plotly figure holding its panels, laid out on the figure's part of the spec's grid.

  const GAP = 0.1;  // space between panels, as a fraction of the figure

  const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

  // "L_x (min J)" -> "L<sub>x</sub> (min J)": plotly labels take this much HTML.
  const label = (text) => String(text).replace(/_([A-Za-z0-9]+)/g, "<sub>$1</sub>");

  function theme() {
    return {
      paper_bgcolor: css("--panel"),
      plot_bgcolor: css("--panel"),
      font: { color: css("--fg") },
    };
  }

  function axisTheme() {
    return {
      gridcolor: css("--grid"),
      zerolinecolor: css("--line"),
      linecolor: css("--line"),
      exponentformat: "power",   // 10⁻⁶, never SI prefixes (6f, 100μ)
      showexponent: "all",
    };
  }

  function lineStyle(group) {
    const ref = lab.spec.reference;
    if (group === ref.label) return { color: css("--reference"), width: 2, dash: ref.dash ? "dash" : "solid" };
    return { color: lab.color[group], width: 1.6, dash: lab.dash[group] || "solid" };
  }

  // The reference's legend entry says what it is: the exact solution or an ODE solve.
  function shownName(group) {
    const ref = lab.data && lab.data.reference;
    return group === lab.spec.reference.label && ref ? ref.label : group;
  }

  function line(group, x, y, extra) {
    return Object.assign({
      type: "scatter",
      mode: "lines",
      x: x,
      y: y,
      name: shownName(group),
      legendgroup: group,
      meta: group,
      showlegend: false,
      hoverinfo: "name+x+y",
      line: lineStyle(group),
    }, extra || {});
  }

  // What a panel's x or y names in a run: the times, a trace, or a component of one.
  function series(run, t, ref) {
    if (ref === lab.spec.time) return t;
    const [name, component] = ref.split(".");
    const values = run[name];
    return values === undefined || !component ? values : values[component];
  }

  // The runs drawn: the reference first, then every computed method but the reference's.
  function curves(d) {
    const ref = lab.spec.reference;
    return [[ref.label, d.exact]].concat(
      d.methods.filter((m) => m.name !== ref.method).map((m) => [m.name, m]));
  }

  // [start, end] of cells [from, from + span) of [lo, hi) as a fraction; `flip`: row 0 on top.
  function domain(from, span, lo, hi, flip) {
    const n = hi - lo;
    let a = (from - lo) / n + (from > lo ? GAP / 2 : 0);
    let b = (from + span - lo) / n - (from + span < hi ? GAP / 2 : 0);
    if (flip) [a, b] = [1 - b, 1 - a];
    return [a, b];
  }

  // One plotly axis per distinct (quantity, cells): panels that show the same x over the
  // same columns share that x axis (its ticks under the lowest), likewise for y and rows.
  function axes(panels) {
    const rows = [Math.min(...panels.map((p) => p.row)), Math.max(...panels.map((p) => p.row + p.rowspan))];
    const cols = [Math.min(...panels.map((p) => p.col)), Math.max(...panels.map((p) => p.col + p.colspan))];
    const xs = new Map();
    const ys = new Map();
    const get = (map, letter, key, make) => {
      if (!map.has(key)) map.set(key, Object.assign({ id: letter + (map.size ? map.size + 1 : ""), panels: [] }, make()));
      return map.get(key);
    };
    const placed = panels.map((p) => {
      const x = get(xs, "x", `${p.x}|${p.col}|${p.colspan}`, () => ({ domain: domain(p.col, p.colspan, cols[0], cols[1], false) }));
      const y = get(ys, "y", `${p.y}|${p.row}|${p.rowspan}`, () => ({ domain: domain(p.row, p.rowspan, rows[0], rows[1], true) }));
      x.panels.push(p);
      y.panels.push(p);
      return { panel: p, x, y };
    });
    return { placed, xs: [...xs.values()], ys: [...ys.values()] };
  }

  const clamp = (v, r) => (r ? Math.min(Math.max(v, r[0]), r[1]) : v);

  // A cross where a method blew up: its last drawn record, pulled into a fixed axis range
  // (the curve itself leaves the panel there).
  function blowUpMarker(name, run, d, placedPanel) {
    const { panel, x, y } = placedPanel;
    const k = run.blew_up.records - 1;
    if (k < 0) return null;
    const px = series(run, d.t, panel.x);
    const py = series(run, d.t, panel.y);
    if (!px || !py || px[k] === null || py[k] === null) return null;
    const r = d.ranges[panel.id];
    return {
      type: "scatter", mode: "markers", xaxis: x.id, yaxis: y.id, meta: name, showlegend: false,
      x: [clamp(px[k], r.x)], y: [clamp(py[k], r.y)],
      marker: { symbol: "x-thin-open", size: 14, line: { width: 3, color: lab.color[name] }, color: lab.color[name] },
      hovertemplate: `${name} blew up at t = ${run.blew_up.t.toPrecision(4)}<extra></extra>`,
      name: `${name} blew up`,
    };
  }

  function figureOf(fig, d, withLegend) {
    const panels = lab.spec.panels.filter((p) => p.figure === fig.id);
    const { placed, xs, ys } = axes(panels);
    const traces = [];
    const computed = new Set(d.methods.map((m) => m.name));
    for (const [group, run] of curves(d)) {
      placed.forEach((pp, k) => {
        const px = series(run, d.t, pp.panel.x);
        const py = series(run, d.t, pp.panel.y);
        if (px === undefined || py === undefined) return;  // the reference has no attitude error
        traces.push(line(group, px, py, { xaxis: pp.x.id, yaxis: pp.y.id, showlegend: withLegend && k === 0 }));
        if (run.blew_up) {
          const m = blowUpMarker(group, run, d, pp);
          if (m) traces.push(m);
        }
      });
    }
    if (withLegend) {
      // Unticked methods stay in the legend (greyed out): a click computes and shows them.
      for (const m of lab.methods) {
        if (m.name === lab.spec.reference.method || computed.has(m.name)) continue;
        traces.push(line(m.name, [null], [null], { visible: "legendonly", showlegend: true, hoverinfo: "skip" }));
      }
    }
    const title = panels.length === 1 ? { text: label(panels[0].title), font: { size: 13 } } : undefined;
    const layout = Object.assign(theme(), {
      title,
      margin: { l: 64, r: 15, t: withLegend ? 70 : title ? 30 : 20, b: 45 },
      showlegend: withLegend,
      legend: { orientation: "h", y: 1.01, yanchor: "bottom", x: 0, font: { size: 11 } },
      uirevision: fig.id,
      shapes: [],
    });
    for (const x of xs) {
      // Ticks and title under the lowest panel, range from the first panel that fixes one.
      const low = x.panels.reduce((a, b) => (b.row + b.rowspan > a.row + a.rowspan ? b : a));
      const ranged = x.panels.find((p) => d.ranges[p.id].x);
      layout[axisName(x.id)] = Object.assign(axisTheme(), {
        domain: x.domain,
        anchor: placed.find((q) => q.panel === low).y.id,
        title: { text: label(low.x_label), standoff: 2 },
        range: ranged ? d.ranges[ranged.id].x : undefined,
        autorange: !ranged,
        rangeslider: low.x === lab.spec.time ? { visible: true, thickness: 0.07 } : undefined,
      });
    }
    for (const y of ys) {
      const left = y.panels.reduce((a, b) => (b.col < a.col ? b : a));
      const ranged = y.panels.find((p) => d.ranges[p.id].y);
      const own = placed.find((q) => q.panel === left);
      layout[axisName(y.id)] = Object.assign(axisTheme(), {
        domain: y.domain,
        anchor: own.x.id,
        title: { text: label(left.y_label), standoff: 2 },
        type: left.log_y ? "log" : "linear",
        range: ranged ? d.ranges[ranged.id].y : undefined,
        autorange: !ranged,
        // Fixed ranges on both axes set the scale already (plotly would widen one to keep
        // the aspect of the panel's box).
        scaleanchor: left.equal_aspect && !(d.ranges[left.id].x && d.ranges[left.id].y) ? own.x.id : undefined,
      });
    }
    return { traces, layout, placed };
  }

  const axisName = (id) => id.replace(/^([xy])/, "$1axis");

  // plotly's configuration from the spec (no cloud button), resizing with the page.
  const plotConfig = () => Object.assign({ responsive: true }, lab.spec.plotly_config);

  // The page's <figure> for each spec figure, before the sphere.
  function buildFigures() {
    const before = $("sphere-figure");
    for (const fig of lab.spec.figures) {
      const el = document.createElement("figure");
      if (fig.wide) el.className = "wide";
      const plot = document.createElement("div");
      plot.id = `plot-${fig.id}`;
      plot.className = fig.wide ? "plot" : "plot square";
      plot.dataset.placeholder = "computing…";  // shown while the plot is empty (lab.css)
      const caption = document.createElement("figcaption");
      caption.textContent = fig.caption;
      el.append(plot, caption);
      for (const [when, text] of [["free", fig.note], ["forced", fig.forced_note]]) {
        if (!text) continue;
        const note = document.createElement("p");
        note.className = "note";
        note.dataset.when = when;
        note.hidden = when === "forced";
        note.textContent = text;
        el.append(note);
      }
      before.parentNode.insertBefore(el, before);
    }
  }

  const placedBy = {};  // figure id -> placed panels of the last render

  function render(d) {
    lab.data = d;
    // "What am I seeing": free motion, or motion under a torque against an ODE reference.
    for (const note of document.querySelectorAll("[data-when]")) {
      note.hidden = (note.dataset.when === "forced") !== Boolean(d.case.torque);
    }
    // On a phone the method list (with its line swatches) is the legend.
    const legend = window.matchMedia("(min-width: 601px)").matches;
    lab.spec.figures.forEach((fig, i) => {
      const f = figureOf(fig, d, legend && i === 0);
      placedBy[fig.id] = f.placed;
      Plotly.react($(`plot-${fig.id}`), f.traces, f.layout, plotConfig());
    });
    hookLegend();
    fillViewSelect();
    fillScores(d);
    const end = d.t[d.t.length - 1];
    if (lab.cursor > end) lab.cursor = end;
    moveCursor(true);
  }

  let legendHooked = false;
  // A single click on a legend entry acts once plotly's double-click delay has passed
  // without a second click. plotly reports both clicks of a double click as legend clicks
  // before the double click itself, and it counts the two clicks on the same legend
  // element: acting on the first click at once redrew the legend (a fast answer) between
  // the clicks, so the second counted as a new first click and the double click was lost.
  const DOUBLE_CLICK_MS = 300;  // plotly's default doubleClickDelay
  let pendingToggle = null;

  function cancelPendingToggle() {
    const had = pendingToggle !== null;
    clearTimeout(pendingToggle);
    pendingToggle = null;
    return had;
  }

  function hookLegend() {
    if (legendHooked) return;
    legendHooked = true;
    const gd = $(`plot-${lab.spec.figures[0].id}`);
    gd.on("plotly_legendclick", (ev) => {
      const group = ev.data[ev.curveNumber].meta;
      if (group === lab.spec.reference.label) return false;
      // The second click of a double click: the double click handler decides.
      if (cancelPendingToggle()) return false;
      pendingToggle = setTimeout(() => {
        pendingToggle = null;
        setShown(group, !lab.state.methods.includes(group));
      }, DOUBLE_CLICK_MS);
      return false;  // plotly would only toggle this figure; the new answer redraws them all
    });
    gd.on("plotly_legenddoubleclick", (ev) => {
      cancelPendingToggle();
      const group = ev.data[ev.curveNumber].meta;
      if (group === lab.spec.reference.label) return false;
      // Only this method (the exact reference always stays); again: the article's five.
      const only = lab.state.methods.length === 1 && lab.state.methods[0] === group;
      lab.state.methods = only ? shownAtStart() : [group];
      showState();
      fillViewSelect();
      changed();
      return false;
    });
  }

  const fmt = (x) => (x === null || x === undefined ? "–" : x === 0 ? "0" : x.toExponential(2));

  function fillScores(d) {
    const rows = d.methods.filter((m) => m.name !== lab.spec.reference.method || d.methods.length === 1).map((m) => {
      const s = m.scores;
      const info = lab.info[m.name] || {};
      const order = info.order === null ? "exact" : info.order;
      const blew = m.blew_up ? m.blew_up.t : s.diverged_at;
      const diverged = blew === null || blew === undefined ? "" : ` (blew up at t = ${blew.toFixed(1)})`;
      return `<tr title="${info.description || ""}">` +
        `<td class="swatch" style="--swatch:${lab.color[m.name]}">${m.name}</td>` +
        `<td>${order}</td><td>${(info.conserves || []).join(", ")}</td>` +
        `<td>${fmt(s.energy_error)}</td><td>${fmt(s.momentum_drift)}</td>` +
        `<td>${fmt(s.direction_drift)}</td><td${diverged ? " class=\"blew-up\"" : ""}>` +
        `${fmt(s.attitude_error_end)}${diverged}</td></tr>`;
    });
    document.querySelector("#scores tbody").innerHTML = rows.join("");
  }

  // ------------------------------------------------------------------ the time cursor

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

  let cursorDrawnAt = -Infinity;

  // The cursor's shapes in one figure at record k: a vertical line on a time axis, a dot
  // (fixed size in pixels) on each curve of the other panels. Shapes are layout, so moving
  // them redraws no trace (plotly recomputes nothing).
  function cursorShapes(fig, d, k) {
    const shapes = [];
    const runs = curves(d);
    for (const { panel, x, y } of placedBy[fig.id] || []) {
      if (panel.x === lab.spec.time) {
        if (!shapes.some((sh) => sh.type === "line" && sh.xref === x.id)) {
          shapes.push({ type: "line", xref: x.id, yref: "paper", x0: d.t[k], x1: d.t[k], y0: 0, y1: 1,
                        line: { color: css("--accent"), width: 1.5 } });
        }
        continue;
      }
      for (const [group, run] of runs) {
        const sx = series(run, d.t, panel.x);
        const sy = series(run, d.t, panel.y);
        if (!sx || !sy || sx[k] === null || sy[k] === null) continue;
        const c = lineStyle(group).color;
        shapes.push({ type: "circle", xref: x.id, yref: y.id, xsizemode: "pixel", ysizemode: "pixel",
                      xanchor: sx[k], yanchor: sy[k], x0: -4, x1: 4, y0: -4, y1: 4,
                      fillcolor: c, line: { color: css("--fg"), width: 1 }, meta: group });
      }
    }
    return shapes;
  }

  // Move the plots' cursor to lab.cursor; while playing, at most every CURSOR_MS.
  function moveCursor(force) {
    const d = lab.data;
    if (!d) return;
    const now = performance.now();
    if (!force && now - cursorDrawnAt < CURSOR_MS) return;
    const k = recordAt(d.t, lab.cursor);
    if (!force && k === lab.cursorRecord) return;
    cursorDrawnAt = now;
    lab.cursorRecord = k;
    for (const fig of lab.spec.figures) {
      const gd = $(`plot-${fig.id}`);
      if (gd.data) Plotly.relayout(gd, { shapes: cursorShapes(fig, d, k) });
    }
  }

  // ------------------------------------------------------------------ 3-D geometry

  const norm = (v) => { const n = Math.hypot(v[0], v[1], v[2]); return [v[0] / n, v[1] / n, v[2] / n]; };
  const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];

  function camera(eye) {  // orthographic, looking at the origin from `eye`, z up
    const right = norm(cross([-eye[0], -eye[1], -eye[2]], [0, 0, 1]));
    return { eye, right, up: cross(right, [-eye[0], -eye[1], -eye[2]]) };
  }

  function rotate(q, v) {  // v' = q v q*, q = (w, x, y, z) unit
    const [w, x, y, z] = q;
    const t = [2 * (y * v[2] - z * v[1]), 2 * (z * v[0] - x * v[2]), 2 * (x * v[1] - y * v[0])];
    return [
      v[0] + w * t[0] + (y * t[2] - z * t[1]),
      v[1] + w * t[1] + (z * t[0] - x * t[2]),
      v[2] + w * t[2] + (x * t[1] - y * t[0]),
    ];
  }

  // ------------------------------------------------------------------ 3-D view (canvas)

  const canvas = $("body-canvas");
  const ctx = canvas.getContext("2d");
  const VIEW = camera(norm([1.0, -1.5, 0.8]));
  const LIGHT = norm([0.4, -0.6, 1.0]);

  function halfExtents(J) {
    // Uniform box: I_x = (b² + c²)/3 per unit mass, so a² = 3/2 (I_y + I_z - I_x), ...
    // A zero J (locked axis) or a non-physical inertia is drawn as a thin slab. Scaled so
    // that the half-diagonal is 1: any box fits the same circle.
    const I = J.map((j) => (j > 0 ? 1 / j : 1e3));
    const s = [I[1] + I[2] - I[0], I[0] + I[2] - I[1], I[0] + I[1] - I[2]].map((x) => Math.sqrt(Math.max(x, 0)));
    const big = Math.max(...s) || 1;
    const e = s.map((x) => Math.max(x / big, 0.04));
    const diag = Math.hypot(...e);
    return e.map((x) => x / diag);
  }

  const FACES = [  // axis, sign, base colour (x red, y green, z blue)
    [0, 1, [214, 39, 40]], [0, -1, [214, 39, 40]],
    [1, 1, [44, 160, 44]], [1, -1, [44, 160, 44]],
    [2, 1, [31, 119, 180]], [2, -1, [31, 119, 180]],
  ];

  function qAt(run, k) {
    const q = [run.q.w[k], run.q.x[k], run.q.y[k], run.q.z[k]];
    return q.some((c) => c === null || !Number.isFinite(c)) ? null : q;
  }

  // The attitude at time `time`: normalised linear interpolation between records.
  function sampleQ(run, t, time) {
    const lo = recordAt(t, time);
    const hi = Math.min(lo + 1, t.length - 1);
    const p = qAt(run, lo);
    let r = qAt(run, hi);
    if (!p || !r || hi === lo) return p;
    if (dot4(p, r) < 0) r = r.map((c) => -c);
    const s = Math.min(Math.max((time - t[lo]) / (t[hi] - t[lo]), 0), 1);
    const q = p.map((c, i) => c + s * (r[i] - c));
    const n = Math.hypot(...q);
    return q.map((c) => c / n);
  }
  const dot4 = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];

  // Index of the median inverse moment: the axis that flips.
  function medianAxis(J) {
    const order = [0, 1, 2].sort((a, b) => J[a] - J[b]);
    return order[1];
  }

  function drawBody(run, d, cx, cy, scale, title) {
    const project = (p) => [cx + scale * dot(p, VIEW.right), cy - scale * dot(p, VIEW.up)];
    const fg = css("--fg");
    ctx.strokeStyle = fg;
    ctx.fillStyle = fg;
    ctx.lineWidth = 2;
    // The world L (fixed for a free body): the axis the exact motion precesses about.
    const L = d.case.L0_body ? rotate(d.case.q0, d.case.L0_body) : [0, 0, 1];
    const Ln = norm(L);
    const a = project(Ln.map((c) => -1.25 * c));
    const b = project(Ln.map((c) => 1.3 * c));
    ctx.setLineDash([4, 4]);
    ctx.beginPath(); ctx.moveTo(a[0], a[1]); ctx.lineTo(b[0], b[1]); ctx.stroke();
    ctx.setLineDash([]);
    ctx.beginPath(); ctx.arc(b[0], b[1], 4, 0, 2 * Math.PI); ctx.fill();
    ctx.font = "14px system-ui, sans-serif";
    ctx.fillText("L", b[0] + 8, b[1] + 4);
    ctx.fillText(title, cx - scale * 1.35, cy - scale * 1.2);
    const q = sampleQ(run, d.t, lab.cursor);
    if (!q) {
      ctx.fillStyle = css("--error");
      ctx.fillText("blew up (non-finite state)", cx - scale * 0.8, cy);
      return;
    }
    const ext = halfExtents(d.case.inv_inertia);
    const axis = medianAxis(d.case.inv_inertia);
    const tip = [0, 0, 0];
    tip[axis] = 1.15 * Math.max(ext[axis], 0.5);
    // Trail: the tip of the median axis over the last TRAIL periods, fading out.
    const k1 = recordAt(d.t, lab.cursor);
    const k0 = recordAt(d.t, Math.max(lab.cursor - TRAIL * d.case.period, 0));
    const trail = [];
    for (let k = k0; k <= k1; k++) {
      const qk = qAt(run, k);
      if (qk) trail.push({ p: rotate(qk, tip), k });
    }
    trail.push({ p: rotate(q, tip), k: k1 });
    ctx.lineWidth = 2;
    for (let i = 1; i < trail.length; i++) {
      const a1 = project(trail[i - 1].p);
      const b1 = project(trail[i].p);
      ctx.strokeStyle = `rgba(44, 160, 44, ${(0.15 + 0.85 * i / trail.length).toFixed(3)})`;
      ctx.beginPath(); ctx.moveTo(a1[0], a1[1]); ctx.lineTo(b1[0], b1[1]); ctx.stroke();
    }
    for (const [ax, sign, rgb] of FACES) {
      const n = [0, 0, 0];
      n[ax] = sign;
      const nw = rotate(q, n);
      if (dot(nw, VIEW.eye) <= 0) continue;  // a convex body: back faces are hidden
      const u = (ax + 1) % 3;
      const v = (ax + 2) % 3;
      const corners = [[1, 1], [-1, 1], [-1, -1], [1, -1]].map(([su, sv]) => {
        const p = [0, 0, 0];
        p[ax] = sign * ext[ax];
        p[u] = su * ext[u];
        p[v] = sv * ext[v];
        return project(rotate(q, p));
      });
      const shade = 0.45 + 0.55 * Math.max(0, dot(nw, LIGHT));
      ctx.fillStyle = `rgb(${rgb.map((c) => Math.round(c * shade + 255 * (1 - shade) * 0.25)).join(",")})`;
      ctx.strokeStyle = "#1d232b";
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(corners[0][0], corners[0][1]);
      for (const c of corners.slice(1)) ctx.lineTo(c[0], c[1]);
      ctx.closePath();
      ctx.fill();
      ctx.stroke();
    }
    // The median axis itself, from the centre to the trail's head.
    const c0 = project([0, 0, 0]);
    const c1 = project(rotate(q, tip));
    ctx.strokeStyle = "rgb(44, 160, 44)";
    ctx.lineWidth = 3;
    ctx.beginPath(); ctx.moveTo(c0[0], c0[1]); ctx.lineTo(c1[0], c1[1]); ctx.stroke();
  }

  function fitCanvas(el, aspect) {
    // Backing store follows the displayed size (crisp, and tall enough on a phone).
    const w = Math.max(300, Math.round(el.clientWidth * (window.devicePixelRatio || 1)));
    const h = Math.round(w * aspect);
    if (el.width !== w || el.height !== h) { el.width = w; el.height = h; }
  }

  function drawView(d) {
    const narrow = canvas.clientWidth < 600;
    fitCanvas(canvas, narrow ? 1.6 : 0.36);
    const w = canvas.width;
    const h = canvas.height;
    ctx.clearRect(0, 0, w, h);
    const run = d.methods.find((x) => x.name === lab.state.view) ||
      d.methods.find((x) => x.name !== lab.spec.reference.method) || d.exact;
    const name = run === d.exact ? "exact" : run.name;
    const halves = narrow
      ? [[w / 2, h * 0.27], [w / 2, h * 0.76]]
      : [[w * 0.25, h * 0.54], [w * 0.75, h * 0.54]];
    const scale = narrow ? Math.min(w, h / 2) / 3.0 : Math.min(w / 2, h) / 3.0;
    drawBody(run, d, halves[0][0], halves[0][1], scale, name);
    drawBody(d.exact, d, halves[1][0], halves[1][1], scale, d.case.torque ? "reference (ODE)" : "exact");
    ctx.strokeStyle = css("--line");
    ctx.lineWidth = 1;
    ctx.beginPath();
    if (narrow) { ctx.moveTo(10, h / 2); ctx.lineTo(w - 10, h / 2); } else { ctx.moveTo(w / 2, 10); ctx.lineTo(w / 2, h - 10); }
    ctx.stroke();
    const k = recordAt(d.t, lab.cursor);
    const err = run.attitude_error ? run.attitude_error[k] : null;
    $("anim-readout").textContent =
      `t = ${lab.cursor.toFixed(2)} (${(lab.cursor / d.case.period).toFixed(2)} rotations)` +
      (err === null || err === undefined ? "" : `, attitude error ${err.toExponential(2)} rad`);
  }

  // ------------------------------------------------------------------ momentum sphere

  const sphere = $("sphere-canvas");
  const sctx = sphere.getContext("2d");
  const sphereView = { yaw: -0.6, pitch: 0.45 };

  function sphereCamera() {
    const { yaw, pitch } = sphereView;
    return camera([Math.cos(pitch) * Math.cos(yaw), Math.cos(pitch) * Math.sin(yaw), Math.sin(pitch)]);
  }

  function drawSphere(d) {
    fitCanvas(sphere, 1);
    const w = sphere.width;
    const h = sphere.height;
    const r = 0.36 * Math.min(w, h);
    const cx = w / 2;
    const cy = h / 2;
    const cam = sphereCamera();
    const project = (p) => [cx + r * dot(p, cam.right), cy - r * dot(p, cam.up), dot(p, cam.eye)];
    sctx.clearRect(0, 0, w, h);
    sctx.strokeStyle = css("--muted");
    sctx.lineWidth = 1.5;
    sctx.beginPath(); sctx.arc(cx, cy, r, 0, 2 * Math.PI); sctx.stroke();
    // A polyline on the sphere: front part solid, back part faint (one stroke each).
    const path = (pts, color, width, faintBack, dash) => {
      sctx.lineWidth = width;
      sctx.setLineDash(dash || []);
      sctx.strokeStyle = color;
      for (const back of faintBack ? [true, false] : [false]) {
        sctx.globalAlpha = back ? 0.22 : 1;
        sctx.beginPath();
        for (let i = 1; i < pts.length; i++) {
          const a = pts[i - 1];
          const b = pts[i];
          if (!a || !b || (a[2] < 0 && b[2] < 0) !== back) continue;
          sctx.moveTo(a[0], a[1]);
          sctx.lineTo(b[0], b[1]);
        }
        sctx.stroke();
      }
      sctx.globalAlpha = 1;
      sctx.setLineDash([]);
    };
    for (const level of d.polhodes) {
      for (const loop of level.loops) {
        const pts = loop.x.map((_, i) => project([loop.x[i], loop.y[i], loop.z[i]]));
        path(pts, level.separatrix ? css("--fg") : css("--muted"), level.separatrix ? 1.2 : 0.8, true);
      }
    }
    // The principal axes.
    [[1, 0, 0], [0, 1, 0], [0, 0, 1]].forEach((e, i) => {
      const rgb = ["rgb(214,39,40)", "rgb(44,160,44)", "rgb(31,119,180)"][i];
      const a = project(e.map((c) => 1.12 * c));
      const o = project(e.map((c) => 1.0 * c));
      sctx.strokeStyle = rgb;
      sctx.fillStyle = rgb;
      sctx.lineWidth = 2;
      sctx.globalAlpha = a[2] < 0 ? 0.35 : 1;
      sctx.beginPath(); sctx.moveTo(o[0], o[1]); sctx.lineTo(a[0], a[1]); sctx.stroke();
      sctx.font = `${Math.round(r / 12)}px system-ui, sans-serif`;
      // Labels point away from the centre, kept inside the canvas.
      const text = ["x (min J)", "y (median J)", "z (max J)"][i];
      const width = sctx.measureText(text).width;
      const left = a[0] < cx ? a[0] - 4 - width : a[0] + 4;
      sctx.fillText(text, Math.min(Math.max(left, 2), w - width - 2), a[1] - 4);
      sctx.globalAlpha = 1;
    });
    const k = recordAt(d.t, lab.cursor);
    for (const [group, run] of curves(d).reverse()) {
      const L = run.L_body;
      const pts = L.x.map((_, i) => {
        const v = [L.x[i], L.y[i], L.z[i]];
        if (v.some((c) => c === null)) return null;
        const n = Math.hypot(...v);
        return n > 0 ? project(v.map((c) => c / n)) : null;
      });
      const style = lineStyle(group);
      path(pts, style.color, group === lab.spec.reference.label ? 2.2 : 1.6, true,
        style.dash === "solid" ? [] : style.dash === "dot" ? [2, 3] : [7, 4]);
      const p = pts[Math.min(k, pts.length - 1)];
      if (p) {
        sctx.fillStyle = style.color;
        sctx.globalAlpha = p[2] < 0 ? 0.35 : 1;
        sctx.beginPath(); sctx.arc(p[0], p[1], 5, 0, 2 * Math.PI); sctx.fill();
        sctx.globalAlpha = 1;
      }
    }
  }

  function hookSphere() {
    let drag = null;
    sphere.addEventListener("pointerdown", (ev) => { drag = [ev.clientX, ev.clientY]; sphere.setPointerCapture(ev.pointerId); });
    sphere.addEventListener("pointerup", () => { drag = null; });
    sphere.addEventListener("pointermove", (ev) => {
      if (!drag) return;
      turnSphere((ev.clientX - drag[0]) * -0.01, (ev.clientY - drag[1]) * 0.01);
      drag = [ev.clientX, ev.clientY];
    });
    sphere.addEventListener("keydown", (ev) => {
      const step = { ArrowLeft: [0.1, 0], ArrowRight: [-0.1, 0], ArrowUp: [0, 0.1], ArrowDown: [0, -0.1] }[ev.key];
      if (!step) return;
      ev.preventDefault();
      turnSphere(step[0], step[1]);
    });
  }

  function turnSphere(dyaw, dpitch) {
    sphereView.yaw += dyaw;
    sphereView.pitch = Math.min(Math.max(sphereView.pitch + dpitch, -1.5), 1.5);
    sphereDirty = true;
  }

  let sphereDirty = true;
  let sphereCursor = null;

  // ------------------------------------------------------------------ animation

  let lastFrame = null;

  function frame(now) {
    const d = lab.data;
    if (d && lastFrame !== null && lab.playing) {
      const speed = parseFloat($("speed").value) * d.case.period;
      lab.cursor += ((now - lastFrame) / 1000) * speed;
      const end = d.t[d.t.length - 1];
      if (lab.cursor > end) lab.cursor = end > 0 ? lab.cursor % end : 0;
      $("scrubber").value = String(Math.round((1000 * lab.cursor) / (end || 1)));
      moveCursor(false);
    }
    lastFrame = now;
    if (d) {
      if (onScreen.has(canvas)) drawView(d);
      const k = recordAt(d.t, lab.cursor);
      if (onScreen.has(sphere) && (sphereDirty || sphereCursor !== k || sphereData !== d)) {
        drawSphere(d);
        sphereDirty = false;
        sphereCursor = k;
        sphereData = d;
      }
      lab.frames += 1;
    }
    requestAnimationFrame(frame);
  }
  let sphereData = null;

  // Canvases are drawn only while on screen (the animation would cost CPU for nothing).
  const onScreen = new Set();
  function watchScreen() {
    const io = new IntersectionObserver((entries) => {
      for (const e of entries) {
        if (e.isIntersecting) onScreen.add(e.target); else onScreen.delete(e.target);
        if (e.target === sphere) sphereDirty = true;
      }
    });
    io.observe(canvas);
    io.observe(sphere);
  }

  function setPlaying(on) {
    lab.playing = on;
    $("play").textContent = on ? "pause" : "play";
    $("play").setAttribute("aria-pressed", on ? "true" : "false");
  }

  function hookScrubber() {
    $("scrubber").addEventListener("input", () => {
      const d = lab.data;
      if (!d) return;
      setPlaying(false);
      lab.cursor = (Number($("scrubber").value) / 1000) * d.t[d.t.length - 1];
      moveCursor(true);
    });
    $("play").addEventListener("click", () => setPlaying(!lab.playing));
    $("anim-method").addEventListener("change", () => {
      lab.state.view = $("anim-method").value;
      writeURL();
    });
  }

  // ------------------------------------------------------------------ error versus cost

  async function measureCost() {
    const status = $("cost-status");
    const body = requestBody();
    body.methods = body.methods.filter((m) => m !== lab.spec.reference.method);
    if (!body.methods.length) { status.textContent = "tick at least one method"; return; }
    status.textContent = `measuring ${body.methods.length} methods at dt, dt/2 and dt/4…`;
    const [res, answer] = await postWhenCompiled("/api/convergence", body, undefined, () => true,
      (wait) => { status.textContent = `${wait.message}: measuring when it is ready`; });
    if (!res.ok) { status.textContent = `${res.status}: ${answer.message}`; return; }
    const traces = answer.methods.map((m) => {
      const pts = m.points.filter((p) => p.error !== null && p.error > 0);
      return {
        type: "scatter", mode: "lines+markers", meta: m.name,
        name: `${m.name} (order ≈ ${m.order === null ? "?" : m.order.toFixed(1)})`,
        x: pts.map((p) => p.cost_us), y: pts.map((p) => p.error),
        text: pts.map((p) => `dt = ${p.dt.toPrecision(3)}, ${p.steps} steps`),
        hovertemplate: "%{text}<br>cost %{x:.3g} µs<br>error %{y:.3e} rad<extra>%{meta}</extra>",
        line: lineStyle(m.name), marker: { size: 7, color: lab.color[m.name] },
      };
    });
    const layout = Object.assign(theme(), {
      margin: { l: 64, r: 15, t: 20, b: 45 },
      legend: { font: { size: 11 } },
      xaxis: Object.assign(axisTheme(), { type: "log", title: { text: "cost of the run (µs, one core)" } }),
      yaxis: Object.assign(axisTheme(), { type: "log", title: { text: "final attitude error (rad)" } }),
    });
    await plotlyReady;
    await Plotly.react($("plot-cost"), traces, layout, plotConfig());
    status.textContent = `measured in ${Math.round(answer.compute_ms)} ms (server)`;
    lab.cost = answer;
  }

  // ------------------------------------------------------------------ export

  function download(name, type, text) {
    const url = URL.createObjectURL(new Blob([text], { type }));
    const a = document.createElement("a");
    a.href = url;
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  // One row per record and method: the time, every trace (vector traces one column per
  // component) and the attitude quaternion; empty cells where a value is missing.
  function csv(d) {
    const cols = [];
    for (const t of lab.spec.traces) {
      if (t.components) for (const c of t.components) cols.push([t.name, c]);
      else cols.push([t.name, null]);
    }
    for (const c of "wxyz") cols.push(["q", c]);
    const head = ["method", "t"].concat(cols.map(([n, c]) => (c ? `${n}_${c}` : n)));
    const lines = [head.join(",")];
    const runs = [[d.case.torque ? "ode_reference" : lab.spec.reference.method, d.exact]].concat(
      d.methods.filter((m) => m.name !== lab.spec.reference.method).map((m) => [m.name, m]));
    for (const [name, run] of runs) {
      for (let k = 0; k < d.t.length; k++) {
        const row = [name, d.t[k]];
        for (const [n, c] of cols) {
          const v = run[n] === undefined ? undefined : c ? run[n][c][k] : run[n][k];
          row.push(v === null || v === undefined ? "" : v);
        }
        lines.push(row.join(","));
      }
    }
    return lines.join("\n") + "\n";
  }

  function stem() {
    const s = lab.state;
    return s.inv_inertia ? "tumble-lab-custom" : `tumble-lab-${s.min_j}-${s.median_j}-${s.energy}`;
  }

  function hookExport() {
    $("export-csv").addEventListener("click", () => {
      if (lab.data) download(`${stem()}.csv`, "text/csv", csv(lab.data));
    });
    $("export-json").addEventListener("click", () => {
      if (!lab.data) return;
      const d = lab.data;
      const out = {
        request: lab.request,
        url: location.href,
        case: d.case,
        scores: Object.fromEntries(d.methods.map((m) => [m.name, Object.assign({ blew_up: m.blew_up }, m.scores)])),
      };
      download(`${stem()}.json`, "application/json", JSON.stringify(out, null, 2));
    });
  }

  // ------------------------------------------------------------------ start-up

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

  async function start() {
    await serverLoaded();
    const [methods, spec, presets] = await Promise.all(
      ["/api/methods", "/api/figure", "/api/presets"].map((url) => fetch(url).then((res) => res.json())));
    lab.methods = methods;
    lab.spec = spec;
    lab.presets = presets;
    lab.color = spec.colors;
    lab.dash = spec.dashes;
    for (const m of methods) lab.info[m.name] = m;
    buildFigures();
    buildMethodList();
    for (const p of presets) {
      const opt = document.createElement("option");
      opt.value = p.id;
      opt.textContent = p.label;
      opt.title = p.note;
      $("preset").appendChild(opt);
    }
    lab.state = stateFromURL();
    const match = lab.state.torque
      ? presets.find((p) => p.torque === lab.state.torque)
      : presets.find((p) => !p.torque && Object.entries(p.params).every(([k, v]) =>
        JSON.stringify(lab.state[k]) === JSON.stringify(v)));
    if (match && (Boolean(match.params.inv_inertia) === Boolean(lab.state.inv_inertia))) {
      $("preset").value = match.id;
      $("preset-note").textContent = match.note;
    }
    $("preset").addEventListener("change", () => applyPreset($("preset").value));
    onSlider("min-j", "min_j");
    onSlider("median-j", "median_j");
    onSlider("energy", "energy");
    onNumber("steps-per-rotation", "steps_per_rotation", true, 1, MAX_STEPS_PER_ROTATION);
    onNumber("rotations", "rotations", false, 0.001, MAX_ROTATIONS);
    onCustom();
    hookScrubber();
    hookSphere();
    hookExport();
    watchScreen();
    $("measure-cost").addEventListener("click", () => measureCost().catch((err) => {
      $("cost-status").textContent = `failed: ${err.message}`;
    }));
    showState();
    fillViewSelect();
    writeURL();
    requestAnimationFrame(frame);
    await request();
  }

  start().catch((err) => {
    hideCompiling();
    setStatus(`start-up failed: ${err.message}`, true);
  });
})();
