"""A claim of the literature as a named check: what the document says, how smtmma decides it, and the registry.

A :class:`Claim` names a document (``source``), the models it is about, the
verdict the document reports (``expected``) and a function that decides it
(``run(ctx) -> Outcome``).  Claims register themselves with :func:`claim`
in the ``claims_*`` modules; :data:`CLAIMS` maps names to claims.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..errors import UnknownNameError, unknown_name
from .certificate import Certificate

__all__ = ["Claim", "Context", "Outcome", "CLAIMS", "claim", "get_claim"]


@dataclass(frozen=True)
class Context:
    """How claims are run: the backend (None: the preferred one), seconds per solver call, seed."""

    solver: Optional[str] = None
    timeout: float = 60.0
    seed: int = 0


@dataclass
class Outcome:
    """What a claim's check found.

    ``verdict``: the obtained answer in the claim's own words ("holds",
    "fails", "sat", "unsat", "3 carry bits", "0.0", ...) or "unknown";
    ``agrees``: whether it is the document's verdict (None when unknown);
    ``witness``: JSON data of the input that decides it (hex and decimal),
    when there is one; ``detail``: one or a few lines saying why;
    ``certificate``: the SMT-LIB2 checks it rests on (None for claims decided
    by simulation alone).
    """

    verdict: str
    agrees: Optional[bool]
    solver: str = ""
    witness: Optional[dict[str, Any]] = None
    detail: str = ""
    certificate: Optional[Certificate] = None
    extra: dict[str, Any] = field(default_factory=dict)
    covers: list[str] = field(default_factory=list)  # "arch instr op" rows the verdict decides (default: the claim's models)
    seconds: float = 0.0  # filled in by the runner


@dataclass(frozen=True)
class Claim:
    """A named claim: document, models, expected verdict and the check that decides it."""

    name: str
    source: str  # "001 Table 4" (seed number, section/table)
    models: tuple[str, ...]  # "sm70 f16f32", ...
    expected: str  # the verdict the document reports, in the words of Outcome.verdict
    summary: str  # one line: what is claimed
    run: Callable[[Context], Outcome]
    group: str = ""  # e.g. "table4", "carry-bits", "error-bound" (for --list and the report)

    def check(self, ctx: Context) -> Outcome:
        """Run the check; ``seconds`` of the outcome is its wall time."""
        t0 = time.perf_counter()
        out = self.run(ctx)
        out.seconds = time.perf_counter() - t0
        return out


#: name -> Claim, in the order they were registered.
CLAIMS: dict[str, Claim] = {}


def claim(name: str, *, source: str, models: tuple[str, ...], expected: str, summary: str,
          group: str = "") -> Callable[[Callable[[Context], Outcome]], Callable[[Context], Outcome]]:
    """Decorator: register ``fn(ctx) -> Outcome`` as claim ``name``."""

    def register(fn: Callable[[Context], Outcome]) -> Callable[[Context], Outcome]:
        if name in CLAIMS:
            raise ValueError(f"claim {name} registered twice")
        CLAIMS[name] = Claim(name, source, tuple(models), expected, summary, fn, group)
        return fn

    return register


def add_claim(c: Claim) -> Claim:
    """Register a claim built without the decorator (claims generated per model)."""
    if c.name in CLAIMS:
        raise ValueError(f"claim {c.name} registered twice")
    CLAIMS[c.name] = c
    return c


def get_claim(name: str) -> Claim:
    """The claim called ``name``; :class:`UnknownNameError` listing the close names otherwise."""
    from . import load_claims

    load_claims()
    c = CLAIMS.get(name)
    if c is None:
        raise UnknownNameError(unknown_name("claim", name, CLAIMS, see="smtmma prove --list"))
    return c
