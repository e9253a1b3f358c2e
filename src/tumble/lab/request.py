"""The request of the lab's simulations: its schema, its limits and its messages.

:class:`SimulateRequest` is the body of ``POST /api/simulate`` and ``POST /api/convergence``
(:mod:`tumble.lab.api`); :func:`validation_message` writes pydantic's errors as one line per
field; :data:`MAX_WORK`, :data:`MAX_FORCED_ROTATIONS` and :data:`MAX_BODY_BYTES` bound what
one request may ask (HTTP 413 beyond them).
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from tumble import InputError, rigid, scenarios
from tumble._validate import describe
from tumble.methods import composable

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_FORCED_ROTATIONS",
    "MAX_METHODS",
    "MAX_WORK",
    "SimulateRequest",
    "WorkTooLarge",
    "validation_message",
]

#: Work limit of one request, in method-steps (``steps x len(methods)``): about a second
#: of one core for the costliest methods, so one request cannot hold a worker for long.
#: Beyond it the server answers 413.
MAX_WORK = 2_000_000

#: Most ``rotations`` of a torque scenario: its reference is a DOP853 solve at ``rtol =
#: 1e-13`` in Python (:func:`tumble.torques.reference`), about 0.03 to 0.06 s of one core per
#: rotation for the heavy top and the gravity-gradient satellite, so 100 rotations stay
#: within a few seconds. Beyond it the server answers 413.
MAX_FORCED_ROTATIONS = 100.0

#: Largest request body in bytes (a full request is under 1 KiB); beyond it: 413.
MAX_BODY_BYTES = 16 * 1024

#: Most methods one request may name: every distinct method name there is, the registry's
#: and each composition ``"<base>:<scheme>"`` of a composable base (the page lists the
#: registry and a few compositions, and its address may add others).
MAX_METHODS = len(rigid.METHODS) + len(rigid.COMPOSITIONS) * len(composable())


def _field(loc: tuple[Any, ...]) -> str:
    """``("body", "inv_inertia", 1)`` -> ``"inv_inertia[1]"``."""
    parts = [p for p in loc if p not in ("body",)]
    name = ""
    for p in parts:
        name += f"[{p}]" if isinstance(p, int) else (f".{p}" if name else str(p))
    return name or "body"


def validation_message(errors: Any) -> str:
    """One line per error of pydantic's ``ValidationError.errors()``, each starting with the
    field it is about (``"min_j: Input should be greater than 0"``): the ``message`` of a
    422 answer and of the :class:`~tumble.InputError` of :class:`SimulateRequest`.

    ``errors`` is a list of dicts with ``msg``, ``loc`` (a tuple: ``("body", field, index)``
    from FastAPI, ``(field, index)`` from Python) and ``type``, each optional.
    """
    if not isinstance(errors, (list, tuple)) or not all(isinstance(e, dict) for e in errors):
        raise InputError(f"errors: expected a list of dicts (pydantic's), got {describe(errors)}")
    lines = []
    for e in errors:
        msg = str(e.get("msg", "invalid")).removeprefix("Value error, ")
        loc = e.get("loc", ())
        loc = tuple(loc) if isinstance(loc, (list, tuple)) else (loc,)
        if e.get("type") == "json_invalid":
            where = f" at character {loc[-1]}" if loc and isinstance(loc[-1], int) else ""
            lines.append(f"body: not valid JSON{where} ({msg})")
        elif loc in ((), ("body",)):
            # Checks across fields (the model validator) name their fields themselves.
            lines.append(msg if ":" in msg else f"body: {msg}")
        else:
            field = _field(loc)
            prefix = field.split("[")[0] + ":"
            lines.append(msg if msg.startswith(prefix) else f"{field}: {msg}")
    return "; ".join(lines)


_InvMoment = Annotated[float, Field(ge=0.0, le=1000.0, allow_inf_nan=False)]
_Omega = Annotated[float, Field(ge=-1000.0, le=1000.0, allow_inf_nan=False)]
_D = scenarios.DEFAULTS


class SimulateRequest(BaseModel):
    """Body of ``POST /api/simulate`` (every field optional; defaults: the article's case).

    Either the article's parametrisation (``min_j``, ``median_j``, ``energy``) or an
    explicit body (``inv_inertia`` with ``omega_body``, initial attitude the identity), see
    :func:`tumble.scenarios.article_case` and :func:`tumble.scenarios.explicit_case`.
    Or a torque scenario (``torque``, a key of :data:`tumble.scenarios.TORQUE_SCENARIOS`,
    :func:`tumble.scenarios.torque_case`), which sets the body itself: only
    ``steps_per_rotation``, ``rotations`` and ``methods`` (not ``"exact"``) go with it.
    Numbers must be JSON numbers (no strings, no booleans); unknown fields are refused.

    Built from Python, a bad field raises :class:`tumble.InputError` naming it (the message
    of :func:`validation_message`); the server, which validates the JSON body itself,
    answers 422 with the same message.
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    def __init__(self, **fields: Any) -> None:
        try:
            super().__init__(**fields)
        except ValidationError as exc:
            raise InputError(validation_message(exc.errors())) from None

    min_j: float = Field(default=_D["min_j"], gt=0.0, le=100.0, allow_inf_nan=False)
    median_j: float = Field(default=_D["median_j"], ge=0.0, le=1.0, allow_inf_nan=False)
    energy: float = Field(default=_D["energy"], ge=0.0, le=1.0, allow_inf_nan=False)
    steps_per_rotation: int = Field(
        default=int(_D["steps_per_rotation"]), ge=1, le=scenarios.MAX_STEPS_PER_ROTATION
    )
    rotations: float = Field(
        default=_D["rotations"], gt=0.0, le=scenarios.MAX_ROTATIONS, allow_inf_nan=False
    )
    methods: list[str] | None = Field(default=None, min_length=1, max_length=MAX_METHODS)
    inv_inertia: list[_InvMoment] | None = Field(default=None, min_length=3, max_length=3)
    omega_body: list[_Omega] | None = Field(default=None, min_length=3, max_length=3)
    torque: str | None = None

    @field_validator("torque")
    @classmethod
    def _known_torque(cls, v: str | None) -> str | None:
        if v is not None and v not in scenarios.TORQUE_SCENARIOS:
            allowed = ", ".join(repr(k) for k in scenarios.TORQUE_SCENARIOS)
            raise ValueError(f"torque: expected null or one of {allowed}, got {v[:80]!r}")
        return v

    @field_validator("methods")
    @classmethod
    def _known_methods(cls, v: list[str] | None) -> list[str] | None:
        if v is None:
            return v
        for name in v:
            try:
                rigid.check_method(name, "methods")
            except InputError as exc:
                raise ValueError(str(exc)) from None
        if len(set(v)) != len(v):
            raise ValueError("methods: each method may appear once")
        return v

    @model_validator(mode="after")
    def _one_parametrisation(self) -> SimulateRequest:
        if self.torque is not None:
            body = {"min_j", "median_j", "energy", "inv_inertia", "omega_body"}
            fixed = body & self.model_fields_set
            if fixed:
                raise ValueError(
                    f"{', '.join(sorted(fixed))}: not allowed with torque (a torque scenario "
                    "sets its own body and initial state)"
                )
            if self.methods is not None and "exact" in self.methods:
                raise ValueError(
                    "methods: 'exact' is the torque-free solution; not with torque (the "
                    "reference of a torque scenario is the ODE solve, which always runs)"
                )
        explicit = {"inv_inertia", "omega_body"} & self.model_fields_set
        if len(explicit) == 1:
            (given,) = explicit
            other = "omega_body" if given == "inv_inertia" else "inv_inertia"
            raise ValueError(f"{other}: required together with {given}")
        article = {"min_j", "median_j", "energy"} & self.model_fields_set
        if explicit and article:
            raise ValueError(
                f"{', '.join(sorted(article))}: not allowed with inv_inertia/omega_body "
                "(give either the article's parametrisation or an explicit body)"
            )
        if self.inv_inertia is not None and self.omega_body is not None:
            J = np.asarray(self.inv_inertia)
            w = np.asarray(self.omega_body)
            if not np.any(J > 0):
                raise ValueError("inv_inertia: expected at least one inverse moment > 0")
            if not np.any((J > 0) & (w != 0)):
                raise ValueError(
                    "omega_body: expected a nonzero angular velocity on a free axis "
                    "(J_i > 0), the body would not turn"
                )
        return self

    def case(self) -> scenarios.Case:
        """The initial-value problem this request describes."""
        if self.torque is not None:
            return scenarios.torque_case(self.torque, self.steps_per_rotation, self.rotations)
        # The model validator admits inv_inertia only together with omega_body.
        if self.inv_inertia is not None and self.omega_body is not None:
            return scenarios.explicit_case(
                self.inv_inertia, self.omega_body, self.steps_per_rotation, self.rotations
            )
        return scenarios.article_case(
            self.min_j, self.median_j, self.energy, self.steps_per_rotation, self.rotations
        )

    def method_names(self) -> list[str]:
        """Requested methods; by default all of :data:`tumble.rigid.METHODS` (with a torque,
        all but the torque-free ``"exact"``)."""
        if self.methods is not None:
            return list(self.methods)
        return [m for m in rigid.METHODS if self.torque is None or m != "exact"]


def check_request(request: Any) -> None:
    if not isinstance(request, SimulateRequest):
        raise InputError(f"request: expected a SimulateRequest, got {describe(request)}")


class WorkTooLarge(Exception):
    """A request whose work (method-steps) exceeds :data:`MAX_WORK`: HTTP 413."""


def check_work(
    request: SimulateRequest, steps: int, methods: int, runs_per_method: int = 1
) -> None:
    """Raise :class:`WorkTooLarge` beyond :data:`MAX_WORK` method-steps, or beyond
    :data:`MAX_FORCED_ROTATIONS` for a torque scenario's reference."""
    if request.torque is not None and request.rotations > MAX_FORCED_ROTATIONS:
        raise WorkTooLarge(
            f"rotations: {request.rotations:g} exceeds the limit of {MAX_FORCED_ROTATIONS:g} "
            "for a torque scenario, whose reference is a tight ODE solve (seconds of work "
            "per hundred rotations): lower rotations"
        )
    work = steps * methods * runs_per_method
    if work > MAX_WORK:
        runs = f" x {runs_per_method} runs" if runs_per_method > 1 else ""
        raise WorkTooLarge(
            f"steps_per_rotation x rotations x methods{runs} = {steps} x {methods}"
            f"{runs.replace(' runs', '')} = {work} method-steps exceeds the limit of "
            f"{MAX_WORK}: lower steps_per_rotation or rotations, or show fewer methods"
        )
