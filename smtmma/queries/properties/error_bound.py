"""Error bounds: |Phi - exact| against Table 9 of MMA-Sim, with bisection for the tightest scale."""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Callable, NamedTuple, Optional, Union

from ...encodings.algebra import Bool, Int
from ...encodings.fields import Unpacked, unpack
from ...encodings.symbolic import SmtAlgebra
from ...encodings.fused_sum import max_exponent, signed
from ...encodings.terms import Term, input_term
from ...encodings.gstfdpa import gst_terms
from ...encodings.tfdpa import scaled_product
from ...errors import InputError
from ...formats import Format, carried_in, decode_scalar, floor_log2, get_format, to_fraction
from ...models import Model
from ...simulate import decode_input, lane_scale_index, lane_scales, run_model
from ..query_algebra import (
    InputSet,
    QueryAlgebra,
    Runner,
    declare_output,
    fused_parts,
    output_container,
    supports_fused_parts,
    witness_pins,
)
from ...op_proofs import efdpa, fma, gstfdpa, gtrfdpa, tfdpa, trfdpa
from ...proof_kernel.chain import LemmaChain
from ...proof_kernel.parts import PartsProof
from ..distinguish import ReplayError, Witness
from ..formula import Domain
from .common import (
    QueryResult,
    QUICK_TIMEOUT,
    check_nonempty,
    expect_same,
    hex_witness,
    py_value,
    replay_one,
    make_result,
    setup_query,
    unknown_result,
)

__all__ = ["ERROR_FACTS", "ERROR_PLACES", "ERROR_PROVERS", "ErrorFacts", "ErrorFormula", "ErrorProver", "OutputView", "error_bound", "error_facts", "error_prover",
           "posed_form", "posed_without_prover", "table9_bound", "uncovered"]


class OutputView(NamedTuple):
    """An output as the error query reads it: finite, outside the exponent range assumed, its value and its ulp
    (both in units of 2**R)."""

    finite: Bool
    outside: Bool
    value: Int
    ulp: Int


class ErrorProver(NamedTuple):
    """A compositional proof of Table 9's bound for one op: whether it covers a model with K lanes, and the proof
    (``prove(model, K, run, scale=, fused=, ulps=)``: |Phi - exact| <= scale * (fused 2**(e_max-F) + ulps ulp))."""

    supports: Callable[[Model, int], bool]
    prove: Callable[..., PartsProof]


#: the compositional error-bound proofs of each kind, tried in order (the first that supports the model runs)
ERROR_PROVERS: dict[str, tuple[ErrorProver, ...]] = {
    "t-fdpa": (ErrorProver(tfdpa.supports_error_bound, tfdpa.prove_error_bound),),
    "st-fdpa": (ErrorProver(tfdpa.supports_error_bound, tfdpa.prove_error_bound),),  # T-FDPA on scaled products
    "gst-fdpa": (ErrorProver(gstfdpa.supports_error_bound, gstfdpa.prove_error_bound),),
    "tr-fdpa": (ErrorProver(trfdpa.supports_error_bound, trfdpa.prove_error_bound),),
    "gtr-fdpa": (ErrorProver(gtrfdpa.supports_error_bound, gtrfdpa.prove_error_bound),),
}


class ErrorFacts(NamedTuple):
    """Facts an op proves in the error query's own formula (``facts(chain, formula) -> bool``), so that its final
    check rests on them and on lemmas applied to the model's terms: whether they cover a model with K lanes, and
    whether the formula counts in relative units 2**(e_max - F - G) (:class:`ErrorFormula`)."""

    supports: Callable[[Model, int], bool]
    facts: Callable[[LemmaChain, "ErrorFormula"], bool]
    relative: bool = False


#: the ops whose error query counts in units of the model's own last place: ``place(alg, model, x)`` gives that
#: place's exponent (an Int) and the window's width in bits (:meth:`ErrorFormula.place_units`)
ERROR_PLACES: dict[str, Callable[[QueryAlgebra, Model, InputSet], tuple[Int, int]]] = {
    "fma": fma.sum_place,
}

#: the ops whose error proof is a chain of facts on the model's own terms (tried before :data:`ERROR_PROVERS`)
ERROR_FACTS: dict[str, ErrorFacts] = {
    "e-fdpa": ErrorFacts(efdpa.supports_error_facts, efdpa.error_facts),
    "fma": ErrorFacts(fma.supports_error_facts, fma.error_facts),  # in units of its window's last place (ERROR_PLACES)
    "t-fdpa": ErrorFacts(tfdpa.supports_error_facts, tfdpa.error_facts, relative=True),
    "st-fdpa": ErrorFacts(tfdpa.supports_error_facts, tfdpa.error_facts, relative=True),  # T-FDPA on scaled products
    "tr-fdpa": ErrorFacts(trfdpa.supports_error_facts, trfdpa.error_facts, relative=True),
    "gst-fdpa": ErrorFacts(gstfdpa.supports_error_facts, gstfdpa.error_facts, relative=True),  # T-FDPA on the group summands
    "gtr-fdpa": ErrorFacts(gtrfdpa.supports_error_facts, gtrfdpa.error_facts, relative=True),  # TR-FDPA's, per group
}


def error_facts(model: Model, K: int) -> Optional[ErrorFacts]:
    """The chain of facts that covers ``model`` with K lanes (:data:`ERROR_FACTS`), None if none."""
    op = ERROR_FACTS.get(model.kind)
    return op if op is not None and op.supports(model, K) else None


def error_prover(model: Model, K: int) -> Optional[Callable[..., PartsProof]]:
    """The compositional error-bound proof that covers ``model`` with K lanes (:data:`ERROR_PROVERS`), None if none."""
    return next((p.prove for p in ERROR_PROVERS.get(model.kind, ()) if p.supports(model, K)), None)


