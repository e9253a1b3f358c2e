"""Conversions between quaternions, rotation matrices and rotation vectors.

A rotation matrix ``R`` satisfies ``R v = q v q*``: for a body orientation it maps body to
world coordinates. A rotation vector ``phi`` turns by ``|phi|`` about ``phi/|phi|`` and is
the quaternion ``exp(phi/2)``. Matrices read as rotations must be orthogonal to
``ORTHOGONALITY_TOLERANCE`` with determinant +1.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from tumble._kernels import rotation as _k
from tumble._linalg import axial_vector, cross_matrix
from tumble._validate import as_float_array
from tumble.rotation.operands import (
    ORTHOGONALITY_TOLERANCE,
    TINY,
    check_finite_rotation_vector,
    no_overflow,
    rotation_matrices,
    rotation_quats,
    rotvec_matrices,
    run_one_input,
    run_unary,
    single,
    vectors,
)


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
    qs = single(q, (4,))
    if qs is not None:
        one = np.empty((3, 3), dtype=qs.dtype)
        if not _k.quat_to_matrix_one(qs, TINY[qs.dtype], one):
            return one
    q = rotation_quats(q, "q")
    return run_unary(_k.quat_to_matrix_gu, q, 9).reshape((*q.shape[:-1], 3, 3))


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
    Rs = single(R, (3, 3))
    if Rs is not None:
        one = np.empty(4, dtype=Rs.dtype)
        if not _k.matrix_to_quat_one(Rs, ORTHOGONALITY_TOLERANCE[Rs.dtype], one):
            return one
    return run_unary(_k.matrix_to_quat_gu, rotation_matrices(R, "R"), 4)


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
    return run_one_input(loops, phi, "phi", 3, 4, check_finite_rotation_vector)


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
    qs = single(q, (4,))
    if qs is not None:
        one = np.empty(3, dtype=qs.dtype)
        if not _k.quat_to_rotvec_one(qs, TINY[qs.dtype], one):
            return one
    return run_unary(_k.quat_to_rotvec_gu, rotation_quats(q, "q"), 3)


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
    ps = single(phi, (3,))
    if ps is not None:
        one = np.empty((3, 3), dtype=ps.dtype)
        if not _k.rotvec_to_matrix_one(ps, one):
            return one
    with np.errstate(over="ignore", invalid="ignore"):  # |phi|² of huge phi: handled
        out = rotvec_matrices(_k.rotvec_to_matrix_gu, phi)
    return no_overflow(out, "phi", "rotation vectors")


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
    Rs = single(R, (3, 3))
    if Rs is not None:
        one = np.empty(3, dtype=Rs.dtype)
        if not _k.matrix_to_rotvec_one(Rs, ORTHOGONALITY_TOLERANCE[Rs.dtype], one):
            return one
    return run_unary(_k.matrix_to_rotvec_gu, rotation_matrices(R, "R"), 3)


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
    return cross_matrix(vectors(v, "v"))


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
