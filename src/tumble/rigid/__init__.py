"""Rigid-body rotation: inertia, torque to angular acceleration, and the integrator family.

Conventions: ``q`` ``(..., 4)`` is the unit quaternion (scalar first) taking body to world
coordinates, ``R`` its matrix; ``omega`` ``(..., 3)`` is the **world** angular velocity;
``inv_inertia`` ``(..., 3)`` holds the principal inverse moments ``J = diag(J1, J2, J3)`` in
the body frame (= principal frame). ``I = J⁻¹``, world ``J_w = R J Rᵀ``, ``I_w = R I Rᵀ``,
``L = I_w omega``, ``E = ½ omega·L``. Torque ``tau`` is in the world frame. Formulas follow
``shared/reference/rigid-body-integrators.md``.

Zero inverse moments
--------------------
``J_i = 0`` is an axis that cannot turn: a constraint holds the body-frame angular velocity
on it at zero, as Jolt's locked axes do. The constraint torque absorbs the momentum along
such an axis, so ``L`` counts only the free axes (``I_i = 0`` there: the pseudo-inverse)
and the component of ``omega`` along a locked body axis is ignored. The exact constrained
motion without torque is then a steady rotation about a body-fixed axis (Euler's equations
with ``omega_i = 0`` leave the other components constant). Every method accepts such
bodies (each step starts by clearing the locked momentum) except those whose registry
record says ``locked_axes=False`` (``"implicit"``, whose Newton residual is written in
``I = J⁻¹``): they raise :class:`~tumble.InputError`. The registry's order and
conservation statements are for bodies with all ``J_i > 0``.

Methods
-------
The integrators are the records of the registry :mod:`tumble.methods`:
:data:`METHODS` lists their names and :func:`method_info` returns one record (order, what
it conserves, time symmetry, what it is exact for, how it takes torque, cost). A
time-symmetric method also composes into fourth- and sixth-order methods named
``"<base>:<scheme>"`` with a scheme of :data:`COMPOSITIONS` (:mod:`tumble.compositions`);
:func:`check_method` validates any name. Each
method's equations are in its kernel's docstring in :mod:`tumble._kernels.rigid` and in
``docs/integrators.md``, with measured costs; every method takes the torque as constant

Modules
-------
This package's ``__init__`` holds the registry's names and imports no numba, so that
listing and validating methods (``rigid.METHODS``, :func:`method_info`,
``tumble compare --help``) costs no compilation and no numba import. The compiled half
loads on the first access of one of its names (PEP 562, :mod:`tumble._lazy`), and is then
an ordinary attribute:

* :mod:`~tumble.rigid.dynamics`: inertia and torque to angular acceleration
  (:func:`world_inverse_inertia`, :func:`angular_momentum`, :func:`energy`,
  :func:`angular_acceleration`, :func:`principal_axes`);
* :mod:`~tumble.rigid.integrate`: the integrators, :func:`step` and :func:`simulate`;
* :mod:`~tumble.rigid.divergence`: what a non-finite result means, an input that overflows
  (:class:`~tumble.InputError`) or a method that diverged (:class:`DivergenceWarning`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tumble import compositions as _compositions
from tumble._lazy import lazy_names
from tumble.methods import NAMES, REGISTRY, method_info
from tumble.methods import check as check_method
from tumble.rigid.divergence import DivergenceWarning
from tumble.trajectory import Trajectory

if TYPE_CHECKING:
    from tumble.rigid.dynamics import (
        angular_acceleration,
        angular_momentum,
        energy,
        principal_axes,
        world_inverse_inertia,
    )
    from tumble.rigid.integrate import simulate, step

__all__ = [
    "COMPOSITIONS",
    "METHODS",
    "ORDERS",
    "DivergenceWarning",
    "Trajectory",
    "angular_acceleration",
    "angular_momentum",
    "check_method",
    "energy",
    "method_info",
    "principal_axes",
    "simulate",
    "step",
    "world_inverse_inertia",
]

METHODS: tuple[str, ...] = NAMES
"""Names of the integrators of :func:`step` and :func:`simulate` (see :func:`method_info`)."""

COMPOSITIONS = _compositions.COMPOSITIONS
"""The composition schemes by name (:class:`tumble.compositions.Composition`: order, stages,
coefficients, citation); ``"<base>:<scheme>"`` runs one (:func:`method_info`)."""

ORDERS: dict[str, float] = {info.name: info.order for info in REGISTRY}
"""Global order of the attitude error of each method (``inf``: exact; 0: inconsistent)."""

#: The compiled half: each name and the module that defines it (as imported for type
#: checkers above; a test holds the two to each other), imported on first access.
_LAZY = {
    **dict.fromkeys(
        (
            "angular_acceleration",
            "angular_momentum",
            "energy",
            "principal_axes",
            "world_inverse_inertia",
        ),
        "tumble.rigid.dynamics",
    ),
    **dict.fromkeys(("simulate", "step"), "tumble.rigid.integrate"),
}

__getattr__, __dir__ = lazy_names(globals(), _LAZY)
