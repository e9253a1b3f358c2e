"""The campaign's third rule: overflow and underflow in the binary rotation operations.

Every operation of ``tumble.rotation`` that takes two or more array operands, and the slerp
family of ``tumble.interpolate``, is listed in :data:`BINARY` with how its result scales
with each operand: degree 1 in each factor of a product, 0 in a quaternion read as a
rotation, in a mean's weights and in the vectors of an alignment, none in a power or a
rotation vector. A draw takes moderate operands (float64 or float32) and moves one or two
of them to the edge of that dtype's range: scaled by a power of two so that their largest
entry sits at the largest float, at the square root of it, at the smallest normal or
among the subnormals, or with one entry replaced by such a number. The oracle is the same
operation on the operands brought back to moderate size by powers of two, its result
scaled back by the degrees: the scaling law is exact, so what is checked is that huge and
tiny operands give the answer moderate ones do (which the modules' own tests check
against SciPy and closed forms). Passing outcomes:

1. a finite result equal to the oracle's to a few ulp (rotations double-cover aware; for
   an alignment, a rotation as good as the oracle's for the problem, and its ``rssd``);
2. :class:`tumble.InputError` whose message names a moved operand (the culprit, not a
   neighbour); this is also the only outcome when the oracle's result is beyond the
   dtype's range;

and no warning but tumble's own.
"""

from __future__ import annotations

import importlib
import inspect
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st

from campaign import Target, check_extreme_outcome, named
from tumble import InputError


@dataclass(frozen=True)
class Operand:
    """One operand: what it holds, and the degree of the result in it."""

    shape: tuple[int, ...]  # one operand's shape: (4,) a quaternion, (3, 3) three vectors...
    degree: int | None  # the result scales by 2^(degree k) when the operand does by 2^k
    rows: bool = False  # each row is read on its own (quaternions normalised one by one)
    positive: bool = False  # valid values are positive (weights)


@dataclass(frozen=True)
class Binary:
    """A binary operation and what its result is: ``"vector"`` (compared normwise),
    ``"quat"`` (a unit quaternion, double-cover aware), ``"angle"`` (radians in
    ``[0, π]``), ``"align"`` (``align_vectors``' rotation and rssd)."""

    label: str
    operands: dict[str, Operand]
    output: str
    keeps_length_of: str | None = None  # a rotation of this operand: the length is kept


_N = 3  # rows of the operands that hold several quaternions or vectors
_QUAT = Operand((4,), 0)
_S = Operand((), None)

#: The binary rotation operations and how their results scale. A new one in
#: ``tumble.rotation`` fails ``test_every_binary_rotation_operation_is_listed`` until it
#: is added here.
BINARY = [
    Binary(
        "tumble.rotation.quat_multiply", {"p": Operand((4,), 1), "q": Operand((4,), 1)}, "vector"
    ),
    Binary("tumble.rotation.quat_rotate", {"q": _QUAT, "v": Operand((3,), 1)}, "vector", "v"),
    Binary("tumble.rotation.rotation_angle", {"p": _QUAT, "q": _QUAT}, "angle"),
    Binary(
        "tumble.rotation.cayley_rotate",
        {"v": Operand((3,), 1), "phi": Operand((3,), None)},
        "vector",
        "v",
    ),
    Binary("tumble.rotation.quat_power", {"q": _QUAT, "s": _S}, "quat"),
    Binary(
        "tumble.rotation.quat_mean",
        {"q": Operand((_N, 4), 0, rows=True), "weights": Operand((_N,), 0, positive=True)},
        "quat",
    ),
    Binary(
        "tumble.rotation.align_vectors",
        {
            "a": Operand((_N, 3), 0),
            "b": Operand((_N, 3), 0),
            "weights": Operand((_N,), 0, positive=True),
        },
        "align",
    ),
    Binary("tumble.interpolate.slerp", {"q0": _QUAT, "q1": _QUAT, "s": _S}, "quat"),
    Binary(
        "tumble.interpolate.squad",
        {"q0": _QUAT, "q1": _QUAT, "a0": _QUAT, "a1": _QUAT, "s": _S},
        "quat",
    ),
]  # fmt: skip


def resolve(label: str) -> Any:
    module, name = label.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def target_of(op: Binary) -> Target:
    fn = resolve(op.label)
    params = tuple(inspect.signature(fn).parameters.values())
    doc = inspect.getdoc(fn) or ""
    return Target(op.label, fn, params, frozenset(), doc)


# --------------------------------------------------------------------------------------
# magnitudes


