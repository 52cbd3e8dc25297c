"""Which instruction and which kernel scheme a library's GEMM runs: identification on whole GEMMs.

A scheme (:class:`smtmma.scheme.Scheme`: promotion, split-K, operand
rounding, the epilogue) acts across instructions, so single dot products
cannot see it.  The candidates are pairs (catalogue model of the
instruction, scheme from a grid); the device is a GEMM callable
(:class:`~smtmma.hw.python_device.CallableDevice`).  Probe GEMMs of one shape
(M, N, K) run on the device and through :func:`smtmma.matmul` for every
candidate still alive; a candidate is dropped at its first output that
differs.  Probes, in order: a large term followed by small ones at several
scales (what a truncating accumulator drops and a promotion keeps),
cancelling pairs, N(0, 1) values, and -- when the grid rounds operands --
FP32 inputs that fall between (and exactly halfway between) values of the
operand format, given to the device as float32.  Then ``confirm`` further
N(0, 1) GEMMs run on the survivors.

Candidates that cannot differ on this shape are one candidate: models equal
as dataclasses (several architectures), ``promote_every >= K`` and no
promotion, ``split_k = 1`` whatever its partial format and order, two
partials summed in either order, and ``fp32`` partials of an FP32 D.  The
verdict names a candidate only when exactly one is left after the
confirmation; ``none`` when none is left (with the candidates that matched
the most outputs), ``undecided`` when several distinct ones agree on every
probe (the grid holds schemes this shape cannot tell apart: try another
shape or K).  Nothing here is proved: the verdict is what the probes show.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from ..arrays import from_patterns, to_patterns
from ..catalogue import CATALOGUE, resolve_instr
from ..errors import InputError, SmtmmaError
from ..formats import get_format
from ..gemm import instruction_k, matmul
from ..models import Model
from ..scheme import Scheme, parse_scheme

__all__ = ["parse_grid", "SchemeCandidate", "SchemeIdentification", "identify_scheme", "DEFAULT_SHAPE"]

#: The probe GEMMs' shape (M, N, K) unless the device or the caller gives one.
DEFAULT_SHAPE = (16, 16, 512)


def parse_grid(text: str) -> list[Scheme]:
    """Every scheme of a grid ``promote_every=none,32,64;split_k=1,2;round=rne,rna`` (fields joined by ';', values
    by ','): the cartesian product, each checked by :class:`Scheme`."""
    if not isinstance(text, str) or not text.strip():
        raise InputError("empty scheme grid: give fields such as 'promote_every=none,64;split_k=1,2'")
    axes: list[list[str]] = []
    seen = set()
    for part in (p.strip() for p in text.split(";") if p.strip()):
        key, eq, vals = part.partition("=")
        key = key.strip().lower().replace("-", "_")
        values = [v.strip() for v in vals.split(",") if v.strip()]
        if not eq or not values:
            raise InputError(f"scheme grid: {part!r} is not FIELD=V1,V2,... (e.g. split_k=1,2,4)")
        if key in seen:
            raise InputError(f"scheme grid: field {key} given twice")
        seen.add(key)
        axes.append([f"{key}={v}" for v in values])
    schemes = [parse_scheme(",".join(combo)) for combo in itertools.product(*axes)]
    return list(dict.fromkeys(schemes))


@dataclass
class SchemeCandidate:
    """A (model, scheme) pair, with the catalogue rows (``ARCH`` or ``ARCH/OP``) whose model it is."""

    names: list[str]
    arch: str
    op: Optional[str]
    model: Model
    scheme: Scheme
    mismatches: int = 0  # outputs it got wrong (while alive, 0)
    outputs: int = 0  # outputs compared

    @property
    def label(self) -> str:
        return " = ".join(self.names) + (f" + {self.scheme.spec()}" if self.scheme != Scheme() else " + plain")


@dataclass
class SchemeIdentification:
    """The verdict (``identified``/``none``/``undecided``), the candidates left, and the record of the probes."""

    verdict: str
    left: list[SchemeCandidate]
    nearest: list[SchemeCandidate]
    probes: list[dict[str, Any]] = field(default_factory=list)
    shape: tuple[int, int, int] = DEFAULT_SHAPE
    candidates: int = 0
    seconds: float = 0.0

    @property
    def scheme(self) -> Optional[Scheme]:
        """The scheme every candidate left shares (told even when the instruction is not), else None."""
        schemes = {c.scheme for c in self.left}
        return schemes.pop() if len(schemes) == 1 else None

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "left": [c.label for c in self.left],
                "scheme": None if self.scheme is None else self.scheme.spec(),
                "nearest": [{"candidate": c.label, "matched": c.outputs - c.mismatches, "of": c.outputs}
                            for c in self.nearest],
                "probes": self.probes, "shape": list(self.shape), "candidates": self.candidates,
                "seconds": round(self.seconds, 3)}


def _canonical(s: Scheme, K: int, d_fmt: str) -> Scheme:
    """``s`` with the fields this GEMM's K cannot show reset to their defaults (module doc)."""
    if s.promote_every is not None and s.promote_every >= K:
        s = dataclasses.replace(s, promote_every=None)
    if s.split_k == 1 or (s.split_k == 2 and s.reduction == "pairwise"):
        s = dataclasses.replace(s, reduction="sequential")
    if s.split_k == 1 or (s.partial == "fp32" and get_format(d_fmt).name in ("fp32", "e8m13")):
        s = dataclasses.replace(s, partial="fp32")
    return s


