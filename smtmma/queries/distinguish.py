"""distinguish: inputs on which two or more models give different bits.

The models run on shared symbolic inputs; the solver is asked for inputs
whose outputs differ pairwise.  A sat witness is replayed through the
simulator (the concrete interpretation) before it is reported; a replay
that disagrees with the solver is an internal error, never a result.

An unsat answer is a proof only when some input satisfies the domain: on
unsat the domain alone is checked, and an empty domain raises
:class:`EmptyDomainError` instead of returning a vacuous proof.  With
``confirm=True`` the same script is re-checked by a second installed
backend (:func:`confirm_unsat`), and the result records which one agreed.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field, replace
from typing import Optional, Sequence

import numpy as np

from ..errors import InputError, SmtmmaError
from ..formats import get_format
from ..models import Model
from ..simulate import simulate_dot
from .backends import SolverResult, available, solve
from .formula import Domain, DotFormula, output_bits
from .pool import Inputs, OperandFormats, climb, distinct_outputs, draw_pool, model_outputs

__all__ = [
    "Witness",
    "DistinguishResult",
    "EmptyDomainError",
    "distinguish",
    "replay",
    "ulp_distance",
    "domain_is_empty",
    "confirm_unsat",
    "second_backend",
    "smt2_file_text",
]


class ReplayError(SmtmmaError, AssertionError):
    """The simulator disagrees with the solver's model of a witness: a bug in an interpretation."""


class EmptyDomainError(InputError):
    """No input satisfies the domain, so an unsat answer would prove nothing."""


@dataclass(frozen=True)
class Witness:
    """Inputs of one dot product as bit patterns (A/B/C formats; scales when block-scaled)."""

    a: tuple[int, ...]
    b: tuple[int, ...]
    c: int
    scale_a: Optional[tuple[int, ...]] = None
    scale_b: Optional[tuple[int, ...]] = None


@dataclass
class DistinguishResult:
    """verdict "sat" (witness + each model's output bits), "unsat" (equivalent on the domain) or "unknown"."""

    verdict: str
    names: list[str]
    models: list[Model]
    K: int
    domain: Domain
    solver: str
    seconds: float
    witness: Optional[Witness] = None
    outputs: dict[str, int] = field(default_factory=dict)
    reason: str = ""
    smt2: str = ""
    classes: list[list[str]] = field(default_factory=list)  # equivalent models, when not all can differ
    confirmed_by: Optional[str] = None  # second backend that also answered unsat (confirm=True)
    confirmation: str = ""  # what the second backend said, e.g. "z3: unsat in 1.2 s"


def replay(models: Sequence[Model], w: Witness) -> list[int]:
    """Each model's D pattern for witness ``w``, computed by the simulator."""
    a = np.array([w.a], dtype=np.uint64)
    b = np.array([w.b], dtype=np.uint64)
    c = np.array([w.c], dtype=np.uint64)
    sa = np.array([w.scale_a], dtype=np.uint64) if w.scale_a is not None else None
    sb = np.array([w.scale_b], dtype=np.uint64) if w.scale_b is not None else None
    return [int(simulate_dot(m, None, a, b, c, scale_a=sa, scale_b=sb)[0]) for m in models]


def ulp_distance(fmt_name: str, x: int, y: int) -> Optional[int]:
    """Steps between two finite patterns in ``fmt_name``'s own ulps (0 for +0 vs -0); None when either is NaN.

    A format carried in a container (E8M13 in FP32) counts its own steps:
    0x3F800000 and 0x3F800400 are 1 E8M13 ulp apart (1024 FP32 ulps).
    Patterns are given in the container; its dropped low bits must be zero.
    """
    fmt = get_format(fmt_name)
    outer = get_format(fmt.container) if fmt.container else fmt
    if outer.is_nan_bits(x) or outer.is_nan_bits(y):
        return None
    shift = fmt.container_shift if fmt.container else 0
    if (x | y) & ((1 << shift) - 1):
        raise InputError(f"{x:#x} or {y:#x} is not an {fmt.name} pattern: the low {shift} bits of its {outer.name} container must be zero")

    def key(v: int) -> int:
        mag = (v & ~outer.sign_mask) >> shift
        return -mag if v & outer.sign_mask else mag

    return abs(key(x) - key(y))


