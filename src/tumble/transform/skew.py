"""Angular quantities in 2-D and 3-D: skew matrices and their compact forms.

An angular velocity or acceleration of n-D space is an n x n skew matrix. In 2-D it is
``[[0, -w], [w, 0]]`` (:func:`skew2`, :func:`unskew2`), in 3-D the cross-product matrix
``[w]x`` (:func:`tumble.rotation.skew`); :class:`~tumble.transform.DynamicTransform` accepts
and returns either form.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from tumble._errors import InputError
from tumble._linalg import antisymmetric_part, axial_vector, cross_matrix
from tumble._validate import as_float_array, check_skew

__all__ = ["skew2", "unskew2"]


def as_skew(x: Any, name: str, n: int) -> np.ndarray:
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


def compact(W: np.ndarray, name: str) -> float | np.ndarray:
    n = W.shape[-1]
    if n == 2:
        return float(unskew2(W))
    if n == 3:
        return axial_vector(W)
    raise InputError(f"{name}: compact forms exist in 2-D and 3-D only, this is {n}-D")
