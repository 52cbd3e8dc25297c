"""Randomized validation of a device against a model, with every mismatch shrunk to a minimal input.

Step 4 of the MMA-Sim paper's closed loop (§3.1.4): inputs drawn from
common distributions (normal, uniform, DNN-like), ill-conditioned sums and
random bit streams (subnormals, infinities, NaNs) run on the device and
through the model, compared bit for bit.  A mismatch is debugged as the
paper does: lanes are set to zero while the mismatch persists, then the
remaining values are simplified (fraction bits cleared, signs made
positive); each step strictly lowers the number of set bits, so shrinking
ends.  The result is a test-vector line whose ``d`` is the device's output
and whose ``expect`` is the model's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, NamedTuple, Optional

import numpy as np

from ..catalogue import lookup, model_of
from ..discriminators.candidates import entry_name
from ..formats import Format, get_format
from ..models import Model
from ..sampling import draw_operands
from ..simulate import simulate_dot
from ..vectors import dump_vector
from .device import Device

__all__ = ["VALIDATION_KINDS", "Shrunk", "ShrinkResult", "ValidationReport", "validate", "shrink", "validation_length"]

#: Input kinds drawn in turn (§3.1.4): distributions, ill-conditioned sums, random bit streams.
VALIDATION_KINDS = ("normal", "uniform", "dnn", "ill-conditioned", "bits")


@dataclass(frozen=True)
class Shrunk:
    """A mismatch before and after shrinking: inputs, the device's D and the model's D (patterns)."""

    kind: str
    original: tuple
    a: tuple[int, ...]
    b: tuple[int, ...]
    c: int
    scale_a: Optional[tuple[int, ...]]
    scale_b: Optional[tuple[int, ...]]
    device_d: int
    model_d: int
    steps: int
    line: str  # the shrunk input as a test-vector line (d: the device's, expect: the model's)


@dataclass
class ValidationReport:
    """Counts per input kind, the shrunk mismatches and the time taken (seconds)."""

    device: str
    arch: str
    instr: str
    op: str
    model: str
    K: int
    n: int = 0
    mismatched: int = 0
    by_kind: dict[str, list[int]] = field(default_factory=dict)  # kind -> [run, mismatched]
    shrunk: list[Shrunk] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def matched(self) -> int:
        """Inputs whose D agreed bit for bit."""
        return self.n - self.mismatched


def validation_length(arch: str, instr: str, op: Optional[str]) -> int:
    """Default dot-product length: one issue of the longest instruction of the row, and at least one FDPA of L."""
    e = lookup(arch, instr, op)
    m = model_of(arch, instr, op)
    return max([m.L or 0, m.P or 0, m.block or 0, 4] + [s.k for s in e.shapes])



def _simpler(fmt: Format, x: int) -> list[int]:
    """Simpler patterns than ``x`` (fewer set bits): zero, fraction cleared, low half of the fraction cleared, sign cleared."""
    out = [0]
    frac_mask = (1 << fmt.man_bits) - 1
    if x & frac_mask:
        out.append(x & ~frac_mask)
        half = (1 << (fmt.man_bits // 2)) - 1
        if x & half and half:
            out.append(x & ~half)
    if fmt.sign_mask and x & fmt.sign_mask:
        out.append(x & ~fmt.sign_mask)
    return [y for y in out if y != x and bin(y).count("1") < bin(x).count("1")]


class ShrinkResult(NamedTuple):
    """A shrunk input (patterns as ints; the scales are left as given), the steps taken and both outputs on it."""

    a: tuple[int, ...]
    b: tuple[int, ...]
    c: int
    steps: int
    device_d: int
    model_d: int


def shrink(device: Device, model: Model, arch: str, instr: str, op: Optional[str], a: np.ndarray, b: np.ndarray, c: int,
           scale_a: Optional[np.ndarray], scale_b: Optional[np.ndarray], device_d: int, model_d: int, *,
           max_rounds: int = 200) -> ShrinkResult:
    """A simpler input on which ``device`` and ``model`` still differ, starting from one where they give
    ``device_d`` and ``model_d``.

    Each round tries, in order, zeroing one lane (a and b), zeroing c, then
    simplifying one value (:func:`_simpler`), all in one device batch, and
    keeps the first candidate that still mismatches (with its two outputs).
    """
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    a, b = np.array(a, dtype=np.uint64), np.array(b, dtype=np.uint64)
    steps = 0
    for _ in range(max_rounds):
        cands: list[tuple[np.ndarray, np.ndarray, int]] = []
        for k in range(len(a)):
            if a[k] or b[k]:
                za, zb = a.copy(), b.copy()
                za[k] = zb[k] = 0
                cands.append((za, zb, c))
        if c:
            cands.append((a, b, 0))
        for k in range(len(a)):
            for fmt, arr, other in ((fa, a, b), (fb, b, a)):
                for y in _simpler(fmt, int(arr[k])):
                    na = arr.copy()
                    na[k] = y
                    cands.append((na, other, c) if arr is a else (other, na, c))
        cands += [(a, b, y) for y in _simpler(fc, int(c)) if y]
        if not cands:
            break
        A = np.stack([x for x, _, _ in cands])
        B = np.stack([y for _, y, _ in cands])
        C = np.array([z for _, _, z in cands], dtype=np.uint64)
        SA = None if scale_a is None else np.repeat(np.asarray(scale_a, dtype=np.uint64)[None, :], len(cands), axis=0)
        SB = None if scale_b is None else np.repeat(np.asarray(scale_b, dtype=np.uint64)[None, :], len(cands), axis=0)
        dev = device.run_arrays(arch, instr, op, A, B, C, SA, SB)
        ref = simulate_dot(model, None, A, B, C, scale_a=SA, scale_b=SB).astype(np.uint64)
        hit = np.nonzero(dev != ref)[0]
        if not len(hit):
            break
        j = int(hit[0])
        (a, b, c), device_d, model_d = cands[j], int(dev[j]), int(ref[j])
        steps += 1
    return ShrinkResult(tuple(int(x) for x in a), tuple(int(x) for x in b), int(c), steps, device_d, model_d)


#: operand values drawn per batch at most (rows x K): bounds the memory of a long K
BATCH_VALUES = 1 << 22


def validate(
    device: Device,
    arch: str,
    instr: str,
    op: Optional[str] = None,
    *,
    n: int = 1_000_000,
    seed: int = 0,
    K: Optional[int] = None,
    batch: int = 1 << 15,
    shrink_max: int = 5,
    progress: Optional[Callable[[int, int, int], None]] = None,
) -> ValidationReport:
    """Compare ``device`` with the catalogue model of (arch, instr, op) on ``n`` random inputs, bit for bit.

    Kinds of :data:`VALIDATION_KINDS` take turns batch by batch (each batch
    one kind); the first ``shrink_max`` mismatches are shrunk (:func:`shrink`).
    ``progress(done, total, mismatched)`` is called after each batch.
    """
    t0 = time.perf_counter()
    e = lookup(arch, instr, op)
    model = model_of(arch, instr, op)
    K = K or validation_length(arch, instr, op)
    rep = ValidationReport(device.description, e.arch, e.instr, e.op, model.describe(), K)
    rng = np.random.default_rng(seed)
    name = entry_name(e) if not op or op == e.op else f"{e.arch}/{op}"
    batch = max(1, min(batch, -(-n // len(VALIDATION_KINDS))))  # every kind gets a share of a small n
    batch = max(1, min(batch, BATCH_VALUES // K))  # a long K: fewer rows per batch, the same memory
    done, turn = 0, 0
    while done < n:
        kind = VALIDATION_KINDS[turn % len(VALIDATION_KINDS)]
        turn += 1
        m = min(batch, n - done)
        a, b, c, sa, sb = draw_operands(kind, model.a_fmt, model.b_fmt, model.c_fmt, m, K, rng, model.scale_fmt,
                                        model.block)
        dev = device.run_arrays(e.arch, e.instr, op, a, b, c, sa, sb)
        ref = simulate_dot(model, None, a, b, c, scale_a=sa, scale_b=sb).astype(np.uint64)
        bad = np.nonzero(dev != ref)[0]
        stats = rep.by_kind.setdefault(kind, [0, 0])
        stats[0] += m
        stats[1] += len(bad)
        rep.mismatched += len(bad)
        for i in bad[: max(0, shrink_max - len(rep.shrunk))]:
            i = int(i)
            row_sa = None if sa is None else sa[i]
            row_sb = None if sb is None else sb[i]
            r = shrink(device, model, e.arch, e.instr, op, a[i], b[i], int(c[i]), row_sa, row_sb, int(dev[i]), int(ref[i]))
            scales = [None if x is None else tuple(int(v) for v in x) for x in (row_sa, row_sb)]
            line = dump_vector(e.arch, e.instr, r.a, r.b, r.c, r.device_d, op=op, scale_a=scales[0], scale_b=scales[1],
                               expect={name: r.model_d}, gpu=device.description,
                               note=f"validate mismatch ({kind} input), shrunk in {r.steps} steps")
            original = (tuple(int(x) for x in a[i]), tuple(int(x) for x in b[i]), int(c[i]))
            rep.shrunk.append(Shrunk(kind, original, r.a, r.b, r.c, scales[0], scales[1], r.device_d, r.model_d, r.steps,
                                     line))
        done += m
        rep.n = done
        if progress is not None:
            progress(done, n, rep.mismatched)
    rep.seconds = time.perf_counter() - t0
    return rep
