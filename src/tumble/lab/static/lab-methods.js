// tumble lab: the method list, in the groups of GET /api/groups, with the compositions
// that the address names; ticking a method computes and shows it.
"use strict";

(function (lab, parts) {
  const { $ } = parts.state;
  const { showState, changed } = parts.controls;

  // One checkbox of the method list: its line swatch and its name (`text`: a replica's
  // name without its engine's, which heads its line).
  function methodBox(m, text, isDefault) {
    const label = document.createElement("label");
    label.title = `${m.name}: ${m.description}` + (m.featured ? ` (listed as ${m.featured})` : "");
    const input = document.createElement("input");
    input.type = "checkbox";
    input.value = m.name;
    input.addEventListener("change", () => setShown(m.name, input.checked));
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.setProperty("--swatch", lab.color[m.name]);
    if (lab.dash[m.name] !== "solid") swatch.style.borderTopStyle = "dotted";
    label.append(input, swatch, document.createTextNode(text));
    if (isDefault) {
      const tag = document.createElement("span");
      tag.className = "tag";
      tag.textContent = "default";
      label.append(tag);
    }
    return label;
  }

  // "bullet_implicit_body" under Bullet reads "implicit body".
  function replicaText(name, engine) {
    const word = engine.split(/\s+/)[0].toLowerCase();
    return name.startsWith(`${word}_`) ? name.slice(word.length + 1).replace(/_/g, " ") : name;
  }

  // The list in the groups of GET /api/groups (built from the registries: the article's
  // methods, higher order, and the engines with one line per engine). Each group folds:
  // open on a wide screen, on a phone only once it holds a ticked method (showTicked).
  function buildMethodList() {
    const box = $("method-list");
    const before = $("method-error");
    const wide = window.matchMedia("(min-width: 601px)").matches;
    for (const g of lab.groups) {
      const group = document.createElement("details");
      group.className = "group";
      group.dataset.group = g.id;
      group.open = wide;
      const summary = document.createElement("summary");
      summary.title = g.note;
      const title = document.createElement("span");
      title.className = "group-title";
      title.textContent = g.title;
      const count = document.createElement("span");
      count.className = "group-count";
      summary.append(title, count);
      group.append(summary);
      for (const section of g.sections) {
        let holder = group;
        if (section.engine) {
          holder = document.createElement("div");
          holder.className = "engine";
          holder.dataset.engine = section.engine;
          holder.setAttribute("role", "group");
          holder.setAttribute("aria-label", section.engine);
          const head = document.createElement("span");
          head.className = "engine-name";
          head.textContent = section.engine;
          holder.append(head);
          group.append(holder);
        }
        for (const name of section.methods) {
          const m = lab.info[name];
          if (!m || name === lab.spec.reference.method) continue;
          const text = section.engine ? replicaText(name, section.engine) : name;
          holder.append(methodBox(m, text, section.defaults.includes(name)));
        }
      }
      box.insertBefore(group, before);
    }
  }

  // Methods the address names that the list lacks: any composition "<base>:<scheme>"
  // (GET /api/methods/{name} validates it as the API does) joins "Higher order"; a name
  // that is not a method is left out, and the line under the list says why.
  async function addNamedMethods() {
    const q = new URLSearchParams(location.search);
    if (!q.has("methods")) return;
    const wanted = [...new Set(q.get("methods").split(","))].filter((n) => n && !lab.info[n]).slice(0, 20);
    const answers = await Promise.all(wanted.map(async (name) => {
      const res = await fetch(`/api/methods/${encodeURIComponent(name)}`);
      const body = await res.json().catch(() => ({ message: res.statusText }));
      return [name, res.ok, body];
    }));
    const refused = [];
    for (const [name, ok, body] of answers) {
      if (!ok) { refused.push(`${name}: ${(body.message || "not a method").replace(/^name: /, "")}`); continue; }
      lab.methods.push(body);
      lab.info[name] = body;
      lab.color[name] = body.color;
      lab.dash[name] = body.dash;
      const group = lab.groups.find((g) => g.id === body.group) || lab.groups[lab.groups.length - 1];
      group.sections[0].methods.push(name);
    }
    $("method-error").textContent = refused.length ? `methods in the address, left out: ${refused.join("; ")}` : "";
  }

  // Tick or untick a method (checkbox or legend): hidden methods are not computed, so
  // showing one again asks the server for it.
  function setShown(name, shown) {
    const s = lab.state;
    const order = lab.methods.map((m) => m.name);
    const set = new Set(s.methods);
    if (shown) set.add(name); else set.delete(name);
    $("method-error").textContent = "";
    s.methods = order.filter((m) => set.has(m));
    showState();
    parts.view3d.fillViewSelect();
    changed();
  }

  // Tick the boxes of `methods`; a group that holds one opens and says how many.
  function showTicked(methods) {
    for (const box of document.querySelectorAll("#method-list input")) {
      box.checked = methods.includes(box.value);
    }
    for (const group of document.querySelectorAll("#method-list details.group")) {
      const ticked = group.querySelectorAll("input:checked").length;
      if (ticked) group.open = true;
      group.querySelector(".group-count").textContent = ticked ? `${ticked} ticked` : "";
    }
  }

  parts.methods = { buildMethodList, addNamedMethods, setShown, showTicked };
})(window.tumbleLab, window.tumbleLabParts);
