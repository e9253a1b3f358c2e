// tumble lab: the plots. Drawn from the figure spec of GET /api/figure (tumble.figures):
// each spec figure is one plotly figure holding its panels, laid out on the figure's part of
// the spec's grid; the legend of the first ticks methods; the time cursor's marks; the
// scores table; the error-versus-cost plot, measured on request.
"use strict";

(function (lab, parts) {
  const { $, css, recordAt, plotlyReady, shownAtStart, requestBody } = parts.state;
  const { postWhenCompiled } = parts.requests;
  const { showState, changed } = parts.controls;
  const { setShown } = parts.methods;

  const GAP = 0.1;  // space between panels, as a fraction of the figure
  const CURSOR_MS = 200;     // plot cursor refresh interval while playing

  // ------------------------------------------------------------------ figures

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
      // Unticked methods of the groups shown stay in the legend (greyed out): a click
      // computes and shows them. (All groups at once would bury the plot under 40 entries.)
      const groups = new Set(d.methods.map((m) => (lab.info[m.name] || {}).group));
      for (const m of lab.methods) {
        if (m.name === lab.spec.reference.method || computed.has(m.name)) continue;
        if (!groups.has(m.group)) continue;
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
    parts.view3d.fillViewSelect();
    fillScores(d);
    const end = d.t[d.t.length - 1];
    if (lab.cursor > end) lab.cursor = end;
    moveCursor(true);
  }

  // ------------------------------------------------------------------ legend

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
      parts.view3d.fillViewSelect();
      changed();
      return false;
    });
  }

  // ------------------------------------------------------------------ scores table

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

  function hookCost() {
    $("measure-cost").addEventListener("click", () => measureCost().catch((err) => {
      $("cost-status").textContent = `failed: ${err.message}`;
    }));
  }

  parts.plots = { buildFigures, render, moveCursor, lineStyle, curves, hookCost };
})(window.tumbleLab, window.tumbleLabParts);
