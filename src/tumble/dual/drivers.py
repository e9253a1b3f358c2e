"""Forward-mode drivers: derivatives, Jacobians, gradients and Hessians of NumPy code.

Each driver seeds the point ``x`` with perturbations, evaluates ``f`` once per chunk of
them on duals, and reads the partials of the result:

- ``derivative(f, x)``, ``directional_derivative(f, x, v)``: one perturbation, one
  evaluation; ``d/dt f(x + t v)`` at ``t = 0``;
- ``jacobian(f, x)``: ``n = x.size`` perturbations, ``ceil(n / chunk)`` evaluations;
  ``J[i..., j...] = ∂f_i/∂x_j``, shape ``f(x).shape + x.shape``; with ``batched=True``
  the same ``n`` seeds at every point of ``x`` of shape ``(..., n)``, shape ``(..., m, n)``;
- ``gradient(f, x)``, ``hessian(f, x)``: a scalar ``f``; the Hessian as the Jacobian of the
  gradient, by nested duals.

Every call draws a fresh tag, larger than all earlier ones, and reads only the partials of
that tag: a driver called inside ``f`` nests, and cannot confuse its perturbations with
the outer ones (ForwardDiff.jl issue 83: ``d/dx [x d/dy (x + y)]`` at 1 is 1, not 2).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import threading
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import Any, Literal, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

from tumble._errors import InputError
from tumble._validate import as_float_array, as_int
from tumble.dual.number import Dual, is_plain, make_dual, shape_of, split
from tumble.dual.rules import real_dtype
from tumble.dual.settings import checking_every_coefficient, nan_safe_enabled

__all__ = [
    "DEFAULT_CHUNK",
    "DEFAULT_POINTS_PER_PASS",
    "MAX_JACOBIAN_BYTES",
    "Derivatives",
    "Function",
    "derivative",
    "directional_derivative",
    "gradient",
    "hessian",
    "jacobian",
]

Function: TypeAlias = Callable[[Dual], ArrayLike | Dual]
"""What the drivers differentiate: NumPy code called on a :class:`Dual`, returning an
array (or a dual when the driver runs inside another differentiation)."""

Derivatives: TypeAlias = np.floating[Any] | NDArray[np.floating[Any]] | Dual
"""A driver's result: a float for a 0-d result, an array, or a dual when nested."""

DEFAULT_CHUNK = 64
"""Most partials carried in one evaluation by :func:`jacobian` (and friends).

An intermediate of size ``s`` holds ``s * chunk`` partials, so memory grows with the chunk
while Python overhead shrinks with the number of passes ``ceil(n / chunk)``. 64 keeps a
(1000,) input at 16 passes and its intermediates at 0.5 MB each.
"""

DEFAULT_POINTS_PER_PASS = 65536
"""Most points per evaluation of ``f`` in the batched drivers (``batched=True``).

Points are independent there, so they are differentiated in slices along the first axis.
Each pass pays the Python cost of every operation of ``f`` (about 10 µs each), so passes
should be few; a slice of 65536 points keeps each intermediate of a small field (its value,
512 kB in float64, and ``k`` times that in partials) well below the allocator's
thresholds once :func:`_keep_freed_memory` has raised them, so memory is reused from one
operation to the next. Measured in ``benchmarks/bench_dual.py``; ``docs/dual.md`` has the
numbers.
"""

_ALLOCATOR_BLOCK_BYTES = 30 << 20
"""Size of the block :func:`_keep_freed_memory` allocates and frees once per process."""

MAX_JACOBIAN_BYTES = 2 << 30
"""Largest Jacobian the drivers build (bytes, default 2 GiB); ``max_bytes=`` raises it.

An unbatched Jacobian of ``f: R^n -> R^m`` has ``m n`` entries: ``x`` of shape
``(100000, 3)`` with a pointwise ``f`` asks for 300 000 x 300 000 (671 GiB), where
``batched=True`` gives the (100000, 3, 3) that was meant. Above the limit the drivers raise
:class:`~tumble.InputError` before they evaluate ``f`` on duals.
"""

