"""Test cases for the rigid-body integrators and their scores: the article's experiment.

One place for the parametrisation that ``tumble compare``, the lab and sweeps share, and
for the function that runs a set of methods on one case and scores them. Its defaults and
limits (:data:`DEFAULTS`, :data:`MAX_ROTATIONS`, :data:`MAX_STEPS_PER_ROTATION`,
:data:`TORQUE_SCENARIOS`) are data of :mod:`tumble.parameters`, re-exported here, which the
command line reads without loading the kernels.

The article's parametrisation (reference §2.10, the article author's ``run_analysis``):

* inverse moments ``J = (min_j, min_j + median_j, min_j + 1)``: the range ``J_max -
  J_min`` is fixed to 1 (changing it is the same as rescaling time), ``min_j > 0`` adds a
  constant to all three (``J -> J + c`` only turns the body about ``L``), and
  ``median_j`` in ``[0, 1]`` places the median moment (0: a long bar, 1: a flat plate,
  both symmetric tops);
* world angular momentum along ``z`` with ``|L| = 1``;
* initial attitude ``Q(θ ŷ)``, ``θ = ½ acos(2 energy - 1)``, so that the energy factor
  ``J_L = 2E/|L|²`` starts at ``min_j + energy``: ``energy`` in ``[0, 1]`` is the fraction
  between the minimum and the maximum energy for this ``|L|`` (``energy`` close to
  ``median_j`` gives the Dzhanibekov "taco" orbits).

Time step: ``dt = rotation_period / steps_per_rotation`` and ``steps = rotations *
steps_per_rotation``, with the **rotation period** ``P = 2π / ((J_max - J_min) |L|)``: one
turn at the rate ``(J_max - J_min)|L|`` that drives the body-frame motion (``dL_b/dt = L_b ×
(J L_b)`` only sees differences of the ``J_i``). ``P`` does not change under ``J -> J + c``
(so the ``min_j`` symmetry compares like with like) and scales as ``1/s`` under ``J -> sJ``.
For the article's bodies ``P = 2π``, and the defaults (64 steps per rotation, 20
rotations) run to ``t = 40π``, the article's duration. (The article's toy steps with ``dt =
1/res_t``, i.e. ``res_t`` steps per radian; here the unit is a full turn.) A spherical body
has no body-frame motion; its period is the spin period ``2π / (J |L|)``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from tumble import diagnostics, rigid, rotation, torques
from tumble._errors import InputError
from tumble._kernels.dispatch import single_thread
from tumble._validate import (
    as_choice,
    as_float_array,
    as_int,
    as_scalar,
    check_callable,
    describe,
)
from tumble.parameters import (
    DEFAULTS,
    MAX_ROTATIONS,
    MAX_STEPS_PER_ROTATION,
    TORQUE_SCENARIOS,
)
from tumble.torques import TorqueModel
from tumble.trajectory import record_steps

__all__ = [
    "DEFAULTS",
    "MAX_ROTATIONS",
    "MAX_STEPS_PER_ROTATION",
    "TIMING_BODY_STEPS",
    "TORQUE_SCENARIOS",
    "Case",
    "MethodResult",
    "Scores",
    "article_case",
    "explicit_case",
    "reference",
    "rotation_period",
    "run_methods",
    "score",
    "simulate",
    "stepping_time",
    "time_per_step",
    "torque_case",
]

#: The most steps a :class:`Case` may have (and a :func:`stepping_time` run may take per
#: body): the two limits of :mod:`tumble.parameters` multiplied, 1e10.
_MAX_STEPS = int(MAX_ROTATIONS) * MAX_STEPS_PER_ROTATION

#: Most runs a :func:`stepping_time` call repeats (the best of them is reported).
_MAX_RUNS = 1000


@dataclass(frozen=True)
class Case:
    """One initial-value problem: a body, an initial state, a step and a duration.

    Attributes
    ----------
    inv_inertia : ndarray, shape (3,)
        Principal inverse moments ``J``.
    q0 : ndarray, shape (4,)
        Initial body-to-world quaternion.
    omega0 : ndarray, shape (3,)
        Initial **world** angular velocity.
    dt : float
        Time step, ``period / steps_per_rotation``.
    steps : int
        Number of steps, ``rotations * steps_per_rotation`` (rounded), at most
        ``MAX_ROTATIONS * MAX_STEPS_PER_ROTATION`` (1e10).
    period : float
        The rotation period ``2π / ((J_max - J_min) |L|)`` (module docstring); for the
        torque scenarios, as :func:`torque_case` says.
    torque : TorqueModel or None
        The torque model of a forced case (:func:`torque_case`), None for free motion.

    A hand-built case is validated like the ones :func:`article_case` and
    :func:`explicit_case` build (``InputError`` naming the field).
    """

    inv_inertia: np.ndarray
    q0: np.ndarray
    omega0: np.ndarray
    dt: float
    steps: int
    period: float
    torque: TorqueModel | None = None

    def __post_init__(self) -> None:
        fields = {
            "inv_inertia": _inverse_moments(self.inv_inertia),
            "q0": _one(self.q0, "q0", 4),
            "omega0": _one(self.omega0, "omega0", 3),
            "dt": as_scalar(self.dt, "dt", positive=True),
            "steps": as_int(self.steps, "steps", minimum=0, maximum=_MAX_STEPS),
            "period": as_scalar(self.period, "period", positive=True),
        }
        if not np.any(fields["q0"] != 0.0):
            raise InputError("q0: expected a nonzero quaternion, got 0")
        if self.torque is not None and not isinstance(self.torque, TorqueModel):
            raise InputError(
                f"torque: expected a tumble.torques model or None, got {describe(self.torque)}"
            )
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    @property
    def duration(self) -> float:
        """Simulated time ``steps * dt``."""
        return self.steps * self.dt


def rotation_period(inv_inertia: ArrayLike, momentum: float) -> float:
    """The rotation period ``P = 2π / ((J_max - J_min) |L|)`` that sets the time step.

    Parameters
    ----------
    inv_inertia : array_like, shape (3,)
        Principal inverse moments, ``>= 0``.
    momentum : float
        ``|L|``, ``> 0``.

    Returns
    -------
    float
        ``2π / ((J_max - J_min)|L|)``; for a spherical body (``J_max = J_min``) the spin
        period ``2π / (J |L|)``.

    Raises
    ------
    InputError
        ``|L| = 0`` or all inverse moments zero: nothing turns, so there is no period; or
        a period beyond the float range (or below its smallest number).
    """
    J = _inverse_moments(inv_inertia)
    L = as_scalar(momentum, "momentum", nonnegative=True)
    rate = (float(np.max(J)) - float(np.min(J))) or float(np.max(J))
    if rate == 0.0:
        raise InputError(
            f"inv_inertia: expected some J_i > 0 (a body that can turn), got {J.tolist()}"
        )
    if L == 0.0:
        raise InputError("momentum: expected |L| > 0 (a body that turns), got 0")
    # In powers of two: rate |L| of two tiny numbers underflows to 0, and 2π / rate may
    # overflow where the period itself does not.
    (mr, er), (ml, el) = math.frexp(rate), math.frexp(L)
    try:
        period = math.ldexp(2.0 * math.pi / (mr * ml), -(er + el))
    except OverflowError:
        # The momentum's fault if the period of |L| = 1 fits, else both are to blame.
        names = "momentum" if 2.0 * math.pi / rate < math.inf else "inv_inertia, momentum"
        raise InputError(
            f"{names}: too small, the period 2π / ((J_max - J_min) |L|) overflows for "
            f"|L| = {L:.3g} and J = {J.tolist()}"
        ) from None
    if period == 0.0:
        raise InputError(
            "inv_inertia, momentum: too large, the period 2π / ((J_max - J_min) |L|) "
            f"underflows to 0 for |L| = {L:.3g} and J = {J.tolist()}"
        )
    return period


def _one(x: Any, name: str, k: int) -> np.ndarray:
    """One body's ``(k,)`` float64 vector, or ``InputError`` naming ``name``."""
    a = as_float_array(x, name, (k,)).astype(np.float64)
    if a.shape != (k,):
        raise InputError(f"{name}: expected shape ({k},) (one body), got shape {a.shape}")
    return a


