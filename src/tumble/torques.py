"""Torque models that run inside the compiled step loop of :mod:`tumble.rigid`.

A model is built from the functions below and passed as ``torque=`` to
:func:`tumble.rigid.step` and :func:`tumble.rigid.simulate`; models add with ``+``
(``gravity(...) + damping(0.1)``). Every parameter broadcasts over the batch of bodies,
together with ``q``, ``omega`` and ``inv_inertia``. All torques are world-frame vectors
acting on the body about the point its inertia is taken about (the centre of mass of a
free body, the pivot of a top).

================================  ======================================  ==================
model                             world torque ``tau(t, q, omega)``       potential
================================  ======================================  ==================
``constant(tau)``                 ``tau`` (``R tau_b``: ``frame="body"``)  none
``gravity(m, g, c)``              ``(R c) × (m g)``                       ``-m g·(R c)``
``gravity_gradient(n, z)``        ``3 n² z × (I_w z)``                    ``3/2 n² z·I_w z``
``damping(c)``                    ``-c omega``                            none
``attitude_control(qt, kp, kd)``  ``-kp e - kd omega``, ``e=log(q qt*)``  ``½ kp |e|²``, kd=0
``periodic(A, Om, phi)``          ``A cos(Om t + phi)`` (or ``R A cos``)  none
``custom(fn)``                    ``fn(t, q, omega)``                     none
================================  ======================================  ==================

``R`` is the body-to-world rotation of ``q``, ``I_w = R I Rᵀ`` the world inertia, ``e``
the world rotation vector from the target attitude to ``q`` (short arc, ``|e| <= pi``).
How each integrator applies the torque (once per step, Strang half kicks, Runge-Kutta
stages) is its registry record's ``torque`` field (:func:`tumble.rigid.method_info`); see
``docs/torques.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba.core.registry import CPUDispatcher
from numpy.typing import ArrayLike

from tumble._errors import InputError
from tumble._kernels import inertia as _inertia
from tumble._kernels import torques as _k
from tumble._kernels.dispatch import plain_arrays
from tumble._validate import (
    as_choice,
    as_float_array,
    as_scalar,
    broadcast_leading,
    check_finite_result,
    describe,
)
from tumble.rotation import (
    quat_conjugate,
    quat_multiply,
    quat_to_matrix,
    quat_to_rotvec,
    unit_quat,
)

__all__ = [
    "TorqueModel",
    "attitude_control",
    "constant",
    "custom",
    "damping",
    "evaluate",
    "gravity",
    "gravity_gradient",
    "periodic",
    "potential_energy",
    "reference",
]

#: How far ``|nadir|`` may be from 1 (a unit vector computed in float32 is within 1e-7).
NADIR_TOLERANCE = 1e-6

#: Tolerances of :func:`reference` (DOP853): the tightest that stay above round-off.
REFERENCE_RTOL = 1e-13
REFERENCE_ATOL = 1e-14


@dataclass(frozen=True)
class _Term:
    """One term of a model: its kernel kind, its parameters (batch + (width,)) and, for a
    ``custom`` term, the compiled function."""

    kind: int
    name: str
    params: np.ndarray
    fn: Any = None


class TorqueModel:
    """A sum of torque terms, evaluated inside the compiled step loops.

    Build one with :func:`constant`, :func:`gravity`, :func:`gravity_gradient`,
    :func:`damping`, :func:`attitude_control`, :func:`periodic` or :func:`custom`, and add
    models with ``+``. ``batch`` is the broadcast batch shape of the parameters (``()`` when
    every term is shared by all bodies).
    """

    __slots__ = ("_scalar_args", "_terms", "batch")

    def __init__(self, terms: tuple[_Term, ...]) -> None:
        if not isinstance(terms, tuple) or not all(isinstance(t, _Term) for t in terms):
            raise InputError(
                "terms: expected the terms of tumble.torques models (build models with "
                f"torques.gravity(...), torques.damping(...), ... and +), got {describe(terms)}"
            )
        self._terms = terms
        self._scalar_args: tuple[Any, np.ndarray, Any] | None = None
        if sum(term.fn is not None for term in terms) > 1:
            raise InputError(
                "torque: expected at most one custom term in a model (combine the functions "
                "into one), got " + str(sum(term.fn is not None for term in terms))
            )
        self.batch: tuple[int, ...] = broadcast_leading(
            **{f"torque term {i} ({t.name})": (t.params, 1) for i, t in enumerate(terms)}
        )

    def __add__(self, other: object) -> TorqueModel:
        if not isinstance(other, TorqueModel):
            return NotImplemented
        return TorqueModel(self._terms + other._terms)

    def __radd__(self, other: object) -> TorqueModel:
        if isinstance(other, int) and other == 0:  # sum(models)
            return self
        return NotImplemented

    def __repr__(self) -> str:
        return " + ".join(t.name for t in self._terms) or "TorqueModel(())"

    @property
    def names(self) -> tuple[str, ...]:
        """The kinds of the terms, in order (``"gravity"``, ``"damping"``, ...)."""
        return tuple(t.name for t in self._terms)

    @property
    def conservative(self) -> bool:
        """True if every term derives from a potential (:func:`potential_energy` works)."""
        return all(_conservative(t) for t in self._terms)

    @property
    def has_custom(self) -> bool:
        """True if a term runs a user's compiled function."""
        return any(t.fn is not None for t in self._terms)

    def kernel_args(self, batch: tuple[int, ...]) -> tuple[Any, np.ndarray, Any]:
        """``(kinds, P, fn)`` for the compiled loops over the flattened ``batch``.

        ``P`` holds each body's parameters as one float64 row (N, W): every term's block
        broadcast to ``batch`` and flattened. ``kinds`` (:func:`tumble._kernels.torques.kinds_of`)
        is None for the empty model, which the kernels compile apart so that torque-free
        runs pay nothing for torque.
        """
        if not batch and self._scalar_args is not None:
            return self._scalar_args
        n = int(np.prod(batch, dtype=np.int64))
        kinds = _k.kinds_of(tuple(t.kind for t in self._terms))
        # Explicit widths: reshape(0, -1) of an empty batch is ambiguous to NumPy.
        blocks = [
            np.broadcast_to(t.params, (*batch, t.params.shape[-1])).reshape(n, t.params.shape[-1])
            for t in self._terms
        ]
        P = np.ascontiguousarray(np.concatenate(blocks, axis=1) if blocks else np.empty((n, 0)))
        fn = next((t.fn for t in self._terms if t.fn is not None), None)
        if not batch:
            # One body's arguments, kept: the single-body step reuses them on every call.
            self._scalar_args = (kinds, P, fn)
        return kinds, P, fn


