"""The bad-input campaign's machinery: what is called, with what, and how outcomes are judged.

``tests/test_campaign.py`` holds the tests and describes the rules; this module holds what
they share: the callables found in the public surface (:data:`TARGETS`), the valid and bad
values, the judging of an outcome, the extreme values of the second rule, and the tally of
calls and their time (:data:`TALLY`). ``tests/campaign_binary.py`` holds the third rule's
table of binary rotation operations.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import math
import os
import pkgutil
import re
import signal
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from numba.core import event

import tumble
from tumble import InputError

# ======================================================================================
# profiles

_COMMON = {
    "deadline": None,
    "suppress_health_check": list(HealthCheck),
    "database": None,
}
settings.register_profile("campaign-ci", max_examples=2, derandomize=True, **_COMMON)
settings.register_profile("campaign-long", max_examples=60, **_COMMON)
PROFILE = "campaign-long" if os.environ.get("TUMBLE_CAMPAIGN") == "long" else "campaign-ci"
#: Fewest calls each profile must make in all (the long one is the issue's figure).
MIN_CALLS = {"campaign-ci": 400, "campaign-long": 20_000}

#: Memory limit during the campaign: a bad size is refused long before this.
MEMORY_LIMIT = 64 * 2**20

# ======================================================================================
# what is called


#: Public callables not driven here, each with the reason. They start servers, clusters
#: or threads, or take the ``argparse`` namespace of their own command (the command lines
#: are driven with bad arguments in tests/test_cli.py, test_compare.py and tests/sweep).
EXCLUDED = {
    "tumble.lab.server.run": "serves the lab until interrupted",
    "tumble.lab.server.create_app": "builds the web app (driven by tests/lab)",
    "tumble.lab.api.warm_up": "runs every method once (seconds), takes no argument",
    "tumble.sweep.cluster.local_cluster": "starts Dask worker processes",
    "tumble.sweep.cluster.run_sweep": "starts Dask worker processes",
    "tumble.compare.run": "argparse namespace of tumble compare",
    "tumble.compare.add_arguments": "argparse parser of tumble compare",
    "tumble.sweep.cli.run": "argparse namespace of tumble sweep",
    "tumble.sweep.cli.add_arguments": "argparse parser of tumble sweep",
    "tumble.sweep.plot.run": "argparse namespace of tumble sweep-plot",
    "tumble.sweep.plot.add_arguments": "argparse parser of tumble sweep-plot",
    "tumble.precompile.run": "argparse namespace of tumble precompile",
    "tumble.precompile.add_arguments": "argparse parser of tumble precompile",
}


@dataclass(frozen=True)
class Target:
    """One callable of the public surface: ``module.name`` or ``module.Class.method``."""

    label: str
    fn: Callable[..., Any]
    params: tuple[inspect.Parameter, ...]
    fields: frozenset[str]  # names an InputError may start with besides the parameters
    doc: str
    make_self: Callable[[], Any] | None = None  # for methods: a fresh valid instance


def _public_modules() -> Iterator[Any]:
    yield tumble
    for info in pkgutil.walk_packages(tumble.__path__, "tumble."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            yield importlib.import_module(info.name)


def _signature(fn: Any) -> tuple[inspect.Parameter, ...] | None:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    kinds += (inspect.Parameter.KEYWORD_ONLY,)
    return tuple(p for p in sig.parameters.values() if p.kind in kinds and p.name != "self")


def _instances() -> dict[type, Callable[[], Any]]:
    """A fresh valid instance of each class whose methods are driven."""
    from tumble import pairs, transform
    from tumble.hierarchy import Hierarchy
    from tumble.linkedlist import ContiguousList

    def hierarchy() -> Hierarchy:
        h = Hierarchy(3)
        root = h.add(transform.DynamicTransform.identity(3))
        h.add(transform.Transform.identity(3), root)
        return h

    return {
        transform.Transform: lambda: transform.Transform([1.0, 2.0, 3.0], np.eye(3), 2.0),
        transform.DynamicTransform: lambda: transform.DynamicTransform(
            transform.Transform([1.0, 2.0, 3.0], np.eye(3), 2.0), [0.1, 0.2, 0.3]
        ),
        Hierarchy: hierarchy,
        ContiguousList: lambda: ContiguousList([3, 1, 2], dtype="int64"),
        type(ContiguousList([1]).begin()): lambda: ContiguousList([3, 1, 2]).begin(),
        pairs.Pairs: lambda: pairs.pairs([1, 2, 3]),
        pairs.DistinctPairs: lambda: pairs.distinct_pairs([1, 2, 3, 4]),
    }


def resolve(label: str) -> Any:
    module, name = label.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def _targets() -> list[Target]:
    found: dict[int, Target | None] = {id(resolve(label)): None for label in EXCLUDED}
    instances = _instances()
    for module in _public_modules():
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            label = f"{module.__name__}.{name}"
            if not callable(obj) or id(obj) in found:
                continue
            if inspect.isclass(obj) and issubclass(obj, BaseException):
                continue
            params = _signature(obj)
            # An exception is documented by the callable's docstring or its module's.
            home = inspect.getmodule(obj)
            doc = (inspect.getdoc(obj) or "") + ((home and home.__doc__) or "")
            if params is not None:
                found[id(obj)] = Target(label, obj, params, frozenset(), doc)
            if inspect.isclass(obj) and obj in instances:
                ctor = frozenset(p.name for p in (params or ()))
                for mname, member in inspect.getmembers(obj):
                    if mname.startswith("_") or not inspect.isfunction(member):
                        continue
                    mparams = _signature(member)
                    if mparams is None or id(member) in found:
                        continue
                    fields = ctor | {n for n in dir(obj) if not n.startswith("_")}
                    found[id(member)] = Target(
                        f"{label}.{mname}",
                        member,
                        mparams,
                        frozenset(fields),
                        (inspect.getdoc(member) or "") + doc,
                        instances[obj],
                    )
    return sorted((t for t in found.values() if t is not None), key=lambda t: t.label)


TARGETS = _targets()

# ======================================================================================
# values


def dual_terms(v: Any) -> Any:
    """Elementwise NumPy code for the dual drivers: rules whose derivatives of every order
    are bounded for every finite input, and a derivative nested inside (so ``hessian``
    differentiates three levels deep)."""
    from tumble.dual import derivative

    s = np.arcsinh(v)
    return (
        np.tanh(v)
        + np.arctan2(v, 1.0)
        + derivative(np.arctan, v)
        + np.arcsin(0.5 * np.tanh(v))
        + np.logaddexp(s, 1.0)
        + np.hypot(s, 1.0)
    )


def _unit(v: list[float]) -> np.ndarray:
    a = np.array(v, dtype=float)
    return a / np.linalg.norm(a)


#: A valid value for each parameter name that occurs in the public surface (the first
#: choice of every draw that keeps the argument valid). Names not here always get a bad
#: value or, if they have one, their default.
VALID: dict[str, Any] = {
    "q": _unit([0.9, 0.1, -0.3, 0.2]),
    "q0": _unit([0.9, 0.1, -0.3, 0.2]),
    "q1": _unit([0.2, 0.7, 0.1, -0.4]),
    "p": _unit([0.2, 0.7, 0.1, -0.4]),
    "omega": np.array([0.3, -1.0, 0.4]),
    "omega0": np.array([0.3, -1.0, 0.4]),
    "omega_body": np.array([0.3, -1.0, 0.4]),
    "alpha": np.array([0.01, 0.02, -0.03]),
    "inv_inertia": np.array([1.0, 0.6, 0.35]),
    "L_body": np.array([[[0.3, -1.0, 0.4]], [[0.31, -0.99, 0.4]]]),
    "L_body0": np.array([0.3, -1.0, 0.4]),
    "torque": np.array([0.0, 0.1, 0.0]),
    "phi": np.array([0.1, -0.2, 0.3]),
    "x": np.array([0.1, -0.2, 0.3]),
    "v": np.array([1.0, 2.0, 3.0]),
    "a": np.array([1.0, 2.0, 3.0]),
    "b": np.array([1.0, 2.5, 3.0]),
    "R": np.eye(3),
    "I": np.diag([1.0, 2.0, 3.0]),
    "W": np.array([[0.0, -0.3, 0.2], [0.3, 0.0, -0.1], [-0.2, 0.1, 0.0]]),
    "t": np.linspace(0.0, 1.0, 3),
    "dt": 0.01,
    "steps": 3,
    "every": 1,
    "order": 2,
    "method": "rk4",
    "methods": ["rk4"],
    "name": "rk4",
    "seq": "xyz",
    "shape": 3,
    "rng": 1,
    "n": 3,
    "s": 0.5,
    "angles": np.array([0.1, 0.2, 0.3]),
    "translation": np.array([1.0, 2.0, 3.0]),
    "rotation": np.eye(3),
    "scale": 2.0,
    "points": np.array([1.0, 2.0, 3.0]),
    "mass": 2.0,
    "force": np.array([1.0, 0.0, 0.0]),
    "impulse": np.array([1.0, 0.0, 0.0]),
    "node": 0,
    "dv": np.array([0.1, 0.0, 0.0]),
    "da": np.array([0.1, 0.0, 0.0]),
    "dw": np.array([0.1, 0.0, 0.0]),
    "dalpha": np.array([0.1, 0.0, 0.0]),
    "value": 5,
    "values": [1, 2, 3],
    "steps_per_rotation": 8,
    "rotations": 1.0,
    "min_j": 0.5,
    "median_j": 0.5,
    "energy": 0.4,
    "momentum": 1.0,
    "runs": 1,
    "band": 1e-3,
    "f": lambda v: np.sum(dual_terms(v)),
}

_SPECIAL_FLOATS = [
    math.nan,
    math.inf,
    -math.inf,
    1e308,
    -1e308,
    1e200,
    5e-324,
    1e-310,
    0.0,
    -0.0,
    -1.0,
]
_SPECIAL_INTS = [-1, 0, 2**63, 2**64, -(2**63) - 1, 10**30]
_SHAPES = [(), (0,), (3,), (4,), (2,), (5,), (1, 3), (2, 3), (2, 4), (3, 3), (2, 1, 3), (0, 3)]


class _Opaque:
    """An object no function expects."""

    def __repr__(self) -> str:
        return "<opaque>"


def _arrays() -> st.SearchStrategy[Any]:
    dtypes = st.sampled_from([np.float64, np.float32, np.int64, np.bool_, np.complex128])
    special = st.sampled_from(_SPECIAL_FLOATS)
    shapes = st.sampled_from(_SHAPES)

    def fill(shape: tuple[int, ...], dtype: Any, value: float) -> np.ndarray:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return np.full(shape, value).astype(dtype)

    normal = st.builds(
        lambda shape, seed: np.random.default_rng(seed).normal(size=shape),
        shapes,
        st.integers(0, 2**16),
    )
    return st.one_of(st.builds(fill, shapes, dtypes, special), normal)


BAD: st.SearchStrategy[Any] = st.one_of(
    st.sampled_from(
        [
            None,
            True,
            "x",
            "",
            b"x",
            1j,
            [],
            {},
            [[1.0, 2.0], [3.0]],
            [[1.0, 2.0, 3.0], [4.0, 5.0]],
            ["a", "b", "c"],
            [None, None, None],
            np.array(["a", "b", "c"]),
            np.array([1.0, 2.0, 3.0], dtype=object),
        ]
    ),
    st.sampled_from(_SPECIAL_FLOATS),
    st.sampled_from(_SPECIAL_INTS),
    st.builds(_Opaque),
    _arrays(),
)


def value_for(p: inspect.Parameter, data: st.DataObject, bad: bool) -> tuple[bool, Any]:
    """(whether to pass it, the value) for parameter ``p``."""
    optional = p.default is not inspect.Parameter.empty
    if bad:
        return True, data.draw(BAD, label=p.name)
    if p.name in VALID:
        return True, VALID[p.name]
    if optional:
        return False, None
    return True, data.draw(BAD, label=p.name)


# ======================================================================================
# outcomes and their tally


#: The longest a call may run outside numba's compiler (the issue's bar: no call over 10 s;
#: the slowest valid calls, reference solves, take about a second). A call still running
#: then is interrupted and fails (an unbounded solve once took hours).
SLOW_CALL_SECONDS = 10.0


@dataclass
class Tally:
    """What the campaign did in this session: calls, their wall time, and how much of it
    numba spent compiling (or loading from its cache), for the closing figures."""

    calls: int = 0
    seconds: float = 0.0
    compile_seconds: float = 0.0
    slowest: tuple[float, str] = (0.0, "")  # the longest call outside the compiler
    by_rule: dict[str, int] = field(default_factory=dict)

    def report(self) -> str:
        rules = ", ".join(f"{k} {v}" for k, v in sorted(self.by_rule.items()))
        return (
            f"{self.calls} calls ({rules}), {self.seconds:.0f} s in the calls of which "
            f"{self.compile_seconds:.0f} s compiling; slowest call outside the compiler "
            f"{self.slowest[0]:.2f} s ({self.slowest[1]})"
        )


TALLY = Tally()


class _CompileTimer(event.Listener):
    """Seconds numba holds its compiler lock (compiling, or loading from its cache)."""

    def __init__(self) -> None:
        self.total = 0.0
        self._depth = 0
        self._since = 0.0

    def on_start(self, ev: Any) -> None:
        if self._depth == 0:
            self._since = time.perf_counter()
        self._depth += 1

    def on_end(self, ev: Any) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.total += time.perf_counter() - self._since

    def so_far(self) -> float:
        running = time.perf_counter() - self._since if self._depth else 0.0
        return self.total + running


class _Hang(BaseException):  # not caught by a library's own `except Exception`
    """Raised in a call that ran longer than SLOW_CALL_SECONDS outside numba's compiler."""


