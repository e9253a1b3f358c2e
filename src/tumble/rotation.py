"""Rotation algebra: quaternions, rotation matrices, rotation vectors, exp and log.

Conventions (``docs/conventions.md``): quaternions are ``(..., 4)`` arrays, scalar first
``(w, x, y, z)``, Hamilton product, active rotation ``v' = q v q*``; ``quat_multiply(p, q)``
applies ``q`` first, then ``p``. Vectors are ``(..., 3)``, matrices ``(..., 3, 3)``; every
function broadcasts over leading axes. float32 stays float32, float64 stays float64,
integers become float64. Functions that read a quaternion as a rotation use ``q/|q|`` and
reject a zero quaternion with :class:`tumble.InputError`.

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
import warnings
from typing import Any

import numba
import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from tumble._errors import InputError, TumbleWarning
from tumble._kernels import rotation as _k
from tumble._kernels.dispatch import flat_operand, use_parallel
from tumble._linalg import axial_vector, cross_matrix
from tumble._validate import (
    as_float_array,
    as_float_dtype,
    as_int,
    broadcast_leading,
    check_memory,
    check_rotation_matrix,
    common_dtype,
    rotation_tolerance,
)

__all__ = [
    "GimbalLockWarning",
    "align_vectors",
    "cayley_quat",
    "cayley_rotate",
    "euler_to_matrix",
    "euler_to_quat",
    "from_scipy",
    "matrix_to_euler",
    "matrix_to_quat",
    "matrix_to_rotvec",
    "mrp_shadow",
    "mrp_to_quat",
    "quat_conjugate",
    "quat_exp",
    "quat_exp_approx",
    "quat_log",
    "quat_mean",
    "quat_multiply",
    "quat_normalize",
    "quat_power",
    "quat_rotate",
    "quat_to_euler",
    "quat_to_matrix",
    "quat_to_mrp",
    "quat_to_rotvec",
    "random_quat",
    "rotation_angle",
    "rotvec_to_matrix",
    "rotvec_to_quat",
    "skew",
    "so3_left_jacobian",
    "so3_left_jacobian_inverse",
    "so3_right_jacobian",
    "so3_right_jacobian_inverse",
    "to_scipy",
    "unskew",
]

#: Largest accepted ``|R Rᵀ - I|`` entry for a 3 x 3 matrix read as a rotation: the one
#: policy of :func:`tumble._validate.rotation_tolerance` (shared with
#: :class:`tumble.transform.Transform`), 2.9e-6 in float64 and 1.0e-3 in float32. Far above
#: round-off (and float32 rounding), far below what a scaled, sheared or wrongly built
#: matrix shows.
ORTHOGONALITY_TOLERANCE = {np.dtype(t): rotation_tolerance(t, 3) for t in (np.float32, np.float64)}

# Smallest normal number per dtype (np.finfo costs a microsecond per call).
_TINY = {np.dtype(t): float(np.finfo(t).tiny) for t in (np.float32, np.float64)}
_FLOATS = (np.dtype(np.float64), np.dtype(np.float32))


class GimbalLockWarning(TumbleWarning):
    """Euler angles at gimbal lock: the third angle was set to zero (SciPy's choice)."""


def _single(x: Any, shape: tuple[int, ...]) -> np.ndarray | None:
    """``x`` as one C-contiguous float element of ``shape``, or None for the general path.

    The fast path of the functions below. For one ``(4,)``, ``(3,)`` or ``(3, 3)`` element
    the general path's broadcasting, dtype resolution and operand preparation cost about
    ten microseconds of Python, far more than the arithmetic; the fast path calls the same
    scalar kernel on the element directly. Its kernel reports any input the validators
    would look at (zero, overflowing or non-finite values, a matrix that is not a
    rotation) and any non-finite result, and the caller then runs the general path, which
    raises the same errors and computes the same bits. Everything else (batches, mixed
    dtypes, other types) returns None here.
    """
    if type(x) is not np.ndarray:
        if type(x) not in (list, tuple):
            return None
        try:
            x = np.asarray(x)
        except ValueError:
            return None
    if x.shape != shape:
        return None
    if x.dtype not in _FLOATS:
        if x.dtype.kind not in "iu":
            return None
        return x.astype(np.float64)
    if not x.flags.c_contiguous:
        return np.ascontiguousarray(x)
    return x


def _quat(x: Any, name: str) -> np.ndarray:
    return as_float_array(x, name, (4,))


def _vec(x: Any, name: str) -> np.ndarray:
    return as_float_array(x, name, (3,))


def _rotation_quat(x: Any, name: str) -> np.ndarray:
    """A quaternion read as a rotation: finite, ``|q|²`` neither zero nor overflowing."""
    q = _quat(x, name)
    if q.size:
        smallest, largest = _k.norm2_range(np.ascontiguousarray(q).reshape(-1, 4))
        if not smallest >= np.finfo(q.dtype).tiny:
            raise InputError(
                f"{name}: expected nonzero quaternions, got one of squared norm {smallest:.3g}"
            )
        if not largest < np.inf:
            raise InputError(
                f"{name}: expected quaternions whose squared norm is finite, got one of "
                f"squared norm {largest:.3g}"
            )
    return q


def unit_quat(x: ArrayLike, name: str, dtype: np.dtype | None = None) -> np.ndarray:
    """``x / |x|`` for quaternions read as rotations, validated by :func:`_rotation_quat`.

    The one normalisation every module uses (``rigid``, ``exact``, ``diagnostics``): any
    nonzero finite quaternion whose squared norm is a finite normal number is accepted,
    so a zero quaternion and one with ``|q|² `` overflowing (``|q| > ~1e154`` in float64)
    raise :class:`tumble.InputError` naming ``name`` instead of turning into NaN or the
    identity. ``dtype`` forces the dtype of the result (default: follow the input).
    """
    q = _rotation_quat(as_float_array(x, name, (4,), dtype=dtype), name)
    return q / np.sqrt(np.sum(q * q, axis=-1, keepdims=True))


def _rotation_matrix(x: Any, name: str) -> np.ndarray:
    """A finite ``(..., 3, 3)`` rotation matrix flattened to ``(..., 9)``."""
    R = as_float_array(x, name, (3, 3))
    flat = np.ascontiguousarray(R).reshape((*R.shape[:-2], 9))
    if flat.size:
        # R Rᵀ = I exactly when Rᵀ R = I; the compiled loop measures, the policy is shared.
        measured = _k.orthogonality_error(flat.reshape(-1, 9))
        check_rotation_matrix(R, name, (float(measured[0]), float(measured[1])))
    return flat


def _flat(
    serial: Any,
    parallel: Any,
    named: dict[str, np.ndarray],
    n_out: int,
    *extra: Any,
    scalars: tuple[str, ...] = (),
) -> tuple[np.ndarray, Any]:
    """Run a flat loop over the broadcast rows of ``named``: (result, what the loop returns).

    Each argument has one component axis, except those named in ``scalars`` (one number
    per element). The loops count flagged rows: a NaN or infinite input always gives a
    non-finite result, so they flag non-finite results instead of reading the input a
    second time. On a nonzero count the caller runs the full NumPy validation, which names
    the bad argument, and then deals with finite input whose evaluation overflowed.
    """
    trailing = {k: (0 if k in scalars else 1) for k in named}
    leading = broadcast_leading(**{k: (a, trailing[k]) for k, a in named.items()})
    dtype = common_dtype(*named.values())
    size = math.prod(leading)
    operands = [
        flat_operand(a.astype(dtype, copy=False), trailing[k], leading, size)
        for k, a in named.items()
    ]
    out = np.empty(size * n_out, dtype=dtype)
    kernel = parallel if use_parallel(size) else serial
    flagged = kernel(*operands, *extra, out) if size else 0
    return out.reshape((*leading, n_out)), flagged


def _one_input(
    loops: tuple[Any, Any],
    x: Any,
    name: str,
    n_in: int,
    n_out: int,
    check: Any,
    extra: Any = lambda dtype: (),
) -> np.ndarray:
    """A one-input flat loop with the single-element fast path.

    ``loops`` are the serial and parallel twins, called as ``loop(x, *extra(dtype), out)``;
    ``check(x, name, out)`` runs the full validation when the loop flags a row (raising
    for bad input) and decides what a flagged result from finite input means.
    """
    one = _single(x, (n_in,))
    if one is not None:
        out = np.empty(n_out, dtype=one.dtype)
        if not loops[0](one, *extra(one.dtype), out):
            return out
    xa = as_float_array(x, name, (n_in,), finite=False)
    out, bad = _flat(*loops, {name: xa}, n_out, *extra(xa.dtype))
    if bad:
        check(xa, name, out)
    return out


def _finite_vector(x: np.ndarray, name: str, out: np.ndarray) -> None:
    _vec(x, name)


def _finite_rotation_vector(x: np.ndarray, name: str, out: np.ndarray) -> None:
    _vec(x, name)
    _no_overflow(out, name, "rotation vectors")


def _usable_quat(x: np.ndarray, name: str, out: np.ndarray) -> None:
    _rotation_quat(x, name)


def _tiny(dtype: np.dtype) -> tuple[float]:
    return (_TINY[dtype],)


def _no_overflow(out: np.ndarray, name: str, what: str) -> np.ndarray:
    """``out`` unless finite input gave a NaN: then the input's size overflowed (raise)."""
    if np.isnan(out).any():
        raise InputError(
            f"{name}: expected {what} whose size is a finite float, got one so large "
            "that it overflows"
        )
    return out


def _out(leading: tuple[int, ...], trailing: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return np.empty(leading + trailing, dtype=dtype)


def _unary(kernel: Any, x: np.ndarray, n_out: int) -> np.ndarray:
    """Apply a one-input gufunc whose output has ``n_out`` components."""
    out = _out(x.shape[:-1], (n_out,), x.dtype)
    kernel(x, np.empty(n_out, dtype=x.dtype), out)
    return out


def _binary(
    kernel: Any, a: np.ndarray, b: np.ndarray, names: tuple[str, str], n_out: int
) -> np.ndarray:
    """Apply a two-input gufunc with broadcasting of the leading axes and a common dtype."""
    leading = broadcast_leading(**{names[0]: (a, 1), names[1]: (b, 1)})
    dtype = common_dtype(a, b)
    out = _out(leading, (n_out,) if n_out else (), dtype)
    kernel(a.astype(dtype, copy=False), b.astype(dtype, copy=False), out)
    return out


def _rotvec_matrix(kernel: Any, phi: Any) -> np.ndarray:
    """Apply a gufunc mapping rotation vectors ``phi`` (validated here) to 3 x 3 matrices."""
    pa = _vec(phi, "phi")
    return _unary(kernel, pa, 9).reshape((*pa.shape[:-1], 3, 3))


def quat_multiply(p: ArrayLike, q: ArrayLike) -> np.ndarray:
    """Hamilton product ``p ⊗ q``: the rotation that applies ``q`` first, then ``p``.

    ``p ⊗ q = (pw qw - pv·qv, pw qv + qw pv + pv × qv)``. Plain algebra: any quaternions,
    no normalisation. Exact to round-off (a few ulp). Finite factors whose products
    overflow on the way (``|p| |q|`` near or above the largest float) are recomputed with
    both scaled by powers of two, so a component is infinite only when its true value is
    beyond the largest float, never NaN.

    Parameters
    ----------
    p, q : array_like, shape (..., 4)
        Scalar-first quaternions; leading axes broadcast against each other.

    Returns
    -------
    ndarray, shape (..., 4)
    """
    ps, qs = _single(p, (4,)), _single(q, (4,))
    if ps is not None and qs is not None and ps.dtype == qs.dtype:
        out = np.empty(4, dtype=ps.dtype)
        if not _k.quat_multiply_serial(ps, qs, out):
            return out
    pa = as_float_array(p, "p", (4,), finite=False)
    qa = as_float_array(q, "q", (4,), finite=False)
    out, bad = _flat(_k.quat_multiply_serial, _k.quat_multiply_parallel, {"p": pa, "q": qa}, 4)
    if bad:
        _quat(p, "p")
        _quat(q, "q")
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
    return out


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
    qs = _single(q, (4,))
    if qs is not None:
        one = np.empty(4, dtype=qs.dtype)
        if not _k.quat_conjugate_one(qs, one):
            return one
    out = np.array(_quat(q, "q"), copy=True)
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
    qs = _single(q, (4,))
    if qs is not None:
        one = np.empty(4, dtype=qs.dtype)
        if not _k.quat_normalize_one(qs, _TINY[qs.dtype], one):
            return one
    q = _rotation_quat(q, "q")
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
    scaled by a power of two: the result is infinite only if it is not representable.

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
    qs, vs = _single(q, (4,)), _single(v, (3,))
    if qs is not None and vs is not None and qs.dtype == vs.dtype:
        one = np.empty(3, dtype=qs.dtype)
        if not _k.quat_rotate_serial(qs, vs, _TINY[qs.dtype], one):
            return one
    qa = as_float_array(q, "q", (4,), finite=False)
    va = as_float_array(v, "v", (3,), finite=False)
    dtype = common_dtype(qa, va)
    loops = (_k.quat_rotate_serial, _k.quat_rotate_parallel)
    out, flagged = _flat(*loops, {"q": qa, "v": va}, 3, _TINY[dtype])
    if flagged:
        # Raises for the input that caused it (judged in the dtype the loop computed in);
        # otherwise finite input overflowed on the way: those rows again, v scaled.
        qa = _rotation_quat(qa.astype(dtype, copy=False), "q")
        va = _vec(va.astype(dtype, copy=False), "v")
        leading = out.shape[:-1]
        size = math.prod(leading)
        _k.quat_rotate_rescue(
            flat_operand(qa, 1, leading, size), flat_operand(va, 1, leading, size), out.reshape(-1)
        )
    return out


def quat_to_matrix(q: ArrayLike) -> np.ndarray:
    """Rotation matrix ``R`` with ``R v = q v q*`` (Euler-Rodrigues form, ``q/|q|``).

    ``R = I + 2 w [u]× + 2 [u]×²`` for unit ``q = (w, u)``; orthogonal to round-off.
    For a body orientation, ``R`` maps body to world coordinates.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Nonzero quaternions.

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    qs = _single(q, (4,))
    if qs is not None:
        one = np.empty((3, 3), dtype=qs.dtype)
        if not _k.quat_to_matrix_one(qs, _TINY[qs.dtype], one):
            return one
    q = _rotation_quat(q, "q")
    return _unary(_k.quat_to_matrix_gu, q, 9).reshape((*q.shape[:-1], 3, 3))


def matrix_to_quat(R: ArrayLike) -> np.ndarray:
    """Unit quaternion of a rotation matrix, the ``w >= 0`` representative.

    Shepperd's method: the square root is taken of the largest of ``1 + tr R`` and
    ``1 + 2 R_ii - tr R``, so the result is accurate to round-off at every angle,
    including half turns. Matrices must be rotations to ``ORTHOGONALITY_TOLERANCE``
    (``2.9e-6`` for float64, ``1e-3`` for float32, the policy ``Transform`` uses too) with
    determinant +1; the result is the
    quaternion of the (near-)rotation normalised to unit length.

    Parameters
    ----------
    R : array_like, shape (..., 3, 3)

    Returns
    -------
    ndarray, shape (..., 4)
        ``w >= 0``.
    """
    Rs = _single(R, (3, 3))
    if Rs is not None:
        one = np.empty(4, dtype=Rs.dtype)
        if not _k.matrix_to_quat_one(Rs, ORTHOGONALITY_TOLERANCE[Rs.dtype], one):
            return one
    return _unary(_k.matrix_to_quat_gu, _rotation_matrix(R, "R"), 4)


def rotvec_to_quat(phi: ArrayLike) -> np.ndarray:
    """Unit quaternion ``exp(phi/2) = (cos(θ/2), sin(θ/2) phi/θ)``, ``θ = |phi|``.

    Accurate to round-off at every angle; the small-angle branch uses the series of
    ``sin(θ/2)/θ``. Huge vectors (``|phi|²`` overflowing) take their length scaled, so
    every ``phi`` whose length is a finite float gives a unit quaternion; a longer one
    raises :class:`tumble.InputError`.

    Parameters
    ----------
    phi : array_like, shape (..., 3)
        Rotation vectors (angle ``|phi|`` in radians about the axis ``phi/|phi|``).

    Returns
    -------
    ndarray, shape (..., 4)
    """
    loops = (_k.rotvec_to_quat_serial, _k.rotvec_to_quat_parallel)
    return _one_input(loops, phi, "phi", 3, 4, _finite_rotation_vector)


def quat_to_rotvec(q: ArrayLike) -> np.ndarray:
    """Rotation vector of ``q``: ``2 atan2(|u|, w) u/|u|`` for the ``w >= 0`` representative.

    The angle lies in ``[0, π]``; at exactly ``π`` either sign of the axis may come out.
    Uses ``atan2`` (never ``acos``), so accurate to round-off near 0 and near ``π``.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Nonzero quaternions.

    Returns
    -------
    ndarray, shape (..., 3)
    """
    qs = _single(q, (4,))
    if qs is not None:
        one = np.empty(3, dtype=qs.dtype)
        if not _k.quat_to_rotvec_one(qs, _TINY[qs.dtype], one):
            return one
    return _unary(_k.quat_to_rotvec_gu, _rotation_quat(q, "q"), 3)


def rotvec_to_matrix(phi: ArrayLike) -> np.ndarray:
    """Rodrigues: ``exp([phi]×) = I + sin θ [n]× + (1 - cos θ) [n]×²``, ``θ = |phi|``.

    Evaluated in half-angle (Euler-Rodrigues) form through ``exp(phi/2)``, which is
    accurate to round-off near 0 and near ``π``.

    Parameters
    ----------
    phi : array_like, shape (..., 3)

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    ps = _single(phi, (3,))
    if ps is not None:
        one = np.empty((3, 3), dtype=ps.dtype)
        if not _k.rotvec_to_matrix_one(ps, one):
            return one
    with np.errstate(over="ignore", invalid="ignore"):  # |phi|² of huge phi: handled
        out = _rotvec_matrix(_k.rotvec_to_matrix_gu, phi)
    return _no_overflow(out, "phi", "rotation vectors")


def matrix_to_rotvec(R: ArrayLike) -> np.ndarray:
    """Rotation vector of a rotation matrix (inverse Rodrigues), angle in ``[0, π]``.

    Through Shepperd's quaternion and ``atan2``: accurate to round-off at every angle.
    Same matrix checks as :func:`matrix_to_quat`.

    Parameters
    ----------
    R : array_like, shape (..., 3, 3)

    Returns
    -------
    ndarray, shape (..., 3)
    """
    Rs = _single(R, (3, 3))
    if Rs is not None:
        one = np.empty(3, dtype=Rs.dtype)
        if not _k.matrix_to_rotvec_one(Rs, ORTHOGONALITY_TOLERANCE[Rs.dtype], one):
            return one
    return _unary(_k.matrix_to_rotvec_gu, _rotation_matrix(R, "R"), 3)


def skew(v: ArrayLike) -> np.ndarray:
    """Cross-product matrix ``[v]×`` with ``[v]× b = v × b``.

    ``[v]× = [[0, -v3, v2], [v3, 0, -v1], [-v2, v1, 0]]``; exact.

    Parameters
    ----------
    v : array_like, shape (..., 3)

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    return cross_matrix(_vec(v, "v"))


def unskew(W: ArrayLike) -> np.ndarray:
    """Vector ``v`` of the antisymmetric part of ``W``: ``[v]× = (W - Wᵀ)/2``.

    The inverse of :func:`skew`; a matrix that is not antisymmetric is projected (its
    symmetric part ignored) rather than rejected, so ``unskew`` of a finite-difference
    ``dR/dt Rᵀ`` gives the best angular velocity.

    Parameters
    ----------
    W : array_like, shape (..., 3, 3)

    Returns
    -------
    ndarray, shape (..., 3)
    """
    return axial_vector(as_float_array(W, "W", (3, 3)))


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
    xs = _single(x, (3,))
    if xs is not None:
        one = np.empty(4, dtype=xs.dtype)
        if not _k.quat_exp_one(xs, one):
            return one
    xa = _vec(x, "x")
    with np.errstate(over="ignore", invalid="ignore"):  # |x|² of huge x: handled
        out = _unary(_k.quat_exp_gu, xa, 4)
    return _no_overflow(out, "x", "vectors")


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
    qs = _single(q, (4,))
    if qs is not None:
        one = np.empty(3, dtype=qs.dtype)
        if not _k.quat_log_one(qs, _TINY[qs.dtype], one):
            return one
    return _unary(_k.quat_log_gu, _rotation_quat(q, "q"), 3)


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
    return _unary(_k.quat_exp_approx_gu, _vec(x, "x"), 4)


def cayley_rotate(v: ArrayLike, phi: ArrayLike) -> np.ndarray:
    """Rotate ``v`` about ``phi`` with the Cayley transform: no trig, no square root.

    With ``t = phi/2`` and ``u = t × v``: ``v' = v + 2 (u + t × u) / (1 + |t|²)``. The map
    is the Cayley transform of ``[phi/2]×``, an exact rotation, so ``|v'| = |v|`` to
    round-off; the axis is exactly ``phi/|phi|``. Angle law: the angle turned is
    ``2 atan(|phi|/2) = |phi| - |phi|³/12 + ...`` (4.7 % short at 45°, 15.2 % at 90°,
    never more than a half turn). Same rotation as ``normalize(q + ½ (0, phi) ⊗ q)``.

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
    return _binary(_k.cayley_rotate_gu, _vec(v, "v"), _vec(phi, "phi"), ("v", "phi"), 3)


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
    return _unary(_k.cayley_quat_gu, _vec(phi, "phi"), 4)


def rotation_angle(p: ArrayLike, q: ArrayLike) -> np.ndarray | np.floating:
    """Angle in ``[0, π]`` of the rotation between orientations ``p`` and ``q``.

    ``2 atan2(|u|, |w|)`` of ``p* ⊗ q = (w, u)``: double-cover aware (``q`` and ``-q``
    are at angle 0), accurate for small angles (no ``acos``), scale invariant.

    Parameters
    ----------
    p, q : array_like, shape (..., 4)
        Nonzero quaternions; leading axes broadcast.

    Returns
    -------
    ndarray, shape (...)
        A NumPy scalar when both inputs are single quaternions.
    """
    ps, qs = _single(p, (4,)), _single(q, (4,))
    if ps is not None and qs is not None and ps.dtype == qs.dtype:
        bad, angle = _k.rotation_angle_one(ps, qs, _TINY[ps.dtype])
        if not bad:
            return ps.dtype.type(angle)
    out = _binary(
        _k.rotation_angle_gu,
        _rotation_quat(p, "p"),
        _rotation_quat(q, "q"),
        ("p", "q"),
        0,
    )
    return out[()]


# --------------------------------------------------------------------------------------
# Euler angles


def _parse_sequence(seq: str) -> tuple[int, int, int, bool]:
    i, j, k = ("xyz".index(c) for c in seq.lower())
    return i, j, k, seq.islower()


# The 24 valid spellings (12 sequences, extrinsic and intrinsic): a dict look-up per call.
_SEQUENCES = {
    s: _parse_sequence(s)
    for base in ("xyz", "xzy", "yxz", "yzx", "zxy", "zyx", "xyx", "xzx", "yxy", "yzy", "zxz", "zyz")
    for s in (base, base.upper())
}


def _sequence(seq: Any) -> tuple[int, int, int, bool]:
    """Axis numbers ``(i, j, k)`` and ``extrinsic`` of SciPy's spelling of a sequence."""
    try:
        return _SEQUENCES[seq]
    except (KeyError, TypeError):
        raise InputError(
            "seq: expected three axes from 'xyz' (extrinsic) or 'XYZ' (intrinsic), no axis "
            f"twice in a row, such as 'xyz', 'ZYX' or 'zxz'; got {seq!r}"[:200]
        ) from None


def _as_bool(x: Any, name: str) -> bool:
    if not isinstance(x, bool | np.bool_):
        raise InputError(f"{name}: expected True or False, got {x!r}"[:120])
    return bool(x)


def euler_to_quat(angles: ArrayLike, seq: str, degrees: bool = False) -> np.ndarray:
    """Quaternion of Euler angles in one of the 12 sequences, SciPy's ``from_euler``.

    ``seq`` as SciPy spells it: three axes from ``"xyz"``, lower case for extrinsic
    (rotations about the fixed world axes), upper case for intrinsic (about the moving body
    axes), no axis twice in a row: the six proper Euler sequences (``"zxz"``, ``"ZYZ"``,
    ...) and the six Tait-Bryan ones (``"xyz"``, ``"ZYX"``, ...), each extrinsic or
    intrinsic. With ``e_n(a) = (cos a/2, sin a/2 ê_n)``::

        extrinsic "ijk": q = e_k(a3) ⊗ e_j(a2) ⊗ e_i(a1)   (first angle applied first)
        intrinsic "IJK": q = e_i(a1) ⊗ e_j(a2) ⊗ e_k(a3)

    so intrinsic ``"XYZ"`` equals extrinsic ``"zyx"`` with the angles reversed. The
    quaternion maps body to world coordinates (``docs/conventions.md``). Accurate to a few
    ulp (half-angle sines and cosines, two products); float32 is evaluated in float64.

    Parameters
    ----------
    angles : array_like, shape (..., 3)
        The three angles, in the order of ``seq``; radians unless ``degrees``.
    seq : str
        The sequence, for example ``"xyz"`` or ``"ZXZ"``.
    degrees : bool

    Returns
    -------
    ndarray, shape (..., 4)
        Unit quaternions (either sign of ``w`` may come out).
    """
    i, j, k, extrinsic = _sequence(seq)
    if _as_bool(degrees, "degrees"):
        angles = np.deg2rad(as_float_array(angles, "angles", (3,)))
    loops = (_k.euler_to_quat_serial, _k.euler_to_quat_parallel)
    return _one_input(
        loops, angles, "angles", 3, 4, _finite_vector, lambda dtype: (i, j, k, extrinsic)
    )


def quat_to_euler(q: ArrayLike, seq: str, degrees: bool = False) -> np.ndarray:
    """Euler angles of ``q/|q|`` in one of the 12 sequences, SciPy's ``as_euler``.

    The sequences and their meaning are those of :func:`euler_to_quat`, which this
    inverts. Ranges as SciPy: the first and third angles in ``[-π, π]``, the middle one in
    ``[0, π]`` for a proper Euler sequence (first and last axis equal) and in
    ``[-π/2, π/2]`` for a Tait-Bryan one. Computed by the direct method of Bernardes and
    Viollet (2022): two ``atan2`` of permuted components give the half sum and half
    difference of the outer angles, one ``atan2`` of norms the middle angle (for
    Tait-Bryan sequences ``atan2(4 (w q_j - s q_i q_k), 2 |(a, b)| |(c, d)|)``, exact near
    zero, where ``2 atan2(..) - π/2`` would cancel). Measured against a 50-digit mpmath
    evaluation away from lock: within 2 ulp of π (absolute) on every angle
    (``docs/rotation.md``).

    Gimbal lock: when the middle angle is within ``1e-7`` rad of 0 or π (SciPy's threshold)
    only the sum or difference of the outer angles is determined. The third angle is then
    set to zero and the first carries the rotation, as SciPy does, and a
    :class:`GimbalLockWarning` (a :class:`tumble.TumbleWarning`) says how many elements
    were affected.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Nonzero quaternions (``q`` and ``-q`` give the same angles).
    seq : str
        The sequence, for example ``"xyz"`` or ``"ZXZ"``.
    degrees : bool
        Return degrees instead of radians.

    Returns
    -------
    ndarray, shape (..., 3)
    """
    i, j, k, extrinsic = _sequence(seq)
    deg = _as_bool(degrees, "degrees")
    one = _single(q, (4,))
    if one is not None:
        out = np.empty(3, dtype=one.dtype)
        bad, locked = _k.quat_to_euler_serial(one, i, j, k, extrinsic, _TINY[one.dtype], out)
        if not bad:
            if locked:
                _warn_lock(locked)
            return np.rad2deg(out) if deg else out
    qa = as_float_array(q, "q", (4,), finite=False)
    loops = (_k.quat_to_euler_serial, _k.quat_to_euler_parallel)
    out, counts = _flat(*loops, {"q": qa}, 3, i, j, k, extrinsic, _TINY[qa.dtype])
    bad, locked = counts if out.size else (0, 0)
    if bad:
        _rotation_quat(qa, "q")
    if locked:
        _warn_lock(locked)
    return np.rad2deg(out) if deg else out


def _warn_lock(count: int) -> None:
    warnings.warn(
        GimbalLockWarning(
            f"gimbal lock in {count} element(s): the middle angle is within 1e-7 rad of 0 or "
            "pi, so only the sum or difference of the outer angles is determined; the third "
            "angle was set to zero"
        ),
        stacklevel=3,
    )


def euler_to_matrix(angles: ArrayLike, seq: str, degrees: bool = False) -> np.ndarray:
    """Rotation matrix of Euler angles: ``quat_to_matrix(euler_to_quat(angles, seq))``.

    The matrix twin of :func:`euler_to_quat` (SciPy: ``from_euler(...).as_matrix()``);
    extrinsic ``"ijk"`` is ``R_k(a3) R_j(a2) R_i(a1)``, intrinsic ``"IJK"`` is
    ``R_i(a1) R_j(a2) R_k(a3)``.

    Parameters
    ----------
    angles : array_like, shape (..., 3)
    seq : str
    degrees : bool

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    return quat_to_matrix(euler_to_quat(angles, seq, degrees))


def matrix_to_euler(R: ArrayLike, seq: str, degrees: bool = False) -> np.ndarray:
    """Euler angles of a rotation matrix: ``quat_to_euler(matrix_to_quat(R), seq)``.

    The matrix twin of :func:`quat_to_euler` (SciPy: ``from_matrix(R).as_euler(seq)``),
    with the matrix checks of :func:`matrix_to_quat` and the same gimbal-lock rule.

    Parameters
    ----------
    R : array_like, shape (..., 3, 3)
    seq : str
    degrees : bool

    Returns
    -------
    ndarray, shape (..., 3)
    """
    _sequence(seq)
    return quat_to_euler(matrix_to_quat(R), seq, degrees)


# --------------------------------------------------------------------------------------
# modified Rodrigues parameters and powers


def quat_to_mrp(q: ArrayLike) -> np.ndarray:
    """Modified Rodrigues parameters ``p = u / (1 + w)`` of ``q/|q|``, SciPy's ``as_mrp``.

    ``p = tan(θ/4) n`` for the rotation by ``θ`` about ``n``. Of the two sets
    (``p`` and its shadow ``-p/|p|²``, from ``q`` and ``-q``) the one with ``|p| <= 1`` is
    returned (the ``w >= 0`` representative), which stays far from the singularity at a
    full turn; :func:`mrp_shadow` gives the other. Scale invariant and accurate to a few
    ulp: ``p = sign(w) u / (|q| + |w|)`` has no cancellation.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Nonzero quaternions.

    Returns
    -------
    ndarray, shape (..., 3)
        ``|p| <= 1``.
    """
    loops = (_k.quat_to_mrp_serial, _k.quat_to_mrp_parallel)
    return _one_input(loops, q, "q", 4, 3, _usable_quat, _tiny)


def mrp_to_quat(p: ArrayLike) -> np.ndarray:
    """Unit quaternion ``((1 - |p|²), 2p) / (1 + |p|²)`` of MRPs ``p``, SciPy's ``from_mrp``.

    Accepts either set: ``p`` and its shadow ``-p/|p|²`` give ``q`` and ``-q``, the same
    rotation (``w < 0`` exactly when ``|p| > 1``). Huge ``p`` (near the other set's
    identity) are scaled so that ``|p|²`` cannot overflow. Unit to round-off; the same map
    as the trig-free :func:`cayley_quat` of ``4p``.

    Parameters
    ----------
    p : array_like, shape (..., 3)

    Returns
    -------
    ndarray, shape (..., 4)
    """
    loops = (_k.mrp_to_quat_serial, _k.mrp_to_quat_parallel)
    return _one_input(loops, p, "p", 3, 4, _finite_vector)


def mrp_shadow(p: ArrayLike) -> np.ndarray:
    """The shadow MRP set ``-p / |p|²``: the same rotation, read from ``-q``.

    Used to keep ``|p| <= 1`` along a trajectory (switch when ``|p|`` passes 1). Computed
    with ``p`` scaled by its largest component, so ``|p|²`` cannot overflow or underflow.

    Parameters
    ----------
    p : array_like, shape (..., 3)
        Nonzero MRPs (the identity ``p = 0`` has its shadow at infinity and raises
        :class:`tumble.InputError`, as does a ``p`` so small that the shadow overflows).

    Returns
    -------
    ndarray, shape (..., 3)
    """
    pa = _vec(p, "p")
    m = np.max(np.abs(pa), axis=-1, keepdims=True)
    if pa.size and not np.all(m > 0):
        raise InputError(
            "p: expected nonzero MRPs (the identity's shadow is at infinity), got p = 0"
        )
    y = pa / np.where(m > 0, m, 1)
    with np.errstate(over="ignore"):
        out = -y / (np.sum(y * y, axis=-1, keepdims=True) * m)
    if not np.all(np.isfinite(out)):
        raise InputError(
            "p: expected MRPs whose shadow -p/|p|^2 is a finite float, got one too small"
        )
    return out


def quat_power(q: ArrayLike, s: ArrayLike) -> np.ndarray:
    """``q^s = exp(s log q)``: the rotation about the same axis by ``s`` times the angle.

    ``q/|q|`` is read on the short arc (``w >= 0``, angle ``θ`` in ``[0, π]``), so
    ``q^s = rotvec_to_quat(s quat_to_rotvec(q))`` turns by ``s θ``, as SciPy's
    ``Rotation.__pow__``; ``q^0`` is the identity, ``q^-1`` the inverse, ``q^½`` the
    half-way rotation. Accurate to round-off in the angle (``atan2`` and the exponential's
    series).

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Nonzero quaternions.
    s : array_like, shape (...)
        Real powers; leading axes broadcast with those of ``q``.

    Returns
    -------
    ndarray, shape (..., 4)
        The dtype of ``q`` (``s`` is cast to it).
    """
    one = _single(q, (4,))
    if one is not None and isinstance(s, float | int) and not isinstance(s, bool):
        out = np.empty(4, dtype=one.dtype)
        if not _k.quat_power_serial(one, one.dtype.type(s), _TINY[one.dtype], out):
            return out
    qa = as_float_array(q, "q", (4,), finite=False)
    sa = as_float_array(s, "s", finite=False).astype(qa.dtype)
    loops = (_k.quat_power_serial, _k.quat_power_parallel)
    out, bad = _flat(*loops, {"q": qa, "s": sa}, 4, _TINY[qa.dtype], scalars=("s",))
    if bad:
        _rotation_quat(qa, "q")
        as_float_array(sa, "s")
        _no_overflow(out, "s", "powers times angles")
    return out


# --------------------------------------------------------------------------------------
# mean and alignment


def _reduction_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, int or tuple of ints over the batch axes) as sorted non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in items:
        n = as_int(a, "axis")
        if not -ndim <= n < ndim:
            raise InputError(f"axis: expected an axis of the batch shape (ndim {ndim}), got {n}")
        out.append(n % ndim)
    if len(set(out)) != len(out):
        raise InputError(f"axis: expected distinct axes, got {axis!r}")
    return tuple(sorted(out))


def _broadcast_weights(w: np.ndarray, batch: tuple[int, ...]) -> np.ndarray:
    """``w`` broadcast to ``batch``, or InputError naming ``weights`` (shape only)."""
    try:
        shape = np.broadcast_shapes(w.shape, batch)
    except ValueError:
        shape = None
    if shape != batch:
        raise InputError(
            f"weights: expected a shape that broadcasts to {batch}, got shape {w.shape}"
        )
    return np.broadcast_to(w, batch)


def _weights(weights: Any, batch: tuple[int, ...]) -> np.ndarray:
    """Weights broadcast to ``batch``: finite, non-negative, float64."""
    if weights is None:
        return np.ones(batch)
    w = _broadcast_weights(as_float_array(weights, "weights").astype(np.float64), batch)
    if w.size and not np.min(w) >= 0:
        raise InputError(f"weights: expected non-negative weights, got {np.min(w):.6g}")
    return w


def quat_mean(
    q: ArrayLike, weights: ArrayLike | None = None, axis: int | tuple[int, ...] | None = None
) -> np.ndarray:
    """Chordal L2 (Markley) mean rotation, SciPy's ``Rotation.mean``.

    The rotation ``M`` minimising ``Σ w_i |R_i - M|²`` (Frobenius) is the unit eigenvector
    of the largest eigenvalue of ``K = Σ w_i q̂_i q̂_iᵀ`` (``q̂ = q/|q|``; ``q`` and ``-q``
    contribute alike), Markley et al. (2007). Batched: the mean is taken over ``axis`` of
    the batch shape and kept over the others. ``K`` is accumulated by a compiled loop in
    float64, the 4 x 4 eigenproblem is NumPy's ``eigh``. Unique unless the largest
    eigenvalue is repeated (rotations spread evenly, such as two half turns about
    perpendicular axes), where any unit vector of that eigenspace is a mean.

    Parameters
    ----------
    q : array_like, shape (..., 4)
        Nonzero quaternions.
    weights : array_like, optional
        Non-negative, broadcasting to ``q.shape[:-1]``; every group must have a positive
        total. Default: all equal.
    axis : int, tuple of int or None
        Axes of ``q.shape[:-1]`` to average over; ``None`` (default) averages all.

    Returns
    -------
    ndarray, shape (kept batch axes..., 4)
        ``w >= 0`` representative; dtype of ``q``.
    """
    qa = as_float_array(q, "q", (4,), finite=False)
    batch = qa.shape[:-1]
    axes = _reduction_axes(axis, len(batch))
    if weights is None:
        w = np.broadcast_to(1.0, batch)
    else:
        w = _broadcast_weights(as_float_array(weights, "weights", finite=False), batch)
    kept = tuple(a for a in range(len(batch)) if a not in axes)
    order = kept + axes
    kept_shape = tuple(batch[a] for a in kept)
    n = math.prod(batch[a] for a in axes)
    groups = math.prod(kept_shape)
    if groups and n == 0:
        raise InputError("q: expected at least one quaternion to average, got none")
    # Grouped rows: a view (no copy) when the averaged axes are already last and contiguous.
    qg = np.ascontiguousarray(np.transpose(qa, (*order, len(batch)))).reshape(groups, n, 4)
    wg = np.transpose(w, order).reshape(groups, n)
    mean = np.empty((groups, 4))
    if use_parallel(n):
        # Blocks of a few per thread: a thread that loses its core holds up less.
        blocks = 4 * numba.get_num_threads()
        flagged = _k.quat_mean_groups_parallel(qg, wg, _TINY[qa.dtype], mean, blocks)
    else:
        flagged = _k.quat_mean_groups(qg, wg, _TINY[qa.dtype], mean)
    if flagged:
        _rotation_quat(qa, "q")
        if not np.all(_weights(wg, wg.shape).sum(axis=1) > 0):
            raise InputError("weights: expected a positive total weight in every group, got zero")
    return mean.reshape((*kept_shape, 4)).astype(qa.dtype)


def _align_fault(A: np.ndarray, B: np.ndarray, W: np.ndarray) -> None:
    """Name the fault that :func:`align_vectors`' kernel flagged; it always raises."""
    as_float_array(A, "a")
    as_float_array(B, "b")
    _weights(W, W.shape)
    for name, V in (("a", A), ("b", B)):
        if not np.all(np.max(np.abs(V), axis=-1) > 0):
            raise InputError(f"{name}: expected nonzero vectors, got one of length 0")
    if not np.all(W.sum(axis=1) > 0):
        raise InputError("weights: expected a positive total weight, got all zero")
    raise InputError(
        "a, b: expected vectors whose weighted products are finite floats, got an overflow"
    )


def align_vectors(
    a: ArrayLike, b: ArrayLike, weights: ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray | np.floating]:
    """Rotation taking the vectors ``b`` best onto ``a`` (Wahba), SciPy's ``align_vectors``.

    Finds ``q`` minimising ``Σ w_i |a_i - R(q) b_i|²`` (the Kabsch solution: with
    ``B = Σ w_i a_i b_iᵀ = U S Vᵀ``, ``R = U diag(1, 1, det(U Vᵀ)) Vᵀ``), and returns it
    with the root of the weighted sum of squared distances,
    ``rssd = sqrt(Σ w_i |a_i - R b_i|²)``, computed as that sum (no cancellation, so an
    exact alignment gives round-off, not ``sqrt(eps)``). In SciPy's order: ``b`` is mapped
    onto ``a``; for frames, ``a`` in world and ``b`` in body coordinates give the body's
    orientation.

    Degenerate input is handled on purpose: when every pair is collinear (one pair, or all
    ``a_i`` on one line; ``B`` of rank one, ``s_2 <= 64 eps s_1``), the rotation about the
    common line is not determined, and tumble returns the smallest rotation taking the
    line of ``b`` onto that of ``a`` (about ``b × a``; by a half turn about a
    perpendicular axis when they are opposite). For one pair this is SciPy's answer; for
    several collinear pairs SciPy returns an arbitrary optimum with a warning.

    Parameters
    ----------
    a, b : array_like, shape (..., N, 3) or (3,)
        Nonzero vectors; ``a`` and ``b`` have the same ``N``, their batch axes broadcast.
        A single ``(3,)`` pair is ``N = 1``.
    weights : array_like, shape (..., N), optional
        Non-negative, finite, not all zero. Default: all one.

    Returns
    -------
    q : ndarray, shape (..., 4)
        The rotation (``w >= 0``), dtype of the inputs.
    rssd : ndarray, shape (...)
        A NumPy scalar for a single problem.
    """
    A = as_float_array(a, "a", (3,), finite=False)
    B = as_float_array(b, "b", (3,), finite=False)
    dtype = common_dtype(A, B)
    if A.ndim == 1:
        A = A[None]
    if B.ndim == 1:
        B = B[None]
    if A.shape[-2] != B.shape[-2]:
        raise InputError(
            f"a, b: expected the same number of vectors, got {A.shape[-2]} in a and "
            f"{B.shape[-2]} in b"
        )
    n = A.shape[-2]
    if n == 0:
        raise InputError("a: expected at least one vector, got none")
    leading = broadcast_leading(a=(A, 2), b=(B, 2))
    if weights is None:
        w = np.ones((*leading, n))
    else:
        w = _broadcast_weights(as_float_array(weights, "weights", finite=False), (*leading, n))
    groups = math.prod(leading)
    A64, B64, W64 = (
        np.ascontiguousarray(np.broadcast_to(x, shape), dtype=np.float64).reshape(groups, *tail)
        for x, shape, tail in (
            (A, (*leading, n, 3), (n, 3)),
            (B, (*leading, n, 3), (n, 3)),
            (w, (*leading, n), (n,)),
        )
    )
    q = np.empty((groups, 4))
    rssd = np.empty(groups)
    # One pass checks and sums (InputError below only if it flagged something), one more
    # sums the residual; on threads when the groups are large.
    if use_parallel(n):
        # Blocks of a few per thread: a thread that loses its core holds up less.
        flagged = _k.align_groups_parallel(A64, B64, W64, q, rssd, 4 * numba.get_num_threads())
    else:
        flagged = _k.align_groups(A64, B64, W64, q, rssd)
    if flagged or not np.all(np.isfinite(rssd)):
        _align_fault(A, B, W64)
    q_out = q.reshape((*leading, 4)).astype(dtype)
    r_out = rssd.reshape(leading).astype(dtype)
    return q_out, r_out[()]


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


def from_scipy(rotation: Any) -> np.ndarray:
    """Scalar-first quaternions of a SciPy ``Rotation`` (single or stacked).

    SciPy stores scalar-last ``(x, y, z, w)``; this reorders to tumble's ``(w, x, y, z)``.
    Same rotation, same sign as SciPy's ``as_quat()``.

    Parameters
    ----------
    rotation : scipy.spatial.transform.Rotation

    Returns
    -------
    ndarray, shape (4,) for a single rotation, else (*rotation.shape, 4), float64
    """
    from scipy.spatial.transform import Rotation

    if not isinstance(rotation, Rotation):
        raise InputError(
            f"rotation: expected a scipy.spatial.transform.Rotation, got {type(rotation).__name__}"
        )
    return np.ascontiguousarray(rotation.as_quat()[..., [3, 0, 1, 2]])


def to_scipy(q: ArrayLike) -> Any:
    """SciPy ``Rotation`` of scalar-first quaternions ``q`` (reordered to scalar last).

    Parameters
    ----------
    q : array_like, shape (4,) or (..., 4)
        Nonzero quaternions (SciPy normalises them). Batches with more than one leading
        axis need a SciPy that supports N-d rotations (1.17 or later).

    Returns
    -------
    scipy.spatial.transform.Rotation
        Single for shape ``(4,)``, stacked otherwise.
    """
    from scipy.spatial.transform import Rotation

    q = _rotation_quat(q, "q")
    return Rotation.from_quat(q[..., [1, 2, 3, 0]].astype(np.float64))


# --------------------------------------------------------------------------------------
# SO(3) Jacobians of the exponential map


def so3_right_jacobian(phi: ArrayLike) -> np.ndarray:
    """Right Jacobian ``J_r(phi)`` of the exponential map: ``exp(phi + δ) ≈ exp(phi) exp(J_r δ)``.

    ``exp`` is the rotation of a rotation vector (``rotvec_to_matrix``, ``rotvec_to_quat``),
    so ``J_r δ`` is the **body-frame** (right) increment that a small change ``δ`` of the
    rotation vector produces: ``R(phi)ᵀ ∂R/∂phi_j = [J_r e_j]×``; for a moving ``phi(t)``,
    ``omega_body = J_r(phi) dphi/dt``. Closed form, ``θ = |phi|``:

        ``J_r = I - (1 - cos θ)/θ² [phi]× + (θ - sin θ)/θ³ [phi]×²``

    with ``J_r(phi) = J_l(-phi) = J_l(phi)ᵀ = R(phi)ᵀ J_l(phi)``. Defined and smooth for
    every ``phi``; ``det J_r = 2(1 - cos θ)/θ²`` vanishes at ``θ = 2π k`` (``k >= 1``).

    Accuracy: a few ulp per entry at every angle. ``(1 - cos θ)/θ²`` is evaluated as
    ``½ sinc²(θ/2)``, which does not cancel; ``(θ - sin θ)/θ³`` by its Taylor series below
    ``θ = 1`` (eight terms, truncation under 5e-17 relative) and in closed form above,
    where its cancellation costs less than that. float32 input is evaluated in float64 and
    rounded once.

    Parameters
    ----------
    phi : array_like, shape (..., 3)
        Rotation vectors (angle ``|phi|`` in radians about ``phi/|phi|``), finite.

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    return _rotvec_matrix(_k.so3_right_jacobian_gu, phi)


def so3_left_jacobian(phi: ArrayLike) -> np.ndarray:
    """Left Jacobian ``J_l(phi)`` of the exponential map: ``exp(phi + δ) ≈ exp(J_l δ) exp(phi)``.

    ``J_l δ`` is the **world-frame** (left) increment of a change ``δ`` of the rotation
    vector: ``∂R/∂phi_j R(phi)ᵀ = [J_l e_j]×``; for a moving ``phi(t)``,
    ``omega_world = J_l(phi) dphi/dt``.
    Closed form, ``θ = |phi|``:

        ``J_l = I + (1 - cos θ)/θ² [phi]× + (θ - sin θ)/θ³ [phi]×²``

    ``J_l(phi) = J_r(-phi) = J_r(phi)ᵀ = R(phi) J_r(phi)``. Same accuracy and evaluation as
    :func:`so3_right_jacobian`.

    Parameters
    ----------
    phi : array_like, shape (..., 3)
        Rotation vectors, finite.

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    return _rotvec_matrix(_k.so3_left_jacobian_gu, phi)


def so3_right_jacobian_inverse(phi: ArrayLike) -> np.ndarray:
    """``J_r(phi)⁻¹``: the rotation-vector change of a body-frame increment.

    ``log(exp(phi) exp(δ)) ≈ phi + J_r⁻¹ δ``, so ``dphi/dt = J_r⁻¹(phi) omega_body``.
    Closed form, ``θ = |phi|``:

        ``J_r⁻¹ = I + ½ [phi]× + (1/θ² - (1 + cos θ)/(2θ sin θ)) [phi]×²``

    The coefficient equals ``(1 - x cot x)/(4x²)`` with ``x = θ/2``: it is smooth at
    ``θ = π`` (value ``1/π²``; the ``0/0`` of the textbook form is removable there) and
    has its only singularities at ``θ = 2π k``, ``k >= 1``, where ``J_r`` is singular (every
    direction of a sphere of radius ``2π`` maps to the identity). Near ``2π`` the entries
    grow like ``1/(2π - θ)``; at exactly ``2π`` they are huge but finite (``sin`` of the
    rounded ``π`` is not zero). Rotation vectors from :func:`quat_to_rotvec` have
    ``θ <= π``, far from the pole.

    Accuracy: a few ulp per entry for ``θ`` up to near ``2π``; the coefficient is computed
    as ``(a(x) - b(x)) / (4 sinc x)`` with ``a(x) = (1 - cos x)/x²``, ``b(x) = (x - sin x)/x³``
    (see :func:`so3_right_jacobian`), which cancels by at most a factor 1.5.

    Parameters
    ----------
    phi : array_like, shape (..., 3)
        Rotation vectors, finite.

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    return _rotvec_matrix(_k.so3_right_jacobian_inverse_gu, phi)


def so3_left_jacobian_inverse(phi: ArrayLike) -> np.ndarray:
    """``J_l(phi)⁻¹``: the rotation-vector change of a world-frame increment.

    ``log(exp(δ) exp(phi)) ≈ phi + J_l⁻¹ δ``, so ``dphi/dt = J_l⁻¹(phi) omega_world``.
    Closed form, ``θ = |phi|``:

        ``J_l⁻¹ = I - ½ [phi]× + (1/θ² - (1 + cos θ)/(2θ sin θ)) [phi]×²``

    ``J_l⁻¹(phi) = J_r⁻¹(-phi) = J_r⁻¹(phi)ᵀ``. Smooth at ``θ = π``, singular at
    ``θ = 2π k``; accuracy and evaluation as :func:`so3_right_jacobian_inverse`.

    Parameters
    ----------
    phi : array_like, shape (..., 3)
        Rotation vectors, finite.

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    return _rotvec_matrix(_k.so3_left_jacobian_inverse_gu, phi)