# Tags are process-wide so that they stay unique across threads; drawing one is the only
# shared state, and it happens under a lock. Which differentiations are running is
# context-local: a thread's finished or running tags never change another's checks.
_TAGS = itertools.count(1)
_LAST_TAG = [0]
_TAG_LOCK = threading.Lock()
_ACTIVE: ContextVar[frozenset[int]] = ContextVar("tumble_dual_active_tags", default=frozenset())


def _check_f(f: Any) -> None:
    if not callable(f):
        raise InputError(f"f: expected a callable, got {type(f).__name__}")


def _as_point(x: ArrayLike | Dual, name: str) -> NDArray[np.floating[Any]] | Dual:
    """A real finite array, or a dual (a driver called inside another differentiation)."""
    if isinstance(x, Dual):
        # np.isfinite sees only the value, at every depth of nesting.
        if not np.all(np.isfinite(x)):
            raise InputError(f"{name}: expected finite values, got NaN or infinity")
        return x
    return as_float_array(x, name)


def _new_tag(x: Any) -> int:
    """A tag larger than every tag drawn so far (and than x's, if x is a dual)."""
    with _TAG_LOCK:
        tag = next(_TAGS)
        _LAST_TAG[0] = tag
    if isinstance(x, Dual) and x.tag >= tag:
        raise InputError(
            f"x: a dual of tag {x.tag} cannot be differentiated again with the smaller tag "
            f"{tag}; tags of hand-made duals must stay below those the drivers draw"
        )
    return tag


@contextlib.contextmanager
def _differentiating(tag: int) -> Iterator[None]:
    """Mark ``tag`` as in progress in this context while ``f`` runs; once finished, any
    dual of it that turns up again (kept by a closure, say) has escaped and is refused."""
    token = _ACTIVE.set(_ACTIVE.get() | {tag})
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def _check_escaped(y: Any, tag: int) -> None:
    """Raise if ``y`` carries a perturbation of a differentiation that is not running in
    this context: one that has finished, or one running in another thread."""
    active = _ACTIVE.get()
    while isinstance(y, Dual):
        if y.tag not in active and 0 < y.tag <= _LAST_TAG[0]:
            raise InputError(
                f"f: its result carries a perturbation of tag {y.tag}, from a "
                f"differentiation that has already finished or runs in another thread (this "
                f"one has tag {tag}): the perturbation leaked out, for instance a dual kept "
                "in a closure or a global and reused. Recompute it inside f (a thread that f "
                "starts must run in a copy of its context: contextvars.copy_context().run)"
            )
        _check_escaped(y._v, tag)
        y = y._d


def _extract(y: Any, tag: int, k: int) -> tuple[tuple[int, ...], Any]:
    """Output shape and partials ``S_y + (k,)`` of the result ``y`` of ``f`` at ``tag``."""
    _check_escaped(y, tag)
    if isinstance(y, Dual):
        if y.tag == tag:
            d = split(y, tag)[1]
            if type(d) is np.ndarray:  # the k axis last by a transpose (np.moveaxis costs µs)
                return y.shape, d.transpose((*range(1, d.ndim), 0))
            return y.shape, np.moveaxis(d, 0, -1)
        if y.tag > tag:
            raise InputError(
                f"f: returned a dual of tag {y.tag}, which belongs to a differentiation that "
                f"has already finished (this one has tag {tag}); a perturbation leaked out"
            )
        return y.shape, np.zeros((*y.shape, k), dtype=real_dtype(y))
    if isinstance(y, list | tuple) and any(isinstance(e, Dual) for e in y):
        raise InputError(
            f"f: returned a {type(y).__name__} of duals; return an array (np.stack(...))"
        )
    try:
        arr = np.asarray(y)
    except TypeError:
        arr = np.asarray(None, dtype=object)
    if arr.dtype.kind not in "iuf":
        raise InputError(
            f"f: expected f to return a real array or a Dual, got {type(y).__name__}"
            + (f" of dtype {arr.dtype}" if isinstance(y, np.ndarray) else "")
        )
    # f does not depend on x at all: its derivative is exactly zero.
    return arr.shape, np.zeros((*arr.shape, k), dtype=real_dtype(arr))


