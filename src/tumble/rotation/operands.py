"""From validated arguments to the rotation kernels: the one path every function takes.

The public modules of :mod:`tumble.rotation` read their arguments through these helpers
and call the kernels of :mod:`tumble._kernels.rotation` through them: the single-element
fast path (:func:`single`), the flat loops (:func:`run_flat`, :func:`run_one_input`) and the
gufuncs (:func:`run_unary`, :func:`run_binary`). They trust nothing: each check raises
:class:`tumble.InputError` naming the argument. :func:`unit_quat` is the normalisation the
other tumble modules use.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from tumble._errors import InputError
from tumble._kernels import rotation as _k
from tumble._kernels.dispatch import flat_operand, plain_arrays, use_parallel
from tumble._validate import (
    as_float_array,
    broadcast_leading,
    check_rotation_matrix,
    common_dtype,
    rotation_tolerance,
)

#: Largest accepted ``|R Rᵀ - I|`` entry for a 3 x 3 matrix read as a rotation: the one
#: policy of :func:`tumble._validate.rotation_tolerance` (shared with
#: :class:`tumble.transform.Transform`), 2.9e-6 in float64 and 1.0e-3 in float32. Far above
#: round-off (and float32 rounding), far below what a scaled, sheared or wrongly built
#: matrix shows.
ORTHOGONALITY_TOLERANCE = {np.dtype(t): rotation_tolerance(t, 3) for t in (np.float32, np.float64)}

#: Smallest normal number per dtype (np.finfo costs a microsecond per call).
TINY = {np.dtype(t): float(np.finfo(t).tiny) for t in (np.float32, np.float64)}
_FLOATS = (np.dtype(np.float64), np.dtype(np.float32))


def single(x: Any, shape: tuple[int, ...]) -> np.ndarray | None:
    """``x`` as one C-contiguous float element of ``shape``, or None for the general path.

    The fast path of the public functions. For one ``(4,)``, ``(3,)`` or ``(3, 3)`` element
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


def quats(x: Any, name: str) -> np.ndarray:
    """Finite quaternions ``(..., 4)``."""
    return as_float_array(x, name, (4,))


def vectors(x: Any, name: str) -> np.ndarray:
    """Finite vectors ``(..., 3)``."""
    return as_float_array(x, name, (3,))


def rotation_quats(x: Any, name: str) -> np.ndarray:
    """Quaternions read as rotations: finite, ``|q|²`` neither zero nor overflowing."""
    return rotation_quats_and_norms(x, name)[0]


def rotation_quats_and_norms(x: Any, name: str) -> tuple[np.ndarray, float, float]:
    """:func:`rotation_quats` and the smallest and largest ``|q|²`` (1, 1 for none)."""
    q = quats(x, name)
    if not q.size:
        return q, 1.0, 1.0
    smallest, largest = _k.norm2_range(plain_arrays(q.reshape(-1, 4)))
    _check_norm2_range(float(smallest), float(largest), q.dtype, name)
    return q, float(smallest), float(largest)


def _check_norm2_range(smallest: float, largest: float, dtype: np.dtype, name: str) -> None:
    """InputError unless every ``|q|²`` (from ``smallest`` to ``largest``) is a finite
    normal number of ``dtype``."""
    if not smallest >= np.finfo(dtype).tiny:
        raise InputError(
            f"{name}: expected nonzero quaternions, got one of squared norm {smallest:.3g}"
        )
    if not largest < np.inf:
        raise InputError(
            f"{name}: expected quaternions whose squared norm is finite, got one of "
            f"squared norm {largest:.3g}"
        )


def unit_quat(x: ArrayLike, name: str, dtype: np.dtype | None = None) -> np.ndarray:
    """``x / |x|`` for quaternions read as rotations, checked as :func:`rotation_quats` does.

    The one normalisation every module uses (``rigid``, ``exact``, ``diagnostics``): any
    nonzero finite quaternion whose squared norm is a finite normal number is accepted,
    so a zero quaternion and one with ``|q|² `` overflowing (``|q| > ~1e154`` in float64)
    raise :class:`tumble.InputError` naming ``name`` instead of turning into NaN or the
    identity. ``dtype`` forces the dtype of the result (default: follow the input). In
    NumPy: the squared norms it divides by are the ones it checks (one pass, and nothing
    to compile on a first ``simulate``).
    """
    q = as_float_array(x, name, (4,), dtype=dtype)  # finite, as quats checks
    if not q.size:
        return q
    with np.errstate(over="ignore", under="ignore"):
        n2 = _norm2(q)
    _check_norm2_range(float(n2.min()), float(n2.max()), q.dtype, name)
    return q / np.sqrt(n2)


