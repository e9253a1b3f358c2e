"""NumPy array functions on duals, registered on import, and the table of what duals
support.

Importing this module imports the modules of the array functions, one per family, each of
which registers its implementations in :data:`tumble.dual.registry.HANDLED_FUNCTIONS`
under the NumPy functions they replace (and ``np.matmul``, a ufunc that is not
elementwise, under itself):

- :mod:`~tumble.dual.shape`: shape functions (``reshape``, ``transpose``, ``stack``,
  ``flip``...), which act on the value as NumPy does and on the partials ``(k,) + S`` the
  same way, one axis further on;
- :mod:`~tumble.dual.elementwise`: elementwise functions that are not ufuncs (``where``,
  ``clip``, ``round``, ``sinc``, ``interp``...);
- :mod:`~tumble.dual.reductions`: ``sum``, ``mean``, ``prod``, ``max``... with their
  derivatives written out, sorting, and the order statistics;
- :mod:`~tumble.dual.linalg`: multilinear functions (``dot``, ``matmul``, ``einsum``,
  ``tensordot``, ``cross``...), all by one rule, ``d f(a, b) = f(da, b) + f(a, db)``;
  ``linalg.norm`` (``d|x| = x·dx / |x|``) and the matrix functions (``inv``, ``solve``,
  ``eigh``...).

:func:`render_table` renders the supported-function table of ``docs/dual.md`` from the
rule tables and the registry.
"""

from __future__ import annotations

from typing import Any

# Importing the families registers their implementations.
from tumble.dual import elementwise as elementwise
from tumble.dual import linalg as linalg
from tumble.dual import reductions as reductions
from tumble.dual import shape as shape
from tumble.dual.registry import HANDLED_FUNCTIONS, function_name, ufunc_name
from tumble.dual.rules import MINUS_ONE, NOT_DIFFERENTIABLE, ONE, PREDICATES, RULES, ZERO, Partner

__all__ = ["render_table"]


def _describe_derivative(d: Any) -> str:
    if d is ONE:
        return "1"
    if d is MINUS_ONE:
        return "−1"
    if d is ZERO:
        return "0"
    if d is NOT_DIFFERENTIABLE:
        return "none (parameter)"
    if isinstance(d, Partner):
        return repr(d)
    return "rule"


def render_table() -> str:
    """The tables of supported functions in ``docs/dual.md``, generated from the rule
    tables (NumPy's :data:`~tumble.dual.rules.RULES`, SciPy's
    :data:`~tumble.dual.special.SPECIAL_RULES`) and the registered array functions; a
    test keeps the page equal to this."""
    from tumble.dual.special import SPECIAL_RULES

    lines = [
        "| ufunc | derivative per argument | note or source |",
        "|---|---|---|",
    ]
    for table in (RULES, SPECIAL_RULES):
        for ufunc, rule in sorted(table.items(), key=lambda item: ufunc_name(item[0])):
            name = ufunc_name(ufunc)
            derivs = ", ".join(_describe_derivative(d) for d in rule.derivs)
            outputs = f" ({rule.nout} outputs)" if rule.nout > 1 else ""
            lines.append(f"| `{name}`{outputs} | {derivs} | {rule.source} |")
    predicates = ", ".join(f"`{ufunc_name(u)}`" for u in sorted(PREDICATES, key=ufunc_name))
    arrays = ", ".join(sorted({f"`np.{function_name(f)}`" for f in HANDLED_FUNCTIONS}))
    return "\n".join(
        [
            *lines,
            "",
            f"On the value only, returning plain arrays: {predicates}.",
            "",
            f"Array functions ({len({id(f) for f in HANDLED_FUNCTIONS})}): {arrays}.",
        ]
    )
