"""SO(3) Jacobians of the exponential map and their inverses, in closed form.

``exp`` is the rotation of a rotation vector (``rotvec_to_matrix``, ``rotvec_to_quat``).
The right Jacobian ``J_r`` maps a change of the rotation vector to the body-frame (right)
increment, the left Jacobian ``J_l`` to the world-frame (left) one; their inverses map back.
float32 input is evaluated in float64 and rounded once. Rotation vectors longer than
:data:`JACOBIAN_MAX_ANGLE` raise :class:`tumble.InputError` naming ``phi``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from tumble._errors import InputError
from tumble._kernels import rotation as _k
from tumble.rotation.operands import rotvec_matrices, vectors

#: Longest rotation vector (rad) the Jacobians take. The closed forms cube the angle
#: (``(θ - sin θ)/θ³ [phi]×²``) and square it (``[phi]×²``), which overflow beyond about
#: 5.6e102 and 1.3e154 rad: the kernels then give the identity or an infinity. Far below
#: this no digit of the angle modulo 2π is left (one ulp of 1e16 rad exceeds a turn).
JACOBIAN_MAX_ANGLE = 1e100


def _jacobian(kernel: Any, phi: ArrayLike) -> np.ndarray:
    """``kernel`` of the rotation vectors ``phi``, after the check against JACOBIAN_MAX_ANGLE."""
    pa = vectors(phi, "phi")
    with np.errstate(over="ignore"):
        longest2 = float(np.max(np.sum(pa * pa, axis=-1, dtype=np.float64), initial=0.0))
    if not longest2 <= JACOBIAN_MAX_ANGLE**2:
        raise InputError(
            "phi: expected rotation vectors of length at most JACOBIAN_MAX_ANGLE = "
            f"{JACOBIAN_MAX_ANGLE:g} rad, got one of length {math.sqrt(longest2):.3g}"
        )
    return rotvec_matrices(kernel, pa)


def so3_right_jacobian(phi: ArrayLike) -> np.ndarray:
    """Right Jacobian ``J_r(phi)`` of the exponential map: ``exp(phi + δ) ≈ exp(phi) exp(J_r δ)``.

    ``exp`` is the rotation of a rotation vector (``rotvec_to_matrix``, ``rotvec_to_quat``),
    so ``J_r δ`` is the **body-frame** (right) increment that a small change ``δ`` of the
    rotation vector produces: ``R(phi)ᵀ ∂R/∂phi_j = [J_r e_j]×``; for a moving ``phi(t)``,
    ``omega_body = J_r(phi) dphi/dt``. Closed form, ``θ = |phi|``:

        ``J_r = I - (1 - cos θ)/θ² [phi]× + (θ - sin θ)/θ³ [phi]×²``

    with ``J_r(phi) = J_l(-phi) = J_l(phi)ᵀ = R(phi)ᵀ J_l(phi)``. Defined and smooth for
    every ``phi``; ``det J_r = 2(1 - cos θ)/θ²`` vanishes at ``θ = 2π k`` (``k >= 1``).

    Accuracy: a few ulp per entry at every angle. ``(1 - cos θ)/θ²`` is evaluated as
    ``½ sinc²(θ/2)``, which does not cancel; ``(θ - sin θ)/θ³`` by its Taylor series below
    ``θ = 1`` (eight terms, truncation under 5e-17 relative) and in closed form above,
    where its cancellation costs less than that. float32 input is evaluated in float64 and
    rounded once.

    Parameters
    ----------
    phi : array_like, shape (..., 3)
        Rotation vectors (angle ``|phi|`` in radians about ``phi/|phi|``), finite, at most
        :data:`JACOBIAN_MAX_ANGLE` long.

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    return _jacobian(_k.so3_right_jacobian_gu, phi)


