"""Closed-loop identification: run one vector, drop the candidates the device contradicts, repeat.

Each round picks, among the pool's inputs, the one that splits the
surviving models into the most evenly sized groups (most pairs of survivors
separated); when no pool input splits them, the solver is asked for an
input on which two survivors differ, or proves them equivalent.  One class
left is not yet an answer: a device that implements no candidate can agree
with one class on every vector that split the space.  So the class is then
confirmed (:mod:`.confirmation`): the device must also give the class's D
on a vector for each of the class's structural neighbours (a vector where
the neighbour's D differs, unless the solver proves it equivalent) and on a
random sample sized by a stated rate and confidence.  The loop ends with
one confirmed class ("identified"), with no survivor or a failed
confirmation ("none": the vector no survivor explains is the start of a
model revision, and the candidates and neighbours that explain the most
vectors are named), or "undecided" (a solver gave up on two survivors, or
on a neighbour of the class: the device matched the class everywhere, but
that neighbour may be it).  This is step 4 of the MMA-Sim
paper's closed-loop feature probing (§3.1), with the probes chosen by a
solver.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Protocol, Sequence

import numpy as np

from ..errors import InputError
from ..limits import check_int
from ..formats import format_hex
from ..catalogue import lookup
from ..models import Model
from ..queries.distinguish import distinguish
from ..queries.formula import Domain
from ..vectors import TestVector, dump_vector, parse_line, vector_formats
from .candidates import Space
from .classes import Evaluated, Evidence, evaluate_pool
from .candidates import spec_name
from .confirmation import (CONFIRM_TIMEOUT, DEFAULT_CONFIDENCE, DEFAULT_RATE, ConfirmationPlan, neighbours,
                           plan_confirmation, random_sample, sample_size)
from ..queries.pool import OperandFormats
from ..queries.pool import Inputs, model_outputs
from .selection import separated_pairs

__all__ = ["Runner", "Round", "Confirmation", "Identification", "identify"]


class Runner(Protocol):
    """What :func:`identify` needs of a device: D bits of each vector."""

    def run(self, vectors: Sequence[TestVector]) -> list[int]: ...


@dataclass(frozen=True)
class Round:
    """One vector run: the line (JSON, with every survivor's ``expect``), the device's D, the survivors after it."""

    vector: str
    d: int
    survivors: list[str]
    source: str  # "pool" or "solver"


@dataclass
class Confirmation:
    """The confirmation of the last class (:mod:`.confirmation`): its plan, how many vectors the device matched,
    and the first vector it did not (a test-vector line with the device's ``d``)."""

    plan: ConfirmationPlan
    matched: int
    failure: Optional[str] = None

    @property
    def vectors(self) -> int:
        """Vectors run: probes, then the random sample."""
        return len(self.plan.inputs)

    def to_dict(self) -> dict[str, Any]:
        """The ``confirmation`` object of ``--json`` (see :meth:`Identification.to_dict`)."""
        p = self.plan
        rec: dict[str, Any] = {
            "vectors": self.vectors, "matched": self.matched, "probes": p.probes, "random": p.random,
            "rate": p.rate, "confidence": p.confidence,
            "neighbours": len(p.neighbours), "split": p.count("split"), "equivalent": p.count("equivalent"),
            "unresolved": [n.name for n in p.neighbours if n.status == "unresolved"],
            "proved_equivalent": [{"model": n.name, "solver": n.solver, "seconds": round(n.seconds, 3)}
                                  for n in p.neighbours if n.status == "equivalent"],
            "seconds": round(p.seconds, 3),
        }
        if self.failure is not None:
            rec["failure"] = json.loads(self.failure)
        return rec

    def scope(self) -> str:
        """One sentence: what the confirmation shows."""
        p = self.plan
        split, same = p.count("split"), p.count("equivalent")
        text = f"its vectors split {split} of {len(p.neighbours)} structural neighbours from the class"
        if same:
            text += f", {same} proved equivalent on the domain"
        text += (f"; {p.random} random vectors: a device differing on >= {p.rate:.3g} of random inputs of the domain "
                 f"passes them with probability <= {1 - p.assurance:.3g}")
        if p.assurance < p.confidence:
            text += f" (the domain held fewer random inputs than the {sample_size(p.rate, p.confidence)} asked for)"
        unresolved = [n.name for n in p.neighbours if n.status == "unresolved"]
        if unresolved:
            text += f"; not separated (solver gave up): {', '.join(unresolved)}"
        return text


@dataclass
class Identification:
    """The verdict ("identified", "none", or "undecided" when a solver gave up -- on two survivors, or on a structural
    neighbour of the class the device matched -- or ``max_vectors`` ran out),
    the surviving candidates and the transcript."""

    verdict: str
    models: list[str]
    rounds: list[Round]
    evidence: list[Evidence] = field(default_factory=list)  # why the survivors are one class
    last_vector: Optional[str] = None  # the vector no candidate explains (verdict "none")
    seconds: float = 0.0
    d_hex: Callable[[int], str] = field(default=lambda x: f"{x:x}", repr=False)
    confirmation: Optional[Confirmation] = None  # of the last class (None when none was left or the rounds were undecided)
    nearest: list[tuple[str, int, int]] = field(default_factory=list)  # verdict "none": (model, vectors explained, run)
    ranking_vectors: int = 0  # random vectors run, after no candidate was left, to rank the nearest models

    @property
    def vectors_run(self) -> int:
        """Vectors the device ran: the rounds, then the confirmation's or the ranking's."""
        return len(self.rounds) + (self.confirmation.vectors if self.confirmation is not None else 0) + self.ranking_vectors

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` record: verdict, models, vectors_run, transcript [{vector, d, survivors}], evidence,
        confirmation, nearest, seconds."""
        rec: dict[str, Any] = {
            "verdict": self.verdict,
            "models": self.models,
            "vectors_run": self.vectors_run,
            "transcript": [{"vector": json.loads(r.vector), "d": self.d_hex(r.d), "survivors": r.survivors, "source": r.source}
                           for r in self.rounds],
            "evidence": [{"rep": e.rep, "member": e.member, "verdict": e.verdict, "solver": e.solver,
                          "seconds": round(e.seconds, 3)} for e in self.evidence],
            "seconds": round(self.seconds, 3),
        }
        if self.confirmation is not None:
            rec["confirmation"] = self.confirmation.to_dict()
        if self.nearest:
            rec["nearest"] = [{"model": m, "explained": k, "of": n} for m, k, n in self.nearest]
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
    rate: float = DEFAULT_RATE,
    confidence: float = DEFAULT_CONFIDENCE,
    confirm_timeout: float = CONFIRM_TIMEOUT,
    progress: Optional[Callable[[str], None]] = None,
) -> Identification:
    """Name the class of ``space`` the device computes, one vector at a time, and confirm it (see the module docstring).

    ``timeout`` is per solver call (seconds); a pair the solver gives up on
    ends the loop with both survivors named (evidence "unknown").
    ``evaluated``: a pool already run through the space's models
    (:func:`~smtmma.discriminators.classes.evaluate_pool`), reused across
    identifications (then K, domain, pool_size and seed are its own).
    ``rate``, ``confidence``: the random part of the confirmation catches a
    device that differs from the class on at least ``rate`` of random inputs
    with probability at least ``confidence``
    (:func:`~smtmma.discriminators.confirmation.sample_size` vectors);
    ``confirm_timeout``: seconds per solver call on a structural neighbour no
    simulated input splits (at most ``timeout``).
    """
    check_int("max_vectors", max_vectors, 1)
    sample_size(rate, confidence)  # bad values fail before any work
    if isinstance(confirm_timeout, bool) or not isinstance(confirm_timeout, (int, float)) or not confirm_timeout > 0:
        raise InputError(f"confirm_timeout must be a positive number of seconds, got {confirm_timeout!r}")
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
    ran: list[Inputs] = []  # the rows run, in order (for ranking models when no candidate is left)
    domain_checked = False
    while True:
        open_ = [m for m in alive[1:] if m not in proved]
        if not open_:
            break
        if len(result.rounds) >= max_vectors:
            result.verdict = "undecided"
            break
        source = "pool"
        labels = np.zeros(len(alive), dtype=np.int64)
        gains = [separated_pairs(labels, outputs[:, j]) for j in range(outputs.shape[1])]
        if gains and max(gains) > 0:
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
        ran.append(row)
        keep = [i for i, m in enumerate(alive) if expect[names_of[m][0]] == d]
        result.rounds.append(Round(line, d, [n for i in keep for n in names_of[alive[i]]], source))
        if not keep:
            result.verdict, result.last_vector = "none", dump_vector(
                space.base_arch, space.instr, a_, b_, c_, d, scale_a=sa, scale_b=sb, expect=expect,
                note="no candidate explains the device's d")
            result.nearest, result.ranking_vectors = _rank(device, space, evaluated, alive, ran,
                                                           [r.d for r in result.rounds], seed=seed,
                                                           n=sample_size(rate, confidence), progress=progress)
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
    if result.verdict == "identified":
        _confirm(result, device, space, evaluated, alive, ran, seed=seed, solver=solver,
                 timeout=min(timeout, confirm_timeout), rate=rate, confidence=confidence, progress=progress)
    result.seconds = time.perf_counter() - t0
    return result


def _batch(space: Space, rows: Inputs) -> list[TestVector]:
    """Test vectors of ``rows`` on the space's base architecture and instruction (default op family)."""
    e = lookup(space.base_arch, space.instr)
    out = []
    for i in range(len(rows)):
        a, b, c, sa, sb = rows.row(i)
        out.append(TestVector(i + 1, e.arch, e.instr, e.op, a, b, c, scale_a=sa, scale_b=sb))
    return out


def _confirm(result: Identification, device: Runner, space: Space, evaluated: Evaluated, alive: list[Model],
             ran: list[Inputs], *, seed: int, solver: Optional[str], timeout: float, rate: float, confidence: float,
             progress: Optional[Callable[[str], None]]) -> None:
    """Run the confirmation of the one class left (``alive``); on a mismatch turn ``result`` into "none"."""
    names_of = evaluated.names
    rep = alive[0]
    plan = plan_confirmation(rep, space.instr, evaluated.K, evaluated.domain, evaluated.pool, exclude=alive,
                             seed=seed, solver=solver, timeout=timeout, rate=rate, confidence=confidence,
                             progress=progress)
    if progress is not None:
        progress(f"running {len(plan.inputs)} confirmation vectors on the device")
    got = np.array(device.run(_batch(space, plan.inputs)), dtype=np.uint64)
    if got.shape != plan.expected.shape:
        raise InputError(f"the device returned {got.shape[0]} results for {len(plan.inputs)} vectors")
    bad = np.nonzero(got != plan.expected)[0]
    result.confirmation = Confirmation(plan, len(plan.inputs) - len(bad))
    if not len(bad):
        if plan.count("unresolved"):  # the device may be a neighbour no vector told from the class: not an answer
            result.verdict = "undecided"
        return
    ran_all = [*ran, plan.inputs]
    ds = [r.d for r in result.rounds] + [int(x) for x in got]
    result.nearest = _nearest(evaluated, [(n.name, n.model) for n in plan.neighbours], ran_all, ds)
    i = int(bad[0])
    a, b, c, sa, sb = plan.inputs.row(i)
    row = plan.inputs.take([i])
    expect = {n: int(plan.expected[i]) for n in result.models}
    for name, _, _ in result.nearest[:3]:
        if name not in expect:
            model = next((m for m in evaluated.models if names_of[m][0] == name), None) or next(
                n.model for n in plan.neighbours if n.name == name)
            expect[name] = int(model_outputs(model, row, "numpy")[0])
    what = (f"probe {i + 1} of {plan.probes} (a structural neighbour differs from the class here)" if i < plan.probes
            else f"random vector {i + 1 - plan.probes} of {plan.random}")
    line = dump_vector(space.base_arch, space.instr, a, b, c, int(got[i]), scale_a=sa, scale_b=sb, expect=expect,
                       note=f"confirmation {what}: the device's d is not the identified class's")
    result.confirmation.failure = line
    result.verdict, result.last_vector = "none", line


def _rank(device: Runner, space: Space, evaluated: Evaluated, last: list[Model], ran: list[Inputs], ds: list[int], *,
          seed: int, n: int, progress: Optional[Callable[[str], None]]) -> tuple[list[tuple[str, int, int]], int]:
    """No candidate left: run ``n`` random vectors too, and rank the candidates and the structural neighbours of the last
    survivors (``last``) by the vectors they explain -- the model a revision would start from; and the vectors run."""
    sample = random_sample(OperandFormats.of(last[0]), evaluated.K, n, evaluated.domain, seed)
    if progress is not None:
        progress(f"no candidate left: running {len(sample)} random vectors to find the nearest models")
    got = [int(x) for x in device.run(_batch(space, sample))]
    extra = [(spec_name(m, rep), m) for rep in last for m in neighbours(rep, space.instr, evaluated.domain)]
    return _nearest(evaluated, extra, [*ran, sample], ds + got), len(sample)


def _nearest(evaluated: Evaluated, extra: list[tuple[str, Model]], rows: list[Inputs], ds: list[int],
             top: int = 5) -> list[tuple[str, int, int]]:
    """The ``top`` models (the space's, then ``extra``) that explain the most of the device's outputs ``ds`` on ``rows``
    (those that explain at least one)."""
    if not rows:
        return []
    inputs = Inputs.concat(rows)
    want = np.array(ds, dtype=np.uint64)
    ranked = []
    named = [(evaluated.names[m][0], m) for m in evaluated.models]
    named += [(n, m) for n, m in dict((m, (n, m)) for n, m in extra).values() if m not in evaluated.names]
    for order, (name, model) in enumerate(named):
        hits = int((model_outputs(model, inputs, "numpy") == want).sum())
        ranked.append((-hits, order, name))
    ranked.sort()
    return [(name, -neg, len(want)) for neg, _, name in ranked[:top] if neg]  # models that explain no vector say nothing