@contextlib.contextmanager
def timed(label: str, rule: str) -> Iterator[None]:
    """Count one call of ``label`` under ``rule`` and time it; raise :class:`_Hang` in it
    once it has run SLOW_CALL_SECONDS outside numba's compiler (a first call may compile
    for minutes on a loaded machine, and numba interrupted is left broken)."""
    timer = _CompileTimer()
    start = time.perf_counter()

    def ring(signum: int, frame: Any) -> None:
        outside = time.perf_counter() - start - timer.so_far()
        if timer._depth or outside < SLOW_CALL_SECONDS:
            signal.setitimer(signal.ITIMER_REAL, max(SLOW_CALL_SECONDS - outside, 1.0))
            return
        raise _Hang(f"ran longer than {SLOW_CALL_SECONDS:g} s outside numba's compiler")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, SLOW_CALL_SECONDS)
    try:
        with event.install_listener("numba:compiler_lock", timer):
            yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        wall = time.perf_counter() - start
        TALLY.calls += 1
        TALLY.by_rule[rule] = TALLY.by_rule.get(rule, 0) + 1
        TALLY.seconds += wall
        TALLY.compile_seconds += timer.total
        if wall - timer.total > TALLY.slowest[0]:
            TALLY.slowest = (wall - timer.total, label)


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def named(message: str) -> set[str]:
    """The argument names an InputError message starts with (``"a, b.c[1]: ..."``)."""
    head = message.split(": ", 1)[0] if ": " in message else ""
    names = set()
    for part in head.split(","):
        m = _NAME.match(part.strip().lstrip("-").replace("-", "_"))
        if m:
            names.add(m.group(0))
    return names


