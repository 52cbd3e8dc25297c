"""Inputs with a large error against Table 9's bound, found by simulation: the "witness just below" of a tight constant.

A proof caps ``|Phi - exact| / bound`` from above; an input shows how close
the cap is.  On the full domain the solver rarely finds such an input in
time, but the shape of the worst case is known (000 §6.1): every summand
loses almost one unit 2**(e_max - F) to truncation, and the output
conversion loses almost one ulp.  :func:`search` draws inputs of that shape
(c sets e_max; products just below a multiple of the unit, all one sign),
keeps the best by the exact ratio, and climbs from it by changing one
operand's low bits or exponent at a time.  FDPAs chained from zero with C
added last (Alg. 5, ``c_after``) round each running sum to the output
format, which Table 9 does not count: those models also get inputs of that
shape (:func:`_draw_chained`: C zero, so e_max is the largest product's;
large products lift the running sum a few binades above e_max, small ones
put bits where each intermediate rounding cuts).  FTZ-AddMul (Alg. 1-2) flushes
subnormal inputs and results to zero, so it also gets inputs where one
summand is such a value (:func:`_draw_flushed`).  Everything runs on the NumPy
simulator in batches; the ratio is computed in exact arithmetic by the
caller's ``ratio`` function.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, Optional

import numpy as np

from ...formats import Format, get_format
from ...models import Model
from ...simulate import simulate_dot
from ..distinguish import Witness

__all__ = ["search"]

Ratio = Callable[[Witness, int], Optional[Fraction]]


def _pattern(fmt: Format, neg: np.ndarray, field: np.ndarray, man: np.ndarray) -> np.ndarray:
    """Bit patterns from sign, biased exponent field and mantissa arrays (unsigned formats ignore the sign)."""
    bits = (field.astype(np.int64) << fmt.man_bits) | man.astype(np.int64)
    if fmt.signed:
        bits |= neg.astype(np.int64) << (fmt.bits - 1)
    return bits


def _top_field(fmt: Format) -> int:
    """The largest exponent field of a finite value (one below inf/NaN where the format reserves it)."""
    top = (1 << fmt.exp_bits) - 1
    return top - 1 if fmt.has_inf or fmt.nan == "ieee" else top


def _draw(model: Model, K: int, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, b, c) patterns, n rows: c near 1 sets e_max; each product lands a few units 2**(e_max - F) high, mantissas near full."""
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    F = model.F or fc.man_bits
    neg = rng.random(n) < 0.5
    e_c = rng.integers(0, 4, n)
    c = _pattern(fc, neg, e_c + fc.bias, rng.integers(0, 1 << fc.man_bits, n))
    # product exponent e_a + e_b ~ e_c - F + j: the product is about 2**(j + 1) units
    j = rng.integers(-1, 5, (n, K))
    e_a = rng.integers(-3, 4, (n, K))
    e_b = (e_c[:, None] - F + j) - e_a

    def operand(fmt: Format, e: np.ndarray) -> np.ndarray:
        field = np.clip(e + fmt.bias, 1, _top_field(fmt))
        full = (1 << fmt.man_bits) - 1
        man = np.where(rng.random(e.shape) < 0.6, full - rng.integers(0, 4, e.shape), rng.integers(0, full + 1, e.shape))
        return _pattern(fmt, np.broadcast_to(neg[:, None], e.shape), field, np.clip(man, 0, full))

    return operand(fa, e_a), operand(fb, e_b), c


