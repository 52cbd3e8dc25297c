"""The largest sizes, times and seeds smtmma accepts, and the argument checks the API and the CLI share.

The command line enforces the same bounds in its argument types
(:mod:`smtmma.cli.common`); the Python entry points call
:func:`check_solver_args` so a bad argument is one :class:`InputError`
before any work, not a verdict "unknown" or a traceback from a backend.
"""

from __future__ import annotations

import math
import numbers
import os
from pathlib import Path
from typing import Optional

import numpy as np

from .errors import InputError, InputTypeError

#: the longest dot product (K lanes) a query or a generated suite takes
MAX_K = 1 << 16
#: the most random inputs drawn at once (pools, report samples)
MAX_DRAWS = 1_000_000
#: the longest time limit, in seconds (about 11 days)
MAX_SECONDS = 1e6
#: the largest solver seed (the backends take 32-bit seeds)
MAX_SEED = (1 << 32) - 1

__all__ = ["MAX_K", "MAX_DRAWS", "MAX_SECONDS", "MAX_SEED", "is_int", "check_int", "check_solver_args", "check_seconds",
           "check_output_file"]


def is_int(x: object) -> bool:
    """True for a Python or NumPy integer, False for bools and everything else."""
    return isinstance(x, numbers.Integral) and not isinstance(x, (bool, np.bool_))


def check_int(name: str, x: object, lo: int, hi: Optional[int] = None, note: str = "") -> int:
    """``x`` as an int in lo..hi (hi None: no bound); InputError "NAME must be an int in LO..HI NOTE, got X" if not."""
    if is_int(x) and lo <= int(x) and (hi is None or int(x) <= hi):  # type: ignore[call-overload]
        return int(x)  # type: ignore[call-overload]
    what = f"an int in {lo}..{hi}" if hi is not None else "a positive int" if lo == 1 else f"an int >= {lo}"
    raise InputError(f"{name} must be {what}{note}, got {x!r}")


def check_seconds(name: str, x: object) -> float:
    """``x`` as seconds: a real number in (0, MAX_SECONDS]; InputError otherwise."""
    if not isinstance(x, numbers.Real) or isinstance(x, bool):
        raise InputTypeError(f"{name} must be a number of seconds, got {type(x).__name__} {x!r}")
    v = float(x)
    if not (math.isfinite(v) and 0 < v <= MAX_SECONDS):
        raise InputError(f"{name} must be a positive number of seconds up to {MAX_SECONDS:g}, got {x!r}")
    return v


def check_solver_args(*, k: Optional[object] = None, solver: Optional[object] = None, timeout: object = 60.0,
                      time_limit_s: Optional[object] = None, seed: object = 0) -> None:
    """InputError (one line) when a solver query's arguments are not what they must be.

    ``k``: None or an int in 1..MAX_K; ``solver``: None or a backend name
    (str); ``timeout``, ``time_limit_s`` (None allowed): seconds;
    ``seed``: an int in 0..MAX_SEED.
    """
    if k is not None:
        check_int("k", k, 1, MAX_K, " (the dot product's length)")
    if solver is not None and not isinstance(solver, str):
        raise InputTypeError(f"solver must be a backend name such as 'bitwuzla', got {type(solver).__name__}")
    check_seconds("timeout", timeout)
    if time_limit_s is not None:
        check_seconds("time_limit_s", time_limit_s)
    check_int("seed", seed, 0, MAX_SEED)


def check_output_file(path: object, what: str, hint: str) -> Path:
    """``path`` as the file a command is about to write; InputError before any work when it cannot be.

    Refused: an empty name, a directory, a folder that is not there, a place
    that is not writable.  ``what`` names the option (``-o``), ``hint`` the
    file expected ("the file D is written to (D.npy)").
    """
    if not isinstance(path, (str, os.PathLike)):
        raise InputTypeError(f"{what} is a file name, got {type(path).__name__}")
    if not str(path).strip():
        raise InputError(f"{what} is empty; give {hint}")
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{what} {path} is a directory; give {hint}")
    if not p.parent.is_dir():
        raise InputError(f"{what} {path}: no such directory {str(p.parent)!r}")
    if not os.access(p if p.exists() else p.parent, os.W_OK):
        raise InputError(f"{what} {path}: not writable")
    return p