def run(target: Target, call: Callable[[], Any], shown: dict[str, Any], rule: str) -> Any:
    """``call()``, timed and counted; returns the result or the exception it raised. A call
    that runs too long fails here."""
    try:
        with timed(target.label, rule):
            return call()
    except _Hang as hang:
        raise AssertionError(f"{target.label}{shown}: {hang}") from None
    except Exception as exc:  # judged by the caller: the three outcomes
        return _Raised(exc)


@dataclass(frozen=True)
class _Raised:
    """What :func:`run` returns for a call that raised."""

    error: Exception


def judge_error(target: Target, error: Exception, shown: dict[str, Any]) -> None:
    """The second and third outcomes (``tests/test_campaign.py``): an InputError naming an
    argument, or an exception type the docstring names."""
    if isinstance(error, InputError):
        allowed = {p.name for p in target.params} | target.fields
        # A check done for a caller (``methods.check(name, argument)``) reports under the
        # caller's argument name, which it receives as ``argument``.
        if isinstance(shown.get("argument"), str):
            allowed.add(shown["argument"])
        assert named(str(error)) & allowed, (
            f"{target.label}{shown}: InputError names none of {sorted(allowed)}: {error}"
        )
    else:
        kind = type(error).__name__
        assert re.search(rf"\b{kind}\b", target.doc), (
            f"{target.label}{shown}: undocumented {kind}: {error}"
        )


