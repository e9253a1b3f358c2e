"""The lab's method list in groups (``GET /api/groups``): the article's methods, higher
order, and the engines, each replica under its engine.

The groups are read from the registries, not written out: a method added to
:data:`tumble.methods.REGISTRY` lands in "The article's methods" (order below
:data:`HIGHER_ORDER`) or "Higher order", a replica added to :data:`tumble.engines.ENGINES`
under its engine (:data:`tumble.engines.BY_ENGINE`). Only :data:`FEATURED` is a choice:
which compositions ``"<base>:<scheme>"`` (:data:`tumble.rigid.COMPOSITIONS`) the list offers
without being asked. The page's address may name any other one; :func:`method_row`
validates it as every method name is validated (:func:`tumble.rigid.check_method`).
"""

from __future__ import annotations

import math
from typing import Any

from tumble import engines, figures, rigid

__all__ = [
    "FEATURED",
    "GROUPS",
    "HIGHER_ORDER",
    "group_of",
    "group_table",
    "listed",
    "method_row",
]

#: The compositions the list offers, with why: the most accurate per CPU second of each
#: order in the error-versus-cost study of ``docs/integrators.md`` ("Higher order", the
#: table of CPU time for 1e-6 rad at ``t = 100``; ``BENCHMARKS.md``, sections
#: ``pareto-*``). Any other composition can be named in the page's address.
FEATURED: dict[str, str] = {
    "symmetric_top_split:suzuki4": (
        "the best fourth order per CPU second on the peer body, the heavy top and the "
        "gravity-gradient satellite"
    ),
    "symmetric_top_split:mclachlan4": (
        "the best fourth order per CPU second on the article's body"
    ),
    "symmetric_top_split:kahanli6": (
        "the best sixth order, and the most accurate method per CPU second on every "
        "problem measured"
    ),
    "splitting:kahanli6": (
        "the sixth order for a torque that leaves no symmetry to use (passes rk4 on the "
        "heavy top from t ≈ 4)"
    ),
}

#: Registry methods of at least this order are "Higher order" (``rk4``); the exact solution
#: is the reference, listed in no group.
HIGHER_ORDER = 3

#: The groups, in the page's order: id -> (title, note).
GROUPS: dict[str, tuple[str, str]] = {
    "article": (
        "The article's methods",
        "the first- and second-order integrators of the source article and its references",
    ),
    "higher": (
        "Higher order",
        "fourth and sixth order: rk4 and the compositions '<base>:<scheme>' of a "
        "time-symmetric method (the address may name any other)",
    ),
    "engines": (
        "Engines",
        "replicas of public physics engines' rotation updates, each under its engine; "
        "'default' marks the engine's default setting",
    ),
}


def group_of(name: str) -> str:
    """The group id of a method name: ``"engines"`` for a replica of
    :data:`tumble.engines.ENGINES`, ``"higher"`` for a composition or a registry method of
    order :data:`HIGHER_ORDER` or more, else ``"article"``.

    Raises
    ------
    tumble.InputError
        ``name`` is not a method name (:func:`tumble.rigid.check_method`).
    """
    info = rigid.check_method(name, "name")
    if name in engines.ENGINES:
        return "engines"
    if info.name != info.base or (info.order >= HIGHER_ORDER and not math.isinf(info.order)):
        return "higher"
    return "article"


def listed() -> tuple[str, ...]:
    """Every method the list offers: :data:`tumble.rigid.METHODS` (in its order, ``"exact"``
    among them: the page draws it as the reference), then :data:`FEATURED`."""
    return (*rigid.METHODS, *FEATURED)


def _dash(name: str) -> str:
    """The line style of a method: :func:`tumble.figures.dashes` for a registry method; a
    composition takes one of the other styles of :data:`tumble.figures.DASHES`, chosen by
    the scheme's place in :data:`tumble.rigid.COMPOSITIONS`, so that it differs from its
    base (whose hue it shares, :func:`tumble.figures.color`) and from the siblings next to
    it."""
    info = rigid.check_method(name, "name")
    base = figures.dashes()[info.base]
    if info.base == info.name:
        return base
    others = [style for style in figures.DASHES if style != base]
    k = list(rigid.COMPOSITIONS).index(info.name.split(":", 1)[1])
    return others[k % len(others)]


def method_row(name: str, shown_at_start: tuple[str, ...] = ()) -> dict[str, Any]:
    """One object of ``GET /api/methods`` (also ``GET /api/methods/{name}``, for a
    composition the list does not offer).

    Keys: ``name``, ``description`` (one line), ``order`` (``null`` for the exact
    solution), ``conserves``, ``shown_at_start``, ``group`` (:func:`group_of`), ``engine``
    (the engine's display name for a replica, else ``null``), ``featured`` (why the list
    offers a composition of :data:`FEATURED`, else ``null``), ``color``
    (:func:`tumble.figures.color`), ``dash`` (a plotly line style) and ``properties`` (the
    rest of its record, as ``docs/integrators.md`` writes it), all from
    :func:`tumble.rigid.method_info`.

    Raises
    ------
    tumble.InputError
        ``name`` is not a method name; the message names ``name`` and says why.
    """
    info = rigid.check_method(name, "name")
    replica = engines.ENGINES.get(name)
    return {
        "name": name,
        "description": info.description,
        "order": None if math.isinf(info.order) else info.order,
        "conserves": list(info.conserves),
        "shown_at_start": name in shown_at_start,
        "group": group_of(name),
        "engine": None if replica is None else replica.engine,
        "featured": FEATURED.get(name),
        "color": figures.color(name),
        "dash": _dash(name),
        "properties": {
            "order": info.order_label,
            "L_norm": info.L_norm,
            "L_world": info.L_world,
            "energy": info.energy,
            "symmetric_top": info.exact_for_label,
            "cost": info.cost,
        },
    }


def group_table() -> list[dict[str, Any]]:
    """The body of ``GET /api/groups``: the groups of :data:`GROUPS` in order, each
    ``{"id", "title", "note", "sections"}``; a section is ``{"engine", "methods",
    "defaults"}``: one section with ``engine`` ``null`` for the article's methods and for
    higher order, one per engine of :data:`tumble.engines.BY_ENGINE` (its replicas in that
    order, ``defaults`` those whose record says ``default``). Every method of
    :func:`listed` but ``"exact"`` (the reference) is in exactly one section.
    """
    by_group: dict[str, list[str]] = {g: [] for g in GROUPS}
    for name in listed():
        if name != figures.REFERENCE.method:
            by_group[group_of(name)].append(name)
    out = []
    for gid, (title, note) in GROUPS.items():
        sections: list[dict[str, Any]]
        if gid == "engines":
            sections = [
                {
                    "engine": engine,
                    "methods": list(names),
                    "defaults": [n for n in names if engines.ENGINES[n].default],
                }
                for engine, names in engines.BY_ENGINE.items()
            ]
        else:
            sections = [{"engine": None, "methods": by_group[gid], "defaults": []}]
        out.append({"id": gid, "title": title, "note": note, "sections": sections})
    return out
