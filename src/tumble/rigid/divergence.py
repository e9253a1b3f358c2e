"""Non-finite results of :func:`tumble.rigid.step` and :func:`tumble.rigid.simulate`.

From a finite, validated state a step gives NaN or infinity for one of two reasons, told
apart by when it happens. On the first step the inputs are so large that float64
overflows inside the step: :func:`check_step` raises :class:`~tumble.InputError` naming
them (the first of the two rules for bad input, ``docs/limitations.md``). Later on the
method diverged (``explicit`` does after ``O(1/dt²)`` steps): :func:`warn_divergence`
warns with :class:`DivergenceWarning` and the records stay as computed.

NumPy only: :mod:`tumble.rigid` imports :class:`DivergenceWarning` without numba.
"""

from __future__ import annotations

import warnings

import numpy as np

from tumble._errors import InputError, TumbleWarning

__all__ = ["DivergenceWarning"]


class DivergenceWarning(TumbleWarning):
    """:func:`tumble.rigid.simulate` produced non-finite records: the method diverged.

    Some methods genuinely blow up (``explicit`` after ``O(1/dt²)`` steps, see
    ``docs/integrators.md``); the records are kept, NaN or infinite from the first diverged
    one on, and the message gives that record and its time. Callers that expect and detect a blow-up
    pass ``on_divergence="ignore"``.
    """


def check_step(
    name: str,
    q1: np.ndarray,
    w1: np.ndarray,
    L0: np.ndarray,
    batch: tuple[int, ...],
    with_torque: bool,
) -> None:
    """Raise if one step from a finite, validated state gave NaN or infinity, or a zero
    quaternion (the normalisation of a quaternion whose squared norm overflowed).

    The inputs were finite, so the magnitudes overflowed float64 inside the step: as in
    :mod:`tumble.kinematics`, the error names the inputs whose size is to blame.
    """
    bad = ~(
        np.all(np.isfinite(q1), axis=-1)
        & np.any(q1 != 0.0, axis=-1)
        & np.all(np.isfinite(w1), axis=-1)
    )
    if not np.any(bad):
        return
    where = np.unravel_index(int(np.argmax(bad)), batch) if batch else ()
    names = "q, omega, inv_inertia, " + ("torque, " if with_torque else "") + "dt"
    cause = "the body momentum L = I omega" if not np.all(np.isfinite(L0)) else "the step"
    raise InputError(
        f"{names}: values so large that {cause} overflows float64 in method {name!r} "
        f"(first at batch index {tuple(int(i) for i in where)}); expected |omega| dt and "
        "|L| well below 1e150"
    )


def warn_divergence(name: str, t: np.ndarray, q: np.ndarray, w: np.ndarray, e: np.ndarray) -> None:
    """Warn (:class:`DivergenceWarning`) if any record of ``(n_rec, n, ·)`` is non-finite.

    Called by :func:`tumble.rigid.simulate` itself: the warning points at its caller."""
    bad = ~(np.all(np.isfinite(q), axis=-1) & np.all(np.isfinite(w), axis=-1) & np.isfinite(e))
    if not np.any(bad):
        return
    rec = np.any(bad, axis=1)
    r = int(np.argmax(rec))
    warnings.warn(
        f"method {name!r} diverged: records are non-finite from record {r} (t = {t[r]:.6g}) "
        f"on, in {int(np.sum(bad[-1]))} of {bad.shape[1]} bodies at the end; the records are "
        "kept (NaN or inf after the blow-up). Take a smaller dt or a stable method.",
        DivergenceWarning,
        stacklevel=3,
    )
