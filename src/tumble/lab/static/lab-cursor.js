// tumble lab: the time cursor that the plots, the 3-D view and the sphere share, playing
// (the animation frames) or set by the scrubber.
"use strict";

(function (lab, parts) {
  const { $, recordAt } = parts.state;
  const { moveCursor } = parts.plots;
  const { view3d, sphere } = parts;

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
      if (onScreen.has(view3d.canvas)) view3d.drawView(d);
      if (onScreen.has(sphere.canvas)) sphere.drawAt(d, recordAt(d.t, lab.cursor));
      lab.frames += 1;
    }
    requestAnimationFrame(frame);
  }

  // Canvases are drawn only while on screen (the animation would cost CPU for nothing).
  const onScreen = new Set();
  function watchScreen() {
    const io = new IntersectionObserver((entries) => {
      for (const e of entries) {
        if (e.isIntersecting) onScreen.add(e.target); else onScreen.delete(e.target);
        if (e.target === sphere.canvas) sphere.markDirty();
      }
    });
    io.observe(view3d.canvas);
    io.observe(sphere.canvas);
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
  }

  // Listen to the scrubber and the play button, watch the canvases, start the frames.
  function start() {
    hookScrubber();
    watchScreen();
    requestAnimationFrame(frame);
  }

  parts.cursor = { start };
})(window.tumbleLab, window.tumbleLabParts);