def check_outcome(target: Target, call: Callable[[], Any], shown: dict[str, Any]) -> None:
    """The first rule: a result, or an error judged by :func:`judge_error`."""
    result = run(target, call, shown, "bad input")
    if isinstance(result, _Raised):
        judge_error(target, result.error, shown)


# ======================================================================================
# extreme input (issue 27)
#
# The second rule, for every public callable whose valid arguments the tables know (VALID,
# and EXTREME_VALID per callable): driven from valid arguments with one or two of their float
# arguments moved to an extreme (subnormal, huge, phases near and past the documented
# bounds, far outside a spline's knots) or to an empty batch. Besides the three outcomes, a
# result of finite input must be finite (NaN or infinity only where the callable's docstring
# names them), and no warning may be raised but tumble's own documented ones.


def _near_limits() -> list[float]:
    """Factors around each documented bound on a phase, an extrapolation or a run length:
    the valid arguments' phases are of order one, so these land on both sides of it."""
    from tumble import exact, parameters, torques
    from tumble.interpolate import RotationSpline

    limits = [
        exact.MAX_PHASE,
        torques.MAX_REFERENCE_PHASE,
        RotationSpline.EXTRAPOLATION_LIMIT,
        RotationSpline.EXTRAPOLATION_LIMIT ** (1 / 3),  # a cubic piece reaches it at t³
        parameters.MAX_ROTATIONS,
    ]
    return [c * f for c in limits for f in (0.1, 0.3, 1.0, 3.0)]


