"""Euler angles, modified Rodrigues parameters and powers of tumble.rotation.

Oracles: SciPy's ``Rotation`` (``from_euler``/``as_euler``, ``as_mrp``/``from_mrp``, ``**``)
on random inputs, a 50-digit mpmath evaluation for the precision of the Euler angles, and
round trips.
"""

from __future__ import annotations

import warnings

import mpmath
import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from tests.oracles import cover_distance
from tests.oracles import scipy_quat as from_sp
from tests.oracles import scipy_rotation as to_sp

import tumble.rotation as tr
from tumble import InputError, TumbleWarning

EPS64 = float(np.finfo(np.float64).eps)
#: The issue's bar for agreement with SciPy (float64, random inputs).
SCIPY_TOL = 1e-12
#: Euler angles against 50 digits, absolute: each outer angle is a sum of two atan2 (each
#: within an ulp of a number up to π, 2 eps) and one rounding; measured 3.8 eps.
EULER_MP_TOL = 6 * EPS64
N = 200

SEQUENCES = [
    s
    for base in ("xyz", "xzy", "yxz", "yzx", "zxy", "zyx", "xyx", "xzx", "yxy", "yzy", "zxz", "zyz")
    for s in (base, base.upper())
]


def angle_distance(a, b):
    """|a - b| modulo 2π (SciPy maps π to -π, tumble keeps π)."""
    return np.abs((np.asarray(a) - b + np.pi) % (2 * np.pi) - np.pi)


@pytest.mark.parametrize("seq", SEQUENCES)
def test_quat_to_euler_matches_scipy_for_every_sequence(seq, rng):
    q = tr.random_quat(N, rng)
    angles = tr.quat_to_euler(q, seq)
    assert not np.isnan(angles).any()
    assert np.max(angle_distance(angles, to_sp(q).as_euler(seq))) <= SCIPY_TOL


@pytest.mark.parametrize("seq", SEQUENCES)
def test_euler_to_quat_matches_scipy_for_every_sequence(seq, rng):
    angles = rng.uniform(-np.pi, np.pi, (N, 3))
    q = tr.euler_to_quat(angles, seq)
    assert np.max(cover_distance(q, from_sp(Rotation.from_euler(seq, angles)))) <= SCIPY_TOL


@pytest.mark.parametrize("seq", ["xyz", "ZXZ", "yzy", "XZY"])
def test_matrix_twins_match_scipy(seq, rng):
    angles = rng.uniform(-np.pi, np.pi, (N, 3))
    R = tr.euler_to_matrix(angles, seq)
    assert np.max(np.abs(R - Rotation.from_euler(seq, angles).as_matrix())) <= SCIPY_TOL
    back = tr.matrix_to_euler(R, seq)
    assert np.max(angle_distance(back, Rotation.from_matrix(R).as_euler(seq))) <= SCIPY_TOL


def test_degrees_match_scipy(rng):
    angles = rng.uniform(-180, 180, (N, 3))
    q = tr.euler_to_quat(angles, "ZYX", degrees=True)
    assert (
        np.max(cover_distance(q, from_sp(Rotation.from_euler("ZYX", angles, degrees=True))))
        <= SCIPY_TOL
    )
    back = tr.quat_to_euler(q, "ZYX", degrees=True)
    assert np.max(np.abs(back - to_sp(q).as_euler("ZYX", degrees=True))) <= 1e-10


def test_intrinsic_is_extrinsic_reversed(rng):
    angles = rng.uniform(-np.pi, np.pi, (N, 3))
    a = tr.euler_to_quat(angles, "XYZ")
    b = tr.euler_to_quat(angles[:, ::-1], "zyx")
    assert np.max(cover_distance(a, b)) <= 4 * EPS64


def test_extrinsic_xyz_applies_x_first():
    # 90° about x, then 90° about world z: e_y goes to e_z (x turn), stays e_z (z turn)...
    q = tr.euler_to_quat([np.pi / 2, 0.0, np.pi / 2], "xyz")
    assert np.allclose(tr.quat_rotate(q, [0.0, 1.0, 0.0]), [0.0, 0.0, 1.0], atol=1e-15)
    # ...and e_x goes to e_y (x fixed by the x turn, then z turns it to y).
    assert np.allclose(tr.quat_rotate(q, [1.0, 0.0, 0.0]), [0.0, 1.0, 0.0], atol=1e-15)


