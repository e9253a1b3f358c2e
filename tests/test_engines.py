"""The engines' replicas (``tumble.engines``): each step against a step worked by hand from
the engine's formulas (``tests/engine_formulas.py``), each order against the exact solution,
and the records against what the docs cite.

The registry's claims of every replica (what it conserves, what it is exact for, time
symmetry, torque) are checked with every other method's in ``tests/test_methods.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from engine_formulas import STEPS
from tumble import InputError, engines, exact, methods, rigid, rotation

DOCS = Path(__file__).resolve().parents[1] / "docs" / "engines.md"
NAMES = list(engines.ENGINES)


def _states(seed: int, count: int, speed: float):
    gen = np.random.default_rng(seed)
    for _ in range(count):
        q = gen.standard_normal(4)
        w = gen.standard_normal(3)
        J = 1.0 / gen.uniform(0.3, 3.0, 3)
        tau = 0.5 * gen.standard_normal(3)
        yield q / np.linalg.norm(q), speed * w / np.linalg.norm(w), J, tau


def _gap(a, b):
    (qa, wa), (qb, wb) = a, b
    return float(rotation.rotation_angle(qa, qb)), float(np.max(np.abs(wa - wb)))


@pytest.mark.parametrize("name", NAMES)
def test_each_replica_takes_the_hand_worked_step(name: str) -> None:
    """Five random states with a torque, at 60 Hz and at speeds where Bullet's ``π/4`` cap
    and Rapier's clamp act (40 rad/s: ``|ω| h = 0.67``, above ``π/4`` at 30 Hz); every
    step agrees with the NumPy step to round-off."""
    for h, speed in ((1 / 60, 3.0), (1 / 30, 40.0)):
        for q, w, J, tau in _states(7, 5, speed):
            got = rigid.step(q, w, J, h, name, torque=tau)
            want = STEPS[name](q, w, J, tau, h)
            attitude, omega = _gap(got, want)
            assert attitude < 1e-13 * max(1.0, speed), (name, h, attitude)
            assert omega < 3e-14 * speed * max(1.0, speed * h), (name, h, omega)


def test_the_thresholds_of_tiny_rotations_are_the_engines() -> None:
    """Below Jolt's ``|ω h| <= 1e-6`` and Godot's ``|ω| < 1e-5`` the attitude does not move
    at all; the others turn."""
    q = rotation.rotvec_to_quat([0.2, -0.1, 0.4])
    J = np.array([1.0, 0.5, 0.25])
    w = np.array([3e-6, 0.0, 4e-6])  # |ω| = 5e-6, |ω h| = 8e-8 at 60 Hz
    for name, frozen in (("jolt_gyroscopic", True), ("godot", True), ("physx_gyroscopic", False)):
        q1, _ = rigid.step(q, w, J, 1 / 60, name, torque=np.zeros(3))
        turned = float(rotation.rotation_angle(q1, q))
        assert turned == pytest.approx(0.0 if frozen else 5e-6 / 60, abs=1e-15), name
        np.testing.assert_allclose(q1, STEPS[name](q, w, J, np.zeros(3), 1 / 60)[0], atol=1e-15)


def test_jolt_and_physx_share_a_step_and_bullets_two_frames_are_one_map() -> None:
    """Jolt and PhysX take the same ``L' = L - h ω × L`` rescaled to ``|L|`` (Avian and
    Rapier take it per sub-step, checked by their hand-worked steps), in another order with
    the torque; Bullet's world and body Newton steps are one map (rotation covariance)."""
    zero = np.zeros(3)
    for q, w, J, tau in _states(11, 5, 2.0):
        jolt = rigid.step(q, w, J, 0.02, "jolt_gyroscopic", torque=zero)
        assert max(_gap(jolt, rigid.step(q, w, J, 0.02, "physx_gyroscopic", torque=zero))) < 1e-15
        # With a torque the order differs: Jolt runs the gyroscopic step before it, PhysX after.
        pushed = _gap(
            rigid.step(q, w, J, 0.02, "jolt_gyroscopic", torque=tau),
            rigid.step(q, w, J, 0.02, "physx_gyroscopic", torque=tau),
        )
        assert max(pushed) > 1e-7
        world = rigid.step(q, w, J, 0.02, "bullet_implicit_world", torque=tau)
        body = rigid.step(q, w, J, 0.02, "bullet_implicit_body", torque=tau)
        assert max(_gap(world, body)) < 1e-14


def _attitude_errors(name: str, dts) -> np.ndarray:
    q0 = rotation.rotvec_to_quat([0.3, -0.2, 0.5])
    w0 = np.array([0.7, -1.1, 0.4])
    J = np.array([0.5, 1.0, 1.5])
    q_ref, _ = exact.torque_free(q0, w0, J, [1.0])
    out = []
    for h in dts:
        tr = rigid.simulate(q0, w0, J, h, round(1.0 / h), name, every=10**9)
        out.append(float(rotation.rotation_angle(tr.q[-1], q_ref[0])))
    return np.array(out)


