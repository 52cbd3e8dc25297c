"""A pool of candidate inputs and every model's outputs on them.

The solver finds inputs that tell two models apart one query at a time;
the simulator evaluates a model on thousands of inputs in milliseconds.
``distinguish`` with three or more models and every suite therefore start
from a pool of drawn inputs -- the distributions of
§3.1.4 of the MMA-Sim paper (normal, uniform, DNN-like, ill-conditioned,
random finite bit streams) and probes aimed at the features the models
differ in (one large lane swamping small ones: the fused sum's precision F;
tiny lanes near the bottom of the range: alignment floors and subnormals;
large same-sign lanes: carry bits) -- restricted to the query's domain,
and grows it with the solver's witnesses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from ..formats import Format, classify, decode, get_format, INF, NAN, SUBNORMAL, ZERO
from ..models import Model
from .formula import Domain
from ..sampling import draw_dot, draw_scales, dtype_for, negate_bits, round_to_format, to_float64
from ..simulate import simulate_dot

__all__ = ["Inputs", "OperandFormats", "draw_pool", "model_outputs", "POOL_KINDS", "PROBE_KINDS", "restrict", "mutate", "distinct_outputs", "climb"]

#: Kinds a pool mixes, in equal shares: §3.1.4 distributions, then feature probes.
POOL_KINDS = ("normal", "uniform", "dnn", "ill-conditioned", "finite-bits", "swamp", "tie", "tiny", "carry", "spread")
#: Drawn by identification's confirmation, not by suites' pools: ``sparse``, mostly zero products of either sign (a
#: zero times zero or times any b) and 0-2 products 0..45 binades below c, block scales anywhere in their range
#: (signed zero sums, zero terms in e_max, alignment floors); ``c-tie``, a c that dominates the sum, half
#: an ulp of c and a tail 1..12 binades below that (bits a sum aligned at c's exponent keeps or rounds away: F2).
PROBE_KINDS = ("swamp", "tie", "tiny", "carry", "spread", "sparse", "c-tie")
_PROBES = PROBE_KINDS


@dataclass(frozen=True)
class OperandFormats:
    """Formats of a, b, c and the block scales (``scale``/``block`` None when not block-scaled)."""

    a: Format
    b: Format
    c: Format
    scale: Optional[Format] = None
    block: Optional[int] = None

    @classmethod
    def of(cls, model: Model) -> "OperandFormats":
        """The operand formats a model reads."""
        return cls(get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt),
                   get_format(model.scale_fmt) if model.scale_fmt else None, model.block if model.scale_fmt else None)


@dataclass
class Inputs:
    """n dot products of length K as bit patterns (uint64): a, b (n, K), c (n,), scales (n, ceil(K/block))."""

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    scale_a: Optional[np.ndarray] = None
    scale_b: Optional[np.ndarray] = None

    def __len__(self) -> int:
        return int(self.c.shape[0])

    @property
    def K(self) -> int:
        """Length of the dot products."""
        return int(self.a.shape[1])

    def take(self, idx: object) -> "Inputs":
        """The rows ``idx`` (an index array or mask)."""
        sel = lambda x: None if x is None else x[idx]  # noqa: E731
        return Inputs(self.a[idx], self.b[idx], self.c[idx], sel(self.scale_a), sel(self.scale_b))

    def row(self, i: int) -> tuple[tuple[int, ...], tuple[int, ...], int, Optional[tuple[int, ...]], Optional[tuple[int, ...]]]:
        """Row ``i`` as Python ints: (a, b, c, scale_a, scale_b)."""
        t = lambda x: None if x is None else tuple(int(v) for v in x[i])  # noqa: E731
        return t(self.a), t(self.b), int(self.c[i]), t(self.scale_a), t(self.scale_b)  # type: ignore[return-value]

    @staticmethod
    def concat(parts: Sequence["Inputs"]) -> "Inputs":
        """The rows of every part, in order."""
        cat = lambda xs: None if xs[0] is None else np.concatenate(xs)  # noqa: E731
        return Inputs(cat([p.a for p in parts]), cat([p.b for p in parts]), cat([p.c for p in parts]),
                      cat([p.scale_a for p in parts]), cat([p.scale_b for p in parts]))

    @staticmethod
    def single(a: Sequence[int], b: Sequence[int], c: int, scale_a: Optional[Sequence[int]] = None,
               scale_b: Optional[Sequence[int]] = None) -> "Inputs":
        """One dot product as an Inputs of one row."""
        arr = lambda x: None if x is None else np.array([list(x)], dtype=np.uint64)  # noqa: E731
        return Inputs(arr(a), arr(b), np.array([c], dtype=np.uint64), arr(scale_a), arr(scale_b))  # type: ignore[arg-type]


def _scaled(fmt: Format, values: np.ndarray) -> np.ndarray:
    return round_to_format(fmt, values).astype(np.uint64)


def _probe(kind: str, f: OperandFormats, n: int, K: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Feature probes as float64 values rounded to the formats (saturating), see the module docstring."""
    fa, fb, fc = f.a, f.b, f.c
    top = min(fa.emax, fb.emax)
    if kind == "swamp":  # one large lane, the others 1..48 binades below it
        shift = -rng.integers(1, 49, (n, K)).astype(float)
        shift[np.arange(n), rng.integers(0, K, n)] = 0.0
        base = rng.integers(-2, max(-1, min(top, 6)), (n, 1))
        a = rng.standard_normal((n, K)) * np.exp2(base + shift)
        b = rng.choice([-1.0, 1.0], (n, K)) * rng.uniform(1.0, 2.0, (n, K))
        c = rng.standard_normal(n) * np.exp2(base[:, 0] - rng.integers(-2, 49, n))
    elif kind == "tiny":  # near the bottom of the range: products far below 1, alignment floors, subnormals
        ea = fa.emin + rng.integers(-fa.man_bits, 4, (n, K))
        eb = fb.emin + rng.integers(-fb.man_bits, 4, (n, K))
        a = rng.standard_normal((n, K)) * np.exp2(ea)
        b = rng.standard_normal((n, K)) * np.exp2(eb)
        c = np.where(rng.random(n) < 0.5, 0.0, rng.standard_normal(n) * np.exp2(fc.emin + rng.integers(-4, 40, n)))
    elif kind == "tie":  # a product, half an output ulp of it, and a tiny lane: RNE ties against cut-off bits
        a, b, c = _tie(f, n, K, rng)
    elif kind == "carry":  # same-sign lanes near the top of a binade: the integer part of the fused sum grows
        sign = rng.choice([-1.0, 1.0], (n, 1))
        e = rng.integers(0, max(1, min(top, 8)), (n, 1))
        gap = np.exp2(-rng.uniform(1, 9, (n, 1)))  # significands in [2 - gap, 2): some rows at the very top
        a = sign * (2.0 - gap * rng.random((n, K))) * np.exp2(e)
        b = (2.0 - gap * rng.random((n, K))) * np.exp2(e)
        c = sign[:, 0] * (2.0 - gap[:, 0] * rng.random(n)) * np.exp2(2 * e[:, 0] + rng.integers(-1, 2, n))
    elif kind == "sparse":
        return _sparse(f, n, K, rng)
    elif kind == "c-tie":
        return _c_tie(f, n, K, rng)
    else:  # spread: log-uniform magnitudes over the whole finite range, random signs
        a = rng.choice([-1.0, 1.0], (n, K)) * np.exp2(rng.uniform(fa.emin - fa.man_bits, fa.emax + 1, (n, K)))
        b = rng.choice([-1.0, 1.0], (n, K)) * np.exp2(rng.uniform(fb.emin - fb.man_bits, fb.emax + 1, (n, K)))
        c = rng.choice([-1.0, 1.0], n) * np.exp2(rng.uniform(max(fc.emin, -300), min(fc.emax, 300), n))
    return _scaled(fa, a), _scaled(fb, b), _scaled(fc, c)