def _witness(formula: DotFormula, values: dict[str, int]) -> Witness:
    K = formula.K
    sa = sb = None
    if formula.scale_a is not None:
        n = len(formula.scale_a)
        sa = tuple(values[f"sa{j}"] for j in range(n))
        sb = tuple(values[f"sb{j}"] for j in range(n))
    return Witness(tuple(values[f"a{k}"] for k in range(K)), tuple(values[f"b{k}"] for k in range(K)), values["c"], sa, sb)


def second_backend(first: str) -> Optional[str]:
    """The preferred installed backend other than the one that answered ``first`` (``portfolio:z3`` counts as z3)."""
    base = first.split(":", 1)[-1]
    for name in available():
        if name != base:
            return name
    return None


def confirm_unsat(
    script: str, first: str, want: Sequence[str] = (), *, timeout: float = 60.0, seed: int = 0
) -> tuple[Optional[str], Optional[SolverResult], str]:
    """Re-check an unsat ``script`` with a second installed backend.

    Returns ``(confirmed_by, answer, text)``: ``confirmed_by`` is the second
    backend's name when it also answered unsat (else None); ``answer`` its
    :class:`SolverResult` (None when no second backend is installed);
    ``text`` one line for reports, e.g. ``"z3: unsat in 1.23 s"``.
    """
    second = second_backend(first)
    if second is None:
        return None, None, f"not confirmed: no second backend installed (installed: {', '.join(available()) or 'none'})"
    res = solve(script, want, solver=second, timeout=timeout, seed=seed)
    if res.verdict == "unsat":
        return second, res, f"{second}: unsat in {res.seconds:.2f} s"
    if res.verdict == "unknown":
        return None, res, f"not confirmed: {second}: unknown ({res.reason})"
    return None, res, f"not confirmed: {second} answered sat"


def domain_is_empty(
    models: Sequence[Model], K: int, domain: Domain, *, solver: Optional[str] = None, timeout: float = 60.0, seed: int = 0
) -> Optional[bool]:
    """True when no input of length ``K`` (shaped for ``models``) satisfies ``domain``; None if the solver gave up."""
    formula = DotFormula.for_models(list(models), K)
    formula.restrict(domain)
    res = solve(formula.alg.script(), (), solver=solver, timeout=timeout, seed=seed)
    return {"unsat": True, "sat": False}.get(res.verdict)


def smt2_file_text(script: str, comments: Sequence[str] = ()) -> str:
    """``script`` as a self-contained SMT-LIB2 file: ``comments`` as ``;`` lines on top, ``(check-sat)`` at the end.

    The backends are given the script without ``check-sat`` (cvc5's parser
    would run it while parsing); only the archived file carries it.
    """
    head = "".join(f"; {line}\n" for c in comments for line in str(c).splitlines())
    body = script if script.endswith("\n") else script + "\n"
    if body.rstrip().endswith("(check-sat)"):  # an incremental script (a lemma chain) has its own
        return head + body + "(exit)\n"
    return head + body + "(check-sat)\n(exit)\n"


def _comparable(models: Sequence[Model], K: int) -> DotFormula:
    """The shared inputs of ``models``; InputError when they read different formats or write different widths."""
    formula = DotFormula.for_models(list(models), K)
    if len({output_bits(m) for m in models}) != 1:
        raise InputError("models write outputs of different widths; they cannot be compared")
    return formula


def nan_style_twins(m1: Model, m2: Model) -> bool:
    """Two FMA chains that differ only in their NaN style (``nan=ieee`` / ``nan=propagate``)."""
    return m1.kind == m2.kind == "fma" and m1 != m2 and m1.replace(nan=m2.nan) == m2


