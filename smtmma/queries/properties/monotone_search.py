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

from typing import Optional

import numpy as np

from ...formats import NAN, INF, Format, classify, get_format
from ...models import Model
from ...simulate import simulate_dot
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


def search(model: Model, K: int, *, seed: int = 0, n: int = 4096, rounds: int = 3) -> Optional[tuple[str, Witness, Witness]]:
    """(label, X, X') with X' = X with input ``label`` raised to its next pattern and a smaller output, or None.

    Only inputs a, b, c move (scales stay at 1.0); every candidate is finite and non-negative.
    """
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
