"""Exact torque-free motion of a rigid body: spherical, symmetric and asymmetric tops.

The body frame is the principal frame, the inertia is given by its principal inverse
moments ``J = diag(J1, J2, J3)`` (``inv_inertia``), ``q`` maps body to world coordinates and
``omega`` is the world-frame angular velocity (``docs/conventions.md``). The world angular
momentum ``L_w = R L_b`` and the energy ``E = ½ L_b·J L_b`` are constants of the motion.

Which solution is used, per body (``docs/exact.md`` has the maths):

* **uniform rotation** ``q(t) = exp(omega0 t / 2) ⊗ q0``, ``L_b`` constant: ``L = 0``, a
  spherical body, a steady spin about a principal axis of an asymmetric body (``k = omega
  × L = 0``), and any body with a zero inverse moment (see below);
* **symmetric top** (two moments equal to ``EQUAL_RTOL``), closed form
  ``q(t) = exp(J⊥ L_w t / 2) ⊗ q0 ⊗ exp(Ω t e_a / 2)``, ``Ω = (J∥ - J⊥) L_b,a``;
* **asymmetric top**: body ``L`` from Jacobi elliptic functions (both circulation regimes),
  hyperbolic functions on the separatrix, and the world orientation from the constant
  direction of ``L_w`` plus the angle about it, an incomplete elliptic integral of the third
  kind (reference ``shared/reference/rigid-body-integrators.md`` §4.2 and §4.3).

The elliptic functions are evaluated here, after argument reduction to ``[-K, K]``, with
the complementary parameter ``1 - m`` passed in exactly (from
``J2 |L|² - 2E = (J2 - J1) L1² + (J2 - J3) L3²``, never by subtraction from ``m``): by the
AGM for ``m <= 1/2`` and by ascending Landen transformations for ``m > 1/2``, which keep
``cn`` and ``dn`` relatively accurate where they are tiny (near the separatrix). SciPy's
``ellipj(u, m)`` cannot be used there: it takes ``m``, so ``1 - m`` below ~1e-8 has lost
digits before the call, for ``1 - m < 1e-9`` it switches to a first-order expansion valid
only for ``u < K`` (scipy#8480), and its AGM loses the relative accuracy of small ``cn``.
The third-kind integral uses SciPy's Carlson ``elliprj`` in the form ``Π(n; am u) - u``,
with the reference axis of the orientation frame chosen per body so that ``|n| <= 1``.
The accuracy is measured in ``docs/exact.md``.

Zero inverse moments (axes that cannot turn) follow the constraint model of
:mod:`tumble.rigid`: the momentum about a held axis is absorbed by the constraint. Then
``omega_b`` has no component about the held axes and the free components obey
``I_i d(omega_i)/dt = 0``, so the body turns uniformly about the fixed world axis
``omega0``. An ``omega0`` with a component about a held axis (more than
``HELD_AXIS_RTOL |omega0|``) is physically impossible and raises :class:`tumble.InputError`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import elliprf, elliprj

from tumble import rotation
from tumble._errors import InputError
from tumble._validate import as_float_array, broadcast_leading, common_dtype

__all__ = [
    "EQUAL_RTOL",
    "HELD_AXIS_RTOL",
    "MAX_PHASE",
    "UNIT_RTOL",
    "body_period",
    "polhode",
    "torque_free",
    "torque_free_from_momentum",
]

#: Two inverse moments count as equal (symmetric path) when they differ by at most this
#: times the largest one: a few float64 ulps. The symmetric formula's error grows like
#: ``|ΔJ| |L| t``, so only round-off-level differences may take it; the asymmetric path is
#: accurate for any larger difference (tested down to 3e-15 relative).
EQUAL_RTOL = 8 * np.finfo(np.float64).eps

#: Largest accepted body component of ``omega0`` about an axis with ``J_i = 0``, relative
#: to ``|omega0|`` (per dtype): round-off of the world-to-body rotation passes, a real
#: spin about a held axis does not. The accepted residue is dropped.
HELD_AXIS_RTOL = {np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-8}

_EPS = np.finfo(np.float64).eps
_MAX_ITER = 40
_M1_FLOOR = 1e-100
_STEADY_FLOOR = 1e-280


# --------------------------------------------------------------------------------------
# validation


def _prepare(
    q0: ArrayLike, omega0: ArrayLike, inv_inertia: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple[int, ...], np.dtype]:
    """Validate a state; return ``(q, omega_w, L_b, J)`` flattened to ``(n_bodies, ·)``.

    All float64; also the batch shape and the dtype of the result.
    """
    q = rotation.unit_quat(q0, "q0")
    w = as_float_array(omega0, "omega0", (3,))
    J = as_float_array(inv_inertia, "inv_inertia", (3,))
    batch = broadcast_leading(q0=(q, 1), omega0=(w, 1), inv_inertia=(J, 1))
    dtype = common_dtype(q, w, J)
    if np.any(J < 0):
        raise InputError(
            f"inv_inertia: expected inverse moments >= 0, got minimum {float(np.min(J)):.6g}"
        )
    nb = int(np.prod(batch, dtype=np.int64))
    qf = np.broadcast_to(q, (*batch, 4)).reshape(nb, 4).astype(np.float64)
    # Normalised again in float64: a float32 q0 carries float32 round-off of its norm.
    qf = qf / np.linalg.norm(qf, axis=-1, keepdims=True)
    wf = np.broadcast_to(w, (*batch, 3)).reshape(nb, 3).astype(np.float64)
    Jf = np.broadcast_to(J, (*batch, 3)).reshape(nb, 3).astype(np.float64)
    wb = rotation.quat_rotate(rotation.quat_conjugate(qf), wf)
    held = Jf == 0.0
    with np.errstate(over="ignore"):  # an overflowing |omega0|² is reported below
        wnorm = np.linalg.norm(wf, axis=-1, keepdims=True)
    if np.any(held & (np.abs(wb) > HELD_AXIS_RTOL[w.dtype] * wnorm)):
        raise InputError(
            "omega0: a body with a zero inverse moment cannot turn about that principal "
            "axis, but omega0 has a body-frame component about it "
            f"(relative size > {HELD_AXIS_RTOL[w.dtype]:g})"
        )
    wb = np.where(held, 0.0, wb)
    with np.errstate(over="ignore"):
        Lb = np.divide(wb, Jf, out=np.zeros_like(wb), where=~held)
        # |L|², and the largest rate of the motion, J_max |L| (>= |omega_b(t)| for all t),
        # must be finite: the solution squares L and scales angles by these rates.
        rate = np.max(Jf, axis=-1) * np.sqrt(np.sum(Lb * Lb, axis=-1))
    if not np.all(np.isfinite(rate)):
        raise InputError(
            "omega0, inv_inertia: the angular momentum L_b = omega0_b / J (or J_max |L|) "
            "overflows float64; expected |omega0| / min(J) and J_max/J_min |omega0| below "
            "about 1e154"
        )
    wf = rotation.quat_rotate(qf, wb)
    return qf, wf, Lb, Jf, batch, dtype


#: Largest accepted ``J_max |L| |t|`` (a bound on every angle the solution forms, in
#: radians): beyond it squared angles overflow float64. Any phase above ~1e15 rad has no
#: correct digit left anyway (one ulp of it exceeds 0.1 rad).
MAX_PHASE = 1e150


def _check_phase(Lb: np.ndarray, J: np.ndarray, t: np.ndarray) -> None:
    """Raise naming ``t`` if the angles of the motion up to ``max |t|`` would overflow."""
    if t.size == 0 or Lb.shape[0] == 0:
        return
    rate = float(np.max(np.max(J, axis=-1) * np.linalg.norm(Lb, axis=-1)))
    with np.errstate(over="ignore"):
        phase = rate * float(np.max(np.abs(t)))
    if not phase <= MAX_PHASE:
        raise InputError(
            f"t: expected |t| J_max |L| <= {MAX_PHASE:g} (the rotation angle reached), got "
            f"|t| = {float(np.max(np.abs(t))):.3g} with J_max |L| = {rate:.3g}"
        )


def _times(t: ArrayLike) -> np.ndarray:
    return as_float_array(t, "t").astype(np.float64)


# --------------------------------------------------------------------------------------
# special functions with the complementary parameter m1 = 1 - m given exactly


def _jacobi_reduced(
    u: np.ndarray, m: np.ndarray, m1: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``sn, cn, dn`` of ``u`` (``|u| <= K``) for ``0 <= m < 1`` given with ``m1 = 1 - m``.

    ``m <= 1/2``: descending Gauss transformation (:func:`_jacobi_agm`). ``m > 1/2``:
    ascending Landen transformation (:func:`_jacobi_landen`), whose ``cn`` and ``dn`` keep
    their relative accuracy where they are small (near the separatrix); the AGM loses it
    there, which would spoil the third-kind integral built from them.
    """
    u, m, m1 = np.broadcast_arrays(u, m, m1)
    sn, cn, dn = np.empty_like(u), np.empty_like(u), np.empty_like(u)
    low = m <= 0.5
    sn[low], cn[low], dn[low] = _jacobi_agm(u[low], m[low], m1[low])
    high = ~low
    sn[high], cn[high], dn[high] = _jacobi_landen(u[high], m[high], m1[high])
    return sn, cn, dn