def so3_left_jacobian(phi: ArrayLike) -> np.ndarray:
    """Left Jacobian ``J_l(phi)`` of the exponential map: ``exp(phi + δ) ≈ exp(J_l δ) exp(phi)``.

    ``J_l δ`` is the **world-frame** (left) increment of a change ``δ`` of the rotation
    vector: ``∂R/∂phi_j R(phi)ᵀ = [J_l e_j]×``; for a moving ``phi(t)``,
    ``omega_world = J_l(phi) dphi/dt``.
    Closed form, ``θ = |phi|``:

        ``J_l = I + (1 - cos θ)/θ² [phi]× + (θ - sin θ)/θ³ [phi]×²``

    ``J_l(phi) = J_r(-phi) = J_r(phi)ᵀ = R(phi) J_r(phi)``. Same accuracy and evaluation as
    :func:`so3_right_jacobian`.

    Parameters
    ----------
    phi : array_like, shape (..., 3)
        Rotation vectors, finite, at most :data:`JACOBIAN_MAX_ANGLE` long.

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    return _jacobian(_k.so3_left_jacobian_gu, phi)


def so3_right_jacobian_inverse(phi: ArrayLike) -> np.ndarray:
    """``J_r(phi)⁻¹``: the rotation-vector change of a body-frame increment.

    ``log(exp(phi) exp(δ)) ≈ phi + J_r⁻¹ δ``, so ``dphi/dt = J_r⁻¹(phi) omega_body``.
    Closed form, ``θ = |phi|``:

        ``J_r⁻¹ = I + ½ [phi]× + (1/θ² - (1 + cos θ)/(2θ sin θ)) [phi]×²``

    The coefficient equals ``(1 - x cot x)/(4x²)`` with ``x = θ/2``: it is smooth at
    ``θ = π`` (value ``1/π²``; the ``0/0`` of the textbook form is removable there) and
    has its only singularities at ``θ = 2π k``, ``k >= 1``, where ``J_r`` is singular (every
    direction of a sphere of radius ``2π`` maps to the identity). Near ``2π`` the entries
    grow like ``1/(2π - θ)``; at exactly ``2π`` they are huge but finite (``sin`` of the
    rounded ``π`` is not zero). Rotation vectors from :func:`quat_to_rotvec` have
    ``θ <= π``, far from the pole.

    Accuracy: a few ulp per entry for ``θ`` up to near ``2π``; the coefficient is computed
    as ``(a(x) - b(x)) / (4 sinc x)`` with ``a(x) = (1 - cos x)/x²``, ``b(x) = (x - sin x)/x³``
    (see :func:`so3_right_jacobian`), which cancels by at most a factor 1.5.

    Parameters
    ----------
    phi : array_like, shape (..., 3)
        Rotation vectors, finite, at most :data:`JACOBIAN_MAX_ANGLE` long.

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    return _jacobian(_k.so3_right_jacobian_inverse_gu, phi)


def so3_left_jacobian_inverse(phi: ArrayLike) -> np.ndarray:
    """``J_l(phi)⁻¹``: the rotation-vector change of a world-frame increment.

    ``log(exp(δ) exp(phi)) ≈ phi + J_l⁻¹ δ``, so ``dphi/dt = J_l⁻¹(phi) omega_world``.
    Closed form, ``θ = |phi|``:

        ``J_l⁻¹ = I - ½ [phi]× + (1/θ² - (1 + cos θ)/(2θ sin θ)) [phi]×²``

    ``J_l⁻¹(phi) = J_r⁻¹(-phi) = J_r⁻¹(phi)ᵀ``. Smooth at ``θ = π``, singular at
    ``θ = 2π k``; accuracy and evaluation as :func:`so3_right_jacobian_inverse`.

    Parameters
    ----------
    phi : array_like, shape (..., 3)
        Rotation vectors, finite, at most :data:`JACOBIAN_MAX_ANGLE` long.

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    return _jacobian(_k.so3_left_jacobian_inverse_gu, phi)
