"""tumble.transform: the Transform group, its dynamics, deltas and conversions.

Oracles: augmented matrices (Transform), SciPy (quaternion and rotation-vector helpers),
finite differences of composed static transforms (dynamics), and exact differences of
compositions (deltas, which are exact rather than linearised).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.linalg import expm
from scipy.spatial.transform import Rotation

from strategies import TRANSFORM_DIMS, dynamic_transforms, nd_transforms, nd_vectors
from tumble import InputError
from tumble.rotation import matrix_to_quat, skew, unskew
from tumble.transform import (
    DynamicTransform,
    Transform,
    rotation_tolerance,
    skew2,
    unskew2,
)

#: Group laws compose a handful of float64 matrices with entries O(1) and scales in
#: [0.5, 2]: round-off is a few hundred ulps of the largest magnitude involved.
GROUP_RTOL = 1e-11

#: Deltas are exact identities evaluated two ways (formula vs difference of compositions);
#: the difference of two O(10) numbers loses a few ulps of those numbers.
DELTA_RTOL = 1e-12

DYNAMIC_FIELDS = ("velocity", "acceleration", "angular_velocity", "angular_acceleration")


def rand_skew(rng, n, size=1.0):
    X = rng.normal(scale=size, size=(n, n))
    return X - X.T


def rand_rotation(rng, n):
    return expm(rand_skew(rng, n, 1.5))


def rand_transform(rng, n):
    return Transform(rng.normal(size=n), rand_rotation(rng, n), rng.uniform(0.5, 2.0))


def rand_dynamic(rng, n):
    return DynamicTransform(
        rand_transform(rng, n),
        rng.normal(size=n),
        rng.normal(size=n),
        rand_skew(rng, n, 0.7),
        rand_skew(rng, n, 0.7),
    )


def assert_close(x, y, rtol, what=""):
    x, y = np.asarray(x), np.asarray(y)
    assert np.all(np.isfinite(x)), what
    assert np.all(np.isfinite(y)), what
    scale = 1.0 + max(np.max(np.abs(x), initial=0.0), np.max(np.abs(y), initial=0.0))
    err = np.max(np.abs(x - y), initial=0.0)
    assert err <= rtol * scale, f"{what}: error {err:.3g} > {rtol:.1g} x {scale:.3g}"


def assert_transform_close(A, B, rtol, what=""):
    assert_close(A.translation, B.translation, rtol, f"{what} translation")
    assert_close(A.rotation, B.rotation, rtol, f"{what} rotation")
    assert_close(A.scale, B.scale, rtol, f"{what} scale")


def assert_dynamic_close(X, Y, rtol, what=""):
    assert_transform_close(X.transform, Y.transform, rtol, what)
    for f in DYNAMIC_FIELDS:
        assert_close(getattr(X, f), getattr(Y, f), rtol, f"{what} {f}")


# -------------------------------------------------------------------------- Transform


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_transform_acts_like_its_augmented_matrix(rng, n):
    A = rand_transform(rng, n)
    x = rng.normal(size=(4, 2, n))
    M = A.as_matrix()
    expected = (np.concatenate([x, np.ones((4, 2, 1))], -1) @ M.T)[..., :n]
    np.testing.assert_allclose(A(x), expected, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(A.linear, A.rotation * A.scale, rtol=0, atol=0)
    np.testing.assert_allclose(A.normal_matrix(), np.linalg.inv(A.linear).T, atol=1e-13)
    np.testing.assert_array_equal(M[n], np.r_[np.zeros(n), 1.0])


@pytest.mark.parametrize("n", [2, 3, 4])
def test_composition_applies_the_right_factor_first(rng, n):
    A, B = rand_transform(rng, n), rand_transform(rng, n)
    x = rng.normal(size=(7, n))
    np.testing.assert_allclose((A * B)(x), A(B(x)), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose((A * B).as_matrix(), A.as_matrix() @ B.as_matrix(), atol=1e-13)
    np.testing.assert_allclose(A.inverse()(A(x)), x, atol=1e-13)
    np.testing.assert_allclose(A.inverse().as_matrix(), np.linalg.inv(A.as_matrix()), atol=1e-12)


@given(
    st.sampled_from(TRANSFORM_DIMS).flatmap(
        lambda n: st.tuples(nd_transforms(n), nd_transforms(n), nd_transforms(n))
    )
)
def test_transform_group_laws(abc):
    A, B, C = abc
    n = A.n
    I = Transform.identity(n)
    assert_transform_close((A * B) * C, A * (B * C), GROUP_RTOL, "associativity")
    assert_transform_close(A * A.inverse(), I, GROUP_RTOL, "right inverse")
    assert_transform_close(A.inverse() * A, I, GROUP_RTOL, "left inverse")
    assert_transform_close(I * A, A, 0.0, "left identity")
    assert_transform_close(A * I, A, GROUP_RTOL, "right identity")


def test_two_and_three_dimensional_helpers_match_scipy(rng):
    A = Transform.from_angle(0.3, (1.0, 2.0), 2.0)
    np.testing.assert_allclose(
        A.rotation, [[np.cos(0.3), -np.sin(0.3)], [np.sin(0.3), np.cos(0.3)]], atol=1e-15
    )
    assert A.angle == pytest.approx(0.3, abs=1e-15)
    assert A.scale == 2.0
    phi = rng.normal(size=3)
    ref = Rotation.from_rotvec(phi)
    B = Transform.from_rotvec(phi, (1.0, 0.0, 0.0))
    np.testing.assert_allclose(B.rotation, ref.as_matrix(), atol=1e-14)
    xyzw = ref.as_quat()
    C = Transform.from_quat(np.r_[xyzw[3], xyzw[:3]], scale=3.0)
    np.testing.assert_allclose(C.rotation, ref.as_matrix(), atol=1e-14)
    np.testing.assert_allclose(C.translation, np.zeros(3))


def test_dtype_follows_input_and_integers_promote():
    A = Transform(np.zeros(2, np.float32), np.eye(2, dtype=np.float32), 2)
    assert A.dtype == np.float32
    assert A(np.ones((3, 2), np.float32)).dtype == np.float32
    assert A(np.ones((3, 2))).dtype == np.float64
    assert Transform([1, 2], [[1, 0], [0, 1]]).dtype == np.float64
    assert (A * Transform.identity(2)).dtype == np.float64
    D = DynamicTransform(A, np.ones(2, np.float32))
    assert D.velocity.dtype == np.float32
    assert D.angular_velocity.dtype == np.float32


def test_attributes_are_read_only(rng):
    A = rand_dynamic(rng, 3)
    with pytest.raises(ValueError, match="read-only"):
        A.velocity[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        A.transform.rotation[0, 0] = 1.0


def test_rotation_tolerance_scales_with_dtype():
    # One policy with tumble.rotation: n max(sqrt(eps), 8 eps_float32). (It was n sqrt(eps),
    # 4.5e-8 in float64, which rejected float32-rounded rotations that matrix_to_quat took.)
    eps32 = float(np.finfo(np.float32).eps)
    assert rotation_tolerance(np.float64, 3) == pytest.approx(3 * 8 * eps32)
    assert rotation_tolerance(np.float32, 3) == pytest.approx(3 * np.sqrt(eps32))
    assert rotation_tolerance(np.float64, 5) == pytest.approx(5 * 8 * eps32)
    nearly = expm(rand_skew(np.random.default_rng(1), 3)) + 1e-9
    Transform(np.zeros(3), nearly)
    with pytest.raises(InputError, match="rotation"):
        Transform(np.zeros(3), nearly * (1 + 1e-5))


def test_float32_rounded_rotations_accepted_by_transform_and_rotation_alike():
    """Regression: Transform rejected 517/1000 float32-rounded rotations that
    matrix_to_quat accepted; both now apply check_rotation_matrix."""
    R = Rotation.random(1000, random_state=7).as_matrix()
    R32 = R.astype(np.float32).astype(np.float64)
    printed = np.round(R, 8)
    for M in (R32, printed):
        for k in range(M.shape[0]):
            Transform(np.zeros(3), M[k])
        q = matrix_to_quat(M)
        assert np.all(np.isfinite(q))
    for bad in (R[0] * (1 + 1e-5), R[0] @ np.diag([1.0, 1.0, -1.0])):
        with pytest.raises(InputError, match="rotation"):
            Transform(np.zeros(3), bad)
        with pytest.raises(InputError, match="R: expected a rotation matrix"):
            matrix_to_quat(bad)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((np.zeros(2), [[1.0, 0.5], [0.0, 1.0]]), r"rotation: expected a rotation matrix \(R\^T"),
        ((np.zeros(2), [[1.0, 0.0], [0.0, -1.0]]), "rotation: .*det \\+1"),
        ((np.zeros(2), 2 * np.eye(2)), "rotation: expected a rotation"),
        ((np.zeros(2), np.eye(2), 0.0), "scale: expected a positive number"),
        ((np.zeros(2), np.eye(2), -1.0), "scale: expected a positive number"),
        ((np.zeros(2), np.eye(2), np.inf), "scale: expected a finite number"),
        ((np.zeros(2), np.eye(2), np.nan), "scale: expected a finite number"),
        ((np.zeros(2), np.eye(2), "2"), "scale: expected a real number"),
        ((np.zeros(3), np.eye(2)), r"translation: expected shape \(\.\.\., 2\)"),
        ((np.zeros((1, 2)), np.eye(2)), r"translation: expected shape \(2,\)"),
        ((np.zeros(2), np.eye(3)[:2]), "rotation: expected a square matrix"),
        ((np.zeros(0), np.zeros((0, 0))), "rotation: expected a square matrix .* n >= 1"),
        ((np.zeros(2), np.full((2, 2), np.nan)), "rotation: expected finite values"),
        ((np.zeros(2), [[1j, 0], [0, 1]]), "rotation: expected a real"),
    ],
)
def test_transform_rejects_bad_input(args, match):
    with pytest.raises(InputError, match=match):
        Transform(*args)


def test_transform_operations_reject_bad_input():
    A2, A3 = Transform.identity(2), Transform.identity(3)
    with pytest.raises(InputError, match="other: expected a 2-D transform, got a 3-D"):
        A2 * A3
    with pytest.raises(TypeError):
        A2 * 2.0
    with pytest.raises(InputError, match=r"points: expected shape \(\.\.\., 2\)"):
        A2(np.zeros((4, 3)))
    with pytest.raises(InputError, match="points: expected finite"):
        A2([np.nan, 0.0])
    with pytest.raises(InputError, match="n: expected an integer >= 1"):
        Transform.identity(0)
    with pytest.raises(InputError, match="dtype: expected float32 or float64"):
        Transform.identity(2, np.int32)
    with pytest.raises(InputError, match="angle: expected a finite"):
        Transform.from_angle(np.nan)
    with pytest.raises(InputError, match="angle: defined for 2-D"):
        _ = A3.angle
    with pytest.raises(InputError, match=r"q: expected shape \(\.\.\., 4\)"):
        Transform.from_quat([1.0, 0.0, 0.0])
    with pytest.raises(InputError, match=r"phi: expected shape \(3,\)"):
        Transform.from_rotvec(np.zeros((2, 3)))
    with pytest.raises(InputError, match="translation"):
        Transform.from_rotvec(np.zeros(3), (0.0, 0.0))


# -------------------------------------------------------------------------- skew helpers


def test_skew_helpers_are_the_perpendicular_and_cross_product(rng):
    w, v = rng.normal(size=3), rng.normal(size=(5, 3))
    np.testing.assert_allclose(v @ skew(w).T, np.cross(w, v), atol=1e-15)
    np.testing.assert_array_equal(unskew(skew(v)), v)
    s, u = 0.7, rng.normal(size=2)
    np.testing.assert_allclose(skew2(s) @ u, s * np.array([-u[1], u[0]]), atol=1e-16)
    assert unskew2(skew2(s)) == s
    np.testing.assert_array_equal(unskew2(skew2(np.arange(4.0))), np.arange(4.0))
    # so(3) commutator is the cross product; so(2) is commutative
    a, b = rng.normal(size=3), rng.normal(size=3)
    np.testing.assert_allclose(
        skew(a) @ skew(b) - skew(b) @ skew(a), skew(np.cross(a, b)), atol=1e-15
    )


def test_compact_angular_forms_round_trip(rng):
    D3 = DynamicTransform(Transform.identity(3), None, None, [1.0, 2.0, 3.0], [0.0, -1.0, 0.5])
    np.testing.assert_array_equal(D3.angular_velocity, skew([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(D3.angular_velocity_compact(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(D3.angular_acceleration_compact(), [0.0, -1.0, 0.5])
    D2 = DynamicTransform(Transform.from_angle(0.2), None, None, 1.5, -0.25)
    assert D2.angular_velocity_compact() == 1.5
    assert D2.angular_acceleration_compact() == -0.25
    with pytest.raises(InputError, match="compact forms exist in 2-D and 3-D only"):
        DynamicTransform.identity(4).angular_velocity_compact()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"velocity": np.zeros(2)}, r"velocity: expected shape \(\.\.\., 3\)"),
        ({"acceleration": [0.0, np.inf, 0.0]}, "acceleration: expected finite"),
        ({"angular_velocity": np.ones((3, 3))}, "angular_velocity: expected a skew-symmetric"),
        ({"angular_velocity": 1.0}, r"angular_velocity: expected a skew-symmetric \(3, 3\)"),
        ({"angular_acceleration": np.zeros((2, 2))}, r"angular_acceleration: expected a skew"),
    ],
)
def test_dynamic_transform_rejects_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        DynamicTransform(Transform.identity(3), **kwargs)


def test_dynamic_transform_operations_reject_bad_input(rng):
    D2, D3 = rand_dynamic(rng, 2), rand_dynamic(rng, 3)
    with pytest.raises(InputError, match="transform: expected a Transform"):
        DynamicTransform(np.eye(3))
    with pytest.raises(InputError, match="other: expected a 3-D transform, got a 2-D"):
        D3 * D2
    with pytest.raises(InputError, match="global_: expected a 3-D transform"):
        D3.to_local(D2)
    with pytest.raises(InputError, match="global_: expected a DynamicTransform"):
        D3.to_local(D3.transform)
    with pytest.raises(InputError, match="local: expected a DynamicTransform"):
        D3.inherited_delta(None)
    with pytest.raises(InputError, match=r"dv: expected shape \(\.\.\., 3\)"):
        D3.delta_velocity(np.zeros(2))
    with pytest.raises(InputError, match="da: expected finite"):
        D3.delta_acceleration(np.zeros(3), [np.nan, 0, 0])
    with pytest.raises(InputError, match="dw: expected a skew-symmetric"):
        D3.delta_angular_velocity(np.eye(3))
    with pytest.raises(InputError, match="dalpha: expected a skew-symmetric"):
        D3.delta_angular_acceleration(np.zeros(3), np.eye(3))
    with pytest.raises(InputError, match="dw: expected a skew-symmetric"):
        D2.delta_angular_velocity_to_local(np.ones((2, 2)))
    with pytest.raises(InputError, match=r"dv: expected shape"):
        D2.delta_acceleration_to_local(np.zeros(3), np.zeros(2))


# -------------------------------------------------------------------------- group laws


@given(
    st.sampled_from(TRANSFORM_DIMS).flatmap(
        lambda n: st.tuples(dynamic_transforms(n), dynamic_transforms(n), dynamic_transforms(n))
    )
)
def test_dynamic_transform_group_laws(abc):
    A, B, C = abc
    I = DynamicTransform.identity(A.n)
    assert_dynamic_close((A * B) * C, A * (B * C), GROUP_RTOL, "associativity")
    assert_dynamic_close(A * A.inverse(), I, GROUP_RTOL, "right inverse")
    assert_dynamic_close(A.inverse() * A, I, GROUP_RTOL, "left inverse")
    assert_dynamic_close(I * A, A, GROUP_RTOL, "left identity")
    assert_dynamic_close(A * I, A, GROUP_RTOL, "right identity")
    assert_dynamic_close(A.inverse().inverse(), A, GROUP_RTOL, "double inverse")
    assert_dynamic_close(A.to_local(A * B), B, GROUP_RTOL, "to_local undoes composition")
    assert_dynamic_close(A.to_local(C), A.inverse() * C, GROUP_RTOL, "to_local = A^-1 * C")


def test_identity_is_at_rest():
    I = DynamicTransform.identity(4, np.float32)
    assert I.dtype == np.float32
    for f in DYNAMIC_FIELDS:
        assert not np.any(getattr(I, f))
    np.testing.assert_array_equal(I.transform.rotation, np.eye(4))


# -------------------------------------------------------------------------- finite differences

#: Step of the five-point stencils below.
FD_H = 2e-3

#: Five-point central differences: truncation h^4/30 |f^(5)| (first derivative) and
#: h^4/90 |f^(6)| (second), about 1e-11 |f^(k)| at h = 2e-3, where the derivatives of the
#: motions below stay under ~10^3 |f|; round-off 1.5 eps/h and 5.3 eps/h^2 relative, about
#: 3e-10 for the second derivative. 1e-8 leaves a margin of ~30 over their sum.
FD_RTOL = 1e-8


def five_point(f, h=FD_H):
    """First and second derivatives at 0 of ``f(t)`` (arrays) by five-point stencils."""
    fm2, fm1, f0, fp1, fp2 = (np.asarray(f(k * h)) for k in (-2, -1, 0, 1, 2))
    d1 = (fm2 - 8 * fm1 + 8 * fp1 - fp2) / (12 * h)
    d2 = (-fm2 + 16 * fm1 - 30 * f0 + 16 * fp1 - fp2) / (12 * h * h)
    return d1, d2


class SmoothMotion:
    """A dynamic transform moving smoothly: the exact static transform at any time t.

    ``T(t) = T0 + v t + a t^2/2 + j t^3/6`` and ``R(t) = expm(t W + t^2 B / 2) R0``, whose
    rates at t = 0 are exactly ``v``, ``a``, ``omega = W`` and ``alpha = B`` (expand the
    exponential: ``d2R/dt2 (0) = (B + W^2) R0``). The jerk and the non-commuting W, B make
    the motion more than quadratic, so the finite differences test something.
    """

    def __init__(self, rng, n):
        self.n = n
        self.T0, self.v, self.a, self.j = (rng.normal(size=n) for _ in range(4))
        self.R0 = rand_rotation(rng, n)
        self.W, self.B = rand_skew(rng, n, 0.6), rand_skew(rng, n, 0.6)
        self.S = rng.uniform(0.7, 1.4)

    def at(self, t):
        T = self.T0 + self.v * t + self.a * t**2 / 2 + self.j * t**3 / 6
        return Transform(T, expm(t * self.W + t * t * self.B / 2) @ self.R0, self.S)

    def dynamic(self):
        return DynamicTransform(self.at(0.0), self.v, self.a, self.W, self.B)


def fd_dynamic(static_at):
    """Velocities and accelerations at t = 0 of a static transform path, by differences."""
    dT, d2T = five_point(lambda t: static_at(t).translation)
    dR, d2R = five_point(lambda t: static_at(t).rotation)
    R = static_at(0.0).rotation
    omega = dR @ R.T
    alpha = d2R @ R.T - omega @ omega
    return dT, d2T, omega, alpha


def assert_matches_fd(D, static_at, what):
    v, a, w, al = fd_dynamic(static_at)
    assert_transform_close(D.transform, static_at(0.0), 1e-13, what)
    assert_close(D.velocity, v, FD_RTOL, f"{what} velocity")
    assert_close(D.acceleration, a, FD_RTOL, f"{what} acceleration")
    assert_close(D.angular_velocity, w, FD_RTOL, f"{what} angular velocity")
    assert_close(D.angular_acceleration, al, FD_RTOL, f"{what} angular acceleration")


@pytest.mark.parametrize("n", [2, 3, 4])
def test_composition_inverse_and_to_local_match_finite_differences(rng, n):
    for _ in range(3):
        m2, m1 = SmoothMotion(rng, n), SmoothMotion(rng, n)
        D2, D1 = m2.dynamic(), m1.dynamic()
        assert_matches_fd(D2 * D1, lambda t, m2=m2, m1=m1: m2.at(t) * m1.at(t), "composition")
        assert_matches_fd(D2.inverse(), lambda t, m2=m2: m2.at(t).inverse(), "inverse")
        assert_matches_fd(
            D2.to_local(D1), lambda t, m2=m2, m1=m1: m2.at(t).inverse() * m1.at(t), "to_local"
        )


# -------------------------------------------------------------------------- deltas


def with_rates(D, dv=0.0, da=0.0, dw=0.0, dal=0.0):
    return DynamicTransform(
        D.transform,
        D.velocity + dv,
        D.acceleration + da,
        D.angular_velocity + dw,
        D.angular_acceleration + dal,
    )


@pytest.mark.parametrize("n", [2, 3, 4])
def test_local_to_global_deltas_are_differences_of_compositions(rng, n):
    parent, local = rand_dynamic(rng, n), rand_dynamic(rng, n)
    dv, da = rng.normal(size=n), rng.normal(size=n)
    dw, dal = rand_skew(rng, n), rand_skew(rng, n)
    before = parent * local
    after = parent * with_rates(local, dv, da, dw, dal)
    assert_close(parent.delta_velocity(dv), after.velocity - before.velocity, DELTA_RTOL, "dv")
    assert_close(
        parent.delta_acceleration(dv, da),
        after.acceleration - before.acceleration,
        DELTA_RTOL,
        "da",
    )
    assert_close(
        parent.delta_angular_velocity(dw),
        after.angular_velocity - before.angular_velocity,
        DELTA_RTOL,
        "dw",
    )
    assert_close(
        parent.delta_angular_acceleration(dw, dal),
        after.angular_acceleration - before.angular_acceleration,
        DELTA_RTOL,
        "dal",
    )
    # and the global-to-local forms invert them
    dv3 = parent.delta_velocity(dv)
    da3 = parent.delta_acceleration(dv, da)
    dw3 = parent.delta_angular_velocity(dw)
    dal3 = parent.delta_angular_acceleration(dw, dal)
    assert_close(parent.delta_velocity_to_local(dv3), dv, DELTA_RTOL, "dv1")
    assert_close(parent.delta_acceleration_to_local(dv3, da3), da, DELTA_RTOL, "da1")
    assert_close(parent.delta_angular_velocity_to_local(dw3), dw, DELTA_RTOL, "dw1")
    assert_close(parent.delta_angular_acceleration_to_local(dw3, dal3), dal, DELTA_RTOL, "dal1")


@pytest.mark.parametrize("n", [2, 3, 4])
def test_parent_change_propagates_as_derived(rng, n):
    parent, local = rand_dynamic(rng, n), rand_dynamic(rng, n)
    dv, da = rng.normal(size=n), rng.normal(size=n)
    dw, dal = rand_skew(rng, n), rand_skew(rng, n)
    before = parent * local
    after = with_rates(parent, dv, da, dw, dal) * local
    d = parent.inherited_delta(local, dv, da, dw, dal)
    assert_close(d.velocity, after.velocity - before.velocity, DELTA_RTOL, "dv3")
    assert_close(d.acceleration, after.acceleration - before.acceleration, DELTA_RTOL, "da3")
    assert_close(
        d.angular_velocity, after.angular_velocity - before.angular_velocity, DELTA_RTOL, "dw3"
    )
    assert_close(
        d.angular_acceleration,
        after.angular_acceleration - before.angular_acceleration,
        DELTA_RTOL,
        "dal3",
    )
    zero = parent.inherited_delta(local)
    for x in zero:
        assert not np.any(x)


def test_three_dimensional_deltas_accept_vectors(rng):
    parent = rand_dynamic(rng, 3)
    dw = rng.normal(size=3)
    np.testing.assert_allclose(
        parent.delta_angular_velocity(dw), parent.delta_angular_velocity(skew(dw)), atol=0
    )
    R2 = parent.transform.rotation
    np.testing.assert_allclose(unskew(parent.delta_angular_velocity(dw)), R2 @ dw, atol=1e-14)


@given(st.sampled_from((2, 3)).flatmap(lambda n: st.tuples(dynamic_transforms(n), nd_vectors(n))))
def test_velocity_delta_round_trip_property(pair):
    parent, dv = pair
    back = parent.delta_velocity_to_local(parent.delta_velocity(dv))
    assert_close(back, dv, GROUP_RTOL, "round trip")


# ------------------------------------------------- regressions from the bad-input campaign


def test_regression_transform_identity_10_5_size_checked():
    # Transform.identity(10**5) asked for a 74.5 GiB rotation matrix without a check.
    with pytest.raises(InputError, match=r"n: a 100000 x 100000 rotation matrix would take 74.5"):
        Transform.identity(10**5)
    with pytest.raises(InputError, match="n: "):
        DynamicTransform.identity(10**5)
    assert Transform.identity(4).as_matrix().tolist() == np.eye(5).tolist()


def test_regression_scale_5e_324_inverted_raises():
    # Transform(..., scale=5e-324).inverse() returned scale inf, a Transform its own
    # constructor refuses.
    A = Transform(np.zeros(3), np.eye(3), 5e-324)
    with pytest.raises(InputError, match="scale: too large or too small, the inverse"):
        A.inverse()
    with pytest.raises(InputError, match="scale: "):
        A.normal_matrix()
    with pytest.raises(InputError, match="scale: "):
        DynamicTransform(A).inverse()
    # representable inverses are computed: 1e-300 -> 1e300
    B = Transform(np.array([1e-300, 0.0, 0.0]), np.eye(3), 1e-300)
    assert B.inverse().scale == 1.0 / 1e-300
    np.testing.assert_allclose(B.inverse().translation, [-1.0, 0.0, 0.0], rtol=1e-15)


def test_regression_scales_1e100_composed_four_times_raise():
    # Four compositions of scale 1e100 gave scale inf silently.
    B = Transform(np.zeros(3), np.eye(3), 1e100)
    assert (B * B * B).scale == pytest.approx(1e300, rel=1e-15)
    with pytest.raises(InputError, match="other: too large or too small, the composition"):
        B * B * B * B
    D = DynamicTransform(B, velocity=[1e300, 0.0, 0.0])
    with pytest.raises(InputError, match="other: "):
        D * D
    with pytest.raises(InputError, match="points: "):
        (B * B * B)([1e10, 0.0, 0.0])
    with pytest.raises(InputError, match="dv: "):
        DynamicTransform(B * B).delta_velocity([1e200, 0.0, 0.0])
    tiny = Transform(np.zeros(3), np.eye(3), 1e-200)
    with pytest.raises(InputError, match="other: "):
        tiny * tiny  # the scale underflows to 0


def test_no_numpy_warning_on_overflow():
    B = Transform(np.zeros(3), np.eye(3), 1e200)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError):
            B * B
        with pytest.raises(InputError):
            DynamicTransform(B, acceleration=[1e300, 0, 0]) * DynamicTransform(B)
