"""Argument types shared by the command-line tools (``tumble compare``, ``tumble sweep``).

Each raises :class:`argparse.ArgumentTypeError`, which argparse turns into a one-line
message and exit status 2. The limits are the scenarios' own (the lab's too), from
:mod:`tumble.parameters`, and method names are checked by the registry
(:mod:`tumble.methods`): building a parser imports no numba.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from tumble import InputError, methods, parameters
from tumble.compositions import COMPOSITIONS

__all__ = [
    "fraction",
    "method_list",
    "nonnegative_float",
    "positive_float",
    "positive_int",
    "rotations_count",
    "steps_count",
    "vector3",
]


def _text(text: object) -> str:
    """``text`` if it is a str (what argparse passes), else the type error argparse reports."""
    if not isinstance(text, str):
        raise argparse.ArgumentTypeError(f"expected text, got {type(text).__name__}")
    return text


def _float(text: str) -> float:
    _text(text)
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return x


def positive_float(text: str) -> float:
    """A finite number ``> 0``."""
    x = _float(text)
    if x <= 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}")
    return x


def nonnegative_float(text: str) -> float:
    """A finite number ``>= 0``."""
    x = _float(text)
    if x < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return x


def rotations_count(text: str) -> float:
    """A finite number in ``[0, MAX_ROTATIONS]`` (the lab's limit too)."""
    x = nonnegative_float(text)
    if x > parameters.MAX_ROTATIONS:
        raise argparse.ArgumentTypeError(
            f"expected at most {parameters.MAX_ROTATIONS:g} rotations, got {text!r}"
        )
    return x


def steps_count(text: str) -> int:
    """An integer in ``[1, MAX_STEPS_PER_ROTATION]`` (the lab's limit too)."""
    n = positive_int(text)
    if n > parameters.MAX_STEPS_PER_ROTATION:
        raise argparse.ArgumentTypeError(
            f"expected at most {parameters.MAX_STEPS_PER_ROTATION} steps per rotation, got {text!r}"
        )
    return n


def fraction(text: str) -> float:
    """A number in ``[0, 1]``."""
    x = _float(text)
    if not 0.0 <= x <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a fraction in [0, 1], got {text!r}")
    return x


def positive_int(text: str) -> int:
    """An integer ``>= 1``."""
    _text(text)
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return n


def vector3(text: str) -> np.ndarray:
    """Three comma-separated finite numbers, ``"a,b,c"``."""
    parts = _text(text).split(",")
    if len(parts) != 3:
        raise argparse.ArgumentTypeError(
            f"expected three comma-separated numbers like 1,0.6,0.35, got {text!r}"
        )
    return np.array([_float(p.strip()) for p in parts])


def method_list(text: str) -> list[str]:
    """Comma-separated names from :data:`tumble.rigid.METHODS` or compositions
    ``"<base>:<scheme>"`` (or ``all``: the registry's methods)."""
    if _text(text).strip() == "all":
        return list(methods.NAMES)
    names = [p.strip() for p in text.split(",") if p.strip()]
    unknown = [n for n in names if ":" not in n and n not in methods.NAMES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown method {', '.join(map(repr, unknown)) or repr(text)}; "
            f"choose from {', '.join(methods.NAMES)} or a composition '<base>:<scheme>' "
            f"({', '.join(COMPOSITIONS)})"
        )
    for n in names:
        try:
            methods.check(n, "method")
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc).removeprefix("method: ")) from None
    return list(dict.fromkeys(names))