@dataclass(frozen=True)
class Table9Bound:
    """|Phi - exact| <= scale * (fused * 2**(e_max - F) + ulps * ulp(Phi)); with ``above``, a one-sided interval:
    exact - Phi in [-scale * (above * 2**(e_max - F) + ulps ulp), scale * (fused * 2**(e_max - F) + ulps ulp)]."""

    fused: Fraction
    ulps: Fraction
    F: int
    rfmt: Format  # format rounded to (its ulp)
    above: Optional[Fraction] = None  # the fused coefficient where Phi is above the exact value (None: ``fused``)

    def side(self, phi_above: bool) -> Fraction:
        """The fused coefficient on one side: Phi above the exact value, or not."""
        return self.above if phi_above and self.above is not None else self.fused

    def _sum(self, fused: Fraction) -> str:
        parts = []
        if fused:
            parts.append(f"{fused}*2^(e_max-{self.F})")
        if self.ulps:
            parts.append(f"{self.ulps} ulp({self.rfmt.name})")
        return " + ".join(parts) or "0"

    def describe(self, scale: Fraction) -> str:
        text = self._sum(self.fused)
        if self.above is not None:  # a one-sided interval of exact - Phi
            lo = self._sum(self.above)
            return (f"exact - Phi in [-({lo}), {text}]" if scale == 1
                    else f"exact - Phi in [-{scale} * ({lo}), {scale} * ({text})]")
        return text if scale == 1 else f"{scale} * ({text})"

    def statement(self, scale: Fraction) -> str:
        """The bound as a claim: "|Phi - exact| <= ..." or the one-sided interval."""
        return self.describe(scale) if self.above is not None else f"|Phi - exact| <= {self.describe(scale)}"

    def exceeded(self, ratio: Fraction, scale: Fraction) -> str:
        """Why a witness breaks ``scale`` times the bound (``ratio``: its error over the bound, its side's)."""
        if self.above is not None:
            return f"the error is {float(ratio):.6g} times its side's bound, beyond {scale}: not {self.describe(scale)}"
        return f"|Phi - exact| = {float(ratio):.6g} * ({self.describe(Fraction(1))}) exceeds {self.describe(scale)}"

    def symbols(self, model: Model) -> str:
        """What the symbols of :meth:`describe` stand for, once (the ``where:`` line, ``"symbols"`` in JSON)."""
        out = []
        if self.fused:
            out.append(_e_max_text(model, self.F))
        if self.ulps:
            f = self.rfmt
            out.append(f"ulp({f.name}) = the unit in the last place of D in {f.name} at D's exponent e_D: "
                       f"2^(max(e_D, {f.emin}) - {f.man_bits}) (2^{f.emin - f.man_bits} for D = 0)")
        return "; ".join(out)


def _e_max_text(model: Model, F: int) -> str:
    """What e_max and the unit 2^(e_max-F) of a bound's fused term stand for, for ``model``'s kind."""
    if model.kind == "ftz-addmul":  # no fused sum: e_max only scales the posed bound
        return ("e_max = the largest unbiased exponent among the non-zero products a_k*b_k (e_a + e_b; a subnormal "
                f"input's exponent is its format's emin) and c; 2^(e_max-{F}) = one unit of the {F} fraction bits every "
                "FTZ-Add and FTZ-Mul keeps")
    if model.kind == "gst-fdpa":  # Alg. 9 line 5: a group summand sits at its scales' exponent
        summands = "the non-zero group summands (e_sa + e_sb, the group's two scales) and c"
    elif model.kind == "st-fdpa":  # Alg. 8 line 4: the scales' exponents join each product's
        summands = "the non-zero scaled products a_k*b_k*s_a*s_b (e_a + e_b + e_sa + e_sb) and c"
    else:
        summands = "the non-zero products a_k*b_k (e_a + e_b) and c"
    floor = f", at least {model.emax_floor} (the model's alignment floor)" if model.emax_floor is not None else ""
    return (f"e_max = the largest unbiased exponent among {summands}, the exponent the fused sum is aligned at{floor}; "
            f"2^(e_max-{F}) = one unit of the F={F} fraction bits kept below it")


def _missing_error_parts(model: Model) -> str:
    """What the error-bound proof lacks for ``model`` (the op whose error parts are not written), or ""."""
    if model.kind == "ftz-addmul":
        return "the error parts of FTZ-AddMul's pairwise roundings (Alg. 1-2) are missing"
    if model.scale_fmt is not None and model.kind not in ("st-fdpa", "gst-fdpa"):
        return f"the error parts of {model.kind.upper()}'s block-scaled summands (Alg. 8) are missing"
    if model.c_after:
        return "the error parts of adding C after the rounded fused sum (a second rounding) are missing"
    if model.via:
        return f"the error parts of converting the inputs to {model.via} first are missing"
    return ""


def posed_without_prover(model: Model) -> str:
    """Why no proof covers ``model`` although its bound is posed ("" when one does): T-FDPAs chained with C added
    last, or on inputs converted first, get one FDPA's Table 9 bound, and FTZ-AddMul (no Table 9 row) a bound of
    the same form at its steps' precision, which a witness can refute but nothing proves."""
    missing = _missing_error_parts(model)
    chained = model.kind == "t-fdpa" and model.scale_fmt is None and (model.c_after or model.via)
    return missing if missing and (chained or model.kind == "ftz-addmul") else ""


def posed_form(model: Model) -> str:
    """What a bound posed without a prover is (``extra["posed"]``): whose form, at which precision."""
    if model.kind == "ftz-addmul":
        fd = get_format(model.d_fmt)
        return (f"Table 9 has no FTZ-AddMul row: one FDPA's form, F = {fd.man_bits} ({fd.name}'s fraction bits, the "
                "precision of every FTZ-Add and FTZ-Mul), posed")
    return "one FDPA's Table 9 bound, posed for the whole chain"


def uncovered(model: Model) -> str:
    """Why no Table 9 bound is implemented for ``model`` ("" when one is): the op whose error parts are missing."""
    missing = _missing_error_parts(model)
    if missing and not posed_without_prover(model):
        return f"no Table 9 bound is implemented for {model.describe()}: {missing}"
    return ""


def table9_bound(model: Model, K: int) -> Table9Bound:
    """MMA-Sim Table 9's error bound for ``model`` at length ``K`` (a chain of T-FDPAs: one FDPA's); InputError where
    no bound is implemented (:func:`uncovered`)."""
    kind = model.kind
    why = uncovered(model)
    if why:
        raise InputError(f"error-bound: {why} "
                         "(supported: one T-FDPA, ST-FDPA, GST-FDPA, TR-FDPA, GTR-FDPA or E-FDPA with K <= L, or a single FMA)")
    if kind == "fma":
        if K != 1:
            raise InputError(f"error-bound: an FMA chain of K={K} rounds K times; Table 9's bound is for one FMA (K=1)")
        return Table9Bound(Fraction(0), Fraction(1, 2), 0, get_format(model.d_fmt))
    if kind == "ftz-addmul":  # posed (posed_form): the summands' count, each op's RNE at D's precision
        fd = get_format(model.d_fmt)
        return Table9Bound(Fraction(K + 1), Fraction(1, 2), fd.man_bits, fd)
    assert model.L is not None
    if K > model.L:
        raise InputError(f"error-bound: Table 9 bounds one FDPA; K must be at most L={model.L}, got {K}")
    if kind == "e-fdpa":
        return Table9Bound(Fraction(0), Fraction(1, 2), 0, get_format(model.d_fmt))
    assert model.F is not None
    conv = model.conversion
    ulps = Fraction(1) if conv.mode in ("rz", "rd", "ru") else Fraction(1, 2)
    return Table9Bound(Fraction(K + 1), ulps, model.F, get_format(conv.fmt))


