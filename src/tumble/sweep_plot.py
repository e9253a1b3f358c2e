"""The public path ``tumble.sweep_plot`` of the sweep heat maps, which live in
:mod:`tumble.sweep.plot` since sweeps became a package: the same objects, re-exported."""

from __future__ import annotations

from tumble.sweep.plot import AXES, REDUCERS, add_arguments, heat_maps, plot, run

__all__ = ["AXES", "REDUCERS", "add_arguments", "heat_maps", "plot", "run"]
