"""smtmma: bit-accurate models of GPU matrix units, as a simulator and as SMT formulas.

Public API: :func:`simulate_dot`, :func:`simulate_mma` (bit patterns in,
bit patterns out), the catalogue (:func:`lookup`), formats and models.
"""

from __future__ import annotations

from .catalogue import CATALOGUE, lookup, resolve_arch, resolve_instr
from .errors import InputError, InputTypeError, NotRepresentableError, SmtmmaError, UnknownNameError
from .formats import FORMATS, get_format
from .models import Model
from .simulate import simulate_dot, simulate_mma

__version__ = "0.1.0"

__all__ = [
    "simulate_dot",
    "simulate_mma",
    "lookup",
    "resolve_arch",
    "resolve_instr",
    "CATALOGUE",
    "Model",
    "FORMATS",
    "get_format",
    "SmtmmaError",
    "InputError",
    "InputTypeError",
    "UnknownNameError",
    "NotRepresentableError",
    "__version__",
]
