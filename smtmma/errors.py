"""Exceptions of smtmma: one root, each also the matching builtin.

User errors (bad arch, malformed hex, unrepresentable value, ...) raise a
subclass of :class:`SmtmmaError`; the CLI prints its message on one line and
exits with status 2.  ``assert`` is used only for internal invariants.
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
import os
import sys
from typing import Iterable, Iterator, Optional

__all__ = [
    "SmtmmaError",
    "UnknownNameError",
    "InputError",
    "InputTypeError",
    "NotRepresentableError",
    "ProvisionalWarning",
    "check_flag",
    "spell",
    "command_line",
    "choices",
    "close_names",
    "did_you_mean",
    "unknown_name",
    "user_stacklevel",
]


class SmtmmaError(Exception):
    """Root of every error smtmma raises on purpose."""


class UnknownNameError(SmtmmaError, KeyError):
    """An architecture, instruction, format or op name that does not exist."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class InputError(SmtmmaError, ValueError):
    """Malformed input: bad hex, wrong vector length, missing field, bad shape."""


class InputTypeError(InputError, TypeError):
    """An argument of the wrong type: None or a number for a name, floats where bit patterns go."""


class NotRepresentableError(InputError):
    """A value that its format cannot hold exactly (too many bits, inexact decimal)."""


class ProvisionalWarning(UserWarning):
    """A result of a provisional architecture's model: documented shapes, a hypothesis no recorded output confirms."""


def check_flag(name: str, value: object) -> bool:
    """``value`` as a bool: True, False (or a NumPy bool); InputTypeError for anything else ("False" is not False)."""
    if isinstance(value, bool) or (type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")):
        return bool(value)
    shown = repr(value) if len(repr(value)) <= _NAME_SHOWN else f"a {type(value).__name__}"
    raise InputTypeError(f"{name} must be True or False, got {shown}")


#: "python" (the library called directly) or "cli" (a ``smtmma`` command): how a message names a parameter.
_INTERFACE: contextvars.ContextVar[str] = contextvars.ContextVar("smtmma_interface", default="python")


def spell(name: str, value: object = None, *, option: Optional[str] = None, shown: Optional[str] = None) -> str:
    """Parameter ``name`` (with ``value``) as the caller writes it: ``round='rne'`` in Python, ``--round rne`` on the
    command line (inside :func:`command_line`); ``value`` True is a flag there (``--tight``).

    ``option``: the command's option when it is not ``--NAME`` (``--time-limit`` for ``time_limit_s``); ``shown``:
    the value as the command line writes it (default: ``value`` as is; ``repr`` in Python).
    """
    if _INTERFACE.get() == "cli":
        opt = option or "--" + name.replace("_", "-")
        if (value is None or value is True) and shown is None:  # an option alone, or a flag
            return opt
        return f"{opt} {shown if shown is not None else value}"
    return f"{name}=" if value is None else f"{name}={value!r}"


@contextlib.contextmanager
def command_line() -> Iterator[None]:
    """Within it, messages name parameters as command-line options (:func:`spell`): the CLI runs each command in it."""
    token = _INTERFACE.set("cli")
    try:
        yield
    finally:
        _INTERFACE.reset(token)


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_stacklevel() -> int:
    """The ``stacklevel`` for :func:`warnings.warn` that names the first frame outside smtmma: the user's call.

    Call it in the function that warns, as ``warnings.warn(msg, cls, stacklevel=user_stacklevel())``.
    """
    level, frame = 1, sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    return level


def choices(names: object) -> str:
    """Return ``names`` as a comma-separated list for error messages."""
    return ", ".join(str(n) for n in names)


def close_names(name: object, names: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` of ``names`` that ``name`` most likely meant (case-insensitive).

    Names that start with ``name`` (or that it starts with) come first, then
    :func:`difflib.get_close_matches`; an empty list when nothing is close.
    """
    pool = list(dict.fromkeys(str(x) for x in names))
    key = str(name).strip().lower()
    if not key or len(key) > 4 * _NAME_SHOWN:  # no valid name is that long: nothing is close
        return []
    lower = {x.lower(): x for x in pool}
    prefix = [x for x in pool if len(key) >= 2 and (x.lower().startswith(key) or key.startswith(x.lower()) and len(x) >= 2)]
    prefix.sort(key=lambda x: abs(len(x) - len(key)))
    close = [lower[x] for x in difflib.get_close_matches(key, list(lower), n=n, cutoff=0.6)]
    return list(dict.fromkeys(close[:1] + prefix + close))[:n]


def did_you_mean(name: object, names: Iterable[str], n: int = 3) -> str:
    """``"did you mean hopper?"`` (or ``"a, b or c?"``) for the :func:`close_names` of ``name``; "" when none."""
    near = close_names(name, names, n)
    if not near:
        return ""
    return "did you mean " + (near[0] if len(near) == 1 else ", ".join(near[:-1]) + " or " + near[-1]) + "?"


#: longest name an error message echoes whole (repr, quotes included)
_NAME_SHOWN = 48


def unknown_name(what: str, name: object, names: Iterable[str], *, aliases: Iterable[str] = (),
                 see: str = "", limit: int = 12) -> str:
    """One-line message for an unknown ``name``: ``unknown architecture 'hoper'; did you mean hopper? valid: ...``.

    Suggestions come from ``names`` and ``aliases``; the valid ``names`` are
    listed when there are at most ``limit`` of them, otherwise ``see`` says
    where the full list is (e.g. ``"smtmma list"``).
    """
    pool = list(dict.fromkeys(names))
    alias_list = list(aliases)
    shown = repr(name)
    long = len(shown) > _NAME_SHOWN
    if long:  # a megabyte of name: neither echoed whole nor compared with every valid one
        shown = f"{shown[:_NAME_SHOWN - 8]}... ({len(str(name))} characters)"
    hint = did_you_mean(name, [*pool, *alias_list]) if len(pool) + len(alias_list) > 5 and not long else ""
    msg = f"unknown {what} {shown}" + (f"; {hint}" if hint else "")
    if len(pool) <= limit or not see:
        msg += ("" if hint else ";") + f" valid: {choices(pool)}"
        return msg + (f" (and aliases: see {see})" if see and alias_list else "")
    return msg + f"{'' if hint else ';'} all {len(pool)}: see {see}"
