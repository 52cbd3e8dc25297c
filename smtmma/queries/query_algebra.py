"""Building blocks of property queries: several copies of a dot product in one formula.

A property compares a model with itself on related inputs (negated,
permuted, larger), so its formula holds two or more runs of the same
model.  :class:`QueryAlgebra` makes those runs share every term they can:

* identical definitions are emitted once (hash-consing on the SMT-LIB2
  text), so two runs on the same inputs give the same term names and a
  solver sees one circuit, not two;
* decoding a pattern is memoized, and decoding a *negated* pattern reuses
  the fields of the original (only the sign differs), so a run on
  ``-A`` multiplies the very same significands as the run on ``A``.

:class:`InputSet` declares one set of dot-product inputs (with a name
suffix, so several sets can live in one formula) and restricts it to a
:class:`~smtmma.queries.formula.Domain`.  :func:`fused_parts` rebuilds the
intermediate sums of a one-FDPA T-FDPA from the same encoding functions
the model uses (:func:`~smtmma.encodings.fused_sum.truncated_sum` and its
pieces); they let a query state lemmas about internal sums.  A lemma is
only ever used after a solver proved it (:class:`LemmaChain`), so the
lemmas speed queries up without being trusted.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Iterable, Optional, Sequence, TypeVar

from ..encodings.algebra import Bool, BoolLike, Int, IntLike
from ..encodings.fields import Unpacked, unpack
from ..encodings.fused_sum import aligned, max_exponent, truncated_sum, wrap_carry
from ..encodings.symbolic import SmtAlgebra
from ..encodings.terms import Term
from ..encodings.gstfdpa import gst_terms
from ..encodings.tfdpa import tfdpa_terms
from ..errors import InputError, SmtmmaError
from ..formats import Format, carried_in, get_format
from ..models import Model
from ..simulate import decode_input, lane_scales, output_format
from ..deadline import remaining
from .backends import SolverResult, solve
from .distinguish import Witness
from .formula import DotFormula
from .session import Session, open_session

__all__ = [
    "QueryAlgebra",
    "InputSet",
    "Runner",
    "FusedParts",
    "fused_parts",
    "supports_fused_parts",
    "same_value",
    "value_key",
    "container_format",
    "declare_output",
    "neg_pattern",
    "output_container",
    "witness_pins",
]

T = TypeVar("T", Int, Bool)  # a term of the algebra


def _lit(value: int, width: int) -> str:
    return f"(_ bv{value % (1 << width)} {width})"


def container_format(fmt: Format) -> Format:
    """The format whose bits carry ``fmt`` (FP32 for E8M13 and TF32, else ``fmt``)."""
    return get_format(fmt.container) if fmt.container else fmt


def neg_pattern(fmt: Format, bits: int) -> int:
    """The pattern of ``-value(bits)`` (concrete): the sign bit flipped; FNUZ zero and NaN stay as they are."""
    if fmt.nan == "neg_zero" and bits & ~fmt.sign_mask == 0:
        return bits
    return bits ^ fmt.sign_mask


class QueryAlgebra(SmtAlgebra):
    """An :class:`SmtAlgebra` that emits each distinct definition once and decodes negated patterns for free."""

    def __init__(self, prefix: str = "t", *, canonical: bool = False) -> None:
        super().__init__(prefix)
        self.canonical = canonical
        self._seen: dict[tuple[str, str], str] = {}
        self._unpacked: dict[tuple[Format, str], Unpacked] = {}
        self._negation_of: dict[str, tuple[Int, Format]] = {}
        self._decoding = False
        self.nary: list[tuple[Int, list[Int]]] = []  # every exact sum and maximum of many operands: (result, operands as given)

    def _define(self, sort: str, expr: str) -> str:
        key = (sort, expr)
        name = self._seen.get(key)
        if name is None:
            name = self._seen[key] = super()._define(sort, expr)
        return name

    # -- canonical n-ary ops ---------------------------------------------------------------
    # With ``canonical``, exact sums, maxima and boolean and/or of many operands are built in a
    # fixed order of their operands (by term name), not in the order given.  The algebra is
    # exact, so the value is the same; but two runs on permuted operands then build the very
    # same terms, and whatever still depends on the order (rounded adds, chunks, groups) is all
    # that is left for a solver to compare.

    def _ordered(self, items: list[T]) -> list[T]:
        """``items`` sorted by term (constants first, by value), or as given without ``canonical``."""
        if not self.canonical:
            return items
        return sorted(items, key=lambda x: (0, int(x.const)) if x.const is not None else (1, str(x.raw)))  # type: ignore[attr-defined]

    def sum_all(self, xs: Iterable[IntLike]) -> Int:
        """Exact sum (canonical operand order when ``canonical``)."""
        given = [self.lift(x) for x in xs]
        out = super().sum_all(self._ordered(given))
        self.nary.append((out, given))
        return out

    def max_all(self, xs: Sequence[IntLike]) -> Int:
        """Maximum (canonical operand order when ``canonical``)."""
        given = [self.lift(x) for x in xs]
        out = super().max_all(self._ordered(given))
        self.nary.append((out, given))
        return out

    def any(self, xs: Iterable[BoolLike]) -> Bool:
        """Disjunction (canonical operand order when ``canonical``)."""
        return super().any(self._ordered([self.blift(x) for x in xs]))

    def all(self, xs: Iterable[BoolLike]) -> Bool:
        """Conjunction (canonical operand order when ``canonical``)."""
        return super().all(self._ordered([self.blift(x) for x in xs]))

    def unpack_cached(self, fmt: Format, bits: Int, unpack_fn: object) -> Optional[Unpacked]:
        """Memoized decoding; a pattern made by :meth:`negate` gets the original's fields with the sign flipped."""
        if self._decoding or bits.const is not None:
            return None
        key = (fmt, str(bits.raw))
        hit = self._unpacked.get(key)
        if hit is not None:
            return hit
        origin = self._negation_of.get(str(bits.raw))
        if origin is not None and origin[1] == fmt:
            u = unpack(self, fmt, origin[0])
            # -x has x's exponent, significand and class; only the sign changes (an FNUZ zero or NaN keeps it)
            neg = self.xor(u.neg, self.not_(u.is_zero)) if fmt.nan == "neg_zero" else self.not_(u.neg)
            hit = Unpacked(neg, u.exp, u.sig, u.frac, u.is_zero, u.is_inf, u.is_nan)
        else:
            self._decoding = True
            try:
                hit = unpack(self, fmt, bits)
            finally:
                self._decoding = False
        self._unpacked[key] = hit
        return hit

    def flip_bits(self, x: Int, bits: int, mask: int) -> Int:
        """``x XOR mask`` for a pattern ``x`` in [0, 2**bits)."""
        assert x.lo >= 0 and x.hi < (1 << bits) and 0 <= mask < (1 << bits), (x, bits, mask)
        if x.const is not None:
            return self.const(x.const ^ mask)
        w = max(x.width, bits + 1)
        raw = self._define(f"(_ BitVec {w})", f"(bvxor {self._ext(x, w)} {_lit(mask, w)})")
        return Int(self, raw, 0, (1 << bits) - 1)

    def negate(self, x: Int, fmt: Format) -> Int:
        """The pattern of ``-value(x)`` in ``fmt``: the sign bit flipped (an FNUZ zero, and its NaN 0x80, stay put)."""
        if not fmt.signed or fmt.sign_ignored:
            raise InputError(f"{fmt.name} values have no sign; they cannot be negated")
        flipped = self.flip_bits(x, fmt.bits, fmt.sign_mask)
        if fmt.nan == "neg_zero":
            flipped = self.ite(self.eq(self.low_bits(x, fmt.bits - 1), 0), x, flipped)
        if flipped.const is None:
            self._negation_of[str(flipped.raw)] = (x, fmt)
        return flipped

    def decoding_lemma(self, negated: Int, fmt: Format) -> Bool:
        """That the shortcut decoding of a pattern made by :meth:`negate` is its true decoding (a Bool to prove).

        The shortcut (the original's fields, sign flipped) is a fact smtmma
        relies on before any solver runs; a certificate proves it instead of
        trusting it: the fields :func:`unpack` computes from the negated bits
        equal the shortcut's.
        """
        short = unpack(self, fmt, negated)  # through the cache: the shortcut
        self._decoding = True
        try:
            true = unpack(self, fmt, negated)  # from the bits themselves
        finally:
            self._decoding = False
        same_bool = [self.not_(self.xor(p, q)) for p, q in ((short.neg, true.neg), (short.is_zero, true.is_zero),
                                                             (short.is_inf, true.is_inf), (short.is_nan, true.is_nan))]
        return self.all([*same_bool, self.eq(short.exp, true.exp), self.eq(short.sig, true.sig)])

    def raw_bool(self, b: Bool) -> str:
        """The SMT-LIB2 text of a Bool term."""
        return self._braw(b)


