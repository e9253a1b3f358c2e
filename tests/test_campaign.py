"""The bad-input campaign: every public callable driven with bad and extreme arguments.

The callables are found, not listed: every name in the ``__all__`` of every public module
of ``tumble`` (so a function another branch adds is covered as soon as it is exported),
classes through their constructor and the public methods of one valid instance
(``tests/campaign.py`` finds them and holds the tables of values). Three rules:

**Bad input.** Each call takes valid values for most arguments (a table by parameter name,
``VALID``) and bad ones for some (Hypothesis draws which and what: wrong shapes and dtypes,
NaN and infinities, 1e308 and subnormals, huge and negative integers, ragged lists, None,
wrong types). Three outcomes pass (``docs/limitations.md``, "Two rules for bad input"):

1. a result;
2. :class:`tumble.InputError` whose message starts with the name of an argument of the
   call (for a method, also a field of its object: ``scale: ...`` from
   ``Transform.inverse``; for a check done on a caller's behalf, the name it was given as
   ``argument``: ``methods.check(name, argument="method")`` reports ``method: ...``);
3. an exception whose type the callable's docstring (or its module's) names
   (``IndexError`` of ``Cursor.advance``, ``ArgumentTypeError`` of the command-line
   argument types...).

**Extreme input** (issue 27). Every callable whose valid arguments the tables know is called
with one or two of its float arguments moved to an extreme: subnormal, tiny, huge, phases
near and past the documented bounds (``exact.MAX_PHASE``, ``torques.MAX_REFERENCE_PHASE``,
a spline's ``EXTRAPOLATION_LIMIT``, ``parameters.MAX_ROTATIONS``), far outside a spline's
knots, or an empty batch; torque models at extremes too. The same outcomes pass, and
besides: no warning but tumble's own, and no NaN or infinity in a result unless the
callable's docstring names them.

**Binary rotation operations** (issue 27, ``tests/campaign_binary.py``). Every operation of
two or more operands is called with one or two of them at the edge of the float range
(float64 and float32) and must give the result of the same operation on moderate operands,
scaled back, or an InputError naming a moved operand.

Under every rule, no call may run longer than ``SLOW_CALL_SECONDS`` (10 s) outside numba's
compiler. Anything else fails, with Hypothesis' smallest example. Profiles:
``campaign-ci`` (the default, a few calls per callable, deterministic, about a minute after
numba's cache is warm) and ``campaign-long`` (``TUMBLE_CAMPAIGN=long``, 60 calls per
callable and rule, over 20 000 in all: ``./dev campaign``), whose last test prints the
figures. Calls run with a 64 MiB memory limit in a scratch working directory, so that
nothing allocates much or writes outside it.
"""

from __future__ import annotations

import inspect
import os
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tumble
from campaign import (
    EXCLUDED,
    EXTREME_TARGETS,
    MEMORY_LIMIT,
    MIN_CALLS,
    PROFILE,
    TALLY,
    TARGETS,
    Target,
    check_extreme_outcome,
    check_outcome,
    dual_terms,
    extreme,
    extreme_models,
    extreme_value_of,
    finite_leaves,
    named,
    resolve,
    value_for,
)
from campaign_binary import BINARY, draw_and_check, listed_operations

#: Calls per callable of the second and third rules, by profile.
EXAMPLES = {"campaign-ci": 8, "campaign-long": 60}


@pytest.fixture
def tally() -> Iterator[None]:
    """Print the running number of calls after each callable (visible with ``-s``)."""
    yield
    print(f" [{TALLY.calls} calls]", end="", flush=True)


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


# ======================================================================================
# bad input


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
        use, value = value_for(p, data, p.name in corrupt)
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
        check_outcome(target, lambda: fn(*args, **kwargs), shown)


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
        return np.sum(dual_terms(v), axis=-1)

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


# ======================================================================================
# extreme input


