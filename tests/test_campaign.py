"""The bad-input campaign: every public callable driven with bad and extreme arguments.

The callables are found, not listed: every name in the ``__all__`` of every public module
of ``tumble`` (so a function another branch adds is covered as soon as it is exported),
classes through their constructor and the public methods of one valid instance. Each call
takes valid values for most arguments (a table by parameter name, ``VALID``) and bad ones
for some (Hypothesis draws which and what: wrong shapes and dtypes, NaN and infinities,
1e308 and subnormals, huge and negative integers, ragged lists, None, wrong types).

Three outcomes pass (``docs/limitations.md``, "Two rules for bad input"):

1. a result;
2. :class:`tumble.InputError` whose message starts with the name of an argument of the
   call (for a method, also a field of its object: ``scale: ...`` from
   ``Transform.inverse``; for a check done on a caller's behalf, the name it was given as
   ``argument``: ``methods.check(name, argument="method")`` reports ``method: ...``);
3. an exception whose type the callable's docstring (or its module's) names
   (``IndexError`` of ``Cursor.advance``, ``ArgumentTypeError`` of the command-line
   argument types...).

Anything else fails, with Hypothesis' smallest example. Profiles: ``campaign-ci`` (the
default, a few calls per callable, deterministic, well under a minute after numba's cache
is warm) and ``campaign-long`` (``TUMBLE_CAMPAIGN=long``, 60 calls per callable, over
10 000 in all: ``./dev campaign``). Calls run with a 64 MiB memory limit in a scratch
working directory, so that nothing allocates much or writes outside it.
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
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
MIN_CALLS = {"campaign-ci": 400, "campaign-long": 10_000}

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


def _resolve(label: str) -> Any:
    module, name = label.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def _targets() -> list[Target]:
    found: dict[int, Target | None] = {id(_resolve(label)): None for label in EXCLUDED}
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


def _dual_terms(v: Any) -> Any:
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
    "f": lambda v: np.sum(_dual_terms(v)),
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


def _value_for(p: inspect.Parameter, data: st.DataObject, bad: bool) -> tuple[bool, Any]:
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
# outcomes


CALLS = {"count": 0}

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _named(message: str) -> set[str]:
    """The argument names an InputError message starts with (``"a, b.c[1]: ..."``)."""
    head = message.split(": ", 1)[0] if ": " in message else ""
    names = set()
    for part in head.split(","):
        m = _NAME.match(part.strip().lstrip("-").replace("-", "_"))
        if m:
            names.add(m.group(0))
    return names


def _check_outcome(target: Target, call: Callable[[], Any], shown: dict[str, Any]) -> None:
    CALLS["count"] += 1
    error: Exception | None = None
    try:
        call()
    except Exception as exc:  # judged below: the three outcomes of the module docstring
        error = exc
    if error is None:
        return
    if isinstance(error, InputError):
        allowed = {p.name for p in target.params} | target.fields
        # A check done for a caller (``methods.check(name, argument)``) reports under the
        # caller's argument name, which it receives as ``argument``.
        if isinstance(shown.get("argument"), str):
            allowed.add(shown["argument"])
        assert _named(str(error)) & allowed, (
            f"{target.label}{shown}: InputError names none of {sorted(allowed)}: {error}"
        )
    else:
        kind = type(error).__name__
        assert re.search(rf"\b{kind}\b", target.doc), (
            f"{target.label}{shown}: undocumented {kind}: {error}"
        )


# ======================================================================================
# the campaign


@pytest.fixture
def tally() -> Iterator[None]:
    """Print the running number of calls after each callable (visible with ``-s``)."""
    yield
    print(f" [{CALLS['count']} calls]", end="", flush=True)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A scratch working directory and a small memory limit for every call."""
    folder = tmp_path_factory.mktemp("campaign")
    here = os.getcwd()
    os.chdir(folder)
    try:
        with tumble.memory_limit(MEMORY_LIMIT):
            yield
    finally:
        os.chdir(here)