@dataclass
class InputSet(DotFormula):
    """Declared inputs ``a<k><suffix>``, ``b<k><suffix>``, ``c<suffix>`` (and scales) of one dot product."""

    suffix: str = ""

    def __post_init__(self) -> None:
        if self.K < 1:
            raise InputError("K must be at least 1")
        alg, s = self.alg, self.suffix
        self.a = [alg.var(f"a{k}{s}", self.a_fmt.bits) for k in range(self.K)]
        self.b = [alg.var(f"b{k}{s}", self.b_fmt.bits) for k in range(self.K)]
        self.c = alg.var(f"c{s}", self.c_fmt.bits)
        self.scale_a: Optional[list[Int]] = None
        self.scale_b: Optional[list[Int]] = None
        if self.scale_fmt is not None and self.block:
            n = -(-self.K // self.block)
            self.scale_a = [alg.var(f"sa{j}{s}", self.scale_fmt.bits) for j in range(n)]
            self.scale_b = [alg.var(f"sb{j}{s}", self.scale_fmt.bits) for j in range(n)]
        self.outputs: list[tuple[str, int]] = []

    @classmethod
    def of(cls, alg: SmtAlgebra, model: Model, K: int, suffix: str = "") -> "InputSet":
        """Inputs shaped for ``model`` (its A/B/C formats and block scales) in ``alg``."""
        sf = get_format(model.scale_fmt) if model.scale_fmt else None
        return cls(get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt), K, sf, model.block, alg, suffix)

    @property
    def declared(self) -> list[str]:
        """Names of the declared constants, in the order a.., b.., c, sa.., sb.."""
        return [f"{n}{self.suffix}" for n in self.input_names]

    def terms(self) -> dict[str, Int]:
        """Input name (without suffix) -> pattern term."""
        return dict(zip(self.input_names, self.a + self.b + [self.c] + (self.scale_a or []) + (self.scale_b or [])))

    def pins(self, w: Witness) -> dict[str, tuple[int, int]]:
        """The declared constants set to the inputs of ``w``: name -> (value, width in bits) (for a pinned certificate block)."""
        vals: list[int] = [*w.a, *w.b, w.c, *(w.scale_a or ()), *(w.scale_b or ())]
        widths = [self.a_fmt.bits] * self.K + [self.b_fmt.bits] * self.K + [self.c_fmt.bits]
        if self.scale_fmt is not None and w.scale_a is not None:
            widths += [self.scale_fmt.bits] * (len(w.scale_a) + len(w.scale_b or ()))
        return {n: (v, b) for n, v, b in zip(self.declared, vals, widths)}

    def witness(self, values: dict[str, int]) -> Witness:
        """The inputs of a solver's model as a :class:`Witness`."""
        s = self.suffix
        sa = sb = None
        if self.scale_a is not None:
            n = len(self.scale_a)
            sa = tuple(values[f"sa{j}{s}"] for j in range(n))
            sb = tuple(values[f"sb{j}{s}"] for j in range(n))
        return Witness(
            tuple(values[f"a{k}{s}"] for k in range(self.K)), tuple(values[f"b{k}{s}"] for k in range(self.K)), values[f"c{s}"], sa, sb
        )


