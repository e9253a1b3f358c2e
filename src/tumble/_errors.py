"""The exception and warning types every tumble module raises."""


class InputError(ValueError):
    """Bad input to a public tumble function.

    The message names the argument, what was expected (shape, range, type) and what was
    seen. It subclasses :class:`ValueError` so that callers catching the usual exception
    keep working.
    """


class TumbleWarning(UserWarning):
    """Base class of the warnings tumble emits; filter on it to silence them all."""
