// tumble lab: the 3-D view, a small canvas renderer (no WebGL): the body as a box under
// the selected method beside the reference, at the time cursor, with the trail of its
// median axis; and the 3-D geometry that the momentum sphere shares.
"use strict";

(function (lab, parts) {
  const { $, css, recordAt, writeURL } = parts.state;

  const TRAIL = 0.6;         // trail length of the 3-D view, in rotation periods

  // ------------------------------------------------------------------ 3-D geometry
  // (of the momentum sphere too)

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

  // ------------------------------------------------------------------ drawing

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

  // The selector of the method shown: the ticked ones (jolt, else the first, when the shown
  // one is unticked).
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

  function hook() {
    $("anim-method").addEventListener("change", () => {
      lab.state.view = $("anim-method").value;
      writeURL();
    });
  }

  parts.view3d = { dot, camera, fitCanvas, canvas, drawView, fillViewSelect, hook };
})(window.tumbleLab, window.tumbleLabParts);