def _fma_step_lemma(models: Sequence[Model], names: Sequence[str], domain: Domain, solver: Optional[str], timeout: float,
                    seed: int) -> Optional[DistinguishResult]:
    """Equivalence of two NaN-style twins on finite inputs by induction on the chain (None when a step query is not unsat).

    One FMA step of each gives the same bits for finite a, b and a C that is finite, +inf or -inf (three K=1
    queries); equal outputs are never NaN there (the two styles return different NaNs), so every C of a chain of
    finite inputs is finite or infinite, and every step of it agrees.  Holds on any domain of finite inputs.
    """
    t0 = time.perf_counter()
    fmt = get_format(models[0].c_fmt)
    finite_exp = (1 - fmt.bias, (1 << fmt.exp_bits) - 2 - fmt.bias)  # every finite non-zero exponent (NaN/inf: above)
    steps = [Domain(), Domain(specials=True, exp=finite_exp, fixed=(("c", fmt.inf_bits()),)),
             Domain(specials=True, exp=finite_exp, fixed=(("c", fmt.inf_bits(negative=True)),))]
    first: Optional[DistinguishResult] = None
    for d in steps:
        r = _pairwise_distinct(models, names, 1, d, solver, timeout, seed, check_domain=True)
        if r.verdict != "unsat":
            return None
        first = first or r
    assert first is not None
    first.domain = domain
    first.seconds = time.perf_counter() - t0
    first.reason = ("equivalent by induction on the FMA chain: one step gives the same bits for finite a, b and a C "
                    "that is finite, +inf or -inf (3 unsat answers at K=1), so no step of finite inputs makes a NaN")
    return first


def _pairwise_distinct(
    models: Sequence[Model],
    names: Sequence[str],
    K: int,
    domain: Domain,
    solver: Optional[str],
    timeout: float,
    seed: int,
    *,
    check_domain: bool = False,
    confirm: bool = False,
) -> DistinguishResult:
    if not domain.specials and K > 1 and nan_style_twins(models[0], models[1]):
        step = _fma_step_lemma(models, names, domain, solver, timeout, seed)
        if step is not None:
            step.K = K
            return step
    formula = _comparable(models, K)
    outs = [formula.output(m)[0] for m in models]
    formula.restrict(domain)
    for x, y in itertools.combinations(outs, 2):
        formula.alg.asserts.append(f"(assert (not (= {x} {y})))")
    script = formula.alg.script()
    want = formula.input_names + outs
    t0 = time.perf_counter()
    res: SolverResult = solve(script, want, solver=solver, timeout=timeout, seed=seed)
    result = DistinguishResult(res.verdict, list(names), list(models), K, domain, res.solver, time.perf_counter() - t0, reason=res.reason, smt2=script)
    if res.verdict == "unsat" and check_domain:
        empty = domain_is_empty(models, K, domain, solver=solver, timeout=timeout, seed=seed)
        if empty:
            raise EmptyDomainError(
                f"empty domain: no input satisfies it ({domain.describe()}, K={K}), so unsat proves nothing; "
                "check the exponent ranges against the fixed inputs"
            )
    if res.verdict == "unsat" and confirm:
        result.confirmed_by, second, result.confirmation = confirm_unsat(script, res.solver, want, timeout=timeout, seed=seed)
        result.seconds = time.perf_counter() - t0
        if second is not None and second.verdict == "sat":
            w = _witness(formula, second.values)
            got = replay(models, w)
            if got == [second.values[o] for o in outs] and len(set(got)) == len(got):
                # The second backend's witness replays through the simulator: the first answer was wrong.
                result.verdict, result.solver = "sat", second.solver
                result.witness, result.outputs = w, dict(zip(names, got))
                result.reason = (f"{res.solver} answered unsat, but {second.solver} found a witness that the simulator "
                                 f"confirms: {res.solver}'s answer is wrong (please report it)")
                return result
            result.verdict = "unknown"
            result.reason = f"backends disagree: {res.solver} answered unsat, {second.solver} sat (its witness does not replay)"
            return result
    if res.verdict != "sat":
        if res.verdict == "unsat":
            result.reason = f"equivalent on this domain ({domain.describe()}, K={K})" if len(models) == 2 else (
                f"no input gives pairwise different outputs ({domain.describe()}, K={K})")
        return result
    w = _witness(formula, res.values)
    got = replay(models, w)
    claimed = [res.values[o] for o in outs]
    if got != claimed:
        raise ReplayError(f"solver's outputs {[hex(x) for x in claimed]} disagree with the simulator's {[hex(x) for x in got]} on {w}")
    if len(set(got)) != len(got):
        raise ReplayError(f"replayed outputs are not pairwise different: {[hex(x) for x in got]}")
    result.witness = w
    result.outputs = dict(zip(names, got))
    return result


