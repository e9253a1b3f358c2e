"""The public path ``tumble.sweep_plot`` of the sweep heat maps, which live in
:mod:`tumble.sweep.plot` since sweeps became a package: the same objects, re-exported."""

from __future__ import annotations

from tumble.sweep.plot import (
    AXES,
    COLOR_FLOOR,
    REDUCERS,
    add_arguments,
    color_range,
    heat_maps,
    plot,
    run,
)

__all__ = [
    "AXES",
    "COLOR_FLOOR",
    "REDUCERS",
    "add_arguments",
    "color_range",
    "heat_maps",
    "plot",
    "run",
]
