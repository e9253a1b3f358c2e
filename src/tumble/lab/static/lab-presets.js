// tumble lab: the preset menu of GET /api/presets (free bodies and torque scenarios). A
// preset sets the body, and may set the step, the duration and the methods ticked.
"use strict";

(function (lab, parts) {
  const { $ } = parts.state;
  const { showState, changed } = parts.controls;

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
    s.inv_inertia = s.omega_body = null;
    // A free preset sets a body (the article's parameters or an explicit one), and may set
    // the step, the duration and the methods ticked (the engines at 60 Hz).
    for (const [k, v] of Object.entries(p.torque ? {} : p.params)) s[k] = Array.isArray(v) ? v.slice() : v;
    s.methods = s.methods.filter((m) => lab.info[m]);
    for (const [id, key] of [["steps-per-rotation", "steps_per_rotation"], ["rotations", "rotations"]]) {
      if (!(key in p.params)) continue;
      $(id).setAttribute("aria-invalid", "false");
      $(`${id}-error`).textContent = "";
    }
    $("preset-note").textContent = p.note;
    showState();
    parts.view3d.fillViewSelect();
    changed();
  }

  // Fill the menu and listen to it (at start-up, once the state is set).
  function build() {
    const presets = lab.presets;
    for (const p of presets) {
      const opt = document.createElement("option");
      opt.value = p.id;
      opt.textContent = p.label;
      opt.title = p.note;
      $("preset").appendChild(opt);
    }
    // The preset the address is, if any: the one that sets the most of it (the engines at
    // 60 Hz are the article's body too).
    const match = lab.state.torque
      ? presets.find((p) => p.torque === lab.state.torque)
      : presets.filter((p) => !p.torque &&
        Boolean(p.params.inv_inertia) === Boolean(lab.state.inv_inertia) &&
        Object.entries(p.params).every(([k, v]) => JSON.stringify(lab.state[k]) === JSON.stringify(v)))
        .sort((a, b) => Object.keys(b.params).length - Object.keys(a.params).length)[0];
    if (match) {
      $("preset").value = match.id;
      $("preset-note").textContent = match.note;
    }
    $("preset").addEventListener("change", () => applyPreset($("preset").value));
  }

  parts.presets = { build };
})(window.tumbleLab, window.tumbleLabParts);