@pytest.mark.parametrize("name", NAMES)
def test_each_replica_has_its_recorded_order(name: str) -> None:
    """The attitude error at ``t = 1`` against the exact solution falls as ``dt^order``; a
    replica of order 0 (no gyroscopic term, or Bepu's reversed Newton step) does not
    converge to the rigid body's motion at all."""
    order = engines.ENGINES[name].order
    # Steps where the finest error stays far above round-off (1e-10 at order 4).
    dts = (0.1, 0.05, 0.025) if order == 4 else (0.01, 0.005, 0.0025)
    e = _attitude_errors(name, dts)
    slopes = np.log2(e[:-1] / e[1:])
    if order == 0:
        assert np.all(e > 0.05), e
        assert np.all(np.abs(slopes) < 0.05), slopes
    else:
        assert np.all(np.abs(slopes - order) < 0.1), (e, slopes)


@pytest.mark.parametrize("name", NAMES)
def test_what_grows_and_what_decays_is_as_recorded(name: str) -> None:
    """The registry's ``grows`` / ``decays`` for ``|L|`` and energy, as signs over a run of a
    tumbling body (``tests/test_methods.py`` checks ``exact``)."""
    info = methods.method_info(name)
    tr = rigid.simulate(
        rotation.rotvec_to_quat([0.3, -0.2, 0.5]), np.array([0.7, -1.1, 0.4]),
        np.array([0.5, 1.0, 1.5]), 0.05, 200, name,
    )  # fmt: skip
    change = {
        "L_norm": np.linalg.norm(tr.L[-1]) / np.linalg.norm(tr.L[0]) - 1,
        "energy": tr.energy[-1] / tr.energy[0] - 1,
    }
    for field, value in change.items():
        claim = getattr(info, field)
        if claim.startswith("grows"):
            assert value > 1e-4, (field, value)
        elif claim.startswith("decays"):
            assert value < -1e-4, (field, value)


def test_replicas_take_no_locked_axis() -> None:
    for name in ("jolt_gyroscopic", "mujoco_rk4"):
        with pytest.raises(InputError, match=r"^inv_inertia: "):
            rigid.step(np.array([1.0, 0, 0, 0]), np.ones(3), np.array([1.0, 1.0, 0.0]), 0.1, name)


def test_records_are_complete_and_point_at_real_methods() -> None:
    assert list(engines.ENGINES) == [m for m in rigid.METHODS if m in engines.ENGINES]
    assert [n for names in engines.BY_ENGINE.values() for n in names] == NAMES
    for name, r in engines.ENGINES.items():
        assert r.name == name
        assert name.startswith(r.engine.split()[0].lower()), name
        assert re.fullmatch(r"[0-9a-f]{40}", r.commit), name
        assert r.sources, name
        assert all(": " in s for s in r.sources), name
        for field in ("variant", "version", "omega", "attitude", "inertia", "options", "fix"):
            assert getattr(r, field).strip(), (name, field)
        assert rigid.check_method(r.fix_method, "fix_method").base not in engines.ENGINES
        assert methods.method_info(name).torque == ("stages" if name == "mujoco_rk4" else "held")
    # Each engine has one default setting.
    for engine, names in engines.BY_ENGINE.items():
        assert sum(engines.ENGINES[n].default for n in names) == 1, engine


def test_the_docs_hold_the_records_rendered() -> None:
    text = DOCS.read_text()
    m = re.search(r"<!-- engine records:[^\n]*-->\n(.*?)<!-- end of engine records -->", text, re.S)
    assert m is not None, "docs/engines.md lost its engine records markers"
    assert m.group(1) == engines.render_records()


def test_the_docs_cite_every_source_and_commit() -> None:
    text = DOCS.read_text()
    for name, r in engines.ENGINES.items():
        assert f"`{name}`" in text, name
        assert r.commit in text, name
        for source in r.sources:
            path = source.split(": ", 1)[0]
            assert path in text, (name, path)


def test_bepu_gyroscopic_mode_turns_world_momentum_the_wrong_way() -> None:
    """The first-order change of body ``ω`` in Bepu's gyroscopic mode as its code reads is
    ``+h J (ω × I ω)``, Euler's equation reversed: with the pose update's own ``h ω × L``,
    one step moves world ``L`` by ``2 h ω × L``, where a consistent step moves it by
    ``O(h²)``."""
    q = rotation.rotvec_to_quat([0.1, 0.2, 0.3])
    w = np.array([0.7, -1.1, 0.4])
    J = np.array([0.5, 1.0, 1.5])
    L0 = rigid.angular_momentum(q, w, J)
    for h in (1e-3, 5e-4):
        q1, w1 = rigid.step(q, w, J, h, "bepu_conserve_momentum_gyroscopic")
        dL = rigid.angular_momentum(q1, w1, J) - L0
        body = 1.0 / J * rotation.quat_rotate(rotation.quat_conjugate(q), w)
        expected = 2 * h * rotation.quat_rotate(q, np.cross(J * body, body))
        np.testing.assert_allclose(dL, expected, rtol=20 * h)
