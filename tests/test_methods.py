"""The integrator registry: its records are what the methods do, and what the docs show.

Each claim of a record is checked against the method's behaviour, with independent oracles:
time symmetry by stepping forward and back, conservation over a run, exactness on
symmetric and spherical tops against :func:`tumble.exact.torque_free`.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from pathlib import Path

import numpy as np
import pytest

from tumble import InputError, engines, exact, methods, rigid, rotation
from tumble._kernels.rigid import table

DOCS = Path(__file__).resolve().parents[1] / "docs" / "integrators.md"

# A generic state: asymmetric body, omega far from every principal axis.
Q0 = rotation.rotvec_to_quat([0.3, -0.2, 0.5])
OMEGA0 = np.array([0.7, -1.1, 0.4])
J_ASYM = np.array([0.5, 1.0, 1.5])
DT = 0.1
TAU = np.array([0.05, -0.02, 0.01])
# Round-off over a few steps of float64 arithmetic on O(1) quantities.
ROUND_OFF = 1e-13
# Far above round-off: what a real error of a first- or second-order step at DT is.
REAL_ERROR = 1e-9


def test_names_orders_and_kernels_come_from_the_registry():
    assert rigid.METHODS == tuple(m.name for m in methods.REGISTRY)
    assert rigid.ORDERS == {m.name: m.order for m in methods.REGISTRY}
    names = [m.kernel for m in methods.REGISTRY if m.kernel is not None]
    assert len(set(names)) == len(names)
    assert [m.name for m in methods.REGISTRY if m.kernel is None] == ["exact"]
    for name in rigid.METHODS:
        info = rigid.method_info(name)
        assert info is methods.method_info(name)
        assert info.name == name
        assert info.description
        assert len(info.description) <= 100


def test_every_record_names_a_kernel_of_its_form_and_every_kernel_is_used():
    """The registry (data) and the kernel table (compiled code) agree: a time-symmetric
    record names a Strang flow, a record with torque at the stages a staged kernel, the
    others a held step; ``exact`` runs ``exact_split``'s exact flow."""
    forms = {"held": ("held",), "stages": ("staged",), "strang": ("flow", "split")}
    for info in methods.REGISTRY:
        if info.kernel is None:
            continue
        kernel = table.kernel(info.kernel)
        assert kernel.form in forms[info.torque], info.name
        assert kernel.symmetric == info.symmetric, info.name
        assert kernel.exact == (info.exact_for == "all"), info.name
    used = {m.kernel for m in methods.REGISTRY}
    assert set(table.names()) == used - {None}


def test_method_info_rejects_unknown_names():
    with pytest.raises(InputError, match=r"^name: expected one of .*got 'rk5'"):
        rigid.method_info("rk5")
    with pytest.raises(InputError, match=r"^name: "):
        rigid.method_info(3)  # type: ignore[arg-type]


def test_an_unknown_kernel_name_cannot_reach_a_loop():
    """A method reaches the compiled loops only as a tag of a registered kernel."""
    with pytest.raises(ValueError, match="no kernel is registered as 'rk5'"):
        table.Tag("rk5", composed=False)


def test_every_method_runs_and_no_two_give_the_same_step():
    """tumble's own methods are distinct. The engines' replicas are not, by design: several
    engines share an update (``tests/test_engines.py`` shows which)."""
    own = [m for m in rigid.METHODS if m not in engines.ENGINES]
    steps = {m: rigid.step(Q0, OMEGA0, J_ASYM, DT, m) for m in own}
    for (a, (qa, wa)), (b, (qb, wb)) in itertools.combinations(steps.items(), 2):
        gap = max(float(rotation.rotation_angle(qa, qb)), float(np.max(np.abs(wa - wb))))
        if rigid.method_info(a).exact_for == rigid.method_info(b).exact_for == "all":
            # exact and exact_split: the same exact motion without torque, by design.
            assert gap < ROUND_OFF, f"{a} and {b} should agree without torque"
        else:
            assert gap > REAL_ERROR, f"{a} and {b} take the same step"


def test_the_docs_table_is_the_registry_rendered():
    text = DOCS.read_text()
    m = re.search(
        r"<!-- registry table:[^\n]*-->\n(.*?)\n<!-- end of registry table -->", text, re.S
    )
    assert m is not None, "docs/integrators.md lost its registry table markers"
    assert m.group(1) == methods.render_table()


def test_every_method_has_its_paragraph_in_the_docs():
    section = DOCS.read_text().split("### Each method", 1)[1]
    documented = re.findall(r"^- `(\w+)`", section, re.M)
    # The engines' replicas have theirs in docs/engines.md (tests/test_engines.py).
    assert documented == [m for m in rigid.METHODS if m not in engines.ENGINES]


@pytest.mark.parametrize("info", methods.REGISTRY, ids=lambda m: m.name)
def test_time_symmetry_is_as_recorded(info):
    """A symmetric step run back with ``-dt`` returns to the start, to round-off.

    With a constant world torque where the method takes one: the torque-free ``none``
    step is a rotation about a fixed ``omega`` and trivially reversible, but its torque
    kick is not.
    """
    tau = None if info.torque == "none" else TAU
    q1, w1 = rigid.step(Q0, OMEGA0, J_ASYM, DT, info.name, torque=tau)
    q2, w2 = rigid.step(q1, w1, J_ASYM, -DT, info.name, torque=tau)
    gap = max(float(rotation.rotation_angle(q2, Q0)), float(np.max(np.abs(w2 - OMEGA0))))
    if info.symmetric:
        assert gap < ROUND_OFF
    else:
        assert gap > REAL_ERROR


