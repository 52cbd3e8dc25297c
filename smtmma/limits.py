"""The largest sizes, times and seeds smtmma accepts, and the checks of the solver arguments the API shares.

The command line enforces the same bounds in its argument types
(:mod:`smtmma.cli.common`); the Python entry points call
:func:`check_solver_args` so a bad argument is one :class:`InputError`
before any work, not a verdict "unknown" or a traceback from a backend.
"""

from __future__ import annotations

import math
import numbers
from typing import Optional

from .errors import InputError, InputTypeError

#: the longest dot product (K lanes) a query or a generated suite takes
MAX_K = 1 << 16
#: the most random inputs drawn at once (pools, report samples)
MAX_DRAWS = 1_000_000
#: the longest time limit, in seconds (about 11 days)
MAX_SECONDS = 1e6
#: the largest solver seed (the backends take 32-bit seeds)
MAX_SEED = (1 << 32) - 1

__all__ = ["MAX_K", "MAX_DRAWS", "MAX_SECONDS", "MAX_SEED", "check_solver_args", "check_seconds"]


def _is_int(x: object) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


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
    if k is not None and not (_is_int(k) and 1 <= int(k) <= MAX_K):  # type: ignore[call-overload]
        raise InputError(f"k must be an int in 1..{MAX_K} (the dot product's length), got {k!r}")
    if solver is not None and not isinstance(solver, str):
        raise InputTypeError(f"solver must be a backend name such as 'bitwuzla', got {type(solver).__name__}")
    check_seconds("timeout", timeout)
    if time_limit_s is not None:
        check_seconds("time_limit_s", time_limit_s)
    if not (_is_int(seed) and 0 <= int(seed) <= MAX_SEED):  # type: ignore[call-overload]
        raise InputError(f"seed must be an int in 0..{MAX_SEED}, got {seed!r}")
