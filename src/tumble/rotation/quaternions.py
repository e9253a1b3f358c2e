"""Quaternion algebra: products, rotation of vectors, exp and log, Cayley maps, angles.

Conventions (``docs/conventions.md``): quaternions are ``(..., 4)`` arrays, scalar first
``(w, x, y, z)``, Hamilton product, active rotation ``v' = q v q*``; ``quat_multiply(p, q)``
applies ``q`` first, then ``p``. Functions that read a quaternion as a rotation use
``q/|q|`` and reject a zero quaternion with :class:`tumble.InputError`.

Accuracy of the approximations, measured (see ``docs/rotation.md``):

``quat_exp_approx`` (normalised third-order exponential), error of the rotation it
produces against the exact one (the angle of ``exact* ⊗ approx``; the axis is exact), by
rotation angle per step ``|phi| = 2|x|``:

===========  ===============  ===============  ===================
step angle   angle error      relative error   ``|q_approx - q|``
===========  ===============  ===============  ===================
1°           3.4e-12 rad      1.9e-10          1.7e-12
10°          3.4e-07 rad      1.9e-06          1.7e-07
30°          8.1e-05 rad      1.6e-04          4.1e-05
45°          6.1e-04 rad      7.8e-04          3.1e-04
60°          2.5e-03 rad      2.4e-03          1.3e-03
90°          1.9e-02 rad      1.19e-02         9.4e-03
127°         1.0e-01 rad      4.5e-02          5.0e-02
180°         5.0e-01 rad      1.6e-01          2.5e-01
===========  ===============  ===============  ===================

The relative angle error grows like ``|phi|⁴/480``; it passes 1e-6 at 8.5°, 1 % at 86°.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from tumble._errors import InputError
from tumble._kernels import rotation as _k
from tumble._kernels.dispatch import flat_operand
from tumble._validate import as_float_array, as_float_dtype, as_int, check_memory, common_dtype
from tumble.rotation.operands import (
    TINY,
    no_overflow,
    normalized,
    quats,
    rotation_quats,
    rotation_quats_and_norms,
    run_binary,
    run_flat,
    run_unary,
    single,
    vectors,
)


def quat_multiply(p: ArrayLike, q: ArrayLike) -> np.ndarray:
    """Hamilton product ``p ⊗ q``: the rotation that applies ``q`` first, then ``p``.

    ``p ⊗ q = (pw qw - pv·qv, pw qv + qw pv + pv × qv)``. Plain algebra: any quaternions,
    no normalisation. Exact to round-off (a few ulp). Finite factors whose products
    overflow on the way (``|p| |q|`` near or above the largest float) are recomputed with
    both scaled by powers of two; a product whose true value is beyond the largest float
    raises :class:`tumble.InputError` naming ``p, q``. Each vector component is summed as
    two pairs, ``(pw q_i + p_i qw) + (p_j q_k - p_k q_j)``, so ``q* ⊗ q`` is the identity
    exactly (vector part 0).

    Parameters
    ----------
    p, q : array_like, shape (..., 4)
        Scalar-first quaternions; leading axes broadcast against each other.

    Returns
    -------
    ndarray, shape (..., 4)
    """
    ps, qs = single(p, (4,)), single(q, (4,))
    if ps is not None and qs is not None and ps.dtype == qs.dtype:
        out = np.empty(4, dtype=ps.dtype)
        if not _k.quat_multiply_serial(ps, qs, out):
            return out
    pa = as_float_array(p, "p", (4,), finite=False)
    qa = as_float_array(q, "q", (4,), finite=False)
    out, bad = run_flat(_k.quat_multiply_serial, _k.quat_multiply_parallel, {"p": pa, "q": qa}, 4)
    if bad:
        quats(p, "p")
        quats(q, "q")
        # Finite factors whose products overflowed in the sums: recompute those rows scaled.
        dtype = out.dtype
        leading = out.shape[:-1]
        size = math.prod(leading)
        flat = out.reshape(-1)
        _k.quat_multiply_rescue(
            flat_operand(pa.astype(dtype, copy=False), 1, leading, size),
            flat_operand(qa.astype(dtype, copy=False), 1, leading, size),
            flat,
        )
        _representable(flat, "p, q", "quaternions whose product")
    return out


def _representable(out: np.ndarray, names: str, what: str) -> None:
    """Raise if a rescued result of finite input still holds a non-finite number: the
    true value is beyond the largest float of the dtype."""
    if not np.isfinite(out).all():
        raise InputError(
            f"{names}: expected {what} is a finite {out.dtype}, got ones so large that a "
            "component of the true result is beyond the largest float"
        )


def quat_conjugate(q: ArrayLike) -> np.ndarray:
    """Conjugate ``q* = (w, -x, -y, -z)``, the inverse rotation of a unit quaternion.

    Parameters
    ----------
    q : array_like, shape (..., 4)

    Returns
    -------
    ndarray, shape (..., 4)
        Exact (sign flips only).
    """
    qs = single(q, (4,))
    if qs is not None:
        one = np.empty(4, dtype=qs.dtype)
        if not _k.quat_conjugate_one(qs, one):
            return one
    out = np.array(quats(q, "q"), copy=True)
    out[..., 1:] *= -1
    return out


def quat_normalize(q: ArrayLike) -> np.ndarray:
    """``q / |q|``, the unit quaternion of the same rotation.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Nonzero quaternions; a zero quaternion raises :class:`tumble.InputError`.

    Returns
    -------
    ndarray, shape (..., 4)
        Unit norm to round-off.
    """
    qs = single(q, (4,))
    if qs is not None:
        one = np.empty(4, dtype=qs.dtype)
        if not _k.quat_normalize_one(qs, TINY[qs.dtype], one):
            return one
    q = rotation_quats(q, "q")
    out = np.empty_like(q)
    _k.quat_normalize_gu(q, out)
    return out


def quat_rotate(q: ArrayLike, v: ArrayLike) -> np.ndarray:
    """Active rotation ``v' = q̂ v q̂*`` by the unit quaternion ``q̂ = q/|q|``.

    For a body orientation ``q`` this maps body coordinates to world coordinates:
    ``v_world = quat_rotate(q, v_body)``; ``quat_rotate(quat_conjugate(q), v_world)``
    goes back. Computed as ``t = (2/|q|²) u × v``, ``v' = v + w t + u × t`` (``u`` the
    vector part: the rotation by ``q/|q|`` without forming it); error a few ulp of ``|v|``.
    Vectors near the largest float, whose intermediate sums overflow, are recomputed
    scaled by a power of two; a rotated vector beyond the largest float raises
    :class:`tumble.InputError` naming ``v``.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Nonzero quaternions whose squared norm is a finite normal number.
    v : array_like, shape (..., 3)
        Vectors; leading axes broadcast against those of ``q``.

    Returns
    -------
    ndarray, shape (..., 3)
    """
    qs, vs = single(q, (4,)), single(v, (3,))
    if qs is not None and vs is not None and qs.dtype == vs.dtype:
        one = np.empty(3, dtype=qs.dtype)
        if not _k.quat_rotate_serial(qs, vs, TINY[qs.dtype], one) and _stored(one):
            return one
    qa = as_float_array(q, "q", (4,), finite=False)
    va = as_float_array(v, "v", (3,), finite=False)
    dtype = common_dtype(qa, va)
    loops = (_k.quat_rotate_serial, _k.quat_rotate_parallel)
    out, flagged = run_flat(*loops, {"q": qa, "v": va}, 3, TINY[dtype])
    if flagged or not _stored(out):
        # Raises for the input that caused it (judged in the dtype the loop computed in);
        # otherwise finite input overflowed on the way: those rows again, v scaled.
        qa = rotation_quats(qa.astype(dtype, copy=False), "q")
        va = vectors(va.astype(dtype, copy=False), "v")
        leading = out.shape[:-1]
        size = math.prod(leading)
        _k.quat_rotate_rescue(
            flat_operand(qa, 1, leading, size), flat_operand(va, 1, leading, size), out.reshape(-1)
        )
        _representable(out, "v", "vectors whose rotation")
    return out


def _stored(out: np.ndarray) -> bool:
    """Whether a float32 result of the rotation loop is finite as stored. The loop flags a
    result that overflowed as it computed it, but it computes float32 rows partly in float64
    (the constant of ``2/|q|²``), so a rotated vector beyond float32's range (``|v|`` near
    3.4e38) becomes infinite only when stored (issue 27): checked here, for float32 only."""
    return out.dtype != np.float32 or bool(np.isfinite(out).all())


def quat_exp(x: ArrayLike) -> np.ndarray:
    """Exponential of the imaginary quaternion ``(0, x)``: ``(cos|x|, sin|x| x/|x|)``.

    A rotation by ``2|x|`` about ``x``: ``rotvec_to_quat(phi) == quat_exp(phi/2)``, and a
    world-frame step is ``q1 = quat_multiply(quat_exp(Ω/2), q0)``. Exact to round-off,
    also at ``x -> 0`` (series of ``sin t / t``).

    Parameters
    ----------
    x : array_like, shape (..., 3)
        Vector part of the imaginary quaternion.

    Returns
    -------
    ndarray, shape (..., 4)
    """
    xs = single(x, (3,))
    if xs is not None:
        one = np.empty(4, dtype=xs.dtype)
        if not _k.quat_exp_one(xs, one):
            return one
    xa = vectors(x, "x")
    with np.errstate(over="ignore", invalid="ignore"):  # |x|² of huge x: handled
        out = run_unary(_k.quat_exp_gu, xa, 4)
    return no_overflow(out, "x", "vectors")


def quat_log(q: ArrayLike) -> np.ndarray:
    """Vector part of ``log(q/|q|)`` on the shortest arc: ``atan2(|u|, |w|) u/|u|``.

    Inverse of :func:`quat_exp` for ``|x| <= π/2``: ``q`` and ``-q`` give the same
    result (the ``w >= 0`` representative). Accurate to round-off near the identity and
    near a half turn.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Nonzero quaternions.

    Returns
    -------
    ndarray, shape (..., 3)
        ``|x| <= π/2``.
    """
    qs = single(q, (4,))
    if qs is not None:
        one = np.empty(3, dtype=qs.dtype)
        if not _k.quat_log_one(qs, TINY[qs.dtype], one):
            return one
    return run_unary(_k.quat_log_gu, rotation_quats(q, "q"), 3)


def quat_exp_approx(x: ArrayLike) -> np.ndarray:
    """Trig-free normalised third-order ``exp((0, x))`` from the rotational-integration article.

    ``exp(X) ≈ ((1 - t²/2) + (1 - t²/6) X) / sqrt((1 - t²/2)² + (1 - t²/6)² t²)``, ``t = |x|``.
    Unit to round-off, axis exact, only the angle is approximate. Measured error of the
    produced rotation against :func:`quat_exp` (angle of ``exact* ⊗ approx``), by step
    angle ``|phi| = 2|x|``: 1.9e-10 relative at 1°, 1.9e-6 at 10°, 7.8e-4 at 45°,
    1.19e-2 at 90°, growing like ``|phi|⁴/480``. The article's "under 1 % up to 90°"
    holds for the quaternion distance ``|q_approx - q_exact|`` (9.4e-3 at 90°); the
    relative angle error passes 1 % at 86°. Full table: ``docs/rotation.md``.

    Parameters
    ----------
    x : array_like, shape (..., 3)
        Vector part of the imaginary quaternion (half the rotation vector).

    Returns
    -------
    ndarray, shape (..., 4)
    """
    return run_unary(_k.quat_exp_approx_gu, vectors(x, "x"), 4)


def cayley_rotate(v: ArrayLike, phi: ArrayLike) -> np.ndarray:
    """Rotate ``v`` about ``phi`` with the Cayley transform: no trig, no square root.

    With ``t = phi/2`` and ``u = t × v``: ``v' = v + 2 (u + t × u) / (1 + |t|²)``. The map
    is the Cayley transform of ``[phi/2]×``, an exact rotation, so ``|v'| = |v|`` to
    round-off; the axis is exactly ``phi/|phi|``. Angle law: the angle turned is
    ``2 atan(|phi|/2) = |phi| - |phi|³/12 + ...`` (4.7 % short at 45°, 15.2 % at 90°,
    never more than a half turn). Same rotation as ``normalize(q + ½ (0, phi) ⊗ q)``.
    Vectors near the largest float, whose intermediate sums overflow, are recomputed
    scaled by a power of two; a rotated vector beyond the largest float raises
    :class:`tumble.InputError` naming ``v``.

    Parameters
    ----------
    v : array_like, shape (..., 3)
        Vectors to rotate.
    phi : array_like, shape (..., 3)
        Rotation vectors (for example ``omega * dt``, world frame for world vectors).

    Returns
    -------
    ndarray, shape (..., 3)
    """
    va, pa = vectors(v, "v"), vectors(phi, "phi")
    with np.errstate(over="ignore", invalid="ignore"):
        out = run_binary(_k.cayley_rotate_gu, va, pa, ("v", "phi"), 3)
        if np.isfinite(out).all():
            return out
        # Vectors near the largest float overflow in the sums: the map is linear in v, so
        # again with each v scaled by a power of two into [1/2, 1) and scaled back (exact).
        e = np.frexp(np.max(np.abs(va), axis=-1, keepdims=True))[1]
        out = np.ldexp(run_binary(_k.cayley_rotate_gu, np.ldexp(va, -e), pa, ("v", "phi"), 3), e)
    _representable(out, "v", "vectors whose rotation")
    return out


def cayley_quat(phi: ArrayLike) -> np.ndarray:
    """Quarter-angle Cayley quaternion for orientation updates: no trig, no square root.

    With ``a = phi/4``: ``Δq = ((1 - |a|²), 2a) / (1 + |a|²)``, unit to round-off, axis
    exact, angle ``4 atan(|phi|/4) = |phi| - |phi|³/48 + ...`` (1.26 % short at 45°,
    4.7 % at 90°). A world-frame step is ``quat_multiply(cayley_quat(omega * dt), q)``.

    Parameters
    ----------
    phi : array_like, shape (..., 3)
        Rotation vectors.

    Returns
    -------
    ndarray, shape (..., 4)
    """
    return run_unary(_k.cayley_quat_gu, vectors(phi, "phi"), 4)


#: Smallest ``|q|²`` of either factor that :func:`rotation_angle` hands to its kernel as it
#: is. From there on ``|p* ⊗ q|² = |p|² |q|²`` is large enough that the subnormal rounding
#: of the squared vector part (``2^-1074`` in float64) moves the angle by less than an ulp:
#: ``2^(log2(smallest subnormal)/2 + mantissa bits)``, 2^-485 in float64, 2^-51 in float32.
_ANGLE_TINY = {
    np.dtype(t): 2.0
    ** math.ceil(math.log2(float(np.finfo(t).smallest_subnormal)) / 2 + np.finfo(t).nmant)
    for t in (np.float32, np.float64)
}
#: What the kernel's ``2 atan2(|u|, |w|)`` gives when ``|u|²`` or ``w`` overflow on the way
#: (``|p| |q|`` near the largest float), in float64 and float32: such angles are recomputed
#: from the normalised factors (a true angle of exactly 0, π/2 or π gives the same again).
_OVERFLOW_ANGLES = frozenset(
    float(t(a)) for t in (np.float64, np.float32) for a in (0.0, math.pi / 2, math.pi)
)


def rotation_angle(p: ArrayLike, q: ArrayLike) -> np.ndarray | np.floating:
    """Angle in ``[0, π]`` of the rotation between orientations ``p`` and ``q``.

    ``2 atan2(|u|, |w|)`` of ``p* ⊗ q = (w, u)``: double-cover aware (``q`` and ``-q``
    are at angle 0), accurate for small angles (no ``acos``), scale invariant: factors
    whose product would overflow on the way, or whose squared vector part would underflow,
    are normalised first, so any quaternions accepted as rotations give the angle to
    round-off.

    Parameters
    ----------
    p, q : array_like, shape (..., 4)
        Nonzero quaternions; leading axes broadcast.

    Returns
    -------
    ndarray, shape (...)
        A NumPy scalar when both inputs are single quaternions.
    """
    ps, qs = single(p, (4,)), single(q, (4,))
    if ps is not None and qs is not None and ps.dtype == qs.dtype:
        bad, angle = _k.rotation_angle_one(ps, qs, _ANGLE_TINY[ps.dtype])
        if not bad and angle not in _OVERFLOW_ANGLES:
            return ps.dtype.type(angle)
    pa, p_small, p_large = rotation_quats_and_norms(p, "p")
    qa, q_small, q_large = rotation_quats_and_norms(q, "q")
    dtype = common_dtype(pa, qa)
    # The kernel takes the factors as they are when |p|² |q|² is far from both ends of the
    # range (a few thousand ulp at the top for the sums of products); else unit factors.
    if not (
        min(p_small, q_small) >= _ANGLE_TINY[dtype]
        and p_large * q_large < float(np.finfo(dtype).max) / 16
    ):
        pa, qa = normalized(pa), normalized(qa)
    out = run_binary(_k.rotation_angle_gu, pa, qa, ("p", "q"), 0)
    return out[()]


def random_quat(
    shape: int | tuple[int, ...] = (),
    rng: int | np.random.Generator | None = None,
    *,
    dtype: DTypeLike = np.float64,
) -> np.ndarray:
    """Unit quaternions distributed uniformly on SO(3) (Haar measure).

    Normalised standard Gaussian 4-vectors are uniform on the 3-sphere, whose image in
    SO(3) is uniform. Both signs of ``w`` occur, each with probability 1/2.

    Parameters
    ----------
    shape : int or tuple of int
        Batch shape; the result has shape ``shape + (4,)``.
    rng : int, numpy.random.Generator or None
        Seed or generator (``None``: fresh entropy).
    dtype : float32 or float64
        dtype of the result (drawn in float64).

    Returns
    -------
    ndarray, shape (*shape, 4)
    """
    batch = _shape(shape)
    if isinstance(rng, np.random.Generator):
        gen = rng
    elif rng is None:
        gen = np.random.default_rng()
    else:
        gen = np.random.default_rng(as_int(rng, "rng", minimum=0, maximum=None))
    dt = as_float_dtype(dtype)
    # Drawn in float64, then divided by the norms: two float64 arrays of the result's shape.
    check_memory(2 * 32 * math.prod(batch), "shape", f"{batch} random quaternions")
    q = gen.standard_normal((*batch, 4))
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    # A Gaussian 4-vector this short has probability ~1e-50; redraw it rather than divide.
    while np.any(bad := n[..., 0] < 1e-12):
        q[bad] = gen.standard_normal((int(bad.sum()), 4))
        n = np.linalg.norm(q, axis=-1, keepdims=True)
    return (q / n).astype(dt)


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, tuple | list):
        return tuple(as_int(s, "shape", minimum=0) for s in shape)
    return (as_int(shape, "shape", minimum=0),)
