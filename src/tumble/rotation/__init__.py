"""Rotation algebra: quaternions, rotation matrices, rotation vectors, exp and log, Euler
angles, modified Rodrigues parameters, means and alignment, SciPy interop, SO(3) Jacobians.

Conventions (``docs/conventions.md``): quaternions are ``(..., 4)`` arrays, scalar first
``(w, x, y, z)``, Hamilton product, active rotation ``v' = q v q*``; ``quat_multiply(p, q)``
applies ``q`` first, then ``p``. Vectors are ``(..., 3)``, matrices ``(..., 3, 3)``; every
function broadcasts over leading axes. float32 stays float32, float64 stays float64,
integers become float64. Functions that read a quaternion as a rotation use ``q/|q|`` and
reject a zero quaternion with :class:`tumble.InputError`.

One module per concept, all re-exported here: :mod:`~tumble.rotation.quaternions` (products,
rotation of vectors, exp and log, Cayley maps, angles, random rotations),
:mod:`~tumble.rotation.conversions` (matrices and rotation vectors),
:mod:`~tumble.rotation.euler`, :mod:`~tumble.rotation.mrp` (and powers),
:mod:`~tumble.rotation.mean` (mean and alignment), :mod:`~tumble.rotation.interop` (SciPy),
:mod:`~tumble.rotation.jacobians` (SO(3) Jacobians); :mod:`~tumble.rotation.operands` holds
the checks and the calls into the kernels that they share, and :func:`unit_quat`, the
normalisation the other tumble modules use.
"""

from tumble.rotation.conversions import (
    matrix_to_quat,
    matrix_to_rotvec,
    quat_to_matrix,
    quat_to_rotvec,
    rotvec_to_matrix,
    rotvec_to_quat,
    skew,
    unskew,
)
from tumble.rotation.euler import (
    GimbalLockWarning,
    euler_to_matrix,
    euler_to_quat,
    matrix_to_euler,
    quat_to_euler,
)
from tumble.rotation.interop import from_scipy, to_scipy

# Not public (out of __all__), but part of this namespace: the matrix tolerance the docs
# cite, the Jacobians' bound, and the normalisation that rigid, exact, diagnostics, torques
# and interpolate use.
from tumble.rotation.jacobians import JACOBIAN_MAX_ANGLE as JACOBIAN_MAX_ANGLE
from tumble.rotation.jacobians import (
    so3_left_jacobian,
    so3_left_jacobian_inverse,
    so3_right_jacobian,
    so3_right_jacobian_inverse,
)
from tumble.rotation.mean import align_vectors, quat_mean
from tumble.rotation.mrp import mrp_shadow, mrp_to_quat, quat_power, quat_to_mrp
from tumble.rotation.operands import ORTHOGONALITY_TOLERANCE as ORTHOGONALITY_TOLERANCE
from tumble.rotation.operands import unit_quat as unit_quat
from tumble.rotation.quaternions import (
    cayley_quat,
    cayley_rotate,
    quat_conjugate,
    quat_exp,
    quat_exp_approx,
    quat_log,
    quat_multiply,
    quat_normalize,
    quat_rotate,
    random_quat,
    rotation_angle,
)

__all__ = [
    "GimbalLockWarning",
    "align_vectors",
    "cayley_quat",
    "cayley_rotate",
    "euler_to_matrix",
    "euler_to_quat",
    "from_scipy",
    "matrix_to_euler",
    "matrix_to_quat",
    "matrix_to_rotvec",
    "mrp_shadow",
    "mrp_to_quat",
    "quat_conjugate",
    "quat_exp",
    "quat_exp_approx",
    "quat_log",
    "quat_mean",
    "quat_multiply",
    "quat_normalize",
    "quat_power",
    "quat_rotate",
    "quat_to_euler",
    "quat_to_matrix",
    "quat_to_mrp",
    "quat_to_rotvec",
    "random_quat",
    "rotation_angle",
    "rotvec_to_matrix",
    "rotvec_to_quat",
    "skew",
    "so3_left_jacobian",
    "so3_left_jacobian_inverse",
    "so3_right_jacobian",
    "so3_right_jacobian_inverse",
    "to_scipy",
    "unskew",
]
