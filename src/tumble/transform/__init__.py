"""Transforms of n-dimensional space and their dynamics, as a group.

A :class:`Transform` ``A = (T, R, S)`` maps child coordinates to parent coordinates,

    A(x) = R S x + T,            J = R S (the linear part, a change of basis),

with a translation ``T`` in R^n, a rotation ``R`` in SO(n) and a positive uniform scale
``S``: the scale acts first, then the rotation, then the translation. Composition
``A2 * A1`` means "apply ``A1`` first" (``(A2 * A1)(x) = A2(A1(x))``), so a node's global
transform is ``A_root * ... * A_parent * A_node``.

A :class:`DynamicTransform` adds the first two time derivatives: ``v = dT/dt``,
``a = d2T/dt2`` and the angular velocity and acceleration ``omega``, ``alpha`` (n x n skew
matrices) defined by ``dR/dt = omega R`` and ``alpha = d omega/dt``, so that
``d2R/dt2 = (alpha + omega^2) R``. The scale is constant in time.

Frames. All four dynamic quantities of a child-to-parent transform are expressed in the
**parent's** coordinates: ``v`` and ``a`` in parent units (they are rates of ``T``, which
lives in the parent frame), ``omega`` and ``alpha`` in the parent's basis (because
``dR/dt = omega R`` multiplies on the left, exactly like tumble's world-frame convention
``dR/dt = [omega]x R`` with "world" read as "parent"). For a node whose parent is the world,
local and global coincide. Scale enters the linear quantities only: a local velocity ``v1``
is seen from the grandparent as ``J2 v1 = S2 R2 v1``, while an angular velocity is seen as
``J2 omega1 J2^-1 = R2 omega1 R2^T`` (the scale cancels: angles do not scale).

The group laws, the local/global conversions and the delta formulas follow
``sources/transform-hierarchy-dynamics.txt`` term by term; each method quotes its equation.
These classes hold one transform each and favour clarity; :mod:`tumble.hierarchy` runs the
same formulas batched in compiled kernels.

One module per concept, all re-exported here: :mod:`~tumble.transform.group`
(:class:`Transform`), :mod:`~tumble.transform.dynamics` (:class:`DynamicTransform`,
:class:`DynamicDelta`), :mod:`~tumble.transform.skew` (the 2-D and 3-D compact forms of
angular quantities); :mod:`~tumble.transform.operands` holds the checks they share.
"""

from tumble._validate import rotation_tolerance
from tumble.transform.dynamics import DynamicDelta, DynamicTransform
from tumble.transform.group import Transform
from tumble.transform.skew import skew2, unskew2

__all__ = [
    "DynamicDelta",
    "DynamicTransform",
    "Transform",
    "rotation_tolerance",
    "skew2",
    "unskew2",
]