def _draw_chained(model: Model, K: int, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, b, c) patterns, n rows, for a chain that rounds each FDPA's result to the output format: c = +0; in each
    row some lanes carry products at exponent E (near the top of the input formats), the others products whose
    bits fall in the 2**-(m - 11) .. 2**-(m + 2) part of 2**E (m: the rounded format's fraction bits), all positive."""
    fa, fb = get_format(model.a_fmt), get_format(model.b_fmt)
    m = get_format(model.conversion.fmt).man_bits
    E = fa.emax + fb.emax - 2
    big = rng.random((n, K)) < rng.uniform(0.3, 0.9, (n, 1))
    e_a = rng.integers(fa.emax - 4, fa.emax + 1, (n, K))
    low = E - rng.integers(m - 11, m + 3, (n, K))
    e_b = np.where(big, E - e_a, low // 2)
    e_a = np.where(big, e_a, low - low // 2)

    def operand(fmt: Format, e: np.ndarray) -> np.ndarray:
        field = np.clip(e + fmt.bias, 1, _top_field(fmt))
        return _pattern(fmt, np.zeros(e.shape, bool), field, rng.integers(0, 1 << fmt.man_bits, e.shape))

    return operand(fa, e_a), operand(fb, e_b), np.zeros(n, dtype=np.int64)


def _draw_flushed(model: Model, K: int, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, b, c) patterns, n rows, each with one value a flush-to-zero unit drops and every other lane zero: a lane's
    a or b subnormal (the other near 1), c subnormal, or a product of normal inputs below the smallest normal of D's
    format (drawn only where the input formats reach that low)."""
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    fd = get_format(model.d_fmt)
    A, B, C = (np.zeros((n, K), np.int64), np.zeros((n, K), np.int64), np.zeros(n, np.int64))
    rows, lane = np.arange(n), rng.integers(0, K, n)
    reach = fa.emin + fb.emin < fd.emin  # normal inputs whose product D's format cannot hold as a normal (bf16: yes)
    shape = rng.integers(0, 4 if reach else 3, n)  # 0: a subnormal, 1: b subnormal, 2: c subnormal, 3: such a product
    neg = rng.random(n) < 0.5

    def subnormal(fmt: Format, m: int) -> np.ndarray:
        return _pattern(fmt, neg[:m], np.zeros(m, np.int64), rng.integers(1, 1 << fmt.man_bits, m)) if fmt.man_bits else \
            np.zeros(m, np.int64)

    def normal(fmt: Format, e: np.ndarray) -> np.ndarray:
        field = np.clip(e + fmt.bias, 1, _top_field(fmt))
        return _pattern(fmt, np.zeros(len(e), bool), field, rng.integers(0, 1 << fmt.man_bits, len(e)))

    for who, (X, fx, Y, fy) in enumerate(((A, fa, B, fb), (B, fb, A, fa))):
        r = rows[shape == who]
        X[r, lane[r]] = subnormal(fx, len(r))
        Y[r, lane[r]] = normal(fy, rng.integers(-2, 3, len(r)))
    r = rows[shape == 2]
    C[r] = subnormal(fc, len(r))
    A[r, lane[r]] = normal(fa, rng.integers(-2, 3, len(r))) * (rng.random(len(r)) < 0.5)  # sometimes a product too
    B[r, lane[r]] = normal(fb, rng.integers(-2, 3, len(r)))
    r = rows[shape == 3]
    e = fd.emin - rng.integers(1, fd.man_bits + 2, len(r))  # the product's exponent, below D's normal range
    e_a = np.maximum(e // 2, fa.emin)
    A[r, lane[r]] = normal(fa, e_a)
    B[r, lane[r]] = normal(fb, np.maximum(e - e_a, fb.emin))
    return A, B, C


def _mutate(model: Model, a: np.ndarray, b: np.ndarray, c: np.ndarray, n: int,
            rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n copies of one input, each with one operand's low mantissa bits or exponent changed."""
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    A, B, C = np.repeat(a[None, :], n, 0), np.repeat(b[None, :], n, 0), np.repeat(c[None], n, 0)
    K = a.shape[0]
    rows = np.arange(n)
    who = rng.integers(0, 3, n)
    lane = rng.integers(0, K, n)
    low = rng.integers(0, 8, n)
    step = rng.choice([-1, 1], n)
    for arr, fmt, sel, idx in ((A, fa, who == 0, lane), (B, fb, who == 1, lane)):
        r = rows[sel]
        v = arr[r, idx[sel]]
        flip = rng.random(len(r)) < 0.5
        exp_moved = v + (step[sel] << fmt.man_bits)
        arr[r, idx[sel]] = np.where(flip, v ^ (low[sel] % (1 << fmt.man_bits)), exp_moved) & ((1 << fmt.bits) - 1)
    r = rows[who == 2]
    C[r] = (C[r] ^ (low[who == 2] % (1 << fc.man_bits))) & ((1 << fc.bits) - 1)
    return A, B, C


def search(model: Model, K: int, ratio: Ratio, *, seed: int = 0, draws: int = 3000, climbs: int = 12,
           batch: int = 400) -> Optional[tuple[Witness, int, Fraction]]:
    """The input with the largest ratio error/bound found: (witness, D pattern, ratio), None when none is finite.

    ``ratio(w, d)``: the exact ratio of an input and its output (None when
    out of scope: infinite or NaN output, a non-finite input).  ``draws``
    shaped inputs, then ``climbs`` rounds of ``batch`` one-operand changes
    from the best so far.  Deterministic for a given ``seed``.
    """
    rng = np.random.default_rng(seed)
    best: Optional[tuple[Witness, int, Fraction]] = None

    def consider(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
        nonlocal best
        d = simulate_dot(model, None, a, b, c, backend="numpy")
        for i in range(len(c)):
            w = Witness(tuple(int(x) for x in a[i]), tuple(int(x) for x in b[i]), int(c[i]))
            r = ratio(w, int(d[i]))
            if r is not None and (best is None or r > best[2]):
                best = (w, int(d[i]), r)

    consider(*_draw(model, K, draws, rng))
    if model.c_after:  # intermediate roundings: their own shape
        consider(*_draw_chained(model, K, draws, rng))
    if model.kind == "ftz-addmul":  # a value flushed to zero loses a whole summand: inputs of that shape
        consider(*_draw_flushed(model, K, draws, rng))
    for _ in range(climbs):
        if best is None:
            break
        w = best[0]
        consider(*_mutate(model, np.array(w.a, dtype=np.int64), np.array(w.b, dtype=np.int64), np.int64(w.c), batch, rng))
    return best
