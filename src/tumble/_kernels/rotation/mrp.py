"""Modified Rodrigues parameters and powers: the conversions of one element and their loops.

``mrp_to_q`` lives with the formulas (the Cayley quaternion is the same map); the loops
follow :mod:`tumble._kernels.rotation.loops` (operands of :mod:`tumble._kernels.dispatch`,
counts of flagged rows).
"""

from __future__ import annotations

import math

from tumble._kernels import inner, twins
from tumble._kernels.dispatch import load3, load4, load_scalar
from tumble._kernels.rotation.formulas import mrp_to_q, q_to_rotvec, quat_ok, rotvec_to_q
from tumble._kernels.rotation.loops import U1, U2, U3, U4, nonfinite


@inner
def q_to_mrp(q):
    """Modified Rodrigues parameters ``u / (1 + w)`` of ``q/|q|``, the set with ``|p| <= 1``.

    The ``w >= 0`` representative is used, so ``|p| = tan(θ/4) <= 1``; scale invariant:
    ``p = s u / (|q| + |w|)`` with ``s`` the sign of ``w``.
    """
    w, x, y, z = q
    n = math.sqrt(w * w + x * x + y * y + z * z)
    s = 1.0 if w >= 0.0 else -1.0
    k = s / (n + abs(w))
    return (k * x, k * y, k * z)


@inner
def qpower(q, s):
    """``q^s = exp(s log q)`` of ``q/|q|`` on the short arc: rotation vector times ``s``."""
    phi = q_to_rotvec(q)
    return rotvec_to_q((s * phi[0], s * phi[1], s * phi[2]))


@inner
def _quat_to_mrp_at(i, q, tiny, out):
    """``out = q_to_mrp(q)``; 1 if the row is flagged (as ``_quat_power_at``)."""
    qi = load4(q, i)
    r = q_to_mrp(qi)
    j = U3 * i
    out[j], out[j + U1], out[j + U2] = r
    return (0 if quat_ok(qi, tiny) else 1) | nonfinite(r)


quat_to_mrp_serial, quat_to_mrp_parallel = twins(_quat_to_mrp_at, 3)


@inner
def _mrp_to_quat_at(i, p, out):
    """``out = mrp_to_q(p)``; 1 if the result is not finite."""
    r = mrp_to_q(load3(p, i))
    j = U4 * i
    out[j], out[j + U1], out[j + U2], out[j + U3] = r
    return nonfinite(r)


mrp_to_quat_serial, mrp_to_quat_parallel = twins(_mrp_to_quat_at, 4)


@inner
def _quat_power_at(i, q, s, tiny, out):
    """``out = q^s``; 1 if the row is flagged: ``|q|²`` not a finite normal number, or a
    non-finite result."""
    qi = load4(q, i)
    r = qpower(qi, load_scalar(s, i))
    j = U4 * i
    out[j], out[j + U1], out[j + U2], out[j + U3] = r
    return (0 if quat_ok(qi, tiny) else 1) | nonfinite(r)


quat_power_serial, quat_power_parallel = twins(_quat_power_at, 4)