def _alignment_exponent(alg: QueryAlgebra, model: Model, x: InputSet, terms: list[Term]) -> Int:
    """e_max of Table 9: the exponent the fused sum aligns at (T-FDPA: the model's own, floor included)."""
    if supports_fused_parts(model, x.K):
        return fused_parts(alg, model, x.a, x.b, x.c, x.scale_a, x.scale_b).e_max
    return max_exponent(alg, terms)  # TR-/GTR-FDPA: E = max over the non-zero products and c (Alg. 10 step 3)


def _c_widened(model: Model, K: int) -> bool:
    """Whether the model's fused sum reads C widened to another format (an FP16 subnormal C is then normal, with a
    lower exponent: Table 9's e_max is that exponent)."""
    return supports_fused_parts(model, K) and carried_in(model.d_fmt).name != model.c_fmt


def _py_group_exponents(model: Model, w: Witness) -> list[int]:
    """GST-FDPA: the exponents of the non-zero group summands (the scales' exponents, Alg. 9 line 5)."""
    assert model.G is not None and model.scale_fmt is not None and w.scale_a is not None and w.scale_b is not None
    fa, fb, fs, block = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.scale_fmt), model.block
    out = []
    for g0 in range(0, len(w.a), model.G):
        dot = sum(_py_finite(fa, x) * _py_finite(fb, y) for x, y in zip(w.a[g0:g0 + model.G], w.b[g0:g0 + model.G]))
        j = lane_scale_index(g0, block, len(w.scale_a))
        if dot * _py_finite(fs, w.scale_a[j]) * _py_finite(fs, w.scale_b[j]):  # a zero summand sets no exponent
            out.append(decode_scalar(fs, w.scale_a[j])[1] + decode_scalar(fs, w.scale_b[j])[1])
    return out


def _py_finite(fmt: Format, bits: int) -> Fraction:
    v = to_fraction(fmt, bits)
    assert isinstance(v, Fraction), "finite inputs"
    return v


def _py_alignment_exponent(model: Model, w: Witness) -> Optional[int]:
    exps = []
    if model.kind == "gst-fdpa":
        exps = _py_group_exponents(model, w)
        w = replace(w, a=(), b=())  # only c is left to add
    scales = _py_scale_exponents(model, w)
    for k, (u, v) in enumerate(zip(w.a, w.b)):
        su, eu, mu = decode_scalar(get_format(model.a_fmt), u)
        sv, ev, mv = decode_scalar(get_format(model.b_fmt), v)
        if mu and mv:
            exps.append(eu + ev + scales[k])
    fc = get_format(model.c_fmt)
    sc, ec, mc = decode_scalar(fc, w.c)
    if mc and _c_widened(model, len(w.a) or 1):  # a fused sum reads C widened to D's format: a subnormal C is normal
        ec = floor_log2(_py_finite(fc, w.c))
    if mc:
        exps.append(ec)
    e = max(exps) if exps else None
    if model.kind in ("t-fdpa", "st-fdpa") and model.emax_floor is not None:
        e = model.emax_floor if e is None else max(e, model.emax_floor)
    return e


def _py_scale(model: Model, w: Witness, k: int) -> Fraction:
    """The factor lane k's block scales multiply its product by (1 without scales): the scales' values."""
    if model.scale_fmt is None or w.scale_a is None or w.scale_b is None:
        return Fraction(1)
    fs, block = get_format(model.scale_fmt), model.block
    j = lane_scale_index(k, block, len(w.scale_a))
    return _py_finite(fs, w.scale_a[j]) * _py_finite(fs, w.scale_b[j])


def _py_scale_exponents(model: Model, w: Witness) -> list[int]:
    """Per lane, the exponent its block scales add to its product (Alg. 8 line 4; 0 without scales)."""
    if model.scale_fmt is None or w.scale_a is None or w.scale_b is None:
        return [0] * len(w.a)
    fs, block = get_format(model.scale_fmt), model.block
    ea = [decode_scalar(fs, x)[1] for x in w.scale_a]
    eb = [decode_scalar(fs, x)[1] for x in w.scale_b]
    return [ea[lane_scale_index(k, block, len(ea))] + eb[lane_scale_index(k, block, len(eb))] for k in range(len(w.a))]


def _range(u_exp: Int, rng: Optional[tuple[int, int]]) -> tuple[int, int]:
    """The exponents a domain allows for a non-zero value (within the format's), never empty."""
    lo, hi = u_exp.lo, u_exp.hi
    if rng is not None:
        lo, hi = max(lo, rng[0]), min(hi, rng[1])
    return lo, max(lo, hi)


def _lane_scales(alg: QueryAlgebra, model: Model, x: InputSet) -> tuple[list, list]:
    """Each lane's decoded block scales (lane k reads scale k // block); Nones when the model has no scales."""
    sa, sb = lane_scales(alg, model, x.scale_a, x.scale_b, x.K)
    return sa or [None] * x.K, sb or [None] * x.K


def _scale_range(sa: Optional[Any], sb: Optional[Any]) -> tuple[int, int]:
    """The exponent range two scales add to a product (0, 0 without scales)."""
    if sa is None or sb is None:
        return 0, 0
    return sa.exp.lo + sb.exp.lo, sa.exp.hi + sb.exp.hi