def _jacobi_agm(
    u: np.ndarray, m: np.ndarray, m1: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Descending Gauss transformation (AGM), for ``m <= 1/2``.

    ``a0 = 1``, ``b0 = sqrt(m1)``, ``c0 = sqrt(m)``; ``c_{n+1} = c_n² / (4 a_{n+1})`` (the
    cancellation-free form of ``(a_n - b_n)/2``, which matters for small ``m``);
    ``φ_N = 2^N a_N u``, ``φ_{n-1} = (φ_n + asin(c_n/a_n sin φ_n)) / 2``;
    ``sn = sin φ0``, ``cn = cos φ0``, ``dn = sqrt(cn² + m1 sn²)`` (a sum of nonnegative
    terms, never the 0/0 of the classical ``cn / cos(φ1 - φ0)``).
    """
    a = np.ones_like(u)
    b = np.sqrt(m1) * a
    c = np.sqrt(m) * a
    ratios = []
    for _ in range(_MAX_ITER):
        if not np.any(c > _EPS * a):
            break
        a_next = 0.5 * (a + b)
        c = c * c / (4.0 * a_next)
        b = np.sqrt(a * b)
        a = a_next
        ratios.append(c / a)
    phi = 2.0 ** len(ratios) * a * u
    for r in reversed(ratios):
        phi = 0.5 * (phi + np.arcsin(r * np.sin(phi)))
    sn = np.sin(phi)
    cn = np.cos(phi)
    return sn, cn, np.sqrt(cn * cn + m1 * sn * sn)


def _jacobi_landen(
    u: np.ndarray, m: np.ndarray, m1: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ascending Landen transformation (DLMF 22.7.iii), for ``m > 1/2``.

    ``κ' = m1 / (1 + sqrt m)²`` (the new complementary modulus, computed from ``m1``
    without cancellation), ``μ = 4 sqrt(m) / (1 + sqrt m)²``, ``μ1 = κ'²``,
    ``v = u / (1 + κ')``; ``μ1`` squares at every step, so after a few steps
    ``μ1 cosh² v`` is below round-off and ``sn = tanh v``, ``cn = dn = sech v`` hold
    exactly. Back down:
    ``sn = (1 + κ') sn cn / dn``, ``cn = (1 + κ')/μ (dn² - κ') / dn``,
    ``dn = (1 - κ')/μ (dn² + κ') / dn`` (right sides at parameter ``μ``).
    """
    steps = []
    z = u
    for _ in range(_MAX_ITER):
        if not np.any(m1 * np.cosh(np.minimum(np.abs(z), 350.0)) ** 2 > _EPS**2):
            break
        r = np.sqrt(m)
        kp = m1 / (1.0 + r) ** 2
        m = 4.0 * r / (1.0 + r) ** 2
        m1 = kp * kp
        z = z / (1.0 + kp)
        steps.append((kp, m))
    sn = np.tanh(z)
    cn = _sech(z)
    dn = cn
    for kp, mu in reversed(steps):
        sn, cn, dn = (
            (1.0 + kp) * sn * cn / dn,
            (1.0 + kp) / mu * (dn * dn - kp) / dn,
            (1.0 - kp) / mu * (dn * dn + kp) / dn,
        )
    return sn, cn, dn


def _pi_minus_u(n: np.ndarray, sn: np.ndarray, cn: np.ndarray, dn: np.ndarray) -> np.ndarray:
    """``Π(n; am u | m) - u = ∫0^u n sn² v / (1 - n sn² v) dv`` for ``|u| <= K``, by Carlson.

    ``Π = sn R_F(cn², dn², 1) + (n/3) sn³ R_J(cn², dn², 1, 1 - n sn²)`` and the first term
    is ``F(am u | m) = u``; ``n < 0`` here, so ``R_J`` has no principal-value case.
    """
    s2 = sn * sn
    return (n / 3.0) * sn * s2 * elliprj(cn * cn, dn * dn, 1.0, 1.0 - n * s2)


def _sech(u: np.ndarray) -> np.ndarray:
    e = np.exp(-np.abs(u))
    return 2.0 * e / (1.0 + e * e)


# --------------------------------------------------------------------------------------
# per-body set-up of the asymmetric solution


def _signed_sort(J: np.ndarray) -> np.ndarray:
    """Proper signed permutations ``P`` (n, 3, 3) with ``(P J Pᵀ)`` diagonal descending."""
    order = np.argsort(-J, axis=-1, kind="stable")
    n = J.shape[0]
    P = np.zeros((n, 3, 3))
    P[np.arange(n)[:, None], np.arange(3)[None, :], order] = 1.0
    # An odd permutation is made proper by negating its last row; Euler's equations are
    # invariant under proper rotations that map principal axes to principal axes.
    P[:, 2, :] *= np.linalg.det(P)[:, None]
    return P


def _invariants(
    Lb: np.ndarray, J: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Sorting ``P``, sorted ``J``, sorted scaled ``L`` and ``G``, ``H``, ``D2`` per ``|L|²``.

    ``G = 2E - J3 |L|²``, ``H = J1 |L|² - 2E``, ``D2 = J2 |L|² - 2E`` as sums of terms: the
    first two without cancellation, the third with only the cancellation that is the real
    distance to the separatrix. Scaling ``L`` by a power of two is exact, so a state exactly
    on the separatrix in the caller's numbers stays exactly on it (``D2 == 0``).
    """
    P = _signed_sort(J)
    Js = np.take_along_axis(J, np.argsort(-J, axis=-1, kind="stable"), axis=-1)
    _, e = np.frexp(np.max(np.abs(Lb), axis=-1))
    Ls = np.einsum("nij,nj->ni", P, np.ldexp(Lb, -e[:, None]))
    d12, d13, d23 = Js[:, 0] - Js[:, 1], Js[:, 0] - Js[:, 2], Js[:, 1] - Js[:, 2]
    L1, L2, L3 = Ls[:, 0] ** 2, Ls[:, 1] ** 2, Ls[:, 2] ** 2
    n2 = L1 + L2 + L3
    with np.errstate(divide="ignore", invalid="ignore"):
        G = (d13 * L1 + d23 * L2) / n2
        H = (d12 * L2 + d13 * L3) / n2
        D2 = (d23 * L3 - d12 * L1) / n2
    return P, Js, Ls, G, H, D2


class _Asymmetric:
    """Constants of the asymmetric solution for ``n`` bodies (reference §4.2, §4.3).

    Sorted coordinates ``P x_b`` have ``J1 > J2 > J3`` and the circulating component made
    positive; there ``L = |L| (a1 cn, a2 sn, a3 dn)`` in case A (``2E < J2 |L|²``, L
    circulates about e3) and ``|L| (a1 dn, a2 sn, a3 cn)`` in case B (about e1), with
    ``u = u0 + ω_p t``. *Frame* coordinates put the reference axis of ``B(L)`` third: the
    sorted ones for reference e3, cycled ``(y, z, x)`` for reference e1. ``self.P`` maps
    body to frame coordinates.
    """

    def __init__(self, Lb: np.ndarray, J: np.ndarray) -> None:
        Lnorm = np.linalg.norm(Lb, axis=-1)
        P, Js, Ls, G, H, D2 = _invariants(Lb, J)
        J1, J3 = Js[:, 0], Js[:, 2]
        d12, d13, d23 = Js[:, 0] - Js[:, 1], Js[:, 0] - Js[:, 2], Js[:, 1] - Js[:, 2]
        case_a = D2 >= 0.0
        self.separatrix = D2 == 0.0
        s_a = np.where(Ls[:, 2] < 0.0, -1.0, 1.0)
        s_b = np.where(Ls[:, 0] < 0.0, -1.0, 1.0)
        flip = np.where(
            case_a[:, None],
            np.stack([np.ones_like(s_a), s_a, s_a], axis=-1),
            np.stack([s_b, np.ones_like(s_b), s_b], axis=-1),
        )
        # On the separatrix the case-A solution has L1 > 0: the other heteroclinic orbit
        # is reached by the half turn about axis 3.
        turn = self.separatrix & (Ls[:, 0] * flip[:, 0] < 0.0)
        flip[turn, :2] *= -1.0
        P = flip[:, :, None] * P
        Lsorted = np.einsum("nij,nj->ni", P, Lb) / Lnorm[:, None]
        # Reference axis of the frame B(L) (§4.3): e3 or e1 of the sorted frame. Either
        # gives psi' = |L| [J_ref ± (J1 - J3) / (1 - n sn² u)]; the choice keeps |n| <= 1.
        # With |n| >> 1 (a nearly symmetric body in its near-equatorial regime) the
        # integrand has a spike of width 1/sqrt|n| and Π is a small difference of large
        # Carlson terms; the other axis turns that n into -G/H or -H/G, which is then small.
        self.ref_e3 = np.where(case_a, d12 <= d23, d12 < d23)
        cycle = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
        P = np.where(self.ref_e3[:, None, None], P, cycle @ P)

        # np.where evaluates both regimes' formulas; the unused one may divide by zero.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            sq = np.sqrt
            # sorted-frame amplitudes: L = (a1 cn, a2 sn, a3 dn) in case A,
            # (a1 dn, a2 sn, a3 cn) in case B
            a1 = sq(G / d13)
            a2 = np.where(case_a, sq(G / d23), sq(H / d12))
            a3 = sq(H / d13)
            wp = Lnorm * np.where(case_a, sq(d23 * H), sq(d12 * G))
            m = np.where(case_a, d12 * G / (d23 * H), d23 * H / (d12 * G))
            m1 = np.where(case_a, d13 * D2 / (d23 * H), d13 * -D2 / (d12 * G))
            n = np.where(
                case_a,
                np.where(self.ref_e3, -d12 / d23, -G / H),
                np.where(self.ref_e3, -H / G, -d23 / d12),
            )
            sn0 = Lsorted[:, 1] / a2
            cn0 = np.where(case_a, Lsorted[:, 0] / a1, Lsorted[:, 2] / a3)
        r = np.hypot(sn0, cn0)
        sn0, cn0 = sn0 / r, cn0 / r
        # Off the separatrix, 1 - m below 1e-100 (an orbit passing within ~1e-50 |L| of
        # the unstable median axis) is raised to it: a change far below the round-off of
        # L_b itself (1e-16 |L| from rotating omega0 into the body), while SciPy's R_J
        # loses accuracy for arguments below ~1e-140 and R_F, R_J return inf near the
        # subnormal range.
        m1 = np.where(self.separatrix, 0.0, np.maximum(m1, _M1_FLOOR))
        m = np.where(self.separatrix, 1.0, m)
        sep = self.separatrix
        reg = ~sep
        K = np.full_like(m, np.inf)
        K[reg] = elliprf(0.0, m1[reg], 1.0)
        # Π(n|m) - K(m), the complete counterpart of V below.
        Vc = np.full_like(m, np.inf)
        Vc[reg] = n[reg] / 3.0 * elliprj(0.0, m1[reg], 1.0, 1.0 - n[reg])
        dn0 = np.sqrt(cn0 * cn0 + m1 * sn0 * sn0)
        u0 = np.zeros_like(m)
        base = sn0[reg] * elliprf(cn0[reg] ** 2, dn0[reg] ** 2, 1.0)
        u0[reg] = np.where(
            cn0[reg] >= 0.0, base, np.where(sn0[reg] >= 0.0, 2.0, -2.0) * K[reg] - base
        )
        u0[sep] = np.arcsinh(sn0[sep] / cn0[sep])

        self.P = P
        self.case_a = case_a
        # The in-plane vector circulates (winds by π per 2K) when the reference axis is the
        # one L circulates about; otherwise it stays in a half plane.
        self.circulates = self.ref_e3 == case_a
        self.Lnorm = Lnorm
        self.amp = np.stack([a1, a2, a3], axis=-1)
        self.wp = wp
        self.m, self.m1, self.n, self.K, self.Vc, self.u0 = m, m1, n, K, Vc, u0
        self.J1, self.J3, self.d13 = J1, J3, d13

    def period(self) -> np.ndarray:
        """``4 K(m) / ω_p`` (infinite on the separatrix)."""
        return 4.0 * self.K / self.wp

    def _frame(self, sn: np.ndarray, cn: np.ndarray, dn: np.ndarray) -> np.ndarray:
        """Frame components of ``L / |L|`` from the elliptic functions."""
        a = self.case_a
        Ls = np.stack(
            [
                self.amp[:, 0] * np.where(a, cn, dn),
                self.amp[:, 1] * sn,
                self.amp[:, 2] * np.where(a, dn, cn),
            ],
            axis=-1,
        )
        return np.where(self.ref_e3[:, None], Ls, Ls[..., [1, 2, 0]])

    def evaluate(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Frame ``L_f / |L|``, half-angle ``(cos, sin)`` of ``ϕ``, ``V(u)``, ``θ``.

        ``u`` has shape ``(..., n)``. ``ϕ`` and ``θ`` are the azimuth and polar angle of
        ``L_f`` about the third frame axis; ``ϕ`` is continuous in ``u`` and its multiple-of-π
        part enters the half angle exactly. ``V(u) = Π(n; am u | m) - u``: the callers need
        ``Π(u) - Π(u0) = ω_p t + V(u) - V(u0)``, and with ``u - u0`` taken exactly the
        difference has no cancellation of the O(u) parts, which ``1/ω_p`` would amplify
        when ``ω_p`` is small (nearly symmetric bodies).
        """
        sep, reg = self.separatrix, ~self.separatrix
        sn = np.empty_like(u)
        cn = np.empty_like(u)
        dn = np.empty_like(u)
        V = np.empty_like(u)
        j = np.zeros(u.shape)
        if np.any(reg):
            K, m, m1, n = self.K[reg], self.m[reg], self.m1[reg], self.n[reg]
            ur = u[..., reg]
            # u = u_r + 2jK with |u_r| <= K: sn, cn change sign with j, dn does not, and
            # Π(n; φ + jπ) = Π(n; φ) + 2jΠ(n|m), so V(u) = V(u_r) + 2j (Π(n|m) - K).
            jr = np.rint(ur / (2.0 * K))
            ur = ur - 2.0 * jr * K
            s, c, d = _jacobi_reduced(ur, m, m1)
            # cn >= 0 on |u_r| <= K; the abs only removes round-off (and -0.0) at u_r = ±K.
            c = np.abs(c)
            V[..., reg] = _pi_minus_u(n, s, c, d) + 2.0 * jr * self.Vc[reg]
            sn[..., reg], cn[..., reg], dn[..., reg] = s, c, d
            j[..., reg] = jr
        if np.any(sep):
            us = u[..., sep]
            nn = self.n[sep]
            cc = np.sqrt(-nn)
            sn[..., sep] = np.tanh(us)
            cn[..., sep] = dn[..., sep] = _sech(us)
            # Π(n; gd u | 1) = [u + c atan(c tanh u)] / (1 - n), c = sqrt(-n): closed form,
            # finite for every u (the Carlson form would need sech² u, which underflows).
            V[..., sep] = (nn * us + cc * np.arctan(cc * np.tanh(us))) / (1.0 - nn)
        sign = 1.0 - 2.0 * np.mod(j, 2.0)
        Lr = self._frame(sn, cn, dn)
        Lf = self._frame(sign * sn, sign * cn, dn)
        # A circulating in-plane vector stays in a half plane on the reduced interval and
        # turns by π per 2K shift (counter-clockwise in case A, clockwise in case B): its
        # azimuth is atan2 of the reduced components plus that multiple of π, whose half
        # angle is taken exactly. A librating one stays in a half plane for every u.
        circ = self.circulates
        src = np.where(circ[:, None], Lr, Lf)
        half = 0.5 * np.arctan2(src[..., 1], src[..., 0])
        cr, sr = np.cos(half), np.sin(half)
        turns = np.where(circ, np.where(self.case_a, j, -j), 0.0)
        k = np.mod(turns, 4.0).astype(np.int64)
        ck = np.choose(k, [1.0, 0.0, -1.0, 0.0])
        sk = np.choose(k, [0.0, 1.0, 0.0, -1.0])
        half_cs = np.stack([cr * ck - sr * sk, sr * ck + cr * sk], axis=-1)
        theta = np.arctan2(np.hypot(Lf[..., 0], Lf[..., 1]), Lf[..., 2])
        return Lf, half_cs, V, theta


def _quat_z(c: np.ndarray, s: np.ndarray) -> np.ndarray:
    z = np.zeros_like(c)
    return np.stack([c, z, z, s], axis=-1)


def _quat_y(angle: np.ndarray) -> np.ndarray:
    z = np.zeros_like(angle)
    return np.stack([np.cos(0.5 * angle), z, np.sin(0.5 * angle), z], axis=-1)


def _classify(
    Lb: np.ndarray, J: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Masks ``(uniform, symmetric, asymmetric, steady)``; the unique axis of symmetric bodies.

    ``steady`` (a subset of ``uniform``) marks asymmetric bodies spinning about a principal
    axis.
    """
    tol = EQUAL_RTOL * np.max(J, axis=-1)
    e12 = np.abs(J[:, 1] - J[:, 2]) <= tol
    e02 = np.abs(J[:, 0] - J[:, 2]) <= tol
    e01 = np.abs(J[:, 0] - J[:, 1]) <= tol
    spherical = e01 & e12
    symmetric = ~spherical & (e01 | e02 | e12)
    Lnorm = np.linalg.norm(Lb, axis=-1)
    uniform = (Lnorm == 0.0) | np.any(J == 0.0, axis=-1) | spherical
    # k = omega × L = 0 for an asymmetric body exactly when L is along a principal axis.
    # Anywhere else, however close, the elliptic solution is accurate, so only components
    # below 1e-140 of |L| (squares below 1e-280: zero, or so small that the amplitudes
    # built from them would lose digits to subnormal arithmetic) count as zero.
    _, _, Ls, _, _, _ = _invariants(Lb, J)
    L1, L2, L3 = Ls[:, 0] ** 2, Ls[:, 1] ** 2, Ls[:, 2] ** 2
    off = np.stack([L1 + L2, L2 + L3, L1 + L3], axis=-1) <= _STEADY_FLOOR * (L1 + L2 + L3)[:, None]
    steady = np.any(off, axis=-1) & ~(uniform | symmetric)
    axis = np.where(e12, 0, np.where(e02, 1, 2))
    return uniform | steady, symmetric & ~uniform, ~(uniform | symmetric | steady), steady, axis


def _solve(
    q: np.ndarray, w: np.ndarray, Lb: np.ndarray, J: np.ndarray, t: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``q(t)`` (nt, nb, 4), ``omega(t)`` (nt, nb, 3) and ``L_b(t)`` (nt, nb, 3), float64."""
    nt, nb = t.shape[0], q.shape[0]
    q_out = np.empty((nt, nb, 4))
    w_out = np.empty((nt, nb, 3))
    L_out = np.empty((nt, nb, 3))
    uniform, symmetric, general, _, axis = _classify(Lb, J)
    tt = t[:, None, None]

    if np.any(uniform):
        qu, wu = q[uniform], w[uniform]
        q_out[:, uniform] = rotation.quat_multiply(rotation.rotvec_to_quat(wu * tt), qu)
        w_out[:, uniform] = wu
        L_out[:, uniform] = Lb[uniform]

    if np.any(symmetric):
        qs, Ls, Js, a = q[symmetric], Lb[symmetric], J[symmetric], axis[symmetric]
        ns = qs.shape[0]
        J_par = Js[np.arange(ns), a]
        J_perp = 0.5 * (np.sum(Js, axis=-1) - J_par)
        e = np.zeros((ns, 3))
        e[np.arange(ns), a] = 1.0
        Omega = (J_par - J_perp) * Ls[np.arange(ns), a]
        Lw = rotation.quat_rotate(qs, Ls)
        spin = rotation.rotvec_to_quat((Omega[:, None] * e) * tt)
        precess = rotation.rotvec_to_quat((J_perp[:, None] * Lw) * tt)
        qt = rotation.quat_multiply(precess, rotation.quat_multiply(qs, spin))
        Lt = rotation.quat_rotate(rotation.quat_conjugate(spin), Ls)
        q_out[:, symmetric] = qt
        L_out[:, symmetric] = Lt
        w_out[:, symmetric] = rotation.quat_rotate(qt, Js * Lt)

    if np.any(general):
        qg, Lg, Jg = q[general], Lb[general], J[general]
        A = _Asymmetric(Lg, Jg)
        # Row 0 is the initial state, evaluated by the same code so that t = 0 gives q0.
        u = A.u0 + A.wp * np.concatenate([[0.0], t])[:, None]
        Lf, hcs, V, theta = A.evaluate(u)
        Lf, hcs0, hcs, V0, V, theta0, theta = (
            Lf[1:],
            hcs[:1],
            hcs[1:],
            V[:1],
            V[1:],
            theta[:1],
            theta[1:],
        )
        J_ref = np.where(A.ref_e3, A.J3, A.J1)
        sgn = np.where(A.ref_e3, 1.0, -1.0)
        # ψ, the angle about L_w: |L| [J_ref t ± (J1 - J3)/ω_p (Π(u) - Π(u0))] (§4.3),
        # with Π(u) - Π(u0) = ω_p t + V(u) - V(u0).
        tt1 = t[:, None]
        psi = A.Lnorm * (J_ref * tt1 + sgn * A.d13 * (tt1 + (V - V0) / A.wp))
        Lw = rotation.quat_rotate(qg, Lg)
        Lw_hat = Lw / A.Lnorm[:, None]
        q_psi = rotation.rotvec_to_quat(psi[..., None] * Lw_hat)
        # B(L) = Rz(ϕ) Ry(θ) Rz(π) in frame coordinates, so B(L0) B(L)ᵀ = Rz(ϕ0) Ry(θ0-θ) Rz(-ϕ).
        c, s = hcs[..., 0], hcs[..., 1]
        qm = rotation.quat_multiply(_quat_y(theta0 - theta), _quat_z(c, -s))
        qm = rotation.quat_multiply(_quat_z(hcs0[..., 0], hcs0[..., 1]), qm)
        qP = rotation.matrix_to_quat(A.P)
        qm = rotation.quat_multiply(rotation.quat_conjugate(qP), rotation.quat_multiply(qm, qP))
        qt = rotation.quat_multiply(q_psi, rotation.quat_multiply(qg, qm))
        Lt = np.einsum("nji,tnj->tni", A.P, Lf) * A.Lnorm[:, None]
        q_out[:, general] = qt
        L_out[:, general] = Lt
        w_out[:, general] = rotation.quat_rotate(qt, Jg * Lt)
    return q_out, w_out, L_out


# --------------------------------------------------------------------------------------
# public functions


def torque_free(
    q0: ArrayLike, omega0: ArrayLike, inv_inertia: ArrayLike, t: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Exact torque-free motion ``(q(t), omega(t))`` from ``(q0, omega0)`` at time 0.

    Solves ``dL_w/dt = 0``, ``dq/dt = ½ omega ⊗ q`` with ``omega = R J Rᵀ L_w`` in closed
    form (module docstring, ``docs/exact.md``): uniform rotation, the symmetric-top formula
    ``q(t) = exp(J⊥ L_w t/2) ⊗ q0 ⊗ exp(Ω t e_a/2)`` with ``Ω = (J∥ - J⊥) L_b,a``, or, for
    an asymmetric body, ``L_b(t)`` from Jacobi elliptic functions and
    ``R(t) = Q(ψ(t) L̂_w) R0 B(L_b0) B(L_b(t))ᵀ`` with ``ψ`` an elliptic integral of the
    third kind. Both circulation regimes and the separatrix (hyperbolic functions) are
    covered; ``1 - m`` is computed without cancellation and the argument is reduced
    modulo ``2K`` before the elliptic functions are evaluated.

    Parameters
    ----------
    q0 : array_like, shape (..., 4)
        Initial orientation, body to world, scalar first; any nonzero quaternion, read as
        ``q0/|q0|`` like everywhere in tumble (zero, or ``|q0|²`` overflowing, raises).
    omega0 : array_like, shape (..., 3)
        Initial angular velocity, **world** frame. With a zero inverse moment it may not
        have a body component about that axis (``HELD_AXIS_RTOL``). ``L_b = omega0_b / J``,
        ``|L_b|²`` and ``J_max |L_b|`` must be finite in float64, else
        :class:`tumble.InputError` names ``omega0, inv_inertia``.
    inv_inertia : array_like, shape (..., 3)
        Principal inverse moments ``J_i >= 0`` (body frame = principal frame). A zero is
        an axis held by a constraint: the body then turns uniformly about ``omega0``.
    t : array_like, any shape
        Times since the initial state (any sign), with ``|t| J_max |L| <= MAX_PHASE``
        (1e150 rad; far larger than any phase with a correct digit).

    Returns
    -------
    q : ndarray, shape t.shape + batch + (4,)
        Orientations; time axes first, then the broadcast batch of the three state
        arguments. Continuous in ``t`` (no sign jumps).
    omega : ndarray, shape t.shape + batch + (3,)
        World angular velocities.

    Notes
    -----
    Accuracy (``docs/exact.md``): against a DOP853 solution (rtol 1e-13) over five body
    periods of random bodies, attitude within 7e-12 rad (median 5e-13) and body ``L``
    within 2e-12 of ``|L|`` (median 3e-14), mostly the ODE's own error. Near the
    separatrix the motion itself is ill-conditioned: a relative perturbation ``δ`` of the
    state grows to about ``δ / (1 - m)`` over one passage near the unstable axis, and the
    result is as accurate as that allows (backward stable).
    All arithmetic is float64; the result has the dtype of ``q0``, ``omega0`` and
    ``inv_inertia`` combined (float32 only if all three are), whatever the dtype of ``t``.
    Cost: about 0.7 ms per call plus 1-10 µs per (time, body): one AGM or a few Landen
    steps, one Carlson ``R_J`` and a few quaternion products.
    """
    q, w, Lb, J, batch, dtype = _prepare(q0, omega0, inv_inertia)
    tt = _times(t)
    _check_phase(Lb, J, tt)
    qt, wt, _ = _solve(q, w, Lb, J, tt.ravel())
    return (
        qt.reshape(tt.shape + batch + (4,)).astype(dtype),
        wt.reshape(tt.shape + batch + (3,)).astype(dtype),
    )


#: Largest accepted ``| |q0| - 1 |`` of :func:`torque_free_from_momentum`, which uses
#: ``q0`` as given: a recorded attitude is unit to round-off, far inside this.
UNIT_RTOL = 1e-6


def torque_free_from_momentum(
    q0: ArrayLike, L_body0: ArrayLike, inv_inertia: ArrayLike, t: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`torque_free` from the body-frame angular momentum instead of ``omega0``.

    The state a :class:`tumble.trajectory.Trajectory` records is ``(q, L_body)``; starting
    from it directly spares the round trip ``L_b -> omega -> L_b`` and its last-bit changes,
    so scores computed from a trajectory are reproducible to the bit. ``q0`` is used as
    given (not renormalised) and must be unit to :data:`UNIT_RTOL`; ``L_body0`` on an axis
    with ``J_i = 0`` is ignored (the constraint holds it, as in :mod:`tumble.rigid`).
    Same motion, accuracy and cost as :func:`torque_free`: ``omega0 = R0 J L_body0``.

    Parameters
    ----------
    q0 : array_like, shape (..., 4)
        Unit body-to-world quaternion at ``t = 0``.
    L_body0 : array_like, shape (..., 3)
        Body-frame angular momentum at ``t = 0``.
    inv_inertia : array_like, shape (..., 3)
        Principal inverse moments, ``>= 0``.
    t : array_like, shape (nt,) or scalar
        Times.

    Returns
    -------
    q : ndarray, shape (nt, ..., 4)
    omega : ndarray, shape (nt, ..., 3)
        World angular velocity; float64.
    """
    q = as_float_array(q0, "q0", (4,)).astype(np.float64)
    Lb = as_float_array(L_body0, "L_body0", (3,)).astype(np.float64)
    J = as_float_array(inv_inertia, "inv_inertia", (3,)).astype(np.float64)
    batch = broadcast_leading(q0=(q, 1), L_body0=(Lb, 1), inv_inertia=(J, 1))
    if np.any(J < 0):
        raise InputError(
            f"inv_inertia: expected inverse moments >= 0, got minimum {float(np.min(J)):.6g}"
        )
    off = np.abs(np.linalg.norm(q, axis=-1) - 1.0)
    if np.any(~(off <= UNIT_RTOL)):
        raise InputError(
            f"q0: expected unit quaternions (| |q0| - 1 | <= {UNIT_RTOL:g}), got "
            f"| |q0| - 1 | = {float(np.max(off)):.3g}"
        )
    nb = int(np.prod(batch, dtype=np.int64))
    qf = np.ascontiguousarray(np.broadcast_to(q, (*batch, 4))).reshape(nb, 4)
    Jf = np.ascontiguousarray(np.broadcast_to(J, (*batch, 3))).reshape(nb, 3)
    Lf = np.where(Jf > 0, np.broadcast_to(Lb, (*batch, 3)).reshape(nb, 3), 0.0)
    with np.errstate(over="ignore"):
        rate = np.max(Jf, axis=-1) * np.sqrt(np.sum(Lf * Lf, axis=-1))
    if not np.all(np.isfinite(rate)):
        raise InputError(
            "L_body0, inv_inertia: |L|² and the largest rate J_max |L| must be finite in "
            "float64 (expected |L_body0| well below 1e150)"
        )
    tt = _times(t)
    _check_phase(Lf, Jf, tt)
    qt, wt, _ = _solve(qf, rotation.quat_rotate(qf, Jf * Lf), Lf, Jf, tt.ravel())
    return qt.reshape(tt.shape + batch + (4,)), wt.reshape(tt.shape + batch + (3,))


def body_period(q0: ArrayLike, omega0: ArrayLike, inv_inertia: ArrayLike) -> np.ndarray:
    """Period of the body-frame angular momentum ``L_b(t)`` of the torque-free motion.

    * asymmetric body: ``T = 4 K(m) / ω_p`` (reference §4.2); infinite on the separatrix
      (``2E = J2 |L|²``, including a spin about the median axis), where the motion is
      heteroclinic. For a steady spin about the axis of largest or smallest moment the
      limit of nearby orbits is returned, ``2π / (|L| sqrt((J1 - J3)(J2 - J3)))`` resp.
      ``2π / (|L| sqrt((J1 - J2)(J1 - J3)))`` (``J1 > J2 > J3``);
    * symmetric body: ``2π / |Ω|``, ``Ω = (J∥ - J⊥) L_b,a`` (infinite when ``Ω = 0``);
    * ``L = 0``, spherical body, or a zero inverse moment: ``L_b`` is constant, ``inf``.

    ``L_b(t + T) = L_b(t)``; the attitude is not periodic in general (it turns about
    ``L_w`` by an angle that is incommensurate with ``2π``).

    Parameters
    ----------
    q0, omega0, inv_inertia : array_like, shapes (..., 4), (..., 3), (..., 3)
        As in :func:`torque_free`.

    Returns
    -------
    ndarray, shape batch
        Periods (time units of ``1/omega``), dtype of the inputs combined.
    """
    q, _, Lb, J, batch, dtype = _prepare(q0, omega0, inv_inertia)
    _, symmetric, general, steady, axis = _classify(Lb, J)
    T = np.full(q.shape[0], np.inf)
    if np.any(symmetric):
        Ls, Js, a = Lb[symmetric], J[symmetric], axis[symmetric]
        idx = np.arange(Ls.shape[0])
        J_perp = 0.5 * (np.sum(Js, axis=-1) - Js[idx, a])
        Omega = (Js[idx, a] - J_perp) * Ls[idx, a]
        with np.errstate(divide="ignore"):
            T[symmetric] = 2.0 * np.pi / np.abs(Omega)
    # A steady spin about the axis of largest or smallest J gets the limit of nearby orbits
    # (m = 0, K = π/2); about the median axis it lies on the separatrix (inf).
    periodic = general | steady
    if np.any(periodic):
        with np.errstate(divide="ignore", invalid="ignore"):
            T[periodic] = _Asymmetric(Lb[periodic], J[periodic]).period()
    return T.reshape(batch).astype(dtype)[()]


def polhode(inv_inertia: ArrayLike, energy_factor: float, points: int = 129) -> np.ndarray:
    """The polhodes of a free body: where body-frame ``L`` can go at a given energy.

    Torque-free motion keeps ``|L|`` and ``2E = L_b·J L_b`` constant, so the unit vector
    ``u = L_b / |L|`` stays on the intersection of the unit sphere with the ellipsoid
    ``u·J u = J_L`` (``J_L = 2E / |L|²``, the energy factor). With the inverse moments
    sorted, ``J_a <= J_b <= J_c``:

    * ``J_L <= J_b``: loops about the ``a`` axis, ``u_b = √((J_L - J_a)/(J_b - J_a)) cos s``,
      ``u_c = √((J_L - J_a)/(J_c - J_a)) sin s``, ``u_a = ±√(1 - u_b² - u_c²)``;
    * ``J_L > J_b``: loops about the ``c`` axis, ``u_a = √((J_c - J_L)/(J_c - J_a)) cos s``,
      ``u_b = √((J_c - J_L)/(J_c - J_b)) sin s``, ``u_c = ±√(1 - u_a² - u_b²)``.

    ``J_L = J_b`` gives the separatrix (the four arcs between the ``±b`` axes, as two loops).

    Parameters
    ----------
    inv_inertia : array_like, shape (3,)
        Principal inverse moments ``J`` (``>= 0``, not all equal: a spherical body's ``L_b``
        does not move).
    energy_factor : float
        ``J_L`` in ``[min J, max J]``.
    points : int, optional
        Points per loop (``>= 3``); each loop is closed (its last point is its first).

    Returns
    -------
    ndarray, shape (2, points, 3)
        The two mirror-image loops (``u_a > 0`` and ``< 0``, resp. ``u_c``), unit vectors in
        body coordinates, on both surfaces to round-off.
    """
    J = as_float_array(inv_inertia, "inv_inertia", (3,))
    if J.shape != (3,) or np.any(J < 0):
        raise InputError(f"inv_inertia: expected three inverse moments >= 0, got {J.tolist()}")
    e = float(as_float_array(energy_factor, "energy_factor", ()))
    n = points if isinstance(points, (int, np.integer)) and not isinstance(points, bool) else -1
    if n < 3 or n > 100_000:
        raise InputError(f"points: expected an integer in [3, 100000], got {points!r}")
    a, b, c = np.argsort(J, kind="stable")
    Ja, Jb, Jc = J[a], J[b], J[c]
    if Jc - Ja <= EQUAL_RTOL * Jc:
        raise InputError(
            f"inv_inertia: a spherical body ({J.tolist()}) has no polhodes: L_b is constant"
        )
    if not Ja <= e <= Jc:
        raise InputError(
            f"energy_factor: expected a value in [min J, max J] = [{Ja:g}, {Jc:g}], got {e!r}"
        )
    s = np.linspace(0.0, 2.0 * np.pi, n)
    out = np.zeros((2, n, 3))
    if e <= Jb:
        axis, first, second = a, b, c
        r1 = np.sqrt((e - Ja) / (Jb - Ja)) if Jb > Ja else 0.0
        r2 = np.sqrt((e - Ja) / (Jc - Ja))
    else:
        axis, first, second = c, a, b
        r1 = np.sqrt((Jc - e) / (Jc - Ja))
        r2 = np.sqrt((Jc - e) / (Jc - Jb))
    u1 = np.minimum(r1, 1.0) * np.cos(s)
    u2 = np.minimum(r2, 1.0) * np.sin(s)
    u0 = np.sqrt(np.maximum(1.0 - u1 * u1 - u2 * u2, 0.0))
    for k, sign in enumerate((1.0, -1.0)):
        out[k, :, axis] = sign * u0
        out[k, :, first] = u1
        out[k, :, second] = u2
    return out