def _exponents(dtype: np.dtype) -> list[int]:
    """``frexp`` exponents of the largest entry after a move: the largest float and just
    below, around the square root of it (where squares overflow), and the mirror images
    down to the smallest subnormal."""
    fi = np.finfo(dtype)
    top, half = int(fi.maxexp), int(fi.maxexp) // 2
    normal = int(fi.minexp) + 1  # frexp exponent of the smallest normal number
    sub = normal - int(fi.nmant)  # of the smallest subnormal
    huge = [top, top - 1, top - 8, half + 1, half, half - 1, top // 3]
    tiny = [-top // 3, 1 - half, -half, -half - 1, normal + 1, normal, normal - 1]
    return huge + tiny + [normal - int(fi.nmant) // 2, sub + 2, sub]


def _moderate(op: Operand, dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    if op.positive:
        return rng.uniform(0.25, 2.0, op.shape).astype(dtype)
    if op.degree is None and op.shape == ():
        return np.asarray(rng.uniform(-2.0, 2.0), dtype=dtype)
    return rng.normal(size=op.shape).astype(dtype)


def _move(x: np.ndarray, data: st.DataObject, name: str) -> np.ndarray:
    """``x`` scaled (exactly, by a power of two) so that its largest entry has a drawn
    exponent, or with one entry replaced by a number of that exponent."""
    exponent = data.draw(st.sampled_from(_exponents(x.dtype)), label=f"{name} exponent")
    sign = data.draw(st.sampled_from([1.0, -1.0]), label=f"{name} sign")
    with np.errstate(all="ignore"):
        if x.ndim and data.draw(st.booleans(), label=f"{name} one entry"):
            out = x.copy()
            largest = 1.0 - float(np.finfo(x.dtype).epsneg)  # the largest float's mantissa
            mantissa = data.draw(st.sampled_from([0.5, 0.7, largest]), label="mantissa")
            i = data.draw(st.integers(0, x.size - 1), label=f"{name} index")
            out.flat[i] = sign * math.ldexp(mantissa, exponent)
            return out
        shift = exponent - _exponent(x)
        return np.ldexp(sign * x, shift).astype(x.dtype)


def _exponent(x: np.ndarray) -> int:
    """``frexp`` exponent of the largest entry of ``x`` (0 for zeros)."""
    return int(np.frexp(np.max(np.abs(x), initial=0.0))[1])


def _back(x: np.ndarray, op: Operand, target: int) -> tuple[np.ndarray, int]:
    """``(y, k)`` with ``x = y 2^k`` exactly enough: the largest entry of ``y`` (of each
    row, for ``op.rows``) in ``[2^-1, 2^target)``; tiny operands are scaled up (exact),
    huge ones down to ``2^target`` (entries ``2^-900`` times smaller than the largest may
    round, far below any result's last digit)."""
    if op.rows:
        parts = [_back(row, Operand(row.shape, op.degree), target) for row in x]
        return np.stack([y for y, _ in parts]), 0
    e = _exponent(x)
    k = e - min(max(e, 0), target)
    return np.ldexp(x, -k).astype(x.dtype), k


# --------------------------------------------------------------------------------------
# the check


def _max_abs(x: np.ndarray) -> float:
    return float(np.max(np.abs(x), initial=0.0))


def _rotation_matrix(q: np.ndarray) -> np.ndarray:
    """The rotation matrix of a unit quaternion, written out (independent of tumble)."""
    w, x, y, z = (float(c) for c in q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def _unit(x: np.ndarray) -> tuple[np.ndarray, int]:
    """``(x / 2^k, k)`` with the largest entry in ``[1/2, 1)``, in float64."""
    k = _exponent(x)
    return np.ldexp(np.asarray(x, dtype=np.float64), -k), k


def _check_alignment(args: dict[str, Any], got: Any, oracle: Any, tol: float) -> str | None:
    """``align_vectors``: the rotation is as good for Wahba's problem as the oracle's (the
    gain ``Σ w a·R b`` of each, in scaled units, where the optimum may not be unique), and
    rssd is ``sqrt(Σ w |a - R b|²)`` of the rotation returned."""
    q, rssd = got
    a, ka = _unit(args["a"])
    b, kb = _unit(args["b"])
    w, kw = _unit(args["weights"])
    size = float(np.sum(w * np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)))

    def gain(quat: np.ndarray) -> float:
        R = _rotation_matrix(quat)
        return float(np.sum(w * np.einsum("ni,ij,nj->n", a, R, b)))

    if oracle is not None and gain(q) < gain(oracle[0]) - tol * size:
        return f"rotation worse than the oracle's: gain {gain(q)!r} < {gain(oracle[0])!r}"
    # rssd in units of 2^n, n = k + kw'/2: a and b brought to one scale, kw' even.
    k, kw2 = max(ka, kb), kw - (kw % 2)
    n = k + kw2 // 2
    a2, b2 = np.ldexp(args["a"], -k), np.ldexp(args["b"], -k)
    w2 = np.ldexp(np.asarray(args["weights"], dtype=np.float64), -kw2)
    R = _rotation_matrix(q)
    residual = a2 - b2 @ R.T
    expected = math.sqrt(float(np.sum(w2 * np.sum(residual * residual, axis=-1))))
    scale = math.sqrt(
        float(np.sum(w2 * (np.linalg.norm(a2, axis=-1) + np.linalg.norm(b2, axis=-1)) ** 2))
    )
    subnormal = float(np.finfo(np.asarray(rssd).dtype).smallest_subnormal)
    with np.errstate(all="ignore"):
        got = float(np.ldexp(np.float64(rssd), -n))
        floor = float(np.ldexp(16 * subnormal, -n))
    if not abs(got - expected) <= tol * scale + floor:
        return f"rssd {float(rssd)!r} is not sqrt(Σ w |a - R b|²) (2^{n} x {expected!r})"
    return None


def _compare(
    op: Binary, args: dict[str, Any], got: Any, oracle: Any, dtype: np.dtype
) -> str | None:
    """What is wrong with ``got`` (a finite result), or None. ``oracle``: the expected
    result scaled back (float64; may hold an infinity), or None when there is none."""
    fi = np.finfo(dtype)
    tol = 64 * float(fi.eps)
    floor = 16 * float(fi.smallest_subnormal)
    if op.output == "align":
        return _check_alignment(args, got, oracle, tol)
    g = np.asarray(got, dtype=np.float64)
    if op.output == "quat" and not abs(float(np.linalg.norm(g)) - 1.0) <= tol:
        return f"not a unit quaternion (norm {float(np.linalg.norm(g))!r})"
    if op.output == "angle" and not 0.0 <= float(g) <= math.pi * (1.0 + float(fi.eps)):
        return f"an angle outside [0, π]: {float(g)!r}"
    if op.keeps_length_of is not None:
        v, k = _unit(args[op.keeps_length_of])
        with np.errstate(all="ignore"):
            kept, scaled_floor = np.ldexp(g, -k), np.ldexp(floor, -k)
        length = float(np.linalg.norm(v))
        if not abs(float(np.linalg.norm(kept)) - length) <= tol * length + scaled_floor:
            return f"the length of {op.keeps_length_of} is not kept"
    if oracle is None:
        return None
    e = np.asarray(oracle, dtype=np.float64)
    if not np.all(np.abs(e) <= float(fi.max)):
        # The true result is at the edge of the range: finite is all that can be asked.
        return None if _max_abs(g) >= float(fi.max) / 8 else f"expected {e!r} (beyond range)"
    with np.errstate(all="ignore"):
        if op.output == "quat":
            error = min(_max_abs(g - e), _max_abs(g + e))
            bound = tol
        elif op.output == "angle":
            error, bound = abs(float(g) - float(e)), tol * math.pi
        else:
            error, bound = _max_abs(g - e), tol * _max_abs(e) + floor
    if not error <= bound:
        return f"differs from the scaled oracle {e!r} by {error!r} (allowed {bound!r})"
    return None


def draw_and_check(op: Binary, data: st.DataObject, seed: int) -> None:
    """One draw of the rule (module docstring) for ``op``; fails with the reason."""
    target = target_of(op)
    dtype = np.dtype(data.draw(st.sampled_from([np.float64, np.float32]), label="dtype"))
    rng = np.random.default_rng(seed)
    args = {name: _moderate(o, dtype, rng) for name, o in op.operands.items()}
    moved = data.draw(
        st.sets(st.sampled_from(sorted(op.operands)), min_size=1, max_size=2), label="moved"
    )
    for name in sorted(moved):
        args[name] = _move(args[name], data, name)
    shown = {"dtype": dtype.name, **args}
    fn = target.fn

    # The oracle: the operation on the operands brought back to moderate size.
    top = int(np.finfo(dtype).maxexp) // 16
    scaled, shift = {}, 0
    for name, o in op.operands.items():
        if o.degree is None:
            scaled[name] = args[name]
            continue
        scaled[name], k = _back(args[name], o, top)
        shift += o.degree * k
    oracle: Any = None
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            at_moderate = fn(**scaled)
            if op.output == "align":
                oracle = at_moderate
            else:
                oracle = np.ldexp(np.asarray(at_moderate, dtype=np.float64), shift)
    except InputError:
        oracle = None  # no oracle at moderate size either: only the invariants are checked

    result, error = check_extreme_outcome(target, lambda: fn(**args), shown, rule="binary rotation")
    if error is not None:
        # An InputError naming an argument (judged already) must name a moved operand, the
        # culprit, never only a neighbour.
        assert named(str(error)) & moved, (
            f"{op.label}{shown}: {type(error).__name__} names none of the moved operands "
            f"{sorted(moved)}: {error}"
        )
        return
    problem = _compare(op, args, result, oracle, dtype)
    assert problem is None, f"{op.label}{shown}: {problem}"


def listed_operations(module: Any, is_operand: Callable[[inspect.Parameter], bool]) -> set[str]:
    """Labels of the functions of ``module.__all__`` with two or more array operands."""
    out = set()
    for name in module.__all__:
        fn = getattr(module, name)
        if not inspect.isfunction(fn):
            continue
        params = inspect.signature(fn).parameters.values()
        if sum(1 for p in params if is_operand(p)) >= 2:
            out.add(f"{module.__name__}.{name}")
    return out