NO_TORQUE = TorqueModel(())
"""The empty model (torque-free motion)."""


def _conservative(term: _Term) -> bool:
    if term.kind in (_k.GRAVITY, _k.GRAVITY_GRADIENT):
        return True
    return term.kind == _k.ATTITUDE_CONTROL and bool(np.all(term.params[..., 5] == 0))


def _vector(x: ArrayLike, name: str) -> np.ndarray:
    return as_float_array(x, name, (3,), dtype=np.dtype(np.float64))


def _scalar_array(x: ArrayLike, name: str, minimum: float | None = None) -> np.ndarray:
    a = as_float_array(x, name, dtype=np.dtype(np.float64))
    if minimum is not None and np.any(a < minimum):
        raise InputError(f"{name}: expected values >= {minimum}, got minimum {a.min()}")
    return a


def _term(kind: int, name: str, *parts: np.ndarray, fn: Any = None) -> TorqueModel:
    """One term from its parameter parts (each batch + (k,)), broadcast together."""
    named = {f"{name} parameter {i}": (p, 1) for i, p in enumerate(parts)}
    batch = broadcast_leading(**named)
    params = np.concatenate([np.broadcast_to(p, (*batch, p.shape[-1])) for p in parts], axis=-1)
    return TorqueModel((_Term(kind, name, params, fn),))


