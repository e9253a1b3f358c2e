"""Modified Rodrigues parameters (both sets) and powers of rotations.

``p = tan(θ/4) n`` for the rotation by ``θ`` about ``n``; its shadow ``-p/|p|²`` is the same
rotation, read from ``-q``. ``q^s`` turns about the axis of ``q`` by ``s`` times its angle.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from tumble._errors import InputError
from tumble._kernels import rotation as _k
from tumble._validate import as_float_array
from tumble.rotation.operands import (
    TINY,
    check_finite_vector,
    check_usable_quat,
    no_overflow,
    rotation_quats,
    run_flat,
    run_one_input,
    single,
    tiny_of,
    vectors,
)


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
    return run_one_input(loops, q, "q", 4, 3, check_usable_quat, tiny_of)


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
    return run_one_input(loops, p, "p", 3, 4, check_finite_vector)


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
    pa = vectors(p, "p")
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
    one = single(q, (4,))
    # A Python int beyond the float range takes the validating path, which names it.
    plain = isinstance(s, float) or (type(s) is int and abs(s) < 2**63)
    if one is not None and plain:
        out = np.empty(4, dtype=one.dtype)
        if not _k.quat_power_serial(one, one.dtype.type(s), TINY[one.dtype], out):
            return out
    qa = as_float_array(q, "q", (4,), finite=False)
    sa = as_float_array(s, "s", finite=False).astype(qa.dtype)
    loops = (_k.quat_power_serial, _k.quat_power_parallel)
    out, bad = run_flat(*loops, {"q": qa, "s": sa}, 4, TINY[qa.dtype], scalars=("s",))
    if bad:
        rotation_quats(qa, "q")
        as_float_array(sa, "s")
        no_overflow(out, "s", "powers times angles")
    return out
