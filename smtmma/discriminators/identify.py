"""Closed-loop identification: run one vector, drop the candidates the device contradicts, repeat.

Each round picks, among the pool's inputs, the one that splits the
surviving models into the most evenly sized groups (most pairs of survivors
separated); when no pool input splits them, the solver is asked for an
input on which two survivors differ, or proves them equivalent.  The loop
ends with one class (every survivor identical to, or proved equivalent with,
the others: "identified") or with no survivor ("none"; the last vector is
the start of a model revision).  This is step 4 of the MMA-Sim paper's
closed-loop feature probing (§3.1), with the probes chosen by a solver.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Protocol, Sequence

import numpy as np

from ..limits import check_int
from ..formats import format_hex
from ..catalogue import lookup
from ..models import Model
from ..queries.distinguish import distinguish
from ..queries.formula import Domain
from ..vectors import TestVector, dump_vector, parse_line, vector_formats
from .candidates import Space
from .classes import Evaluated, Evidence, evaluate_pool
from ..queries.pool import Inputs, model_outputs
from .selection import separated_pairs

__all__ = ["Runner", "Round", "Identification", "identify"]


class Runner(Protocol):
    """What :func:`identify` needs of a device: D bits of each vector."""

    def run(self, vectors: Sequence[TestVector]) -> list[int]: ...


#: pool vectors run when the candidates form one class before any vector: the device must match them all
CONFIRM_VECTORS = 8


@dataclass(frozen=True)
class Round:
    """One vector run: the line (JSON, with every survivor's ``expect``), the device's D, the survivors after it."""

    vector: str
    d: int
    survivors: list[str]
    source: str  # "pool", "solver", or "confirmation" (one class from the start: a pool vector checks the device is it)


@dataclass
class Identification:
    """The verdict ("identified", "none", or "undecided" when a solver gave up or ``max_vectors`` ran out),
    the surviving candidates and the transcript."""

    verdict: str
    models: list[str]
    rounds: list[Round]
    evidence: list[Evidence] = field(default_factory=list)  # why the survivors are one class
    last_vector: Optional[str] = None  # the vector no candidate explains (verdict "none")
    seconds: float = 0.0
    d_hex: Callable[[int], str] = field(default=lambda x: f"{x:x}", repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` record: verdict, models, vectors_run, transcript [{vector, d, survivors}], evidence, seconds."""
        rec: dict[str, Any] = {
            "verdict": self.verdict,
            "models": self.models,
            "vectors_run": len(self.rounds),
            "transcript": [{"vector": json.loads(r.vector), "d": self.d_hex(r.d), "survivors": r.survivors, "source": r.source}
                           for r in self.rounds],
            "evidence": [{"rep": e.rep, "member": e.member, "verdict": e.verdict, "solver": e.solver,
                          "seconds": round(e.seconds, 3)} for e in self.evidence],
            "seconds": round(self.seconds, 3),
        }
        if self.last_vector is not None:
            rec["last_vector"] = json.loads(self.last_vector)
        return rec


def identify(
    device: Runner,
    space: Space,
    *,
    K: Optional[int] = None,
    domain: Optional[Domain] = None,
    pool_size: int = 2048,
    seed: int = 0,
    solver: Optional[str] = None,
    timeout: float = 60.0,
    max_vectors: int = 64,
    evaluated: Optional[Evaluated] = None,
    progress: Optional[Callable[[str], None]] = None,
) -> Identification:
    """Name the class of ``space`` the device computes, one vector at a time (see the module docstring).

    ``timeout`` is per solver call (seconds); a pair the solver gives up on
    ends the loop with both survivors named (evidence "unknown").
    ``evaluated``: a pool already run through the space's models
    (:func:`~smtmma.discriminators.classes.evaluate_pool`), reused across
    identifications (then K, domain, pool_size and seed are its own).
    """
    check_int("max_vectors", max_vectors, 1)
    t0 = time.perf_counter()
    if evaluated is None:
        evaluated = evaluate_pool(space, K=K, domain=domain, pool_size=pool_size, seed=seed)
    K, domain, names_of, pool = evaluated.K, evaluated.domain, evaluated.names, evaluated.pool
    alive = list(evaluated.models)
    outputs = evaluated.outputs
    entry = lookup(space.base_arch, space.instr)
    fm = vector_formats(entry)
    result = Identification("identified", [], [], d_hex=lambda x: format_hex(fm.d, x))
    proved: dict[Model, Evidence] = {}  # survivors proved equivalent to the first survivor
    domain_checked = False
    while True:
        open_ = [m for m in alive[1:] if m not in proved]
        # one class left before any vector ran (one candidate, or all equivalent): still run a few pool vectors, so
        # that a device that is none of them is caught rather than named without a test
        confirm = (not open_ and len(result.rounds) < min(CONFIRM_VECTORS, outputs.shape[1])
                   and all(r.source == "confirmation" for r in result.rounds))  # no vector has split them yet
        if not open_ and not confirm:
            break
        if len(result.rounds) >= max_vectors:
            result.verdict = "undecided"
            break
        source = "pool"
        labels = np.zeros(len(alive), dtype=np.int64)
        gains = [] if confirm or not outputs.shape[1] else [separated_pairs(labels, outputs[:, j])
                                                            for j in range(outputs.shape[1])]
        if confirm:
            source = "confirmation"
            row = pool.take([len(result.rounds)])
            column = outputs[:, len(result.rounds)]
        elif gains and max(gains) > 0:
            j = int(np.argmax(gains))
            row = pool.take([j])
            column = outputs[:, j]
        else:  # the pool cannot split the survivors: ask the solver about the first survivor and an open one
            rep, other = alive[0], open_[0]
            a, b = names_of[rep][0], names_of[other][0]
            if progress is not None:
                progress(f"solver: {a} vs {b}")
            r = distinguish([rep, other], [a, b], K=K, domain=domain, solver=solver, timeout=timeout, seed=seed,
                            check_domain=not domain_checked)
            if r.verdict != "sat" or r.witness is None:
                domain_checked = domain_checked or r.verdict == "unsat"
                proved[other] = Evidence(a, b, r.verdict, r.solver, r.seconds)
                continue
            w = r.witness
            row = Inputs.single(w.a, w.b, w.c, w.scale_a, w.scale_b)
            column = np.array([model_outputs(m, row)[0] for m in alive], dtype=np.uint64)
            source = "solver"
        expect = {n: int(x) for m, x in zip(alive, column) for n in names_of[m]}
        a_, b_, c_, sa, sb = row.row(0)
        line = dump_vector(space.base_arch, space.instr, a_, b_, c_, None, scale_a=sa, scale_b=sb, expect=expect)
        vec = parse_line(line)
        if progress is not None:
            progress(f"running vector {len(result.rounds) + 1} on the device ({len(alive)} models left)")
        d = int(device.run([vec])[0])
        keep = [i for i, m in enumerate(alive) if expect[names_of[m][0]] == d]
        result.rounds.append(Round(line, d, [n for i in keep for n in names_of[alive[i]]], source))
        if not keep:
            result.verdict, result.last_vector = "none", dump_vector(
                space.base_arch, space.instr, a_, b_, c_, d, scale_a=sa, scale_b=sb, expect=expect,
                note="no candidate explains the device's d")
            result.seconds = time.perf_counter() - t0
            return result
        alive = [alive[i] for i in keep]
        outputs = outputs[keep]
        proved = {m: e for m, e in proved.items() if m in alive}
    result.models = [n for m in alive for n in names_of[m]]
    rep = alive[0]
    result.evidence = [Evidence(names_of[rep][0], n, "identical") for n in names_of[rep][1:]]
    for m in alive[1:]:
        e = proved.get(m)
        if e is not None:
            result.evidence += [Evidence(e.rep, n, e.verdict, e.solver, e.seconds) for n in names_of[m]]
    if any(e.verdict == "unknown" for e in result.evidence):
        result.verdict = "undecided"
    result.seconds = time.perf_counter() - t0
    return result