def constant(torque: ArrayLike, frame: str = "world") -> TorqueModel:
    """A constant torque, fixed in the world (``frame="world"``) or in the body.

    Parameters
    ----------
    torque : array_like, shape (..., 3)
        ``tau`` (world frame) or ``tau_b`` (body frame: the world torque is ``R tau_b``).
    frame : {"world", "body"}

    Not conservative: no potential on SO(3) has a constant gradient.
    """
    frame = as_choice(frame, "frame", ("world", "body"))
    kind = _k.CONSTANT_WORLD if frame == "world" else _k.CONSTANT_BODY
    return _term(kind, f"constant ({frame})", _vector(torque, "torque"))


def gravity(mass: ArrayLike, gravity: ArrayLike, center_of_mass: ArrayLike) -> TorqueModel:
    """Uniform gravity on a body pivoting about a fixed point (a heavy top).

    ``tau = (R c) × (m g)``: the weight ``m g`` acting at the centre of mass, whose position
    from the pivot is ``R c`` in the world. Potential ``V = -m g·(R c)``.

    The inertia passed to :mod:`tumble.rigid` must be the one **about the pivot**: for a
    body whose principal moments about its centre of mass are ``I_cm`` and whose centre of
    mass lies on a principal axis at distance ``d`` from the pivot, the parallel-axis
    theorem gives ``I_pivot = I_cm + m d² (1 - e e)`` (``e`` the unit axis; ``docs/torques.md``
    works it through). Pivoting at the centre of mass (``c = 0``) gives no torque.

    Parameters
    ----------
    mass : array_like, shape (...)
        ``m >= 0``.
    gravity : array_like, shape (..., 3)
        ``g``, world frame (say ``(0, 0, -9.81)``).
    center_of_mass : array_like, shape (..., 3)
        ``c``: the centre of mass relative to the pivot, body coordinates.
    """
    m = _scalar_array(mass, "mass", minimum=0.0)
    g = _vector(gravity, "gravity")
    c = _vector(center_of_mass, "center_of_mass")
    broadcast_leading(mass=(m, 0), gravity=(g, 1), center_of_mass=(c, 1))
    with np.errstate(over="ignore"):
        weight = m[..., None] * g
    check_finite_result("mass, gravity", "the weight m g", weight)
    return _term(_k.GRAVITY, "gravity", weight, c)


def gravity_gradient(mean_motion: ArrayLike, nadir: ArrayLike) -> TorqueModel:
    """The gravity-gradient torque on a satellite: ``tau = 3 n² ẑ × (I_w ẑ)``.

    ``n`` is the orbit's mean motion (``n² = mu / r³``) and ``ẑ`` the unit world vector from
    the body towards the central body; ``I_w = R I Rᵀ`` is the body's world inertia about
    its centre of mass (``I = 1/inv_inertia``). Potential ``V = 3/2 n² ẑ·I_w ẑ`` (up to a
    constant), lowest with the axis of least inertia along ``ẑ``. ``ẑ`` is held fixed:
    this is the torque at one point of the orbit (or in a frame where it is fixed).

    Parameters
    ----------
    mean_motion : array_like, shape (...)
        ``n >= 0`` (rad per unit time).
    nadir : array_like, shape (..., 3)
        ``ẑ``, a unit vector (``||ẑ| - 1| <= 1e-6``; it is renormalised).
    """
    n = _scalar_array(mean_motion, "mean_motion", minimum=0.0)
    z = _vector(nadir, "nadir")
    with np.errstate(over="ignore"):  # |nadir|² beyond the float range: an inf norm, refused
        norm = np.linalg.norm(z, axis=-1, keepdims=True)
    if np.any(np.abs(norm - 1.0) > NADIR_TOLERANCE):
        raise InputError(
            f"nadir: expected a unit vector (|nadir| = 1 within {NADIR_TOLERANCE}), "
            f"got |nadir| = {float(norm.flat[np.argmax(np.abs(norm - 1.0))])}"
        )
    broadcast_leading(mean_motion=(n, 0), nadir=(z, 1))
    with np.errstate(over="ignore"):
        strength = 3.0 * n * n
    check_finite_result("mean_motion", "3 n²", strength)
    return _term(_k.GRAVITY_GRADIENT, "gravity_gradient", strength[..., None], z / norm)


