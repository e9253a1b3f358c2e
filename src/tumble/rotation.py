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
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from tumble._errors import InputError
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
    "cayley_quat",
    "cayley_rotate",
    "from_scipy",
    "matrix_to_quat",
    "matrix_to_rotvec",
    "quat_conjugate",
    "quat_exp",
    "quat_exp_approx",
    "quat_log",
    "quat_multiply",
    "quat_normalize",
    "quat_rotate",
    "quat_to_matrix",
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
) -> tuple[np.ndarray, int]:
    """Run a flat loop over the broadcast rows of ``named``: (result, flagged count).

    A NaN or infinite input always gives a non-finite result, so the loops flag non-finite
    results instead of reading the input a second time. On a nonzero count the caller runs
    the full NumPy validation, which names the bad argument; when it finds nothing, the
    input was finite and the result overflowed, which IEEE arithmetic allows, and the
    result stands as computed.
    """
    leading = broadcast_leading(**{k: (a, 1) for k, a in named.items()})
    dtype = common_dtype(*named.values())
    size = math.prod(leading)
    operands = [flat_operand(a.astype(dtype, copy=False), 1, leading, size) for a in named.values()]
    out = np.empty(size * n_out, dtype=dtype)
    kernel = parallel if use_parallel(size) else serial
    flagged = kernel(*operands, *extra, out) if size else 0
    return out.reshape((*leading, n_out)), flagged


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
    no normalisation. Exact to round-off (a few ulp).

    Parameters
    ----------
    p, q : array_like, shape (..., 4)
        Scalar-first quaternions; leading axes broadcast against each other.

    Returns
    -------
    ndarray, shape (..., 4)
    """
    pa = as_float_array(p, "p", (4,), finite=False)
    qa = as_float_array(q, "q", (4,), finite=False)
    out, bad = _flat(_k.quat_multiply_serial, _k.quat_multiply_parallel, {"p": pa, "q": qa}, 4)
    if bad:
        _quat(p, "p")
        _quat(q, "q")
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
    qa = as_float_array(q, "q", (4,), finite=False)
    va = as_float_array(v, "v", (3,), finite=False)
    dtype = common_dtype(qa, va)
    loops = (_k.quat_rotate_serial, _k.quat_rotate_parallel)
    out, flagged = _flat(*loops, {"q": qa, "v": va}, 3, np.finfo(dtype).tiny)
    if flagged:
        # Raises for the input that caused it (judged in the dtype the loop computed in);
        # otherwise finite input overflowed.
        _rotation_quat(qa.astype(dtype, copy=False), "q")
        _vec(va.astype(dtype, copy=False), "v")
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
    return _unary(_k.matrix_to_quat_gu, _rotation_matrix(R, "R"), 4)


def rotvec_to_quat(phi: ArrayLike) -> np.ndarray:
    """Unit quaternion ``exp(phi/2) = (cos(θ/2), sin(θ/2) phi/θ)``, ``θ = |phi|``.

    Accurate to round-off at every angle; the small-angle branch uses the series of
    ``sin(θ/2)/θ``.

    Parameters
    ----------
    phi : array_like, shape (..., 3)
        Rotation vectors (angle ``|phi|`` in radians about the axis ``phi/|phi|``).

    Returns
    -------
    ndarray, shape (..., 4)
    """
    pa = as_float_array(phi, "phi", (3,), finite=False)
    out, bad = _flat(_k.rotvec_to_quat_serial, _k.rotvec_to_quat_parallel, {"phi": pa}, 4)
    if bad:
        _vec(phi, "phi")
    return out


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
    return _rotvec_matrix(_k.rotvec_to_matrix_gu, phi)


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
    return _unary(_k.quat_exp_gu, _vec(x, "x"), 4)


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
    out = _binary(
        _k.rotation_angle_gu,
        _rotation_quat(p, "p"),
        _rotation_quat(q, "q"),
        ("p", "q"),
        0,
    )
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
