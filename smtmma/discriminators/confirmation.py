"""Confirming an identification: the device must match the surviving class where its neighbours differ, and at random.

Narrowing a candidate space to one class shows only that the device is
*none of the other candidates*.  A unit that implements no candidate at
all -- a new design, a perturbed model -- can agree with one class on every
vector that split the space, and would be named after one vector.  Before
:func:`~smtmma.discriminators.identify.identify` reports ``identified``,
the device must also match the class

* wherever a **structural neighbour** of the class differs from it
  (:func:`neighbours`): every model one parameter step away -- L halved or
  doubled, F and F2 one bit more or less, G halved or doubled, the other
  pairwise width P, every other conversion rho to D's format, one carry bit
  fewer than the fused sum needs, the alignment floor, the open questions'
  alternatives (zero terms in e_max, the sign of an exact zero sum,
  truncation for round-down), input flush-to-zero, C added last, no
  conversion to an intermediate format; the NaN pattern when the domain has
  NaN/Inf inputs -- and every point of the structural grid (each model kind
  of the paper once per plausible shape, :data:`~.candidates.STRUCTURAL`).
  One vector per neighbour, found among simulated inputs (a random sample,
  the identification's pool, hill-climbing mutants), else by the solver,
  which may instead prove the neighbour equivalent to the class on the
  domain ("equivalent") or give up ("unresolved"); and
* on a **random sample** of n inputs of the domain, drawn as a suite's pool
  is (the §3.1.4 kinds of the MMA-Sim paper and the feature probes, equal
  shares), with n = ceil(ln(1 - confidence) / ln(1 - rate)) (:func:`sample_size`):
  a device that differs from the class on at least a fraction ``rate`` of
  such inputs passes all n with probability at most 1 - confidence (equal
  shares of the kinds only help: a product of per-kind pass rates is at
  most the pass rate of their mean).  Rate 1 % at confidence 99.9 %: 688.

So a device that implements a structural neighbour the confirmation split
(or any model a split neighbour is equivalent to) is never named after the
class: no false identification against the structural grid, and unresolved
neighbours are listed with the verdict.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np

from ..errors import InputError, InputTypeError, SmtmmaError
from ..formats import get_format
from ..models import RHOS, Model, parse_model_spec
from ..queries.distinguish import distinguish
from ..queries.formula import Domain
from ..queries.pool import POOL_KINDS, PROBE_KINDS, Inputs, OperandFormats, climb, draw_pool, model_outputs
from .candidates import STRUCTURAL, inconsistency, parse_grid, spec_name

__all__ = [
    "DEFAULT_RATE",
    "DEFAULT_CONFIDENCE",
    "CONFIRM_TIMEOUT",
    "CONFIRM_KINDS",
    "Neighbour",
    "ConfirmationPlan",
    "sample_size",
    "random_sample",
    "neighbours",
    "plan_confirmation",
    "one_fdpa",
    "chain_domain",
    "ask_solver",
]

#: Disagreement rate with the class that the random sample catches (fraction of random inputs of the domain).
DEFAULT_RATE = 0.01
#: Probability that a device disagreeing on at least ``DEFAULT_RATE`` of random inputs fails the sample.
DEFAULT_CONFIDENCE = 0.999
#: Seconds per solver call on a neighbour no simulated input splits (identify's ``confirm_timeout``).
CONFIRM_TIMEOUT = 10.0
#: Kinds of the random sample: the pool's, and the probes only confirmations draw (signed zeros, sums c dominates).
CONFIRM_KINDS = POOL_KINDS + tuple(k for k in PROBE_KINDS if k not in POOL_KINDS)
#: Backend of the neighbours' simulations: dozens of models on a few thousand rows each, where compiling a kernel
#: per model would cost more than it saves.
_SIM = "numpy"
#: Rows of feature probes simulated (not run) to find a vector for each neighbour the random sample does not split.
SEARCH_ROWS = 16384


@dataclass(frozen=True)
class Neighbour:
    """A structural neighbour of the identified class and what the confirmation found.

    ``status``: "split" (a confirmation vector gives it another D than the
    class), "equivalent" (the solver proved it gives the class's D on every
    input of the domain), "unresolved" (no input found and no proof: the
    solver gave up).
    """

    name: str
    model: Model
    status: str
    solver: str = ""
    seconds: float = 0.0


@dataclass
class ConfirmationPlan:
    """Rows the device must run (``probes`` chosen rows first, then the random sample), the class's D on each."""

    inputs: Inputs
    probes: int
    expected: np.ndarray
    neighbours: list[Neighbour]
    rate: float
    confidence: float
    seconds: float = 0.0

    @property
    def random(self) -> int:
        """Rows of the random sample."""
        return len(self.inputs) - self.probes

    @property
    def assurance(self) -> float:
        """Probability that a device differing on at least ``rate`` of random inputs fails the sample as drawn:
        1 - (1 - rate)**random (``confidence`` or more, less only when the domain held fewer rows than asked for)."""
        return 1 - (1 - self.rate) ** self.random

    def count(self, status: str) -> int:
        """Neighbours with ``status``."""
        return sum(1 for n in self.neighbours if n.status == status)


