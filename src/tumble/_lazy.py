"""Names of a module that load on first access (PEP 562), so that importing it stays cheap.

``tumble.rigid`` lists its methods without numba, and ``tumble compare --help`` builds its
parser without the kernels: their packages bind the names of the compiled half lazily::

    __getattr__, __dir__ = lazy_names(globals(), {"simulate": "tumble.rigid.integrate"})

The first access imports the module that defines the name and stores the value in the
package's globals, so every later access is an ordinary attribute lookup (no call per
access: ``rigid.step`` of one body is timed in microseconds). ``from package import name``
goes through the same ``__getattr__``. Type checkers see the names through an ``if
TYPE_CHECKING:`` import of the same modules in the package.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    namespace: dict[str, Any], origins: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for the module whose globals are ``namespace``.

    ``origins`` maps each lazy name to the dotted module that defines it. ``__getattr__``
    imports that module on the name's first access, stores the value in ``namespace``
    and returns it; any other name raises :class:`AttributeError`, as for a plain module.
    ``__dir__`` lists the loaded names and the lazy ones.
    """
    module_name = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        origin = origins.get(name)
        if origin is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(origin), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *origins})

    return __getattr__, __dir__