class ErrorFormula:
    """``|Phi - exact| > scale * bound`` as integers in units of 2**R.

    ``narrow``: exponents are clamped to the ranges the domain allows
    (exact: the domain asserts them for non-zero values), and the output's
    exponent to the range a non-zero result of these inputs can have; an
    output outside it counts as a violation, so a proof stays sound and a
    witness of that kind is re-asked without the narrowing.  Narrow units
    keep the integers about as wide as the domain's exponent span instead
    of the formats' (FP32 subnormals: 2**-149).

    ``relative`` (narrow fused bounds only): count in units 2**(e_max - F - G)
    instead, G (:attr:`G`) the constant that puts every summand's last place
    of the domain at or above the unit; the fused unit is then the constant
    2**G, and an output that is not a whole number of units, or beyond 4n
    times the largest summand (a GST-FDPA group's dot reaches
    :attr:`reach` bits further above its exponent than a product), counts as
    a violation (the same sound narrowing).  What the T-FDPA chain (:func:`~smtmma.op_proofs.tfdpa.error_facts`)
    proves.
    """

    def __init__(self, model: Model, K: int, domain: Domain, bound: Table9Bound, *, narrow: bool,
                 relative: bool = False) -> None:
        self.narrow = narrow
        alg = self.alg = QueryAlgebra()
        x = self.x = InputSet.of(alg, model, K)
        x.restrict(domain)
        out = output_container(model)
        fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
        ua = [unpack(alg, fa, v) for v in x.a]
        ub = [unpack(alg, fb, v) for v in x.b]
        widened = _c_widened(model, K)
        uc = decode_input(alg, fc, x.c, carried_in(model.d_fmt).name) if widened else unpack(alg, fc, x.c)
        sa, sb = _lane_scales(alg, model, x)  # ST-FDPA: each lane's block scales join its product (Alg. 8 line 4)
        if model.kind == "gst-fdpa":  # the group summands: exact dots times the scales (Alg. 9 lines 3-5)
            assert model.G is not None
            terms = gst_terms(alg, ua, ub, uc, sa, sb, model.G)[0]
        else:
            terms = [scaled_product(alg, u, v, sa[k], sb[k])[0] for k, (u, v) in enumerate(zip(ua, ub))] + [input_term(uc)]
        if model.kind == "gst-fdpa":  # a group summand's value reaches above its exponent (by its significand's top bits)
            ranges = [(t.exp.lo, t.exp.hi + max(0, t.sig.hi.bit_length() - 1 - t.frac)) for t in terms]
        elif narrow:
            ranges = [tuple(map(sum, zip(_range(u.exp, domain.exp), _range(v.exp, domain.exp), _scale_range(sa[k], sb[k]))))
                      for k, (u, v) in enumerate(zip(ua, ub))]
            c_range = (uc.exp.lo, domain.cexp[1]) if widened and domain.cexp else domain.cexp  # cexp: C's own field's
            ranges.append(_range(uc.exp, c_range))
        else:
            ranges = [(t.exp.lo, t.exp.hi) for t in terms]
        d = run_model(alg, model, x.a, x.b, x.c, x.scale_a, x.scale_b)
        declare_output(alg, "d", d, out.bits)
        ud = unpack(alg, out, d)
        lo_e, hi_e = min(r[0] for r in ranges), max(r[1] for r in ranges)
        if model.kind in ("t-fdpa", "st-fdpa") and model.emax_floor is not None:
            lo_e, hi_e = max(lo_e, model.emax_floor), max(hi_e, model.emax_floor)
        lsb_lo = min(r[0] - t.frac for r, t in zip(ranges, terms))
        quanta = [lsb_lo] + [lo_e - f for f in (bound.F, model.F2) if f is not None and bound.fused]  # bound.F: model.F, or a posed form's
        m_r, emin_r = bound.rfmt.man_bits, bound.rfmt.emin
        if narrow:  # a non-zero result is a multiple of its smallest quantum and below 4n times the largest summand
            e_lo, e_hi = max(min(quanta), ud.exp.lo), min(hi_e + (4 * len(terms)).bit_length() + 1, ud.exp.hi)
            e_hi = max(e_lo, e_hi)
        else:
            e_lo, e_hi = ud.exp.lo, ud.exp.hi
        R = min(quanta + [max(e_lo, emin_r) - m_r - 1])
        self.R, self.e_lo, self.e_hi, self.out, self.bound = R, e_lo, e_hi, out, bound
        self.terms, self.d = terms, d
        exps = [alg.clamp(t.exp, lo, hi) for t, (lo, hi) in zip(terms, ranges)]
        if bound.fused:
            self.e_max = alg.clamp(_alignment_exponent(alg, model, x, terms), lo_e, hi_e)
        self.relative = relative and bound.fused and narrow
        place = ERROR_PLACES.get(model.kind) if narrow and not bound.fused else None
        self.exact_hi: Optional[Int] = None  # units of the model's own last place: the exact value's interval's top
        if place is not None:  # one rounding of a window sum: count in units of its last place (:meth:`place_units`)
            self.place_units(alg, ud, terms, *place(alg, model, x))
        elif self.relative:  # units 2**(e_max - F - G): the fused unit is the constant 2**G, each summand's last place above 1
            self.G = hi_e - bound.F - lsb_lo
            #: bits a summand's value reaches above 2**(exponent + 2): 0 for products, more for a GST-FDPA group's dot
            self.reach = max(0, max(t.sig.hi.bit_length() - 2 - t.frac for t in terms))
            unit_exp = alg.sub(self.e_max, bound.F + self.G)
            placed = [self.placed(alg, t.neg, t.sig, alg.sub(e, t.frac), unit_exp) for t, e in zip(terms, exps)]
            self.exact_terms = [v for v, _ in placed]
            self.summand_outside = [o for _, o in placed]
            self.d_view = self.relative_view(alg, ud, unit_exp, len(terms))
            self.view = self.d_view._replace(outside=alg.any([self.d_view.outside, *self.summand_outside]))
            self.unit_fused = alg.const(1 << self.G)
        else:
            self.exact_terms = [self.fixed(alg, t.neg, t.sig, e, t.frac) for t, e in zip(terms, exps)]
            self.view = self.output_view(alg, ud)
            self.unit_fused = alg.shl(1, alg.sub(self.e_max, bound.F + R)) if bound.fused else alg.const(0)
        self.exact = alg.sum_all(self.exact_terms)
        if self.exact_hi is None:
            self.exact_hi = self.exact
        self.d_value, self.unit_ulp = self.view.value, self.view.ulp
        self.err = alg.abs(alg.sub(self.d_value, self.exact))
        self.finite, self.outside = self.view.finite, self.view.outside
        # what :meth:`script` asks about: the domain's inputs, and of them only those whose output is finite
        self.scope = f"every input of the domain ({domain.describe()}) whose D is finite"
        self.model, self.lemma_count = model, 0
        #: called with the scale before each script (an op's facts that depend on it: a lemma per scale)
        self.before_script: list[Callable[[Fraction], None]] = []

    def prove_lemmas(self, run: Runner) -> LemmaChain:
        """Facts that leave the final query little to do: an op's own (:data:`ERROR_FACTS`), or for one T-FDPA the
        error of each step, so the final query only adds them up.

        Each summand loses less than one unit 2**(e_max - F) when aligned;
        the running sums of the aligned summands stay within (j+1) units of
        the exact running sums; the output is within the natural rounding
        error (1 ulp RZ, 1/2 ulp RNE) of the fixed-point sum.  Every lemma
        is proved by the solver before it is asserted.
        """
        alg, model, x = self.alg, self.model, self.x
        chain = LemmaChain(alg, run)
        op = error_facts(model, x.K)
        if op is not None and op.relative == self.relative:
            op.facts(chain, self)
            self.lemma_count = len(chain.proven)
            return chain
        if not (self.bound.fused and supports_fused_parts(model, x.K)) or model.F is None:
            return chain
        p = fused_parts(alg, model, x.a, x.b, x.c, x.scale_a, x.scale_b)
        sh = alg.sub(self.e_max, model.F + self.R)
        unit = self.unit_fused
        shifted = [alg.shl(v, sh) for v in p.aligned]
        X = self.exact_terms
        for k in range(len(X)):
            chain.prove(f"aligning summand {k} loses less than 2^(e_max-F)", alg.lt(alg.abs(alg.sub(shifted[k], X[k])), unit))
        exact_run = X[0]
        for j in range(1, len(X)):
            exact_run = alg.add(exact_run, X[j])
            chain.prove(f"running sum {j} in units of 2^R", alg.eq(alg.shl(p.prefix[j], sh), alg.add(alg.shl(p.prefix[j - 1], sh), shifted[j])))
            chain.prove(f"running sum {j} is within {j + 1} units of the exact one",
                        alg.lt(alg.abs(alg.sub(alg.shl(p.prefix[j], sh), exact_run)), alg.mul(unit, j + 1)))
        total = p.wrapped(alg, model.F, model.carry_bits)
        if model.carry_bits is not None:
            chain.prove("the register keeps every carry", alg.eq(total, p.total))
        natural = table9_bound(model, x.K).ulps
        err_round = alg.abs(alg.sub(self.d_value, alg.shl(total, sh)))
        chain.prove(f"rounding the fused sum errs by at most {natural} ulp",
                    alg.or_(alg.not_(self.finite), alg.le(alg.mul(err_round, natural.denominator), alg.mul(self.unit_ulp, natural.numerator))))
        self.lemma_count = len(chain.proven)
        return chain

    def place_units(self, alg: SmtAlgebra, ud: Unpacked, terms: list[Term], last: Int, window: int) -> None:
        """Count in units 2**(last - G) of the model's own last place ``last`` (an FMA's window sum, ``window`` bits
        wide; G = D's fraction bits + 2, so a non-zero D's last place, at least ``last`` - m, is a whole number of
        units), not in units of the domain's smallest quantum (4,300 bits for FP64).

        Every exact term is then a whole number of units or lies between two (its bits below the unit cut off): the
        exact value is known to lie in [:attr:`exact`, :attr:`exact_hi`], and as |Phi - x| is convex in x, the bound
        holds for the exact value when it holds at both ends (:meth:`script` asks both).  A term or a non-zero D
        above the window (none is: the window's top is the larger term's lead) counts as a violation, so the
        narrowing stays sound; a witness that is not one is re-asked without it.
        """
        self.G = self.bound.rfmt.man_bits + 2
        self.unit_exp = unit = alg.sub(last, self.G)
        self.cap = cap = window + self.G + 3  # 2**cap units is above twice any sum of the window's terms
        lows, highs, outside = [], [], []
        #: per term (neg, whole, cut): its magnitude in [whole, whole + cut] units, cut 1 when bits fell below the unit
        self.place_terms: list[tuple[Bool, Int, Int]] = []
        for t in terms:
            shift = alg.sub(alg.sub(t.exp, t.frac), unit)
            right = alg.clamp(alg.neg(shift), 0, t.sig.hi.bit_length() + 1)
            kept = alg.shr(t.sig, right)
            whole = alg.shl(kept, alg.clamp(shift, 0, cap))
            cut = alg.b2i(alg.ne(alg.shl(kept, right, at_most=t.sig.hi), t.sig))  # bits below the unit: x in (q, q + 1)
            lows.append(alg.ite(t.neg, alg.neg(alg.add(whole, cut)), whole))
            highs.append(alg.ite(t.neg, alg.neg(whole), alg.add(whole, cut)))
            outside.append(alg.and_(alg.ne(t.sig, 0), alg.lt(cap, shift)))
            self.place_terms.append((t.neg, whole, cut))
        self.summand_outside = outside
        self.exact_terms = lows
        self.exact_hi = alg.sum_all(highs)
        self.d_view = self.place_view(alg, ud, unit)
        self.view = self.d_view._replace(outside=alg.any([self.d_view.outside, *outside]))
        self.unit_fused = alg.const(0)

    def place_view(self, alg: SmtAlgebra, ud: Unpacked, unit: Int) -> OutputView:
        """An output in units 2**unit (:meth:`place_units`): outside when non-zero and its last place is below the
        unit or more than :attr:`cap` units above it; an ulp beyond the cap counts as 2**cap units, one below the
        unit (D = 0 with a high last place) as 0 (both stricter)."""
        m_r, emin_r, cap = self.bound.rfmt.man_bits, self.bound.rfmt.emin, self.cap
        shift = alg.sub(alg.sub(ud.exp, ud.frac), unit)
        outside = alg.and_(alg.not_(ud.is_zero), alg.or_(alg.lt(shift, 0), alg.lt(cap, shift)))
        mag = alg.shl(ud.sig, alg.clamp(shift, 0, cap))
        ulp_shift = alg.sub(alg.sub(alg.max(ud.exp, emin_r), m_r), unit)
        ulp = alg.ite(alg.lt(ulp_shift, 0), 0, alg.shl(1, alg.clamp(ulp_shift, 0, cap)))  # below the unit: 0 (stricter)
        return OutputView(alg.not_(alg.or_(ud.is_inf, ud.is_nan)), outside, signed(alg, ud.neg, mag), ulp)

    def fixed(self, alg: SmtAlgebra, neg: Bool, sig: Int, exp: Int, frac: int) -> Int:
        """(-1)**neg * sig * 2**(exp - frac) in units of 2**R (exp - frac >= R)."""
        mag = alg.shl(sig, alg.sub(exp, frac + self.R))
        return alg.ite(neg, alg.neg(mag), mag)

    def placed(self, alg: SmtAlgebra, neg: Bool, sig: Int, lsb: Int, unit_exp: Int) -> tuple[Int, Bool]:
        """(-1)**neg * sig * 2**lsb in units of 2**unit_exp (relative units: lsb >= unit_exp on the whole domain), and
        whether its last place is too high for the width assumed (then the value is at least 2**(e_max + 2), which no
        summand reaches: counted as a violation)."""
        assert self.bound.F is not None
        shift = alg.sub(lsb, unit_exp)
        cap = self.bound.F + self.G + 1 + self.reach  # below 2**(e_max + 2 + reach) is below 2**(F + G + 2 + reach) units
        mag = alg.shl(sig, alg.clamp(shift, 0, cap))
        return signed(alg, neg, mag), alg.and_(alg.ne(sig, 0), alg.lt(cap, shift))

    def relative_view(self, alg: SmtAlgebra, ud: Unpacked, unit_exp: Int, n: int) -> OutputView:
        """The output in relative units 2**unit_exp (:meth:`placed`): outside when non-zero with an exponent above
        both 2**(e_max + top) (a sum of n summands below 2**(e_max + 2) is below it) and the smallest normal's, or
        not a whole number of units."""
        m_r, emin_r, F = self.bound.rfmt.man_bits, self.bound.rfmt.emin, self.bound.F
        top = (4 * n).bit_length() + 1 + self.reach
        e_max = self.e_max
        shift = alg.sub(alg.sub(ud.exp, ud.frac), unit_exp)
        cap = max(top, ud.exp.lo - e_max.lo) + F + self.G  # the exponent at most e_max + top, or the format's least
        left, right = alg.clamp(shift, 0, cap), alg.clamp(alg.neg(shift), 0, ud.frac + 1)
        low = alg.shr(ud.sig, right)
        whole = alg.or_(alg.le(0, shift), alg.eq(alg.shl(low, right), ud.sig))
        mag = alg.ite(alg.le(0, shift), alg.shl(ud.sig, left), low)
        high = alg.and_(alg.lt(alg.add(e_max, top), ud.exp), alg.lt(ud.exp.lo, ud.exp))
        outside = alg.and_(alg.not_(ud.is_zero), alg.or_(high, alg.not_(whole)))
        ulp_shift = alg.sub(alg.sub(alg.max(ud.exp, emin_r), m_r), unit_exp)
        cap_u = max(top - m_r, emin_r - m_r - e_max.lo, ud.exp.lo - m_r - e_max.lo) + F + self.G
        ulp = alg.ite(alg.lt(ulp_shift, 0), 0, alg.shl(1, alg.clamp(ulp_shift, 0, cap_u)))  # an ulp below the unit: 0 (stricter)
        return OutputView(alg.not_(alg.or_(ud.is_inf, ud.is_nan)), outside, signed(alg, ud.neg, mag), ulp)

    def output_view(self, alg: SmtAlgebra, ud: Unpacked) -> OutputView:
        """What the query reads of an output's fields ``ud`` (built in ``alg``: the formula's, or a lemma's)."""
        m_r, emin_r, R = self.bound.rfmt.man_bits, self.bound.rfmt.emin, self.R
        exp_d = alg.clamp(ud.exp, self.e_lo, self.e_hi)
        zero_ulp = 1 << (emin_r - m_r - R) if emin_r - m_r >= R else 0  # an ulp of zero below the unit: count it as 0 (stricter)
        ulp = alg.ite(ud.is_zero, zero_ulp, alg.shl(1, alg.sub(alg.max(exp_d, emin_r), m_r + R)))
        outside = alg.and_(alg.not_(ud.is_zero), alg.or_(alg.lt(ud.exp, self.e_lo), alg.lt(self.e_hi, ud.exp)))
        return OutputView(alg.not_(alg.or_(ud.is_inf, ud.is_nan)), outside, self.fixed(alg, ud.neg, ud.sig, exp_d, ud.frac), ulp)

    def violation(self, alg: SmtAlgebra, view: OutputView, exact: Int, unit_fused: Int, lam: Fraction) -> Bool:
        """A finite output beyond ``lam`` times the bound (or outside the assumed exponent range), in ``alg``."""
        b = self.bound

        def rhs(fused: Fraction) -> tuple[Int, int]:
            f, u = lam * fused, lam * b.ulps
            den = f.denominator * u.denominator
            return alg.add(alg.mul(unit_fused, int(f * den)), alg.mul(view.ulp, int(u * den))), den

        if b.above is None:
            r, den = rhs(b.fused)
            beyond = alg.lt(r, alg.mul(alg.abs(alg.sub(view.value, exact)), den))
        else:  # one-sided: exact - Phi above ``fused``'s bound, or Phi - exact above ``above``'s
            (r_lo, d_lo), (r_hi, d_hi) = rhs(b.fused), rhs(b.above)
            beyond = alg.or_(alg.lt(r_lo, alg.mul(alg.sub(exact, view.value), d_lo)),
                             alg.lt(r_hi, alg.mul(alg.sub(view.value, exact), d_hi)))
        return alg.and_(view.finite, alg.or_(view.outside, beyond))

    def script(self, lam: Fraction) -> str:
        """The query: a finite output beyond ``lam`` times the bound (or outside the assumed exponent range)."""
        alg = self.alg
        for hook in self.before_script:
            hook(lam)
        beyond = self.violation(alg, self.view, self.exact, self.unit_fused, lam)
        if self.exact_hi is not self.exact:  # an interval of exact values: |Phi - x| is convex in x, so its ends decide
            beyond = alg.or_(beyond, self.violation(alg, self.view, self.exact_hi, self.unit_fused, lam))
        return alg.script(f"(assert {alg.raw_bool(beyond)})")


