"""The group of similarity transforms ``x -> R S x + T`` of n-dimensional space.

:class:`Transform` (module :mod:`tumble.transform` states the conventions and frames).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from tumble._errors import InputError
from tumble._validate import (
    as_float_array,
    as_float_dtype,
    as_int,
    as_scalar,
    check_finite_result,
    check_memory,
    check_rotation_matrix,
    common_dtype,
)
from tumble.rotation import quat_to_matrix, rotvec_to_matrix
from tumble.transform.operands import as_vector, dimension_mismatch, finite, finite_parts, frozen

__all__ = ["Transform"]


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
        T = as_vector(translation, "translation", n)
        S = as_scalar(scale, "scale", positive=True)
        dtype = common_dtype(T, R)
        self._init(T.astype(dtype), R.astype(dtype), S)

    def _init(self, T: np.ndarray, R: np.ndarray, S: float) -> None:
        self._translation = frozen(T)
        self._rotation = frozen(R)
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
        T = as_vector(translation, "translation", 2)
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
        T = as_vector(translation, "translation", 3)
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
        T = as_vector(translation, "translation", 3)
        S = as_scalar(scale, "scale", positive=True)
        return cls._make(T, np.asarray(rotvec_to_matrix(phi)), S)

    @finite("points", "the transformed points")
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

    @finite("other", "the composition")
    def __mul__(self, other: Transform) -> Transform:
        """Composition ``self * other``: ``other`` acts first.

        ``S3 = S2 S1``, ``R3 = R2 R1``, ``T3 = R2 S2 T1 + T2``.
        """
        if not isinstance(other, Transform):
            return NotImplemented
        if other.n != self.n:
            raise dimension_mismatch("other", self.n, other.n)
        dtype = common_dtype(self._translation, other._translation)
        J2 = self.linear.astype(dtype)
        T = J2 @ other._translation.astype(dtype) + self._translation
        return Transform._make(T, self._rotation @ other._rotation, self._scale * other._scale)

    @finite("scale", "the inverse")
    def inverse(self) -> Transform:
        """The inverse ``(T', R', S') = (-R^T T / S, R^T, 1 / S)``."""
        Rt = self._rotation.T
        return Transform._make(-(Rt @ self._translation) / self._scale, Rt, 1.0 / self._scale)

    @finite("scale", "the normal matrix")
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


@finite_parts.register
def _transform_parts(x: Transform) -> tuple[Any, ...]:
    return (x.translation, x.scale if x.scale > 0.0 else np.inf)