def _candidates(instr: str, schemes: list[Scheme], K: int, archs: Optional[list[str]]) -> list[SchemeCandidate]:
    by_key: dict[tuple[Model, Scheme], SchemeCandidate] = {}
    for e in CATALOGUE:
        if e.instr != instr or (archs is not None and e.arch not in archs):
            continue
        k = instruction_k(e.arch, e.instr, e.op)
        for s in schemes:
            if s.promote_every is not None and s.promote_every < K and s.promote_every % k:
                continue  # this instruction cannot promote there: not a candidate
            if s.split_k > -(-K // k):
                continue
            cs = _canonical(s, K, e.model.d_fmt)
            key = (e.model, cs)
            name = e.arch if all(x.arch != e.arch or x.op == e.op for x in CATALOGUE if x.instr == instr) else f"{e.arch}/{e.op}"
            if key in by_key:
                if name not in by_key[key].names:
                    by_key[key].names.append(name)
            else:
                by_key[key] = SchemeCandidate([name], e.arch, e.op, e.model, cs)
    return list(by_key.values())


def _probes(instr: str, shape: tuple[int, int, int], rounding: bool, rng: np.random.Generator
            ) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray, bool]]:
    """(kind, A, B, C, exact) probe GEMMs: real float64 arrays; ``exact``: values of the operand formats."""
    e = next(x for x in CATALOGUE if x.instr == instr)
    fa, fb, fc = e.model.a_fmt, e.model.b_fmt, e.model.c_fmt
    M, N, K = shape

    def fmt(x: np.ndarray, f: str) -> np.ndarray:
        return from_patterns(to_patterns(x, f, round="rne"), f, dtype=np.float64)

    out = []
    # a large term, then small ones: row i at scale 2^-(4 + i % 12), a different start per row
    A = np.zeros((M, K))
    for i in range(M):
        A[i] = 2.0 ** -(4 + i % 12) * (1 + (rng.random(K) < 0.5))
        A[i, (i * 7) % K] = 1.0
    B = np.ones((K, N)) * np.where(rng.random((K, N)) < 0.8, 1.0, -1.0)
    out.append(("large-then-small", fmt(A, fa), fmt(B, fb), fmt(rng.standard_normal((M, N)) * 4, fc), True))
    assoc = _association(e.model, shape)
    if assoc is not None:
        out.append(("association", assoc[0], assoc[1], np.zeros((M, N)), True))
    # cancelling pairs with a small residue
    A = rng.standard_normal((M, K)) * 2.0 ** rng.integers(-6, 6, (M, 1))
    A[:, 1::2] = -A[:, 0::2][:, :A[:, 1::2].shape[1]]
    A += 2.0 ** -10 * rng.standard_normal((M, K))
    out.append(("cancelling", fmt(A, fa), fmt(rng.standard_normal((K, N)), fb), np.zeros((M, N)), True))
    out.append(("normal", fmt(rng.standard_normal((M, K)), fa), fmt(rng.standard_normal((K, N)), fb),
                fmt(rng.standard_normal((M, N)), fc), True))
    if rounding and get_format(fa).man_bits < 23:
        # FP32 inputs between values of A's format, a quarter of them exactly halfway (ties: rne vs rna)
        base = fmt(rng.standard_normal((M, K)), fa)
        up = from_patterns(to_patterns(base, fa, round="ru"), fa, dtype=np.float64)
        nxt = np.nextafter(base.astype(np.float32), np.float32(np.inf)).astype(np.float64)
        half = (base + np.where(up > base, up, fmt(base + np.abs(base) * 2.0 ** -get_format(fa).man_bits, fa))) / 2
        A = np.where(rng.random((M, K)) < 0.25, half, nxt + (base - nxt) * rng.random((M, K)))
        A = A.astype(np.float32).astype(np.float64)
        out.append(("between-values", A, fmt(rng.standard_normal((K, N)), fb), np.zeros((M, N)), False))
    return out