@pytest.mark.parametrize("target", TARGETS, ids=[t.label for t in TARGETS])
@settings(settings.get_profile(PROFILE))
@given(data=st.data())
def test_bad_input_gives_a_result_or_a_named_error(
    scratch: None, tally: None, target: Target, data: st.DataObject
) -> None:
    params = target.params
    corrupt = (
        data.draw(st.sets(st.sampled_from([p.name for p in params]), max_size=2), label="bad")
        if params
        else set()
    )
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    shown: dict[str, Any] = {}
    for p in params:
        use, value = _value_for(p, data, p.name in corrupt)
        if not use:
            continue
        shown[p.name] = value
        if p.kind is inspect.Parameter.KEYWORD_ONLY:
            kwargs[p.name] = value
        else:
            args.append(value)
    if target.make_self is None:
        fn = target.fn
    else:
        fn = getattr(target.make_self(), target.fn.__name__)
    with warnings.catch_warnings(), tumble.memory_limit(MEMORY_LIMIT):
        # Documented warnings (divergence, Magnus convergence) are part of valid results.
        warnings.simplefilter("ignore")
        _check_outcome(target, lambda: fn(*args, **kwargs), shown)


#: Subnormal, tiny, huge and largest magnitudes for the dual drivers, where a rule's
#: formula can overflow (-2|x| at 1e308), divide by an underflowed square or cancel.
DUAL_MAGNITUDES = [5e-324, -1e-310, 1e-200, 0.0, 1e200, -1e308, np.finfo(np.float64).max]


@pytest.mark.parametrize("magnitude", DUAL_MAGNITUDES)
def test_dual_drivers_at_subnormal_and_huge_magnitudes_give_finite_derivatives(
    magnitude: float,
) -> None:
    """Finite input whose derivatives of every order are bounded: every driver, nested up
    to third derivatives, gives finite values and no NumPy warning."""
    from tumble import dual

    def f(v: Any) -> Any:
        return np.sum(_dual_terms(v), axis=-1)

    x = np.full(3, magnitude)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        results = [
            dual.derivative(f, x),
            dual.gradient(f, x),
            dual.hessian(f, x),
            dual.jacobian(lambda u: dual.hessian(f, u), x),
            dual.hessian(f, np.stack([x, -x]), batched=True, points_per_pass=1),
        ]
    for r in results:
        assert np.all(np.isfinite(r)), (magnitude, r)


def test_the_campaign_covers_the_public_surface_and_made_its_calls() -> None:
    labels = {t.label for t in TARGETS}
    for must in (
        "tumble.rigid.simulate",
        "tumble.rotation.quat_multiply",
        "tumble.transform.Transform.inverse",
        "tumble.hierarchy.Hierarchy.step",
        "tumble.linkedlist.ContiguousList.reserve",
        "tumble.memory_limit",
    ):
        assert must in labels, must
    assert len(TARGETS) >= 200
    for label in EXCLUDED:  # the list names what exists
        assert callable(_resolve(label)), label
    if CALLS["count"]:  # the campaign ran in this session (not deselected)
        assert CALLS["count"] >= MIN_CALLS[PROFILE], CALLS["count"]
    print(f"\ncampaign profile {PROFILE}: {len(TARGETS)} callables, {CALLS['count']} calls")


# ======================================================================================
# the motion modules: extreme magnitudes, phases, empty batches (issue 27)
#
# A stricter rule for the public callables of exact, torques, interpolate, trajectory and
# diagnostics, driven from valid arguments with one or two of their float arguments moved
# to an extreme (subnormal, huge, phases up to and past the documented bounds, far outside a
# spline's knots) or to an empty batch. Besides the three outcomes above, a result of finite
# input must be finite (NaN or infinity only where the callable's docstring names them),
# no warning may be raised but tumble's own documented ones, and no call may run longer
# than MOTION_CALL_SECONDS (the compiled kernels' first compile included).

MOTION_MODULES = (
    "tumble.exact",
    "tumble.torques",
    "tumble.interpolate",
    "tumble.trajectory",
    "tumble.diagnostics",
)

#: The longest a call may take outside numba's compiler (a generous bound: the slowest
#: valid calls, reference solves, take a second); an unbounded solve took hours.
MOTION_CALL_SECONDS = 60

#: Factors that move a valid float argument to an extreme: subnormal, tiny, phases from
#: 1e15 (no digit of the attitude left) to past exact.MAX_PHASE = 1e150, huge.
_EXTREME_FACTORS = [
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
]


def _motion_valid() -> dict[str, dict[str, Any]]:
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
        "tumble.trajectory.Trajectory.take": {"records": slice(1, 3), "bodies": None},
    }