def error_bound(
    model: Model,
    *,
    name: Optional[str] = None,
    K: Optional[int] = None,
    domain: Optional[Domain] = None,
    solver: Optional[str] = None,
    timeout: float = 60.0,
    seed: int = 0,
    scale: Union[Fraction, int, str] = 1,
    fused: Optional[Union[Fraction, int, str]] = None,
    ulps: Optional[Union[Fraction, int, str]] = None,
    above: Optional[Union[Fraction, int, str]] = None,
    tight: bool = False,
    resolution: Union[Fraction, str] = Fraction(1, 64),
    lemmas: bool = True,
) -> QueryResult:
    """Is ``|Phi - exact| <= scale * (fused * 2**(e_max - F) + ulps * ulp(Phi))`` on the domain?

    ``fused`` defaults to L + 1 (the summands, Table 9), ``ulps`` to 1 for
    RZ outputs and 1/2 for RNE; ``above``: a one-sided interval instead,
    exact - Phi in [-scale (above 2**(e_max-F) + ulps ulp), scale (fused
    2**(e_max-F) + ulps ulp)] (round-down units: Phi is seldom above); ``ulp(Phi)`` is the quantum of the rounded
    result (the smallest subnormal's for zero).  Infinite outputs are out of
    scope.  Everything is computed exactly as integers in units of the
    smallest quantum of the domain, so keep exponent ranges (``exp``,
    ``cexp``) narrow for wide formats.  ``tight=True`` bisects the scale:
    ``extra["tight"]`` is the smallest scale proved (to ``resolution``),
    ``extra["attained"]`` the largest ratio error/bound a witness reached;
    on the full domain the search starts from a simulated worst-case input
    the solver confirms (``extra["attained_witness"]``, hex; its pinned
    sat block joins ``blocks``).

    With ``lemmas``, an op with :data:`ERROR_FACTS` (T-, ST-, GST-, TR-,
    GTR- and E-FDPA) proves facts on the model's own terms that the final
    query (the property itself) rests on; a TR-/GTR-FDPA the chain does not
    cover (K = 1, F2 = F) is proved by parts (:data:`ERROR_PROVERS`).  A
    short first call looks for a witness before any lemma is proved.
    """
    prop = "error-bound"
    name, K, domain = setup_query(model, name, K, domain, prop)
    why = uncovered(model)
    if why:  # a valid model no prover covers: no answer, and why
        r = make_result(prop, "unknown", name, model, K, domain, Runner(solver, timeout, seed), reason=f"not covered: {why}")
        return replace(r, solver="none")  # no solver was asked
    bound = table9_bound(model, K)
    if fused is not None:
        bound = replace(bound, fused=Fraction(fused))
    if ulps is not None:
        bound = replace(bound, ulps=Fraction(ulps))
    if above is not None:
        bound = replace(bound, above=Fraction(above))
    if min(bound.fused, bound.ulps, bound.side(True)) < 0:
        raise InputError("error-bound: fused, ulps and above must be >= 0")
    scale, resolution = Fraction(scale), Fraction(resolution)
    if scale < 0 or resolution <= 0:
        raise InputError("error-bound: scale must be >= 0 and resolution > 0")
    run = Runner(solver, timeout, seed)
    facts = error_facts(model, K) if lemmas else None
    formulas = [ErrorFormula(model, K, domain, bound, narrow=True, relative=facts is not None and facts.relative)]
    chains: list[Optional[LemmaChain]] = [None]

    prover = error_prover(model, K) if lemmas and facts is None else None
    parts = prover is not None and bound.fused and bound.F == model.F and bound.above is None  # the parts are two-sided
    blocks: dict[Fraction, list[Any]] = {}
    counts: dict[Fraction, int] = {}  # per scale proved by a chain: its lemmas and facts
    scopes: dict[Fraction, str] = {}  # per scale proved: the inputs that proof covers (its formula's or its lemmas')

    def violation(f: ErrorFormula, values: dict[str, int], lam: Fraction) -> Optional[tuple[Witness, int, Fraction]]:
        """The solver's witness replayed: (witness, d, ratio) when it breaks ``lam`` * bound; None when it only left
        the exponent range a narrow formula assumed (the full formula is queued); ReplayError when it breaks nothing."""
        w = f.x.witness(values)
        got = replay_one(model, w)
        expect_same("error-bound d", values["d"], got, w)
        ratio = py_ratio(model, bound, w, got)
        if ratio is not None and ratio > lam:
            return w, got, ratio
        if not f.narrow:
            raise ReplayError(f"error-bound witness {w} is within {lam} * bound (ratio {ratio})")
        formulas.append(ErrorFormula(model, K, domain, bound, narrow=False))  # ask again over the full ranges
        chains.append(None)
        return None

    def ask(lam: Fraction) -> tuple[str, Any, str]:
        """("holds", None, script) | ("fails", (witness, d, ratio), script) | ("unknown", reason, script)."""
        while True:
            f = formulas[-1]
            script = f.script(lam)
            if parts and f.narrow:  # one T-FDPA: a short look for a witness, then the compositional proof (full domain)
                r = run.check(script, f.x.declared + ["d"], timeout=QUICK_TIMEOUT)
                if r.verdict != "sat":  # TR-/GTR-FDPA: E = max(e_max, e_c) is Table 9's e_max there (_alignment_exponent)
                    assert prover is not None
                    proof = prover(model, K, run, scale=lam, fused=bound.fused, ulps=bound.ulps)
                    if proof.verdict == "holds":
                        blocks[lam] = proof.blocks
                        scopes[lam] = proof.scope
                        return "holds", None, script
                    return "unknown", proof.reason, script
                found = violation(f, r.values, lam)
                if found is not None:
                    return "fails", found, script
                continue
            # a short look for a witness first (fast when the bound is too small); proofs need the lemmas
            r = run.check(script, f.x.declared + ["d"], timeout=QUICK_TIMEOUT) if lemmas and chains[-1] is None else None
            if r is None or r.verdict == "unknown":
                if lemmas and chains[-1] is None:
                    chains[-1] = f.prove_lemmas(run)
                    script = f.script(lam)
                r = run.check(script, f.x.declared + ["d"])
            chain = chains[-1]
            if chain is not None and chain.proven:
                script = chain.certificate(script.rstrip("\n").rsplit("\n", 1)[-1])
                counts[lam] = len(chain.proven) + len(chain.lemmas)
            if r.verdict == "unsat":
                scopes[lam] = f.scope
                return "holds", None, script
            if r.verdict == "unknown":
                return "unknown", (chain.stopped if chain is not None and chain.stopped else r.reason), script
            found = violation(f, r.values, lam)
            if found is not None:
                return "fails", found, script

    extra: dict[str, object] = {"bound": bound.describe(scale), "symbols": bound.symbols(model), "scale": str(scale)}
    gap = posed_without_prover(model)
    seeded = None  # a simulated input with a large ratio, confirmed by the solver (searched once: here or for --tight)
    if gap:  # nothing proves the bound: a simulated input beyond it, confirmed by the solver, refutes it
        extra["posed"] = posed_form(model)
        seeded = _search_witness(model, K, bound, formulas, run, seed) if domain == Domain() else None
        if seeded is not None and seeded[2] > scale:
            w, got, ratio, block = seeded
            expect_same("error-bound d", got, replay_one(model, w), w)
            extra["ratio"] = str(ratio)
            return make_result(prop, "fails", name, model, K, domain, run, witness=w, outputs={"d": got}, smt2=block.text,
                               extra=extra, blocks=[block],
                               reason=bound.exceeded(ratio, scale))
    verdict, info, script = ask(scale)
    if verdict == "unknown":
        why = f"no prover covers it ({gap}) and no input beyond it was found; {info}" if gap else info
        return unknown_result(prop, name, model, K, domain, run, f"error bound {bound.describe(scale)}", why, smt2=script, extra=extra)
    if verdict == "holds":
        check_nonempty(model, K, domain, run, prop)
    else:
        extra["ratio"] = str(info[2])
    if tight:
        if seeded is None and not gap and domain == Domain():
            seeded = _search_witness(model, K, bound, formulas, run, seed)
        if seeded is not None:
            extra["attained_witness"] = hex_witness(model, seeded[0])
            if verdict == "holds":
                blocks.setdefault(scale, []).append(seeded[3])
        extra.update(_bisect(ask, scale, verdict, info, resolution, seeded[2] if seeded else Fraction(0)))
    if verdict == "holds":
        if scale in blocks:
            extra["proof"] = "compositional (full domain: every finite input)"
        if scale in counts:
            extra["lemmas"] = counts[scale]
        extra["scope"] = f"{scopes[scale]}, K={K}; a NaN or infinite D is outside the bound"
        return make_result(prop, "holds", name, model, K, domain, run, smt2=script, extra=extra, blocks=blocks.get(scale, []),
                           reason=f"{bound.statement(scale)} for {extra['scope']}")
    w, got, ratio = info
    return make_result(prop, "fails", name, model, K, domain, run, witness=w, outputs={"d": got}, smt2=script, extra=extra,
                       reason=bound.exceeded(ratio, scale))


