"""Minimal test suites: few test vectors whose outputs tell every class of candidates apart.

:func:`build_suite` discovers the classes of a space
(:func:`~smtmma.discriminators.classes.discover_classes`), selects pool rows
that separate them (:func:`~smtmma.discriminators.selection.select`) and
returns each as a test vector whose ``expect`` holds every candidate's D.
A device's outputs on the suite then name its class: the candidates whose
expectations match every line.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from ..queries.formula import Domain
from ..vectors import dump_vector
from .candidates import Space
from .classes import Discovery, ModelClass, discover_classes
from .selection import select, unseparated

__all__ = ["SuiteVector", "Suite", "build_suite", "expectations"]


@dataclass(frozen=True)
class SuiteVector:
    """One dot product of a suite and every candidate's D pattern on it."""

    a: tuple[int, ...]
    b: tuple[int, ...]
    c: int
    scale_a: Optional[tuple[int, ...]]
    scale_b: Optional[tuple[int, ...]]
    expect: dict[str, int]
    groups: int  # distinct outputs among the classes
    separating: bool = True  # False for the conformance vector of a one-class space


@dataclass
class Suite:
    """A suite for one space: its vectors, the candidates' classes and how long it took."""

    discovery: Discovery
    vectors: list[SuiteVector]
    seconds: float

    @property
    def space(self) -> Space:
        """The candidates."""
        return self.discovery.space

    @property
    def classes(self) -> list[ModelClass]:
        """Classes of candidates no input of the domain tells apart."""
        return self.discovery.classes

    @property
    def separating(self) -> list[SuiteVector]:
        """The vectors that tell classes apart (all but a one-class space's conformance vector)."""
        return [v for v in self.vectors if v.separating]

    @property
    def bound(self) -> int:
        """ceil(log2 M): the fewest vectors that can split M classes when each vector splits in two."""
        M = len(self.classes)
        return math.ceil(math.log2(M)) if M > 1 else 0

    def lines(self) -> list[str]:
        """The suite as test-vector lines (JSON, no newline): instruction of the base architecture, ``expect`` per candidate."""
        sp = self.space
        out = []
        for i, v in enumerate(self.vectors, start=1):
            if v.separating:
                note = (f"suite vector {i} of {len(self.vectors)}: {v.groups} distinct outputs over {len(self.classes)} "
                        f"classes of {len(sp.candidates)} candidates")
            else:
                note = (f"conformance vector: the {len(sp.candidates)} candidates form one class, so no vector separates "
                        "them; a device that matches none shows here")
            out.append(dump_vector(sp.base_arch, sp.instr, v.a, v.b, v.c, None, scale_a=v.scale_a, scale_b=v.scale_b,
                                   expect=v.expect, note=note))
        return out

    def summary(self) -> dict[str, Any]:
        """The ``--json`` record: instr, candidates, classes, vectors, bound, seconds, k, domain, equivalent groups, evidence."""
        d = self.discovery
        return {
            "instr": self.space.instr,
            "candidates": len(self.space.candidates),
            "classes": len(self.classes),
            "vectors": len(self.separating),
            "conformance": len(self.vectors) - len(self.separating),
            "log2_classes": self.bound,
            "seconds": round(self.seconds, 3),
            "k": d.K,
            "domain": d.domain.describe(),
            "base_arch": self.space.base_arch,
            "equivalent": [c.names for c in self.classes if len(c.names) > 1],
            "evidence": [{"rep": e.rep, "member": e.member, "verdict": e.verdict, "solver": e.solver,
                          "seconds": round(e.seconds, 3)} for c in self.classes for e in c.evidence if e.verdict != "identical"],
            "unproven": [c.names for c in self.classes if not c.proven],
            "solver_calls": d.solver_calls,
            "witnesses": d.witnesses,
            "dropped": [{"spec": s, "reason": r} for s, r in self.space.dropped],
        }


def expectations(space: Space, outputs_by_model: dict[Any, int]) -> dict[str, int]:
    """``{candidate name: D}`` from each distinct model's output."""
    return {c.name: outputs_by_model[c.model] for c in space.candidates}


def build_suite(
    space: Space,
    *,
    K: Optional[int] = None,
    domain: Optional[Domain] = None,
    pool_size: int = 2048,
    seed: int = 0,
    solver: Optional[str] = None,
    timeout: float = 60.0,
    progress: Optional[Callable[[str], None]] = None,
) -> Suite:
    """A minimal suite for ``space``: vectors that give every pair of classes different outputs.

    ``K`` defaults to :func:`~smtmma.discriminators.classes.suite_length`;
    ``timeout`` is per solver call (seconds).  When a space has one class no
    vector separates anything; the suite then holds one conformance vector
    (not counted as separating), so a device that matches no candidate shows.
    """
    t0 = time.perf_counter()
    disc = discover_classes(space, K=K, domain=domain, pool_size=pool_size, seed=seed, solver=solver, timeout=timeout,
                            progress=progress)
    if progress is not None:
        progress("selecting vectors")
    outs = disc.class_outputs()
    M = len(outs)
    chosen = select(outs, target=math.ceil(math.log2(M)) + 1 if M > 1 else None) if len(disc.pool) else []
    assert not unseparated(outs, chosen), "every class differs from every other on some pool row"
    separating = True
    if not chosen and len(disc.pool):  # one class: a conformance vector, the first pool row with a non-zero D
        separating = False
        nonzero = np.nonzero(outs[0] != 0)[0]
        chosen = [int(nonzero[0]) if len(nonzero) else 0]
    vectors = []
    for j in chosen:
        a, b, c, sa, sb = disc.pool.row(j)
        by_model = {m: int(disc.outputs[i, j]) for i, m in enumerate(disc.models)}
        vectors.append(SuiteVector(a, b, c, sa, sb, expectations(space, by_model), len(set(outs[:, j].tolist())),
                                   separating))
    return Suite(disc, vectors, time.perf_counter() - t0)
