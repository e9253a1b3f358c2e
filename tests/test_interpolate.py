"""tumble.interpolate: slerp, squad and RotationSpline.

Oracles: SciPy's ``Slerp`` and ``RotationSpline`` (the latter iterated to round-off, see
``ConvergedSpline``), finite differences of tumble's own attitudes and rates, and the exact
torque-free motion of ``tumble.exact`` for the convergence order.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import RotationSpline as ScipySpline
from scipy.spatial.transform import Slerp
from tests.oracles import cover_distance, quiet
from tests.oracles import scipy_quat as from_sp
from tests.oracles import scipy_rotation as to_sp

import tumble.rotation as tr
from tumble import InputError, exact
from tumble.interpolate import RotationSpline, slerp, squad, squad_controls

EPS64 = float(np.finfo(np.float64).eps)
#: The issue's bar for agreement with SciPy (float64, random inputs).
SCIPY_TOL = 1e-12


class ConvergedSpline(ScipySpline):
    """SciPy's spline with its knot-rate iteration run to round-off.

    SciPy stops iterating at a relative change of 1e-9 (or after 10 steps), so its rates
    carry that error; the same algorithm run to convergence is the oracle for 1e-12.
    """

    MAX_ITER = 200
    TOL = 1e-16


# -- slerp -------------------------------------------------------------------------------


def test_slerp_matches_scipy(rng):
    keys = tr.random_quat(101, rng)
    s = rng.uniform(0, 1, 100)
    expected = from_sp(Slerp(np.arange(101.0), to_sp(keys))(np.arange(100) + s))
    assert np.max(cover_distance(slerp(keys[:-1], keys[1:], s), expected)) <= SCIPY_TOL


def test_slerp_is_exact_at_the_ends_and_takes_the_short_arc(rng):
    q0, q1 = tr.random_quat(50, rng), tr.random_quat(50, rng)
    assert np.array_equal(slerp(q0, q1, 0.0), tr.quat_normalize(q0))
    end = slerp(q0, q1, 1.0)
    assert np.all(np.abs(end) == np.abs(tr.quat_normalize(q1)))
    assert np.all(np.sum(end * q0, axis=-1) >= 0)
    # the path turns by s times the (short) angle between the ends
    s = 0.3
    mid = slerp(q0, q1, s)
    assert np.allclose(tr.rotation_angle(q0, mid), s * tr.rotation_angle(q0, q1), atol=1e-14)
    assert np.allclose(slerp(q0, -q1, s), mid, atol=1e-15)


def test_slerp_of_equal_and_opposite_inputs_is_finite(rng):
    q = tr.random_quat(20, rng)
    s = np.linspace(-1, 2, 20)
    for other in (q, -q, 3 * q):
        out = slerp(q, other, s)
        assert not np.isnan(out).any()
        assert np.max(cover_distance(out, q)) <= 4 * EPS64


def test_slerp_broadcasts_and_keeps_float32(rng):
    q0, q1 = tr.random_quat((), rng), tr.random_quat(7, rng)
    s = np.linspace(0, 1, 5)[:, None]
    assert slerp(q0, q1, s).shape == (5, 7, 4)
    out = slerp(q0.astype(np.float32), q1.astype(np.float32), np.float32(0.5))
    assert out.dtype == np.float32


def test_slerp_input_errors():
    one = [1.0, 0.0, 0.0, 0.0]
    with pytest.raises(InputError, match=r"^q0: expected nonzero"):
        slerp(np.zeros(4), one, 0.5)
    with pytest.raises(InputError, match=r"^q1: expected shape"):
        slerp(one, [1.0, 0.0, 0.0], 0.5)
    with pytest.raises(InputError, match=r"^s: expected finite"):
        slerp(one, one, np.nan)
    with pytest.raises(InputError, match=r"batch shapes do not broadcast"):
        slerp(np.ones((3, 4)), one, np.ones(2))


# -- squad -------------------------------------------------------------------------------


def test_squad_passes_through_the_keys(rng):
    keys = tr.random_quat(6, rng)
    a = squad_controls(keys)
    assert (
        np.max(cover_distance(squad(keys[:-1], keys[1:], a[:-1], a[1:], 0.0), keys[:-1]))
        <= 4 * EPS64
    )
    assert (
        np.max(cover_distance(squad(keys[:-1], keys[1:], a[:-1], a[1:], 1.0), keys[1:]))
        <= 4 * EPS64
    )


def test_squad_on_a_uniform_geodesic_is_slerp(rng):
    step = tr.rotvec_to_quat([0.2, -0.4, 0.3])
    keys = [tr.random_quat((), rng)]
    for _ in range(4):
        keys.append(tr.quat_multiply(step, keys[-1]))
    keys = np.array(keys)
    a = squad_controls(keys)
    assert np.max(cover_distance(a, keys)) <= 16 * EPS64
    s = np.linspace(0, 1, 9)[:, None]
    assert (
        np.max(cover_distance(squad(keys[1], keys[2], a[1], a[2], s), slerp(keys[1], keys[2], s)))
        <= 1e-14
    )


def test_squad_has_continuous_angular_velocity_at_the_keys(rng):
    keys = tr.rotvec_to_quat(np.cumsum(0.5 * rng.standard_normal((5, 3)), axis=0))
    a = squad_controls(keys)
    h = 1e-6

    def rate(k, s):  # world angular velocity of segment k at parameter s (central difference)
        qp = squad(keys[k], keys[k + 1], a[k], a[k + 1], s + h)
        qm = squad(keys[k], keys[k + 1], a[k], a[k + 1], s - h)
        return tr.quat_to_rotvec(tr.quat_multiply(qp, tr.quat_conjugate(qm))) / (2 * h)

    for k in range(1, 4):
        assert np.max(np.abs(rate(k - 1, 1.0) - rate(k, 0.0))) <= 1e-6


def test_squad_controls_needs_two_keys():
    with pytest.raises(InputError, match=r"^q: expected at least two keys"):
        squad_controls(np.array([[1.0, 0.0, 0.0, 0.0]]))


# -- RotationSpline ------------------------------------------------------------------------


def _samples(rng, n=9):
    times = np.cumsum(rng.uniform(0.5, 1.5, n))
    q = tr.rotvec_to_quat(np.cumsum(0.7 * rng.standard_normal((n, 3)), axis=0))
    return times, q


def _eval_times(rng, times):
    mids = 0.5 * (times[1:] + times[:-1])
    return np.concatenate([times, mids, rng.uniform(times[0], times[-1], 40)])


@pytest.mark.parametrize("n", [2, 3, 9, 30])
def test_spline_matches_scipy_at_and_between_knots(n, rng):
    times, q = _samples(rng, n)
    ours = RotationSpline(times, q)
    ref = ConvergedSpline(times, to_sp(q))
    t = _eval_times(rng, times)
    R = ref(t).as_matrix()
    assert np.max(cover_distance(ours(t), from_sp(ref(t)))) <= SCIPY_TOL
    # SciPy's rates are body-frame (R(t) = R_i exp(θ)); tumble's default is world.
    w_body, a_body = ref(t, 1), ref(t, 2)
    assert np.max(np.abs(ours.angular_velocity(t, frame="body") - w_body)) <= SCIPY_TOL
    assert np.max(np.abs(ours.angular_acceleration(t, frame="body") - a_body)) <= SCIPY_TOL
    assert (
        np.max(np.abs(ours.angular_velocity(t) - np.einsum("nij,nj->ni", R, w_body))) <= SCIPY_TOL
    )
    assert (
        np.max(np.abs(ours.angular_acceleration(t) - np.einsum("nij,nj->ni", R, a_body)))
        <= SCIPY_TOL
    )


def test_spline_interpolates_the_samples(rng):
    times, q = _samples(rng)
    assert np.max(cover_distance(RotationSpline(times, q)(times), q)) <= 8 * EPS64


def test_spline_rates_are_the_derivatives_of_its_attitudes(rng):
    # Independent of SciPy: central differences of tumble's own attitudes and rates.
    times, q = _samples(rng)
    sp = RotationSpline(times, q)
    t = 0.5 * (times[1:] + times[:-1]) + 0.1
    h = 1e-5
    dq = tr.quat_multiply(sp(t + h), tr.quat_conjugate(sp(t - h)))
    w_fd = tr.quat_to_rotvec(dq) / (2 * h)
    assert np.max(np.abs(w_fd - sp.angular_velocity(t))) <= 1e-8
    a_fd = (sp.angular_velocity(t + h) - sp.angular_velocity(t - h)) / (2 * h)
    assert np.max(np.abs(a_fd - sp.angular_acceleration(t))) <= 1e-7
    body = np.einsum("nji,nj->ni", tr.quat_to_matrix(sp(t)), sp.angular_velocity(t))
    assert np.max(np.abs(body - sp.angular_velocity(t, frame="body"))) <= 1e-14


def test_spline_is_c2_at_the_knots(rng):
    times, q = _samples(rng)
    sp = RotationSpline(times, q)
    inner = times[1:-1]
    delta = 1e-9 * (1 + np.abs(inner))
    for rate in (sp.angular_velocity, sp.angular_acceleration):
        left, right = rate(inner - delta), rate(inner + delta)
        assert np.max(np.abs(left - right)) <= 1e-6


def test_spline_angular_velocity_converges_at_third_order_on_exact_motion():
    # Asymmetric top, exact torque-free motion; interior window [T/4, 3T/4] so that the
    # first-order chord rates at the two ends (decaying into the interior) do not count.
    q0 = np.array([0.9, 0.1, 0.3, 0.2])
    w0 = np.array([0.4, 1.1, -0.7])
    J = np.array([1.0, 0.6, 0.35])
    T = 8.0
    t_check = np.linspace(T / 4, 3 * T / 4, 201)
    q_ref, w_ref = exact.torque_free(q0, w0, J, t_check)
    errors = []
    steps = [0.2, 0.1, 0.05, 0.025]
    for h in steps:
        ts = np.arange(0.0, T + h / 2, h)
        q_s, _ = exact.torque_free(q0, w0, J, ts)
        sp = RotationSpline(ts, q_s)
        errors.append(np.max(np.abs(sp.angular_velocity(t_check) - w_ref)))
        assert (
            np.max(tr.rotation_angle(sp(t_check), q_ref)) <= 4e-6 * (h / 0.2) ** 4
        )  # measured 2.3e-6 at h = 0.2
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(orders >= 2.8), orders  # documented O(h³); the issue asks O(h²) or better


def test_spline_keeps_the_dtype_and_shape_of_t(rng):
    times, q = _samples(rng)
    sp = RotationSpline(times, q.astype(np.float32))
    t = np.linspace(times[0], times[-1], 12).reshape(3, 4)
    assert sp(t).shape == (3, 4, 4)
    assert sp(t).dtype == np.float32
    assert sp.angular_velocity(t).shape == (3, 4, 3)
    assert sp.angular_acceleration(2.0).shape == (3,)


def test_spline_input_errors():
    q = tr.rotvec_to_quat(np.zeros((3, 3)))
    with pytest.raises(
        InputError, match=r"^times: expected strictly increasing times, got times\[2\]"
    ):
        RotationSpline([0.0, 1.0, 1.0], q)
    with pytest.raises(InputError, match=r"^times: expected strictly increasing"):
        RotationSpline([0.0, 2.0, 1.0], q)
    with pytest.raises(InputError, match=r"^times: expected shape \(n,\) with n >= 2"):
        RotationSpline([[0.0, 1.0, 2.0]], q)
    with pytest.raises(InputError, match=r"^times: expected shape \(n,\) with n >= 2"):
        RotationSpline([0.0], q[:1])
    with pytest.raises(InputError, match=r"^times: expected finite"):
        RotationSpline([0.0, np.nan, 2.0], q)
    with pytest.raises(InputError, match=r"^q: expected shape \(3, 4\)"):
        RotationSpline([0.0, 1.0, 2.0], q[:2])
    with pytest.raises(InputError, match=r"^q: expected nonzero"):
        RotationSpline([0.0, 1.0, 2.0], np.zeros((3, 4)))
    sp = RotationSpline([0.0, 1.0, 2.0], q)
    with pytest.raises(InputError, match=r"^frame: expected one of 'world', 'body'"):
        sp.angular_velocity(0.5, frame="inertial")
    with pytest.raises(InputError, match=r"^t: expected finite"):
        sp(np.inf)


# -- extreme input (issue 27) -------------------------------------------------------------


def test_regression_squad_names_its_control_points():
    """A bad ``a0`` or ``a1`` was reported as ``q0``/``q1`` (the inner slerp's names)."""
    one, zero = [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]
    with pytest.raises(InputError, match=r"^a0: expected nonzero"):
        squad(one, one, zero, one, 0.3)
    with pytest.raises(InputError, match=r"^a1: expected shape"):
        squad(one, one, one, [1.0, 0.0, 0.0], 0.3)
    with pytest.raises(InputError, match=r"^q1: expected nonzero"):
        squad(one, zero, one, one, 0.3)
    with pytest.raises(InputError, match=r"^s: too large"):
        quiet(lambda: squad(one, [0.0, 1.0, 0.0, 0.0], one, one, 1e200))


def test_slerp_far_along_the_great_circle_is_the_exact_rotation_or_names_s():
    """``s`` times the half angle is the exponent: at s = 1e300 a unit quaternion, the exact
    exp (mpmath) of the float product ``s (pi/2)`` (no digit of the exact product survives
    its rounding); beyond the float range InputError naming s."""
    mpmath = pytest.importorskip("mpmath")
    q0, q1 = [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]  # a half turn: log = pi/2 e_x
    q = quiet(lambda: slerp(q0, q1, 1e300))
    with mpmath.workdps(400):
        angle = mpmath.mpf(1e300 * (np.pi / 2))
        expected = [float(mpmath.cos(angle)), float(mpmath.sin(angle)), 0.0, 0.0]
    np.testing.assert_allclose(q, expected, rtol=0, atol=4 * EPS64)
    with pytest.raises(InputError, match=r"^s: too large"):
        quiet(lambda: slerp(q0, q1, 1.7e308))


def test_regression_spline_through_identical_samples_is_at_rest(rng):
    """Issue 27: ten identical samples gave a body rate of 5.6e-17 (q* ⊗ q was not exactly
    the identity), failing SciPy's own ``test_constant_attitude`` (tolerance 1e-17). SciPy
    gives exactly 0, and so does tumble: the rates and accelerations are zero, the attitude
    is the sample at every time, inside the knots and beyond."""
    for q in tr.random_quat(20, rng):
        sp = RotationSpline(np.arange(10.0), np.tile(q, (10, 1)))
        t = np.array([-1.0, 0.0, 0.3, 4.5, 9.0, 12.0])
        for frame in ("world", "body"):
            assert np.all(sp.angular_velocity(t, frame=frame) == 0.0)
            assert np.all(sp.angular_acceleration(t, frame=frame) == 0.0)
        assert np.max(cover_distance(sp(t), np.tile(q, (len(t), 1)))) <= EPS64


@pytest.mark.parametrize("scale", [1e-300, 2.0**-1000, 1e150, 1e300])
def test_regression_spline_of_tiny_or_huge_knot_spacings_is_the_scaled_spline(scale, rng):
    """Knots 1e-300 apart gave SciPy's "array must not contain infs or NaNs" (the
    coefficients overflowed). Time scaling: the attitudes are the unit-spaced spline's at
    ``t / scale`` (SciPy's, the oracle), the rates its rates over ``scale``, ``scale²``;
    a rate beyond the float range raises naming the knots."""
    times, q = np.arange(6.0), tr.random_quat(6, rng)
    ref = ConvergedSpline(times, to_sp(q))
    sp = quiet(lambda: RotationSpline(times * scale, q))
    t = np.array([0.3, 1.5, 2.0, 4.7])
    assert np.max(cover_distance(quiet(lambda: sp(t * scale)), from_sp(ref(t)))) <= SCIPY_TOL
    for what, rate in ((1, sp.angular_velocity), (2, sp.angular_acceleration)):
        with np.errstate(over="ignore"):
            oracle = ref(t, what) / scale / (scale if what == 2 else 1.0)
        if np.all(np.isfinite(oracle)):
            got = quiet(lambda r=rate: r(t * scale, frame="body"))
            size = np.max(np.abs(oracle))
            np.testing.assert_allclose(got, oracle, rtol=0, atol=SCIPY_TOL * size)
        else:
            with pytest.raises(InputError, match=r"^times, q: "):
                quiet(lambda r=rate: r(t * scale))


def test_regression_spline_far_outside_its_knots_raises_naming_t(rng):
    """Evaluation at 1e154 gave NaN (the cubic overflowed): beyond EXTRAPOLATION_LIMIT it
    raises naming t; well inside it, the extrapolated pieces agree with SciPy's."""
    times, q = np.arange(5.0), tr.random_quat(5, rng)
    sp = RotationSpline(times, q)
    for call in (sp, sp.angular_velocity, sp.angular_acceleration):
        with pytest.raises(InputError, match=r"^t: too far outside the knots"):
            quiet(lambda c=call: c(1e154))
        with pytest.raises(InputError, match=r"^t: too far outside the knots"):
            quiet(lambda c=call: c(np.array([2.0, -1e30])))
    ref = ConvergedSpline(times, to_sp(q))
    t = np.array([-3.0, 7.5])
    assert np.max(cover_distance(quiet(lambda: sp(t)), from_sp(ref(t)))) <= 1e-10
    w = ref(t, 1)
    np.testing.assert_allclose(
        sp.angular_velocity(t, frame="body"), w, rtol=0, atol=1e-10 * np.max(np.abs(w))
    )
    # Far out, but within the limit: finite (a unit quaternion whose angle has no digit).
    far = quiet(lambda: sp(1e15))
    np.testing.assert_allclose(np.linalg.norm(far), 1.0, rtol=0, atol=4 * EPS64)


def test_regression_spline_knots_spanning_the_float_range_name_times():
    q = tr.rotvec_to_quat(np.zeros((3, 3)))
    with pytest.raises(InputError, match=r"^times: "):
        quiet(lambda: RotationSpline([-1e308, 1e308, 1.5e308], q))


def test_regression_a_spacing_that_vanishes_in_the_spline_unit_raises_without_a_warning():
    # The long campaign (issue 27): spacings 5e-324 and 2 divided by zero with NumPy
    # warnings on the way to the InputError.
    times = np.array([0.0, 5e-324, 2.0, 3.0, 4.0])
    q = tr.random_quat(5, np.random.default_rng(5))

    def build():
        with pytest.raises(InputError, match=r"^times: "):
            RotationSpline(times, q)

    quiet(build)


@pytest.mark.parametrize("where", [0, 4])
@pytest.mark.parametrize("spacing", [1e104, 1e149, 1e154, 1e200, 1e308])
def test_regression_spacings_a_hundred_orders_apart_raise_naming_times_without_a_warning(
    spacing, where
):
    # The long campaign (issue 27): one knot spacing of 1e149 or 1e154 beside unit ones
    # made NumPy warn (h³ and h² underflowed to 0 and were divided by; then SciPy's banded
    # solver refused the infinite right-hand side with a ValueError). In the unit of the
    # longest spacing a short piece's cubic term Δ/h³ is beyond the float range.
    times = np.arange(5.0)
    times[where] = spacing if where else -spacing
    q = tr.random_quat(5, np.random.default_rng(7))

    def build():
        with pytest.raises(InputError, match=r"^times: too large or too small"):
            RotationSpline(times, q)

    quiet(build)
