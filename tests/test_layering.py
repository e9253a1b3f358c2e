"""The import structure of ``src/tumble``: layers, no cycles, no borrowed private names.

DESIGN.md's layering, encoded as data below and checked on the source with ``ast``: every
``import`` and ``from ... import`` of every module counts, also those inside functions.
Each check collects all offending imports and fails once, listing each with its file and
line, so one run shows everything there is to fix.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "tumble"

#: Base units, which every unit may import, and the units each of them may import itself.
#: ``tumble`` is the package's ``__init__`` (it re-exports the error types); ``_kernels``
#: covers ``tumble._kernels`` and every module in it.
BASE: dict[str, frozenset[str]] = {
    "tumble": frozenset({"_errors", "_validate"}),
    "_errors": frozenset(),
    "_validate": frozenset({"_errors"}),
    "_linalg": frozenset(),
    "_kernels": frozenset(),
    "_lazy": frozenset(),
}

#: Every other unit and the units it builds on directly. A unit may import the base, the
#: units listed here and, transitively, everything those build on; nothing else.
#: ``interpolate`` (slerp, squad, RotationSpline) builds on ``rotation`` only.
BUILDS_ON: dict[str, frozenset[str]] = {
    "rotation": frozenset({"_linalg"}),
    "kinematics": frozenset({"rotation"}),
    "exact": frozenset({"rotation"}),
    "interpolate": frozenset({"rotation"}),
    "trajectory": frozenset(),
    "compositions": frozenset(),
    # the engines' replicas: their records, as data (tumble.methods turns them into records)
    "engines": frozenset(),
    "methods": frozenset({"compositions", "engines"}),
    # the scenarios' defaults and limits as data, for parsers that must not load numba
    "parameters": frozenset(),
    "torques": frozenset({"rotation", "kinematics", "exact", "interpolate"}),
    "rigid": frozenset(
        {
            "rotation",
            "kinematics",
            "exact",
            "interpolate",
            "torques",
            "trajectory",
            "methods",
            "dual",
        }
    ),
    "diagnostics": frozenset({"rigid", "exact", "rotation", "trajectory"}),
    "scenarios": frozenset({"diagnostics", "parameters"}),
    # everyday bodies in physical units (the scorecard's, the lab's engines preset)
    "bodies": frozenset({"scenarios"}),
    "figures": frozenset({"diagnostics", "methods", "rigid"}),
    "arguments": frozenset({"parameters", "methods"}),
    "compare": frozenset({"figures", "scenarios", "arguments"}),
    "precompile": frozenset({"scenarios", "arguments"}),
    "lab": frozenset({"figures", "scenarios", "bodies"}),
    "sweep": frozenset({"figures", "scenarios", "arguments"}),
    # the public path of tumble.sweep.plot from before sweeps became a package
    "sweep_plot": frozenset({"sweep"}),
    "transform": frozenset({"_linalg", "rotation"}),
    "hierarchy": frozenset({"transform", "kinematics", "rotation"}),
    "dual": frozenset(),
    "linkedlist": frozenset(),
    "pairs": frozenset(),
}

#: The command line sits on top: it may import every unit (its subcommands lazily).
TOP = "cli"


#: Units whose third-party imports are limited to these (the standard library is free).
THIRD_PARTY: dict[str, frozenset[str]] = {
    "_linalg": frozenset({"numpy"}),
    "trajectory": frozenset({"numpy"}),
    # the registry is data: listing and validating methods compiles and imports no numba
    "methods": frozenset(),
    "engines": frozenset(),
    "compositions": frozenset({"numpy"}),
    "parameters": frozenset(),
    "_lazy": frozenset(),
}


@dataclass(frozen=True)
class Import:
    """One imported module: who imports it, where, and whether inside a function."""

    source: str  # importing module, dotted
    target: str  # imported module, dotted (a tumble module, or a top-level third party)
    file: str
    line: int
    lazy: bool

    def __str__(self) -> str:
        where = " (inside a function)" if self.lazy else ""
        return f"{self.file}:{self.line}: {self.source} imports {self.target}{where}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


SOURCES = _sources()
MODULES = frozenset(SOURCES)


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _resolve(module: str | None, level: int, importer: str) -> str:
    """The absolute module name of ``from <level dots><module> import ...``."""
    if level == 0:
        return module or ""
    is_package = SOURCES[importer].name == "__init__.py"
    base = importer.split(".")
    base = base[: len(base) - level + (1 if is_package else 0)]
    return ".".join([*base, module] if module else base)


def _known(name: str) -> str:
    """The longest prefix of a dotted tumble name that is a module of the package."""
    parts = name.split(".")
    while parts and ".".join(parts) not in MODULES:
        parts.pop()
    return ".".join(parts)


class _Walker(ast.NodeVisitor):
    """Collect the imports of one module, the names bound to tumble modules, and the
    private names it takes from other tumble modules."""

    def __init__(self, module: str, file: str) -> None:
        self.module = module
        self.file = file
        self.depth = 0
        self.imports: list[Import] = []
        self.bound: dict[str, str] = {}  # local name -> tumble module
        self.private: list[str] = []
        self.attributes: list[ast.Attribute] = []

    def _add(self, target: str, line: int) -> None:
        found = Import(self.module, target, self.file, line, self.depth > 0)
        if found not in self.imports:  # one line importing several names counts once
            self.imports.append(found)

    def _function(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] != "tumble":
                self._add(alias.name.split(".")[0], node.lineno)
                continue
            self._add(_known(alias.name), node.lineno)
            if alias.asname:
                self.bound[alias.asname] = _known(alias.name)
            else:
                self.bound["tumble"] = "tumble"

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        origin = _resolve(node.module, node.level, self.module)
        if origin.split(".")[0] != "tumble":
            self._add(origin.split(".")[0], node.lineno)
            return
        for alias in node.names:
            submodule = f"{origin}.{alias.name}"
            if submodule in MODULES:
                self._add(submodule, node.lineno)
                self.bound[alias.asname or alias.name] = submodule
                continue
            self._add(_known(origin), node.lineno)
            if _is_private(alias.name):
                self.private.append(f"{self.file}:{node.lineno}: from {origin} import {alias.name}")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.attributes.append(node)
        self.generic_visit(node)

    def private_attributes(self) -> Iterator[str]:
        """``module._name`` uses, ``module`` a name bound to another tumble module."""
        for node in self.attributes:
            owner = self._module_of(node.value)
            if owner is None or owner == self.module or not _is_private(node.attr):
                continue
            if f"{owner}.{node.attr}" not in MODULES:
                yield f"{self.file}:{node.lineno}: {owner}.{node.attr}"

    def _module_of(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return self.bound.get(node.id)
        if isinstance(node, ast.Attribute):
            owner = self._module_of(node.value)
            if owner is not None and f"{owner}.{node.attr}" in MODULES:
                return f"{owner}.{node.attr}"
        return None


def _walk(module: str) -> _Walker:
    path = SOURCES[module]
    walker = _Walker(module, str(path.relative_to(SRC.parent)))
    walker.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    return walker


WALKERS = {m: _walk(m) for m in sorted(MODULES)}
IMPORTS = [imp for w in WALKERS.values() for imp in w.imports]
TUMBLE_IMPORTS = [imp for imp in IMPORTS if imp.target.split(".")[0] == "tumble"]


def unit(module: str) -> str:
    """The layering unit of a tumble module: its top-level name under ``tumble``."""
    parts = module.split(".")
    if len(parts) == 1:
        return "tumble"
    return parts[1]


def _closure(name: str) -> frozenset[str]:
    seen: set[str] = set()
    todo = list(BUILDS_ON.get(name, ()))
    while todo:
        below = todo.pop()
        if below not in seen:
            seen.add(below)
            todo.extend(BUILDS_ON.get(below, ()))
    return frozenset(seen)


def allowed(importer: str, imported: str) -> bool:
    """Whether unit ``importer`` may import unit ``imported``."""
    if importer in (imported, TOP):
        return True
    if importer in BASE:
        return imported in BASE[importer]
    return imported in BASE or imported in _closure(importer)


def _cycles(edges: list[Import]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.source, set()).add(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def _report(title: str, lines: list[str]) -> str:
    return title + ":\n  " + "\n  ".join(lines)


# ----------------------------------------------------------------------------- the table


def test_layer_table_is_a_hierarchy():
    known = set(BASE) | set(BUILDS_ON) | {TOP}
    unknown = sorted(
        f"{name} builds on unknown {below!r}"
        for name, belows in BUILDS_ON.items()
        for below in belows
        if below not in known
    )
    upward = sorted(name for name in BUILDS_ON if name in _closure(name))
    assert not unknown, _report("BUILDS_ON names units it does not place", unknown)
    assert not upward, _report("BUILDS_ON has a cycle through", upward)


def test_every_module_has_a_layer():
    placed = set(BASE) | set(BUILDS_ON) | {TOP}
    unplaced = sorted(
        f"{SOURCES[m].relative_to(SRC.parent)}: unit {unit(m)!r}"
        for m in MODULES
        if unit(m) not in placed
    )
    assert not unplaced, _report(
        "modules without a layer (place them in BASE or BUILDS_ON of tests/test_layering.py)",
        unplaced,
    )


# ------------------------------------------------------------------------------- checks


def test_imports_follow_the_layers():
    wrong = [
        f"{imp}: {unit(imp.source)!r} may not import {unit(imp.target)!r}"
        for imp in TUMBLE_IMPORTS
        if not allowed(unit(imp.source), unit(imp.target))
    ]
    for imp in IMPORTS:
        limit = THIRD_PARTY.get(unit(imp.source))
        third_party = imp.target.split(".")[0] not in (*sys.stdlib_module_names, "tumble")
        if limit is not None and third_party and imp.target not in limit:
            wrong.append(f"{imp}: {unit(imp.source)!r} may use only {sorted(limit)}")
    assert not wrong, _report("imports against DESIGN.md's layering", wrong)


def test_no_module_uses_another_modules_private_names():
    private = [line for w in WALKERS.values() for line in (*w.private, *w.private_attributes())]
    assert not private, _report(
        "private names taken from another module (make them public names of a private "
        "module, such as tumble._validate, or keep them at home)",
        private,
    )


def test_no_import_cycle():
    # Only the command line may import lazily to break a cycle; every other import counts.
    edges = [
        imp
        for imp in TUMBLE_IMPORTS
        if imp.source != imp.target and not (imp.lazy and unit(imp.source) == TOP)
    ]
    lines = []
    for component in _cycles(edges):
        members = set(component)
        lines.append(" <-> ".join(component))
        lines += [f"  {e}" for e in edges if e.source in members and e.target in members]
    assert not lines, _report("import cycles", lines)


def _reachable(start: str) -> dict[str, Import]:
    """Every module ``start`` imports, directly or not, with the import that reached it."""
    reached: dict[str, Import] = {}
    todo = [start]
    while todo:
        module = todo.pop()
        for imp in TUMBLE_IMPORTS:
            if imp.source == module and imp.target not in reached and imp.target != start:
                reached[imp.target] = imp
                todo.append(imp.target)
    return reached


def test_rotation_does_not_import_transform():
    reached = _reachable("tumble.rotation")
    path = []
    module = "tumble.transform"
    while module in reached:
        path.append(str(reached[module]))
        module = reached[module].source
    assert not path, _report("tumble.rotation reaches tumble.transform", path[::-1])


def _loaded_by(module: str) -> list[str]:
    """The tumble modules a fresh interpreter holds after ``import module``.

    A cycle that the static checks miss (an import made by ``importlib``) shows here, and
    one between module-level imports fails as an ImportError of a partly initialised module.
    """
    code = f"import sys, {module}; print(sorted(m for m in sys.modules if m.startswith('tumble')))"
    path = os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH")) if p)
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
        check=False,
    )
    assert run.returncode == 0, f"import {module} failed:\n{run.stderr}"
    return ast.literal_eval(run.stdout.strip().splitlines()[-1])


def test_rotation_and_transform_import_without_a_cycle():
    assert "tumble.transform" not in _loaded_by("tumble.rotation"), (
        "importing tumble.rotation loads tumble.transform"
    )
    assert "tumble.rotation" in _loaded_by("tumble.transform")


# --------------------------------------------------------------------------- lazy names


def _type_checking_names(module: str) -> dict[str, str]:
    """The names a module imports under ``if TYPE_CHECKING:``, each with its module (the
    modules imported there for annotations left out)."""
    names: dict[str, str] = {}
    for node in ast.parse(SOURCES[module].read_text(encoding="utf-8")).body:
        if not (isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"):
            continue
        for imp in node.body:
            assert isinstance(imp, ast.ImportFrom), ast.unparse(imp)
            origin = _resolve(imp.module, imp.level, module)
            for alias in imp.names:
                if f"{origin}.{alias.name}" not in MODULES:
                    names[alias.asname or alias.name] = origin
    return names


#: The modules whose names load on first access (``tumble._lazy.lazy_names``).
LAZY = sorted(m for m, w in WALKERS.items() if any(i.target == "tumble._lazy" for i in w.imports))


def test_lazy_names_are_those_type_checkers_see():
    """A lazily bound name is imported for type checkers from the module it loads from,
    is listed by ``dir``, resolves to that module's object and is then stored, so that
    later accesses are plain lookups."""
    import importlib

    assert LAZY == ["tumble.compare", "tumble.rigid", "tumble.sweep"]
    for name in LAZY:
        module = importlib.import_module(name)
        static = _type_checking_names(name)
        assert module._LAZY == static, name
        assert set(static) <= set(dir(module)), name
        assert set(static) <= set(module.__all__), name
        for attr, origin in static.items():
            value = getattr(importlib.import_module(origin), attr)
            assert getattr(module, attr) is value, f"{name}.{attr}"
            assert vars(module)[attr] is value, f"{name}.{attr} was not stored"
        with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
            module.no_such_name  # noqa: B018
