"""The integrators: :func:`step` and :func:`simulate`, over the compiled loops.

Each method is a record of :mod:`tumble.methods` naming its kernel; this module validates
the arguments, turns the method into what the loops of :mod:`tumble._kernels.rigid.loops`
take (a compile-time :class:`~tumble._kernels.rigid.table.Tag` and a composition's
coefficients), runs them over the batch (on several threads for a large one) and reports
non-finite results (:mod:`tumble.rigid.divergence`). One body of float64 arrays takes a
shorter path through :func:`step` (:func:`_step_one`): one compiled call, no validation
unless the kernel hands the input back. Conventions and the methods are in
:mod:`tumble.rigid`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from tumble._errors import InputError
from tumble._kernels import inertia as _inertia
from tumble._kernels.dispatch import (
    compiled_entry,
    first_use,
    plain_arrays,
    run_split,
    use_parallel,
)
from tumble._kernels.rigid import loops as _loops
from tumble._kernels.rigid.table import Tag
from tumble._validate import (
    as_choice,
    as_float_array,
    as_int,
    as_scalar,
    check_finite_result,
    check_memory,
)
from tumble.methods import MethodInfo
from tumble.methods import check as check_method
from tumble.rigid.divergence import check_step, warn_divergence
from tumble.rigid.dynamics import validate_state
from tumble.torques import NO_TORQUE, TorqueModel, as_model
from tumble.trajectory import Trajectory, record_count, record_steps

__all__ = ["simulate", "step"]

_KERNEL_ARGS: dict[str, tuple[Tag, np.ndarray]] = {}


def _kernel_args(info: MethodInfo, fallback: str = "") -> tuple[Tag, np.ndarray]:
    """The method as the loops take it: its tag (the kernel ``info`` names, or ``fallback``
    for a method without one; composed or not) and the composition's coefficients
    (float64, (s,); empty for a registry method). Cached: there are finitely many valid
    method names."""
    args = _KERNEL_ARGS.get(info.name)
    if args is None:
        tag = Tag(info.kernel or fallback, bool(info.substeps))
        args = _KERNEL_ARGS[info.name] = (tag, np.array(info.substeps, dtype=np.float64))
    return args


def _method(method: Any, inv_inertia: np.ndarray, torque: object) -> MethodInfo:
    info = check_method(method, "method")
    if not info.locked_axes and np.any(inv_inertia == 0):
        raise InputError(
            f"inv_inertia: method {info.name!r} needs every inverse moment > 0 "
            f"(no locked axis); got {inv_inertia.min()}"
        )
    if info.torque == "none" and torque is not None:
        raise InputError(f"torque: method {info.name!r} is the torque-free solution; got a torque")
    return info


def _flat(a: np.ndarray, batch: tuple[int, ...], n: int) -> np.ndarray:
    """Broadcast ``a`` to ``batch + (n,)`` and flatten the batch, as a contiguous array."""
    return np.ascontiguousarray(np.broadcast_to(a, (*batch, n)).reshape(-1, n))


def _torque_inputs(
    q: ArrayLike, omega: ArrayLike, inv_inertia: ArrayLike, torque: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, ...], np.dtype, TorqueModel | None]:
    """Validate the state and the torque argument of :func:`step` and :func:`simulate`.

    Returns the state arrays, batch shape and dtype, and the torque as a model (an array
    becomes :func:`tumble.torques.constant`); None for a Python callable or no torque.
    """
    if torque is None or isinstance(torque, TorqueModel) or callable(torque):
        model = torque if isinstance(torque, TorqueModel) else None
        qa, wa, Ja, _, batch, dtype = validate_state(q, omega, inv_inertia, model=model)
        return qa, wa, Ja, batch, dtype, model
    qa, wa, Ja, ea, batch, dtype = validate_state(q, omega, inv_inertia, {"torque": torque})
    return qa, wa, Ja, batch, dtype, as_model(ea["torque"].astype(np.float64))


def _free(args: tuple[Any, np.ndarray, Any]) -> bool:
    """Whether the kernel arguments ``(kinds, P, fn)`` of a model are those of no torque
    (the loops compile it apart, with no torque code)."""
    return args[0] is None and args[2] is None


def _over_ranges(
    kernel: Callable[..., Any],
    count: int,
    n: int,
    method: tuple[Tag, np.ndarray],
    model: TorqueModel | None,
    *args: Any,
) -> list[Any]:
    """``kernel(tag, gamma, start, stop, *args)`` over ``0 .. count`` (blocks or bodies of a
    batch of ``n`` bodies), split over threads for a large batch, under the torque
    ``model`` (for the compile notice). Returns each range's result."""
    tag, gamma = method
    args = plain_arrays(args)

    def run(start: int, stop: int) -> Any:
        return kernel(tag, gamma, start, stop, *args)

    with _first_use(kernel, tag, model):
        return run_split(run, count, use_parallel(n))


