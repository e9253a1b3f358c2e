"""The recorded states of a rigid-body simulation.

:class:`Trajectory` is what :func:`tumble.rigid.simulate` returns and what
:mod:`tumble.diagnostics`, :mod:`tumble.scenarios`, ``tumble compare``, the lab and sweeps
read. It holds arrays with the record index first and any batch of bodies after it.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, SupportsIndex

import numpy as np
from numpy.typing import ArrayLike

from tumble._errors import InputError
from tumble._validate import as_int, check_memory

__all__ = ["Trajectory", "record_count", "record_steps"]

_Index = slice | SupportsIndex | ArrayLike


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

    def take(
        self,
        records: _Index = slice(None),
        bodies: slice
        | SupportsIndex
        | ArrayLike
        | tuple[slice | SupportsIndex | ArrayLike, ...]
        | None = None,
    ) -> Trajectory:
        """The sub-trajectory of some records and some bodies.

        ``records`` indexes the record axis: a slice (``slice(n)``: the first ``n``
        records), an integer array, a boolean mask of length ``n_records``, or an int,
        which keeps the record axis with that one record (a trajectory always has it).
        ``bodies`` indexes the batch axes as NumPy does after the record axis: an int (one
        body: its batch axis goes away), a slice, an integer array, a boolean mask, or a
        tuple of those for several batch axes; ``None`` (the default) keeps every body,
        also of a trajectory without batch axes. The two are applied one after the other,
        so integer arrays for both select their product, not pairs.

        Returns
        -------
        Trajectory
            ``t`` of shape ``(n_taken,)``, ``q`` of shape ``(n_taken, *batch_taken, 4)``
            and so on; views where NumPy indexing gives views.
        """
        batch = self.energy.shape[1:]
        parts: tuple[Any, ...] = (
            () if bodies is None else bodies if isinstance(bodies, tuple) else (bodies,)
        )
        used = sum(int(np.ndim(p)) if np.asarray(p).dtype == bool else 1 for p in parts)
        if used > len(batch) or any(p is Ellipsis or p is None for p in parts):
            raise InputError(
                f"bodies: expected indices (ints, slices, integer or boolean arrays) for at "
                f"most the {len(batch)} batch axes of shape {batch}, got {bodies!r}"
            )
        # NumPy's own index forms, checked by NumPy below; its errors (a zero slice step,
        # an index beyond int64) become ours.
        try:
            rows: Any = records
            if not isinstance(rows, slice) and np.ndim(rows) == 0:
                rows = [operator.index(rows)]
            t = self.t[rows]
        except (IndexError, TypeError, ValueError, OverflowError) as exc:
            raise InputError(
                f"records: expected a slice, an int, an integer array or a boolean mask "
                f"over {self.t.shape[0]} records, got {records!r} ({exc})"
            ) from None
        index = (slice(None), *parts)
        try:
            arrays = {
                name: getattr(self, name)[rows][index]
                for name in ("q", "omega", "L", "L_body", "energy")
            }
        except (IndexError, TypeError, ValueError, OverflowError) as exc:
            raise InputError(
                f"bodies: expected indices within the batch shape {batch}, got {bodies!r} ({exc})"
            ) from None
        return Trajectory(t=t, **arrays)


def record_count(steps: int, every: int) -> int:
    """Number of records of a run of ``steps >= 0`` steps recorded every ``every >= 1``:
    ``floor(steps/every) + 1``, plus one when ``every`` does not divide ``steps`` (the final
    step is always recorded)."""
    steps = as_int(steps, "steps", minimum=0)
    every = as_int(every, "every", minimum=1)
    return steps // every + 1 + (1 if steps % every else 0)


def record_steps(steps: int, every: int) -> np.ndarray:
    """Step index of each record (:func:`record_count` of them): ``0, every, 2 every, ...``
    and ``steps`` last, as :func:`tumble.rigid.simulate` records them (int64)."""
    n = record_count(steps, every)
    check_memory(8 * n, "steps, every", "the record indices")
    # The multiples of every below steps, then steps: no product passes steps, so none
    # overflows int64 (arange(0, steps, every) would count them in floating point).
    return np.append(np.arange(n - 1, dtype=np.int64) * np.int64(every), np.int64(steps))