def _motion_models() -> list[Any]:
    """Torque models at extremes: stiff, spinning the body up, huge and subnormal."""
    from tumble import torques

    return [
        torques.damping(1e10),
        torques.constant([1e6, 0.0, 0.0]),
        torques.constant([1e200, 0.0, 0.0]),
        torques.gravity(1e-310, [0.0, 0.0, -9.81], [0.0, 0.0, 1.0]),
        torques.gravity_gradient(1e150, [0.0, 0.0, 1.0]),
    ]


def _motion_instances() -> dict[str, Callable[[], Any]]:
    from tumble.interpolate import RotationSpline
    from tumble.trajectory import Trajectory

    keys = np.random.default_rng(3).normal(size=(5, 4))
    n, batch = 4, (2,)
    rng = np.random.default_rng(4)
    return {
        "tumble.interpolate.RotationSpline": lambda: RotationSpline(np.arange(5.0), keys),
        "tumble.trajectory.Trajectory": lambda: Trajectory(
            t=np.arange(float(n)),
            q=rng.normal(size=(n, *batch, 4)),
            omega=rng.normal(size=(n, *batch, 3)),
            L=rng.normal(size=(n, *batch, 3)),
            L_body=rng.normal(size=(n, *batch, 3)),
            energy=rng.normal(size=(n, *batch)),
        ),
    }


def _motion_targets() -> list[Target]:
    """The public callables of MOTION_MODULES (functions, constructors, and the methods of
    a spline and a trajectory, the spline's ``__call__`` included)."""
    out = []
    for t in TARGETS:
        module = getattr(t.fn, "__module__", "") or ""
        if module.startswith(MOTION_MODULES) and not (
            inspect.isclass(t.fn) and issubclass(t.fn, tuple)  # NamedTuple records
        ):
            out.append(t)
    for label, make in _motion_instances().items():
        cls = _resolve(label)
        for name in ("__call__", "angular_velocity", "angular_acceleration", "take"):
            member = getattr(cls, name, None)
            if not inspect.isfunction(member):
                continue
            params = _signature(member) or ()
            fields = frozenset(p.name for p in _signature(cls) or ()) | {
                n for n in dir(cls) if not n.startswith("_")
            }
            doc = (inspect.getdoc(member) or "") + (inspect.getdoc(cls) or "")
            out.append(Target(f"{label}.{name}", member, params, fields, doc, make))
    return sorted(out, key=lambda t: t.label)


MOTION_TARGETS = _motion_targets()
MOTION_VALID = _motion_valid()


def _motion_value(label: str, name: str) -> tuple[bool, Any]:
    """(known, value): the valid value of argument ``name`` of the callable ``label``."""
    module = label.rsplit(".", 1)[0]
    for key in (label, module + ".*"):
        if name in MOTION_VALID.get(key, {}):
            return True, MOTION_VALID[key][name]
    return (name in VALID), VALID.get(name)


def _extreme(value: Any, data: st.DataObject, name: str) -> Any:
    """``value`` (a valid float argument) moved to an extreme, or an empty batch of it."""
    if isinstance(value, tuple) and value and all(isinstance(v, np.ndarray) for v in value):
        i = data.draw(st.integers(0, len(value) - 1), label=f"{name} part")
        return (*value[:i], _extreme(value[i], data, f"{name}[{i}]"), *value[i + 1 :])
    if isinstance(value, bool) or not isinstance(value, float | np.ndarray):
        return value
    a = np.asarray(value, dtype=float)
    how = data.draw(st.sampled_from(["scale", "component", "empty"]), label=f"{name} how")
    if how == "empty" and a.ndim >= 1:
        return np.zeros((0, *a.shape[1:]) if a.ndim >= 2 else (0,))
    factor = data.draw(st.sampled_from(_EXTREME_FACTORS), label=f"{name} factor")
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


def _finite_leaves(result: Any) -> Iterator[np.ndarray]:
    """The float arrays in ``result`` (arrays, tuples, named tuples, dicts, dataclasses)."""
    if isinstance(result, np.ndarray | np.floating | float):
        a = np.asarray(result)
        if a.dtype.kind == "f":
            yield a
    elif isinstance(result, tuple | list):
        for r in result:
            yield from _finite_leaves(r)
    elif isinstance(result, dict):
        for r in result.values():
            yield from _finite_leaves(r)
    elif hasattr(result, "__dataclass_fields__"):
        for k in result.__dataclass_fields__:
            yield from _finite_leaves(getattr(result, k))


