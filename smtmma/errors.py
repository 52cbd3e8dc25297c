"""Exceptions of smtmma: one root, each also the matching builtin.

User errors (bad arch, malformed hex, unrepresentable value, ...) raise a
subclass of :class:`SmtmmaError`; the CLI prints its message on one line and
exits with status 2.  ``assert`` is used only for internal invariants.
"""

from __future__ import annotations

__all__ = [
    "SmtmmaError",
    "UnknownNameError",
    "InputError",
    "NotRepresentableError",
]


class SmtmmaError(Exception):
    """Root of every error smtmma raises on purpose."""


class UnknownNameError(SmtmmaError, KeyError):
    """An architecture, instruction, format or op name that does not exist."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class InputError(SmtmmaError, ValueError):
    """Malformed input: bad hex, wrong vector length, missing field, bad shape."""


class NotRepresentableError(InputError):
    """A value that its format cannot hold exactly (too many bits, inexact decimal)."""


def choices(names: object) -> str:
    """Return ``names`` as a comma-separated list for error messages."""
    return ", ".join(str(n) for n in names)