def _bisect(ask: Callable[[Fraction], tuple[str, Any, str]], scale: Fraction, verdict: str, info: Any, resolution: Fraction,
            attained: Fraction = Fraction(0)) -> dict[str, object]:
    """Smallest scale that holds (to ``resolution``) and the largest ratio a witness attained (``attained``: one already found)."""
    hi: Optional[Fraction] = scale if verdict == "holds" else None
    lo = max(attained, info[2] if verdict == "fails" else Fraction(0))  # every scale below lo fails (lo itself may hold)
    guess = max(scale, Fraction(1)) * 2
    while hi is None:  # find a scale that holds
        if guess > 1 << 20:
            return {"tight": None, "attained": str(lo), "tight_reason": "no scale up to 2**20 holds"}
        v, i, _ = ask(max(guess, lo))
        if v == "unknown":
            return {"tight": None, "attained": str(lo), "tight_reason": f"solver gave up: {i}"}
        if v == "holds":
            hi = max(guess, lo)
        else:
            lo = max(lo, i[2])
            guess *= 2
    while hi - lo > resolution:
        mid = (lo + hi) / 2
        mid = Fraction(int(mid / resolution * 2), 1) * resolution / 2 if mid.denominator > 2 * resolution.denominator else mid
        if not lo < mid < hi:
            break
        v, i, _ = ask(mid)
        if v == "unknown":
            return {"tight": str(hi), "attained": str(lo), "tight_reason": f"neither a proof nor a witness at {mid}: {i}"}
        if v == "holds":
            hi = mid
        else:
            lo = max(lo, i[2])
    return {"tight": str(hi), "attained": str(lo)}


