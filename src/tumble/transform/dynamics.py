"""The dynamics of a transform: velocity, acceleration, angular velocity and acceleration.

:class:`DynamicTransform` and :class:`DynamicDelta` (module :mod:`tumble.transform` states
the conventions and frames).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from tumble._errors import InputError
from tumble._linalg import antisymmetric_part
from tumble._validate import common_dtype
from tumble.transform.group import Transform
from tumble.transform.operands import as_vector, dimension_mismatch, finite, finite_parts, frozen
from tumble.transform.skew import as_skew, compact

__all__ = ["DynamicDelta", "DynamicTransform"]


def _commutator(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return A @ B - B @ A


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
        v = as_vector(zero_v if velocity is None else velocity, "velocity", n)
        a = as_vector(zero_v if acceleration is None else acceleration, "acceleration", n)
        w = as_skew(zero_w if angular_velocity is None else angular_velocity, "angular_velocity", n)
        al = as_skew(
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
        self._velocity = frozen(v.astype(dtype))
        self._acceleration = frozen(a.astype(dtype))
        self._angular_velocity = frozen(w.astype(dtype))
        self._angular_acceleration = frozen(al.astype(dtype))

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
        return compact(self._angular_velocity, "angular_velocity_compact")

    def angular_acceleration_compact(self) -> float | np.ndarray:
        """``alpha`` as a scalar (2-D) or a 3-vector (3-D)."""
        return compact(self._angular_acceleration, "angular_acceleration_compact")

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
            raise dimension_mismatch(name, self.n, other.n)
        return other

    @finite("other", "the composition")
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

    @finite("scale, velocity, acceleration", "the inverse")
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

    @finite("global_", "the local dynamic")
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
        return as_vector(x, name, self.n)

    def _skew(self, x: Any, name: str) -> np.ndarray:
        return as_skew(x, name, self.n)

    # Local-to-global deltas: self is the parent's global dynamic A2, the arguments are
    # instantaneous changes of the child's local dynamic; the transforms do not change.

    @finite("dv", "the global change")
    def delta_velocity(self, dv: ArrayLike) -> np.ndarray:
        """Global change of a child's velocity from a local change: ``dv3 = J2 dv1``.

        ``self`` is the parent's global dynamic; ``dv`` (shape (n,)) is in parent
        coordinates, the result in world coordinates.
        """
        return self._transform.linear @ self._vector(dv, "dv")

    @finite("dv, da", "the global change")
    def delta_acceleration(self, dv: ArrayLike, da: ArrayLike) -> np.ndarray:
        """Global change of a child's acceleration: ``da3 = J2 da1 + 2 omega2 dv3``.

        ``dv``, ``da`` (shape (n,)) are the local changes (parent coordinates); the Coriolis
        term ``2 omega2 J2 v1`` of the composition makes a velocity change move the global
        acceleration too. Result in world coordinates.
        """
        J2 = self._transform.linear
        dv3 = J2 @ self._vector(dv, "dv")
        return J2 @ self._vector(da, "da") + 2 * (self._angular_velocity @ dv3)

    @finite("dw", "the global change")
    def delta_angular_velocity(self, dw: ArrayLike) -> np.ndarray:
        """Global change of a child's angular velocity: ``dw3 = R2 dw1 R2^T``.

        ``dw`` is an (n, n) skew matrix (or its 2-D scalar / 3-D vector form) in the
        parent's basis; the result is an (n, n) skew matrix in the world basis.
        """
        R2 = self._transform.rotation
        return antisymmetric_part(R2 @ self._skew(dw, "dw") @ R2.T)

    @finite("dw, dalpha", "the global change")
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

    @finite("dv", "the local change")
    def delta_velocity_to_local(self, dv: ArrayLike) -> np.ndarray:
        """Local change producing the global velocity change ``dv``: ``dv1 = J2^-1 dv3``."""
        return self._transform.inverse().linear @ self._vector(dv, "dv")

    @finite("dv, da", "the local change")
    def delta_acceleration_to_local(self, dv: ArrayLike, da: ArrayLike) -> np.ndarray:
        """Local acceleration change for global changes ``dv``, ``da``.

        ``da1 = J2^-1 (da3 - 2 omega2 dv3)`` (world in, parent coordinates out).
        """
        dv3 = self._vector(dv, "dv")
        return self._transform.inverse().linear @ (
            self._vector(da, "da") - 2 * (self._angular_velocity @ dv3)
        )

    @finite("dw", "the local change")
    def delta_angular_velocity_to_local(self, dw: ArrayLike) -> np.ndarray:
        """Local angular velocity change for a global one: ``dw1 = R2^T dw3 R2``."""
        R2 = self._transform.rotation
        return antisymmetric_part(R2.T @ self._skew(dw, "dw") @ R2)

    @finite("dw, dalpha", "the local change")
    def delta_angular_acceleration_to_local(self, dw: ArrayLike, dalpha: ArrayLike) -> np.ndarray:
        """Local angular acceleration change: ``dalpha1 = R2^T (dalpha3 + [dw3, omega2]) R2``."""
        R2 = self._transform.rotation
        inner = self._skew(dalpha, "dalpha") + _commutator(
            self._skew(dw, "dw"), self._angular_velocity
        )
        return antisymmetric_part(R2.T @ inner @ R2)

    @finite("local, dv, da, dw, dalpha", "the child's global change")
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


@finite_parts.register
def _dynamic_transform_parts(x: DynamicTransform) -> tuple[Any, ...]:
    return (
        *finite_parts(x.transform),
        x.velocity,
        x.acceleration,
        x.angular_velocity,
        x.angular_acceleration,
    )