def _inverse_moments(inv_inertia: Any) -> np.ndarray:
    J = as_float_array(inv_inertia, "inv_inertia", (3,)).astype(np.float64)
    if J.shape != (3,):
        raise InputError(f"inv_inertia: expected shape (3,) (one body), got shape {J.shape}")
    if np.any(J < 0):
        raise InputError(f"inv_inertia: expected inverse moments >= 0, got {J.tolist()}")
    return J


def _timing(
    period: float, steps_per_rotation: Any, rotations: Any, period_from: str
) -> tuple[float, int]:
    """``(dt, steps)``; ``period_from`` names the arguments the period came from (the
    culprits when ``period / steps_per_rotation`` underflows to 0)."""
    n = as_int(steps_per_rotation, "steps_per_rotation", minimum=1)
    if n > MAX_STEPS_PER_ROTATION:
        raise InputError(f"steps_per_rotation: expected at most {MAX_STEPS_PER_ROTATION}, got {n}")
    r = as_scalar(rotations, "rotations", nonnegative=True)
    if r > MAX_ROTATIONS:
        raise InputError(f"rotations: expected at most {MAX_ROTATIONS:g}, got {r:g}")
    dt = period / n
    if not dt > 0.0:
        raise InputError(
            f"{period_from}, steps_per_rotation: too large, the time step period / "
            f"steps_per_rotation = {period:.3g} / {n} underflows to 0"
        )
    return dt, round(r * n)