def _may_hold_nan(d: Any) -> bool:
    """Whether partials ``d`` may hold a NaN: one reduction for a plain array (a NaN, or
    infinities of both signs, make the sum NaN; a false alarm only costs a re-check)."""
    if isinstance(d, np.ndarray):
        with np.errstate(over="ignore", invalid="ignore"):  # expected, not the caller's
            return bool(np.isnan(np.add.reduce(d, axis=None)))
    return bool(np.any(np.isnan(d)))


_ALLOCATOR_RAISED = [False]


def _keep_freed_memory() -> None:
    """Once per process, allocate and free one block of ``_ALLOCATOR_BLOCK_BYTES``.

    glibc's malloc starts by serving blocks above 128 kB with ``mmap`` and giving freed
    memory at the top of the heap back to the kernel above 128 kB; when a block that was
    served by ``mmap`` is freed, it raises the first threshold to that block's size (at
    most 32 MB) and the second to twice that (mallopt(3), "dynamic mmap threshold"). A
    dual evaluation allocates and frees many arrays of a few MB; below raised thresholds
    they are reused, while at the initial ones every call handed its memory back and
    page-faulted it in again (4 400 minor faults and 2.5 times the time for a Jacobian at
    10^5 points). Any NumPy program that has freed a large array is in the raised state;
    this makes it so from the first call. The block is never touched (no page is faulted
    in); the cost is that the process may keep up to about 60 MB of freed memory for
    reuse. Other allocators ignore it.
    """
    if not _ALLOCATOR_RAISED[0]:
        _ALLOCATOR_RAISED[0] = True
        np.empty(_ALLOCATOR_BLOCK_BYTES, dtype=np.uint8)


def _evaluate(f: Function, x: Any, seed: Any, tag: int, k: int) -> tuple[tuple[int, ...], Any]:
    """Output shape and partials of ``f`` at ``x`` seeded with ``seed`` (``(k,) + S``).

    NaN-safe partials check the coefficients of the rules that can be infinite at finite
    input; if the result still holds a NaN, ``f`` is evaluated again checking every
    coefficient, which gives what checking always would, at the price of that one pass.

    Overflow: under NumPy's default error state, ``f`` runs under
    ``np.errstate(over="raise")``, and a value or partial beyond the float range (an exact
    derivative that is not a float, as the Hessian of ``arctan2`` at ``(1e-200, 3e-200)``,
    about 1e399) raises InputError naming ``x``, where NumPy would warn and return an
    infinity, or a NaN once such terms meet. A caller who set another ``over`` state
    (``np.errstate(over="ignore")`` for IEEE infinities) gets NumPy's handling. A
    derivative that is infinite in exact arithmetic (``sqrt`` at 0) comes from a division
    by zero, not an overflow, and is infinite either way.
    """
    _keep_freed_memory()
    if np.geterr()["over"] != "warn":  # the caller's choice, or an outer evaluation's
        return _partials(f, x, seed, tag, k)
    try:
        with np.errstate(over="raise"):
            return _partials(f, x, seed, tag, k)
    except FloatingPointError as error:
        raise InputError(
            "x: expected a point where f and its derivatives are within "
            f"{real_dtype(x)}'s range, got an overflow ({error})"
        ) from None


def _partials(f: Function, x: Any, seed: Any, tag: int, k: int) -> tuple[tuple[int, ...], Any]:
    """:func:`_evaluate` in the error state it chose."""
    out_shape, d = _extract(f(make_dual(x, seed, tag)), tag, k)
    if nan_safe_enabled() and _may_hold_nan(d):
        with checking_every_coefficient():
            out_shape, d = _extract(f(make_dual(x, seed, tag)), tag, k)
    return out_shape, d


def _scalar_or_array(d: Any) -> Derivatives:
    return d[()] if isinstance(d, np.ndarray) and d.ndim == 0 else d


def derivative(f: Function, x: ArrayLike | Dual) -> Derivatives:
    """Derivative of ``f`` at ``x``: ``f(x + ε) = f(x) + ε f'(x)``.

    For scalar ``x`` this is ``f'(x)``. For an array ``x`` every element is perturbed at
    once (one partial), so for an elementwise ``f`` the result holds each element's
    derivative; in general it is ``directional_derivative(f, x, ones_like(x))``.

    Parameters
    ----------
    f : callable
        NumPy code mapping an array (or dual) of shape ``S`` to shape ``R``.
    x : array_like or Dual, shape S
        Finite real point (a dual when called inside another differentiation).

    Returns
    -------
    float, ndarray or Dual, shape R
        Exact to round-off: one evaluation of ``f`` on duals.
    """
    return directional_derivative(f, x, 1.0)


