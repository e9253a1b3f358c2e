"""What duals support: the rule of a ufunc, the implementation of an array function, and
the names they go by.

:meth:`Dual.__array_ufunc__ <tumble.dual.number.Dual.__array_ufunc__>` finds a ufunc's
rule with :func:`rule_of`; :meth:`Dual.__array_function__
<tumble.dual.number.Dual.__array_function__>` finds an array function's implementation in
:data:`HANDLED_FUNCTIONS`, which the modules of the array functions fill through
:func:`implements` when :mod:`tumble.dual.functions` imports them. The names
(:func:`ufunc_name`, :func:`function_name`) are those of the error messages and of the
supported-function table of ``docs/dual.md``.

The helpers (:func:`implements`, :func:`unsupported`, :func:`rule_of` and the names) serve
the other modules of the package and are not exported.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from tumble.dual.rules import RULES, Rule

__all__ = ["HANDLED_FUNCTIONS"]

HANDLED_FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {}
"""NumPy function -> its implementation on duals (filled by :mod:`tumble.dual.functions`)."""


def implements(*funcs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated implementation under each NumPy function of ``funcs``."""

    def register(impl: Callable[..., Any]) -> Callable[..., Any]:
        for f in funcs:
            HANDLED_FUNCTIONS[f] = impl
        return impl

    return register


def unsupported(name: str, **given: Any) -> None:
    """Refuse the arguments of ``given`` that are set (neither None nor False) with a
    ``TypeError`` naming the function ``name`` and the argument."""
    for key, value in given.items():
        if value is not None and value is not False:
            raise TypeError(f"{name} on Dual arrays does not support the argument {key}={value!r}")


def rule_of(ufunc: Any) -> Rule | None:
    """The :class:`Rule` of ``ufunc``: NumPy's from :data:`RULES`, SciPy's from
    :mod:`tumble.dual.special`, which is imported here, on first use (a SciPy ufunc can
    only reach a dual once SciPy is imported, so ``import tumble.dual`` never imports it)."""
    rule = RULES.get(ufunc)
    if rule is None and "scipy.special" in sys.modules:
        from tumble.dual.special import SPECIAL_RULES

        rule = SPECIAL_RULES.get(ufunc)
    return rule


def ufunc_name(ufunc: Any) -> str:
    """``numpy.sin`` or ``scipy.special.erf``: where the user found the ufunc."""
    name = getattr(ufunc, "__name__", repr(ufunc))
    special = sys.modules.get("scipy.special")
    if special is not None and getattr(special, name, None) is ufunc:
        return f"scipy.special.{name}"
    if getattr(np, name, None) is ufunc:
        return f"numpy.{name}"
    return name


def function_name(func: Any) -> str:
    """``norm`` as ``linalg.norm``, ``sum`` as ``sum``: an array function's name after ``np.``."""
    module = getattr(func, "__module__", "") or ""
    return ("linalg." if "linalg" in module else "") + func.__name__
