"""Interoperability with SciPy's ``Rotation``: the quaternion order handled in one place.

SciPy stores quaternions scalar last ``(x, y, z, w)``; tumble scalar first ``(w, x, y, z)``.
SciPy is imported when one of these functions is called.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from tumble._errors import InputError
from tumble.rotation.operands import rotation_quats


def from_scipy(rotation: Any) -> np.ndarray:
    """Scalar-first quaternions of a SciPy ``Rotation`` (single or stacked).

    SciPy stores scalar-last ``(x, y, z, w)``; this reorders to tumble's ``(w, x, y, z)``.
    Same rotation, same sign as SciPy's ``as_quat()``.

    Parameters
    ----------
    rotation : scipy.spatial.transform.Rotation

    Returns
    -------
    ndarray, shape (4,) for a single rotation, else (*rotation.shape, 4), float64
    """
    from scipy.spatial.transform import Rotation

    if not isinstance(rotation, Rotation):
        raise InputError(
            f"rotation: expected a scipy.spatial.transform.Rotation, got {type(rotation).__name__}"
        )
    return np.ascontiguousarray(rotation.as_quat()[..., [3, 0, 1, 2]])


def to_scipy(q: ArrayLike) -> Any:
    """SciPy ``Rotation`` of scalar-first quaternions ``q`` (reordered to scalar last).

    Parameters
    ----------
    q : array_like, shape (4,) or (..., 4)
        Nonzero quaternions (SciPy normalises them). Batches with more than one leading
        axis need a SciPy that supports N-d rotations (1.17 or later).

    Returns
    -------
    scipy.spatial.transform.Rotation
        Single for shape ``(4,)``, stacked otherwise.
    """
    from scipy.spatial.transform import Rotation

    q = rotation_quats(q, "q")
    return Rotation.from_quat(q[..., [1, 2, 3, 0]].astype(np.float64))
