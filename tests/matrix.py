"""How much of a product of test cases a run takes.

A test over every method and every torque model compiles one loop per pair (numba
specialises each loop per method and per model structure): minutes of CPU from an empty
cache. The default run, ``./dev test`` and CI, takes a cover of such a product instead:
every method under :data:`COVER_MODEL`, and every model under one method of each kernel
form (:data:`FORM_COVER`). A step reaches a torque model through its form alone (the held
step's kicks, a flow's Strang kicks, a splitting's kicks, the staged slopes), so the cover
runs every compiled path; ``./dev full`` (``TUMBLE_FULL=1``) runs the whole product.
"""

from __future__ import annotations

import os

#: Run every product in full.
FULL = os.environ.get("TUMBLE_FULL") == "1"

#: One method of each kernel form: a held first-order step, a free flow, a splitting, and
#: the staged ``rk4``.
FORM_COVER = ("momentum_first", "midpoint", "splitting", "rk4")


def cover(method: str, model: str | None, cover_model: str | None) -> bool:
    """Whether the default run takes the pair ``(method, model)``: every method under
    ``cover_model``, every model under the methods of :data:`FORM_COVER` (all pairs with
    ``TUMBLE_FULL=1``)."""
    return FULL or model == cover_model or method in FORM_COVER
