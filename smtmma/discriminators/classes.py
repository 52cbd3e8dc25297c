"""Equivalence classes of candidate models, and the inputs that tell the classes apart.

:func:`discover_classes` partitions the distinct models of a space by their
outputs on a pool of inputs (:mod:`smtmma.queries.pool`); models the
pool cannot split are handed to the solver pairwise: a sat witness (replayed
through the simulator by :func:`~smtmma.queries.distinguish.distinguish`)
joins the pool and splits them, an unsat answer proves them equivalent on
the domain.  The result lists every class with its evidence and the pool
with every distinct model's output on every row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from ..errors import InputTypeError
from ..limits import MAX_DRAWS, MAX_K, MAX_SEED, check_int
from ..models import Model
from ..queries.distinguish import distinguish
from ..queries.formula import Domain, parse_domain
from .candidates import Space
from ..queries.pool import Inputs, OperandFormats, draw_pool, model_outputs

__all__ = ["Evidence", "ModelClass", "Evaluated", "Discovery", "evaluate_pool", "discover_classes", "partition", "suite_length"]


@dataclass(frozen=True)
class Evidence:
    """Why ``member`` is in the class of ``rep``: "identical" model, or the solver's "unsat" / "unknown"."""

    rep: str
    member: str
    verdict: str
    solver: str = ""
    seconds: float = 0.0


@dataclass
class ModelClass:
    """Candidates no input of the domain tells apart; ``models`` its distinct models (first = representative)."""

    names: list[str]
    models: list[Model]
    evidence: list[Evidence] = field(default_factory=list)

    @property
    def proven(self) -> bool:
        """True when every member is identical or proved equivalent (no solver gave up)."""
        return all(e.verdict != "unknown" for e in self.evidence)


@dataclass
class Evaluated:
    """A space's distinct models (candidate order), their names, a pool of inputs and every model's outputs on it."""

    space: Space
    K: int
    domain: Domain
    models: list[Model]
    names: dict[Model, list[str]]
    pool: Inputs
    outputs: np.ndarray  # (len(models), len(pool)) D patterns

    def add(self, row: Inputs) -> None:
        """Append the rows of ``row`` to the pool, with every model's outputs."""
        self.pool = Inputs.concat([self.pool, row])
        self.outputs = np.concatenate([self.outputs, np.stack([model_outputs(m, row) for m in self.models])], axis=1)


def evaluate_pool(space: Space, *, K: Optional[int] = None, domain: Optional[Domain] = None, pool_size: int = 2048,
                  seed: int = 0) -> Evaluated:
    """Draw a pool of about ``pool_size`` inputs of length K (default :func:`suite_length`) and run every model on it."""
    if isinstance(domain, str):
        domain = parse_domain(domain)
    elif domain is not None and not isinstance(domain, Domain):
        raise InputTypeError(f"domain must be a Domain or a string such as 'exp=-8:8,lanes=4', got {type(domain).__name__}")
    if not isinstance(space, Space):
        raise InputTypeError(f"space must be a Space (catalogue_space, explicit_space, grid_space), got {type(space).__name__}")
    if K is not None:
        check_int("K", K, 1, MAX_K)
    check_int("pool_size", pool_size, 0, MAX_DRAWS)
    check_int("seed", seed, 0, MAX_SEED)
    domain = domain or Domain()
    K = K or suite_length(space)
    domain.check_lanes(K)
    names_of: dict[Model, list[str]] = {}
    for c in space.candidates:
        names_of.setdefault(c.model, []).append(c.name)
    models = list(names_of)
    pool = draw_pool(OperandFormats.of(models[0]), K, pool_size, np.random.default_rng(seed), domain)
    outputs = np.stack([model_outputs(m, pool) for m in models]) if len(pool) else np.zeros((len(models), 0), np.uint64)
    return Evaluated(space, K, domain, models, names_of, pool, outputs)


@dataclass
class Discovery:
    """Classes of a space on a domain, with the evaluated pool they were found on (solver witnesses included)."""

    evaluated: Evaluated
    classes: list[ModelClass]
    witnesses: int = 0  # pool rows that came from the solver
    calls: list[Evidence] = field(default_factory=list)  # every solver call: the pair, verdict, solver, seconds

    @property
    def solver_calls(self) -> int:
        """Solver calls made."""
        return len(self.calls)

    @property
    def solver_seconds(self) -> float:
        """Seconds spent in solver calls."""
        return sum(c.seconds for c in self.calls)

    @property
    def space(self) -> Space:
        """The candidates."""
        return self.evaluated.space

    @property
    def K(self) -> int:
        """Length of the dot products."""
        return self.evaluated.K

    @property
    def domain(self) -> Domain:
        """The inputs considered."""
        return self.evaluated.domain

    @property
    def models(self) -> list[Model]:
        """Distinct models, in candidate order."""
        return self.evaluated.models

    @property
    def pool(self) -> Inputs:
        """The pool (drawn rows, then the solver's witnesses)."""
        return self.evaluated.pool

    @property
    def outputs(self) -> np.ndarray:
        """(models, pool rows) D patterns."""
        return self.evaluated.outputs

    def class_outputs(self) -> np.ndarray:
        """(classes, pool rows): each class representative's outputs."""
        idx = {m: i for i, m in enumerate(self.models)}
        return self.outputs[[idx[c.models[0]] for c in self.classes]]


