// tumble lab: start-up, the last of the page's scripts (lab-state.js lists them). Waits for
// the server's API, loads what the page lists, builds the page, reads the settings from
// the address and asks for the first answer.
"use strict";

(function (lab, parts) {
  const { stateFromURL, writeURL } = parts.state;
  const { requests, controls, presets, methods, plots, view3d, sphere, cursor, download } = parts;

  async function start() {
    await requests.serverLoaded();
    const [methodRows, spec, presetRows, groups] = await Promise.all(
      ["/api/methods", "/api/figure", "/api/presets", "/api/groups"].map((url) => fetch(url).then((res) => res.json())));
    lab.methods = methodRows;
    lab.spec = spec;
    lab.presets = presetRows;
    lab.groups = groups;
    lab.color = Object.assign({}, spec.colors);
    lab.dash = Object.assign({}, spec.dashes);
    for (const m of methodRows) {
      lab.info[m.name] = m;
      lab.color[m.name] = m.color;
      lab.dash[m.name] = m.dash;
    }
    await methods.addNamedMethods();
    plots.buildFigures();
    methods.buildMethodList();
    lab.state = stateFromURL();
    presets.build();
    controls.hook();
    view3d.hook();
    sphere.hook();
    download.hook();
    plots.hookCost();
    controls.showState();
    view3d.fillViewSelect();
    writeURL();
    cursor.start();
    await requests.request();
  }

  start().catch((err) => {
    requests.hideCompiling();
    requests.setStatus(`start-up failed: ${err.message}`, true);
  });
})(window.tumbleLab, window.tumbleLabParts);