def damping(coefficient: ArrayLike) -> TorqueModel:
    """Viscous damping of the rotation: ``tau = -c omega`` (world). Not conservative.

    Parameters
    ----------
    coefficient : array_like, shape (...)
        ``c >= 0``.
    """
    c = _scalar_array(coefficient, "coefficient", minimum=0.0)
    return _term(_k.DAMPING, "damping", c[..., None])


def attitude_control(target: ArrayLike, stiffness: ArrayLike, damping: ArrayLike) -> TorqueModel:
    """A PD attitude law towards ``target``: ``tau = -k_p e - k_d omega``.

    ``e = log(q ⊗ target*)`` is the world rotation vector from the target to the current
    attitude, on the short arc (``|e| <= pi``), so the torque turns the body back along the
    shortest rotation; ``omega`` is the world angular velocity. This is the torque a
    reaction-wheel controller applies. With ``k_d = 0`` it is conservative, ``V = ½ k_p
    |e|²`` (the gradient of ``|e|²/2`` on SO(3) is ``e`` itself).

    Parameters
    ----------
    target : array_like, shape (..., 4)
        Target body-to-world quaternion (normalised).
    stiffness, damping : array_like, shape (...)
        ``k_p >= 0``, ``k_d >= 0``.
    """
    qt = unit_quat(target, "target", np.dtype(np.float64))
    kp = _scalar_array(stiffness, "stiffness", minimum=0.0)
    kd = _scalar_array(damping, "damping", minimum=0.0)
    broadcast_leading(target=(qt, 1), stiffness=(kp, 0), damping=(kd, 0))
    return _term(_k.ATTITUDE_CONTROL, "attitude_control", qt, kp[..., None], kd[..., None])


def periodic(
    amplitude: ArrayLike,
    angular_frequency: ArrayLike,
    phase: ArrayLike = 0.0,
    frame: str = "world",
) -> TorqueModel:
    """A harmonic torque ``tau = A cos(Omega t + phi)``, world or body frame.

    With ``frame="body"`` the world torque is ``R A cos(Omega t + phi)``. ``Omega = 0``
    gives :func:`constant` with ``A cos(phi)``. Time starts at 0 at the start of a
    :func:`tumble.rigid.simulate` run (and is 0 in :func:`tumble.rigid.step`).

    Parameters
    ----------
    amplitude : array_like, shape (..., 3)
    angular_frequency : array_like, shape (...)
        ``Omega`` (rad per unit time).
    phase : array_like, shape (...), optional
    frame : {"world", "body"}
    """
    frame = as_choice(frame, "frame", ("world", "body"))
    A = _vector(amplitude, "amplitude")
    w = _scalar_array(angular_frequency, "angular_frequency")
    p = _scalar_array(phase, "phase")
    broadcast_leading(amplitude=(A, 1), angular_frequency=(w, 0), phase=(p, 0))
    kind = _k.PERIODIC_WORLD if frame == "world" else _k.PERIODIC_BODY
    return _term(kind, f"periodic ({frame})", A, w[..., None], p[..., None])