class _Hang(Exception):
    """Raised by the alarm of a call that ran longer than MOTION_CALL_SECONDS."""


#: Packages whose frames the time limit never interrupts: numba's compiler (a first call
#: compiles for minutes on a loaded machine; interrupted, numba is left broken).
_COMPILERS = (f"{os.sep}numba{os.sep}", f"{os.sep}llvmlite{os.sep}")


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`_Hang` in the call after ``seconds`` outside numba's compiler."""

    def ring(signum: int, frame: Any) -> None:
        f = frame
        while f is not None:
            if any(c in f.f_code.co_filename for c in _COMPILERS):
                signal.setitimer(signal.ITIMER_REAL, 5.0)  # compiling: look again later
                return
            f = f.f_back
        raise _Hang(f"no result after {seconds} s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _reraise(error: Exception) -> None:
    raise error


def _check_motion_outcome(target: Target, call: Callable[[], Any], shown: dict[str, Any]) -> None:
    error: Exception | None = None
    result: Any = None
    with warnings.catch_warnings(record=True) as caught, _time_limit(MOTION_CALL_SECONDS):
        warnings.simplefilter("always")
        try:
            result = call()
        except _Hang:
            raise AssertionError(
                f"{target.label}{shown}: ran longer than {MOTION_CALL_SECONDS} s"
            ) from None
        except Exception as exc:  # judged below, as in the campaign's three outcomes
            error = exc
    leaked = [w for w in caught if not issubclass(w.category, tumble.TumbleWarning)]
    assert not leaked, f"{target.label}{shown}: warnings {[str(w.message) for w in leaked]}"
    if error is not None:
        _check_outcome(target, lambda: _reraise(error), shown)  # counts the call
        return
    CALLS["count"] += 1
    doc = target.doc.lower()
    for a in _finite_leaves(result):
        nan_ok = re.search(r"\bnan\b", doc) is not None
        inf_ok = re.search(r"\binf\b", doc) is not None
        assert nan_ok or not np.any(np.isnan(a)), f"{target.label}{shown}: NaN in the result"
        assert inf_ok or not np.any(np.isinf(a)), f"{target.label}{shown}: inf in the result"


@pytest.mark.parametrize("target", MOTION_TARGETS, ids=[t.label for t in MOTION_TARGETS])
@settings(
    settings.get_profile(PROFILE),
    max_examples={"campaign-ci": 8, "campaign-long": 60}[PROFILE],
)
@given(data=st.data())
def test_extreme_input_of_the_motion_modules_gives_a_finite_result_or_a_named_error(
    scratch: None, tally: None, target: Target, data: st.DataObject
) -> None:
    values: dict[str, Any] = {}
    for p in target.params:
        known, value = _motion_value(target.label, p.name)
        if known:
            values[p.name] = value
        elif p.default is inspect.Parameter.empty:
            return  # an argument the tables do not know: the campaign above drives it
    for key in ("torque", "model"):
        if type(values.get(key)).__name__ == "TorqueModel" and data.draw(
            st.booleans(), label=f"extreme {key}"
        ):
            values[key] = data.draw(st.sampled_from(_motion_models()), label=key)
    floats = [k for k, v in values.items() if isinstance(v, float | np.ndarray | tuple)]
    if floats:
        moved = data.draw(st.sets(st.sampled_from(floats), min_size=1, max_size=2), label="moved")
        for k in moved:
            values[k] = _extreme(values[k], data, k)
    shown = dict(values)
    fn = target.fn if target.make_self is None else getattr(target.make_self(), target.fn.__name__)
    with tumble.memory_limit(MEMORY_LIMIT):
        _check_motion_outcome(target, lambda: fn(**values), shown)


def test_the_motion_campaign_covers_its_modules() -> None:
    labels = {t.label for t in MOTION_TARGETS}
    for must in (
        "tumble.exact.torque_free",
        "tumble.torques.reference",
        "tumble.interpolate.RotationSpline.__call__",
        "tumble.interpolate.RotationSpline.angular_acceleration",
        "tumble.trajectory.Trajectory.take",
        "tumble.diagnostics.energy",
    ):
        assert must in labels, must