def partition(rows: np.ndarray) -> np.ndarray:
    """Block label of each row of ``rows`` (equal rows share a label; labels 0.. in order of first appearance)."""
    if rows.shape[1] == 0:
        return np.zeros(rows.shape[0], dtype=np.int64)
    _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))  # relabel by first appearance
    return order[inverse.reshape(-1)]


def suite_length(space: Space) -> int:
    """The dot-product length K of a suite: the largest L (or P) of the candidates and the largest k of their instructions.

    Every catalogue instruction of the candidates then runs whole issues
    (all lengths are powers of two, so the largest is a multiple of the others).
    """
    from ..catalogue import lookup

    K = 1
    for c in space.candidates:
        m = c.model
        K = max(K, m.L or 0, m.P or 0, m.block or 0)
        if c.arch is not None:
            K = max([K] + [s.k for s in lookup(c.arch, space.instr, c.op).shapes])
    if K == 1:  # FMA chains only: one issue of the base architecture's instruction
        K = max([4] + [s.k for s in lookup(space.base_arch, space.instr).shapes])
    return K


def discover_classes(
    space: Space,
    *,
    K: Optional[int] = None,
    domain: Optional[Domain] = None,
    pool_size: int = 2048,
    seed: int = 0,
    solver: Optional[str] = None,
    timeout: float = 60.0,
    progress: Optional[Callable[[str], None]] = None,
) -> Discovery:
    """Partition ``space`` into classes of models that no input of ``domain`` (length K) tells apart.

    ``timeout`` is per solver call (seconds); a pair the solver gives up on
    stays together with evidence "unknown".  ``progress`` is called with a
    short message before each solver call.
    """
    ev = evaluate_pool(space, K=K, domain=domain, pool_size=pool_size, seed=seed)
    disc = Discovery(ev, [])
    models, names_of, K, domain = ev.models, ev.names, ev.K, ev.domain
    same: dict[int, list[tuple[int, Evidence]]] = {}  # representative -> members proved (or assumed) equivalent
    merged: set[int] = set()
    domain_checked = False
    pending = [list(range(len(models)))]
    while pending:
        block = pending.pop()
        labels = partition(disc.outputs[block])
        if len(set(labels.tolist())) > 1:  # the pool already splits it: resolve each part
            pending += [[m for m, lab in zip(block, labels) if lab == v] for v in sorted(set(labels.tolist()))]
            continue
        rep, rest = block[0], block[1:]
        split = False
        for m in rest:
            if not np.array_equal(disc.outputs[rep], disc.outputs[m]):
                continue  # a witness found for another member splits this one too
            a, b = names_of[models[rep]][0], names_of[models[m]][0]
            if progress is not None:
                progress(f"solver: {a} vs {b}")
            r = distinguish([models[rep], models[m]], [a, b], K=K, domain=domain, solver=solver, timeout=timeout,
                            seed=seed, check_domain=not domain_checked)
            disc.calls.append(Evidence(a, b, r.verdict, r.solver, r.seconds))
            if r.verdict == "sat" and r.witness is not None:
                w = r.witness
                ev.add(Inputs.single(w.a, w.b, w.c, w.scale_a, w.scale_b))
                disc.witnesses += 1
                split = True
            else:
                domain_checked = domain_checked or r.verdict == "unsat"
                same.setdefault(rep, []).append((m, Evidence(a, b, r.verdict, r.solver, r.seconds)))
                merged.add(m)
        if split:  # re-resolve what the witnesses left together (members already merged stay merged)
            survivors = [m for m in block if m not in merged or m == rep]
            pending.append(survivors)
    for i, m in enumerate(models):
        if i in merged:
            continue
        members = [i] + [j for j, _ in same.get(i, [])]
        names = [n for j in members for n in names_of[models[j]]]
        evidence = [Evidence(names_of[m][0], n, "identical") for n in names_of[m][1:]]
        for j, e in same.get(i, []):
            evidence.append(e)
            evidence += [Evidence(names_of[m][0], n, e.verdict, e.solver, e.seconds) for n in names_of[models[j]][1:]]
        disc.classes.append(ModelClass(names, [models[j] for j in members], evidence))
    return disc
