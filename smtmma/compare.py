"""Differences between two models' outputs, in units in the last place (ulps) of D's format.

:func:`ulp_distance` counts ulps along the ordered bit patterns of a
format: finite patterns are numbered in value order (+0 and -0 are the
same number, 0), so the distance between two finite patterns is the count
of representable values stepped over, exact for every pair -- across
zero, through the subnormals, at the binade edges.  Equal non-finite
outputs (NaN and NaN, whatever the payload; +inf and +inf) are 0 ulps
apart; a NaN against anything else, or an infinity against a finite value
or the other infinity, is a *non-finite mismatch*, marked
:data:`NONFINITE`.  Distances are ``uint64`` (fp64 patterns of opposite
signs are up to 2^64 - 2^53 ulps apart, which int64 cannot hold).

:func:`compare_outputs` summarizes two arrays of D patterns: how many
differ, a histogram of |ulp difference| (:func:`bucket_bounds`: 0, 1, 2,
3-4, 5-8, ..., 2^(j-1)+1 .. 2^j) and the largest difference.
:func:`compare_models` draws inputs as ``smtmma validate`` does
(:mod:`smtmma.sampling`, MMA-Sim §3.1.4) and runs two models on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional, Union

import numpy as np
import numpy.typing as npt

from .errors import InputError, UnknownNameError, unknown_name
from .formats import Format, get_format
from .models import Model
from .sampling import KINDS, draw_operands, is_inf_bits, is_nan_bits
from .simulate import simulate_dot

__all__ = [
    "NONFINITE",
    "MIXED",
    "DRAW_KINDS",
    "Comparison",
    "Inputs",
    "ulp_distance",
    "bucket_bounds",
    "bucket_label",
    "compare_outputs",
    "draw_inputs",
    "compare_models",
]

#: The distance :func:`ulp_distance` gives a non-finite mismatch (NaN vs not NaN, inf vs finite, +inf vs -inf).
NONFINITE = (1 << 64) - 1

#: ``kind`` of :func:`draw_inputs` that takes the kinds of ``smtmma validate`` in turn, batch by batch.
MIXED = "mixed"

#: The input kinds :func:`draw_inputs` accepts: :data:`smtmma.sampling.KINDS` and :data:`MIXED`.
DRAW_KINDS: tuple[str, ...] = KINDS + (MIXED,)

#: Kinds :data:`MIXED` takes in turn (those of ``smtmma validate``).
_MIXED_KINDS = ("normal", "uniform", "dnn", "ill-conditioned", "bits")


def _ordinal(fmt: Format, bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(negative, magnitude) of each pattern: its place along the value-ordered patterns is -mag or +mag."""
    b = bits.astype(np.uint64)
    if not fmt.signed or fmt.sign_ignored:
        mag = b & np.uint64((1 << (fmt.bits - (1 if fmt.sign_ignored else 0))) - 1)
        return np.zeros(b.shape, dtype=bool), mag
    neg = (b >> np.uint64(fmt.bits - 1)) & np.uint64(1) == 1
    return neg, b & np.uint64(fmt.sign_mask - 1)


def ulp_distance(fmt: Union[str, Format], d1_bits: npt.ArrayLike, d2_bits: npt.ArrayLike) -> Union[int, np.ndarray]:
    """|ulp difference| of two patterns (or arrays of patterns) of ``fmt``, exact.

    Finite pairs: the number of representable values of ``fmt`` from one to
    the other (``0x3f800000`` vs ``0x3f800001`` in fp32: 1; +0 vs -0: 0; the
    smallest subnormal vs its negation: 2).  Both NaN, or the same
    infinity: 0.  Otherwise a non-finite mismatch: :data:`NONFINITE`.
    Returns a Python int for scalar inputs, else a ``uint64`` array of the
    broadcast shape.  InputError for a pattern wider than the format.
    """
    f = get_format(fmt)
    x, y = np.asarray(d1_bits), np.asarray(d2_bits)
    scalar = x.ndim == 0 and y.ndim == 0
    for name, arr in (("d1_bits", x), ("d2_bits", y)):
        if arr.dtype.kind not in "iu":
            raise InputError(f"{name}: expected integer bit patterns of {f.name}, got dtype {arr.dtype}")
        if arr.size and (int(arr.min()) < 0 or int(arr.max()) > (1 << f.bits) - 1):
            raise InputError(f"{name}: a pattern is not a {f.bits}-bit pattern of {f.name}")
    x, y = np.broadcast_arrays(x.astype(np.uint64), y.astype(np.uint64))
    n1, m1 = _ordinal(f, x)
    n2, m2 = _ordinal(f, y)
    # opposite signs: m1 + m2 (each < 2^63, so no overflow); same sign: |m1 - m2|
    dist = np.where(n1 != n2, m1 + m2, np.maximum(m1, m2) - np.minimum(m1, m2)).astype(np.uint64)
    nan1, nan2 = is_nan_bits(f, x), is_nan_bits(f, y)
    inf1, inf2 = is_inf_bits(f, x), is_inf_bits(f, y)
    special = nan1 | nan2 | inf1 | inf2
    same_special = (nan1 & nan2) | (inf1 & inf2 & (n1 == n2))
    dist = np.where(special, np.where(same_special, np.uint64(0), np.uint64(NONFINITE)), dist)
    return int(dist) if scalar else dist