def custom(fn: Callable[..., Any]) -> TorqueModel:
    """A user's compiled torque ``fn(t, q, omega) -> tau`` (world), run inside the loop.

    ``fn`` must be a ``numba.njit`` function of one body: ``t`` a float, ``q`` a 4-tuple
    (body-to-world unit quaternion, scalar first) and ``omega`` a 3-tuple (world angular
    velocity); it returns a 3-tuple or a length-3 array. It is called once here to check
    that. Each new function compiles the step loop once (a few seconds) for the methods
    it is used with. Not conservative. The symmetric methods take its half kicks by an
    implicit midpoint (second order), the others as for any torque.

    Example::

        @numba.njit
        def spring(t, q, omega):
            return (-2.0 * q[1], -2.0 * q[2], -2.0 * q[3])

        model = torques.custom(spring)
    """
    if not isinstance(fn, CPUDispatcher):
        raise InputError(
            f"fn: expected a numba.njit-compiled function fn(t, q, omega), got {describe(fn)}"
        )
    try:
        result = fn(0.0, (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    except Exception as exc:
        raise InputError(
            "fn: calling fn(0.0, (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0)) failed: "
            + str(exc).splitlines()[0]
        ) from None
    shape = np.shape(result)
    if shape != (3,) or np.asarray(result).dtype.kind not in "iuf":
        raise InputError(
            f"fn: expected fn(t, q, omega) to return 3 real numbers (a 3-tuple or an array "
            f"of shape (3,)), got {describe(result)}"
        )
    return TorqueModel((_Term(_k.CUSTOM, "custom", np.empty(0), fn),))


def as_model(torque: Any) -> TorqueModel:
    """``torque`` (None, an array of world torques or a model) as a :class:`TorqueModel`."""
    if torque is None:
        return NO_TORQUE
    if isinstance(torque, TorqueModel):
        return torque
    return constant(torque)


def _model(model: Any) -> TorqueModel:
    if not isinstance(model, TorqueModel):
        raise InputError(f"model: expected a tumble.torques model, got {describe(model)}")
    return model


def evaluate(
    model: TorqueModel, t: float, q: ArrayLike, omega: ArrayLike, inv_inertia: ArrayLike
) -> np.ndarray:
    """The world torque ``tau(t, q, omega)`` of ``model`` on each body, shape (..., 3).

    Runs the same compiled evaluation as the step loops. ``inv_inertia`` (principal inverse
    moments, (..., 3)) matters to the gravity gradient only. An empty batch gives an empty
    result; a torque that is not finite (a product of huge parameters and state, or a custom
    function's NaN) raises :class:`tumble.InputError`.
    """
    m = _model(model)
    tv = as_scalar(t, "t")
    qf, wf, Jf, batch = _bodies(q, omega, inv_inertia, m)
    out = np.empty((qf.shape[0], 3))
    _k.torque_batch(*m.kernel_args(batch), tv, qf, wf, Jf, out)
    check_finite_result(_TORQUE_NAMES, "the torque", out)
    return out.reshape((*batch, 3))


#: The arguments a torque that is not finite is blamed on.
_TORQUE_NAMES = "model, t, q, omega, inv_inertia"


def _bodies(
    q: ArrayLike, omega: ArrayLike, inv_inertia: ArrayLike, model: TorqueModel
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, ...]]:
    """Validated ``q``, ``omega``, ``inv_inertia`` broadcast with ``model``'s parameters and
    flattened to contiguous float64 rows ``(N, 4)``, ``(N, 3)``, ``(N, 3)``; and the batch.
    The rows are plain arrays (:func:`~tumble._kernels.dispatch.plain_arrays`): numba
    compiles the kernels apart for read-only ones (a broadcast view)."""
    qa = unit_quat(q, "q", np.dtype(np.float64))
    wa = _vector(omega, "omega")
    Ja = _vector(inv_inertia, "inv_inertia")
    batch = broadcast_leading(
        q=(qa, 1), omega=(wa, 1), inv_inertia=(Ja, 1), torque=(np.empty((*model.batch, 0)), 1)
    )
    n = int(np.prod(batch, dtype=np.int64))
    qf, wf, Jf = (
        plain_arrays(np.broadcast_to(a, (*batch, a.shape[-1])).reshape(n, a.shape[-1]))
        for a in (qa, wa, Ja)
    )
    return qf, wf, Jf, batch


def potential_energy(
    model: TorqueModel, q: ArrayLike, inv_inertia: ArrayLike | None = None
) -> np.ndarray:
    """Potential energy ``V(q)`` of a conservative model, shape (...): ``tau = -dV/dtheta``.

    The terms' potentials (module table) add; ``E = ½ omega·L + V`` is then conserved by the
    exact motion. ``inv_inertia`` (..., 3) is needed when the model has a gravity gradient
    (its potential involves the inertia ``I = 1/inv_inertia``).

    Raises
    ------
    InputError
        ``model`` has a term without a potential (constant, damping, attitude control with
        ``k_d > 0``, periodic, custom), or a gravity gradient and no ``inv_inertia``.
    """
    m = _model(model)
    for term in m._terms:
        if not _conservative(term):
            raise InputError(
                f"model: expected a conservative model (gravity, gravity_gradient, "
                f"attitude_control with damping 0), got a {term.name} term, which has no "
                "potential energy"
            )
    qa = unit_quat(q, "q", np.dtype(np.float64))
    R = quat_to_matrix(qa)
    V = np.zeros(np.broadcast_shapes(qa.shape[:-1], m.batch))
    with np.errstate(over="ignore", invalid="ignore"):
        V = _potential(m, qa, R, V, inv_inertia)
    check_finite_result("model, q, inv_inertia", "the potential energy", V)
    return V


def _potential(
    m: TorqueModel, qa: np.ndarray, R: np.ndarray, V: np.ndarray, inv_inertia: ArrayLike | None
) -> np.ndarray:
    """``V`` plus the potentials of the terms of the conservative ``m`` at ``qa`` (``R``)."""
    for term in m._terms:
        p = term.params
        if term.kind == _k.GRAVITY:
            V = V - np.einsum("...i,...ij,...j->...", p[..., 0:3], R, p[..., 3:6])
        elif term.kind == _k.GRAVITY_GRADIENT:
            if inv_inertia is None:
                raise InputError(
                    "inv_inertia: expected the principal inverse moments (..., 3), needed by "
                    "the gravity-gradient potential; got None"
                )
            Ja = _vector(inv_inertia, "inv_inertia")
            if np.any(Ja <= 0):
                raise InputError(
                    f"inv_inertia: expected inverse moments > 0, got minimum {Ja.min()}"
                )
            zb = np.einsum("...ji,...j->...i", R, p[..., 1:4])
            V = V + 0.5 * p[..., 0] * np.sum(zb * zb / Ja, axis=-1)
        else:
            e = quat_to_rotvec(quat_multiply(qa, quat_conjugate(p[..., 0:4])))
            V = V + 0.5 * p[..., 4] * np.sum(e * e, axis=-1)
    return V


#: Largest ``t[-1] J_max |L(0)|`` (radians: a bound on the angle the free motion turns
#: through) that :func:`reference` accepts: about 240 turns, which DOP853 at ``rtol =
#: 1e-13`` takes in about 5 300 steps (3.5 per radian), under 4 s of one core (its
#: right-hand side runs in Python, ~0.65 ms per step). The lab's forced runs, at most 100
#: rotations, stay below 950 rad.
MAX_REFERENCE_PHASE = 1500.0

#: Most DOP853 steps :func:`reference` takes (room for a torque that speeds the body up,
#: and for the lab's 100 orbits of the gravity-gradient satellite, 4 700 steps): under 4 s
#: of one core, so that no call runs past 10 s on a loaded machine (issue 27). A solve that
#: needs more (a stiff model, such as heavy damping, or a torque that spins the body far
#: up) raises instead of running for minutes or hours.
MAX_REFERENCE_STEPS = 6_000

#: Steps after which :func:`reference` judges the work left by the step size reached: if
#: the rest of the run would take more than ``MAX_REFERENCE_STEPS`` steps of that size, it
#: raises at once.
_JUDGE_AFTER = 20


def reference(
    q: ArrayLike,
    omega: ArrayLike,
    inv_inertia: ArrayLike,
    torque: TorqueModel | None,
    t: ArrayLike,
) -> tuple[np.ndarray, np.ndarray]:
    """The forced motion by a tight-tolerance ODE solve, to score integrators against.

    Solves, with SciPy's DOP853 at ``rtol = 1e-13``, ``atol = 1e-14``, the world-frame
    equations ``dL_w/dt = tau(t, q, omega)``, ``dq/dt = ½ (0, omega) ⊗ q`` with
    ``omega = R J Rᵀ L_w`` (Euler's equations with torque, written without the gyroscopic
    term, plus the quaternion kinematics), all bodies in one system. Accuracy: about
    1e-12 rad over tens of periods for smooth torques (the solver's own error; measured
    against the closed-form Lagrange top in the tests). Locked axes are not supported
    (every inverse moment must be > 0).

    Work is bounded (``docs/limitations.md``): ``t[-1] J_max |L(0)|`` (the angle the free
    motion would turn through, at most about 240 turns) may not exceed
    :data:`MAX_REFERENCE_PHASE`, and the solve takes at most :data:`MAX_REFERENCE_STEPS`
    steps (a stiff model or a torque that spins the body up raises as soon as the step
    size shows that it would need more).

    Parameters
    ----------
    q, omega, inv_inertia : array_like, shapes (..., 4), (..., 3), (..., 3)
        Initial attitude and world angular velocity; principal inverse moments.
    torque : TorqueModel or None
    t : array_like, shape (T,)
        Increasing times ``>= 0``; the run starts at ``t = 0``.

    Returns
    -------
    q_t : ndarray, shape (T, ..., 4)
    omega_t : ndarray, shape (T, ..., 3)
        Empty when the batch is.

    Raises
    ------
    InputError
        Bad input (named), an angular momentum ``L = I omega`` beyond float64 (``omega,
        inv_inertia``), a run beyond the bounds above or a state that leaves float64
        (``t`` with ``omega`` resp. ``torque``).
    """
    if torque is not None and not isinstance(torque, TorqueModel):
        raise InputError(f"torque: expected a tumble.torques model or None, got {describe(torque)}")
    m = as_model(torque)
    q0, w0, J, batch = _bodies(q, omega, inv_inertia, m)
    if np.any(J <= 0):
        raise InputError(f"inv_inertia: expected inverse moments > 0, got minimum {J.min()}")
    times = as_float_array(t, "t", dtype=np.dtype(np.float64))
    if times.ndim != 1 or times.size == 0 or times[0] < 0 or np.any(np.diff(times) <= 0):
        raise InputError(f"t: expected increasing times >= 0 of shape (T,), got {describe(times)}")
    n, T = q0.shape[0], times.size
    if n == 0:
        return np.empty((T, *batch, 4)), np.empty((T, *batch, 3))
    R0 = quat_to_matrix(q0)
    with np.errstate(over="ignore", invalid="ignore"):
        L0 = np.einsum("nij,nj->ni", R0, np.einsum("nji,nj->ni", R0, w0) / J)
        rate = float(np.max(np.max(J, axis=-1) * np.linalg.norm(L0, axis=-1)))
        phase = rate * float(times[-1])
    check_finite_result("omega, inv_inertia", "the angular momentum I omega (or J_max |L|)", rate)
    if not phase <= MAX_REFERENCE_PHASE:
        raise InputError(
            f"t, omega: expected t[-1] J_max |L| <= {MAX_REFERENCE_PHASE:g} rad (about "
            f"{MAX_REFERENCE_PHASE / (2 * np.pi):.0f} turns; a longer tight ODE solve takes "
            f"over 4 s), got t[-1] = {float(times[-1]):.3g} with J_max |L| = {rate:.3g}"
        )
    y = _integrate(_rhs(m.kernel_args(batch), J), np.concatenate([q0.ravel(), L0.ravel()]), times)
    qq = y[:, : 4 * n].reshape(T, n, 4)
    qq = qq / np.linalg.norm(qq, axis=-1, keepdims=True)
    L = y[:, 4 * n :].reshape(T, n, 3)
    R = quat_to_matrix(qq)
    w = np.einsum("tnij,tnj->tni", R, J * np.einsum("tnji,tnj->tni", R, L))
    return qq.reshape((T, *batch, 4)), w.reshape((T, *batch, 3))


def _product_tensor() -> np.ndarray:
    """``E`` with ``(0, w) ⊗ q = E[i, j, k] w_j q_k``: the Hamilton product by a pure
    quaternion, ``(-w·v, a w + w × v)`` for ``q = (a, v)``."""
    E = np.zeros((4, 3, 4))
    for i, j, k, sign in (
        (0, 0, 1, -1), (0, 1, 2, -1), (0, 2, 3, -1),
        (1, 0, 0, 1), (1, 1, 3, 1), (1, 2, 2, -1),
        (2, 1, 0, 1), (2, 2, 1, 1), (2, 0, 3, -1),
        (3, 2, 0, 1), (3, 0, 2, 1), (3, 1, 1, -1),
    ):  # fmt: skip
        E[i, j, k] = sign
    return E


_HALF_PRODUCT = 0.5 * _product_tensor()


def _rhs(args: tuple[Any, np.ndarray, Any], J: np.ndarray) -> Callable[[float, np.ndarray], Any]:
    """The right-hand side of :func:`reference` in ``y = (q (n, 4), L_w (n, 3))`` flattened.

    Called a dozen times per DOP853 step, so written for few NumPy calls on small arrays
    (the solve's time is what ``MAX_REFERENCE_STEPS`` bounds): ``omega = I_w⁻¹ L_w`` with
    ``I_w⁻¹ = R J Rᵀ`` from the compiled inertia map, ``dq/dt = ½ (0, omega) ⊗ q`` as one
    contraction with the product's structure tensor.
    """
    n = J.shape[0]
    tau = np.empty((n, 3))
    Jc = np.ascontiguousarray(J)

    def rhs(time: float, y: np.ndarray) -> np.ndarray:
        qq = y[: 4 * n].reshape(n, 4)
        L = y[4 * n :].reshape(n, 3)
        qn = qq / np.sqrt(np.einsum("ni,ni->n", qq, qq))[:, None]
        w = np.einsum("nij,nj->ni", _inertia.world_inverse_inertia_gu(qn, Jc), L)
        _k.torque_batch(*args, time, qn, w, J, tau)
        dq = np.einsum("ijk,nj,nk->ni", _HALF_PRODUCT, w, qq)
        return np.concatenate([dq.ravel(), tau.ravel()])

    return rhs


def _integrate(
    rhs: Callable[[float, np.ndarray], Any], y0: np.ndarray, times: np.ndarray
) -> np.ndarray:
    """``y`` at ``times`` (T, len(y0)) from ``y0`` at 0: DOP853 stepped here (as
    ``solve_ivp`` does) so that the work can be bounded as it goes."""
    from scipy.integrate import DOP853

    out = np.empty((times.size, y0.size))
    k = int(np.searchsorted(times, 0.0, side="right"))
    out[:k] = y0
    if k == times.size:
        return out
    end = float(times[-1])
    steps = 0
    # Overflow inside a step shows as a non-finite state (or as the rotation functions'
    # complaint about it in the right-hand side), named below.
    with np.errstate(all="ignore"):
        try:
            solver = DOP853(rhs, 0.0, y0, end, rtol=REFERENCE_RTOL, atol=REFERENCE_ATOL)
        except InputError:
            raise InputError("torque: too large, the state leaves float64 at t = 0") from None
        while k < times.size:
            try:
                message = solver.step()
                failed = solver.status == "failed" or not np.all(np.isfinite(solver.y))
            except InputError:
                message, failed = None, True
            if failed:
                raise InputError(
                    f"torque: the reference ODE solve failed at t = {solver.t:.6g} "
                    f"({message or 'the state left float64'})"
                )
            steps += 1
            left = (end - solver.t) / solver.step_size if solver.t < end else 0.0
            if steps >= MAX_REFERENCE_STEPS or (
                steps >= _JUDGE_AFTER and steps + left > MAX_REFERENCE_STEPS
            ):
                raise InputError(
                    f"torque, t: the reference solve would take more than {MAX_REFERENCE_STEPS} "
                    f"DOP853 steps (at t = {solver.t:.6g} of {end:.6g}, step {solver.step_size:.3g}"
                    "): the torque spins the body far up or the model is stiff"
                )
            later = k + int(np.searchsorted(times[k:], solver.t, side="right"))
            if later > k:
                out[k:later] = solver.dense_output()(times[k:later]).T
                k = later
    return out
