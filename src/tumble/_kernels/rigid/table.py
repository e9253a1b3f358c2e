"""The kernel table: each integrator's compiled pieces, under its registry name.

A method's kernel module registers what it computes with one decorator, and that is the
whole of its wiring: :mod:`tumble.methods` names the kernel of each method (data, no
numba), and :mod:`tumble._kernels.rigid.loops` builds each method's loops from its
:class:`Tag` (the kernel's name, plain or composed): entry points of their own, with only
that method's step in them, which numba compiles per torque-model structure and per array
type and caches on disk; no run-time id exists.

The forms a kernel takes (:attr:`Kernel.form`):

``"held"`` (:func:`held`)
    A step ``step(q, L_b, J, I, tau_b, h) -> (q1, L_b1)`` with the body-frame torque at the
    start of the step held over it (first order in a torque that changes over the step;
    Buss's two steps are second order without one).
``"flow"`` (:func:`flow`)
    The torque-free flow ``flow(q, L_b, J, I, h)`` of a time-symmetric method, which the
    loops wrap in the torque's exact half kicks (Strang) and compose to higher orders.
``"split"`` (:func:`split`)
    A flow given by its pieces (``step`` is None): ``O(h/2) ∘ I(h) ∘ O(h/2)`` with
    ``outer(q, L_b, J, pairing, t)``, ``inner(q, L_b, J, pairing, h)`` and ``pairing(J)``;
    compositions merge the outer flows that meet between stages.
``"staged"`` (:func:`staged`)
    A step that evaluates the torque model itself: ``step(q, L_b, J, I, model, b, t, h)``
    (``rk4``, at its stages).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from numba import types
from numba.extending import NativeValue, models, register_model, typeof_impl, unbox

FORMS = ("held", "flow", "split", "staged")


@dataclass(frozen=True)
class Kernel:
    """The compiled pieces of one method (see the module docstring for each form).

    ``exact`` marks the exact free flow: without torque the loops evaluate it from the
    initial state at each record instead of stepping it.
    """

    name: str
    form: str
    # numba dispatchers (Any: the split form's ``step`` is None, its pieces are set).
    step: Any
    outer: Any = None
    inner: Any = None
    pairing: Any = None
    exact: bool = False

    @property
    def symmetric(self) -> bool:
        """A time-symmetric flow: Strang-kicked, composable, keeps world ``L``."""
        return self.form in ("flow", "split")


_KERNELS: dict[str, Kernel] = {}


def _register(kernel: Kernel) -> None:
    if kernel.name in _KERNELS:
        raise ValueError(f"kernel {kernel.name!r} is registered twice")
    _KERNELS[kernel.name] = kernel


def held(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated compiled step as method ``name``'s step with a held torque."""

    def register(step: Callable[..., Any]) -> Callable[..., Any]:
        _register(Kernel(name, "held", step))
        return step

    return register


def staged(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated compiled step, which evaluates the torque model itself."""

    def register(step: Callable[..., Any]) -> Callable[..., Any]:
        _register(Kernel(name, "staged", step))
        return step

    return register


def flow(name: str, *, exact: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated compiled torque-free flow of the symmetric method ``name``."""

    def register(step: Callable[..., Any]) -> Callable[..., Any]:
        _register(Kernel(name, "flow", step, exact=exact))
        return step

    return register


def split(
    name: str, outer: Callable[..., Any], inner: Callable[..., Any], pairing: Callable[..., Any]
) -> None:
    """Register method ``name``'s flow ``O(h/2) ∘ I(h) ∘ O(h/2)`` by its pieces, which
    compositions merge between stages (:mod:`tumble._kernels.rigid.compose` builds the
    flow from them)."""
    _register(Kernel(name, "split", None, outer, inner, pairing))


def kernel(name: str) -> Kernel:
    """The registered kernel ``name`` (a KeyError for an unknown one: callers pass names
    that :mod:`tumble.methods` validated)."""
    return _KERNELS[name]


def names() -> tuple[str, ...]:
    """Names of every registered kernel."""
    return tuple(_KERNELS)


class Tag:
    """A method as the loops take it: kernel ``name``, plain or ``composed``.

    :mod:`tumble._kernels.rigid.loops` builds the method's own loops from it (equal tags
    share them: compositions of one base differ only in their coefficients); the loops
    still take it as an argument, typed :class:`TagType`, because the steps do. The value
    itself carries nothing at run time.
    """

    __slots__ = ("_numba_type_", "composed", "name")

    def __init__(self, name: str, composed: bool) -> None:
        if name not in _KERNELS:
            raise ValueError(f"no kernel is registered as {name!r}")
        self.name = name
        self.composed = composed
        # numba reads this attribute in its C dispatcher: typing a tag then costs what
        # typing a float does (the typeof_impl route below took about 30 µs per call).
        self._numba_type_ = TagType(name, composed)

    def __repr__(self) -> str:
        return f"Tag({self.name!r}, composed={self.composed})"

    def __eq__(self, other: object) -> bool:
        # Equal tags name one method's loops (``splitting:suzuki4`` and
        # ``splitting:yoshida4`` share them; only their coefficients differ).
        return isinstance(other, Tag) and (self.name, self.composed) == (other.name, other.composed)

    def __hash__(self) -> int:
        return hash((self.name, self.composed))


class TagType(types.Dummy):
    """numba type of a :class:`Tag`: the kernel's name and whether it is composed."""

    def __init__(self, name: str, composed: bool) -> None:
        self.kernel_name = name
        self.composed = composed
        super().__init__(f"Method[{name}{':composed' if composed else ''}]")


@typeof_impl.register(Tag)
def _typeof_tag(value: Tag, context: Any) -> TagType:
    return TagType(value.name, value.composed)


register_model(TagType)(models.OpaqueModel)


@unbox(TagType)
def _unbox_tag(typ: TagType, obj: Any, c: Any) -> NativeValue:
    return NativeValue(c.context.get_dummy_value())
