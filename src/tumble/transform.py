"""Transforms of n-dimensional space and their dynamics, as a group.

A :class:`Transform` ``A = (T, R, S)`` maps child coordinates to parent coordinates,

    A(x) = R S x + T,            J = R S (the linear part, a change of basis),

with a translation ``T`` in R^n, a rotation ``R`` in SO(n) and a positive uniform scale
``S``: the scale acts first, then the rotation, then the translation. Composition
``A2 * A1`` means "apply ``A1`` first" (``(A2 * A1)(x) = A2(A1(x))``), so a node's global
transform is ``A_root * ... * A_parent * A_node``.

A :class:`DynamicTransform` adds the first two time derivatives: ``v = dT/dt``,
``a = d2T/dt2`` and the angular velocity and acceleration ``omega``, ``alpha`` (n x n skew
matrices) defined by ``dR/dt = omega R`` and ``alpha = d omega/dt``, so that
``d2R/dt2 = (alpha + omega^2) R``. The scale is constant in time.

Frames. All four dynamic quantities of a child-to-parent transform are expressed in the
**parent's** coordinates: ``v`` and ``a`` in parent units (they are rates of ``T``, which
lives in the parent frame), ``omega`` and ``alpha`` in the parent's basis (because
``dR/dt = omega R`` multiplies on the left, exactly like tumble's world-frame convention
``dR/dt = [omega]x R`` with "world" read as "parent"). For a node whose parent is the world,
local and global coincide. Scale enters the linear quantities only: a local velocity ``v1``
is seen from the grandparent as ``J2 v1 = S2 R2 v1``, while an angular velocity is seen as
``J2 omega1 J2^-1 = R2 omega1 R2^T`` (the scale cancels: angles do not scale).

The group laws, the local/global conversions and the delta formulas follow
``sources/transform-hierarchy-dynamics.txt`` term by term; each method quotes its equation.
These classes hold one transform each and favour clarity; :mod:`tumble.hierarchy` runs the
same formulas batched in compiled kernels.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from tumble._errors import InputError
from tumble._linalg import antisymmetric_part, axial_vector, cross_matrix
from tumble._validate import (
    as_float_array,
    as_float_dtype,
    as_int,
    as_scalar,
    check_finite_result,
    check_memory,
    check_rotation_matrix,
    check_skew,
    common_dtype,
    rotation_tolerance,
)
from tumble.rotation import quat_to_matrix, rotvec_to_matrix

__all__ = [
    "DynamicDelta",
    "DynamicTransform",
    "Transform",
    "rotation_tolerance",
    "skew2",
    "unskew2",
]


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, copy=True)
    a.flags.writeable = False
    return a


def _commutator(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return A @ B - B @ A


def _as_rotation(x: Any, name: str, n: int | None = None) -> np.ndarray:
    R = as_float_array(x, name)
    if R.ndim != 2 or R.shape[0] != R.shape[1] or R.shape[0] < 1:
        raise InputError(
            f"{name}: expected a square matrix of shape (n, n) with n >= 1, got {R.shape}"
        )
    if n is not None and R.shape[0] != n:
        raise InputError(f"{name}: expected shape ({n}, {n}), got shape {R.shape}")
    check_rotation_matrix(R, name)
    return R


def _as_vector(x: Any, name: str, n: int) -> np.ndarray:
    v = as_float_array(x, name, (n,))
    if v.ndim != 1:
        raise InputError(f"{name}: expected shape ({n},), got shape {v.shape}")
    return v


def _as_skew(x: Any, name: str, n: int) -> np.ndarray:
    """An n x n skew matrix, or its compact form: a scalar in 2-D, a 3-vector in 3-D."""
    arr = as_float_array(x, name)
    if n == 2 and arr.ndim == 0:
        return skew2(arr)
    if n == 3 and arr.shape == (3,):
        return cross_matrix(arr)
    if arr.shape != (n, n):
        compact = {2: " or a scalar", 3: " or a 3-vector"}.get(n, "")
        raise InputError(
            f"{name}: expected a skew-symmetric ({n}, {n}) matrix{compact}, got shape {arr.shape}"
        )
    check_skew(arr, name, "a skew-symmetric matrix")
    return antisymmetric_part(arr)


def skew2(w: ArrayLike) -> np.ndarray:
    """The 2-D angular velocity matrix of the scalar rate ``w``.

    ``[[0, -w], [w, 0]]``, whose action on a vector is ``w v_perp`` with
    ``(x, y)_perp = (-y, x)``.

    Parameters
    ----------
    w : array_like, shape (...)

    Returns
    -------
    ndarray, shape (..., 2, 2)
    """
    w = as_float_array(w, "w")
    out = np.zeros((*w.shape, 2, 2), dtype=w.dtype)
    out[..., 1, 0] = w
    out[..., 0, 1] = -w
    return out


def unskew2(W: ArrayLike) -> np.ndarray:
    """The scalar rate ``w`` of a 2-D skew matrix ``[[0, -w], [w, 0]]``.

    Parameters
    ----------
    W : array_like, shape (..., 2, 2)

    Returns
    -------
    ndarray, shape (...)
    """
    W = as_float_array(W, "W", (2, 2))
    return 0.5 * (W[..., 1, 0] - W[..., 0, 1])


def _dimension_mismatch(name: str, n_self: int, n_other: int) -> InputError:
    return InputError(f"{name}: expected a {n_self}-D transform, got a {n_other}-D one")


_Method = TypeVar("_Method", bound=Callable[..., Any])


def _parts(x: Any) -> tuple[Any, ...]:
    """The numbers of a result that must be finite (a scale must also stay above 0)."""
    if isinstance(x, Transform):
        return (x.translation, x.scale if x.scale > 0.0 else np.inf)
    if isinstance(x, DynamicTransform):
        return (
            *_parts(x.transform),
            x.velocity,
            x.acceleration,
            x.angular_velocity,
            x.angular_acceleration,
        )
    return tuple(x) if isinstance(x, tuple) else (x,)


def _finite(names: str, what: str) -> Callable[[_Method], _Method]:
    """Hold a method to the huge-input rule: a result that overflows raises ``InputError``.

    The method runs with NumPy's floating-point warnings off; if its result (a transform,
    a dynamic transform or an array) has a non-finite number, or a scale that underflowed
    to 0, ``InputError`` names ``names`` (the arguments that were too large or small).
    """

    def wrap(method: _Method) -> _Method:
        @functools.wraps(method)
        def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
            with np.errstate(all="ignore"):
                out = method(self, *args, **kwargs)
                parts = () if out is NotImplemented else _parts(out)
            check_finite_result(names, what, *parts)
            return out

        return cast(_Method, checked)

    return wrap


class Transform:
    """A similarity transform ``x -> R S x + T`` of n-dimensional space.

    Parameters
    ----------
    translation : array_like, shape (n,)
        ``T``, the image of the origin, in parent coordinates.
    rotation : array_like, shape (n, n)
        ``R`` in SO(n); checked to :func:`rotation_tolerance` (orthogonal, det +1), the
        policy :mod:`tumble.rotation` uses too.
    scale : float, optional
        ``S > 0``, uniform (a per-axis scale would not stay diagonal under composition).

    Notes
    -----
    The dtype follows the input (float32 or float64; integers promote to float64). The
    three components are read-only attributes. Composition ``A2 * A1`` applies ``A1``
    first: ``S3 = S2 S1``, ``R3 = R2 R1``, ``T3 = R2 S2 T1 + T2 = A2(T1)``.
    """

    __slots__ = ("_rotation", "_scale", "_translation")

    _translation: np.ndarray
    _rotation: np.ndarray
    _scale: float

    def __init__(self, translation: ArrayLike, rotation: ArrayLike, scale: Any = 1.0) -> None:
        R = _as_rotation(rotation, "rotation")
        n = R.shape[0]
        T = _as_vector(translation, "translation", n)
        S = as_scalar(scale, "scale", positive=True)
        dtype = common_dtype(T, R)
        self._init(T.astype(dtype), R.astype(dtype), S)

    def _init(self, T: np.ndarray, R: np.ndarray, S: float) -> None:
        self._translation = _frozen(T)
        self._rotation = _frozen(R)
        self._scale = float(S)

    @classmethod
    def _make(cls, T: np.ndarray, R: np.ndarray, S: float) -> Transform:
        """Build from already valid components (no checks: internal results only)."""
        out = cls.__new__(cls)
        dtype = common_dtype(T, R)
        out._init(T.astype(dtype), R.astype(dtype), S)
        return out

    @property
    def translation(self) -> np.ndarray:
        """``T``, shape (n,), read-only."""
        return self._translation

    @property
    def rotation(self) -> np.ndarray:
        """``R``, shape (n, n), read-only."""
        return self._rotation

    @property
    def scale(self) -> float:
        """``S > 0``."""
        return self._scale

    @property
    def n(self) -> int:
        """The dimension of the space."""
        return int(self._translation.shape[0])

    @property
    def dtype(self) -> np.dtype:
        """float32 or float64."""
        return self._translation.dtype

    @property
    def linear(self) -> np.ndarray:
        """The linear part ``J = R S``, shape (n, n): the change of basis child -> parent."""
        return self._rotation * self._dtype_scalar(self._scale)

    def _dtype_scalar(self, x: float) -> Any:
        with np.errstate(all="ignore"):
            out = self.dtype.type(x)
        check_finite_result("scale", f"scale {x:.3g} in {self.dtype}", out)
        return out

    @classmethod
    def identity(cls, n: int, dtype: DTypeLike = np.float64) -> Transform:
        """The identity ``(0, id, 1)`` of n-dimensional space."""
        n = as_int(n, "n", minimum=1)
        dtype = as_float_dtype(dtype)
        check_memory(n * n * dtype.itemsize, "n", f"a {n} x {n} rotation matrix")
        return cls._make(np.zeros(n, dtype), np.eye(n, dtype=dtype), 1.0)

    @classmethod
    def from_angle(
        cls, angle: Any, translation: ArrayLike = (0.0, 0.0), scale: Any = 1.0
    ) -> Transform:
        """A 2-D transform rotating counter-clockwise by ``angle`` radians.

        ``R = [[cos, -sin], [sin, cos]]``.
        """
        theta = as_scalar(angle, "angle")
        c, s = np.cos(theta), np.sin(theta)
        T = _as_vector(translation, "translation", 2)
        S = as_scalar(scale, "scale", positive=True)
        return cls._make(T, np.array([[c, -s], [s, c]], dtype=T.dtype), S)

    @property
    def angle(self) -> float:
        """The rotation angle in radians, in (-pi, pi] (2-D only)."""
        if self.n != 2:
            raise InputError(f"angle: defined for 2-D transforms only, this one is {self.n}-D")
        return float(np.arctan2(self._rotation[1, 0], self._rotation[0, 0]))

    @classmethod
    def from_quat(
        cls, q: ArrayLike, translation: ArrayLike = (0.0, 0.0, 0.0), scale: Any = 1.0
    ) -> Transform:
        """A 3-D transform whose rotation is the unit quaternion ``q = (w, x, y, z)``.

        ``R = quat_to_matrix(q)`` (active rotation ``v' = q v q*``; see
        :func:`tumble.rotation.quat_to_matrix` for how non-unit input is treated).
        """
        q = as_float_array(q, "q", (4,))
        if q.ndim != 1:
            raise InputError(f"q: expected shape (4,), got shape {q.shape}")
        T = _as_vector(translation, "translation", 3)
        S = as_scalar(scale, "scale", positive=True)
        R = np.asarray(quat_to_matrix(q))
        check_rotation_matrix(R, "q")
        return cls._make(T, R, S)

    @classmethod
    def from_rotvec(
        cls, phi: ArrayLike, translation: ArrayLike = (0.0, 0.0, 0.0), scale: Any = 1.0
    ) -> Transform:
        """A 3-D transform rotating by ``|phi|`` radians about ``phi / |phi|``."""
        phi = as_float_array(phi, "phi", (3,))
        if phi.ndim != 1:
            raise InputError(f"phi: expected shape (3,), got shape {phi.shape}")
        T = _as_vector(translation, "translation", 3)
        S = as_scalar(scale, "scale", positive=True)
        return cls._make(T, np.asarray(rotvec_to_matrix(phi)), S)

    @_finite("points", "the transformed points")
    def __call__(self, points: ArrayLike) -> np.ndarray:
        """Apply to points: ``x -> R S x + T``.

        Parameters
        ----------
        points : array_like, shape (..., n)
            In child coordinates.

        Returns
        -------
        ndarray, shape (..., n)
            In parent coordinates; dtype is the common dtype of points and transform.
        """
        x = as_float_array(points, "points", (self.n,))
        dtype = common_dtype(x, self._translation)
        J = self.linear.astype(dtype)
        return x.astype(dtype) @ J.T + self._translation.astype(dtype)

    @_finite("other", "the composition")
    def __mul__(self, other: Transform) -> Transform:
        """Composition ``self * other``: ``other`` acts first.

        ``S3 = S2 S1``, ``R3 = R2 R1``, ``T3 = R2 S2 T1 + T2``.
        """
        if not isinstance(other, Transform):
            return NotImplemented
        if other.n != self.n:
            raise _dimension_mismatch("other", self.n, other.n)
        dtype = common_dtype(self._translation, other._translation)
        J2 = self.linear.astype(dtype)
        T = J2 @ other._translation.astype(dtype) + self._translation
        return Transform._make(T, self._rotation @ other._rotation, self._scale * other._scale)

    @_finite("scale", "the inverse")
    def inverse(self) -> Transform:
        """The inverse ``(T', R', S') = (-R^T T / S, R^T, 1 / S)``."""
        Rt = self._rotation.T
        return Transform._make(-(Rt @ self._translation) / self._scale, Rt, 1.0 / self._scale)

    @_finite("scale", "the normal matrix")
    def normal_matrix(self) -> np.ndarray:
        """The inverse transpose of the linear part, ``J^-T = R / S``, shape (n, n).

        It maps surface normals (covectors) from child to parent coordinates; with a
        uniform scale it differs from ``J`` only by the factor ``1 / S^2``.
        """
        return self._rotation / self._dtype_scalar(self._scale)

    def as_matrix(self) -> np.ndarray:
        """The augmented ``(n + 1, n + 1)`` matrix ``[[R S, T], [0, 1]]``."""
        n = self.n
        M = np.zeros((n + 1, n + 1), dtype=self.dtype)
        M[:n, :n] = self.linear
        M[:n, n] = self._translation
        M[n, n] = 1
        return M

    def __repr__(self) -> str:
        return (
            f"Transform(translation={self._translation.tolist()!r}, "
            f"rotation={self._rotation.tolist()!r}, scale={self._scale!r})"
        )


class DynamicDelta(NamedTuple):
    """Instantaneous changes of velocity, acceleration, angular velocity and acceleration.

    ``velocity``, ``acceleration`` have shape (n,); the angular ones are (n, n) skew
    matrices. The frame is stated by the method that returns it.
    """

    velocity: np.ndarray
    acceleration: np.ndarray
    angular_velocity: np.ndarray
    angular_acceleration: np.ndarray


class DynamicTransform:
    """A transform with velocity, acceleration, angular velocity and angular acceleration.

    Parameters
    ----------
    transform : Transform
        ``A = (T, R, S)`` (child to parent).
    velocity : array_like, shape (n,), optional
        ``v = dT/dt`` in parent coordinates (default zero).
    acceleration : array_like, shape (n,), optional
        ``a = dv/dt`` in parent coordinates (default zero).
    angular_velocity : array_like, shape (n, n), optional
        ``omega`` with ``dR/dt = omega R``: a skew matrix in the parent's basis (default
        zero). In 2-D a scalar ``w`` (meaning ``[[0, -w], [w, 0]]``) and in 3-D a vector
        ``w`` (meaning ``[w]x``) are accepted too; see :func:`skew2` and
        :func:`tumble.rotation.skew`.
    angular_acceleration : array_like, shape (n, n), optional
        ``alpha = d omega/dt``, same forms as ``angular_velocity``.

    Notes
    -----
    The five are read-only attributes of those names; the angular ones are stored as
    exactly skew matrices (input is accepted within a ``sqrt(eps)`` relative tolerance and
    then antisymmetrised). See the module docstring for the frames and for how scale
    enters. The scale is taken as constant in time.
    """

    __slots__ = (
        "_acceleration",
        "_angular_acceleration",
        "_angular_velocity",
        "_transform",
        "_velocity",
    )

    _transform: Transform
    _velocity: np.ndarray
    _acceleration: np.ndarray
    _angular_velocity: np.ndarray
    _angular_acceleration: np.ndarray

    def __init__(
        self,
        transform: Transform,
        velocity: ArrayLike | None = None,
        acceleration: ArrayLike | None = None,
        angular_velocity: ArrayLike | None = None,
        angular_acceleration: ArrayLike | None = None,
    ) -> None:
        if not isinstance(transform, Transform):
            raise InputError(f"transform: expected a Transform, got {type(transform).__name__}")
        n = transform.n
        zero_v, zero_w = np.zeros(n), np.zeros((n, n))
        v = _as_vector(zero_v if velocity is None else velocity, "velocity", n)
        a = _as_vector(zero_v if acceleration is None else acceleration, "acceleration", n)
        w = _as_skew(
            zero_w if angular_velocity is None else angular_velocity, "angular_velocity", n
        )
        al = _as_skew(
            zero_w if angular_acceleration is None else angular_acceleration,
            "angular_acceleration",
            n,
        )
        given = [
            x
            for x, g in zip(
                (v, a, w, al),
                (velocity, acceleration, angular_velocity, angular_acceleration),
                strict=True,
            )
            if g is not None
        ]
        dtype = common_dtype(transform.translation, *given)
        self._init(transform, v, a, w, al, dtype)

    def _init(
        self,
        transform: Transform,
        v: np.ndarray,
        a: np.ndarray,
        w: np.ndarray,
        al: np.ndarray,
        dtype: np.dtype,
    ) -> None:
        if transform.dtype != dtype:
            transform = Transform._make(
                transform.translation.astype(dtype),
                transform.rotation.astype(dtype),
                transform.scale,
            )
        self._transform = transform
        self._velocity = _frozen(v.astype(dtype))
        self._acceleration = _frozen(a.astype(dtype))
        self._angular_velocity = _frozen(w.astype(dtype))
        self._angular_acceleration = _frozen(al.astype(dtype))

    @classmethod
    def _make(
        cls,
        transform: Transform,
        v: np.ndarray,
        a: np.ndarray,
        w: np.ndarray,
        al: np.ndarray,
    ) -> DynamicTransform:
        """Build from already valid components (no checks: internal results only)."""
        out = cls.__new__(cls)
        dtype = common_dtype(transform.translation, v, a, w, al)
        out._init(transform, v, a, antisymmetric_part(w), antisymmetric_part(al), dtype)
        return out

    @property
    def transform(self) -> Transform:
        """The static part ``A = (T, R, S)``."""
        return self._transform

    @property
    def velocity(self) -> np.ndarray:
        """``v = dT/dt``, shape (n,), parent coordinates."""
        return self._velocity

    @property
    def acceleration(self) -> np.ndarray:
        """``a = d2T/dt2``, shape (n,), parent coordinates."""
        return self._acceleration

    @property
    def angular_velocity(self) -> np.ndarray:
        """``omega`` (``dR/dt = omega R``), skew, shape (n, n), parent basis."""
        return self._angular_velocity

    @property
    def angular_acceleration(self) -> np.ndarray:
        """``alpha = d omega/dt``, skew, shape (n, n), parent basis."""
        return self._angular_acceleration

    @property
    def n(self) -> int:
        """The dimension of the space."""
        return self._transform.n

    @property
    def dtype(self) -> np.dtype:
        """float32 or float64."""
        return self._velocity.dtype

    def angular_velocity_compact(self) -> float | np.ndarray:
        """``omega`` as a scalar (2-D, :func:`unskew2`) or a 3-vector (3-D, ``unskew``).

        The 3-vector is :func:`tumble.rotation.unskew` of the matrix.
        """
        return _compact(self._angular_velocity, "angular_velocity_compact")

    def angular_acceleration_compact(self) -> float | np.ndarray:
        """``alpha`` as a scalar (2-D) or a 3-vector (3-D)."""
        return _compact(self._angular_acceleration, "angular_acceleration_compact")

    @classmethod
    def identity(cls, n: int, dtype: DTypeLike = np.float64) -> DynamicTransform:
        """The identity with null dynamics: an object is at rest relative to itself."""
        A = Transform.identity(n, dtype)
        z, Z = np.zeros(A.n, A.dtype), np.zeros((A.n, A.n), A.dtype)
        return cls._make(A, z, z, Z, Z)

    def _other(self, other: Any, name: str) -> DynamicTransform:
        if not isinstance(other, DynamicTransform):
            raise InputError(f"{name}: expected a DynamicTransform, got {type(other).__name__}")
        if other.n != self.n:
            raise _dimension_mismatch(name, self.n, other.n)
        return other

    @_finite("other", "the composition")
    def __mul__(self, other: DynamicTransform) -> DynamicTransform:
        """Composition ``A3 = A2 * A1`` (``self`` is ``A2``, ``other`` is ``A1``).

        With ``J2 = R2 S2``:

        * ``v3 = v2 + J2 v1 + omega2 J2 T1``
        * ``a3 = a2 + J2 a1 + alpha2 J2 T1 + omega2^2 J2 T1 + 2 omega2 J2 v1``
        * ``omega3 = omega2 + R2 omega1 R2^T``
        * ``alpha3 = alpha2 + R2 alpha1 R2^T + [omega2, omega3]``

        If ``other`` is a node's local dynamic and ``self`` its parent's global one, the
        result is the node's global dynamic (world frame).
        """
        if not isinstance(other, DynamicTransform):
            return NotImplemented
        other = self._other(other, "other")
        A3 = self._transform * other._transform
        J2, R2 = self._transform.linear, self._transform.rotation
        w2, al2 = self._angular_velocity, self._angular_acceleration
        JT1 = J2 @ other._transform.translation
        Jv1 = J2 @ other._velocity
        v3 = self._velocity + Jv1 + w2 @ JT1
        a3 = (
            self._acceleration
            + J2 @ other._acceleration
            + al2 @ JT1
            + w2 @ (w2 @ JT1)
            + 2 * (w2 @ Jv1)
        )
        w3 = w2 + R2 @ other._angular_velocity @ R2.T
        al3 = al2 + R2 @ other._angular_acceleration @ R2.T + _commutator(w2, w3)
        return DynamicTransform._make(A3, v3, a3, w3, al3)

    @_finite("scale, velocity, acceleration", "the inverse")
    def inverse(self) -> DynamicTransform:
        """The inverse: the parent relative to the child.

        With ``J^-1 = R^T / S``:

        * ``v' = J^-1 (omega T - v)``
        * ``a' = J^-1 (alpha T - omega^2 T + 2 omega v - a)``
        * ``omega' = -R^T omega R``,  ``alpha' = -R^T alpha R``

        (expressed in the child's coordinates, which are the inverse's parent frame).
        """
        A = self._transform
        Jinv, R, T = A.inverse().linear, A.rotation, A.translation
        w, al, v, a = (
            self._angular_velocity,
            self._angular_acceleration,
            self._velocity,
            self._acceleration,
        )
        v_inv = Jinv @ (w @ T - v)
        a_inv = Jinv @ (al @ T - w @ (w @ T) + 2 * (w @ v) - a)
        return DynamicTransform._make(A.inverse(), v_inv, a_inv, -(R.T @ w @ R), -(R.T @ al @ R))

    @_finite("global_", "the local dynamic")
    def to_local(self, global_: DynamicTransform) -> DynamicTransform:
        """The local dynamic ``A1 = A2^-1 * A3`` of a child whose global dynamic is ``global_``.

        ``self`` is the parent's global dynamic ``A2``; with ``J2 = R2 S2``:

        * ``v1 = J2^-1 (v3 - v2 - omega2 (T3 - T2))``
        * ``a1 = J2^-1 (a3 - a2 - (alpha2 - omega2^2)(T3 - T2) - 2 omega2 (v3 - v2))``
        * ``omega1 = R2^T (omega3 - omega2) R2``
        * ``alpha1 = R2^T (alpha3 - alpha2 + [omega3, omega2]) R2``

        The result is in the parent's coordinates (the child's local frame conventions).
        """
        g = self._other(global_, "global_")
        A2 = self._transform
        A2inv = A2.inverse()
        Jinv, R2 = A2inv.linear, A2.rotation
        w2, al2 = self._angular_velocity, self._angular_acceleration
        dT = g._transform.translation - A2.translation
        dv = g._velocity - self._velocity
        v1 = Jinv @ (dv - w2 @ dT)
        a1 = Jinv @ (
            g._acceleration - self._acceleration - (al2 @ dT - w2 @ (w2 @ dT)) - 2 * (w2 @ dv)
        )
        w1 = R2.T @ (g._angular_velocity - w2) @ R2
        al1 = R2.T @ (g._angular_acceleration - al2 + _commutator(g._angular_velocity, w2)) @ R2
        return DynamicTransform._make(A2inv * g._transform, v1, a1, w1, al1)

    def _vector(self, x: Any, name: str) -> np.ndarray:
        return _as_vector(x, name, self.n)

    def _skew(self, x: Any, name: str) -> np.ndarray:
        return _as_skew(x, name, self.n)

    # Local-to-global deltas: self is the parent's global dynamic A2, the arguments are
    # instantaneous changes of the child's local dynamic; the transforms do not change.

    @_finite("dv", "the global change")
    def delta_velocity(self, dv: ArrayLike) -> np.ndarray:
        """Global change of a child's velocity from a local change: ``dv3 = J2 dv1``.

        ``self`` is the parent's global dynamic; ``dv`` (shape (n,)) is in parent
        coordinates, the result in world coordinates.
        """
        return self._transform.linear @ self._vector(dv, "dv")

    @_finite("dv, da", "the global change")
    def delta_acceleration(self, dv: ArrayLike, da: ArrayLike) -> np.ndarray:
        """Global change of a child's acceleration: ``da3 = J2 da1 + 2 omega2 dv3``.

        ``dv``, ``da`` (shape (n,)) are the local changes (parent coordinates); the Coriolis
        term ``2 omega2 J2 v1`` of the composition makes a velocity change move the global
        acceleration too. Result in world coordinates.
        """
        J2 = self._transform.linear
        dv3 = J2 @ self._vector(dv, "dv")
        return J2 @ self._vector(da, "da") + 2 * (self._angular_velocity @ dv3)

    @_finite("dw", "the global change")
    def delta_angular_velocity(self, dw: ArrayLike) -> np.ndarray:
        """Global change of a child's angular velocity: ``dw3 = R2 dw1 R2^T``.

        ``dw`` is an (n, n) skew matrix (or its 2-D scalar / 3-D vector form) in the
        parent's basis; the result is an (n, n) skew matrix in the world basis.
        """
        R2 = self._transform.rotation
        return antisymmetric_part(R2 @ self._skew(dw, "dw") @ R2.T)

    @_finite("dw, dalpha", "the global change")
    def delta_angular_acceleration(self, dw: ArrayLike, dalpha: ArrayLike) -> np.ndarray:
        """Global change of a child's angular acceleration.

        ``dalpha3 = R2 dalpha1 R2^T + [omega2, dw3]`` with ``dw3 = R2 dw1 R2^T``; ``dw``,
        ``dalpha`` are local (parent basis), the result is world basis.
        """
        R2 = self._transform.rotation
        dw3 = R2 @ self._skew(dw, "dw") @ R2.T
        return antisymmetric_part(
            R2 @ self._skew(dalpha, "dalpha") @ R2.T + _commutator(self._angular_velocity, dw3)
        )

    # Global-to-local deltas: the local change of a child that produces a given global one.

    @_finite("dv", "the local change")
    def delta_velocity_to_local(self, dv: ArrayLike) -> np.ndarray:
        """Local change producing the global velocity change ``dv``: ``dv1 = J2^-1 dv3``."""
        return self._transform.inverse().linear @ self._vector(dv, "dv")

    @_finite("dv, da", "the local change")
    def delta_acceleration_to_local(self, dv: ArrayLike, da: ArrayLike) -> np.ndarray:
        """Local acceleration change for global changes ``dv``, ``da``.

        ``da1 = J2^-1 (da3 - 2 omega2 dv3)`` (world in, parent coordinates out).
        """
        dv3 = self._vector(dv, "dv")
        return self._transform.inverse().linear @ (
            self._vector(da, "da") - 2 * (self._angular_velocity @ dv3)
        )

    @_finite("dw", "the local change")
    def delta_angular_velocity_to_local(self, dw: ArrayLike) -> np.ndarray:
        """Local angular velocity change for a global one: ``dw1 = R2^T dw3 R2``."""
        R2 = self._transform.rotation
        return antisymmetric_part(R2.T @ self._skew(dw, "dw") @ R2)

    @_finite("dw, dalpha", "the local change")
    def delta_angular_acceleration_to_local(self, dw: ArrayLike, dalpha: ArrayLike) -> np.ndarray:
        """Local angular acceleration change: ``dalpha1 = R2^T (dalpha3 + [dw3, omega2]) R2``."""
        R2 = self._transform.rotation
        inner = self._skew(dalpha, "dalpha") + _commutator(
            self._skew(dw, "dw"), self._angular_velocity
        )
        return antisymmetric_part(R2.T @ inner @ R2)

    @_finite("local, dv, da, dw, dalpha", "the child's global change")
    def inherited_delta(
        self,
        local: DynamicTransform,
        dv: ArrayLike | None = None,
        da: ArrayLike | None = None,
        dw: ArrayLike | None = None,
        dalpha: ArrayLike | None = None,
    ) -> DynamicDelta:
        """Global change of a locally unmodified child when its parent changes globally.

        ``self`` is the parent's global dynamic *before* the change, ``local`` the child's
        local dynamic, and ``dv``, ``da``, ``dw``, ``dalpha`` the parent's global changes
        (world frame; omitted ones are zero). With ``J2 = R2 S2``:

        * ``dv3 = dv2 + dw2 J2 T1``
        * ``da3 = da2 + (dalpha2 + dw2 omega2 + omega2 dw2 + dw2^2) J2 T1 + 2 dw2 J2 v1``
        * ``dw3 = dw2``
        * ``dalpha3 = dalpha2 + [dw2, omega3 - omega2]``  (``omega3 - omega2 = R2 omega1 R2^T``)

        Exact (not linearised): ``(A2 + d) * A1 - A2 * A1`` to round-off.
        """
        local = self._other(local, "local")
        n = self.n
        z, Z = np.zeros(n), np.zeros((n, n))
        dv2 = self._vector(z if dv is None else dv, "dv")
        da2 = self._vector(z if da is None else da, "da")
        dw2 = self._skew(Z if dw is None else dw, "dw")
        dal2 = self._skew(Z if dalpha is None else dalpha, "dalpha")
        J2, R2, w2 = self._transform.linear, self._transform.rotation, self._angular_velocity
        JT1 = J2 @ local._transform.translation
        dv3 = dv2 + dw2 @ JT1
        da3 = (
            da2
            + (dal2 + dw2 @ w2 + w2 @ dw2 + dw2 @ dw2) @ JT1
            + 2 * (dw2 @ (J2 @ local._velocity))
        )
        W1 = R2 @ local._angular_velocity @ R2.T
        dal3 = dal2 + _commutator(dw2, W1)
        dtype = self.dtype
        return DynamicDelta(
            dv3.astype(dtype),
            da3.astype(dtype),
            dw2.astype(dtype),
            antisymmetric_part(dal3).astype(dtype),
        )

    def __repr__(self) -> str:
        return (
            f"DynamicTransform({self._transform!r}, velocity={self._velocity.tolist()!r}, "
            f"acceleration={self._acceleration.tolist()!r}, "
            f"angular_velocity={self._angular_velocity.tolist()!r}, "
            f"angular_acceleration={self._angular_acceleration.tolist()!r})"
        )


def _compact(W: np.ndarray, name: str) -> float | np.ndarray:
    n = W.shape[-1]
    if n == 2:
        return float(unskew2(W))
    if n == 3:
        return axial_vector(W)
    raise InputError(f"{name}: compact forms exist in 2-D and 3-D only, this is {n}-D")