@pytest.mark.parametrize("target", EXTREME_TARGETS, ids=[t.label for t in EXTREME_TARGETS])
@settings(settings.get_profile(PROFILE), max_examples=EXAMPLES[PROFILE])
@given(data=st.data())
def test_extreme_input_gives_a_finite_result_or_a_named_error(
    scratch: None, tally: None, target: Target, data: st.DataObject
) -> None:
    values = {}
    for p in target.params:
        known, value = extreme_value_of(target.label, p.name)
        if known:  # the others have defaults (EXTREME_TARGETS holds no other callables)
            values[p.name] = value
    for key in ("torque", "model"):
        if type(values.get(key)).__name__ == "TorqueModel" and data.draw(
            st.booleans(), label=f"extreme {key}"
        ):
            values[key] = data.draw(st.sampled_from(extreme_models()), label=key)
    floats = [k for k, v in values.items() if isinstance(v, float | np.ndarray | tuple)]
    if floats:
        moved = data.draw(st.sets(st.sampled_from(floats), min_size=1, max_size=2), label="moved")
        for k in moved:
            values[k] = extreme(values[k], data, k)
    shown = dict(values)
    fn = target.fn if target.make_self is None else getattr(target.make_self(), target.fn.__name__)
    with tumble.memory_limit(MEMORY_LIMIT):
        check_extreme_outcome(target, lambda: fn(**values), shown)


def test_the_extreme_rule_covers_every_module_with_float_arguments() -> None:
    labels = {t.label for t in EXTREME_TARGETS}
    for must in (
        "tumble.exact.torque_free",
        "tumble.torques.reference",
        "tumble.interpolate.RotationSpline.__call__",
        "tumble.interpolate.RotationSpline.angular_acceleration",
        "tumble.diagnostics.energy",
        "tumble.rotation.quat_to_matrix",
        "tumble.rotation.so3_left_jacobian",
        "tumble.rigid.simulate",
        "tumble.kinematics.rotate",
        "tumble.transform.Transform",
        "tumble.hierarchy.Hierarchy.step",
        "tumble.scenarios.article_case",
        "tumble.dual.hessian",
    ):
        assert must in labels, must
    assert len(EXTREME_TARGETS) >= 100, len(EXTREME_TARGETS)


def _regression_calls() -> list[tuple[str, dict[str, Any]]]:
    t = np.linspace(0.0, 1.5, 4)
    q = np.tile([0.92338052, 0.10259784, -0.30779351, 0.20519567], (4, 1))
    omega = np.tile([0.3, -1.0, 0.4], (4, 1))
    omega[1, 0] = 1e200
    J = np.array([1.0, 0.6, 0.35])
    return [
        ("tumble.diagnostics.summary", {"trajectory": (t, q, omega), "inv_inertia": J}),
        ("tumble.diagnostics.max_energy_error", {"trajectory": (t, q, omega), "inv_inertia": J}),
        ("tumble.sweep.build_grid", {"methods": ["rk4"], "energy": 0.0, "inv_inertia": J}),
        (
            "tumble.rigid.simulate",
            {
                "q": [1.0, 0.0, 0.0, 0.0],
                "omega": [0.1, 2.0, 3.0],
                "inv_inertia": [1.0, 0.5, 0.2],
                "dt": 0.5,
                "steps": 4000,
                "method": "explicit",
                "every": 10,
            },
        ),
    ]


@pytest.mark.parametrize(
    ("label", "kwargs"), _regression_calls(), ids=[label for label, _ in _regression_calls()]
)
def test_regression_nan_and_inf_by_design_are_documented(label: str, kwargs: Any) -> None:
    """The long campaign (issue 27) found NaN or inf in results whose docstrings did not
    name them, though they are by design: ``summary``'s and ``max_energy_error``'s inf for
    a ratio beyond the float range (as :func:`tumble.diagnostics.score` gives it),
    ``build_grid``'s nan ``min_j`` of explicit bodies (as ``SweepCase`` says),
    ``simulate``'s inf records after a divergence (its docstring said "infinite"). The
    docstrings name them now."""
    target = next(t for t in EXTREME_TARGETS if t.label == label)
    result, error = check_extreme_outcome(target, lambda: target.fn(**kwargs), kwargs)
    assert error is None
    leaves = [a for a in finite_leaves(result) if not np.all(np.isfinite(a))]
    assert leaves, "the example must produce the documented NaN or inf"


