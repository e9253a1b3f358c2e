"""How much of a product of test cases a run takes.

A test over every method and every torque model compiles one loop per pair (numba
specialises each loop per method and per model structure): minutes of CPU from an empty
cache. The default run, ``./dev test`` and CI, takes a cover of such a product instead,
built on where a model's code runs in a step:

* every model under one method of each kernel form (:data:`FORM_COVER`): a model reaches a
  step through its form alone (the held step's body torque, the Strang kicks of a flow and
  of a splitting, the staged slopes of ``rk4``), so the cover runs every compiled path of
  every model;
* every method under one model (:func:`cover`'s ``cover_model``), in the tests where the
  method's own code meets the torque (``tests/test_torques.py`` says which);

and the tests over every method take tumble's own (:data:`EVERY_METHOD`): the engines'
replicas are held steps (MuJoCo's RK4 a staged one) through the loops those cover, and
their own code, the step, is checked in ``tests/test_engines.py`` (the engines' formulas,
orders, and the engines themselves) and ``tests/test_methods.py`` (their records).

``./dev full`` (``TUMBLE_FULL=1``) runs the whole product.
"""

from __future__ import annotations

import os

from tumble import engines, rigid

#: Run every product in full.
FULL = os.environ.get("TUMBLE_FULL") == "1"

#: The methods of a test over every method: all of them with ``TUMBLE_FULL=1``, else
#: tumble's own (not the engines' replicas).
EVERY_METHOD: tuple[str, ...] = (
    rigid.METHODS if FULL else tuple(m for m in rigid.METHODS if m not in engines.ENGINES)
)

#: One method of each kernel form: a held first-order step, a free flow, a splitting, and
#: the staged ``rk4``.
FORM_COVER = ("momentum_first", "midpoint", "splitting", "rk4")


def cover(
    method: str, model: str | None, cover_model: str | None, every_method: bool = True
) -> bool:
    """Whether the default run takes the pair ``(method, model)``: every model under the
    methods of :data:`FORM_COVER`, and, where ``every_method``, every method under
    ``cover_model`` (all pairs with ``TUMBLE_FULL=1``)."""
    return FULL or method in FORM_COVER or (every_method and model == cover_model)
