"""The recorded states of a rigid-body simulation.

:class:`Trajectory` is what :func:`tumble.rigid.simulate` returns and what
:mod:`tumble.diagnostics`, :mod:`tumble.scenarios`, ``tumble compare``, the lab and sweeps
read. It holds arrays with the record index first and any batch of bodies after it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Trajectory"]


@dataclass(frozen=True)
class Trajectory:
    """Recorded states of :func:`tumble.rigid.simulate`; the record index comes first.

    Attributes
    ----------
    t : ndarray, shape (n_records,)
        Record times, ``t[0] = 0`` and ``t[-1] = steps * dt``.
    q : ndarray, shape (n_records, ..., 4)
        Body-to-world unit quaternions.
    omega : ndarray, shape (n_records, ..., 3)
        World angular velocity.
    L : ndarray, shape (n_records, ..., 3)
        World angular momentum ``I_w omega``.
    L_body : ndarray, shape (n_records, ..., 3)
        Body-frame angular momentum ``Rᵀ L``.
    energy : ndarray, shape (n_records, ...)
        Kinetic energy ``½ omega·L``.
    """

    t: np.ndarray
    q: np.ndarray
    omega: np.ndarray
    L: np.ndarray
    L_body: np.ndarray
    energy: np.ndarray