def article_case(
    min_j: float = DEFAULTS["min_j"],
    median_j: float = DEFAULTS["median_j"],
    energy: float = DEFAULTS["energy"],
    steps_per_rotation: float = DEFAULTS["steps_per_rotation"],
    rotations: float = DEFAULTS["rotations"],
) -> Case:
    """The article's experiment (module docstring): ``J = (min_j, min_j + median_j,
    min_j + 1)``, ``L_w = ẑ``, ``J_L(0) = min_j + energy``.

    Parameters
    ----------
    min_j : float
        Smallest inverse moment, ``> 0`` (the article's slider: 0.1 to 5).
    median_j : float
        Median inverse moment above ``min_j``, in ``[0, 1]``.
    energy : float
        Initial energy as a fraction between its minimum and maximum for ``|L| = 1``,
        in ``[0, 1]``.
    steps_per_rotation : int
        Steps per rotation period ``P = 2π`` (``>= 1``).
    rotations : float
        Duration in periods (``>= 0``).

    Returns
    -------
    Case
    """
    jmin = as_scalar(min_j, "min_j", positive=True)
    f = as_scalar(median_j, "median_j")
    e = as_scalar(energy, "energy")
    for name, v in (("median_j", f), ("energy", e)):
        if not 0.0 <= v <= 1.0:
            raise InputError(f"{name}: expected a fraction in [0, 1], got {v}")
    J = np.array([jmin, jmin + f, jmin + 1.0])
    theta = 0.5 * math.acos(2.0 * e - 1.0)
    q0 = np.array([math.cos(0.5 * theta), 0.0, math.sin(0.5 * theta), 0.0])
    L_world = np.array([0.0, 0.0, 1.0])
    # omega = R J Rᵀ L for R = Q(θ ŷ): Rᵀ ẑ = (-sin θ, 0, cos θ).
    L_body = np.array([-math.sin(theta), 0.0, math.cos(theta)])
    wb = J * L_body
    omega0 = np.array(
        [math.cos(theta) * wb[0] + math.sin(theta) * wb[2], 0.0,
         -math.sin(theta) * wb[0] + math.cos(theta) * wb[2]]
    )  # fmt: skip
    period = rotation_period(J, float(np.linalg.norm(L_world)))
    dt, steps = _timing(period, steps_per_rotation, rotations, "min_j, median_j")
    return Case(J, q0, omega0, dt, steps, period)