def witness_pins(model: Model, w: Witness, suffix: str = "") -> dict[str, tuple[int, int]]:
    """The declared input constants of a query (``a0``, ``b0``, ``c``, ``sa0`` ...) -> (value, width in bits)."""
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    pins: dict[str, tuple[int, int]] = {}
    for k, x in enumerate(w.a):
        pins[f"a{k}{suffix}"] = (x, fa.bits)
    for k, y in enumerate(w.b):
        pins[f"b{k}{suffix}"] = (y, fb.bits)
    pins[f"c{suffix}"] = (w.c, fc.bits)
    if w.scale_a is not None and w.scale_b is not None and model.scale_fmt:
        fs = get_format(model.scale_fmt)
        for j, (u, v) in enumerate(zip(w.scale_a, w.scale_b)):
            pins[f"sa{j}{suffix}"] = (u, fs.bits)
            pins[f"sb{j}{suffix}"] = (v, fs.bits)
    return pins


def declare_output(alg: SmtAlgebra, name: str, d: Int, bits: int) -> str:
    """Declare constant ``name`` equal to the output pattern ``d`` (so a sat answer reports it)."""
    alg.decls.append(f"(declare-const {name} (_ BitVec {bits}))")
    alg.asserts.append(f"(assert (= {name} {alg.bits_of(d, bits)}))")
    return name