def _association(model: Model, shape: tuple[int, int, int]) -> Optional[tuple[np.ndarray, np.ndarray]]:
    """A and B whose four quarters of K each hold one product: s, s 2^P, s, -s 2^P (the bigs' signs alternate by row), P the bits of
    the promotion/partial accumulator (24, or 53 for an FP64 D): ((s + big) + s) - big = 0 but (s + big) + (s - big)
    = s, so promotion chains and split-K slices summed in another order give another D.  None where the operand
    formats cannot hold such products."""
    M, N, K = shape
    if K % 4:
        return None
    fa, fb = get_format(model.a_fmt), get_format(model.b_fmt)
    P = 53 if get_format(model.d_fmt).name == "fp64" else 24
    lo_a, lo_b = fa.emin - (fa.man_bits if fa.subnormals else 0), fb.emin - (fb.man_bits if fb.subnormals else 0)
    room = (fa.emax - lo_a) + (fb.emax - lo_b)
    if room < P:
        return None
    ab = min(fa.emax, lo_a + P)
    bb = lo_a + lo_b + P - ab  # (ab + bb) - (lo_a + lo_b) = P, with lo_b <= bb <= fb.emax since room >= P
    small, big = (2.0 ** lo_a, 2.0 ** lo_b), (2.0 ** ab, 2.0 ** bb)
    A, B = np.zeros((M, K)), np.zeros((K, N))
    q = K // 4
    for t in range(4):
        B[t * q] = big[1] if t % 2 else small[1]
    for i in range(M):
        sign = 1.0 if i % 2 == 0 else -1.0  # s, +big, s, -big on even rows; s, -big, s, +big on odd ones
        A[i, 0], A[i, q], A[i, 2 * q], A[i, 3 * q] = small[0], sign * big[0], small[0], -sign * big[0]
    return A, B


def identify_scheme(device: Any, instr: str, schemes: list[Scheme], *, shape: Optional[tuple[int, int, int]] = None,
                    archs: Optional[list[str]] = None, confirm: int = 4, seed: int = 0,
                    progress: Optional[Callable[[str], None]] = None) -> SchemeIdentification:
    """Identify the (model, scheme) of ``device`` (a :class:`CallableDevice`) among the catalogue's models of
    ``instr`` x ``schemes`` (module doc)."""
    from ..hw.python_device import CallableDevice, operand_dtype

    if not isinstance(device, CallableDevice):
        raise InputError("a scheme grid identifies a GEMM callable: use --device python:MODULE:FUNCTION "
                         "(vectors on sim:, cuda and hip devices are single instructions; a scheme needs whole GEMMs)")
    if not schemes:
        raise InputError("the scheme grid is empty")
    instr = resolve_instr(instr)
    t0 = time.perf_counter()
    shape = shape or device.shape or DEFAULT_SHAPE
    cands = _candidates(instr, schemes, shape[2], archs)
    if not cands:
        raise InputError(f"no candidate: no catalogue row runs {instr} with these schemes at K = {shape[2]}")
    e0 = next(x for x in CATALOGUE if x.instr == instr)
    if e0.model.scale_fmt is not None:
        raise InputError(f"{instr} is block-scaled: a callable device takes only (A, B, C)")
    rng = np.random.default_rng(seed)
    rounding = any(c.scheme.round is not None for c in cands)
    probes = _probes(instr, shape, rounding, rng)
    fd = e0.model.d_fmt
    for j in range(confirm):
        fa, fb, fc = e0.model.a_fmt, e0.model.b_fmt, e0.model.c_fmt
        M, N, K = shape
        r = lambda f, s: from_patterns(to_patterns(rng.standard_normal(s), f, round="rne"), f, dtype=np.float64)  # noqa: E731
        probes.append((f"confirm {j + 1}", r(fa, (M, K)), r(fb, (K, N)), r(fc, (M, N)), True))
    for kind, A, B, C, exact in probes:  # a probe said to hold format values must: else the device gets other inputs
        if exact:
            for name, x, f in (("A", A, e0.model.a_fmt), ("B", B, e0.model.b_fmt), ("C", C, e0.model.c_fmt)):
                to_patterns(x, f, name=f"probe {kind}: {name}")
    alive = list(cands)  # every candidate runs every probe: the mismatch counts rank them when none is left
    record = []
    for kind, A, B, C, exact in probes:
        dt = [operand_dtype(getattr(e0.model, f)) if exact else np.dtype(np.float32) for f in ("a_fmt", "b_fmt")]
        d = device.call(A.astype(dt[0]), B.astype(dt[1]), C.astype(operand_dtype(e0.model.c_fmt)), fd)
        before = len(alive)
        for c in cands:
            try:
                want = matmul(c.arch, instr, A, B, C, op=c.op, scheme=c.scheme, bits=False)
                want_bits = to_patterns(want, get_format(get_format(fd).container or fd))
                wrong = int(np.count_nonzero(want_bits != d))
            except SmtmmaError:  # an exact-input candidate given inexact values cannot explain the device
                wrong = d.size
            c.outputs += d.size
            c.mismatches += wrong
            if wrong and c in alive:
                alive.remove(c)
        record.append({"probe": kind, "left": len(alive), "dropped": before - len(alive)})
        if progress is not None:
            progress(f"probe {kind}: {len(alive)} of {len(cands)} candidates left")
    nearest = sorted(cands, key=lambda c: c.mismatches)[:5] if not alive else []
    verdict = "identified" if len(alive) == 1 else "none" if not alive else "undecided"
    return SchemeIdentification(verdict, alive, nearest, record, shape, len(cands), time.perf_counter() - t0)