def explicit_case(
    inv_inertia: ArrayLike,
    omega_body: ArrayLike,
    steps_per_rotation: float = DEFAULTS["steps_per_rotation"],
    rotations: float = DEFAULTS["rotations"],
) -> Case:
    """A body given directly: inverse moments and body-frame angular velocity.

    The initial attitude is the identity (body = world frame at ``t = 0``), so
    ``omega0 = omega_body`` and ``L = I omega_body``. On axes with ``J_i = 0`` (held by a
    constraint) the component of ``omega_body`` must be 0.

    Parameters
    ----------
    inv_inertia : array_like, shape (3,)
        Principal inverse moments, ``>= 0``.
    omega_body : array_like, shape (3,)
        Initial body-frame angular velocity, with ``L != 0``.
    steps_per_rotation : int
        Steps per rotation period :func:`rotation_period` (``>= 1``).
    rotations : float
        Duration in periods (``>= 0``).

    Returns
    -------
    Case
    """
    J = _inverse_moments(inv_inertia)
    w = as_float_array(omega_body, "omega_body", (3,)).astype(np.float64)
    if w.shape != (3,):
        raise InputError(f"omega_body: expected shape (3,) (one body), got shape {w.shape}")
    if np.any((J == 0) & (w != 0)):
        raise InputError(
            "omega_body: a zero inverse moment is an axis that cannot turn; expected 0 "
            f"there, got omega_body = {w.tolist()} with inv_inertia = {J.tolist()}"
        )
    with np.errstate(all="ignore"):
        L = np.divide(w, J, out=np.zeros(3), where=J > 0)
        norm = float(np.hypot.reduce(L))
    if not norm < math.inf:
        raise InputError(
            f"omega_body, inv_inertia: too large, |L| = |omega_body / J| overflows for "
            f"omega_body = {w.tolist()} and inv_inertia = {J.tolist()}"
        )
    try:
        period = rotation_period(J, norm)
    except InputError as exc:
        # rotation_period names its own momentum argument; here |L| comes from omega_body.
        names, _, rest = str(exc).partition(": ")
        if "momentum" not in names.split(", "):
            raise
        raise InputError(f"{names.replace('momentum', 'omega_body')}: {rest}") from None
    dt, steps = _timing(period, steps_per_rotation, rotations, "omega_body, inv_inertia")
    return Case(J, np.array([1.0, 0.0, 0.0, 0.0]), w, dt, steps, period)


def torque_case(
    name: str,
    steps_per_rotation: float = DEFAULTS["steps_per_rotation"],
    rotations: float = DEFAULTS["rotations"],
) -> Case:
    """A forced case: one of :data:`TORQUE_SCENARIOS`, with its torque model.

    The "rotation" that sets ``dt`` is one turn at the initial rate, ``2π/|omega0|``, for
    the heavy top (its spin) and ``2π/n`` (one orbit) for the gravity-gradient satellite;
    the damped and controlled cases keep the article body's period (module docstring).

    Parameters
    ----------
    name : str
        A key of :data:`TORQUE_SCENARIOS`.
    steps_per_rotation : int
    rotations : float
        As in :func:`article_case`.
    """
    name = as_choice(name, "name", tuple(TORQUE_SCENARIOS))
    if name == "heavy-top":
        J = 1.0 / np.array([1.2, 1.2, 0.5])
        q0 = rotation.rotvec_to_quat([0.6, 0.0, 0.0])
        omega0 = rotation.quat_rotate(q0, [0.0, 0.0, 12.0])
        model = torques.gravity(1.0, [0.0, 0.0, -9.81], [0.0, 0.0, 0.4])
        period = 2.0 * math.pi / 12.0
    elif name == "gravity-gradient":
        J = 1.0 / np.array([1.0, 1.5, 2.0])
        # Body x (least inertia) to nadir z, then tilted 0.3 rad about world x.
        q0 = rotation.quat_multiply(
            rotation.rotvec_to_quat([0.3, 0.0, 0.0]),
            rotation.rotvec_to_quat([0.0, -0.5 * math.pi, 0.0]),
        )
        omega0 = np.array([0.1, 0.0, 0.05])
        model = torques.gravity_gradient(1.0, [0.0, 0.0, 1.0])
        period = 2.0 * math.pi
    else:
        free = article_case()
        J, q0, omega0, period = free.inv_inertia, free.q0, free.omega0, free.period
        if name == "damped":
            model = torques.damping(0.05)
        else:
            model = torques.attitude_control([1.0, 0.0, 0.0, 0.0], 0.5, 0.5)
    dt, steps = _timing(period, steps_per_rotation, rotations, "name")
    return Case(J, np.asarray(q0), np.asarray(omega0), dt, steps, period, model)