def _mp_euler(q, seq):
    """50-digit Euler angles of the exact float64 quaternion ``q`` (proper-sequence form)."""
    extrinsic = seq.islower()
    i, j, k = ("xyz".index(c) for c in (seq.lower() if extrinsic else seq.lower()[::-1]))
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    c4 = [mpmath.mpf(float(v)) for v in q]
    a, b, c, d = c4[0], c4[1 + i], c4[1 + j], c4[1 + k] * sign
    if not symmetric:
        a, b, c, d = a - c, b + d, c + a, d - b
    middle = 2 * mpmath.atan2(mpmath.sqrt(c * c + d * d), mpmath.sqrt(a * a + b * b))
    hs, hd = mpmath.atan2(b, a), mpmath.atan2(d, c)
    first, third = hs - hd, hs + hd
    if not symmetric:
        third *= sign
        middle -= mpmath.pi / 2
    first = (first + mpmath.pi) % (2 * mpmath.pi) - mpmath.pi
    third = (third + mpmath.pi) % (2 * mpmath.pi) - mpmath.pi
    return [first, middle, third] if extrinsic else [third, middle, first]


def _mp_quat(angles, seq):
    """50-digit quaternion of Euler angles: the product of elementary half-angle turns."""

    def elementary(axis, angle):
        e = [mpmath.cos(angle / 2), mpmath.mpf(0), mpmath.mpf(0), mpmath.mpf(0)]
        e[1 + "xyz".index(axis)] = mpmath.sin(angle / 2)
        return e

    def mul(p, q):
        pw, px, py, pz = p
        qw, qx, qy, qz = q
        return [
            pw * qw - px * qx - py * qy - pz * qz,
            pw * qx + px * qw + py * qz - pz * qy,
            pw * qy - px * qz + py * qw + pz * qx,
            pw * qz + px * qy - py * qx + pz * qw,
        ]

    e = [elementary(c, a) for c, a in zip(seq.lower(), angles, strict=True)]
    return mul(e[2], mul(e[1], e[0])) if seq.islower() else mul(e[0], mul(e[1], e[2]))


@pytest.mark.parametrize("seq", ["xyz", "ZYX", "zxz", "YXY", "yzx", "XZX"])
def test_quat_to_euler_is_within_a_few_eps_of_mpmath_away_from_lock(seq, rng):
    mpmath.mp.dps = 50
    q = tr.random_quat(60, rng)
    angles = tr.quat_to_euler(q, seq)
    for qi, ai in zip(q, angles, strict=True):
        ref = _mp_euler(qi, seq)
        # the oracle is right: its angles give back the unit quaternion to 40 digits
        back = _mp_quat(ref, seq)
        exact = [mpmath.mpf(float(x)) for x in qi]
        norm = mpmath.sqrt(sum(x * x for x in exact))
        sign = 1 if sum(b * x for b, x in zip(back, exact, strict=True)) > 0 else -1
        assert max(abs(sign * b - x / norm) for b, x in zip(back, exact, strict=True)) < 1e-40
        err = max(abs(mpmath.mpf(float(a)) - r) for a, r in zip(ai, ref, strict=True))
        assert err <= EULER_MP_TOL, f"{seq}: {float(err) / EPS64:.2f} eps"


def test_tait_bryan_middle_angle_near_zero_has_no_pi_half_rounding():
    # A pitch of 1e-12 rad. The "proper angle minus π/2" form (SciPy's) carries the
    # rounding of a number near π/2 (ulp 2.2e-16); the direct atan2 form only that of
    # w q_j - q_i q_k, a few 1e-18 here.
    q = tr.euler_to_quat([0.3, 1e-12, -0.2], "ZYX")
    mpmath.mp.dps = 50
    ref = _mp_euler(q, "ZYX")[1]
    got = tr.quat_to_euler(q, "ZYX")[1]
    assert abs(mpmath.mpf(float(got)) - ref) <= EPS64 / 16


