"""SO(3) Jacobians of the exponential map, on one rotation vector and as gufuncs.

With ``a(t) = (1 - cos t)/t²``, ``b(t) = (t - sin t)/t³`` and
``c(t) = 1/t² - (1 + cos t)/(2 t sin t)``::

    J_r = I - a [phi]× + b [phi]×²        J_r⁻¹ = I + ½ [phi]× + c [phi]×²
    J_l = I + a [phi]× + b [phi]×²        J_l⁻¹ = I - ½ [phi]× + c [phi]×²

The kernels widen float32 input to float64 and round once on output, so thresholds that
give float64 round-off give float32 round-off too. ``tumble._kernels.interpolate`` calls
:func:`so3_jacobian`, :func:`so3_b` and :func:`horner` for the spline's derivatives.
"""

from __future__ import annotations

import math

import numpy as np

from tumble._kernels import guvectorize, inner
from tumble._kernels.rotation.trig import sinc

# b(t) = Σ_k (-1)^k t^2k / (2k + 3)!: through k = 7 the first dropped term is below
# 4.9e-17 b(t) for t <= 1, where the closed form, whose t - sin t is exact (Sterbenz) and
# whose error is sin t's rounding, has reached a relative error of a few 1e-16.
_B_SERIES_BELOW = 1.0
_B_SERIES = (
    1.0 / 6.0,
    -1.0 / 120.0,
    1.0 / 5040.0,
    -1.0 / 362880.0,
    1.0 / 39916800.0,
    -1.0 / 6227020800.0,
    1.0 / 1307674368000.0,
    -1.0 / 355687428096000.0,
)


@inner
def horner(coefficients, z):
    """``Σ_k c_k z^k`` for the tuple ``coefficients`` (lowest power first), Horner's rule."""
    n = len(coefficients)
    s = coefficients[n - 1]
    for k in range(n - 2, -1, -1):
        s = s * z + coefficients[k]
    return s


@inner
def so3_b(t):
    """``b(t) = (t - sin t)/t³`` to round-off at every ``t >= 0`` (series below 1)."""
    if t < _B_SERIES_BELOW:
        return horner(_B_SERIES, t * t)
    return (t - math.sin(t)) / (t * t * t)


@inner
def so3_a(t):
    """``a(t) = (1 - cos t)/t² = ½ sinc²(t/2)``: the half-angle form has no cancellation."""
    s = sinc(0.5 * t)
    return 0.5 * s * s


@inner
def so3_c(t):
    """``c(t) = 1/t² - (1 + cos t)/(2 t sin t) = (1 - x cot x)/(4x²)``, ``x = t/2``.

    Written as ``(a(x) - b(x)) / (4 sinc x)``, which is the same function (``a(x) - b(x) =
    (sin x - x cos x)/x³``) with no cancellation beyond ``a - b ≈ 1/3``: accurate to a few
    ulp for ``t`` up to near ``2π``, where ``sinc x`` vanishes and ``c`` has a pole.
    """
    x = 0.5 * t
    return (so3_a(x) - so3_b(x)) / (4.0 * sinc(x))


@inner
def _so3_combination(phi, first, second):
    """Row-major ``I + first [phi]× + second [phi]×²`` (9-tuple).

    ``[phi]×² = phi phiᵀ - |phi|² I``; its diagonal is formed as ``-(phi_j² + phi_k²)``,
    free of cancellation, and ``second`` multiplies ``phi_i`` before ``phi_j`` so that large
    rotation vectors cannot overflow.
    """
    x, y, z = phi
    sx, sy, sz = second * x, second * y, second * z
    fx, fy, fz = first * x, first * y, first * z
    return (
        1.0 - (sy * y + sz * z), sx * y - fz, sx * z + fy,
        sx * y + fz, 1.0 - (sx * x + sz * z), sy * z - fx,
        sx * z - fy, sy * z + fx, 1.0 - (sx * x + sy * y),
    )  # fmt: skip


@inner
def so3_jacobian(phi, sign):
    """``I + sign a [phi]× + b [phi]×²``: ``J_r`` for ``sign = -1``, ``J_l`` for ``+1``."""
    t = math.hypot(math.hypot(phi[0], phi[1]), phi[2])
    return _so3_combination(phi, sign * so3_a(t), so3_b(t))


@inner
def so3_jacobian_inverse(phi, sign):
    """``I + sign ½ [phi]× + c [phi]×²``: ``J_r⁻¹`` for ``sign = +1``, ``J_l⁻¹`` for ``-1``."""
    t = math.hypot(math.hypot(phi[0], phi[1]), phi[2])
    return _so3_combination(phi, 0.5 * sign, so3_c(t))


@inner
def _widen3(a):
    """The first three entries of ``a`` as float64: float32 input is evaluated in double."""
    return (np.float64(a[0]), np.float64(a[1]), np.float64(a[2]))


# The gufuncs take an unused ``_shape`` of the output's length (see ``loops``).


@guvectorize("(n),(m)->(m)")
def so3_right_jacobian_gu(phi, _shape, out):
    r = so3_jacobian(_widen3(phi), -1.0)
    for i in range(9):
        out[i] = r[i]


@guvectorize("(n),(m)->(m)")
def so3_left_jacobian_gu(phi, _shape, out):
    r = so3_jacobian(_widen3(phi), 1.0)
    for i in range(9):
        out[i] = r[i]


@guvectorize("(n),(m)->(m)")
def so3_right_jacobian_inverse_gu(phi, _shape, out):
    r = so3_jacobian_inverse(_widen3(phi), 1.0)
    for i in range(9):
        out[i] = r[i]


@guvectorize("(n),(m)->(m)")
def so3_left_jacobian_inverse_gu(phi, _shape, out):
    r = so3_jacobian_inverse(_widen3(phi), -1.0)
    for i in range(9):
        out[i] = r[i]
