"""Dual-number arrays and forward-mode derivatives of ordinary NumPy code.

A dual number ``x + ε y`` with ``ε² = 0`` carries a value and its derivative: every real
analytic ``f`` extends to ``f(x + ε y) = f(x) + ε f'(x) y``, and the extension of a
composition is the composition of the extensions. :class:`Dual` is an array of such
numbers with ``k`` independent perturbations per element, so one evaluation of a function
gives ``k`` directional derivatives (a whole Jacobian when ``k`` is the input size).

NumPy code runs on duals unchanged: ufuncs reach :meth:`Dual.__array_ufunc__`, array
functions (``dot``, ``einsum``, ``stack``, ``linalg.norm``...) reach
:meth:`Dual.__array_function__`. Every differentiable ufunc has one entry in :data:`RULES`,
which both defines the operation and drives the test suite.

Each dual carries an integer ``tag``. A driver (``derivative``, ``jacobian``...) draws a
fresh tag, larger than any tag drawn before, so a differentiation started inside another
one has the larger tag. Arithmetic between duals of different tags nests them: the larger
tag is the outer layer and its value and partials are duals of the smaller tag. Each driver
reads only the partials of its own tag, so nested derivatives never confuse their
perturbations (ForwardDiff.jl issue 83: ``d/dx [x d/dy (x + y)]`` at 1 is 1, not 2).

The package, one concern per module, each importing only those before it:

- :mod:`~tumble.dual.rules`: the derivative table (ufunc -> :class:`Rule`); knows nothing
  of the dual type;
- :mod:`~tumble.dual.special`: the rules of ``scipy.special`` ufuncs (DLMF-cited), imported
  only when a SciPy ufunc first meets a dual, so that this package does not import SciPy;
- :mod:`~tumble.dual.registry`: what duals support: the rule of a ufunc, the registry of
  array functions, and their names;
- :mod:`~tumble.dual.settings`: the context-local switches (:func:`nan_safe`);
- :mod:`~tumble.dual.fused`: the binary chain rule in one pass, by compiled kernels loaded
  on first use;
- :mod:`~tumble.dual.number`: the :class:`Dual` type and its arithmetic, which applies the
  table to ufuncs and dispatches array functions through the registry;
- :mod:`~tumble.dual.shape`, :mod:`~tumble.dual.elementwise`,
  :mod:`~tumble.dual.reductions`, :mod:`~tumble.dual.linalg`: the array functions on
  duals, one family each, registered by :mod:`~tumble.dual.functions`, which imports them
  and renders the table of supported functions;
- :mod:`~tumble.dual.drivers`: ``derivative``, ``jacobian`` and the other drivers.

``rules`` <- ``special`` (lazily) <- ``registry``; ``registry``, ``settings``, ``fused``
<- ``number`` <- ``shape``, ``elementwise``; ``shape`` <- ``reductions``, ``linalg``; the
four <- ``functions``; and ``number``, ``settings`` <- ``drivers`` (``drivers`` does not
need ``functions``; importing the package loads both). Helpers shared between the modules
have plain names but are not exported: each module's ``__all__`` lists only what the
package offers, and the package's ``__all__`` is its API.

See ``docs/dual.md`` for the tour and the limitations.
"""

from __future__ import annotations

from tumble.dual import functions as functions  # registers the array functions
from tumble.dual.drivers import (
    DEFAULT_CHUNK,
    DEFAULT_POINTS_PER_PASS,
    MAX_JACOBIAN_BYTES,
    derivative,
    directional_derivative,
    gradient,
    hessian,
    jacobian,
)
from tumble.dual.number import Dual
from tumble.dual.rules import (
    MINUS_ONE,
    NOT_DIFFERENTIABLE,
    ONE,
    PIECEWISE_CONSTANT,
    PREDICATES,
    RULES,
    ZERO,
    Partner,
    Rule,
)
from tumble.dual.settings import nan_safe

__all__ = [
    "DEFAULT_CHUNK",
    "DEFAULT_POINTS_PER_PASS",
    "MAX_JACOBIAN_BYTES",
    "MINUS_ONE",
    "NOT_DIFFERENTIABLE",
    "ONE",
    "PIECEWISE_CONSTANT",
    "PREDICATES",
    "RULES",
    "ZERO",
    "Dual",
    "Partner",
    "Rule",
    "derivative",
    "directional_derivative",
    "gradient",
    "hessian",
    "jacobian",
    "nan_safe",
]