def distinguish(
    models: Sequence[Model],
    names: Optional[Sequence[str]] = None,
    *,
    K: Optional[int] = None,
    domain: Optional[Domain] = None,
    solver: Optional[str] = None,
    timeout: float = 60.0,
    seed: int = 0,
    confirm: bool = False,
    check_domain: bool = True,
    pool_size: int = 2048,
) -> DistinguishResult:
    """Ask for inputs on which every pair of ``models`` gives different D bits.

    ``K`` defaults to the largest L among the models (one FDPA each); the
    witness is replayed through the simulator before it is returned.
    ``timeout`` is per solver call, in seconds.  On unsat, with
    ``check_domain`` the domain alone is checked and an empty one raises
    :class:`EmptyDomainError`; with ``confirm`` the unsat script is re-checked
    by a second installed backend (``confirmed_by``/``confirmation`` of the
    result; a second backend's sat witness that replays overrides the first
    answer).  With three or more models a pool of ``pool_size`` simulated
    inputs is searched first (see :func:`_many`); ``confirm`` then applies to
    the solver's pairwise-different query, not to the class-by-class
    comparisons.
    """
    models = list(models)
    if len(models) < 2:
        raise InputError("distinguish needs at least two models")
    if not names:  # default names: the specs, numbered where two models are the same
        specs = [m.describe() for m in models]
        names = [s if specs.count(s) == 1 else f"{s}#{specs[:i + 1].count(s)}" for i, s in enumerate(specs)]
    names = list(names)
    if len(names) != len(models):
        raise InputError(f"{len(models)} models but {len(names)} names")
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InputError(f"model {dupes[0]!r} is given twice; name each model once")
    domain = domain or Domain()
    if K is None:
        K = max((m.L or m.P or 4) for m in models)
    if len(models) == 2:
        return _pairwise_distinct(models, names, K, domain, solver, timeout, seed, check_domain=check_domain, confirm=confirm)
    return _many(models, names, K, domain, solver, timeout, seed, confirm=confirm, check_domain=check_domain,
                 pool_size=pool_size)


def _simplest(pool: Inputs, rows: np.ndarray) -> int:
    """The row among ``rows`` with the fewest non-zero lanes (the first such row)."""
    live = (pool.a[rows] != 0).sum(axis=1) + (pool.b[rows] != 0).sum(axis=1)
    return int(rows[int(np.argmin(live))])


def _fixed(domain: Domain, w: Witness) -> Domain:
    """``domain`` with every input fixed to the patterns of ``w``."""
    fixed = [(f"a{k}", v) for k, v in enumerate(w.a)] + [(f"b{k}", v) for k, v in enumerate(w.b)] + [("c", w.c)]
    for who, scales in (("sa", w.scale_a), ("sb", w.scale_b)):
        fixed += [(f"{who}{j}", v) for j, v in enumerate(scales or ())]
    return replace(domain, fixed=tuple(fixed))


def _row_witness(pool: Inputs, j: int) -> Witness:
    a, b, c, sa, sb = pool.row(j)
    return Witness(tuple(a), tuple(b), c, None if sa is None else tuple(sa), None if sb is None else tuple(sb))