def _norm2(q: np.ndarray) -> np.ndarray:
    """``|q|²`` with a trailing axis of length one."""
    return np.sum(q * q, axis=-1, keepdims=True)


def normalized(q: np.ndarray) -> np.ndarray:
    """``q / |q|`` of quaternions whose ``|q|²`` is a finite normal number (as
    :func:`rotation_quats` checks)."""
    return q / np.sqrt(_norm2(q))


def rotation_matrices(x: Any, name: str) -> np.ndarray:
    """Finite ``(..., 3, 3)`` rotation matrices, flattened to ``(..., 9)``."""
    R = as_float_array(x, name, (3, 3))
    flat = np.ascontiguousarray(R).reshape((*R.shape[:-2], 9))
    if flat.size:
        # R Rᵀ = I exactly when Rᵀ R = I; the compiled loop measures, the policy is shared.
        measured = _k.orthogonality_error(plain_arrays(flat.reshape(-1, 9)))
        check_rotation_matrix(R, name, (float(measured[0]), float(measured[1])))
    return flat


def run_flat(
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


def run_one_input(
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
    one = single(x, (n_in,))
    if one is not None:
        out = np.empty(n_out, dtype=one.dtype)
        if not loops[0](one, *extra(one.dtype), out):
            return out
    xa = as_float_array(x, name, (n_in,), finite=False)
    out, bad = run_flat(*loops, {name: xa}, n_out, *extra(xa.dtype))
    if bad:
        check(xa, name, out)
    return out


def check_finite_vector(x: np.ndarray, name: str, out: np.ndarray) -> None:
    """The ``check`` of :func:`run_one_input` for finite vectors."""
    vectors(x, name)


def check_finite_rotation_vector(x: np.ndarray, name: str, out: np.ndarray) -> None:
    """The ``check`` of :func:`run_one_input` for rotation vectors whose length is finite."""
    vectors(x, name)
    no_overflow(out, name, "rotation vectors")


def check_usable_quat(x: np.ndarray, name: str, out: np.ndarray) -> None:
    """The ``check`` of :func:`run_one_input` for quaternions read as rotations."""
    rotation_quats(x, name)


def tiny_of(dtype: np.dtype) -> tuple[float]:
    """The ``extra`` of :func:`run_one_input` for loops that take ``TINY``."""
    return (TINY[dtype],)


def no_overflow(out: np.ndarray, name: str, what: str) -> np.ndarray:
    """``out`` unless finite input gave a NaN: then the input's size overflowed (raise)."""
    if np.isnan(out).any():
        raise InputError(
            f"{name}: expected {what} whose size is a finite float, got one so large "
            "that it overflows"
        )
    return out


def run_unary(kernel: Any, x: np.ndarray, n_out: int) -> np.ndarray:
    """Apply a one-input gufunc whose output has ``n_out`` components."""
    out = np.empty((*x.shape[:-1], n_out), dtype=x.dtype)
    kernel(x, np.empty(n_out, dtype=x.dtype), out)
    return out


def run_binary(
    kernel: Any, a: np.ndarray, b: np.ndarray, names: tuple[str, str], n_out: int
) -> np.ndarray:
    """Apply a two-input gufunc with broadcasting of the leading axes and a common dtype."""
    leading = broadcast_leading(**{names[0]: (a, 1), names[1]: (b, 1)})
    dtype = common_dtype(a, b)
    out = np.empty(leading + ((n_out,) if n_out else ()), dtype=dtype)
    kernel(a.astype(dtype, copy=False), b.astype(dtype, copy=False), out)
    return out


def rotvec_matrices(kernel: Any, phi: Any) -> np.ndarray:
    """Apply a gufunc mapping rotation vectors ``phi`` (validated here) to 3 x 3 matrices."""
    pa = vectors(phi, "phi")
    return run_unary(kernel, pa, 9).reshape((*pa.shape[:-1], 3, 3))