def _check_fraction(name: str, x: object) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise InputTypeError(f"{name} must be a number in (0, 1), got {type(x).__name__} {x!r}")
    if not 0 < float(x) < 1:
        raise InputError(f"{name} must be in (0, 1) (exclusive), got {x!r}")
    return float(x)


def sample_size(rate: float = DEFAULT_RATE, confidence: float = DEFAULT_CONFIDENCE) -> int:
    """The fewest random vectors n with (1 - rate)**n <= 1 - confidence (688 for 1 % at 99.9 %).

    InputError unless both are in (0, 1); at most 10**6 vectors.
    """
    rate, confidence = _check_fraction("rate", rate), _check_fraction("confidence", confidence)
    n = max(1, math.ceil(math.log1p(-confidence) / math.log1p(-rate)))
    while n > 1 and (1 - rate) ** (n - 1) <= 1 - confidence:  # guard the float division's rounding
        n -= 1
    if n > 1_000_000:
        raise InputError(f"rate={rate:g} at confidence={confidence:g} needs {n} random vectors; at most 1000000")
    return n


def _one_step(model: Model, domain: Domain) -> list[Model]:
    """Models one parameter step from ``model`` (see the module docstring); invalid combinations are skipped."""
    out: list[Model] = []

    def add(**change: object) -> None:
        try:
            out.append(model.replace(**change))
        except SmtmmaError:
            pass  # a combination the kind refuses (G not dividing L, F2 < F, ...)

    if model.L is not None:
        for L in (model.L // 2, model.L * 2):
            if L >= 1:
                add(L=L)
    for p in ("F", "F2"):
        v = getattr(model, p)
        if v is not None:
            add(**{p: v - 1})
            add(**{p: v + 1})
    if model.G is not None:
        add(G=model.G // 2)
        add(G=model.G * 2)
    if model.P is not None:
        add(P=6 - model.P)
    if model.rho is not None:
        d = get_format(model.d_fmt)
        for name, conv in RHOS.items():
            f = get_format(conv.fmt)
            if name != model.rho and d.name in (f.name, f.container):
                add(rho=name)
    if model.kind in ("t-fdpa", "st-fdpa", "gst-fdpa"):
        terms = (model.L or 1) // (model.G or 1) + 1  # summands of one fused sum, c included
        needed = math.ceil(math.log2(terms)) if terms > 1 else 0  # each below 4: these carry bits hold any sum
        if model.carry_bits is None:
            add(carry_bits=max(0, needed - 1))
        else:
            add(carry_bits=model.carry_bits - 1)
            add(carry_bits=model.carry_bits + 1)
        add(emax_floor=None if model.emax_floor is not None else -133)
    if model.kind in ("t-fdpa", "st-fdpa"):
        add(zero_emax=not model.zero_emax)
        add(ieee_zero=not model.ieee_zero)
    if model.kind in ("tr-fdpa", "gtr-fdpa"):
        add(sum_rz=not model.sum_rz)
    if model.block is not None:
        add(block=model.block // 2)
        add(block=model.block * 2)
    add(ftz_inputs=not model.ftz_inputs)
    add(c_after=not model.c_after)
    if model.via is not None:
        add(via=None)
    if domain.specials:  # the NaN pattern shows only on NaN outputs, which NaN/Inf inputs give
        add(nan="ieee" if model.nan == "nvidia" else "nvidia")
    return out


def neighbours(model: Model, instr: str, domain: Optional[Domain] = None) -> list[Model]:
    """The structural neighbours of ``model`` for instruction ``instr``: one-step variants, then the structural grid.

    Grid points take ``model``'s formats and the parameters they do not
    name; models that cannot run ``instr`` and ``model`` itself are left
    out; each model once, in order.
    """
    domain = domain or Domain()
    found: list[Model] = _one_step(model, domain)
    for spec in parse_grid("|".join(STRUCTURAL)):
        try:
            found.append(parse_model_spec(spec, like=model))
        except SmtmmaError:
            continue
    return [m for m in dict.fromkeys(found) if m != model and inconsistency(m, instr) is None]


#: Solver answers on (class model, neighbour, K, domain, solver, seconds): (status, witness row or None, solver, seconds).
_solved: dict[tuple[Model, Model, int, Domain, Optional[str], float], tuple[str, Optional[Inputs], str, float]] = {}
#: Plans made in this process, by everything they depend on (the pool by a digest of its patterns).
_plans: dict[tuple[object, ...], ConfirmationPlan] = {}
_MAX_PLANS = 64


def _digest(rows: Inputs) -> str:
    h = hashlib.sha256()
    for x in (rows.a, rows.b, rows.c, rows.scale_a, rows.scale_b):
        h.update(b"-" if x is None else np.ascontiguousarray(x).tobytes())
    return h.hexdigest()


def random_sample(fm: OperandFormats, K: int, n: int, domain: Domain, seed: int) -> Inputs:
    """At least ``n`` rows of the domain, equal shares of :data:`CONFIRM_KINDS` (fewer only when the domain holds fewer)."""
    rng = np.random.default_rng([seed, 0xC0F1])  # a stream of its own: not the pool's rows again
    parts: list[Inputs] = []
    got = 0
    for _ in range(8):  # a narrow domain drops rows: draw again until n are in
        part = draw_pool(fm, K, n, rng, domain, kinds=CONFIRM_KINDS)
        parts.append(part)
        got += len(part)
        if got >= n:
            break
    return Inputs.concat(parts)


def one_fdpa(model: Model, other: Model, K: int, domain: Domain) -> Optional[tuple[Model, Model, int]]:
    """When ``model`` and ``other`` chain the same FDPA structure over K (same L < K, lane interleaving and place of
    C) and the domain restricts no lane: the two as one FDPA with C free, and L.  Equal on every input of one FDPA
    (:func:`chain_domain`), they are equal on every chain of them, so the solver may compare one FDPA instead of the
    whole chain."""
    if model.L is None or other.L != model.L or model.L >= K or model.kind != other.kind:
        return None
    if (model.interleave, model.c_after, model.block) != (other.interleave, other.c_after, other.block):
        return None
    if domain.lanes is not None or domain.fixed:
        return None
    plain = {"interleave": None, "c_after": False}  # one FDPA: no lanes to deal, C enters the sum
    return model.replace(**plain), other.replace(**plain), model.L


def chain_domain(domain: Domain) -> Domain:
    """The inputs one FDPA of a chain sees: a and b as the domain allows, C anything -- a partial sum (an overflow's
    infinity included) obeys none of the domain's rules for C.  A superset of the domain's inputs besides: NaN/Inf
    and subnormal a and b are allowed too, so a proof over it covers every FDPA of every chain on the domain."""
    signs = tuple(s for s in domain.signs if s[0] != "c")
    if domain.nonneg:
        signs = (("a", "+"), ("b", "+"))
    return Domain(specials=True, subnormals=True, exp=domain.exp, signs=signs)


def ask_solver(model: Model, other: Model, K: int, domain: Domain, solver: Optional[str], timeout: float,
               seed: int = 0) -> tuple[str, Optional[Inputs], str, float]:
    """The solver on ``model`` vs ``other``: (status, witness row of length K or None, solver, seconds); status is
    "split" (a witness), "equivalent" (unsat on the domain) or "unresolved" (the solver gave up).

    Chains of the same FDPA structure are first compared as one FDPA (:func:`one_fdpa`): unsat there is
    "equivalent" for every K; otherwise the whole chain of length K is asked about.  An empty domain raises
    (distinguish checks it), never "equivalent".
    """
    spent, who = 0.0, ""
    single = one_fdpa(model, other, K, domain)
    if single is not None:
        r = distinguish([single[0], single[1]], ["class", "neighbour"], K=single[2], domain=chain_domain(domain),
                        solver=solver, timeout=timeout, seed=seed)
        spent, who = r.seconds, r.solver
        if r.verdict == "unsat":
            return "equivalent", None, who, spent
    r = distinguish([model, other], ["class", "neighbour"], K=K, domain=domain, solver=solver, timeout=timeout, seed=seed)
    if r.verdict == "sat" and r.witness is not None:
        w = r.witness
        return "split", Inputs.single(w.a, w.b, w.c, w.scale_a, w.scale_b), r.solver, spent + r.seconds
    return ("equivalent" if r.verdict == "unsat" else "unresolved"), None, r.solver, spent + r.seconds


def _cover(split: np.ndarray) -> list[int]:
    """Greedy set cover: columns of ``split`` (neighbours x rows, True where the row splits the neighbour) covering every
    neighbour some row splits."""
    todo = split.any(axis=1)
    chosen: list[int] = []
    while todo.any():
        gains = split[todo].sum(axis=0)
        j = int(np.argmax(gains))
        chosen.append(j)
        todo &= ~split[:, j]
    return chosen


def plan_confirmation(
    model: Model,
    instr: str,
    K: int,
    domain: Domain,
    pool: Inputs,
    *,
    exclude: Sequence[Model] = (),
    name_of: Optional[Callable[[Model], str]] = None,
    seed: int = 0,
    rate: float = DEFAULT_RATE,
    confidence: float = DEFAULT_CONFIDENCE,
    solver: Optional[str] = None,
    timeout: float = CONFIRM_TIMEOUT,
    progress: Optional[Callable[[str], None]] = None,
) -> ConfirmationPlan:
    """The vectors that confirm a device computes ``model`` (the class's representative) on dot products of length K.

    ``pool``: inputs already simulated (the identification's), searched for
    probes; ``exclude``: the class's other models (not neighbours);
    ``timeout``: seconds per solver call on a neighbour no simulated input splits.
    """
    key = (model, tuple(exclude), instr, K, domain, _digest(pool), seed, rate, confidence, solver, timeout)
    if name_of is None and key in _plans:  # plans named their own way are not kept
        return _plans[key]
    t0 = time.perf_counter()
    keep = name_of is None
    if name_of is None:
        name_of = lambda m: spec_name(m, model)  # noqa: E731  (a spec that parses back, NaN style included)
    n = sample_size(rate, confidence)
    fm = OperandFormats.of(model)
    sample = random_sample(fm, K, n, domain, seed)
    nbs = [m for m in neighbours(model, instr, domain) if m not in exclude]
    if progress is not None:
        progress(f"confirming {name_of(model)}: {len(nbs)} structural neighbours, {len(sample)} random vectors")
    ref = model_outputs(model, sample, _SIM)
    status: dict[Model, tuple[str, str, float]] = {}
    open_ = []
    for m in nbs:
        if not np.array_equal(model_outputs(m, sample, _SIM), ref):
            status[m] = ("split", "", 0.0)
        else:
            open_.append(m)
    # neighbours the sample does not split: probes among simulated inputs (the identification's pool and a larger
    # draw of feature probes), then hill-climbing mutants, then the solver
    probes = sample.take(np.arange(0))  # none yet
    rng = np.random.default_rng([seed, 0xC11B])
    if open_:
        search = Inputs.concat([pool, draw_pool(fm, K, SEARCH_ROWS, rng, domain, kinds=PROBE_KINDS + ("ill-conditioned",))])
        ref_search = model_outputs(model, search, _SIM)
        outs = np.stack([model_outputs(m, search, _SIM) for m in open_])
        chosen = _cover(outs != ref_search)
        probes = search.take(np.array(chosen, dtype=np.int64))
        split_now = (outs[:, chosen] != ref_search[chosen]).any(axis=1) if chosen else np.zeros(len(open_), bool)
        for m in (m for m, hit in zip(open_, split_now) if hit):
            status[m] = ("split", "", 0.0)
        open_ = [m for m, hit in zip(open_, split_now) if not hit]
    extra: list[Inputs] = []
    for m in open_:
        outs2 = np.stack([model_outputs(model, sample, _SIM), model_outputs(m, sample, _SIM)])
        grown, go = climb([model, m], sample, outs2, fm, rng, domain, rounds=8, patience=3, width=16, per_row=32)
        diff = np.nonzero(go[0] != go[1])[0]
        if len(diff):
            extra.append(grown.take(diff[:1]))
            status[m] = ("split", "", 0.0)
            continue
        asked = (model, m, K, domain, solver, float(timeout))
        if asked not in _solved:
            if progress is not None:
                progress(f"solver: {name_of(model)} vs its neighbour {name_of(m)}")
            _solved[asked] = ask_solver(model, m, K, domain, solver, timeout, seed)
        verdict, row, who, seconds = _solved[asked]
        if row is not None:
            extra.append(row)
        status[m] = (verdict, who, seconds)
    if extra:
        probes = Inputs.concat([probes, *extra])
    inputs = Inputs.concat([probes, sample]) if len(probes) else sample
    expected = model_outputs(model, inputs, _SIM)
    found = [Neighbour(name_of(m), m, *status[m]) for m in nbs]
    plan = ConfirmationPlan(inputs, len(probes), expected, found, rate, confidence, time.perf_counter() - t0)
    if keep:
        if len(_plans) >= _MAX_PLANS:
            _plans.pop(next(iter(_plans)))
        _plans[key] = plan
    return plan

