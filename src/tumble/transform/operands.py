"""The checks that :mod:`~tumble.transform.group` and :mod:`~tumble.transform.dynamics` share.

Vectors of the transform's dimension (:func:`as_vector`), read-only copies of stored arrays
(:func:`frozen`), the error of a dimension mismatch, and :func:`finite`, the decorator that
holds a method to the huge-input rule; each class registers with :func:`finite_parts` what
of its instances must stay finite.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np

from tumble._errors import InputError
from tumble._validate import as_float_array, check_finite_result


def frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, copy=True)
    a.flags.writeable = False
    return a


def as_vector(x: Any, name: str, n: int) -> np.ndarray:
    v = as_float_array(x, name, (n,))
    if v.ndim != 1:
        raise InputError(f"{name}: expected shape ({n},), got shape {v.shape}")
    return v


def dimension_mismatch(name: str, n_self: int, n_other: int) -> InputError:
    return InputError(f"{name}: expected a {n_self}-D transform, got a {n_other}-D one")


_Method = TypeVar("_Method", bound=Callable[..., Any])


@functools.singledispatch
def finite_parts(x: Any) -> tuple[Any, ...]:
    """The numbers of a result that must be finite (a scale must also stay above 0): an
    array, or the items of a tuple; the transform classes register their own."""
    return tuple(x) if isinstance(x, tuple) else (x,)


def finite(names: str, what: str) -> Callable[[_Method], _Method]:
    """Hold a method to the huge-input rule: a result that overflows raises ``InputError``.

    The method runs with NumPy's floating-point warnings off; if its result (a transform,
    a dynamic transform or an array) has a non-finite number, or a scale that underflowed
    to 0, ``InputError`` names ``names`` (the arguments that were too large or small).
    """

    def wrap(method: _Method) -> _Method:
        @functools.wraps(method)
        def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
            with np.errstate(all="ignore"):
                out = method(self, *args, **kwargs)
                parts = () if out is NotImplemented else finite_parts(out)
            check_finite_result(names, what, *parts)
            return out

        return cast(_Method, checked)

    return wrap