def bucket_bounds(ulps: int) -> tuple[int, int]:
    """The histogram bucket (lo, hi) holding a finite |ulp difference|: (0, 0), (1, 1), (2, 2), (3, 4), (5, 8), ..."""
    if ulps <= 2:
        return ulps, ulps
    j = (ulps - 1).bit_length()  # 2^(j-1) < ulps <= 2^j
    return (1 << (j - 1)) + 1, 1 << j


def bucket_label(lo: int, hi: int) -> str:
    """``"0"``, ``"3-4"``: how a bucket is written."""
    return str(lo) if lo == hi else f"{lo}-{hi}"


@dataclass
class Comparison:
    """Two arrays of D patterns compared: counts, histogram of finite |ulp difference|, the largest one.

    ``histogram`` lists (lo, hi, count) for every bucket from 0 up to the
    largest difference (empty buckets included); ``worst`` is the index of
    the first output with the largest finite difference (None when no
    finite pair differs), ``first_nonfinite`` that of the first non-finite
    mismatch.
    """

    fmt: Format
    n: int = 0
    differ: int = 0
    nonfinite: int = 0
    max_ulps: int = 0
    worst: Optional[int] = None
    first_nonfinite: Optional[int] = None
    histogram: list[tuple[int, int, int]] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: ``{"format", "n", "differ", "nonfinite", "max_ulps", "histogram": [{"ulps", "lo", "hi", "count"}]}``."""
        return {"format": self.fmt.name, "n": self.n, "differ": self.differ, "nonfinite": self.nonfinite,
                "max_ulps": self.max_ulps,
                "histogram": [{"ulps": bucket_label(lo, hi), "lo": lo, "hi": hi, "count": c} for lo, hi, c in self.histogram]}


def _add(acc: Comparison, dist: np.ndarray, offset: int) -> None:
    """Fold one batch of distances (uint64, NONFINITE marked) into ``acc``; ``offset``: index of the batch's first output."""
    bad = dist == np.uint64(NONFINITE)
    finite = dist[~bad]
    acc.n += int(dist.size)
    acc.differ += int(np.count_nonzero(dist))
    acc.nonfinite += int(bad.sum())
    if bad.any() and acc.first_nonfinite is None:
        acc.first_nonfinite = offset + int(np.flatnonzero(bad)[0])
    counts: dict[tuple[int, int], int] = {}
    if finite.size:
        # exact bucketing: values <= 2^j counted on the sorted distances, for every power of two (uint64 edges)
        ordered = np.sort(finite)
        edges = np.array([1 << j for j in range(64)] + [NONFINITE - 1], dtype=np.uint64)  # 1, 2, 4, ..., 2^63, top
        at_most = np.searchsorted(ordered, edges, side="right")
        counts[(0, 0)] = int(np.searchsorted(ordered, np.uint64(0), side="right"))
        counts[(1, 1)] = int(at_most[0]) - counts[(0, 0)]
        counts[(2, 2)] = int(at_most[1] - at_most[0])
        for j in range(2, 65):  # (2^(j-1), 2^j]
            c = int(at_most[j] - at_most[j - 1])
            if c:
                counts[bucket_bounds((1 << (j - 1)) + 1)] = c
        top = int(ordered[-1])
        if top > acc.max_ulps:
            acc.max_ulps = top
            acc.worst = offset + int(np.flatnonzero(dist == np.uint64(top))[0])
    merged = {(lo, hi): c for lo, hi, c in acc.histogram}
    for k, c in counts.items():
        merged[k] = merged.get(k, 0) + c
    acc.histogram = _full_histogram(merged, acc.max_ulps)


def _full_histogram(counts: dict[tuple[int, int], int], top: int) -> list[tuple[int, int, int]]:
    """Every bucket from 0 to the one holding ``top``, in order, with its count (0 where none)."""
    out = []
    v = 0
    while True:
        lo, hi = bucket_bounds(v)
        out.append((lo, hi, counts.get((lo, hi), 0)))
        if hi >= top:
            return out
        v = hi + 1


