// tumble lab: the downloads of the answer shown, as CSV (every trace of every run) or JSON
// (the request, the case and the scores).
"use strict";

(function (lab, parts) {
  const { $ } = parts.state;

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

  parts.download = { hook: hookExport };
})(window.tumbleLab, window.tumbleLabParts);