def _first_use(kernel: Any, tag: Tag, model: TorqueModel | None) -> Any:
    """:func:`tumble._kernels.dispatch.first_use` for a loop of ``tag``'s method under
    ``model`` (None: a held torque): numba compiles one per method and torque structure."""
    structure = (model.names, model.has_custom) if model is not None else "held"
    name = tag.name + (" (composed)" if tag.composed else "")
    return first_use(
        (kernel.__name__, tag.name, tag.composed, structure),
        lambda: f"the {name} loop ({kernel.__name__}, {_torque_label(model)})",
    )


def _torque_label(model: TorqueModel | None) -> str:
    if model is None:
        return "a torque callable"
    return f"torque {model!r}" if model.names else "torque-free"


def _torque_now(
    torque: Callable,
    t: float,
    q: np.ndarray,
    w: np.ndarray,
    batch: tuple[int, ...],
    dtype: np.dtype,
) -> np.ndarray:
    """Call a torque callable and validate what it returns: (N, 3) float64, contiguous."""
    tau = torque(t, q, w)
    if (
        type(tau) is np.ndarray
        and tau.dtype == np.float64
        and tau.shape == (*batch, 3)
        and tau.flags.c_contiguous
    ):
        # The common case, checked without copies (finiteness is checked by the caller's
        # kernel pass over the values).
        return tau.reshape(-1, 3)
    tau = as_float_array(tau, "torque(t, q, omega)", (3,), dtype=dtype)
    try:
        return _flat(tau, batch, 3).astype(np.float64, copy=False)
    except ValueError:
        raise InputError(
            f"torque(t, q, omega): expected a result that broadcasts to {(*batch, 3)}, "
            f"got shape {tau.shape}"
        ) from None