@dataclass(frozen=True)
class Scores:
    """How well one method did on one case (worst values over the records).

    Attributes
    ----------
    energy_error : float
        ``max |E/E0 - 1|`` (:func:`tumble.diagnostics.max_energy_error`).
    momentum_drift : float
        ``max | |L|/|L0| - 1 |`` (:func:`tumble.diagnostics.momentum_drift`).
    direction_drift : float
        Largest angle of world ``L`` from its initial direction, radians
        (:func:`tumble.diagnostics.direction_drift`).
    attitude_error_end, attitude_error_max : float
        Angle from the exact solution at the last record and the largest over the
        records, radians (:func:`tumble.diagnostics.attitude_error`).
    ns_per_step : float
        Measured wall time of :func:`tumble.rigid.simulate` per step of one body on one
        thread (:func:`time_per_step`), ``nan`` if not measured.
    diverged_at : float or None
        Time of the first non-finite record (the scores then cover the records before
        it), or None.
    """

    energy_error: float
    momentum_drift: float
    direction_drift: float
    attitude_error_end: float
    attitude_error_max: float
    ns_per_step: float
    diverged_at: float | None = None


@dataclass(frozen=True)
class MethodResult:
    """A method's recorded trajectory on a case and its scores."""

    method: str
    trajectory: rigid.Trajectory
    scores: Scores


def finite_prefix(tr: rigid.Trajectory) -> int:
    """Number of leading records of a one-body trajectory whose state is finite.

    :func:`tumble.diagnostics.finite_records` of ``tr``, as an int.
    """
    return int(diagnostics.finite_records(tr))


def score(
    trajectory: diagnostics.TrajectoryLike,
    inv_inertia: ArrayLike,
    ns_per_step: float = math.nan,
    reference_q: ArrayLike | None = None,
    reference: rigid.Trajectory | None = None,
) -> Scores:
    """Score a single-body trajectory: :func:`tumble.diagnostics.score`.

    Parameters
    ----------
    trajectory : Trajectory or tuple (t, q, omega)
        Records ``(n, 4)``, ``(n, 3)``... of one body (no batch axes).
    inv_inertia : array_like, shape (3,)
    ns_per_step : float, optional
        Passed through to :attr:`Scores.ns_per_step`.
    reference_q : array_like, shape (n, 4), optional
        The exact attitude at the trajectory's records, when the caller already has it
        (for example one exact solution scoring many methods); without it the exact motion
        is solved from the trajectory's first record.
    reference : Trajectory, optional
        The reference motion at the trajectory's records, for a forced run (from
        :func:`reference`): the attitude is compared with its, and the energy, ``|L|`` and
        direction scores with its at each record (``drift="reference"``) instead of with
        the first record. Not with ``reference_q``.

    Returns
    -------
    Scores
        Records after the first non-finite one (a method that blew up) are left out and
        the time of that record is reported in ``diverged_at``.
    """
    J = _inverse_moments(inv_inertia)
    if reference_q is not None:
        # diagnostics reads a Trajectory or a tuple (t, q, omega) alike; so does this.
        tuple_q: Any = (
            trajectory[1] if isinstance(trajectory, tuple) and len(trajectory) == 3 else None
        )
        q_shape = np.shape(getattr(trajectory, "q", tuple_q))
        q_ref = as_float_array(reference_q, "reference_q", (4,))
        if q_ref.shape != q_shape:
            raise InputError(
                f"reference_q: expected shape {q_shape} (one quaternion per record), got "
                f"shape {q_ref.shape}"
            )
        reference_q = q_ref
    if reference is not None:
        if reference_q is not None:
            raise InputError("reference: expected reference or reference_q, got both")
        s = diagnostics.score(trajectory, J, reference, drift="reference")
    else:
        s = diagnostics.score(trajectory, J, reference_q)
    diverged = float(s.diverged_at)
    return Scores(
        energy_error=float(s.energy_error),
        momentum_drift=float(s.momentum_drift),
        direction_drift=float(s.direction_drift),
        attitude_error_end=float(s.attitude_error_end),
        attitude_error_max=float(s.attitude_error_max),
        ns_per_step=ns_per_step,
        diverged_at=None if math.isnan(diverged) else diverged,
    )