def _many(
    models: list[Model],
    names: list[str],
    K: int,
    domain: Domain,
    solver: Optional[str],
    timeout: float,
    seed: int,
    *,
    confirm: bool,
    check_domain: bool,
    pool_size: int,
) -> DistinguishResult:
    """Three or more models: a pool of inputs through the simulator first, the solver for what it cannot settle.

    1. A pool row on which every model differs (drawn, then hill-climbed by
       one-bit mutations: :func:`~smtmma.queries.pool.climb`) is the answer;
       the solver confirms it on the formula with every input fixed to it.
    2. Otherwise the models are grouped: identical models at once, pairs the
       pool splits need no solver, the rest go to the solver pairwise (unsat:
       same class; a sat witness joins the pool).
    3. An input splitting one representative per class: from the pool, or
       from the solver on the representatives.
    """
    t0 = time.perf_counter()
    _comparable(models, K)
    f, rng = OperandFormats.of(models[0]), np.random.default_rng(seed)
    pool = draw_pool(f, K, pool_size, rng, domain)
    outs = np.stack([model_outputs(m, pool) for m in models])
    if len(set(models)) == len(models) and len(pool):  # identical models can never all differ: skip to the classes
        pool, outs = climb(models, pool, outs, f, rng, domain)
        rows = np.nonzero(distinct_outputs(outs) == len(models))[0]
        if len(rows):
            found = _confirmed(models, names, K, domain, _row_witness(pool, _simplest(pool, rows)), solver, timeout, seed)
            if found is not None:
                found.seconds = time.perf_counter() - t0
                found.reason = f"found on {len(pool)} simulated inputs, confirmed by {found.solver} on the formula"
                return found
    classes: list[list[int]] = []
    gave_up, last_unsat = 0, None
    for i in range(len(models)):
        for cls in classes:
            rep = cls[0]
            if models[rep] == models[i]:
                cls.append(i)
                break
            if (outs[rep] != outs[i]).any():
                continue
            pair = _pairwise_distinct([models[rep], models[i]], [names[rep], names[i]], K, domain, solver, timeout, seed,
                                      check_domain=check_domain and last_unsat is None)
            gave_up += pair.verdict == "unknown"
            if pair.verdict == "unsat":
                cls.append(i)
                last_unsat = pair
                break
            if pair.verdict == "sat" and pair.witness is not None:
                w = pair.witness
                row = Inputs.single(w.a, w.b, w.c, w.scale_a, w.scale_b)
                pool = Inputs.concat([pool, row])
                outs = np.concatenate([outs, np.stack([model_outputs(m, row) for m in models])], axis=1)
        else:
            classes.append([i])
    reps = [cls[0] for cls in classes]
    result = DistinguishResult("unsat", list(names), list(models), K, domain, solver or "", 0.0)
    if last_unsat is not None:
        result.solver, result.smt2 = last_unsat.solver, last_unsat.smt2
    if len(reps) >= 2:
        rep_models, rep_names = [models[i] for i in reps], [names[i] for i in reps]
        rep_pool, rep_outs = climb(rep_models, pool, outs[reps], f, rng, domain) if len(pool) else (pool, outs[reps])
        rows = np.nonzero(distinct_outputs(rep_outs) == len(reps))[0]
        split = None
        if len(rows):
            split = _confirmed(rep_models, rep_names, K, domain, _row_witness(rep_pool, _simplest(rep_pool, rows)),
                               solver, timeout, seed)
        if split is None:
            split = _pairwise_distinct(rep_models, rep_names, K, domain, solver, timeout, seed,
                                       check_domain=check_domain and last_unsat is None,
                                       confirm=confirm and len(reps) == len(models))
        result.verdict, result.solver, result.smt2, result.reason = split.verdict, split.solver, split.smt2, split.reason
        result.confirmed_by, result.confirmation = split.confirmed_by, split.confirmation
        if split.verdict == "sat" and split.witness is not None:
            result.witness = split.witness
            result.outputs = dict(zip(names, replay(models, split.witness)))
    if len(reps) < len(models):
        result.classes = [[names[i] for i in cls] for cls in classes]
        groups = "; ".join(" = ".join(c) for c in result.classes)
        result.reason = f"not all pairwise different: equivalent groups on this domain: {groups} ({domain.describe()}, K={K})"
    if gave_up:
        result.reason += f"; {gave_up} pairwise comparison(s) gave up, so some groups may be equivalent to each other"
    result.seconds = time.perf_counter() - t0
    return result


def _confirmed(models: list[Model], names: list[str], K: int, domain: Domain, w: Witness, solver: Optional[str],
               timeout: float, seed: int) -> Optional[DistinguishResult]:
    """The solver's answer on the formula with every input fixed to ``w``: sat (a witness), or None when it gave up.

    The simulator found ``w``; an unsat answer means the formula and the
    simulator disagree, an internal error.
    """
    r = _pairwise_distinct(models, names, K, _fixed(domain, w), solver, timeout, seed)
    if r.verdict == "unsat":
        raise ReplayError(f"the simulator splits the models on {w}, the formula does not")
    if r.verdict != "sat":
        return None
    r.domain = domain
    return r
