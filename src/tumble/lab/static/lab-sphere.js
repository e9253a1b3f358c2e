// tumble lab: the momentum sphere (canvas): the direction of body-frame L of each run over
// the exact polhodes, a dot at the time cursor; drag or arrow keys turn it.
"use strict";

(function (lab, parts) {
  const { $, css, recordAt } = parts.state;
  const { curves, lineStyle } = parts.plots;
  const { camera, dot, fitCanvas } = parts.view3d;

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

  let sphereDirty = true;  // turned, or back on screen: to draw again
  let sphereCursor = null;  // the record and the answer drawn last
  let sphereData = null;

  // Draw the sphere at record k of `d` unless it shows that already (the animation asks on
  // every frame while the sphere is on screen).
  function drawAt(d, k) {
    if (!sphereDirty && sphereCursor === k && sphereData === d) return;
    drawSphere(d);
    sphereDirty = false;
    sphereCursor = k;
    sphereData = d;
  }

  const markDirty = () => { sphereDirty = true; };

  parts.sphere = { canvas: sphere, drawAt, markDirty, hook: hookSphere };
})(window.tumbleLab, window.tumbleLabParts);
