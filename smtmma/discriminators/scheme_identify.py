"""Which instruction and which kernel scheme a library's GEMM runs: identification on whole GEMMs.

A scheme (:class:`smtmma.scheme.Scheme`: promotion, split-K, operand
rounding, the epilogue) acts across instructions, so single dot products
cannot see it.  The candidates are pairs (a candidate model of the
instruction -- by default every catalogue row of it --, a scheme from a
grid); the device is a GEMM callable (:class:`GemmDevice`, e.g.
:class:`smtmma.hw.CallableDevice`, or any ``fn(A, B, C)``).  Probe GEMMs
of one shape (M, N, K) run on the device and through :func:`smtmma.matmul`
for every candidate; a candidate is out at its first differing output and
runs no further probe (when none is left, every candidate runs every
probe, and the counts rank the nearest).  Probes, in order: a large term
followed by small ones at several scales (what a truncating accumulator
drops and a promotion keeps); dot products that split the distinct
candidate models at the instruction level (from the identify command's
input pool; each at the start of K and at its end); an association probe (s, s 2^P, s, -s 2^P
in the four quarters of K: promotion chains and split-K slices summed in
another order give another D); cancelling pairs; signed zeros (-0 products
into a -0 C: an FP32 accumulator that starts at +0 turns a -0 chain into
+0); N(0, 1) values; and, when the grid rounds operands, FP32 values
between two neighbours of A's format, a quarter of them exactly halfway
(rne vs rna vs rz ...), given to the device as float32.  Then ``confirm``
further N(0, 1) GEMMs.

**Merging.**  Candidates are merged only where smtmma.matmul runs the same
computation for them on this shape, so a merge is a proof, not a guess:
the same model; the same chains along K (split-K slices of whole
instructions and, inside them, promotion chains, each padded with zeros to
whole instructions) and the same promotion flag; the same operand
rounding, C placement, alpha and beta; the partial format only where there
are several slices, the reduction order only where there are more than
three (the pairwise tree of two or three partials is the sequential sum);
and the same instruction width k unless the model cannot tell widths apart
(an FMA chain; FTZ-AddMul groups of P with P | k; FDPAs of L terms with
L | k, without interleaved lanes or C added per instruction: an
instruction of k is then k/L chained FDPAs).  So ``split_k=1`` with any
partial format is one candidate, and so are two ``promote_every`` at or
above a slice's length (one chain each).  But ``promote_every >= K`` is
*not* the plain chain: the one chain is still added into an FP32
accumulator from +0, which turns a -0 result into +0.  The default K
(:func:`default_shape`) gives every slice of every grid scheme at least
two promotion chains, so that case does not arise.

**Verdict.**  ``identified`` when exactly one (merged) candidate matches
every output of every probe; ``none`` when none does (with the candidates
that matched the most outputs); ``undecided`` when several distinct ones
match every probe (this shape and these probes cannot tell them apart:
try another shape, e.g. a larger K).  The verdict is relative to the grid,
and nothing is proved about the device.  A scheme outside the grid that
computes the same thing as one inside it is named by the inside one.  For
example, split-K in S slices with FP32 partials summed in order is
promotion every K/S except for the sign of a zero.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Hashable, Optional, Protocol, Sequence, Union

import numpy as np

from ..arrays import from_patterns, patterns_of, to_patterns
from ..catalogue import resolve_instr
from ..errors import InputError, InputTypeError, SmtmmaError
from ..formats import Format, carried_in, get_format
from ..gemm import instruction_k, matmul, natural_dtype
from ..models import Model
from ..rounded import round_to
from ..scheme import Scheme, parse_scheme
from ..queries.pool import OperandFormats, draw_pool, model_outputs
from .candidates import Candidate, Space, catalogue_space
from .selection import select

__all__ = ["parse_grid", "SchemeCandidate", "SchemeIdentification", "GemmDevice", "identify_scheme", "default_shape",
           "DEFAULT_SHAPE", "MAX_DEFAULT_K"]

#: The probe GEMMs' shape (M, N, K) unless the device, the caller or the grid (:func:`default_shape`) says otherwise.
DEFAULT_SHAPE = (16, 16, 512)

#: The largest K :func:`default_shape` picks (a grid that wants more merges or stays undecided, never guesses).
MAX_DEFAULT_K = 4096


def parse_grid(text: str) -> list[Scheme]:
    """Every scheme of a grid ``promote_every=none,32,64;split_k=1,2;round=rne,rna`` (fields joined by ';', values
    by ','): the cartesian product, in order, each checked by :class:`Scheme`, duplicates dropped.

    A combination :class:`Scheme` refuses only for the company it keeps
    (``beta=0.5`` beside ``c_in=accumulator``) is left out; a value no
    combination accepts is an error (Scheme's message).
    """
    if not isinstance(text, str):
        raise InputTypeError(f"a scheme grid is a string such as 'promote_every=none,64;split_k=1,2', got {type(text).__name__}")
    if not text.strip():
        raise InputError("empty scheme grid: give fields such as 'promote_every=none,64;split_k=1,2'")
    axes: list[list[str]] = []
    seen = set()
    for part in (p.strip() for p in text.split(";") if p.strip()):
        key, eq, vals = part.partition("=")
        key = key.strip().lower().replace("-", "_")
        values = [v.strip() for v in vals.split(",") if v.strip()]
        if not eq or not key or not values:
            raise InputError(f"scheme grid: {part!r} is not FIELD=V1,V2,... (e.g. split_k=1,2,4)")
        if key in seen:
            raise InputError(f"scheme grid: field {key} given twice")
        seen.add(key)
        axes.append([f"{key}={v}" for v in values])
    schemes: list[Scheme] = []
    accepted: set[str] = set()
    refused: dict[str, SmtmmaError] = {}
    for combo in itertools.product(*axes):
        try:
            schemes.append(parse_scheme(",".join(combo)))
        except SmtmmaError as e:
            for item in combo:
                refused.setdefault(item, e)
            continue
        accepted.update(combo)
    for item, e in refused.items():
        if item not in accepted:
            raise e
    return list(dict.fromkeys(schemes))


@dataclass
class SchemeCandidate:
    """One candidate: a model (the catalogue rows ``names`` -- ``ARCH`` or ``ARCH/OP`` -- or a model spec) run as
    instructions of ``k`` under ``scheme``; ``schemes`` are the grid's schemes it stands for (module doc: merging)."""

    names: list[str]
    arch: Optional[str]
    op: Optional[str]
    model: Model
    k: int
    scheme: Scheme
    schemes: list[Scheme]
    mismatches: int = 0  # outputs it got wrong (while alive, 0)
    outputs: int = 0  # outputs compared (a candidate out runs no further probe unless none is left: then every one)
    probes_run: int = 0

    @property
    def label(self) -> str:
        """``sm80 = sm86 + promote_every=64``: the rows and the scheme (``plain`` for the bare chain)."""
        return " = ".join(self.names) + f" + {self.scheme.spec()}"


@dataclass
class SchemeIdentification:
    """The verdict (``identified``/``none``/``undecided``), the candidates left, and the record of the probes."""

    verdict: str
    left: list[SchemeCandidate]
    nearest: list[SchemeCandidate]
    probes: list[dict[str, Any]] = field(default_factory=list)
    shape: tuple[int, int, int] = DEFAULT_SHAPE
    candidates: int = 0
    pairs: int = 0  # (model, scheme) pairs before merging
    seconds: float = 0.0

    @property
    def scheme(self) -> Optional[Scheme]:
        """The scheme every candidate left shares (told even when the instruction is not), else None."""
        schemes = {c.scheme for c in self.left}
        return schemes.pop() if len(schemes) == 1 else None

    @property
    def models(self) -> list[str]:
        """The names of the models left (each a catalogue row or spec), in candidate order, once each."""
        return list(dict.fromkeys(n for c in self.left for n in c.names))

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` record: verdict, candidate (when identified), left, models, scheme, nearest, probes, shape,
        candidates, pairs, outputs compared per candidate, seconds."""
        return {"verdict": self.verdict,
                "candidate": self.left[0].label if self.verdict == "identified" else None,
                "left": [_cand_dict(c) for c in self.left], "models": self.models,
                "scheme": None if self.scheme is None else self.scheme.spec(),
                "nearest": [{**_cand_dict(c), "matched": c.outputs - c.mismatches, "of": c.outputs} for c in self.nearest],
                "probes": self.probes, "shape": list(self.shape), "candidates": self.candidates, "pairs": self.pairs,
                "seconds": round(self.seconds, 3)}


def _cand_dict(c: SchemeCandidate) -> dict[str, Any]:
    return {"candidate": c.label, "models": c.names, "k": c.k, "scheme": c.scheme.spec(),
            "equivalent_schemes": [s.spec() for s in c.schemes if s != c.scheme]}


def default_shape(schemes: Sequence[Scheme], ks: Sequence[int] = (64,)) -> tuple[int, int, int]:
    """(16, 16, K): K >= 512 and >= 2 x the largest promote_every x the largest split_k (so every slice holds two
    promotion chains or more), a multiple of every instruction width in ``ks``, at most :data:`MAX_DEFAULT_K`."""
    P = max((s.promote_every for s in schemes if s.promote_every is not None), default=0)
    S = max((s.split_k for s in schemes), default=1)
    step = math.lcm(*ks) if ks else 64
    K = max(DEFAULT_SHAPE[2], 2 * P * S)
    K = -(-K // step) * step
    cap = max(step, MAX_DEFAULT_K // step * step)
    return DEFAULT_SHAPE[0], DEFAULT_SHAPE[1], min(K, cap)


def _k_granularity(model: Model, k: int) -> Optional[int]:
    """``k`` where the model's result depends on the instruction width, None where a chain of instructions of any
    width that the model's step divides is the same chain of steps (module doc: merging)."""
    if model.kind == "fma":
        return None
    if model.kind == "ftz-addmul":
        return None if model.P and k % model.P == 0 else k
    if model.interleave or model.c_after or not model.L or k % model.L:
        return k
    return None


def _behaviour(model: Model, k: int, s: Scheme, K: int) -> Optional[Hashable]:
    """What matmul computes for (model, k, s) on a GEMM of depth K, as a key: equal keys, equal D (module doc); None
    where the scheme cannot run (more slices than instructions, a promotion that is not whole instructions)."""
    nk = -(-K // k)
    if s.split_k > nk or (s.promote_every is not None and s.promote_every % k):
        return None
    # scheme.py: slice t takes instructions t*nk//S .. (t+1)*nk//S; each slice is cut into chains of promote_every
    cuts = [t * nk // s.split_k * k for t in range(s.split_k + 1)]
    chains = []
    for a, b in ((cuts[t], min(K, cuts[t + 1])) for t in range(s.split_k)):
        step = s.promote_every if s.promote_every is not None else b - a
        chains.append(tuple((c, min(b, c + step), -(-(min(b, c + step) - c) // k) * k) for c in range(a, b, step)))
    S = len(chains)
    return (model, _k_granularity(model, k), tuple(chains), s.promote_every is not None, s.round, s.block_scale,
            s.partial if S > 1 else None, s.reduction if S > 3 else None, s.c_in, s.alpha, s.beta)


def _simplicity(s: Scheme) -> int:
    """Fields of ``s`` away from the defaults: the representative of merged schemes is the simplest."""
    return sum(getattr(s, f.name) != f.default for f in fields(s))


def _candidates(space: list[Candidate], base_arch: str, instr: str, schemes: list[Scheme], K: int
                ) -> tuple[list[SchemeCandidate], int]:
    """The merged candidates (module doc) and the number of runnable (model, scheme) pairs."""
    by_key: dict[Hashable, SchemeCandidate] = {}
    pairs = 0
    for cand in space:
        k = instruction_k(cand.arch, instr, cand.op) if cand.arch else instruction_k(base_arch, instr)
        for s in schemes:
            key = _behaviour(cand.model, k, s, K)
            if key is None:
                continue
            pairs += 1
            have = by_key.get(key)
            if have is None:
                by_key[key] = SchemeCandidate([cand.name], cand.arch, cand.op, cand.model, k, s, [s])
                continue
            if cand.name not in have.names:
                have.names.append(cand.name)
            if s not in have.schemes:
                have.schemes.append(s)
                if _simplicity(s) < _simplicity(have.scheme):
                    have.scheme = s
    return list(by_key.values()), pairs


def _has_negative_zero(fmt: Format) -> bool:
    try:
        back = from_patterns(to_patterns(np.array([-0.0]), fmt), fmt, dtype=np.float64)
    except SmtmmaError:
        return False
    return bool(np.signbit(back[0]))


Probe = tuple[str, np.ndarray, np.ndarray, np.ndarray, bool]


def _probes(models: list[Model], k: int, shape: tuple[int, int, int], rounding: bool, rng: np.random.Generator
            ) -> list[Probe]:
    """(kind, A, B, C, exact) probe GEMMs: real float64 arrays; ``exact``: values of the operand formats.  ``models``:
    the distinct candidate models (their operand formats are one instruction's), ``k`` the widest instruction."""
    model = models[0]
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    M, N, K = shape

    out: list[Probe] = []
    # a large term, then small ones: row i at scale 2^-(4 + i % 12), a different start per row
    A = np.zeros((M, K))
    for i in range(M):
        A[i] = 2.0 ** -(4 + i % 12) * (1 + (rng.random(K) < 0.5))
        A[i, (i * 7) % K] = 1.0
    B = np.ones((K, N)) * np.where(rng.random((K, N)) < 0.8, 1.0, -1.0)
    out.append(("large-then-small", round_to(A, fa), round_to(B, fb), round_to(rng.standard_normal((M, N)) * 4, fc), True))
    split = _model_splitting(models, k, shape, rng)
    if split is not None:
        out.append(("model-splitting", *split, True))
    assoc = _association(model, shape)
    if assoc is not None:
        out.append(("association", assoc[0], assoc[1], np.zeros((M, N)), True))
    # cancelling pairs with a small residue
    A = rng.standard_normal((M, K)) * 2.0 ** rng.integers(-6, 6, (M, 1))
    A[:, 1::2] = -A[:, 0::2][:, :A[:, 1::2].shape[1]]
    A += 2.0 ** -10 * rng.standard_normal((M, K))
    out.append(("cancelling", round_to(A, fa), round_to(rng.standard_normal((K, N)), fb), np.zeros((M, N)), True))
    zero = _signed_zeros(fa, fb, fc, shape)
    if zero is not None:
        out.append(("signed-zeros", *zero, True))
    out.append(("normal", round_to(rng.standard_normal((M, K)), fa), round_to(rng.standard_normal((K, N)), fb),
                round_to(rng.standard_normal((M, N)), fc), True))
    if rounding and fa.man_bits <= 11 and fa.exp_bits <= 8:
        # FP32 values between two neighbours lo < hi of A's format: lo + (hi - lo) j / 2^12, exact in FP32 (A's
        # format has at most 11 fraction bits); j = 2^11 (exactly halfway) for a quarter of them
        lo = round_to(rng.standard_normal((M, K)), fa)
        lo = np.where(lo == 0, 1.0, lo)
        hi = from_patterns(to_patterns(np.nextafter(lo, np.inf), fa, round="ru"), fa, dtype=np.float64)
        j = np.where(rng.random((M, K)) < 0.25, 2048, rng.integers(1, 4096, (M, K)))
        A = lo + (hi - lo) * j / 4096.0
        assert np.array_equal(A.astype(np.float32).astype(np.float64), A), "between-values probe must be FP32"
        out.append(("between-values", A, round_to(rng.standard_normal((K, N)), fb), np.zeros((M, N)), False))
    return out


def _model_splitting(models: list[Model], k: int, shape: tuple[int, int, int], rng: np.random.Generator
                     ) -> Optional[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Dot products of one instruction width that tell the distinct candidate models apart (chosen from a pool of
    the identify command's kinds: normal, ill-conditioned, swamping, ties, tiny, carries, ...), on the diagonal.
    Each chosen vector goes there twice: once in the first k places of row i of A and column i of B (-0 products
    after it: x + (-0) = x, so the instruction's result goes on as it is wherever the model keeps signed zeros), once
    in the last k places (zeros before it, through which C reaches it unchanged unless it is -0 or tiny) -- the
    second keeps a -0 result that a later all-zero instruction would turn into +0.  C[i, i] is the vector's c; the
    diagonal's other places take further vectors that split models, the most splitting first, then any.  None with a single model.  The selection is a heuristic
    (instruction outputs, not the GEMMs'); every output is still compared in full."""
    if len(models) < 2:
        return None
    M, N, K = shape
    kk = min(k, K)
    pool = draw_pool(OperandFormats.of(models[0]), kk, 2048, rng)
    outs = np.stack([model_outputs(m, pool, backend="numpy") for m in models])
    chosen = select(outs)
    side = min(M, N)
    # then the vectors that split the most models (several witnesses per pair: one a later all-zero instruction or a
    # promotion's +0 start erases -- a -0 -- may have a sibling that differs in value), in random order among equals
    spread = np.array([len(np.unique(outs[:, j])) for j in range(outs.shape[1])])
    order = rng.permutation(len(pool))
    rest = [int(j) for j in order[np.argsort(-spread[order], kind="stable")] if j not in chosen and spread[j] > 1]
    rest += [int(j) for j in order if spread[j] <= 1][:side]
    places = [(j, 0) for j in chosen] + [(j, K - kk) for j in chosen] + [(j, (K - kk) * (t % 2)) for t, j in enumerate(rest)]
    fa, fb, fc = (get_format(getattr(models[0], f)) for f in ("a_fmt", "b_fmt", "c_fmt"))
    neg = -0.0 if _has_negative_zero(fa) else 0.0
    A, B, C = np.zeros((M, K)), np.zeros((K, N)), np.zeros((M, N))
    for i, (j, at) in enumerate(places[:side]):
        if at == 0:
            A[i, kk:] = neg
        A[i, at:at + kk] = from_patterns(pool.a[j], fa, dtype=np.float64)
        B[at:at + kk, i] = from_patterns(pool.b[j], fb, dtype=np.float64)
        C[i, i] = from_patterns(pool.c[j:j + 1], fc, dtype=np.float64)[0]
    return A, B, C


def _signed_zeros(fa: Format, fb: Format, fc: Format, shape: tuple[int, int, int]
                  ) -> Optional[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """A, B, C of zeros: C = -0; every product -0 in even rows, +0 in odd ones (exact sums -0 and +0).  None where
    no operand format holds -0."""
    M, N, K = shape
    if not _has_negative_zero(fc) or not (_has_negative_zero(fa) or _has_negative_zero(fb)):
        return None
    sign = np.where(np.arange(M) % 2 == 0, -0.0, 0.0)[:, None]
    A = np.zeros((M, K)) if not _has_negative_zero(fa) else np.broadcast_to(sign, (M, K)).copy()
    B = np.zeros((K, N))
    if not _has_negative_zero(fa):  # the sign rides on B's columns instead
        B = np.broadcast_to(np.where(np.arange(N) % 2 == 0, -0.0, 0.0)[None, :], (K, N)).copy()
    return A, B, np.full((M, N), -0.0)


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


def _space(instr: str, candidates: Union[None, Space, Sequence[Candidate]], archs: Optional[Sequence[str]]
           ) -> tuple[list[Candidate], str]:
    """The candidate models and the architecture whose instruction width model specs take."""
    if candidates is None:
        sp = catalogue_space(instr)
        cands, base = sp.candidates, sp.base_arch
    elif isinstance(candidates, Space):
        if candidates.instr != instr:
            raise InputError(f"the candidate space is of {candidates.instr}, not {instr}")
        cands, base = list(candidates.candidates), candidates.base_arch
    else:
        cands = list(candidates)
        if not all(isinstance(c, Candidate) for c in cands):
            raise InputTypeError("candidates must be a Space or Candidate objects (smtmma.discriminators.candidates)")
        base = next((c.arch for c in cands if c.arch), None) or catalogue_space(instr).base_arch
    if archs is not None:
        cands = [c for c in cands if c.arch in archs]
    if not cands:
        raise InputError(f"no candidate model of {instr} to identify among")
    return cands, base


class GemmDevice(Protocol):
    """What identification needs of a device: ``call(A, B, C, d_fmt)`` -> D patterns (M, N) of ``fn(A, B, C)``, and
    the GEMM ``shape`` it was given (or None) -- :class:`smtmma.hw.CallableDevice` is one."""

    shape: Optional[tuple[int, int, int]]

    def call(self, A: np.ndarray, B: np.ndarray, C: np.ndarray, d_fmt: Union[str, Format]) -> np.ndarray: ...


def _gemm_device(device: Any) -> GemmDevice:
    if callable(getattr(device, "call", None)) and hasattr(device, "shape"):
        return device  # type: ignore[no-any-return]
    if callable(device) and not hasattr(device, "run"):
        from ..hw.python_device import CallableDevice  # only for a bare function: the core never needs hw

        return CallableDevice(device)
    raise InputError("a scheme grid identifies a GEMM callable: use --device python:MODULE:FUNCTION, or pass "
                     "fn(A, B, C) or smtmma.hw.CallableDevice(fn) (sim:, cuda and hip devices run single "
                     "instructions; a scheme needs whole GEMMs)")


def identify_scheme(device: Any, instr: str, schemes: Sequence[Scheme], *,
                    candidates: Union[None, Space, Sequence[Candidate]] = None, archs: Optional[Sequence[str]] = None,
                    shape: Optional[tuple[int, int, int]] = None, confirm: int = 4, seed: int = 0,
                    progress: Optional[Callable[[str], None]] = None) -> SchemeIdentification:
    """Identify the (model, scheme) of ``device`` among ``candidates`` (default: the catalogue's models of ``instr``,
    optionally only ``archs``) x ``schemes`` (module doc).

    ``device``: a :class:`GemmDevice` (:class:`smtmma.hw.CallableDevice`) or a function ``fn(A, B, C) -> D``.
    ``candidates``: a :class:`~smtmma.discriminators.candidates.Space` or a list of its Candidates (catalogue rows
    run as their instruction; model specs as the space's base architecture's instruction width).
    ``shape``: the probe GEMMs' (M, N, K); default the device's, else :func:`default_shape` of the grid.
    ``progress(line)`` is called after each probe.
    """
    dev = _gemm_device(device)
    schemes = list(schemes)
    if not schemes:
        raise InputError("the scheme grid is empty")
    if not all(isinstance(s, Scheme) for s in schemes):
        raise InputTypeError("schemes must be Scheme objects (parse_grid('promote_every=none,64') makes them)")
    instr = resolve_instr(instr)
    t0 = time.perf_counter()
    space, base = _space(instr, candidates, archs)
    model0 = space[0].model
    if model0.scale_fmt is not None:
        raise InputError(f"{instr} is block-scaled: a callable device takes only (A, B, C)")
    ks = sorted({instruction_k(c.arch, instr, c.op) if c.arch else instruction_k(base, instr) for c in space})
    shape = shape or dev.shape or default_shape(schemes, ks)
    if len(shape) != 3 or not all(isinstance(x, int) and x >= 1 for x in shape):
        raise InputError(f"shape must be (M, N, K), three positive ints, got {shape!r}")
    cands, pairs = _candidates(space, base, instr, schemes, shape[2])
    if not cands:
        raise InputError(f"no candidate: no model of {instr} runs these schemes at K = {shape[2]} (split_k above the "
                         "instructions along K, or promote_every not a multiple of the instruction's k)")
    rng = np.random.default_rng(seed)
    rounding = any(c.scheme.round is not None for c in cands)
    probes = _probes(list(dict.fromkeys(c.model for c in cands)), max(ks), shape, rounding, rng)
    fa, fb, fc, fd = (get_format(getattr(model0, f)) for f in ("a_fmt", "b_fmt", "c_fmt", "d_fmt"))
    fd = carried_in(fd)
    M, N, K = shape
    for j in range(confirm):
        probes.append((f"confirm {j + 1}", round_to(rng.standard_normal((M, K)), fa),
                       round_to(rng.standard_normal((K, N)), fb), round_to(rng.standard_normal((M, N)), fc), True))
    for kind, A, B, C, exact in probes:  # a probe said to hold format values must: else the device gets other inputs
        if exact:
            for name, x, f in (("A", A, fa), ("B", B, fb), ("C", C, fc)):
                to_patterns(x, f, name=f"probe {kind}: {name}")
    alive = list(cands)
    record = []
    outputs: list[np.ndarray] = []

    def compare(c: SchemeCandidate, i: int) -> int:
        """Outputs of probe i where candidate c and the device differ (all of them where c cannot run the probe)."""
        _, A, B, C, _ = probes[i]
        d = outputs[i]
        try:
            target: Union[str, Model] = c.arch if c.arch else c.model
            want = matmul(target, instr, A, B, C, op=c.op, k=None if c.arch else c.k, scheme=c.scheme)
            wrong = int(np.count_nonzero(patterns_of(want, fd).astype(np.uint64) != d))
        except SmtmmaError:  # e.g. an exact-input candidate given inexact values: it cannot explain the device
            wrong = d.size
        c.outputs += d.size
        c.mismatches += wrong
        c.probes_run += 1
        return wrong

    for i, (kind, A, B, C, exact) in enumerate(probes):
        da, db = (natural_dtype(f) if exact else np.dtype(np.float32) for f in (fa, fb))
        outputs.append(dev.call(A.astype(da), B.astype(db), C.astype(natural_dtype(fc)), fd).astype(np.uint64))
        before = len(alive)
        alive = [c for c in alive if compare(c, i) == 0]  # a candidate out runs no more probes (but see below)
        record.append({"probe": kind, "left": len(alive), "dropped": before - len(alive),
                       "seconds": round(time.perf_counter() - t0, 3)})
        if progress is not None:
            progress(f"probe {kind}: {len(alive)} of {len(cands)} candidates left")
    if not alive:  # rank every candidate on every probe: the nearest explain the most outputs
        if progress is not None:
            progress(f"none left: ranking the {len(cands)} candidates on all {len(probes)} probes")
        for c in cands:
            for i in range(c.probes_run, len(probes)):
                compare(c, i)
    nearest = sorted(cands, key=lambda c: c.mismatches)[:5] if not alive else []
    verdict = "identified" if len(alive) == 1 else "none" if not alive else "undecided"
    return SchemeIdentification(verdict, alive, nearest, record, shape, len(cands), pairs, time.perf_counter() - t0)