def same_value(alg: SmtAlgebra, fmt: Format, x: Int, y: Int) -> Bool:
    """x and y denote the same value: equal bits, or both zeros (+0 = -0), or both NaN (any payload)."""
    ux, uy = unpack(alg, fmt, x), unpack(alg, fmt, y)
    return alg.any([alg.eq(x, y), alg.and_(ux.is_zero, uy.is_zero), alg.and_(ux.is_nan, uy.is_nan)])


def value_key(alg: SmtAlgebra, fmt: Format, x: Int) -> Int:
    """An integer ordered as the values of non-NaN patterns of ``fmt`` (-mag for negative, mag else; both zeros 0)."""
    mag = alg.low_bits(x, fmt.bits - 1) if fmt.signed else x
    if not fmt.signed or fmt.sign_ignored:
        return mag
    return alg.ite(alg.eq(alg.shr(x, fmt.bits - 1), 1), alg.neg(mag), mag)


@dataclass
class Runner:
    """Runs solver calls for one property: accumulates time, never raises on a solver failure."""

    solver: Optional[str]
    timeout: float
    seed: int
    calls: int = 0
    solver_seconds: float = 0.0
    used: str = ""
    t0: float = field(default_factory=time.perf_counter)

    def check(self, script: str, want: Sequence[str] = (), *, timeout: Optional[float] = None,
              proof: bool = False) -> SolverResult:
        """The solver's answer on ``script`` (``timeout``: this call's own limit, at most the runner's; ``proof``:
        a lemma, unsat expected, see :func:`~smtmma.queries.backends.solve`).

        A crash of the backend is an ``unknown`` with its message.
        """
        limit = self.timeout if timeout is None else min(timeout, self.timeout)
        try:
            r = solve(script, list(want), solver=self.solver, timeout=limit, seed=self.seed, proof=proof)
        except SmtmmaError:
            raise  # a user error (unknown or missing solver): report it, do not hide it
        except Exception as e:  # a backend failure (out of memory, crash) is an answer of its own: unknown
            r = SolverResult("unknown", self.solver or "default", 0.0, reason=f"{type(e).__name__}: {e}")
        self.calls += 1
        self.solver_seconds += r.seconds
        if r.solver:
            self.used = r.solver
        return r

    def session(self) -> Optional[Session]:
        """An incremental session of this runner's solver (:mod:`smtmma.queries.session`), None where it has none."""
        return open_session(self.solver, self.seed)

    def check_scoped(self, session: Session, lines: Sequence[str], budget: Optional[float] = None) -> SolverResult:
        """The answer on what ``session`` holds plus ``lines`` (a scope of their own), under this runner's limit,
        ``budget`` (seconds) and what is left of the command's (:func:`~smtmma.deadline.remaining`)."""
        limit = self.timeout
        for cap in (remaining(), budget):
            if cap is not None:
                limit = min(limit, cap) if limit else cap
        r = session.check(list(lines), limit or 600.0)
        self.calls += 1
        self.solver_seconds += r.seconds
        self.used = r.solver
        return r

    @property
    def seconds(self) -> float:
        """Wall time since the runner started (building formulas, solving, replaying)."""
        return time.perf_counter() - self.t0

    @property
    def name(self) -> str:
        """The backend that answered last (or the one asked for)."""
        return self.used or (self.solver or "default")


