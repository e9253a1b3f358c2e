// tumble lab: the controls of the body and the run (sliders, number boxes, the custom
// body) and their readouts. A change is written to the page address at once and asked of
// the server after a short pause (changed).
"use strict";

(function (lab, parts) {
  const { $, writeURL } = parts.state;
  const { request, setStatus } = parts.requests;

  const DEBOUNCE_MS = 60;
  const MAX_STEPS_PER_ROTATION = 100000;
  const MAX_ROTATIONS = 100000;

  // The state in every control: sliders, number boxes, the custom body, the method list.
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
    parts.methods.showTicked(s.methods);
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

  let timer = null;

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

  // Listen to the controls (at start-up, once the state is set).
  function hook() {
    onSlider("min-j", "min_j");
    onSlider("median-j", "median_j");
    onSlider("energy", "energy");
    onNumber("steps-per-rotation", "steps_per_rotation", true, 1, MAX_STEPS_PER_ROTATION);
    onNumber("rotations", "rotations", false, 0.001, MAX_ROTATIONS);
    onCustom();
  }

  parts.controls = { showState, changed, hook };
})(window.tumbleLab, window.tumbleLabParts);
