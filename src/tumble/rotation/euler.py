"""Euler angles in SciPy's 12 sequences, extrinsic and intrinsic, and gimbal lock.

``seq`` is spelled as SciPy spells it: three axes from ``"xyz"``, lower case for extrinsic
(about the fixed world axes), upper case for intrinsic (about the moving body axes), no
axis twice in a row. The quaternion maps body to world coordinates
(``docs/conventions.md``).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from tumble._errors import InputError, TumbleWarning
from tumble._kernels import rotation as _k
from tumble._validate import as_float_array
from tumble.rotation.conversions import matrix_to_quat, quat_to_matrix
from tumble.rotation.operands import (
    TINY,
    check_finite_vector,
    rotation_quats,
    run_flat,
    run_one_input,
    single,
)


class GimbalLockWarning(TumbleWarning):
    """Euler angles at gimbal lock: the third angle was set to zero (SciPy's choice)."""


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
    return run_one_input(
        loops, angles, "angles", 3, 4, check_finite_vector, lambda dtype: (i, j, k, extrinsic)
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
    one = single(q, (4,))
    if one is not None:
        out = np.empty(3, dtype=one.dtype)
        bad, locked = _k.quat_to_euler_serial(one, i, j, k, extrinsic, TINY[one.dtype], out)
        if not bad:
            if locked:
                _warn_lock(locked)
            return np.rad2deg(out) if deg else out
    qa = as_float_array(q, "q", (4,), finite=False)
    loops = (_k.quat_to_euler_serial, _k.quat_to_euler_parallel)
    out, counts = run_flat(*loops, {"q": qa}, 3, i, j, k, extrinsic, TINY[qa.dtype])
    bad, locked = counts if out.size else (0, 0)
    if bad:
        rotation_quats(qa, "q")
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