@pytest.mark.parametrize("info", methods.REGISTRY, ids=lambda m: m.name)
def test_conservation_is_as_recorded(info):
    """``"exact"`` in a record means kept to round-off over a run; anything else moves."""
    tr = rigid.simulate(Q0, OMEGA0, J_ASYM, DT, 50, info.name, on_divergence="ignore")
    measured = {
        "L_norm": np.abs(np.linalg.norm(tr.L, axis=-1) / np.linalg.norm(tr.L[0]) - 1),
        "L_world": np.linalg.norm(tr.L - tr.L[0], axis=-1) / np.linalg.norm(tr.L[0]),
        "energy": np.abs(tr.energy / tr.energy[0] - 1),
    }
    for field, change in measured.items():
        worst = float(np.nanmax(change))
        if getattr(info, field) == "exact":
            assert worst < ROUND_OFF, f"{info.name} should keep {field}"
        else:
            assert worst > REAL_ERROR, f"{info.name} keeps {field}: record it as exact"


def _exact_on(J):
    q, w = exact.torque_free(Q0, OMEGA0, J, [10 * DT])
    return q[0], w[0]


@pytest.mark.parametrize("info", methods.REGISTRY, ids=lambda m: m.name)
def test_what_each_method_is_exact_for_is_as_recorded(info):
    """Ten large steps on a symmetric and on a spherical top, against the closed form."""
    cases = {"symmetric": np.array([0.5, 0.5, 1.5]), "spherical": np.array([0.8, 0.8, 0.8])}
    for body, J in cases.items():
        tr = rigid.simulate(Q0, OMEGA0, J, DT, 10, info.name, on_divergence="ignore")
        q_ref, w_ref = _exact_on(J)
        attitude = float(rotation.rotation_angle(tr.q[-1], q_ref))
        L_ref = rigid.angular_momentum(q_ref, w_ref, J)
        Lb_ref = rotation.quat_rotate(rotation.quat_conjugate(q_ref), L_ref)
        body_gap = float(np.max(np.abs(tr.L_body[-1] - Lb_ref)))
        claims_attitude = info.exact_for in ("all", "symmetric") or (
            info.exact_for == "spherical" and body == "spherical"
        )
        if claims_attitude:
            assert attitude < 1e-12, f"{info.name} attitude on the {body} top"
            assert body_gap < 1e-12, f"{info.name} body L on the {body} top"
        elif info.exact_for == "body" and body == "symmetric":
            assert body_gap < 1e-12 < attitude
        elif body == "symmetric":
            assert max(attitude, body_gap) > REAL_ERROR, f"{info.name} exact on {body} top"
    if math.isinf(info.order):
        assert info.exact_for == "all"
    elif info.exact_for == "all":
        # exact_split: exact without torque; its order is the one under torque (Strang).
        assert info.torque == "strang"


@pytest.mark.parametrize("info", methods.REGISTRY, ids=lambda m: m.name)
def test_torque_and_locked_axes_are_as_recorded(info):
    if info.torque == "none":
        with pytest.raises(InputError, match=r"^torque: "):
            rigid.step(Q0, OMEGA0, J_ASYM, DT, info.name, torque=TAU)
    else:
        free = rigid.step(Q0, OMEGA0, J_ASYM, DT, info.name, torque=np.zeros(3))
        pushed = rigid.step(Q0, OMEGA0, J_ASYM, DT, info.name, torque=TAU)
        assert np.max(np.abs(pushed[1] - free[1])) > REAL_ERROR
    locked = np.array([0.0, 1.0, 1.5])
    if info.locked_axes:
        q1, w1 = rigid.step(Q0, OMEGA0, locked, DT, info.name)
        assert np.all(np.isfinite(q1))
        assert np.all(np.isfinite(w1))
    else:
        with pytest.raises(InputError, match=r"^inv_inertia: "):
            rigid.step(Q0, OMEGA0, locked, DT, info.name)


@pytest.mark.parametrize(
    ("field", "bad"),
    [
        ("name", None),
        ("kernel", "1"),
        ("kernel", True),
        ("order", -1.0),
        ("order", math.nan),
        ("order", "2"),
        ("exact_for", "sometimes"),
        ("symmetric", 1),
        ("torque", None),
        ("locked_axes", "yes"),
        ("cost", 3),
        ("description", "two\nlines"),
        ("substeps", [0.5, 0.5]),
        ("substeps", (math.inf,)),
    ],
)
def test_regression_method_info_names_a_bad_field(field, bad):
    # issue 18: a hand-built MethodInfo accepted anything but two columns.
    good = dataclasses.asdict(rigid.method_info("splitting:suzuki4"))
    with pytest.raises(InputError, match=rf"^{field}: expected"):
        methods.MethodInfo(**{**good, field: bad})
    assert methods.MethodInfo(**good) == rigid.method_info("splitting:suzuki4")


@pytest.mark.parametrize("name", [[], ["splitting:suzuki4"], {"a": 1}, None, 3])
def test_regression_composed_of_an_unhashable_name_is_an_input_error(name):
    # issue 18 campaign: the cache of composed() hashed the name first (TypeError).
    with pytest.raises(InputError, match=r"^name: expected '<base>:<scheme>'"):
        methods.composed(name)


@pytest.mark.parametrize("argument", ["", None, 3])
def test_regression_check_needs_a_name_to_report_under(argument):
    # issue 18 campaign: check(x, "") raised an InputError that named nothing (": ...").
    with pytest.raises(InputError, match=r"^argument: expected the name"):
        methods.check("rk4", argument)