def _reproductions() -> dict[str, tuple[Any, str | None]]:
    """Issue 27's reproductions, as written there: each call and the argument its
    InputError must name (None: a finite result)."""
    from tumble import diagnostics, dual, exact, interpolate, rigid, rotation, torques

    one, J = [1.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0]
    gravity = torques.gravity(1.0, [0, 0, -9.81], [0, 0, 0.1])
    spline = interpolate.RotationSpline(np.arange(5.0), rotation.random_quat(5, 2))
    t, q = np.arange(3.0), np.tile(one, (3, 1))
    trajectory = rigid.Trajectory(
        t=t, q=q, omega=np.ones((3, 3)), L=np.ones((3, 3)), L_body=np.ones((3, 3)),
        energy=np.ones(3),
    )  # fmt: skip
    q1 = rotation.rotvec_to_quat([1.0, 1.0, 1.0])
    obj = np.array(one, dtype=object)

    def third(f: Any, x: float) -> Any:
        d = dual.derivative
        return d(lambda a: d(lambda b: d(f, b), a), x)

    return {
        "1 exact at t = 1e20": (lambda: exact.torque_free(one, [0.3, 2.0, 0.3], J, [1e20]), None),
        "1 exact at omega = 1e20": (lambda: exact.torque_free(one, [1e20] * 3, J, [0.5]), None),
        "2 subnormal momentum": (
            lambda: exact.torque_free_from_momentum(one, [1e-310] * 3, J, [0.5]),
            None,
        ),
        "2 subnormal omega": (lambda: exact.torque_free(one, [1e-310] * 3, J, [0.5]), None),
        "3 spline at 1e154": (lambda: spline(1e154), "t"),
        "3 spline rate at 1e154": (lambda: spline.angular_velocity(1e154), "t"),
        "3 spline acceleration at 1e154": (lambda: spline.angular_acceleration(1e154), "t"),
        "4 product of 1e308": (lambda: rotation.quat_multiply([1e308] * 4, [1e308] * 4), "p"),
        "4 energy of 1e200": (
            lambda: diagnostics.energy((t, q, np.full((3, 3), 1e200)), J),
            "trajectory",
        ),
        "5 angle of q to itself": (lambda: rotation.rotation_angle(q1, q1), None),
        "6 nested tanh at 1e-20": (
            lambda: dual.derivative(lambda x: dual.derivative(np.tanh, x), 1e-20),
            None,
        ),
        # Second and third derivatives (of arctan2(x, 1) = atan x and hypot(x, 1)).
        "6 arctan2 at 1e-200": (lambda: third(lambda c: np.arctan2(c, 1.0), 1e-200), None),
        "6 hypot at 1e-200": (lambda: dual.hessian(lambda c: np.hypot(c, 1.0), 1e-200), None),
        # Where the exact derivatives are not floats (about 1e399): named, not ±inf or NaN.
        "6 arctan2 Hessian at (1e-200, 3e-200)": (
            lambda: dual.hessian(lambda v: np.arctan2(v[0], v[1]), np.array([1e-200, 3e-200])),
            "x",
        ),
        "6 hypot third derivative at (1e-200, 3e-200)": (
            lambda: dual.jacobian(
                lambda u: dual.hessian(lambda v: np.hypot(v[0], v[1]), u),
                np.array([1e-200, 3e-200]),
            ),
            "x",
        ),
        "7 reference at omega = 1e20": (
            lambda: torques.reference(one, [1e20, 0, 0], J, gravity, [0.0, 1.0]),
            "omega",
        ),
        "8 squad's a0": (lambda: interpolate.squad(one, one, [0.0] * 4, one, 0.5), "a0"),
        "8 squad's a1": (lambda: interpolate.squad(one, one, one, [np.nan] * 4, 0.5), "a1"),
        "9 spline knots 1e-300 apart": (
            lambda: interpolate.RotationSpline(np.arange(5.0) * 1e-300, rotation.random_quat(5, 2)),
            None,
        ),
        "9 evaluate of no bodies": (
            lambda: torques.evaluate(gravity, 0.0, np.zeros((0, 4)), np.zeros((0, 3)), J),
            None,
        ),
        "9 reference of no bodies": (
            lambda: torques.reference(np.zeros((0, 4)), np.zeros((0, 3)), J, gravity, [0, 1]),
            None,
        ),
        "9 reference of a subnormal inverse moment": (
            lambda: torques.reference(one, [0.3, 1.0, 1.0], [5e-324, 1.0, 1.0], gravity, [0, 1]),
            "omega",
        ),
        "9 power 10**400": (lambda: rotation.quat_power(one, 10**400), "s"),
        "9 take a zero step": (lambda: trajectory.take(slice(None, None, 0)), "records"),
        "9 take body 2**63": (lambda: trajectory.take(slice(None), 2**63), "bodies"),
        "9 evaluate of an object array": (
            lambda: torques.evaluate(gravity, 0.0, obj, [0.0, 0.0, 1.0], J),
            "q",
        ),
        "10 reference at omega = 1e308": (
            lambda: torques.reference(one, [1e308, 0, 0], J, gravity, [0, 1]),
            "omega",
        ),
        "10 align with weights 1e308": (
            lambda: rotation.align_vectors(np.eye(3), np.eye(3)[::-1], np.full(3, 1e308)),
            "weights",
        ),
        "11 float32 momentum": (
            lambda: exact.torque_free_from_momentum(
                np.array(one, np.float32), np.ones(3, np.float32), np.ones(3, np.float32), [0.5]
            ),
            None,
        ),
    }