def compare_outputs(fmt: Union[str, Format], d1_bits: npt.ArrayLike, d2_bits: npt.ArrayLike) -> Comparison:
    """Compare two equal-length 1-D arrays of D patterns of ``fmt``: see :class:`Comparison`."""
    f = get_format(fmt)
    x, y = np.asarray(d1_bits), np.asarray(d2_bits)
    if x.ndim != 1 or x.shape != y.shape:
        raise InputError(f"two 1-D arrays of the same length are compared, got shapes {x.shape} and {y.shape}")
    acc = Comparison(f, histogram=[(0, 0, 0)])
    dist = ulp_distance(f, x, y)
    assert isinstance(dist, np.ndarray)
    _add(acc, dist, 0)
    return acc


@dataclass
class Inputs:
    """One batch of drawn dot products: patterns a (n, K), b (n, K), c (n,), scales (n, blocks) or None; ``kind`` drawn."""

    kind: str
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    scale_a: Optional[np.ndarray] = None
    scale_b: Optional[np.ndarray] = None


#: Rows drawn per batch at most (with K: at most 2^22 operand values per batch).
BATCH_ROWS = 1 << 15


def draw_inputs(model: Model, n: int, K: int, kind: str = "normal", seed: int = 0) -> list[Inputs]:
    """``n`` dot products of length ``K`` in ``model``'s operand formats, in batches, deterministic for ``seed``.

    ``kind``: one of :data:`DRAW_KINDS` (``mixed``: the kinds of
    ``smtmma validate`` in turn, one per batch).  Block-scaled models also
    get scales (:func:`~smtmma.sampling.draw_scales`), one per ``block`` values.
    """
    if kind not in DRAW_KINDS:
        raise UnknownNameError(unknown_name("input kind", kind, DRAW_KINDS))
    if n < 1 or K < 1:
        raise InputError(f"n and K must be at least 1, got n={n}, K={K}")
    rng = np.random.default_rng(seed)
    kinds = _MIXED_KINDS if kind == MIXED else (kind,)
    batch = max(1, min(BATCH_ROWS, (1 << 22) // K))
    if kind == MIXED:
        batch = max(1, min(batch, -(-n // len(kinds))))  # every kind gets a share of a small n
    out, done = [], 0
    while done < n:
        k = kinds[len(out) % len(kinds)]
        m = min(batch, n - done)
        a, b, c, sa, sb = draw_operands(k, model.a_fmt, model.b_fmt, model.c_fmt, m, K, rng, model.scale_fmt, model.block)
        out.append(Inputs(k, a, b, c, sa, sb))
        done += m
    return out


def compare_models(
    m1: Model,
    m2: Model,
    *,
    n: int,
    K: int,
    kind: str = "normal",
    seed: int = 0,
    progress: Optional[Callable[[int, int], None]] = None,
) -> tuple[Comparison, Optional[tuple[Inputs, int, int, int]]]:
    """Run ``m1`` and ``m2`` on the same ``n`` drawn inputs (:func:`draw_inputs`) and compare their D in ulps.

    The models must read the same formats.  Returns the :class:`Comparison`
    and, when some output differs, ``(batch, row, d1, d2)``: the input with
    the largest finite difference (else the first non-finite mismatch).
    ``progress(done, n)`` is called after each batch.
    """
    if (m1.a_fmt, m1.b_fmt, m1.c_fmt, m1.d_fmt, m1.scale_fmt) != (m2.a_fmt, m2.b_fmt, m2.c_fmt, m2.d_fmt, m2.scale_fmt):
        raise InputError(f"the models read different formats ({m1.describe()}: {m1.a_fmt}/{m1.b_fmt}/{m1.c_fmt} -> {m1.d_fmt}; "
                         f"{m2.describe()}: {m2.a_fmt}/{m2.b_fmt}/{m2.c_fmt} -> {m2.d_fmt})")
    fmt = get_format(m1.d_fmt)
    acc = Comparison(fmt, histogram=[(0, 0, 0)])
    worst: Optional[tuple[Inputs, int, int, int]] = None
    first_bad: Optional[tuple[Inputs, int, int, int]] = None
    offset = 0
    for batch in draw_inputs(m1, n, K, kind, seed):
        d1 = simulate_dot(m1, None, batch.a, batch.b, batch.c, scale_a=batch.scale_a, scale_b=batch.scale_b)
        d2 = simulate_dot(m2, None, batch.a, batch.b, batch.c, scale_a=batch.scale_a, scale_b=batch.scale_b)
        before_max, before_bad = acc.max_ulps, acc.first_nonfinite
        dist = ulp_distance(fmt, d1, d2)
        assert isinstance(dist, np.ndarray)
        _add(acc, dist, offset)
        if acc.worst is not None and acc.max_ulps > before_max:
            i = acc.worst - offset
            worst = (batch, i, int(d1[i]), int(d2[i]))
        if before_bad is None and acc.first_nonfinite is not None:
            i = acc.first_nonfinite - offset
            first_bad = (batch, i, int(d1[i]), int(d2[i]))
        offset += len(batch.c)
        if progress is not None:
            progress(offset, n)
    return acc, worst if worst is not None else first_bad
