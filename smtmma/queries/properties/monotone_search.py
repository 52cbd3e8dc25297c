"""Witness search for monotonicity by simulation: structured candidate pairs, checked in batches by the NumPy simulator.

A candidate is a pair of inputs X <= X' that differ in one input raised to
its next pattern; it is a witness when the model gives a smaller output on
X'.  The structured candidates follow Fasi et al. (002 §3.1.4): raise c (or
one product's input) to a power of two, so that the alignment exponent
e_max grows by one and the small products lose their low bits; random
candidates near those exponents cover the rest.  Nothing found here is
trusted: the caller replays the pair and has a solver confirm it.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Optional

import numpy as np

from ...formats import NAN, INF, Format, classify, get_format, to_fraction
from ...models import Model
from ...simulate import fdpa_chunks, simulate_dot
from ..query_algebra import output_container
from ..distinguish import Witness


def _pattern(fmt: Format, e: np.ndarray, man: np.ndarray) -> np.ndarray:
    """Non-negative patterns of about 2**e (clamped to the format's range; subnormal below emin), fraction ``man``."""
    e = np.clip(np.asarray(e, dtype=np.int64), fmt.emin - fmt.man_bits if fmt.subnormals else fmt.emin, fmt.emax)
    mask = (1 << fmt.man_bits) - 1
    field = (e + fmt.bias).clip(0 if not fmt.subnormals else 1).astype(np.uint64)
    normal = (field << np.uint64(fmt.man_bits)) | (np.asarray(man).astype(np.uint64) & np.uint64(mask))
    if not fmt.subnormals:
        return normal
    shift = (e - (fmt.emin - fmt.man_bits)).clip(0, max(fmt.man_bits - 1, 0)).astype(np.uint64)
    sub = (np.uint64(1) << shift) | (np.asarray(man).astype(np.uint64) & ((np.uint64(1) << shift) - np.uint64(1)))
    return np.where(e >= fmt.emin, normal, sub).astype(np.uint64)


def _lo(fmt: Format) -> int:
    return fmt.emin - fmt.man_bits if fmt.subnormals else fmt.emin


def _finite(fmt: Format, bits: np.ndarray) -> np.ndarray:
    fits = bits < np.uint64(1 << fmt.bits) if fmt.bits < 64 else np.ones(bits.shape, dtype=bool)
    cls = classify(fmt, np.where(fits, bits, np.uint64(0)))
    return fits & (cls != NAN) & (cls != INF) & (bits & np.uint64(fmt.sign_mask) == 0)


def _one(fmt: Format) -> int:
    """The pattern of 1.0 (or of the smallest value >= 1 the format has)."""
    return int(_pattern(fmt, np.array([0]), np.array([0]))[0])


def chain_candidate(model: Model, K: int, *, tries: int = 4000) -> Optional[tuple[str, Witness, Witness]]:
    """A structured pair for T-FDPAs chained by Alg. 5: 002 §3.1.4's c raised to a power of two, where the c is the
    chain's own -- the first FDPA's result.

    The first FDPA's lanes sum exactly to 2**e - u (u: the output format's ulp just below 2**e) and one lane's move
    adds between u and 2u, so that result goes from 2**e - u to 2**e; the second FDPA then aligns one bit higher, and
    its products -- odd multiples of the smallest product pmin, whose last bit is one unit 2**(e-1-F) before --
    each lose pmin.  When their sum puts the result just past one of its rounding steps, the loss outweighs the
    gain u (m: the output's fraction bits; it needs 2**(F-m) small).  C = 0, every other lane 0.  Where no lanes sum
    to 2**e - u exactly, a sum in [2**e - u, 2**e) that the first FDPA's rounding takes there (tries / 16 movers).
    Each pair is checked by the simulator; None when the model does not chain FDPAs, a format is wider than 8 bits,
    or no pair drops.
    """
    if model.kind != "t-fdpa" or model.F is None or model.L is None or model.scale_fmt is not None or model.ftz_inputs:
        return None
    chunks = fdpa_chunks(model, K)
    fa, fb = get_format(model.a_fmt), get_format(model.b_fmt)
    if len(chunks) < 2 or fa.bits > 8 or fb.bits > 8:
        return None
    first = [k for k in chunks[0] if k is not None]
    second = [k for k in chunks[1] if k is not None]
    if len(first) < 2 or not second:
        return None
    va = {x: v for x in range(1 << fa.bits) if isinstance(v := to_fraction(fa, x), Fraction) and v > 0}
    vb = {y: v for y in range(1 << fb.bits) if isinstance(v := to_fraction(fb, y), Fraction) and v > 0}
    pmin = min(va.values()) * min(vb.values())
    if pmin.numerator != 1 or pmin.denominator & (pmin.denominator - 1):
        return None
    e = model.F + 1 - (pmin.denominator.bit_length() - 1)  # the second FDPA's unit is pmin at e_max = e - 1
    rfmt = get_format(model.conversion.fmt)
    T, u = Fraction(2) ** e, Fraction(2) ** (e - 1 - rfmt.man_bits)
    products = sorted({p * q for p in va.values() for q in vb.values()}, reverse=True)
    pair_of = {}
    for x, p in va.items():
        for y, q in vb.items():
            pair_of.setdefault(p * q, (x, y))
    movers = []
    for x, p in va.items():
        for y, q in vb.items():
            q2 = to_fraction(fb, y + 1) if y + 1 < (1 << fb.bits) else None
            if isinstance(q2, Fraction) and u <= p * (q2 - q) < 2 * u and p * q < T - u:
                movers.append((p * q, x, y))
    movers.sort(reverse=True)
    out = output_container(model)

    def attempt(p: Fraction, x: int, y: int, lanes: list[tuple[int, int]]) -> Optional[tuple[str, Witness, Witness]]:
        a, b = [0] * K, [0] * K
        for k, (xa, yb) in zip(first[1:], lanes):
            a[k], b[k] = xa, yb
        a[first[0]], b[first[0]] = x, y
        # the second FDPA: products with their last bit at pmin (odd multiples q * pmin), t of them q * pmin and the
        # rest pmin, so that their sum moves the rounded result across one of its steps when each loses pmin
        rows_a, rows_b = [], []
        for q in [j for j in range(1, 16, 2) if j * pmin in pair_of]:
            for t in range(len(second) + 1):
                ra, rb = list(a), list(b)
                for i, k in enumerate(second):
                    ra[k], rb[k] = pair_of[(q if i < t else 1) * pmin]
                rows_a.append(ra)
                rows_b.append(rb)
        moved = [list(rb) for rb in rows_b]
        for rb in moved:
            rb[first[0]] = y + 1
        n = len(rows_a)
        d = simulate_dot(model, None, np.array(rows_a + rows_a, dtype=np.uint64), np.array(rows_b + moved, dtype=np.uint64),
                         np.zeros(2 * n, dtype=np.uint64)).astype(np.uint64)
        for i in range(n):
            v1, v2 = to_fraction(out, int(d[i])), to_fraction(out, int(d[n + i]))
            if isinstance(v1, Fraction) and isinstance(v2, Fraction) and v2 < v1:
                return (f"b{first[0]}", Witness(tuple(rows_a[i]), tuple(rows_b[i]), 0),
                        Witness(tuple(rows_a[i]), tuple(moved[i]), 0))
        return None

    for p, x, y in movers[:tries]:  # the first FDPA's lanes sum exactly to 2**e - u
        lanes = _greedy(products, T - u - p, T - u - p, len(first) - 1)
        if lanes is not None:
            found = attempt(p, x, y, [pair_of[v] for v in lanes])
            if found is not None:
                return found
            break
    # or to a sum its rounding takes to 2**e - u: RZ and truncation keep [2**e - u, 2**e) there (FP8 products too
    # coarse to sum to 2**e - u exactly in a few lanes); the simulator decides whether the pair drops
    for p, x, y in movers[:tries // 16]:
        lanes = _greedy(products, T - u - p, T - p - pmin, len(first) - 1)
        if lanes is not None:
            found = attempt(p, x, y, [pair_of[v] for v in lanes])
            if found is not None:
                return found
    return None


def _greedy(products: list[Fraction], lo: Fraction, hi: Fraction, count: int) -> Optional[list[Fraction]]:
    """At most ``count`` of ``products`` (sorted, largest first; repeats allowed), greedily the largest that fits
    under ``hi``, summing to a value in [lo, hi]; None when the greedy sum falls short of lo."""
    rest, taken = hi, []
    for v in products:
        while v <= rest and len(taken) < count:
            taken.append(v)
            rest -= v
        if len(taken) == count or rest == 0:
            break
    return taken if hi - rest >= lo else None


def search(model: Model, K: int, *, seed: int = 0, n: int = 4096, rounds: int = 3) -> Optional[tuple[str, Witness, Witness]]:
    """(label, X, X') with X' = X with input ``label`` raised to its next pattern and a smaller output, or None.

    Only inputs a, b, c move (scales stay at 1.0); every candidate is finite and non-negative.  Chained FDPAs first
    get :func:`chain_candidate`.
    """
    hit = chain_candidate(model, K)
    if hit is not None:
        return hit
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    out = output_container(model)
    rng = np.random.default_rng(seed)
    F = model.F if model.F is not None else 24
    scales = None
    if model.scale_fmt and model.block:
        fs = get_format(model.scale_fmt)
        nblk = -(-K // model.block)
        scales = np.full((n, nblk), _one(fs), dtype=np.uint64)
    for r in range(rounds):
        for label in ["c"] + [f"{w}{k}" for k in range(min(K, 2)) for w in ("a", "b")]:
            # products just below the resolution of the sum once c reaches a power of two (002 §3.1.4)
            lo, hi = _lo(fa) + _lo(fb), min(fa.emax + fb.emax, 2 * 8)
            pmax = rng.integers(lo, hi + 1, size=n)
            pk = pmax[:, None] - np.where(rng.random((n, K)) < 0.7, rng.integers(0, 3, size=(n, K)), rng.integers(0, F + 8, size=(n, K)))
            ea = np.clip(rng.integers(_lo(fa), fa.emax + 1, size=(n, K)), pk - fb.emax, pk - _lo(fb))
            ea = np.clip(ea, _lo(fa), fa.emax)
            eb = pk - ea
            a = _pattern(fa, ea, rng.integers(0, 1 << fa.man_bits, size=(n, K)))
            b = _pattern(fb, eb, rng.integers(0, 1 << fb.man_bits, size=(n, K)))
            plain = rng.random((n, K)) < 0.3
            a[plain] = _pattern(fa, ea, np.zeros((n, K), dtype=np.int64))[plain]
            top = pmax + F + 1 + rng.integers(0, 3, size=n) - (rng.random(n) < 0.2) * rng.integers(0, F + 4, size=n)
            c = _pattern(fc, top - 1, rng.integers(0, 1 << fc.man_bits, size=n))
            which = rng.random(n)
            if label == "c":
                up = _pattern(fc, top, np.zeros(n, dtype=np.int64))  # a power of two, c just below it
                c = np.where(which < 0.7, up - np.uint64(1), c)
                c2 = c + np.uint64(1)
                a2, b2 = a, b
            else:
                who, k = label[0], int(label[1:])
                fmt, arr = (fa, a) if who == "a" else (fb, b)
                arr = arr.copy()
                e_top = top - F - 1 + rng.integers(0, 2, size=n) - (eb[:, k] if who == "a" else ea[:, k])
                up = _pattern(fmt, e_top, np.zeros(n, dtype=np.int64))
                arr[:, k] = np.where(which < 0.7, up - np.uint64(1), arr[:, k])
                if who == "a":
                    a = arr
                else:
                    b = arr
                moved = arr.copy()
                moved[:, k] = arr[:, k] + np.uint64(1)
                a2, b2 = (moved, b) if who == "a" else (a, moved)
                c2 = c
            ok = np.ones(n, dtype=bool)
            for fmt, x in ((fa, a), (fb, b), (fa, a2), (fb, b2)):
                ok &= _finite(fmt, x.reshape(-1)).reshape(n, K).all(axis=1)
            for fmt, x in ((fc, c), (fc, c2)):
                ok &= _finite(fmt, x)
            if not ok.any():
                continue
            a, b, c, a2, b2, c2 = a[ok], b[ok], c[ok], a2[ok], b2[ok], c2[ok]
            sc = scales[: len(c)] if scales is not None else None
            d1 = simulate_dot(model, None, a, b, c, scale_a=sc, scale_b=sc).astype(np.uint64)
            d2 = simulate_dot(model, None, a2, b2, c2, scale_a=sc, scale_b=sc).astype(np.uint64)
            good = _finite(out, d1) & (classify(out, d2) != NAN)
            mag1, mag2 = d1 & np.uint64(~out.sign_mask & ((1 << out.bits) - 1)), d2 & np.uint64(~out.sign_mask & ((1 << out.bits) - 1))
            neg1 = (d1 & np.uint64(out.sign_mask)) != 0
            neg2 = (d2 & np.uint64(out.sign_mask)) != 0
            drop = good & ~neg1 & ~neg2 & (mag2 < mag1)
            hit = np.flatnonzero(drop)
            if len(hit):
                i = int(hit[0])
                s = tuple(int(v) for v in sc[i]) if sc is not None else None
                w = Witness(tuple(int(v) for v in a[i]), tuple(int(v) for v in b[i]), int(c[i]), s, s)
                w2 = Witness(tuple(int(v) for v in a2[i]), tuple(int(v) for v in b2[i]), int(c2[i]), s, s)
                return label, w, w2
    return None