@pytest.mark.parametrize("case", sorted(_reproductions()))
def test_the_reproductions_of_issue_27_give_a_finite_result_or_name_the_argument(
    case: str,
) -> None:
    """Each reproduction of the issue, verbatim: a finite result, or an InputError whose
    message starts with the argument at fault; no NumPy warning either way. The values
    are checked against oracles in the modules' own regression tests (the report of issue
    27 maps each item to them); here only that the outcome is the right kind."""
    call, culprit = _reproductions()[case]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if culprit is None:
            result = call()
        else:
            with pytest.raises(tumble.InputError) as info:
                call()
            assert culprit in named(str(info.value)), str(info.value)
    assert not caught, [str(w.message) for w in caught]
    if culprit is None:
        for leaf in finite_leaves(result):
            assert np.all(np.isfinite(leaf)), case
        if case.startswith("5"):
            assert result == 0.0
        # The second derivative of tanh at x is -2x (1 - tanh² x) sech² x; the third of
        # atan at 0 is -2; the second of hypot(x, 1) is (1 + x²)^(-3/2).
        expected = {"6 nested": -2e-20, "6 arctan2": -2.0, "6 hypot": 1.0}
        for key, value in expected.items():
            if case.startswith(key):
                assert result == pytest.approx(value, rel=1e-15)
        if case.startswith("11"):
            assert all(a.dtype == np.float32 for a in result)


# ======================================================================================
# binary rotation operations


@pytest.mark.parametrize("op", BINARY, ids=[op.label for op in BINARY])
@settings(settings.get_profile(PROFILE), max_examples=EXAMPLES[PROFILE])
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_overflow_in_binary_rotation_operations_gives_the_scaled_result_or_names_the_operand(
    scratch: None, tally: None, op: Any, data: st.DataObject, seed: int
) -> None:
    with tumble.memory_limit(MEMORY_LIMIT):
        draw_and_check(op, data, seed)


def test_every_binary_rotation_operation_is_listed() -> None:
    from tumble import interpolate, rotation

    def array_operand(p: inspect.Parameter) -> bool:
        return "ArrayLike" in str(p.annotation)

    found = listed_operations(rotation, array_operand)
    found |= {"tumble.interpolate.slerp", "tumble.interpolate.squad"}
    assert {op.label for op in BINARY} == found
    assert all(callable(resolve(label)) for label in found)
    assert interpolate.slerp is resolve("tumble.interpolate.slerp")


# ======================================================================================
# the figures (last: it reads what the tests above did)


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
        assert callable(resolve(label)), label
    if TALLY.calls:  # the campaign ran in this session (not deselected)
        assert TALLY.calls >= MIN_CALLS[PROFILE], TALLY.calls
    print(
        f"\ncampaign profile {PROFILE}: {len(TARGETS)} callables ({len(EXTREME_TARGETS)} "
        f"with extreme input, {len(BINARY)} binary rotation operations); {TALLY.report()}"
    )