def _check_case(case: Any) -> Case:
    if not isinstance(case, Case):
        raise InputError(f"case: expected a tumble.scenarios.Case, got {type(case).__name__}")
    return case


def simulate(case: Case, method: str, every: int = 1) -> rigid.Trajectory:
    """:func:`tumble.rigid.simulate` of ``case`` with ``method``, recording every ``every``-th step.

    A blow-up is part of a comparison: it is scored (``diverged_at``), not warned about.
    """
    _check_case(case)
    return rigid.simulate(
        case.q0,
        case.omega0,
        case.inv_inertia,
        case.dt,
        case.steps,
        method,
        case.torque,
        every=every,
        on_divergence="ignore",
    )


def reference(case: Case, every: int = 1) -> rigid.Trajectory:
    """The motion to score ``case`` against, at the records of :func:`simulate`.

    The exact solution for a free case (the ``"exact"`` method); for a forced case the
    tight ODE solve :func:`tumble.torques.reference`.
    """
    _check_case(case)
    if case.torque is None:
        return simulate(case, "exact", every)
    n_every = as_int(every, "every", minimum=1)
    t = record_steps(case.steps, n_every) * case.dt
    J = case.inv_inertia
    q, w = torques.reference(case.q0, case.omega0, J, case.torque, t)
    L = rigid.angular_momentum(q, w, J)
    return rigid.Trajectory(
        t=t,
        q=q,
        omega=w,
        L=L,
        L_body=rotation.quat_rotate(rotation.quat_conjugate(q), L),
        energy=rigid.energy(q, w, J),
    )


#: Body-steps per timing run for the ns/step column: the case's body is replicated until a
#: run has this many, so the fixed cost of a call (validation, thread launch) is amortised.
TIMING_BODY_STEPS = 200_000