#: Factors that move a valid float argument to an extreme: subnormal, tiny, phases from
#: 1e15 (no digit of the attitude left) to past exact.MAX_PHASE = 1e150, huge, and around
#: every documented bound (:func:`_near_limits`).
EXTREME_FACTORS = sorted(
    {
        5e-324,
        1e-320,
        1e-310,
        1e-160,
        1e15,
        1e17,
        1e20,
        1e60,
        1e100,
        1e149,
        3e149,
        1e154,
        1e200,
        1e300,
        1e308,
        *_near_limits(),
    }
)


def _extreme_valid() -> dict[str, dict[str, Any]]:
    """Valid arguments per callable (by label), beyond ``VALID``."""
    from tumble import torques

    rng = np.random.default_rng(27)
    keys = rng.normal(size=(5, 4))
    keys /= np.linalg.norm(keys, axis=-1, keepdims=True)
    n = 4
    t = np.linspace(0.0, 1.5, n)
    q = np.tile(VALID["q"], (n, 1))
    trajectory = (t, q, np.tile(VALID["omega"], (n, 1)))
    model = torques.gravity(0.8, [0.0, 0.0, -9.81], [0.05, -0.02, 0.3]) + torques.damping(0.2)
    motion = {"trajectory": trajectory, "reference": trajectory}
    return {
        "tumble.diagnostics.*": motion,
        "tumble.diagnostics.first_flip_time": {
            "t": np.array([0.0, 0.1]),
            "inv_inertia": np.array([[1.0, 0.6, 0.35]]),
        },
        "tumble.exact.polhode": {"energy_factor": 0.6},
        "tumble.interpolate.RotationSpline": {"times": np.arange(5.0), "q": keys},
        "tumble.interpolate.squad": {"a0": VALID["q0"], "a1": VALID["q1"]},
        "tumble.interpolate.squad_controls": {"q": keys},
        "tumble.torques.*": {
            "model": model,
            "target": VALID["q1"],
            "stiffness": 2.0,
            "damping": 0.3,
            "coefficient": 0.2,
            "mean_motion": 1.3,
            "nadir": np.array([0.0, 0.6, 0.8]),
            "gravity": np.array([0.0, 0.0, -9.81]),
            "center_of_mass": np.array([0.05, -0.02, 0.3]),
            "amplitude": np.array([0.3, -0.2, 0.5]),
            "angular_frequency": 2.0,
            "phase": 0.3,
        },
        "tumble.torques.reference": {"torque": model, "t": t},
        "tumble.torques.evaluate": {"t": 0.3},
        "tumble.torques.potential_energy": {
            "model": torques.gravity(0.8, [0.0, 0.0, -9.81], [0.05, -0.02, 0.3])
        },
    }