@pytest.mark.parametrize("seq", SEQUENCES)
def test_round_trip_angles_quat_angles_away_from_lock(seq, rng):
    angles = rng.uniform(-np.pi, np.pi, (N, 3))
    if seq[0].lower() == seq[2].lower():
        angles[:, 1] = rng.uniform(0.1, np.pi - 0.1, N)
    else:
        angles[:, 1] = rng.uniform(-np.pi / 2 + 0.1, np.pi / 2 - 0.1, N)
    back = tr.quat_to_euler(tr.euler_to_quat(angles, seq), seq)
    assert np.max(angle_distance(back, angles)) <= 32 * EPS64


@pytest.mark.parametrize("seq", ["xyz", "XYZ", "zxz", "ZXZ"])
@pytest.mark.parametrize("middle", ["zero", "pi"])
def test_gimbal_lock_sets_third_angle_to_zero_with_a_warning_like_scipy(seq, middle, rng):
    proper = seq[0].lower() == seq[2].lower()
    m = {"zero": 0.0, "pi": np.pi}[middle] - (0.0 if proper else np.pi / 2)
    angles = np.column_stack([rng.uniform(-3, 3, 20), np.full(20, m), rng.uniform(-3, 3, 20)])
    q = tr.euler_to_quat(angles, seq)
    with pytest.warns(tr.GimbalLockWarning, match="20 element"):
        got = tr.quat_to_euler(q, seq)
    assert issubclass(tr.GimbalLockWarning, TumbleWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = to_sp(q).as_euler(seq)
    assert np.all(got[:, 2] == 0.0)
    assert np.max(angle_distance(got, expected)) <= 1e-9
    # the angles still describe the rotation
    assert np.max(cover_distance(tr.euler_to_quat(got, seq), q)) <= 1e-9


def test_no_warning_away_from_lock(rng):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tr.quat_to_euler(tr.random_quat(N, rng), "xyz")


def test_float32_stays_float32_and_agrees(rng):
    q = tr.random_quat(N, rng)
    a32 = tr.quat_to_euler(q.astype(np.float32), "zyx")
    assert a32.dtype == np.float32
    assert (
        np.max(
            angle_distance(a32, tr.quat_to_euler(q.astype(np.float32).astype(np.float64), "zyx"))
        )
        <= 4e-7
    )
    q32 = tr.euler_to_quat(a32, "zyx")
    assert q32.dtype == np.float32


def test_batch_shapes_are_kept(rng):
    q = tr.random_quat((3, 5), rng)
    assert tr.quat_to_euler(q, "XYZ").shape == (3, 5, 3)
    assert tr.euler_to_quat(np.zeros((2, 1, 3)), "XYZ").shape == (2, 1, 4)
    assert tr.quat_to_euler(np.zeros((0, 4)), "xyz").shape == (0, 3)


@pytest.mark.parametrize("seq", ["xyy", "xy", "xyzx", "xYz", "abc", 3, "XXY", None])
def test_unknown_sequence_is_rejected(seq):
    with pytest.raises(InputError, match=r"^seq: expected three axes"):
        tr.euler_to_quat([0.0, 0.0, 0.0], seq)
    with pytest.raises(InputError, match=r"^seq: expected three axes"):
        tr.quat_to_euler([1.0, 0.0, 0.0, 0.0], seq)
    with pytest.raises(InputError, match=r"^seq: expected three axes"):
        tr.matrix_to_euler(np.eye(3), seq)


def test_euler_input_errors_name_the_argument():
    with pytest.raises(InputError, match=r"^angles: expected shape \(\.\.\., 3\)"):
        tr.euler_to_quat([0.0, 1.0], "xyz")
    with pytest.raises(InputError, match=r"^angles: expected finite"):
        tr.euler_to_quat([0.0, np.nan, 1.0], "xyz")
    with pytest.raises(InputError, match=r"^q: expected shape \(\.\.\., 4\)"):
        tr.quat_to_euler([1.0, 0.0, 0.0], "xyz")
    with pytest.raises(InputError, match=r"^q: expected nonzero"):
        tr.quat_to_euler([0.0, 0.0, 0.0, 0.0], "xyz")
    with pytest.raises(InputError, match=r"^R: expected a rotation matrix"):
        tr.matrix_to_euler(2 * np.eye(3), "xyz")
    with pytest.raises(InputError, match=r"^degrees: expected True or False"):
        tr.quat_to_euler([1.0, 0.0, 0.0, 0.0], "xyz", degrees="yes")


# -- modified Rodrigues parameters ---------------------------------------------------------


def test_quat_to_mrp_matches_scipy_and_picks_the_short_set(rng):
    q = tr.random_quat(N, rng)
    p = tr.quat_to_mrp(q)
    assert np.max(np.abs(p - to_sp(q).as_mrp())) <= SCIPY_TOL
    assert np.all(np.linalg.norm(p, axis=-1) <= 1 + 4 * EPS64)
    # scale and sign invariant
    assert np.max(np.abs(tr.quat_to_mrp(-3.0 * q) - p)) <= 8 * EPS64


def test_mrp_to_quat_matches_scipy_for_both_sets(rng):
    q = tr.random_quat(N, rng)
    p = to_sp(q).as_mrp()
    assert np.max(cover_distance(tr.mrp_to_quat(p), q)) <= SCIPY_TOL
    shadow = tr.mrp_shadow(p)
    assert np.all(np.linalg.norm(shadow, axis=-1) >= 1 - 4 * EPS64)
    assert np.max(cover_distance(tr.mrp_to_quat(shadow), q)) <= SCIPY_TOL
    assert np.max(cover_distance(from_sp(Rotation.from_mrp(shadow)), q)) <= SCIPY_TOL


def test_mrp_closed_form_quarter_angle_tangent():
    # a turn by θ about n has p = tan(θ/4) n
    theta = 2.0
    p = tr.quat_to_mrp(tr.rotvec_to_quat([0.0, 0.0, theta]))
    assert np.allclose(p, [0.0, 0.0, np.tan(theta / 4)], rtol=0, atol=2 * EPS64)


def test_huge_mrp_is_the_identity_without_overflow():
    q = tr.mrp_to_quat([1e300, 1e300, 0.0])
    assert np.all(np.isfinite(q))
    assert tr.rotation_angle(q, [1.0, 0.0, 0.0, 0.0]) <= 1e-15


def test_mrp_errors_name_the_argument():
    with pytest.raises(InputError, match=r"^p: expected nonzero MRPs"):
        tr.mrp_shadow([0.0, 0.0, 0.0])
    with pytest.raises(InputError, match=r"^p: expected shape"):
        tr.mrp_to_quat([1.0, 2.0])
    with pytest.raises(InputError, match=r"^p: expected finite"):
        tr.mrp_to_quat([1.0, np.inf, 0.0])
    with pytest.raises(InputError, match=r"^q: expected nonzero"):
        tr.quat_to_mrp(np.zeros(4))


# -- powers ------------------------------------------------------------------------------


def test_quat_power_matches_scipy(rng):
    q = tr.random_quat(N, rng)
    s = rng.uniform(-3, 3, N)
    expected = np.stack([from_sp(to_sp(qi) ** si) for qi, si in zip(q, s, strict=True)])
    assert np.max(cover_distance(tr.quat_power(q, s), expected)) <= SCIPY_TOL


def test_quat_power_special_cases(rng):
    q = tr.random_quat(N, rng)
    assert np.max(cover_distance(tr.quat_power(q, 0.0), [1.0, 0, 0, 0])) == 0.0
    assert np.max(cover_distance(tr.quat_power(q, -1.0), tr.quat_conjugate(q))) <= 8 * EPS64
    half = tr.quat_power(q, 0.5)
    assert np.max(cover_distance(tr.quat_multiply(half, half), q)) <= 8 * EPS64


def test_quat_power_errors_name_the_argument():
    with pytest.raises(InputError, match=r"^q: expected nonzero"):
        tr.quat_power(np.zeros(4), 2.0)
    with pytest.raises(InputError, match=r"^s: expected finite"):
        tr.quat_power([1.0, 0.0, 0.0, 0.0], np.nan)
    with pytest.raises(InputError, match=r"batch shapes do not broadcast"):
        tr.quat_power(np.ones((3, 4)), np.ones(2))
    # Issue 27: a Python int beyond the float range raised OverflowError.
    with pytest.raises(InputError, match=r"^s: "):
        tr.quat_power([1.0, 0.0, 0.0, 0.0], 10**400)