def directional_derivative(f: Function, x: ArrayLike | Dual, v: ArrayLike) -> Derivatives:
    """Directional derivative ``(v · ∇) f`` at ``x``: one evaluation of ``f`` on duals.

    Parameters
    ----------
    f : callable
        Maps shape ``S`` to shape ``R``.
    x : array_like or Dual, shape S
        Finite real point.
    v : array_like, broadcastable to S
        Direction.

    Returns
    -------
    float, ndarray or Dual, shape R
        ``d/dt f(x + t v)`` at ``t = 0``.
    """
    _check_f(f)
    x = _as_point(x, "x")
    shape = shape_of(x)
    dtype = real_dtype(x)
    v = as_float_array(v, "v", dtype=dtype)
    # The derivative is linear in v: seeded with v scaled by a power of two into [1/2, 1)
    # (exact), the partials neither overflow (v near 1e308) nor lose digits as subnormals on
    # the way; the result is scaled back once.
    k = int(np.frexp(np.max(np.abs(v), initial=0.0))[1])
    try:
        seed = np.broadcast_to(np.ldexp(v, -k), shape)
    except ValueError:
        raise InputError(
            f"v: expected a shape broadcastable to x's shape {shape}, got {v.shape}"
        ) from None
    tag = _new_tag(x)
    with _differentiating(tag):
        _, d = _evaluate(f, x, seed[None], tag, 1)
    d = d[..., 0]
    if k:
        with np.errstate(over="ignore", under="ignore"):
            scaled = d * 2.0 ** (k - k // 2) * 2.0 ** (k // 2)  # each factor a float
        if k > 0 and _finite(d) and not _finite(scaled):
            raise InputError(
                "v: too large, the directional derivative along v (largest component "
                f"{np.max(np.abs(v)):.3g}) is beyond the float range"
            )
        d = scaled
    return _scalar_or_array(d)


def _finite(x: Any) -> bool:
    """Whether every number of ``x`` (an array or a dual of any depth) is finite."""
    if isinstance(x, Dual):
        return _finite(x.value) and _finite(x.partials)
    return bool(np.all(np.isfinite(x)))


def _check_size(rows: int, n: int, x: Any, batched: bool, max_bytes: int) -> None:
    """Refuse a Jacobian of ``rows x n`` entries above ``max_bytes``."""
    size = rows * n * real_dtype(x).itemsize
    if size <= max_bytes:
        return
    shape = shape_of(x)
    hint = (
        f" For a field evaluated pointwise at the {math.prod(shape[:-1])} points of x, pass "
        f"batched=True (one {shape[-1]}-column Jacobian per point)."
        if not batched and len(shape) >= 2
        else ""
    )
    raise InputError(
        f"x: the Jacobian at x of shape {shape} would have {rows} x {n} entries "
        f"({size / 2**30:.3g} GiB), above the limit of {max_bytes / 2**30:.3g} GiB "
        f"(max_bytes).{hint} Pass a larger max_bytes if you mean it."
    )


def _seeds(
    shape: tuple[int, ...], chunk: int, batched: bool, dtype: Any, first: int | None = None
) -> Iterator[Any]:
    """The seeds of the evaluations at ``x`` of shape ``shape``, one at a time: a
    ``(k,) + shape`` array per chunk of ``k <= chunk`` unit directions (batched seeds are
    broadcast views, the same at every point); the first chunk has ``first`` directions
    if given."""
    n = shape[-1] if batched else math.prod(shape)
    head = chunk if first is None else first
    starts = [0, *range(head, n, chunk)] if n else [0]
    for start, stop in zip(starts, [*starts[1:], n], strict=True):
        k = stop - start
        rows = np.zeros((k, n), dtype=dtype)
        rows[np.arange(k), start + np.arange(k)] = 1.0
        if batched:
            seed = np.broadcast_to(rows.reshape((k,) + (1,) * (len(shape) - 1) + (n,)), (k, *shape))
        else:
            seed = rows.reshape((k, *shape))
        yield seed


def _one_pass(
    f: Function,
    x: NDArray[np.floating] | Dual,
    tag: int,
    seeds: Iterable[Any],
    batched: bool,
    max_bytes: int,
) -> tuple[tuple[int, ...], Any]:
    """(output shape, Jacobian) of ``f`` at all of ``x``: one evaluation per seed (from
    :func:`_seeds`, for ``x``'s shape)."""
    shape = shape_of(x)
    n = shape[-1] if batched else math.prod(shape)
    pieces = []
    out_shape: tuple[int, ...] = ()
    for i, seed in enumerate(seeds):
        out_shape, d = _evaluate(f, x, seed, tag, seed.shape[0])
        if i == 0:
            _check_size(math.prod(out_shape), n, x, batched, max_bytes)
        pieces.append(d)
    jac = pieces[0] if len(pieces) == 1 else np.concatenate(pieces, axis=-1)
    if not batched:
        jac = np.reshape(jac, out_shape + shape)
    return out_shape, jac


def _rows_per_pass(shape: tuple[int, ...], points_per_pass: int | None) -> int | None:
    """Rows of ``x``'s first axis per pass, or None for one pass over everything.

    The rows are split into the whole number of equal slices whose size is nearest
    ``points_per_pass`` points: a batch up to 1.5 times that size runs in one pass, and no
    pass is left with a small remainder.
    """
    if points_per_pass is None or len(shape) < 2 or shape[0] < 2:
        return None
    per_row = math.prod(shape[1:-1])
    target = max(1, points_per_pass // per_row) if per_row else shape[0]
    slices = max(1, round(shape[0] / target))
    return -(-shape[0] // slices) if slices > 1 else None


# Not in __all__: the values are documented with the keyword, in jacobian.
Sliceable: TypeAlias = bool | Literal["auto"]
"""How the batched drivers may split the points: ``True`` (``f`` acts on a slice of the
points as on all of them), ``False`` (one pass over all points) or ``"auto"``."""


def _as_sliceable(sliceable: Any) -> Sliceable:
    if isinstance(sliceable, bool):
        return sliceable
    if isinstance(sliceable, str) and sliceable == "auto":
        return "auto"
    raise InputError(f"sliceable: expected True, False or 'auto', got {sliceable!r}"[:160])


def _jacobian(
    f: Function,
    x: ArrayLike | Dual,
    chunk: int | None,
    batched: bool,
    points_per_pass: int | None = DEFAULT_POINTS_PER_PASS,
    max_bytes: int | None = None,
    sliceable: Sliceable = "auto",
) -> tuple[tuple[int, ...], tuple[int, ...], Any]:
    """(input shape, output shape, Jacobian) with the layout described in :func:`jacobian`."""
    _check_f(f)
    x = _as_point(x, "x")
    if not isinstance(batched, bool):
        raise InputError(f"batched: expected True or False, got {batched!r}")
    chunk = DEFAULT_CHUNK if chunk is None else as_int(chunk, "chunk", minimum=1)
    if points_per_pass is not None:
        points_per_pass = as_int(points_per_pass, "points_per_pass", minimum=1)
    limit = MAX_JACOBIAN_BYTES if max_bytes is None else as_int(max_bytes, "max_bytes", minimum=1)
    sliceable = _as_sliceable(sliceable)
    shape = shape_of(x)
    if batched and not shape:
        raise InputError("x: batched=True needs points of shape (..., n), got a 0-d x")
    if not sliceable:
        points_per_pass = None
    tag = _new_tag(x)
    with _differentiating(tag):
        return _jacobian_passes(f, x, tag, chunk, batched, points_per_pass, limit, sliceable)


def _jacobian_passes(
    f: Function,
    x: Any,
    tag: int,
    chunk: int,
    batched: bool,
    points_per_pass: int | None,
    max_bytes: int,
    sliceable: Sliceable,
) -> tuple[tuple[int, ...], tuple[int, ...], Any]:
    shape = shape_of(x)
    dtype = real_dtype(x)
    # Nested drivers (x a dual) and unbatched Jacobians run in one pass.
    rows = _rows_per_pass(shape, points_per_pass) if batched and is_plain(x) else None
    if rows is None:
        n = math.prod(shape)
        # A Jacobian this wide is too large once f has as many outputs as inputs: the
        # first evaluation carries one direction (the first column, at about twice the
        # cost of f on floats), which tells the output size before any wide chunk runs.
        wide = not batched and is_plain(x) and n * n * dtype.itemsize > max_bytes
        out_shape, jac = _one_pass(
            f, x, tag, _seeds(shape, chunk, batched, dtype, 1 if wide else None), batched, max_bytes
        )
        return shape, out_shape, jac
    # The seeds are the same at every point: built once for all of x when they fit in one
    # chunk (the usual field), and sliced with the points; else built for each slice.
    whole = list(_seeds(shape, chunk, batched, dtype)) if shape[-1] <= chunk else None

    def seeds(start: int) -> Iterable[Any]:
        if whole is not None:
            return [seed[:, start : start + rows] for seed in whole]
        return _seeds((min(rows, shape[0] - start), *shape[1:]), chunk, batched, dtype)

    lead = shape[:-1]
    try:
        out_shape, first = _one_pass(f, x[:rows], tag, seeds(0), batched, max_bytes)
    except InputError:
        raise  # f returned something that is not an array: the same on every slice
    except ValueError:
        # NumPy's error for shapes that do not broadcast (f combines the slice with
        # arrays of the full batch). Any other exception is f's own and propagates.
        if sliceable is True:
            raise
        out_shape, first = (), None
    if first is None or not (
        out_shape[: len(lead)] == (rows, *lead[1:]) and len(out_shape) <= len(lead) + 1
    ):
        if sliceable is True:
            raise InputError(
                f"f: returned shape {out_shape} for the first {rows} of the points of x "
                f"{shape}; with sliceable=True, f must map points (rows, ..., n) to "
                "(rows, ..., m) or (rows, ...). Pass sliceable='auto' or False if f does "
                "not act on a slice of the points as on all of them"
            )
        # "auto": f does not act on a slice of the points as on the whole (it combines x
        # with per-point arrays of the full batch, say): differentiate all points at once;
        # a genuine error in f is raised from there.
        out_shape, jac = _one_pass(
            f, x, tag, _seeds(shape, chunk, batched, dtype), batched, max_bytes
        )
        return shape, out_shape, jac
    full_shape = (shape[0], *out_shape[1:])
    _check_size(math.prod(full_shape), shape[-1], x, batched, max_bytes)
    # The partials axis first in memory, as each pass produces it: the copies below are
    # then block copies, and the result has the same layout as a single pass's.
    jac = np.moveaxis(np.empty((first.shape[-1], *full_shape), dtype=first.dtype), 0, -1)
    jac[:rows] = first
    for start in range(rows, shape[0], rows):
        part_shape, part = _one_pass(
            f, x[start : start + rows], tag, seeds(start), batched, max_bytes
        )
        if part_shape[1:] != out_shape[1:]:
            raise InputError(
                f"f: returned shape {part_shape} for points {start}:{start + rows} but "
                f"{out_shape} for the first {rows}; a batched f must map (..., n) to (..., m)"
            )
        jac[start : start + rows] = part
    return shape, full_shape, jac


def jacobian(
    f: Function,
    x: ArrayLike | Dual,
    *,
    chunk: int | None = None,
    batched: bool = False,
    points_per_pass: int | None = DEFAULT_POINTS_PER_PASS,
    max_bytes: int | None = None,
    sliceable: Sliceable = "auto",
) -> NDArray[np.floating[Any]] | Dual:
    """Jacobian of ``f`` at ``x`` by forward mode: ``J[i..., j...] = ∂f_i/∂x_j``.

    All ``n`` input directions are carried at once (``k = n`` partials, one evaluation of
    ``f``) up to ``chunk`` of them; larger inputs take ``ceil(n / chunk)`` evaluations.

    Parameters
    ----------
    f : callable
        NumPy code mapping shape ``S`` to shape ``R``. With ``batched=True``, ``f`` is a
        field evaluated pointwise: it maps ``(..., n)`` to ``(..., m)`` (or ``(...)``) and
        point ``p``'s outputs depend on point ``p``'s inputs only.
    x : array_like or Dual, shape S, or (..., n) when batched
        Finite real point(s).
    chunk : int, optional
        Most partials per evaluation (default :data:`DEFAULT_CHUNK`).
    batched : bool
        Treat the leading axes of ``x`` as independent points (like ``jax.vmap``): each
        point is seeded with the same ``n`` directions, so the cost is one evaluation per
        slice of points whatever ``N``. If ``f`` mixes points, the result is wrong (sums
        across points).
    points_per_pass : int or None
        With ``batched=True``, evaluate ``f`` on equal slices of about this many points
        along the first axis of ``x`` (default :data:`DEFAULT_POINTS_PER_PASS`; up to 1.5
        times it in one pass), which keeps the working set in cache; ``None``: all points
        in one evaluation. The result is the same either way.
    max_bytes : int, optional
        Largest Jacobian to build, in bytes (default :data:`MAX_JACOBIAN_BYTES`, 2 GiB).
        A larger one raises :class:`~tumble.InputError` before ``f`` runs on more than
        one direction (for a wide unbatched ``x``, the first evaluation carries one
        direction to learn the output size), suggesting ``batched=True`` where ``x``
        looks like points.
    sliceable : {"auto", True, False}
        Whether ``f`` acts on a slice of the points as on all of them, which slicing by
        ``points_per_pass`` needs (``batched=True`` only). ``True``: slice, and any error
        of ``f`` propagates. ``False``: one pass over all points, as with
        ``points_per_pass=None``. ``"auto"`` (default): slice, but if on the first slice
        ``f`` raises ``ValueError`` (NumPy's error for shapes that do not broadcast) or
        returns a shape whose leading axes are not the slice's (it combines ``x`` with
        arrays of per-point data from outside, say), evaluate all points at once; any
        other exception of ``f`` propagates as it is.

    Returns
    -------
    ndarray or Dual
        Shape ``R + S``; with ``batched=True``, ``R + (n,)``, e.g. ``(N, m, n)``.
    """
    return _jacobian(f, x, chunk, batched, points_per_pass, max_bytes, sliceable)[2]


def gradient(
    f: Function,
    x: ArrayLike | Dual,
    *,
    chunk: int | None = None,
    batched: bool = False,
    points_per_pass: int | None = DEFAULT_POINTS_PER_PASS,
    max_bytes: int | None = None,
    sliceable: Sliceable = "auto",
) -> Derivatives:
    """Gradient ``∇f`` of a scalar-valued ``f`` at ``x``: shape ``S``.

    With ``batched=True``, ``f`` maps ``(..., n)`` to ``(...)`` pointwise and the result
    has shape ``(..., n)``. Cost as :func:`jacobian`: ``ceil(n / chunk)`` evaluations
    (per slice of ``points_per_pass`` points when batched; ``sliceable`` as there).
    """
    shape, out_shape, jac = _jacobian(f, x, chunk, batched, points_per_pass, max_bytes, sliceable)
    expected = shape[:-1] if batched else ()
    if out_shape != expected:
        raise InputError(
            f"f: gradient needs a scalar value per point (output shape {expected}), got "
            f"output shape {out_shape}"
        )
    return _scalar_or_array(jac)


def hessian(
    f: Function,
    x: ArrayLike | Dual,
    *,
    chunk: int | None = None,
    batched: bool = False,
    points_per_pass: int | None = DEFAULT_POINTS_PER_PASS,
    max_bytes: int | None = None,
    sliceable: Sliceable = "auto",
) -> NDArray[np.floating[Any]] | Dual:
    """Hessian ``∂²f/∂x_i∂x_j`` of a scalar-valued ``f`` at ``x``, by nested duals.

    The outer Jacobian and the inner gradient carry different tags, so their perturbations
    cannot mix. Shape ``S + S``, or ``(..., n, n)`` with ``batched=True`` (points in
    slices of ``points_per_pass``, and ``sliceable``, as in :func:`jacobian`). Cost:
    ``ceil(n / chunk)²`` evaluations with ``n * n`` second-order partials each.
    """
    return jacobian(
        lambda y: gradient(f, y, chunk=chunk, batched=batched, max_bytes=max_bytes),
        x,
        chunk=chunk,
        batched=batched,
        points_per_pass=points_per_pass,
        max_bytes=max_bytes,
        sliceable=sliceable,
    )