def _tie(f: OperandFormats, n: int, K: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Values (float64) of lanes: x, half an ulp of x in the output (C) format, a lane 1..60 binades below that, the rest zero; shuffled."""
    fa, fc = f.a, f.c
    lo = max(fc.emin - fc.man_bits, fa.emin - fa.man_bits, -1000)
    hi = min(fa.emax, fc.emax, 60)
    low_end = rng.random(n) < 0.5  # half the rows near the bottom of the range (subnormal outputs, alignment floors)
    ex = np.where(low_end, lo + 2 + rng.integers(0, 24, n), rng.integers(lo + 2, hi, n))
    x = rng.choice([-1.0, 1.0], n) * rng.uniform(1.0, 2.0, n) * np.exp2(np.minimum(ex, hi))
    x = to_float64(fc, round_to_format(fc, x))  # a multiple of the output ulp, so x + half is a tie
    xa = to_float64(fa, round_to_format(fa, x))
    e_out = np.maximum(np.floor(np.log2(np.abs(np.where(xa == 0, 1.0, xa)))), fc.emin)
    half = np.exp2(e_out - fc.man_bits - 1) * np.where(rng.random(n) < 0.5, 1.0, -1.0)
    tiny = half * np.exp2(-rng.integers(1, 61, n)) * np.where(rng.random(n) < 0.5, 1.0, -1.0)
    a = np.zeros((n, K))
    b = np.zeros((n, K))
    lanes = np.argsort(rng.random((n, K)), axis=1)[:, :3]
    rows = np.arange(n)
    for lane, val in zip(lanes.T, (xa, half, tiny)):
        # split each value into two factors of about equal exponent, so products below the formats' range exist
        e = np.floor(np.log2(np.abs(np.where(val == 0, 1.0, val))))
        scale = np.exp2(np.floor(e / 2))
        a[rows, lane] = val / scale
        b[rows, lane] = scale
    c = np.where(rng.random(n) < 0.7, 0.0, half * rng.integers(-3, 4, n))
    return a, b, c


def _signed_zeros(fmt: Format, negative: np.ndarray) -> np.ndarray:
    """+0 or -0 patterns of ``fmt`` (uint64), -0 where ``negative`` (formats without -0 give +0)."""
    minus = fmt.sign_mask if fmt.signed and not fmt.sign_ignored and fmt.nan != "neg_zero" else 0  # FNUZ: 0x80 is NaN
    return np.where(negative, np.uint64(minus), np.uint64(0)).astype(np.uint64)


def _sparse(f: OperandFormats, n: int, K: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mostly zero products (random signs; a zero a times a zero or any b), 0-2 products 0..45 binades below c; a quarter
    of the rows all -0 products and c = -0."""
    fa, fb, fc = f.a, f.b, f.c
    a = _signed_zeros(fa, rng.random((n, K)) < 0.5)
    # the other factor of a zero product: zero, or any magnitude of b's range (a zero's exponent may count with it)
    other = rng.choice([-1.0, 1.0], (n, K)) * np.exp2(rng.uniform(fb.emin - fb.man_bits, fb.emax + 1, (n, K)))
    b = np.where(rng.random((n, K)) < 0.5, _signed_zeros(fb, rng.random((n, K)) < 0.5), _scaled(fb, other))
    ec = rng.integers(max(fc.emin, -40), min(fc.emax, 40) + 1, n)
    c_val = rng.choice([-1.0, 1.0], n) * rng.uniform(1.0, 2.0, n) * np.exp2(ec)
    c = np.where(rng.random(n) < 0.3, _signed_zeros(fc, rng.random(n) < 0.5), _scaled(fc, c_val))
    count = rng.integers(0, 3, n)
    for j in range(2):
        rows = np.nonzero(count > j)[0]
        lane = rng.integers(0, K, len(rows))
        val = rng.choice([-1.0, 1.0], len(rows)) * rng.uniform(1.0, 2.0, len(rows)) * np.exp2(ec[rows] - rng.integers(0, 46, len(rows)))
        scale = np.exp2(np.floor(np.floor(np.log2(np.abs(val))) / 2))  # two factors of about equal exponent
        a[rows, lane] = _scaled(fa, val / scale)
        b[rows, lane] = _scaled(fb, scale)
    negative = rng.random(n) < 0.25  # every product -0 (+0 x -0) and c = -0: the sign of an exact zero sum
    a[negative] = _signed_zeros(fa, np.zeros((int(negative.sum()), K), dtype=bool))
    b[negative] = _signed_zeros(fb, np.ones((int(negative.sum()), K), dtype=bool))
    c[negative] = _signed_zeros(fc, np.ones(int(negative.sum()), dtype=bool))
    return a, b, c


def _c_tie(f: OperandFormats, n: int, K: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """c, a product of half an ulp of c (c's format) and a product 1..12 binades below it, other lanes signed zeros."""
    fa, fb, fc = f.a, f.b, f.c
    lo_p = fa.emin - fa.man_bits + fb.emin - fb.man_bits + 14  # a tail 12 binades below half stays a product
    hi_p = min(fa.emax, 60) + min(fb.emax, 60)
    lo = max(fc.emin, lo_p + fc.man_bits + 1, -200)
    hi = max(lo, min(fc.emax, hi_p + fc.man_bits + 1, 200))
    ec = rng.integers(lo, hi + 1, n)
    c = _scaled(fc, rng.choice([-1.0, 1.0], n) * rng.uniform(1.0, 2.0, n) * np.exp2(ec))
    half = np.exp2(ec - fc.man_bits - 1) * rng.choice([-1.0, 1.0], n)
    tail = half * np.exp2(-rng.integers(1, 13, n)) * rng.choice([-1.0, 1.0], n)
    a = _signed_zeros(fa, rng.random((n, K)) < 0.5)
    b = _signed_zeros(fb, rng.random((n, K)) < 0.5)
    lanes = np.argsort(rng.random((n, K)), axis=1)[:, :2]
    rows = np.arange(n)
    for lane, val in zip(lanes.T, (half, tail)):
        scale = np.exp2(np.floor(np.floor(np.log2(np.abs(val))) / 2))  # two factors of about equal exponent
        a[rows, lane] = _scaled(fa, val / scale)
        b[rows, lane] = _scaled(fb, scale)
    return a, b, c


def _draw_kind(kind: str, f: OperandFormats, n: int, K: int, rng: np.random.Generator) -> Inputs:
    if kind in _PROBES:
        a, b, c = _probe(kind, f, n, K, rng)
    else:
        a, b, c = (x.astype(np.uint64) for x in draw_dot(kind, f.a, f.b, f.c, n, K, rng))
    sa = sb = None
    if f.scale is not None and f.block:
        nb = -(-K // f.block)
        if kind == "sparse":  # scales anywhere in their range: products far below (or above) every alignment floor
            sa, sb = (_wide_scales(f.scale, (n, nb), rng) for _ in range(2))
        else:
            skind = "finite-bits" if kind in ("finite-bits", "spread") else "normal"
            sa = draw_scales(skind, f.scale, (n, nb), rng).astype(np.uint64)
            sb = draw_scales(skind, f.scale, (n, nb), rng).astype(np.uint64)
    return Inputs(a, b, c, sa, sb)


def _wide_scales(fmt: Format, shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """Finite scale patterns of ``fmt`` spread over its whole range (ue8m0: 2^-127..2^127), as uint64."""
    bits = rng.integers(0, 1 << fmt.bits, size=shape).astype(np.uint64)
    nan = classify(fmt, bits) == NAN
    return np.where(nan, np.uint64(fmt.bias), bits)  # a NaN pattern becomes the scale 1 (exponent field = bias)


def draw_pool(f: OperandFormats, K: int, n: int, rng: np.random.Generator, domain: Optional[Domain] = None,
              kinds: Sequence[str] = POOL_KINDS) -> Inputs:
    """About ``n`` dot products of length K, an equal share of each kind, restricted to ``domain``.

    Inputs the domain cannot hold after :func:`restrict` are dropped, so a
    narrow domain gives fewer rows (possibly none); ``n = 0`` gives none.
    """
    if n <= 0:
        empty = np.zeros((0, K), dtype=np.uint64)
        nb = -(-K // f.block) if f.scale is not None and f.block else 0
        scales = np.zeros((0, nb), dtype=np.uint64) if nb else None
        return Inputs(empty, empty.copy(), np.zeros(0, dtype=np.uint64), scales, None if scales is None else scales.copy())
    if domain is not None and domain.specials and "bits" not in kinds:
        kinds = tuple(kinds) + ("bits",)  # NaN and infinity inputs, when the domain has them
    share = max(1, -(-n // len(kinds)))
    parts = [_draw_kind(k, f, share, K, rng) for k in kinds]
    pool = Inputs.concat(parts)
    if domain is not None:
        pool = restrict(pool, f, domain)
    return pool


def _negative(fmt: Format, bits: np.ndarray) -> np.ndarray:
    sign, _, _ = decode(fmt, bits)
    return (sign == 1) & (classify(fmt, bits) != NAN)


def _set_sign(fmt: Format, bits: np.ndarray, negative: bool) -> np.ndarray:
    """Patterns with the sign forced (zeros of unsigned-zero formats stay zero)."""
    if not fmt.signed or fmt.sign_ignored:
        return bits
    wrong = (_negative(fmt, bits) != negative) & (classify(fmt, bits) != ZERO)  # a zero satisfies either sign
    flipped = negate_bits(fmt, bits.astype(dtype_for(fmt))).astype(np.uint64)
    return np.where(wrong, flipped, bits)


def restrict(pool: Inputs, f: OperandFormats, domain: Domain) -> Inputs:
    """The rows of ``pool`` made to satisfy ``domain``: lanes zeroed, fixed inputs set, signs forced, the rest filtered."""
    a, b, c = pool.a.copy(), pool.b.copy(), pool.c.copy()
    if domain.lanes is not None:
        a[:, domain.lanes:] = 0
        b[:, domain.lanes:] = 0
    signs = dict(domain.signs)
    if domain.nonneg:
        signs = {"a": "+", "b": "+", "c": "+"}
    for who, sign in signs.items():
        arr, fmt = {"a": (a, f.a), "b": (b, f.b), "c": (c, f.c)}[who]
        arr[...] = _set_sign(fmt, arr, sign == "-")
    K = a.shape[1]
    for name, value in domain.fixed:
        if name == "c":
            c[:] = value
        elif name[1:].isdigit() and int(name[1:]) < K:
            (a if name[0] == "a" else b)[:, int(name[1:])] = value
    keep = np.ones(len(c), dtype=bool)
    for fmt, arr, exp in ((f.a, a, domain.exp), (f.b, b, domain.exp), (f.c, c[:, None], domain.cexp)):
        cls = classify(fmt, arr)
        if not domain.specials:
            keep &= ~((cls == NAN) | (cls == INF)).any(axis=1)
        if not domain.subnormals:
            keep &= ~(cls == SUBNORMAL).any(axis=1)
        if exp is not None:
            _, e, _ = decode(fmt, arr)
            ok = (cls == ZERO) | ((e >= exp[0]) & (e <= exp[1]))
            keep &= ok.all(axis=1)
    out = Inputs(a, b, c, pool.scale_a, pool.scale_b)
    if not domain.specials and f.scale is not None and out.scale_a is not None and out.scale_b is not None:
        for s in (out.scale_a, out.scale_b):
            keep &= ~(classify(f.scale, s) == NAN).any(axis=1)
    return out.take(np.nonzero(keep)[0])


def model_outputs(model: Model, inputs: Inputs, backend: str = "auto") -> np.ndarray:
    """D patterns (uint64) of ``model`` on every row of ``inputs`` (``backend`` as :func:`~smtmma.simulate.simulate_dot`'s:
    ``"numpy"`` for many models on a few thousand rows each, where compiling a kernel per model costs more)."""
    if len(inputs) == 0:
        return np.zeros(0, dtype=np.uint64)
    d = simulate_dot(model, None, inputs.a, inputs.b, inputs.c, scale_a=inputs.scale_a, scale_b=inputs.scale_b,
                     backend=backend)
    return d.astype(np.uint64)


def mutate(pool: Inputs, f: OperandFormats, n: int, rng: np.random.Generator, domain: Optional[Domain] = None) -> Inputs:
    """About ``n`` mutants of random rows of ``pool``: one bit of one a, b or c pattern flipped, restricted to ``domain``.

    Rows the domain cannot hold are dropped (see :func:`restrict`), so fewer
    than ``n`` may come back.
    """
    src = pool.take(rng.integers(0, len(pool), n))
    a, b, c = src.a.copy(), src.b.copy(), src.c.copy()
    K = a.shape[1]
    rows = np.arange(n)
    lane = rng.integers(0, 2 * K + 1, n)  # 0..K-1: a, K..2K-1: b, 2K: c
    for arr, fmt, pick in ((a, f.a, lane < K), (b, f.b, (lane >= K) & (lane < 2 * K))):
        r = rows[pick]
        col = lane[pick] % K
        arr[r, col] ^= np.left_shift(np.uint64(1), rng.integers(0, fmt.bits, len(r)).astype(np.uint64))
    r = rows[lane == 2 * K]
    c[r] ^= np.left_shift(np.uint64(1), rng.integers(0, f.c.bits, len(r)).astype(np.uint64))
    out = Inputs(a, b, c, src.scale_a, src.scale_b)
    return restrict(out, f, domain) if domain is not None else out


def distinct_outputs(outputs: np.ndarray) -> np.ndarray:
    """Per column of ``outputs`` (models x rows): how many different D patterns the models give."""
    if outputs.shape[0] == 0:
        return np.zeros(outputs.shape[1], dtype=np.int64)
    s = np.sort(outputs, axis=0)
    return 1 + (s[1:] != s[:-1]).sum(axis=0)


def climb(models: Sequence[Model], pool: Inputs, outputs: np.ndarray, f: OperandFormats, rng: np.random.Generator,
          domain: Optional[Domain] = None, *, rounds: int = 40, patience: int = 8, width: int = 32,
          per_row: int = 64) -> tuple[Inputs, np.ndarray]:
    """Hill-climb towards an input on which every model gives a different D.

    Each round mutates the ``width`` rows with the most distinct outputs
    (ties broken at random; ``per_row`` one-bit mutants each, inside
    ``domain``) and adds the mutants to the pool.  It stops once a row splits
    every model, after ``rounds`` rounds, or after ``patience`` rounds that did
    not raise the best count.  Returns the grown pool and the models' outputs
    on it (models x rows).
    """
    goal, best_seen, stale = len(models), 0, 0
    for _ in range(rounds):
        score = distinct_outputs(outputs)
        if len(score) == 0 or score.max() >= goal:
            break
        stale = stale + 1 if score.max() <= best_seen else 0
        best_seen = max(best_seen, int(score.max()))
        if stale > patience:
            break
        best = np.lexsort((rng.random(len(score)), -score))[:width]  # the best rows, ties broken at random
        kids = mutate(pool.take(best), f, width * per_row, rng, domain)
        if len(kids) == 0:
            continue
        pool = Inputs.concat([pool, kids])
        outputs = np.concatenate([outputs, np.stack([model_outputs(m, kids) for m in models])], axis=1)
    return pool, outputs
