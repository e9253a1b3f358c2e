"""tumble: rigid-body rotational dynamics done right.

Conventions (see ``docs/conventions.md``): quaternions are ``(..., 4)`` arrays, scalar first
``(w, x, y, z)``, Hamilton product, active rotation ``v' = q v q*``; a body's ``q`` maps body
coordinates to world coordinates; angular velocity is in the world frame unless a name says
``body``; every function broadcasts over leading axes with the component axis last.
"""

from tumble._errors import InputError, TumbleWarning
from tumble._validate import DEFAULT_MEMORY_LIMIT, memory_limit

__version__ = "0.1.0"

__all__ = ["DEFAULT_MEMORY_LIMIT", "InputError", "TumbleWarning", "__version__", "memory_limit"]
