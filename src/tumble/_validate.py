"""Input validation shared by every public function.

Each helper either returns a clean NumPy value or raises :class:`tumble.InputError` whose
message names the argument, what was expected and what was seen. Public functions call
these first, so compiled kernels only ever see arrays of the dtype and shape they expect.
"""

from __future__ import annotations

import contextlib
import inspect
import numbers
import os
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import numpy as np

from tumble._errors import InputError

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def describe(x: Any) -> str:
    """A short description of ``x`` for an error message: type and value, or array shape."""
    if isinstance(x, np.ndarray):
        return f"an array of shape {x.shape} and dtype {x.dtype}"
    return f"{type(x).__name__} {x!r}"[:120]


def _shape_text(trailing: tuple[int, ...]) -> str:
    return "(..., " + ", ".join(str(n) for n in trailing) + ")" if trailing else "(...)"


def as_float_array(
    x: Any,
    name: str,
    trailing: tuple[int, ...] = (),
    *,
    finite: bool = True,
    dtype: np.dtype | None = None,
) -> np.ndarray:
    """Return ``x`` as a float32 or float64 array whose last axes are ``trailing``.

    Integer and boolean-free real input is promoted to float64; float32 stays float32
    unless ``dtype`` forces a common dtype. Complex, object, string and boolean input,
    a wrong trailing shape and (with ``finite``) NaN or infinity raise ``InputError``.
    """
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged nested sequences and the like
        raise InputError(f"{name}: expected a real array, got {describe(x)} ({exc})") from None
    if arr.dtype.kind not in "iuf":
        raise InputError(f"{name}: expected a real (integer or float) array, got dtype {arr.dtype}")
    if dtype is not None:
        arr = arr.astype(dtype, copy=False)
    elif arr.dtype not in _FLOATS:
        arr = arr.astype(np.float64)
    nt = len(trailing)
    if arr.ndim < nt or arr.shape[arr.ndim - nt :] != trailing:
        raise InputError(f"{name}: expected shape {_shape_text(trailing)}, got shape {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
        raise InputError(f"{name}: expected finite values, got NaN or infinity")
    return arr


def check_finite_result(names: str, what: str, *results: Any) -> None:
    """Raise ``InputError`` if any of ``results``, computed from finite input, is not finite.

    The rule for huge finite input (``docs/limitations.md``): a function computes the
    right answer when it is representable, and otherwise says which arguments are too
    large, here ``names`` (``"omega, inv_inertia"``); ``what`` names the quantity that
    overflowed (``"the angular momentum"``). Compute ``results`` under
    ``np.errstate(all="ignore")`` so that NumPy warns about nothing.
    """
    if not all(np.all(np.isfinite(r)) for r in results):
        raise InputError(f"{names}: too large or too small, {what} overflows the float range")


def as_float_dtype(dtype: Any, name: str = "dtype") -> np.dtype:
    """Return ``dtype`` as ``np.dtype`` if it is float32 or float64, else raise naming ``name``."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise InputError(f"{name}: expected float32 or float64, got {dtype!r}") from None
    if dt not in _FLOATS:
        raise InputError(f"{name}: expected float32 or float64, got {dt}")
    return dt


def common_dtype(*arrays: np.ndarray) -> np.dtype:
    """The float dtype the result of combining ``arrays`` should have (float64 wins)."""
    return np.dtype(np.result_type(*[a.dtype for a in arrays], np.float32))


def broadcast_leading(**named: tuple[np.ndarray, int]) -> tuple[int, ...]:
    """Broadcast the leading (batch) shapes of named arrays.

    Each keyword maps an argument name to ``(array, n_trailing)``; the result is the
    broadcast of the arrays' shapes without their last ``n_trailing`` axes. Mismatched
    batch shapes raise ``InputError`` naming every argument and its batch shape.
    """
    leading = {k: a.shape[: a.ndim - nt] for k, (a, nt) in named.items()}
    try:
        return tuple(np.broadcast_shapes(*leading.values()))
    except ValueError:
        seen = ", ".join(f"{k} {s}" for k, s in leading.items())
        raise InputError(f"{', '.join(leading)}: batch shapes do not broadcast: {seen}") from None


def as_scalar(
    x: Any,
    name: str,
    *,
    positive: bool = False,
    nonnegative: bool = False,
    finite: bool = True,
) -> float:
    """Return ``x`` as a Python float, checking sign and finiteness as asked."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real | np.ndarray):
        raise InputError(f"{name}: expected a real number, got {describe(x)}")
    arr = np.asarray(x)
    if arr.ndim != 0 or arr.dtype.kind not in "iuf":
        raise InputError(f"{name}: expected a real number, got {describe(x)}")
    value = float(arr)
    if finite and not np.isfinite(value):
        raise InputError(f"{name}: expected a finite number, got {value}")
    if positive and not value > 0:
        raise InputError(f"{name}: expected a positive number, got {value}")
    if nonnegative and not value >= 0:
        raise InputError(f"{name}: expected a number >= 0, got {value}")
    return value


def as_path(x: Any, name: str) -> Path:
    """Return ``x`` (a ``str`` or ``os.PathLike``) as a :class:`~pathlib.Path`."""
    if not isinstance(x, str | os.PathLike):
        raise InputError(f"{name}: expected a file path (str or Path), got {describe(x)}")
    return Path(x)


#: The largest integer compiled code can take (int64): :func:`as_int`'s default ceiling.
INT_MAX = int(np.iinfo(np.int64).max)


def as_int(x: Any, name: str, *, minimum: int | None = None, maximum: int | None = INT_MAX) -> int:
    """Return ``x`` as a Python int (bool rejected) in ``[minimum, maximum]``.

    The default ``maximum`` is :data:`INT_MAX`, so that no integer a caller passes on can
    overflow a compiled int64; pass ``maximum=None`` only for values that stay in Python
    (a pairs view's exact size, for example).
    """
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise InputError(f"{name}: expected an integer, got {describe(x)}")
    value = int(x)
    if minimum is not None and value < minimum:
        raise InputError(f"{name}: expected an integer >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise InputError(f"{name}: expected an integer <= {maximum}, got {value}")
    return value


# --------------------------------------------------------------------------- resources

#: The default ceiling on what one call may allocate in proportion to its arguments: 2 GiB.
#: ``TUMBLE_MEMORY_LIMIT`` (bytes) in the environment changes the default of a process;
#: :func:`memory_limit` changes it for a block of code.
DEFAULT_MEMORY_LIMIT = 2 * 1024**3


def _default_limit() -> int:
    text = os.environ.get("TUMBLE_MEMORY_LIMIT", "")
    try:
        return max(int(text), 0) if text else DEFAULT_MEMORY_LIMIT
    except ValueError:
        return DEFAULT_MEMORY_LIMIT


_LIMIT: ContextVar[int | None] = ContextVar("tumble_memory_limit", default=None)


def current_memory_limit() -> int:
    """The allocation ceiling in bytes in force here (see :func:`memory_limit`)."""
    limit = _LIMIT.get()
    return _default_limit() if limit is None else limit


@contextlib.contextmanager
def memory_limit(nbytes: int) -> Iterator[int]:
    """Within the block, allow calls to allocate up to ``nbytes`` bytes each.

    Context-local (threads and asyncio tasks each keep their own), and restored on exit::

        with tumble.memory_limit(16 * 2**30):
            traj = rigid.simulate(q, omega, inv_inertia, dt, 10**8, "splitting")
    """
    limit = as_int(nbytes, "nbytes", minimum=0, maximum=None)
    token = _LIMIT.set(limit)
    try:
        yield limit
    finally:
        _LIMIT.reset(token)


def format_bytes(nbytes: float) -> str:
    """``nbytes`` in the largest binary unit that keeps it at least 1 (``'3.2 GiB'``)."""
    value = float(nbytes)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024.0:
            return f"{value:.0f} bytes" if unit == "bytes" else f"{value:.3g} {unit}"
        value /= 1024.0
    return f"{value:.3g} PiB"


def check_memory(nbytes: float, name: str, what: str) -> None:
    """Raise ``InputError`` naming ``name`` if ``what`` would take more than the limit.

    ``nbytes`` is the projected size, computed before anything is allocated (a Python int
    or float, so that it cannot overflow); ``what`` says what would be allocated
    (``"the records"``). The message gives the projected size, the limit and how to raise
    it.
    """
    limit = current_memory_limit()
    if nbytes > limit:
        raise InputError(
            f"{name}: {what} would take {format_bytes(nbytes)}, more than the limit of "
            f"{format_bytes(limit)} (raise it with `with tumble.memory_limit(nbytes):` or "
            "the TUMBLE_MEMORY_LIMIT environment variable)"
        )


def check_callable(f: Any, name: str, n_args: int) -> None:
    """Raise ``InputError`` unless ``f`` is callable with ``n_args`` positional arguments.

    Callables whose signature Python cannot read (some builtins, compiled functions) are
    taken on trust.
    """
    if not callable(f):
        raise InputError(f"{name}: expected a callable, got {describe(f)}")
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        return
    try:
        sig.bind(*range(n_args))
    except TypeError:
        raise InputError(
            f"{name}: expected a function of {n_args} positional argument"
            f"{'s' if n_args != 1 else ''}, got {getattr(f, '__name__', type(f).__name__)}"
            f"{sig}"
        ) from None


def as_choice(x: Any, name: str, choices: Sequence[Any]) -> Any:
    """Return ``x`` if it is one of ``choices``, else raise naming the allowed values.

    Arrays (even one-element ones) and other unhashable values are never a choice: NumPy
    compares them elementwise, so ``x in choices`` would give an array, a NumPy error or a
    value that cannot be used as a key.
    """
    allowed = ", ".join(repr(c) for c in choices)
    try:
        hash(x)
        ok = not isinstance(x, np.ndarray) and any(x == c for c in choices)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        seen = describe(x) if isinstance(x, np.ndarray) else repr(x)[:120]
        raise InputError(f"{name}: expected one of {allowed}, got {seen}")
    return x


def rotation_tolerance(dtype: Any, n: int) -> float:
    """Tolerance to accept an ``n x n`` matrix of ``dtype`` as a rotation (one policy).

    ``tol = n max(sqrt(eps), 8 eps_float32)``: 2.9e-6 in float64 and 1.0e-3 in float32 at
    ``n = 3``. The square root leaves room for rotations accumulated over many products;
    the float32 floor makes float64 accept every rotation that went through float32 or was
    printed to eight digits (rounding each entry moves ``RᵀR`` by at most ``eps_float32``
    per entry, ``|det R|`` by ``n eps_float32``). A reflection, a shear or a scale of more
    than ``tol/2`` is rejected outright.
    """
    eps = float(np.finfo(as_float_dtype(dtype)).eps)
    n = as_int(n, "n", minimum=1)
    return float(n * max(np.sqrt(eps), 8.0 * float(np.finfo(np.float32).eps)))


def check_rotation_matrix(
    R: np.ndarray, name: str, measured: tuple[float, float] | None = None
) -> None:
    """Raise ``InputError`` unless every ``(..., n, n)`` matrix of ``R`` is a rotation.

    Accepted: ``max |RᵀR - I| <= rotation_tolerance(R.dtype, n)`` and ``det R > 0`` (which
    with the first condition puts ``det R`` within ``n tol`` of +1). ``measured`` is the
    pair (largest ``|RᵀR - I|`` entry, smallest determinant) when the caller computed it
    already (a compiled 3 x 3 loop); otherwise NumPy computes it.
    """
    n = R.shape[-1]
    if R.size == 0:
        return
    if measured is None:
        with np.errstate(all="ignore"):
            gram = np.swapaxes(R, -1, -2) @ R - np.eye(n, dtype=R.dtype)
            err = float(np.max(np.abs(gram)))
            det = float(np.min(np.linalg.det(R.astype(np.float64))))
    else:
        err, det = measured
    tol = rotation_tolerance(R.dtype, n)
    if not (err <= tol and det > 0.0):
        raise InputError(
            f"{name}: expected a rotation matrix (R^T R = I within {tol:.2g}, det +1), got "
            f"one with max |R^T R - I| = {err:.3g} and det R = {det:.6g}"
            + (" (a reflection?)" if det < 0 else "")
        )


def check_skew(W: np.ndarray, name: str, expected: str) -> None:
    """Raise ``InputError`` unless the ``(..., n, n)`` matrices ``W`` are skew-symmetric.

    Accepted: ``max |W + Wᵀ| <= sqrt(eps) max(1, max |W|)``, relative to the largest entry
    so that rates computed in floating point (a product ``R ω Rᵀ``, a difference quotient)
    pass, while a matrix with a symmetric part of its own size does not. ``expected`` is
    the phrase the message uses (``"a skew-symmetric matrix"``, ``"skew-symmetric
    matrices"``).
    """
    asym = float(np.max(np.abs(W + np.swapaxes(W, -1, -2)), initial=0.0))
    magnitude = float(np.max(np.abs(W), initial=0.0))
    tol = float(np.sqrt(np.finfo(W.dtype).eps) * max(1.0, magnitude))
    if asym > tol:
        raise InputError(
            f"{name}: expected {expected} (W^T = -W within {tol:.2g}), "
            f"got max |W + W^T| = {asym:.3g}"
        )