def extreme_models() -> list[Any]:
    """Torque models at extremes: stiff, spinning the body up, huge and subnormal."""
    from tumble import torques

    return [
        torques.damping(1e10),
        torques.constant([1e6, 0.0, 0.0]),
        torques.constant([1e200, 0.0, 0.0]),
        torques.gravity(1e-310, [0.0, 0.0, -9.81], [0.0, 0.0, 1.0]),
        torques.gravity_gradient(1e150, [0.0, 0.0, 1.0]),
    ]


def _extreme_instances() -> dict[str, Callable[[], Any]]:
    """Instances whose methods TARGETS leaves out (a spline is built from valid knots)."""
    from tumble.interpolate import RotationSpline

    keys = np.random.default_rng(3).normal(size=(5, 4))
    return {"tumble.interpolate.RotationSpline": lambda: RotationSpline(np.arange(5.0), keys)}


def _extreme_targets() -> list[Target]:
    """The public callables whose valid arguments the tables know and of which at least one
    is a float argument or a torque model (functions, constructors, methods, a spline's
    ``__call__`` included)."""
    out = [
        t
        for t in TARGETS
        if not (inspect.isclass(t.fn) and issubclass(t.fn, tuple))  # NamedTuple records
    ]
    for label, make in _extreme_instances().items():
        cls = resolve(label)
        for name in ("__call__", "angular_velocity", "angular_acceleration"):
            member = getattr(cls, name, None)
            if not inspect.isfunction(member) or any(t.fn is member for t in out):
                continue
            params = _signature(member) or ()
            fields = frozenset(p.name for p in _signature(cls) or ()) | {
                n for n in dir(cls) if not n.startswith("_")
            }
            doc = (inspect.getdoc(member) or "") + (inspect.getdoc(cls) or "")
            out.append(Target(f"{label}.{name}", member, params, fields, doc, make))
    return sorted((t for t in out if _drivable(t)), key=lambda t: t.label)