def step(
    q: ArrayLike,
    omega: ArrayLike,
    inv_inertia: ArrayLike,
    dt: float,
    method: str,
    torque: ArrayLike | TorqueModel | Callable[..., ArrayLike] | None = None,
    *,
    t: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Advance the rotational state by one step of ``method``.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Body-to-world quaternion (normalised on input).
    omega : array_like, shape (..., 3)
        World angular velocity.
    inv_inertia : array_like, shape (..., 3)
        Principal inverse moments, ``>= 0`` (0: a locked axis; see :mod:`tumble.rigid`).
    dt : float
        Time step (negative runs backwards).
    method : str
        One of :data:`~tumble.rigid.METHODS` (see :func:`~tumble.rigid.method_info` and
        ``docs/integrators.md``), or a composition ``"<base>:<scheme>"`` of a
        time-symmetric base with a scheme of :data:`~tumble.rigid.COMPOSITIONS`
        (``"splitting:suzuki4"``).
    torque : None, TorqueModel, array_like of shape (..., 3), or callable, optional
        A :mod:`tumble.torques` model, evaluated where the method's algorithm needs it (its
        registry record's ``torque`` field); a constant world torque; or a Python callable
        ``torque(t, q, omega)`` returning world torques, called once at the start of the
        step and held over it (first order). Not allowed with ``"exact"``.
    t : float, optional
        Time at the start of the step, for time-dependent models (``periodic``, ``custom``).

    Returns
    -------
    q1 : ndarray, shape (..., 4)
    omega1 : ndarray, shape (..., 3)
        Batch shape is the broadcast of the inputs'; dtype float32 only if all inputs are.

    Raises
    ------
    InputError
        Bad input (also a composition the base cannot run: ``method`` names why), and also
        finite input so large that the step overflows float64 (say
        ``omega = [1e200, 1e200, 0]``): the message names ``q, omega, inv_inertia, dt``
        (and ``torque``), never a silent NaN.

    Notes
    -----
    The compiled methods compute in float64 and round the result to the input dtype.
    """
    fast = _step_one(q, omega, inv_inertia, dt, method, torque, t)
    if fast is not None:
        return fast
    dts = as_scalar(dt, "dt")
    t0 = as_scalar(t, "t")
    qa, wa, Ja, batch, dtype, model = _torque_inputs(q, omega, inv_inertia, torque)
    info = _method(method, Ja, torque)
    if info.kernel is None:
        from tumble.exact import torque_free

        q1, w1 = _exact_call(torque_free, "dt", qa, _free_omega(qa, wa, Ja), Ja, dts)
        return (
            np.broadcast_to(q1, (*batch, 4)).astype(dtype),
            np.broadcast_to(w1, (*batch, 3)).astype(dtype),
        )
    if model is None and callable(torque):
        tau = _torque_now(
            torque,
            t0,
            np.broadcast_to(qa, (*batch, 4)),
            np.broadcast_to(wa, (*batch, 3)),
            batch,
            dtype,
        )
        if not np.all(np.isfinite(tau)):
            raise InputError("torque(t, q, omega): expected finite values, got NaN or infinity")
        model = as_model(tau)
    Lb = _body_momentum(qa, wa, Ja)
    qf, Lf, Jf = (_flat(a, batch, a.shape[-1]).astype(np.float64) for a in (qa, Lb, Ja))
    q1 = np.empty_like(qf)
    L1 = np.empty_like(Lf)
    n = qf.shape[0]
    model = as_model(model)
    args = model.kernel_args(batch)
    tag, gamma = _kernel_args(info)
    _over_ranges(
        _loops.step_entry(tag, _free(args)), n, n, (tag, gamma), model,
        qf, Lf, Jf, args, t0, dts, q1, L1,
    )  # fmt: skip
    w1 = _inertia.world_omega_gu(q1, L1, Jf)
    check_step(info.name, q1, w1, Lf, batch, torque is not None)
    return q1.astype(dtype).reshape((*batch, 4)), w1.astype(dtype).reshape((*batch, 3))


#: Tag, composition coefficients and locked-axis support of each compiled method, for
#: :func:`_step_one`, added on first use (:func:`_one_body`).
_ONE_BODY: dict[str, tuple[Tag, np.ndarray, bool]] = {}
#: The compiled one-body step per (method, torque kinds), after its first call.
_ONE_BODY_ENTRIES: dict[tuple[Any, Any], Callable[..., Any]] = {}


def _one_body(method: str) -> tuple[Tag, np.ndarray, bool] | None:
    """``_ONE_BODY[method]``, adding a valid name of a compiled method; None for anything
    else."""
    entry = _ONE_BODY.get(method)
    if entry is None:
        try:
            info = check_method(method, "method")
        except InputError:
            return None
        if info.kernel is not None:
            entry = _ONE_BODY[method] = (*_kernel_args(info), info.locked_axes)
    return entry


def _is_vector(x: Any, n: int) -> bool:
    # ``carray``: C-contiguous, aligned and writeable, the one array type the kernel takes.
    return type(x) is np.ndarray and x.shape == (n,) and x.dtype == np.float64 and x.flags.carray


def _step_one(
    q: Any, omega: Any, inv_inertia: Any, dt: Any, method: Any, torque: Any, t: Any
) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`step` of one body in one compiled call, or None to take the validating path.

    Taken for float64 arrays of shapes (4,), (3,), (3,), float ``dt`` and ``t``, a compiled
    method and no torque or a model shared by all bodies without a custom term. Any input
    the kernel does not accept as clean goes the long way, which validates and raises.
    The result is bit for bit the batched path's (a test checks it).
    """
    kernel = _one_body(method) if type(method) is str else None
    if (
        kernel is None
        or type(dt) is not float
        or type(t) is not float
        or not (_is_vector(q, 4) and _is_vector(omega, 3) and _is_vector(inv_inertia, 3))
    ):
        return None
    if torque is None:
        model = NO_TORQUE
    elif type(torque) is TorqueModel and not torque.batch:
        model = torque
    else:
        return None
    args = model.kernel_args(())  # kept by the model after the first call
    if args[2] is not None:
        return None  # a custom term: the validating path runs it
    q1 = np.empty(4)
    w1 = np.empty(3)
    tag = kernel[0]
    call_args = (tag, kernel[1], q, omega, inv_inertia, args, t, dt, kernel[2], q1, w1)
    # The method and the model's kinds fix every argument's type (the checks above fix
    # the arrays'): one compiled entry per pair, called without numba's typing.
    key = (tag, args[0])
    call = _ONE_BODY_ENTRIES.get(key)
    if call is not None:
        status = call(*call_args)
    else:
        entry = _loops.one_body_entry(tag, _free(args))
        what = lambda: f"the {method} step of one body ({_torque_label(model)})"  # noqa: E731
        with first_use(key, what):
            status = entry(*call_args)
        _ONE_BODY_ENTRIES[key] = compiled_entry(entry, call_args)
    # A zero quaternion is what the normalisation of one whose squared norm overflowed
    # gives: the validating path raises for it (check_step).
    if status or (q1[0] == 0.0 and not q1.any()):
        return None
    return q1, w1


def _exact_call(func: Callable, dt_name: str, *args: Any) -> Any:
    """Call :mod:`tumble.exact` naming this module's arguments in its errors."""
    try:
        return func(*args)
    except InputError as exc:
        text = str(exc)
        for theirs, ours in (("t:", f"{dt_name}:"), ("omega0", "omega"), ("q0", "q")):
            if text.startswith(theirs):
                raise InputError(ours + text[len(theirs) :]) from None
        raise


def _body_momentum(qa: np.ndarray, wa: np.ndarray, Ja: np.ndarray) -> np.ndarray:
    """``L_b = J⁺ Rᵀ omega``. Where it overflows (a huge omega, a subnormal inverse moment)
    it is infinite without a NumPy warning: the step then fails and :func:`check_step`
    names the inputs."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _inertia.body_momentum_gu(qa, wa, Ja)


def _free_omega(qa: np.ndarray, wa: np.ndarray, Ja: np.ndarray) -> np.ndarray:
    """``omega`` without its body component on locked axes (what the other methods use)."""
    if np.all(Ja > 0):
        return wa
    return _inertia.world_omega_gu(qa, _body_momentum(qa, wa, Ja), Ja)


def simulate(
    q: ArrayLike,
    omega: ArrayLike,
    inv_inertia: ArrayLike,
    dt: float,
    steps: int,
    method: str,
    torque: ArrayLike | TorqueModel | Callable[..., ArrayLike] | None = None,
    every: int = 1,
    *,
    on_divergence: str = "warn",
) -> Trajectory:
    """Run ``steps`` steps of ``method`` and record every ``every``-th state.

    Records are taken at steps ``0, every, 2 every, ...`` and at the final step ``steps``
    even when ``steps`` is not a multiple of ``every`` (then the last interval is shorter):
    ``n_records = floor(steps/every) + 1`` plus one if ``every`` does not divide ``steps``.

    With no torque, an array torque or a :mod:`tumble.torques` model, one compiled kernel
    loops over the steps of each body (large batches split in contiguous ranges of bodies
    over numba's thread count, one Python thread each, the kernel releasing the GIL) with
    the state in registers, in float64, evaluates the model inside the loop where the
    method needs it (time ``t = n dt`` at step ``n``) and writes only the records. A Python callable
    ``torque(t, q, omega)`` is called once per step with the state at the start of the step
    (``t = n dt``, read-only arrays of the batch shape) and its value is held over the step
    (so every method is first order with it); the loop then runs in Python around one
    compiled call per step, about 2 µs of overhead per step for one body plus the callable
    itself. The ``"exact"`` method evaluates the compiled exact flow (the kernels of
    :func:`tumble.exact.torque_free`) at each record time from the initial state, in the
    same loop as ``exact_split`` without torque (no accumulated error, and no cost for the
    steps between records).

    Without torque, the symmetric methods and their compositions keep world ``L`` exactly:
    the loop takes their body momentum after each step from the initial world ``L`` (the
    same state in exact arithmetic), so ``|L|`` and world ``L`` stay within a few ulps over
    any number of steps (unless an axis is locked); and ``exact_split`` (composed or not),
    which is then the exact flow, is evaluated from the initial state like ``"exact"``.
    :func:`step` repeated restarts from each state, so its invariants walk by round-off.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Initial body-to-world quaternion (normalised on input).
    omega : array_like, shape (..., 3)
        Initial world angular velocity.
    inv_inertia : array_like, shape (..., 3)
        Principal inverse moments, ``>= 0``.
    dt : float
        Time step.
    steps : int
        Number of steps, ``>= 0``.
    method : str
        One of :data:`~tumble.rigid.METHODS`, or a composition ``"<base>:<scheme>"``
        (see :func:`step`).
    torque : None, TorqueModel, array_like of shape (..., 3), or callable, optional
        A :mod:`tumble.torques` model (see :func:`step`), a constant world torque, or a
        Python callable ``torque(t, q, omega)`` held over each step. Not allowed with
        ``"exact"``.
    every : int, optional
        Record interval in steps, ``>= 1``.
    on_divergence : {"warn", "ignore"}, optional
        What a divergence does: warn (:class:`~tumble.rigid.DivergenceWarning`), or
        nothing, for callers that detect the blow-up in the records themselves. Prefer
        ``"ignore"`` to :func:`warnings.catch_warnings`, which is not thread-safe
        (concurrent threads restore each other's filters).

    Returns
    -------
    Trajectory
        Arrays with the record index first, dtype float32 only if all inputs are float32.

    Raises
    ------
    InputError
        Bad input, or input whose *first* step already overflows float64 (a huge
        ``omega`` or ``dt``), exactly as :func:`step` reports it; for ``"exact"``, a time
        ``steps * dt`` beyond :data:`tumble.exact.MAX_PHASE` names ``dt, steps``.

    Warns
    -----
    DivergenceWarning
        When a later step makes the state non-finite: the method diverged (``explicit``
        does after ``O(1/dt²)`` steps). The records are returned as computed, NaN or
        ``inf`` from the record named in the message on: that is the method's behaviour,
        not a failure to report.
    """
    dts = as_scalar(dt, "dt")
    n_steps = as_int(steps, "steps", minimum=0)
    n_every = as_int(every, "every", minimum=1)
    warn = as_choice(on_divergence, "on_divergence", ("warn", "ignore")) == "warn"
    qa, wa, Ja, batch, dtype, model = _torque_inputs(q, omega, inv_inertia, torque)
    info = _method(method, Ja, torque)
    n_rec = record_count(n_steps, n_every)
    # 112 bytes per body-record (q, omega, L, L_body, energy in float64), before any of it.
    check_memory(n_rec * (112 * math.prod(batch) + 8), "steps, every", f"{n_rec} records")
    with np.errstate(over="ignore"):
        t = (record_steps(n_steps, n_every) * dts).astype(dtype)
    check_finite_result("dt, steps", "a record time steps * dt", t)
    # Read-only in the kernels (the callable loop steps copies in place): no copies needed.
    qf = _flat(qa, batch, 4).astype(np.float64, copy=False)
    Jf = _flat(Ja, batch, 3).astype(np.float64, copy=False)
    # The compiled loops form the body momentum from omega themselves, in float64.
    wf = _flat(wa, batch, 3).astype(np.float64, copy=False)
    if info.kernel is None:
        # "exact" is exact_split's flow without torque: the compiled loop evaluates it from
        # the initial state at each record (``loops.simulate_exact``).
        from tumble.exact import check_phase

        _exact_call(check_phase, "dt, steps", _body_momentum(qf, wf, Jf), Jf, t.astype(np.float64))
    n = qf.shape[0]
    # The kernels are compiled for float64 only (one compilation); float32 is rounded at the end.
    out_q = np.empty((n_rec, n, 4))
    out = [np.empty((n_rec, n, 3)) for _ in range(3)]
    out_e = np.empty((n_rec, n))
    if model is None and callable(torque):
        Lf = _body_momentum(qf, wf, Jf)
        bad = _simulate_callable(
            info, torque, qf, Lf, Jf, dts, n_steps, n_every, batch, dtype, (out_q, *out, out_e)
        )
    else:
        model = as_model(model)
        args = model.kernel_args(batch)
        tag, gamma = _kernel_args(info, "exact_split")
        # The kernel counts non-finite records, so finite runs skip both NumPy passes.
        bad = sum(_over_ranges(
            _loops.simulate_entry(tag, _free(args)), -(-n // _loops.BLOCK), n, (tag, gamma),
            model, qf, wf, Jf, args, dts, n_steps, n_every, out_q, *out, out_e,
        ))  # fmt: skip
        if bad and n_steps:
            # The first step alone tells an input overflow (an InputError, as in ``step``)
            # from a divergence of the method later on (a DivergenceWarning below).
            step(qa, wa, Ja, dts, info.name, torque)
    if bad and warn:
        warn_divergence(info.name, t, out_q, out[0], out_e)
    shape = (n_rec, *batch)
    q_r, w_r, L_r, Lb_r, E_r = _narrowed((out_q, *out, out_e), dtype, bad, torque is not None)
    return Trajectory(
        t=t,
        q=q_r.reshape((*shape, 4)),
        omega=w_r.reshape((*shape, 3)),
        L=L_r.reshape((*shape, 3)),
        L_body=Lb_r.reshape((*shape, 3)),
        energy=E_r.reshape(shape),
    )


def _narrowed(
    records: tuple[np.ndarray, ...], dtype: np.dtype, bad: int, forced: bool
) -> tuple[np.ndarray, ...]:
    """The float64 ``records`` rounded to ``dtype``. A run of float32 inputs whose finite
    records do not fit float32 (a body momentum ``I omega`` beyond 3.4e38, say) raises
    `InputError` naming the inputs rather than returning infinities; a run that diverged
    (``bad``) was reported already, and its records are rounded as they are."""
    if dtype == np.float64:
        return records
    with np.errstate(over="ignore"):
        narrow = tuple(a.astype(dtype) for a in records)
    if not bad and not all(np.isfinite(a).all() for a in narrow):
        names = "q, omega, inv_inertia, dt" + (", torque" if forced else "")
        raise InputError(
            f"{names}: expected a motion whose records (q, omega, L, energy) fit float32, "
            f"the dtype of the inputs; got values beyond {np.finfo(dtype).max:.3g} "
            "(pass float64 arrays for such a body)"
        )
    return narrow


def _simulate_callable(
    info: MethodInfo,
    torque: Callable,
    q: np.ndarray,
    L: np.ndarray,
    J: np.ndarray,
    dt: float,
    steps: int,
    every: int,
    batch: tuple[int, ...],
    dtype: np.dtype,
    out: tuple[np.ndarray, ...],
) -> int:
    """The loop of :func:`simulate` with a Python torque callable: one compiled call per step.

    ``q`` and ``L`` are stepped in place (copies of the caller's); the callable sees
    read-only views of them (and of the world ``omega`` the kernel keeps up to date) with
    the batch shape, converted to ``dtype`` when that is float32.
    """
    q = q.copy()
    L = L.copy()
    w = _inertia.world_omega_gu(q, L, J)
    n = q.shape[0]
    views = [a.reshape((*batch, a.shape[-1])) for a in (q, w)]
    for v in views:
        v.flags.writeable = False
    kernel = _kernel_args(info)
    loop = _loops.step_record_entry(kernel[0])
    _loops.record_all(q, L, J, 0, *out)
    bad = 0
    r = 1
    for s in range(1, steps + 1):
        t = (s - 1) * dt
        qv, wv = views if dtype == np.float64 else (v.astype(dtype) for v in views)
        tau = _torque_now(torque, t, qv, wv, batch, dtype)
        record = s % every == 0 or s == steps
        status = max(_over_ranges(
            loop, n, n, kernel, None, q, L, J, tau, t, dt, r if record else -1, w,
            *out,
        ))  # fmt: skip
        if status:
            if status == 2:
                raise InputError(
                    "torque(t, q, omega): expected finite values, got NaN or infinity "
                    f"at t = {t:.6g}"
                )
            if s == 1:
                check_step(info.name, q, w, L, batch, True)
            bad = 1
        r += record
    return bad
