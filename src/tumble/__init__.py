"""tumble: rigid-body rotational dynamics done right.

Conventions (see ``docs/conventions.md``): quaternions are ``(..., 4)`` arrays, scalar first
``(w, x, y, z)``, Hamilton product, active rotation ``v' = q v q*``; a body's ``q`` maps body
coordinates to world coordinates; angular velocity is in the world frame unless a name says
``body``; every function broadcasts over leading axes with the component axis last.
"""

from tumble._errors import InputError, TumbleWarning

__version__ = "0.1.0"

__all__ = ["InputError", "TumbleWarning", "__version__"]
