"""smtmma: bit-accurate models of GPU matrix units, as a simulator and as SMT formulas.

Public API: :func:`simulate_dot`, :func:`simulate_mma` (bit patterns in,
bit patterns out), :func:`matmul` (whole GEMMs on real-valued arrays), :func:`emulate` (torch's matrix
products as a GPU computes them), :func:`ulp_distance` (how far apart two
outputs are, in ulps of their format), the catalogue (:func:`lookup`), formats and models, and
the solver queries :func:`distinguish` and :func:`query`, and the catalogue's
property table :func:`property_table` (imported on first use; they return the
records ``smtmma distinguish/query/prove --catalogue --json`` print).
"""

from __future__ import annotations

from .catalogue import CATALOGUE, lookup, resolve_arch, resolve_instr
from .compare import ulp_distance
from .errors import InputError, InputTypeError, NotRepresentableError, ProvisionalWarning, SmtmmaError, UnknownNameError
from .formats import FORMATS, get_format
from .models import Model
from .simulate import simulate_dot, simulate_mma

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """``smtmma.distinguish``, ``smtmma.query``, ``smtmma.property_table``, ``smtmma.matmul`` and ``smtmma.emulate``, imported on first use
    (``import smtmma`` stays light: torch is imported by ``smtmma.emulate`` alone)."""
    if name in ("distinguish", "query"):
        from .queries import api

        return getattr(api, name)
    if name == "matmul":
        from .gemm import matmul

        return matmul
    if name == "emulate":
        from .torch_emulation import emulate

        return emulate
    if name == "property_table":
        from .proofs.catalogue_table import property_table

        return property_table
    raise AttributeError(f"module 'smtmma' has no attribute {name!r}")

__all__ = [
    "simulate_dot",
    "simulate_mma",
    "matmul",
    "emulate",
    "ulp_distance",
    "distinguish",
    "query",
    "property_table",
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
    "ProvisionalWarning",
    "__version__",
]