def _search_witness(model: Model, K: int, bound: Table9Bound, formulas: list[ErrorFormula], run: Runner,
                    seed: int) -> Optional[tuple[Witness, int, Fraction, Any]]:
    """A simulated input with a large ratio error/bound (:mod:`.error_search`), confirmed by the solver.

    Returns (witness, D, ratio, block): the block pins the witness in the
    query "error > lam * bound", lam the ratio rounded down to 1/1024, and
    the solver answered sat on it.  None when the search found no finite
    output or the model is not a one-FDPA with a known alignment exponent.
    """
    from ...proof_kernel.blocks import pin_block
    from .error_search import search

    if model.kind not in ("t-fdpa", "st-fdpa", "tr-fdpa", "gtr-fdpa", "e-fdpa", "ftz-addmul") or model.scale_fmt is not None:
        return None

    def ratio(w: Witness, d: int) -> Optional[Fraction]:
        fmts = [(model.a_fmt, x) for x in w.a] + [(model.b_fmt, y) for y in w.b] + [(model.c_fmt, w.c)]
        if any(not isinstance(to_fraction(get_format(f), x), Fraction) for f, x in fmts):
            return None
        return py_ratio(model, bound, w, d)

    found = search(model, K, ratio, seed=seed)
    if found is None or found[2] <= 0:
        return None
    w, d, r = found
    lam = Fraction(int(r * 1024), 1024)
    if lam == r:
        lam -= Fraction(1, 1024)
    f = formulas[-1]
    block = pin_block(f"an input whose error exceeds {lam} x the bound (found by simulation, ratio {float(r):.6f})",
                      f.script(lam), witness_pins(model, w), "sat")
    got = run.check(block.text, f.x.declared + ["d"])
    if got.verdict == "unknown":
        return None  # the bisection then starts from what the solver finds itself
    if got.verdict != "sat" or got.values.get("d") != d:
        raise ReplayError(f"error-bound: the solver does not confirm the simulated witness {w} (ratio {r}): {got.verdict}")
    return w, d, r, block


def py_ratio(model: Model, bound: Table9Bound, w: Witness, d: int) -> Optional[Fraction]:
    """|Phi - exact| / bound for a concrete witness, in exact arithmetic (None for an infinite or NaN output); a
    one-sided bound's side is the one Phi is on."""
    out = output_container(model)
    vd = py_value(out, d)
    if vd is None or isinstance(vd, float):
        return None
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    exact = Fraction(0)
    for k, (u, v) in enumerate(zip(w.a, w.b)):
        exact += _py_finite(fa, u) * _py_finite(fb, v) * _py_scale(model, w, k)
    pc = to_fraction(fc, w.c)
    assert isinstance(pc, Fraction)
    exact += pc
    err = abs(vd - exact)
    total = Fraction(0)
    fused = bound.side(vd > exact)
    if fused:
        e = _py_alignment_exponent(model, w)
        if e is not None:
            total += fused * Fraction(2) ** (e - bound.F)
    _, ed, _ = decode_scalar(out, d)
    total += bound.ulps * Fraction(2) ** (max(ed, bound.rfmt.emin) - bound.rfmt.man_bits)
    if total == 0:
        return None if err == 0 else Fraction(1 << 62)
    return err / total