def stepping_time(
    q: ArrayLike,
    omega: ArrayLike,
    inv_inertia: ArrayLike,
    dt: float,
    steps: int,
    method: str,
    runs: int,
    *,
    torque: TorqueModel | None = None,
) -> float:
    """Best seconds per body-step over ``runs`` calls of :func:`tumble.rigid.simulate`.

    ``q``, ``omega``, ``inv_inertia``: a batch of bodies, shapes ``(n, 4)``, ``(n, 3)``,
    ``(n, 3)``, with ``steps >= 1``. The batch is tiled to at least ``TIMING_BODY_STEPS``
    body-steps and only the first and last states are recorded, so the time is the
    stepping cost with the call's fixed cost amortised. ``"exact"`` evaluates the closed
    form at every step instead, untiled (its cost is per evaluation). A diverging method is
    timed like any other. Threads: as numba is set when called. ``torque``: a model shared
    by all the bodies (batch shape ``()``), run inside the loop.

    Raises
    ------
    InputError
        Shapes other than these, different numbers of bodies, ``steps`` or ``runs`` below
        1; the rest is checked by :func:`tumble.rigid.simulate`.
    """
    arrays = [
        as_float_array(x, name, (k,), finite=False)
        for x, name, k in ((q, "q", 4), (omega, "omega", 3), (inv_inertia, "inv_inertia", 3))
    ]
    if any(a.ndim != 2 for a in arrays) or len({a.shape[0] for a in arrays}) != 1:
        shapes = ", ".join(str(a.shape) for a in arrays)
        raise InputError(
            "q, omega, inv_inertia: expected shapes (n, 4), (n, 3), (n, 3) with the same n, "
            f"got {shapes}"
        )
    n = arrays[0].shape[0]
    steps = as_int(steps, "steps", minimum=1, maximum=_MAX_STEPS // max(n, 1))
    runs = as_int(runs, "runs", minimum=1, maximum=_MAX_RUNS)
    exact = method == "exact"
    copies = 1 if exact else max(1, -(-TIMING_BODY_STEPS // (n * steps)))
    qt, wt, Jt = (np.tile(a, (copies, 1)) for a in arrays)
    every = 1 if exact else steps
    best = math.inf
    for _ in range(runs):
        t0 = time.perf_counter()
        rigid.simulate(qt, wt, Jt, dt, steps, method, torque, every, on_divergence="ignore")
        best = min(best, time.perf_counter() - t0)
    return best / (copies * n * steps)


def time_per_step(case: Case, method: str) -> float:
    """Measured ns per step of one body of ``method`` on ``case``, single-threaded.

    :func:`stepping_time` of the case's body on one numba thread, the best of three runs
    after a warm-up. ``nan`` when the case has no steps.
    """
    if _check_case(case).steps == 0:
        return math.nan
    body = (np.asarray(case.q0)[None], np.asarray(case.omega0)[None])
    J = np.asarray(case.inv_inertia)[None]
    with single_thread():
        rigid.simulate(*body, J, case.dt, 1, method, case.torque, on_divergence="ignore")
        return (
            stepping_time(*body, J, case.dt, case.steps, method, runs=3, torque=case.torque) * 1e9
        )


def run_methods(
    case: Case,
    methods: Sequence[str] | None = None,
    every: int = 1,
    progress: Callable[[int, int, str], None] | None = None,
    timing: bool = True,
) -> dict[str, MethodResult]:
    """Run each method on ``case`` with :func:`tumble.rigid.simulate` and score it.

    Parameters
    ----------
    case : Case
    methods : sequence of str, optional
        Names from :data:`tumble.rigid.METHODS` or compositions ``"<base>:<scheme>"``
        (default: all of :data:`~tumble.rigid.METHODS`, in that order; for a forced case all
        but the torque-free ``"exact"``).
    every : int, optional
        Record interval in steps (the scores are worst values over the records).
    progress : callable, optional
        Called as ``progress(i, n, method)`` before method ``i`` of ``n`` (0-based) runs.
    timing : bool, optional
        Measure ``ns_per_step`` (:func:`time_per_step`); ``False`` leaves it ``nan``.

    Returns
    -------
    dict
        ``{method: MethodResult}`` in the order of ``methods``.

    Notes
    -----
    ``ns_per_step`` comes from :func:`time_per_step`, a separate single-threaded run.
    """
    _check_case(case)
    if methods is None:
        methods = [m for m in rigid.METHODS if case.torque is None or m != "exact"]
    names = list(methods)
    if not names:
        raise InputError("methods: expected at least one method name, got none")
    for m in names:
        rigid.check_method(m, "methods")
    n_every = as_int(every, "every", minimum=1)
    if progress is not None:
        check_callable(progress, "progress", 3)
    if not isinstance(timing, bool | np.bool_):
        raise InputError(f"timing: expected a bool, got {describe(timing)}")
    forced = None if case.torque is None else reference(case, n_every)
    out: dict[str, MethodResult] = {}
    for i, m in enumerate(names):
        if progress is not None:
            progress(i, len(names), m)
        tr = simulate(case, m, n_every)
        ns = time_per_step(case, m) if timing else math.nan
        out[m] = MethodResult(m, tr, score(tr, case.inv_inertia, ns, reference=forced))
    return out
