"""Small linear-algebra helpers shared by :mod:`tumble.rotation` and :mod:`tumble.transform`.

NumPy only, and no tumble import: the modules above both build on this one, so neither has
to import the other for a cross-product matrix. The helpers take validated float arrays
(the callers check shapes and dtypes) and broadcast over leading axes.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["antisymmetric_part", "axial_vector", "cross_matrix"]


def cross_matrix(w: NDArray[np.floating]) -> NDArray[np.floating]:
    """``[w]×`` of ``(..., 3)`` vectors, so that ``[w]× v = w × v``.

    ``[w]× = [[0, -w3, w2], [w3, 0, -w1], [-w2, w1, 0]]``, shape ``(..., 3, 3)``, same
    dtype; exact.
    """
    out = np.zeros((*w.shape[:-1], 3, 3), dtype=w.dtype)
    x, y, z = w[..., 0], w[..., 1], w[..., 2]
    out[..., 0, 1], out[..., 0, 2] = -z, y
    out[..., 1, 0], out[..., 1, 2] = z, -x
    out[..., 2, 0], out[..., 2, 1] = -y, x
    return out


def axial_vector(W: NDArray[np.floating]) -> NDArray[np.floating]:
    """``w`` with ``[w]× = (W - Wᵀ)/2`` of ``(..., 3, 3)`` matrices, shape ``(..., 3)``.

    The inverse of :func:`cross_matrix` on antisymmetric matrices; of any other matrix it
    keeps the antisymmetric part and drops the symmetric one.
    """
    return 0.5 * np.stack(
        [W[..., 2, 1] - W[..., 1, 2], W[..., 0, 2] - W[..., 2, 0], W[..., 1, 0] - W[..., 0, 1]],
        axis=-1,
    )


def antisymmetric_part(W: NDArray[np.floating]) -> NDArray[np.floating]:
    """``(W - Wᵀ)/2`` of ``(..., n, n)`` matrices: exactly skew, whatever the round-off in ``W``."""
    return 0.5 * (W - np.swapaxes(W, -1, -2))