def _drivable(target: Target) -> bool:
    movable = False
    for p in target.params:
        known, value = extreme_value_of(target.label, p.name)
        if not known and p.default is inspect.Parameter.empty:
            return False
        movable |= known and (
            isinstance(value, float | np.ndarray | tuple) or type(value).__name__ == "TorqueModel"
        )
    return movable


EXTREME_VALID = _extreme_valid()


def extreme_value_of(label: str, name: str) -> tuple[bool, Any]:
    """(known, value): the valid value of argument ``name`` of the callable ``label``."""
    module = label.rsplit(".", 1)[0]
    for key in (label, module + ".*"):
        if name in EXTREME_VALID.get(key, {}):
            return True, EXTREME_VALID[key][name]
    return (name in VALID), VALID.get(name)


EXTREME_TARGETS = _extreme_targets()


def extreme(value: Any, data: st.DataObject, name: str) -> Any:
    """``value`` (a valid float argument) moved to an extreme, or an empty batch of it."""
    if isinstance(value, tuple) and value and all(isinstance(v, np.ndarray) for v in value):
        i = data.draw(st.integers(0, len(value) - 1), label=f"{name} part")
        return (*value[:i], extreme(value[i], data, f"{name}[{i}]"), *value[i + 1 :])
    if isinstance(value, bool) or not isinstance(value, float | np.ndarray):
        return value
    a = np.asarray(value, dtype=float)
    how = data.draw(st.sampled_from(["scale", "component", "empty"]), label=f"{name} how")
    if how == "empty" and a.ndim >= 1:
        return np.zeros((0, *a.shape[1:]) if a.ndim >= 2 else (0,))
    factor = data.draw(st.sampled_from(EXTREME_FACTORS), label=f"{name} factor")
    sign = data.draw(st.sampled_from([1.0, -1.0]), label=f"{name} sign")
    with np.errstate(all="ignore"):
        if how == "component" and a.size:
            out = a.copy()
            out.flat[data.draw(st.integers(0, a.size - 1), label=f"{name} index")] = sign * factor
        else:
            out = sign * factor * a
    if not np.all(np.isfinite(out)):
        return value
    return float(out) if isinstance(value, float) else out


def finite_leaves(result: Any) -> Iterator[np.ndarray]:
    """The float arrays in ``result`` (arrays, tuples, named tuples, dicts, dataclasses)."""
    if isinstance(result, np.ndarray | np.floating | float):
        a = np.asarray(result)
        if a.dtype.kind == "f":
            yield a
    elif isinstance(result, tuple | list):
        for r in result:
            yield from finite_leaves(r)
    elif isinstance(result, dict):
        for r in result.values():
            yield from finite_leaves(r)
    elif hasattr(result, "__dataclass_fields__"):
        for k in result.__dataclass_fields__:
            yield from finite_leaves(getattr(result, k))


def check_extreme_outcome(
    target: Target, call: Callable[[], Any], shown: dict[str, Any], rule: str = "extremes"
) -> tuple[Any, Exception | None]:
    """The second rule: no warning but tumble's own, then the first rule's outcomes, and a
    result with no NaN or infinity unless the docstring names them. Returns ``(result,
    None)`` or ``(None, the error)``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run(target, call, shown, rule)
    leaked = [w for w in caught if not issubclass(w.category, tumble.TumbleWarning)]
    assert not leaked, f"{target.label}{shown}: warnings {[str(w.message) for w in leaked]}"
    if isinstance(result, _Raised):
        judge_error(target, result.error, shown)
        return None, result.error
    doc = target.doc.lower()
    nan_ok = re.search(r"\bnan\b", doc) is not None
    inf_ok = re.search(r"\binf\b", doc) is not None
    for a in finite_leaves(result):
        assert nan_ok or not np.any(np.isnan(a)), f"{target.label}{shown}: NaN in the result"
        assert inf_ok or not np.any(np.isinf(a)), f"{target.label}{shown}: inf in the result"
    return result, None