# -- the internal sums of a one-FDPA T-FDPA / ST-FDPA ------------------------------------------


def supports_fused_parts(model: Model, K: int) -> bool:
    """Whether :func:`fused_parts` rebuilds the model's sums: one T-/ST-/GST-FDPA (K <= L), C inside the sum."""
    return model.kind in ("t-fdpa", "st-fdpa", "gst-fdpa") and model.L is not None and K <= model.L and not model.c_after


@dataclass
class FusedParts:
    """Intermediate terms of Alg. 7 step 2 for one FDPA: summands aligned at e_max and their running sums (units 2**(e_max-F))."""

    terms: list[Term]
    e_max: Int
    aligned: list[Int]
    prefix: list[Int]  # prefix[j] = aligned[0] + ... + aligned[j], summed in the model's order
    total: Int  # the exact sum of the aligned summands (unbounded register)
    dots: list[Int] = field(default_factory=list)  # GST-FDPA: each group's exact dot product (Alg. 9 line 3)

    def wrapped(self, alg: SmtAlgebra, F: int, carry_bits: Optional[int]) -> Int:
        """The sum held in a register of 2 + carry_bits integer bits."""
        return wrap_carry(alg, self.total, F, carry_bits)


def fused_parts(
    alg: SmtAlgebra,
    model: Model,
    a: Sequence[Int],
    b: Sequence[Int],
    c: Int,
    scale_a: Optional[Sequence[Int]] = None,
    scale_b: Optional[Sequence[Int]] = None,
) -> FusedParts:
    """The summands, e_max and sums of the model's fused sum, built with the model's own encoding functions.

    Mirrors what :func:`~smtmma.encodings.tfdpa.tfdpa` feeds
    :func:`~smtmma.encodings.fused_sum.truncated_sum` (products, scaled
    for ST-FDPA, then c), so in a :class:`QueryAlgebra` the terms are the
    model's own terms.  Only for :func:`supports_fused_parts` models.
    """
    assert supports_fused_parts(model, len(a)), model
    assert model.F is not None
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    lanes_sa, lanes_sb = lane_scales(alg, model, scale_a, scale_b, len(a))
    dec_a, dec_b = [decode_input(alg, fa, x, model.via) for x in a], [decode_input(alg, fb, y, model.via) for y in b]
    fd = output_format(model)
    dec_c = decode_input(alg, fc, c, carried_in(fd).name)  # C widened exactly to D's format, as run_model reads it
    dots: list[Int] = []
    if model.kind == "gst-fdpa":  # Alg. 9 lines 1-8: one scaled summand per group
        assert model.G is not None
        terms, _, dots = gst_terms(alg, dec_a, dec_b, dec_c, lanes_sa, lanes_sb, model.G)
    else:  # the op's own summands (Alg. 7 step 1), inputs decoded as the model reads them
        terms, _ = tfdpa_terms(alg, dec_a, dec_b, dec_c, lanes_sa, lanes_sb)
    total, e_max = truncated_sum(alg, terms, model.F, None, model.emax_floor)
    # the same summands and running sums truncated_sum adds up (identical definitions, so the same terms)
    e_ref = max_exponent(alg, terms)
    if model.emax_floor is not None:
        e_ref = alg.max(e_ref, model.emax_floor)
    xs = [aligned(alg, t, e_ref, model.F) for t in terms]
    return FusedParts(terms, e_max, xs, alg.running_sums(xs), total, dots)


def output_container(model: Model) -> Format:
    """Format of the model's D bits (FP32 for E8M13 results)."""
    return container_format(output_format(model))
