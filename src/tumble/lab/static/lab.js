// tumble lab: controls -> POST /api/simulate -> plotly figures (laid out by the figure spec
// of GET /api/figure) and a canvas 3-D view.
// No external code besides the plotly.js that the server ships from the plotly package.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);

  // The article's toy shows these five by default; the others start hidden in the legend.
  const SHOWN_AT_START = ["explicit", "jolt", "naive_rotation", "modified_jolt", "momentum_first"];
  const DEBOUNCE_MS = 60;

  // State shared with the browser tests (window.tumbleLab).
  const lab = {
    methods: [],          // from /api/methods
    spec: null,           // the figure spec, from /api/figure
    info: {},             // name -> method object
    color: {},            // name -> colour (from the spec)
    visible: {},          // legend group -> true/false
    data: null,           // last /api/simulate answer
    completed: 0,         // answered requests (tests wait on it)
    failed: 0,
    frames: 0,            // animation frames drawn
    hooked: false,        // legend click handlers installed
    animTime: 0,          // simulated time shown by the 3-D view
    playing: true,
  };
  window.tumbleLab = lab;

  // ------------------------------------------------------------------ controls and requests

  const controls = ["min-j", "median-j", "energy", "steps-per-rotation", "rotations"];
  let timer = null;
  let inFlight = null;

  function readControls() {
    return {
      min_j: parseFloat($("min-j").value),
      median_j: parseFloat($("median-j").value),
      energy: parseFloat($("energy").value),
      steps_per_rotation: parseInt($("steps-per-rotation").value, 10),
      rotations: parseFloat($("rotations").value),
    };
  }

  function showControlValues() {
    const p = readControls();
    $("min-j-value").textContent = p.min_j.toFixed(2);
    $("median-j-value").textContent = p.median_j.toFixed(2);
    $("energy-value").textContent = p.energy.toFixed(2);
    const J = [p.min_j, p.min_j + p.median_j, p.min_j + 1].map((x) => x.toFixed(2));
    $("inertia-readout").textContent =
      `inverse moments J = (${J.join(", ")}); initial energy factor J_L = ` +
      `${(p.min_j + p.energy).toFixed(2)}` +
      (Math.abs(p.energy - p.median_j) < 0.03 ? " (near the separatrix: Dzhanibekov flips)" : "");
  }

  function setStatus(text, error) {
    const el = $("status");
    el.textContent = text;
    el.classList.toggle("error", Boolean(error));
  }

  function schedule() {
    showControlValues();
    clearTimeout(timer);
    timer = setTimeout(request, DEBOUNCE_MS);
  }

  async function request() {
    if (inFlight) inFlight.abort();  // a newer setting replaces the answer we were waiting for
    const controller = new AbortController();
    inFlight = controller;
    const body = readControls();
    const t0 = performance.now();
    setStatus("computing…");
    try {
      const res = await fetch("/api/simulate", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      const answer = await res.json();
      if (controller !== inFlight) return;  // superseded while the body was arriving
      if (!res.ok) {
        lab.failed += 1;
        setStatus(`${res.status}: ${answer.message || res.statusText}`, true);
        return;
      }
      const server = res.headers.get("Server-Timing") || "";
      const ms = /dur=([\d.]+)/.exec(server);
      render(answer);
      lab.completed += 1;
      const c = answer.case;
      setStatus(
        `${c.steps} steps of dt = ${c.dt.toPrecision(3)} per method, ${c.records} records ` +
        `(every ${c.every} steps); server ${ms ? ms[1] : "?"} ms, ` +
        `round trip and drawing ${Math.round(performance.now() - t0)} ms`
      );
    } catch (err) {
      if (err.name === "AbortError") return;
      lab.failed += 1;
      setStatus(`request failed: ${err.message}`, true);
    } finally {
      if (inFlight === controller) inFlight = null;
    }
  }

  // ------------------------------------------------------------------ figures
  // Drawn from the figure spec of GET /api/figure (tumble.figures): each spec figure is one
  // plotly figure holding its panels, laid out on the figure's part of the spec's grid.

  const CONFIG = { responsive: true, displaylogo: false };
  const GAP = 0.1;  // space between panels, as a fraction of the figure

  function visibility(group) {
    return lab.visible[group] === false ? "legendonly" : true;
  }

  function line(group, x, y, extra) {
    const ref = lab.spec.reference;
    const isRef = group === ref.label;
    return Object.assign({
      type: "scatter",
      mode: "lines",
      x: x,
      y: y,
      name: group,
      legendgroup: group,
      meta: group,
      showlegend: false,
      visible: visibility(group),
      hoverinfo: "name+x+y",
      line: isRef
        ? { color: ref.color, width: 2, dash: ref.dash ? "dash" : "solid" }
        : { color: lab.color[group], width: 1.4 },
    }, extra || {});
  }

  // What a panel's x or y names in a run: the times, a trace, or a component of one.
  function series(run, t, ref) {
    if (ref === lab.spec.time) return t;
    const [name, component] = ref.split(".");
    const values = run[name];
    return values === undefined || !component ? values : values[component];
  }

  // The runs drawn: the reference first, then every method but the reference's own run.
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

  function figureOf(fig, d, withLegend) {
    const panels = lab.spec.panels.filter((p) => p.figure === fig.id);
    const { placed, xs, ys } = axes(panels);
    const traces = [];
    for (const [group, run] of curves(d)) {
      placed.forEach(({ panel, x, y }, k) => {
        const px = series(run, d.t, panel.x);
        const py = series(run, d.t, panel.y);
        if (px === undefined || py === undefined) return;  // the reference has no attitude error
        traces.push(line(group, px, py, { xaxis: x.id, yaxis: y.id, showlegend: withLegend && k === 0 }));
      });
    }
    const name = (id) => id.replace(/^([xy])/, "$1axis");
    // A figure of one panel carries that panel's title (the others have axis titles).
    const title = panels.length === 1 ? { text: panels[0].title, font: { size: 13 } } : undefined;
    const layout = {
      title,
      margin: { l: 60, r: 15, t: withLegend ? 60 : title ? 30 : 20, b: 45 },
      showlegend: withLegend,
      legend: { orientation: "h", y: 1.01, yanchor: "bottom", x: 0, font: { size: 11 } },
      uirevision: fig.id,
    };
    for (const x of xs) {
      // Ticks and title under the lowest panel, range from the first panel that fixes one.
      const low = x.panels.reduce((a, b) => (b.row + b.rowspan > a.row + a.rowspan ? b : a));
      const ranged = x.panels.find((p) => d.ranges[p.id].x);
      layout[name(x.id)] = {
        domain: x.domain,
        anchor: placed.find((q) => q.panel === low).y.id,
        title: { text: low.x_label, standoff: 2 },
        range: ranged ? d.ranges[ranged.id].x : undefined,
        autorange: !ranged,
        rangeslider: low.x === lab.spec.time ? { visible: true, thickness: 0.07 } : undefined,
      };
    }
    for (const y of ys) {
      const left = y.panels.reduce((a, b) => (b.col < a.col ? b : a));
      const ranged = y.panels.find((p) => d.ranges[p.id].y);
      const own = placed.find((q) => q.panel === left);
      layout[name(y.id)] = {
        domain: y.domain,
        anchor: own.x.id,
        title: { text: left.y_label, standoff: 2 },
        type: left.log_y ? "log" : "linear",
        exponentformat: left.log_y ? "power" : undefined,
        range: ranged ? d.ranges[ranged.id].y : undefined,
        autorange: !ranged,
        // Fixed ranges on both axes set the scale already (plotly would widen one to keep
        // the aspect of the panel's box).
        scaleanchor: left.equal_aspect && !(d.ranges[left.id].x && d.ranges[left.id].y) ? own.x.id : undefined,
      };
    }
    return { traces, layout };
  }

  // The page's <figure> for each spec figure, before the 3-D view.
  function buildFigures() {
    const before = $("view3d");
    for (const fig of lab.spec.figures) {
      const el = document.createElement("figure");
      if (fig.wide) el.className = "wide";
      const plot = document.createElement("div");
      plot.id = `plot-${fig.id}`;
      plot.className = fig.wide ? "plot" : "plot square";
      const caption = document.createElement("figcaption");
      caption.textContent = fig.caption;
      el.append(plot, caption);
      before.parentNode.insertBefore(el, before);
    }
  }

  function render(d) {
    lab.data = d;
    lab.spec.figures.forEach((fig, i) => {
      const f = figureOf(fig, d, i === 0);
      Plotly.react($(`plot-${fig.id}`), f.traces, f.layout, CONFIG);
    });
    if (!lab.hooked) {
      hookLegend();
      lab.hooked = true;
    }
    fillScores(d);
    lab.animTime = Math.min(lab.animTime, d.t[d.t.length - 1]);
  }

  function applyVisibility() {
    for (const fig of lab.spec.figures) {
      const gd = $(`plot-${fig.id}`);
      if (!gd.data) continue;
      Plotly.restyle(gd, { visible: gd.data.map((tr) => visibility(tr.meta)) });
    }
    if (lab.data) fillScores(lab.data);
  }

  function hookLegend() {
    const gd = $(`plot-${lab.spec.figures[0].id}`);
    gd.on("plotly_legendclick", (ev) => {
      const group = ev.data[ev.curveNumber].meta;
      lab.visible[group] = lab.visible[group] === false;
      applyVisibility();
      return false;  // plotly would only toggle this figure; applyVisibility does them all
    });
    gd.on("plotly_legenddoubleclick", (ev) => {
      const group = ev.data[ev.curveNumber].meta;
      const onlyIt = Object.keys(lab.visible).every((g) => (g === group) === lab.visible[g]);
      for (const g of Object.keys(lab.visible)) lab.visible[g] = onlyIt || g === group;
      applyVisibility();
      return false;
    });
  }

  const fmt = (x) => (x === null || x === undefined ? "–" : x === 0 ? "0" : x.toExponential(2));

  function fillScores(d) {
    const rows = d.methods.map((m) => {
      const s = m.scores;
      const info = lab.info[m.name] || {};
      const order = info.order === null ? "exact" : info.order;
      const diverged = s.diverged_at === null ? "" : ` (blew up at t = ${s.diverged_at.toFixed(1)})`;
      const hidden = lab.visible[m.name] === false && m.name !== lab.spec.reference.method ? " class=\"hidden\"" : "";
      return `<tr${hidden} title="${info.description || ""}">` +
        `<td class="swatch" style="--swatch:${lab.color[m.name]}">${m.name}</td>` +
        `<td>${order}</td><td>${(info.conserves || []).join(", ")}</td>` +
        `<td>${fmt(s.energy_error)}</td><td>${fmt(s.momentum_drift)}</td>` +
        `<td>${fmt(s.direction_drift)}</td><td>${fmt(s.attitude_error_end)}${diverged}</td></tr>`;
    });
    document.querySelector("#scores tbody").innerHTML = rows.join("");
  }

  // ------------------------------------------------------------------ 3-D view (canvas)

  const canvas = $("body-canvas");
  const ctx = canvas.getContext("2d");

  // Orthographic camera looking at the origin from EYE, world z up (along the initial L).
  const norm = (v) => { const n = Math.hypot(v[0], v[1], v[2]); return [v[0] / n, v[1] / n, v[2] / n]; };
  const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  const EYE = norm([1.0, -1.5, 0.8]);
  const RIGHT = norm(cross([-EYE[0], -EYE[1], -EYE[2]], [0, 0, 1]));
  const UP = cross(RIGHT, [-EYE[0], -EYE[1], -EYE[2]]);
  const LIGHT = norm([0.4, -0.6, 1.0]);

  function rotate(q, v) {  // v' = q v q*, q = (w, x, y, z) unit
    const [w, x, y, z] = q;
    const t = [2 * (y * v[2] - z * v[1]), 2 * (z * v[0] - x * v[2]), 2 * (x * v[1] - y * v[0])];
    return [
      v[0] + w * t[0] + (y * t[2] - z * t[1]),
      v[1] + w * t[1] + (z * t[0] - x * t[2]),
      v[2] + w * t[2] + (x * t[1] - y * t[0]),
    ];
  }

  function halfExtents(J) {
    // Uniform box: I_x = (b² + c²)/3 per unit mass, so a² = 3/2 (I_y + I_z - I_x), ...
    // A zero J (locked axis) or a non-physical inertia is drawn as a thin slab.
    const I = J.map((j) => (j > 0 ? 1 / j : 1e3));
    const s = [I[1] + I[2] - I[0], I[0] + I[2] - I[1], I[0] + I[1] - I[2]].map((x) => Math.sqrt(Math.max(x, 0)));
    const big = Math.max(...s) || 1;
    return s.map((x) => Math.max(x / big, 0.04));
  }

  const FACES = [  // axis, sign, base colour (min J red, median green, max blue)
    [0, 1, [214, 39, 40]], [0, -1, [214, 39, 40]],
    [1, 1, [44, 160, 44]], [1, -1, [44, 160, 44]],
    [2, 1, [31, 119, 180]], [2, -1, [31, 119, 180]],
  ];

  function drawBody(q, ext, cx, cy, scale, label) {
    const project = (p) => [cx + scale * dot(p, RIGHT), cy - scale * dot(p, UP)];
    // Initial world L, the fixed reference the exact motion precesses about.
    ctx.strokeStyle = "#444";
    ctx.fillStyle = "#444";
    ctx.lineWidth = 2;
    const a = project([0, 0, -1.5]);
    const b = project([0, 0, 1.6]);
    ctx.setLineDash([4, 4]);
    ctx.beginPath(); ctx.moveTo(a[0], a[1]); ctx.lineTo(b[0], b[1]); ctx.stroke();
    ctx.setLineDash([]);
    ctx.beginPath(); ctx.moveTo(b[0], b[1] - 8); ctx.lineTo(b[0] - 5, b[1] + 4); ctx.lineTo(b[0] + 5, b[1] + 4); ctx.fill();
    ctx.font = "14px system-ui, sans-serif";
    ctx.fillText("L", b[0] + 8, b[1] + 4);
    ctx.fillText(label, cx - scale * 1.6, cy - scale * 1.55);
    if (!q || q.some((c) => c === null || !Number.isFinite(c))) {
      ctx.fillStyle = "#b00020";
      ctx.fillText("blew up (non-finite state)", cx - scale * 0.8, cy);
      return;
    }
    for (const [axis, sign, rgb] of FACES) {
      const n = [0, 0, 0];
      n[axis] = sign;
      const nw = rotate(q, n);
      if (dot(nw, EYE) <= 0) continue;  // a convex body: back faces are hidden
      const u = (axis + 1) % 3;
      const v = (axis + 2) % 3;
      const corners = [[1, 1], [-1, 1], [-1, -1], [1, -1]].map(([su, sv]) => {
        const p = [0, 0, 0];
        p[axis] = sign * ext[axis];
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
  }

  function sampleQ(tr, t, time) {
    let lo = 0;
    let hi = t.length - 1;
    if (time >= t[hi]) return [tr.q.w[hi], tr.q.x[hi], tr.q.y[hi], tr.q.z[hi]];
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (t[mid] <= time) lo = mid; else hi = mid;
    }
    const p = [tr.q.w[lo], tr.q.x[lo], tr.q.y[lo], tr.q.z[lo]];
    let r = [tr.q.w[hi], tr.q.x[hi], tr.q.y[hi], tr.q.z[hi]];
    if (p.concat(r).some((c) => c === null)) return p;
    // Normalised linear interpolation on the shorter arc between records.
    if (p[0] * r[0] + p[1] * r[1] + p[2] * r[2] + p[3] * r[3] < 0) r = r.map((c) => -c);
    const s = (time - t[lo]) / (t[hi] - t[lo]);
    const q = p.map((c, i) => c + s * (r[i] - c));
    const n = Math.hypot(...q);
    return q.map((c) => c / n);
  }

  let lastFrame = null;

  function frame(now) {
    const d = lab.data;
    if (d && lastFrame !== null && lab.playing) {
      const speed = parseFloat($("speed").value) * d.case.period;
      lab.animTime += ((now - lastFrame) / 1000) * speed;
      const end = d.t[d.t.length - 1];
      if (lab.animTime > end) lab.animTime = end > 0 ? lab.animTime % end : 0;
    }
    lastFrame = now;
    if (d) draw(d);
    requestAnimationFrame(frame);
  }

  function draw(d) {
    const name = $("anim-method").value;
    const m = d.methods.find((x) => x.name === name) || d.methods[0];
    const ext = halfExtents(d.case.inv_inertia);
    const w = canvas.width;
    const h = canvas.height;
    ctx.clearRect(0, 0, w, h);
    const scale = Math.min(w / 4, h) / 2.3;
    drawBody(sampleQ(m, d.t, lab.animTime), ext, w * 0.25, h * 0.55, scale, `${m.name}`);
    drawBody(sampleQ(d.exact, d.t, lab.animTime), ext, w * 0.75, h * 0.55, scale, "exact");
    ctx.strokeStyle = "#d8dde4";
    ctx.beginPath(); ctx.moveTo(w / 2, 10); ctx.lineTo(w / 2, h - 10); ctx.stroke();
    const idx = d.t.findIndex((x) => x >= lab.animTime);
    const err = idx >= 0 ? m.attitude_error[idx] : null;
    $("anim-readout").textContent =
      `t = ${lab.animTime.toFixed(2)} (${(lab.animTime / d.case.period).toFixed(2)} rotations)` +
      (err === null || err === undefined ? "" : `, attitude error ${err.toExponential(2)} rad`);
    lab.frames += 1;
  }

  // ------------------------------------------------------------------ start-up

  async function start() {
    const [methods, spec] = await Promise.all(
      ["/api/methods", "/api/figure"].map((url) => fetch(url).then((res) => res.json())));
    lab.methods = methods;
    lab.spec = spec;
    lab.color = spec.colors;
    buildFigures();
    const select = $("anim-method");
    lab.methods.forEach((m) => {
      lab.info[m.name] = m;
      lab.visible[m.name] = SHOWN_AT_START.includes(m.name);
      if (m.name !== spec.reference.method) {
        const opt = document.createElement("option");
        opt.value = m.name;
        opt.textContent = m.name;
        opt.title = m.description;
        select.appendChild(opt);
      }
    });
    lab.visible[spec.reference.label] = true;
    select.value = "jolt";
    for (const id of controls) $(id).addEventListener("input", schedule);
    $("play").addEventListener("click", () => {
      lab.playing = !lab.playing;
      $("play").textContent = lab.playing ? "pause" : "play";
    });
    showControlValues();
    requestAnimationFrame(frame);
    await request();
  }

  start().catch((err) => setStatus(`start-up failed: ${err.message}`, true));
})();
