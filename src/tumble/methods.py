"""The integrator registry: one record per rigid-body method, and everything derived from it.

Each method of :func:`tumble.rigid.step` and :func:`tumble.rigid.simulate` is one
:class:`MethodInfo` in :data:`REGISTRY`: its compiled kernel, its order, what it conserves,
whether it is time-symmetric, what it is exact for, how it treats torque and locked axes,
its cost class and a one-line description. :data:`tumble.rigid.METHODS`, the method table in
``docs/integrators.md`` (:func:`render_table`, checked by a test), the lab's method list,
``tumble compare``, sweeps and the figures' colours all read it.

Composed methods ``"<base>:<scheme>"`` (:mod:`tumble.compositions`) are not in the
registry: :func:`method_info` derives their records from the base's (:func:`composed`).

This module is data: it imports no numba, so listing and validating methods costs nothing
to compile. Adding a method is three pieces: its kernel (a compiled step or flow registered
under a name in :mod:`tumble._kernels.rigid`), its record here naming that kernel, and its
paragraph in ``docs/integrators.md`` (see ``docs/architecture.md``).

Conventions of the columns (all for a free body with every inverse moment ``J_i > 0``):

``order``
    Global order of the attitude error at fixed time, as measured in
    ``tests/test_rigid_order.py``: ``inf`` for the exact solution, 0 for a method that is not
    consistent with Euler's equations.
``L_norm``, ``L_world``, ``energy``
    What happens to ``|L|``, the world angular momentum (so also its direction) and the
    kinetic energy: ``"exact"`` means kept to round-off for any ``dt``. "J_mid"/"J_max": the
    energy factor ``J_L = L·JL/|L|²`` is pushed to the median / largest inverse moment.
    "local O(dt³)": one step's energy error (globally ``O(dt²)`` over a fixed time).
``exact_for``
    ``"symmetric"``: exact at any ``dt`` on a symmetric top (attitude too); ``"body"``:
    body ``L`` and energy exact there, not the attitude; ``"spherical"``: spherical tops
    only; ``"all"``: every torque-free body; ``"none"``.
``torque``
    Where the torque model (:mod:`tumble.torques`) is evaluated. ``"held"``: at the start
    of the step, applied once as the method's algorithm says (first order in a torque that
    changes over the step, whatever ``order`` is; exact for a constant world torque in the
    momentum-form methods); ``"strang"``:
    as exact half kicks of the torque's own flow before and after the free flow
    (``L_w += ½ dt tau`` for a torque of the attitude alone); ``"stages"``: at the
    Runge-Kutta stages; ``"none"``: torque-free only.
``cost``
    Work per body and step: ``Q`` is one rotation-vector exponential (one sqrt and one
    sin/cos pair). Measured nanoseconds are in ``docs/integrators.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from tumble._errors import InputError
from tumble._validate import describe
from tumble.compositions import COMPOSITIONS
from tumble.engines import ENGINES

__all__ = [
    "NAMES",
    "REGISTRY",
    "MethodInfo",
    "check",
    "composable",
    "composed",
    "method_info",
    "render_table",
]

#: The quantities a method may conserve, in table order, with their display labels.
CONSERVED_LABELS = {"L_norm": "|L|", "L_world": "world L", "energy": "energy"}

EXACT_FOR = ("none", "spherical", "body", "symmetric", "all")
_TEXT_FIELDS = ("name", "L_norm", "L_world", "energy", "cost", "description")


def _one_of(value: object, choices: tuple[str, ...]) -> bool:
    # Only a str is compared: `in` on an array would compare elementwise.
    return isinstance(value, str) and value in choices


TORQUE_MODES = ("held", "strang", "stages", "none")

_EXACT_FOR_TEXT = {
    "none": "no",
    "spherical": "sph. top",
    "body": "sym. top (body)",
    "symmetric": "sym. top",
    "all": "any body",
}


@dataclass(frozen=True)
class MethodInfo:
    """The registry record of one integrator (see the module docstring for each column).

    Attributes
    ----------
    name : str
        The method name taken by :func:`tumble.rigid.step` and :func:`tumble.rigid.simulate`.
    kernel : str or None
        Name of the compiled kernel in :mod:`tumble._kernels.rigid` (its step or flow, as
        the kernel registers it; the method's own name); None for ``"exact"``, which
        has no step: :func:`tumble.rigid.simulate` evaluates the compiled exact flow at its
        records (as ``exact_split`` without torque) and :func:`tumble.rigid.step` calls
        :func:`tumble.exact.torque_free`.
    order : float
        Global order of the attitude error (``inf``: exact; 0: inconsistent).
    L_norm, L_world, energy : str
        Behaviour of ``|L|``, world ``L`` and energy for a free body (``"exact"``: kept).
    exact_for : str
        One of ``"none"``, ``"spherical"``, ``"body"``, ``"symmetric"``, ``"all"``.
    symmetric : bool
        Time-symmetric (self-adjoint): ``Φ(-h) = Φ(h)⁻¹``, hence of even order.
    torque : str
        One of ``"held"``, ``"strang"``, ``"stages"``, ``"none"``.
    locked_axes : bool
        Accepts zero inverse moments (axes held by a constraint).
    cost : str
        Work per body and step in exponentials ``Q`` and other operations.
    description : str
        One line (at most 100 characters) for legends and listings.
    substeps : tuple of float
        The composition's coefficients ``γ_i`` (:mod:`tumble.compositions`): the kernel runs
        the base's step over ``γ_1 dt``, ``γ_2 dt``, ... Empty for a registry method.
    """

    name: str
    kernel: str | None
    order: float
    L_norm: str
    L_world: str
    energy: str
    exact_for: str
    symmetric: bool
    torque: str
    locked_axes: bool
    cost: str
    description: str
    substeps: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        # A record is data that other code trusts (kernels by name, tables by column): each
        # field is checked as the registry and composed() build it.
        order_ok = type(self.order) in (int, float) and self.order >= 0
        kernel_ok = self.kernel is None or (type(self.kernel) is str and self.kernel.isidentifier())
        checks = [(f, isinstance(getattr(self, f), str), "a str") for f in _TEXT_FIELDS]
        checks += [
            (f, type(getattr(self, f)) is bool, "a bool") for f in ("symmetric", "locked_axes")
        ]
        checks += [
            ("kernel", kernel_ok, "a kernel name (an identifier) or None"),
            ("order", order_ok, "a number >= 0 (inf: exact)"),
            ("exact_for", _one_of(self.exact_for, EXACT_FOR), f"one of {EXACT_FOR}"),
            ("torque", _one_of(self.torque, TORQUE_MODES), f"one of {TORQUE_MODES}"),
            (
                "substeps",
                type(self.substeps) is tuple
                and all(type(g) is float and math.isfinite(g) for g in self.substeps),
                "a tuple of finite floats",
            ),
        ]
        for field, ok, expected in checks:
            if not ok:
                raise InputError(
                    f"{field}: expected {expected}, got {describe(getattr(self, field))}"
                )
        if "\n" in self.description or len(self.description) > 100:
            raise InputError(
                "description: expected one line of at most 100 characters, got "
                f"{describe(self.description)}"
            )

    @property
    def base(self) -> str:
        """The registry method a composed method is built on (the method itself otherwise)."""
        return self.name.split(":", 1)[0]

    @property
    def conserves(self) -> tuple[str, ...]:
        """Labels among ``|L|``, ``world L``, ``energy`` that the method keeps to round-off."""
        return tuple(
            label for field, label in CONSERVED_LABELS.items() if getattr(self, field) == "exact"
        )

    @property
    def exact_for_label(self) -> str:
        """``exact_for`` as the method table writes it (``"sym. top"``, ``"no"``, ...)."""
        return _EXACT_FOR_TEXT[self.exact_for]

    @property
    def order_label(self) -> str:
        """The order as text: ``"exact"`` for ``inf``, else the integer."""
        return "exact" if math.isinf(self.order) else str(int(self.order))


def _record(
    name: str,
    order: float,
    props: str,
    *,
    description: str,
    symmetric: bool = False,
    torque: str = "held",
    locked_axes: bool = True,
    kernel: str | None = "",
) -> MethodInfo:
    """A record from ``props`` = ``"L_norm | L_world | energy | exact_for | cost"``; the
    kernel is the one registered under the method's own name unless ``kernel`` says."""
    L_norm, L_world, energy, exact_for, cost = (p.strip() for p in props.split("|"))
    return MethodInfo(
        name, name if kernel == "" else kernel, order, L_norm, L_world, energy, exact_for,
        symmetric, torque, locked_axes, cost, description,
    )  # fmt: skip


REGISTRY: tuple[MethodInfo, ...] = (
    _record(
        "explicit", 1, "grows | no | grows, blows up | none | 1 Q",
        description="Forward Euler with the gyroscopic term: |L| and energy grow until it blows up",
    ),
    _record(
        "jolt", 1, "exact | O(dt) | drifts to J_mid | none | 1 Q + 1 sqrt",
        description=(
            "Jolt Physics: body-frame gyroscopic step rescaled to |L|; energy drifts to J_mid"
        ),
    ),
    _record(
        "naive_rotation", 1, "exact | O(dt) | grows to J_max | none | 2 Q",
        description="Rotate body L by -omega dt: keeps |L|, energy grows toward J_max",
    ),
    _record(
        "jolt_rotation", 1, "exact | O(dt) | drifts to J_mid | none | 2 Q",
        description="Jolt's step as a rotation of L about (J - J_L) L; energy drifts to J_mid",
    ),
    _record(
        "modified_jolt", 1, "exact | O(dt) | local O(dt³) | body | 2 Q",
        description="The article's modified Jolt: rotate L about omega - J_k L, then the attitude",
    ),
    _record(
        "modified_jolt_cayley", 1,
        "exact | O(dt) | local O(dt³) | none | 1 Q + 1 Cayley",
        description="Modified Jolt with the trig-free Cayley rotation of L",
    ),
    _record(
        "momentum_first", 1, "exact | exact | local O(dt³) | symmetric | 2 Q",
        description="The article's momentum-first: world L fixed, attitude Q(J'L dt) Q(Omega dt)",
    ),
    _record(
        "implicit", 1, "decays | no | decays | none | 1 Q + 3x3 solve",
        locked_axes=False,
        description="Catto/Bullet implicit gyroscopic Newton step: stable but dissipative",
    ),
    _record(
        "magnus", 1, "drifts | no | drifts | none | 1 Q + 4 rotations",
        description="Explicit angular acceleration with the order-2 Magnus attitude update",
    ),
    _record(
        "splitting", 2, "exact | exact | bounded, no drift | none | 5 sin/cos pairs",
        symmetric=True, torque="strang",
        description="Symmetric splitting of the kinetic energy (NO_SQUISH): symplectic, order 2",
    ),
    _record(
        "midpoint", 2, "exact | exact | exact | none | Newton + 1 sqrt",
        symmetric=True, torque="strang",
        description="Implicit midpoint with Cayley attitude: keeps |L|, world L and energy",
    ),
    _record(
        "rk4", 4, "drifts | drifts | drifts | none | 4 evaluations",
        torque="stages",
        description="Classical Runge-Kutta 4 on (L_b, q): order 4, slow drift of the invariants",
    ),
    _record(
        "exact", math.inf, "exact | exact | exact | all | theta series per record",
        symmetric=True, torque="none", kernel=None,
        description="Closed-form torque-free motion (Jacobi elliptic functions): the reference",
    ),
    _record(
        "none", 0, "exact | no | exact | spherical | 1 Q",
        description=(
            "No gyroscopic term, as many games do: spins about a fixed omega (wrong motion)"
        ),
    ),
    _record(
        "momentum_first_symmetric", 2,
        "exact | exact | bounded, no drift | symmetric | (4 + n) Q",
        symmetric=True, torque="strang",
        description="Momentum-first composed with its adjoint: symmetric, order 2",
    ),
    _record(
        "symmetric_top_split", 2,
        "exact | exact | bounded, no drift | symmetric | 4 sin/cos pairs + 1 Q",
        symmetric=True, torque="strang",
        description="Symmetric top plus remainder (Fasso 2003): exact for symmetric tops, order 2",
    ),
    _record(
        "exact_split", 2, "exact | exact | exact | all | elliptic (compiled)",
        symmetric=True, torque="strang",
        description="Half kick, exact free flow, half kick: exact without torque, order 2 with it",
    ),
    _record(
        "buss_second_order", 2, "exact | exact | local O(dt³), grows | spherical | 1 Q",
        description="Buss (2000) second order: world L fixed, attitude Q((omega + dt/2 omega') dt)",
    ),
    _record(
        "buss_augmented", 2,
        "exact | exact | local O(dt³), grows | spherical | 1 Q + 1 cross product",
        description="Buss (2000) augmented: buss_second_order + Magnus term dt²/12 omega' × omega",
    ),
    # The engines' replicas (tumble.engines holds their records and sources).
    *(
        _record(
            r.name, r.order, r.props, description=r.description, torque=r.torque,
            locked_axes=False,
        )
        for r in ENGINES.values()
    ),
)  # fmt: skip
"""Every method, in the order of :data:`tumble.rigid.METHODS`: the article's and tumble's
own, then the engines' replicas (:mod:`tumble.engines`)."""

NAMES: tuple[str, ...] = tuple(info.name for info in REGISTRY)
"""The methods' names, in registry order (:data:`tumble.rigid.METHODS`)."""

_BY_NAME = {info.name: info for info in REGISTRY}


def method_info(name: str) -> MethodInfo:
    """The registry record of method ``name`` (see :class:`MethodInfo`), also of a composed
    method ``"<base>:<scheme>"`` (:func:`composed`).

    Raises
    ------
    InputError
        ``name`` is not a method name, or names a composition the base cannot run.
    """
    return check(name, "name")


def check(name: object, argument: str) -> MethodInfo:
    """:func:`method_info` for a value passed as ``argument``: errors name that argument.

    Raises
    ------
    InputError
        Not a method name: unknown, an unknown scheme, a base that is not time-symmetric or
        that is exact already, more than one scheme.
    """
    if not isinstance(argument, str) or not argument:
        raise InputError(
            "argument: expected the name of the argument checked (a non-empty str), got "
            f"{describe(argument)}"
        )
    if not isinstance(name, str):
        raise InputError(f"{argument}: expected a method name (str), got {type(name).__name__}")
    info = _BY_NAME.get(name)
    if info is not None:
        return info
    if ":" not in name:
        raise InputError(
            f"{argument}: expected one of {', '.join(_BY_NAME)} or a composition "
            f"'<base>:<scheme>' ({', '.join(COMPOSITIONS)}), got {name!r}"
        )
    try:
        return composed(name)
    except InputError as exc:
        raise InputError(f"{argument}: {str(exc).removeprefix('name: ')}") from None


def composed(name: str) -> MethodInfo:
    """The record of the composed method ``name = "<base>:<scheme>"``.

    The base's record with the scheme's order, stages and coefficients (``substeps``): a
    composition keeps what every sub-step keeps and what the base is exact for, and is
    time-symmetric. Only a time-symmetric base with a compiled kernel and a finite order
    composes.

    Raises
    ------
    InputError
        ``name`` is not ``"<base>:<scheme>"`` with a known scheme and a composable base
        (:func:`check` names the caller's argument instead).
    """
    if not isinstance(name, str) or ":" not in name:
        raise InputError(f"name: expected '<base>:<scheme>', got {describe(name)}")
    return _composed(name)


@lru_cache(maxsize=256)
def _composed(name: str) -> MethodInfo:
    """:func:`composed` of a str with a colon (cached: only hashable names reach it)."""
    base_name, _, scheme_name = name.partition(":")
    scheme = COMPOSITIONS.get(scheme_name)
    if scheme is None:
        raise InputError(
            f"name: unknown composition scheme {scheme_name!r} in {name!r}; expected one of "
            f"{', '.join(COMPOSITIONS)}"
        )
    base = _BY_NAME.get(base_name)
    if base is None:
        raise InputError(
            f"name: unknown base method {base_name!r} in {name!r}; expected one of "
            f"{', '.join(composable())}"
        )
    if math.isinf(base.order):
        raise InputError(
            f"name: {name!r}: {base_name!r} is the exact solution already; composing it adds "
            f"nothing. Composable bases: {', '.join(composable())}"
        )
    if not base.symmetric or base.kernel is None:
        why = (
            "its negative sub-steps would run a dissipative step backwards, which amplifies"
            if "decays" in (base.L_norm, base.energy)
            else "a composition raises the order only of a time-symmetric base of even order"
        )
        raise InputError(
            f"name: {name!r}: base {base_name!r} is not time-symmetric ({why}); composable bases: "
            f"{', '.join(composable())}"
        )
    label = f"{base_name} composed by {scheme_name} ({scheme.stages} steps): order {scheme.order}"
    return MethodInfo(
        name, base.kernel, scheme.order, base.L_norm, base.L_world, base.energy,
        base.exact_for, True, base.torque, base.locked_axes,
        f"{scheme.stages} x ({base.cost})", label, scheme.coefficients,
    )  # fmt: skip


def composable() -> tuple[str, ...]:
    """Names of the registry methods that compose (time-symmetric, compiled, not exact)."""
    return tuple(
        m.name for m in REGISTRY if m.symmetric and m.kernel is not None and not math.isinf(m.order)
    )


_TABLE = (
    ("method", lambda m: f"`{m.name}`"),
    ("order", lambda m: m.order_label),
    ("`\\|L\\|`", lambda m: m.L_norm),
    ("world `L`", lambda m: m.L_world),
    ("energy", lambda m: m.energy),
    ("exact for", lambda m: m.exact_for_label),
    ("time-sym.", lambda m: "yes" if m.symmetric else "no"),
    ("torque", lambda m: m.torque),
    ("locked axes", lambda m: "yes" if m.locked_axes else "no"),
    ("cost", lambda m: m.cost),
)  # fmt: skip


def render_table() -> str:
    """The method table of ``docs/integrators.md`` as Markdown, one row per record."""
    lines = [
        "| " + " | ".join(h for h, _ in _TABLE) + " |",
        "|" + "---|" * len(_TABLE),
    ]
    lines += ["| " + " | ".join(cell(m) for _, cell in _TABLE) + " |" for m in REGISTRY]
    return "\n".join(lines)
