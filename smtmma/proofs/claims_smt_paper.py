"""Claims of the SMT paper (001, Valpey et al.): Table 4 and §4 as the paper poses them, and as model properties.

Each Table 4 row is registered twice:

* ``NAME`` -- the paper's question: a solver-found test input on which the
  hypotheses the row weighs give different outputs (sat), replayed through
  the simulator; the detail says which hypothesis the catalogue model (the
  Volta model, sm70) takes on it;
* ``NAME-model`` -- the hypothesis as a property of the catalogue model,
  proved (unsat: no input violates it) or refuted.

Hypotheses are compositions of ops defined once elsewhere
(:mod:`smtmma.proofs.hypotheses`).  Also here: ``volta-alignment-vs-smt-paper``
(the paper's own Volta model against sm70, decided by the paper's published
hardware rows).
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any, Optional, Sequence

import numpy as np

from ..catalogue import model_of
from ..encodings.algebra import Algebra, Bool, Int
from ..encodings.fields import unpack
from ..encodings.fma import fma
from ..encodings.rounding import flush_subnormal
from ..formats import format_hex, get_format, to_fraction
from ..models import Model
from ..queries.query_algebra import same_value, value_key
from ..queries.distinguish import Witness, distinguish
from ..queries.formula import Domain
from ..simulate import run_model, simulate_dot
from ..proof_kernel.blocks import Block, pin_block
from .claim import Context, Outcome, claim
from .evidence import certificate, witness_pins, witness_record
from .hypotheses import Found, Hyp, Inputs, add_rm, ask, evaluate, mul_rm, tc
from .transpositions import transposition_proofs

MODES = ("rne", "rz", "ru", "rd")
ONE16 = 0x3C00
C0 = Domain(fixed=(("c", 0),))


def sm70_f16f32() -> Model:
    """The catalogue's Volta model, FP16 inputs and FP32 accumulation."""
    return model_of("sm70", "f16f32")


def sm70_f16f16() -> Model:
    """The catalogue's Volta model, FP16 inputs and FP16 accumulation."""
    return model_of("sm70", "f16f16")


def _show(fmt: str, bits: int) -> str:
    v = to_fraction(fmt, bits)
    return f"{format_hex(fmt, bits)} ({v if not isinstance(v, Fraction) else _dec(v)})"


def _dec(v: Fraction) -> str:
    return "0" if v == 0 else f"{float(v):.17g}"


def paper_value(fmt: str, text: str) -> int:
    """The pattern of an exact decimal/power-of-two value written as in the paper (``1.5*2^-4``)."""
    from ..formats import from_fraction

    mant, _, exp = text.partition("*2^")
    return from_fraction(fmt, Fraction(mant) * Fraction(2) ** int(exp or 0))


def _run(model: Model, a: Sequence[int], b: Sequence[int], c: int) -> int:
    """The simulator's D bits of one dot product."""
    return int(simulate_dot(model, None, np.array([list(a)], dtype=np.uint64), np.array([list(b)], dtype=np.uint64),
                            np.array([c], dtype=np.uint64), backend="numpy")[0])


def _outcome(name: str, source: str, expected: str, found: Sequence[Found], base: Model, detail: str, ctx: Context,
             *, show: Optional[dict[str, str]] = None) -> Outcome:
    """The Outcome of one or more queries that must all give ``expected`` (sat or unsat)."""
    verdicts = [f.verdict for f in found]
    verdict = expected if all(v == expected for v in verdicts) else ("unknown" if "unknown" in verdicts else
                                                                      next(v for v in verdicts if v != expected))
    solver = found[0].solver if found else ""
    w = next((f for f in found if f.witness is not None), None)
    rec = None
    if w is not None and w.witness is not None:
        fmts = show or {}
        rec = witness_record(base, w.witness, {k: (fmts.get(k, base.d_fmt), v) for k, v in w.outputs.items()})
    blocks = [f.block for f in found if f.block is not None]
    reasons = "; ".join(f.reason for f in found if f.verdict == "unknown" and f.reason)
    return Outcome(verdict, None if verdict == "unknown" else verdict == expected, solver, rec,
                   detail + (f" (unknown: {reasons})" if reasons else ""),
                   certificate(name, source, ["sm70"], verdict, solver, blocks, rec))


def _dist(label: str, m1: Model, m2: Model, K: int, domain: Domain, ctx: Context) -> Found:
    """distinguish(m1, m2) as a :class:`Found` with its certificate block."""
    r = distinguish([m1, m2], ["h1", "h2"], K=K, domain=domain, solver=ctx.solver, timeout=ctx.timeout, seed=ctx.seed,
                    check_domain=False)
    f = Found(r.verdict, r.solver, r.seconds, r.smt2, reason=r.reason)
    if r.verdict == "unsat":
        f.block = Block(label, r.smt2, "unsat")
    elif r.verdict == "sat" and r.witness is not None:
        f.witness, f.outputs = r.witness, {m1.describe(): r.outputs["h1"], m2.describe(): r.outputs["h2"]}
        f.block = pin_block(label, r.smt2, witness_pins(m1, r.witness), "sat")
    return f


def _proving(ctx: Context) -> dict[str, Any]:
    """:func:`ask`'s solver options for a model property: a query expected to be unsat."""
    return {"solver": ctx.solver, "timeout": ctx.timeout, "proof": True}


def _differ(alg: Algebra, fmt: str, x: Int, y: Int) -> Bool:
    """Different values (+0 and -0 are the same value, as are two NaNs): a difference a test can see as a number."""
    return alg.not_(same_value(alg, get_format(fmt), x, y))


def _ne_all(first: str, others: Sequence[str], fmt: str = "fp32"):  # type: ignore[no-untyped-def]
    return lambda alg, x, o: [_differ(alg, fmt, o[first], o[h]) for h in others]


def _product(rm: str, out: str) -> Hyp:
    """IEEE multiplication of a0 and b0 rounded to ``out`` with ``rm`` (exact in FP32 for FP16 inputs)."""
    return Hyp(f"{rm}-{out}(a0*b0)", out, lambda alg, a, b, c: mul_rm(alg, a[0], b[0], "fp16", "fp16", out, rm))


# -- 1. exact products (§4.1, Listing 1.1, Table 1) ---------------------------------------------------


def _rounded_product(rm: str) -> Hyp:
    """Products rounded to FP16 with ``rm`` (Listing 1.1's fpMul in half precision), then fed to the unit."""
    m = sm70_f16f32()
    return Hyp(f"fp16-product-{rm}", "fp32", lambda alg, a, b, c: run_model(
        alg, m, [mul_rm(alg, x, y, "fp16", "fp16", "fp16", rm) for x, y in zip(a, b)], [alg.const(ONE16)] * len(a), c))


@claim("exact-products", source="001 Table 4 row 'Exact Multiplication' (§4.1, Listing 1.1, Table 1)", models=("sm70",),
       expected="sat", group="table4",
       summary="a test input whose FP16 product is inexact in every rounding mode; the Volta model returns the exact product")
def exact_products(ctx: Context) -> Outcome:
    m = sm70_f16f32()
    hyps = [tc("exact (sm70)", m)] + [_rounded_product(rm) for rm in MODES]
    f = ask("exact product differs from the FP16-rounded product in every mode", m, 1, hyps,
            _ne_all("exact (sm70)", [h.name for h in hyps[1:]]), domain=C0, solver=ctx.solver, timeout=ctx.timeout)
    detail = "Listing 1.1: a, b in FP16 with FP16(a*b) != a*b for RNE, RZ, RU and RD (C = 0)."
    if f.witness is not None:
        w = f.witness
        exact = to_fraction("fp16", w.a[0]) * to_fraction("fp16", w.b[0])
        same = to_fraction("fp32", f.outputs["exact (sm70)"]) == exact
        detail += f" sm70 returns {'exactly a*b' if same else 'NOT a*b'} = {_show('fp32', f.outputs['exact (sm70)'])}."
        if not same:
            f.verdict = "replay-mismatch"
    detail += (" (Table 1's a = 1.2587890625*2^-15 = 1289*2^-25 is not an FP16 value as printed, so it is not "
               "replayed.)")
    return _outcome("exact-products", "001 Table 4", "sat", [f], m, detail, ctx)


@claim("exact-products-model", source="001 Table 4 row 'Exact Multiplication' (§5: products exact in FP32)",
       models=("sm70", "sm75", "sm80"), expected="holds", group="table4",
       summary="one product with C = 0 equals the exact product (E-FDPA) for every FP16 pair, Volta/Turing/Ampere")
def exact_products_model(ctx: Context) -> Outcome:
    found = []
    for arch in ("sm70", "sm75", "sm80"):
        m = model_of(arch, "f16f32")
        found.append(ask(f"{arch}: a*b (C=0) != IEEE FP32 a*b", m, 1, [tc("m", m), _product("rne", "fp32")],
                         _ne_all("m", ["rne-fp32(a0*b0)"]), domain=C0, **_proving(ctx)))
    out = _outcome("exact-products-model", "001 Table 4", "unsat", found, sm70_f16f32(),
                   "unsat for sm70, sm75, sm80 (f16f32, K=1, C=0): no FP16 pair, subnormals included, whose product "
                   "the model does not return exactly (FP32 holds every FP16 product).", ctx)
    return _holds(out)


def _holds(out: Outcome) -> Outcome:
    """An unsat property reads 'holds', a sat one 'fails'."""
    out.verdict = {"unsat": "holds", "sat": "fails"}.get(out.verdict, out.verdict)
    if out.certificate is not None:
        out.certificate.meta["verdict"] = out.verdict
    return out


# -- 2. exact addition in FP16 (Property 1) ------------------------------------------------------------

_P1_DOMAIN = Domain(exp=(-4, 4), fixed=(("c", 0),))


def _fp16_accumulate(rm: str) -> Hyp:
    """FP16 accumulation: products rounded to FP16 with ``rm``, then added one by one in FP16 with ``rm``."""
    def fn(alg: Algebra, a: Sequence[Int], b: Sequence[Int], c: Int) -> Int:
        s = c
        for x, y in zip(a, b):
            s = add_rm(alg, s, mul_rm(alg, x, y, "fp16", "fp16", "fp16", rm), "fp16", rm)
        return s
    return Hyp(f"fp16-accumulation-{rm}", "fp16", fn)


def _wide16(rm: str) -> Model:
    """The exact sum of the two products rounded with ``rm`` (T-FDPA with F = 36: exact for input exponents -4..4)."""
    return sm70_f16f16().replace(F=36, rho=f"{rm}-fp16")


def _p1_side(alg: Algebra, x: Inputs, o: dict[str, Int]) -> list[Bool]:
    """Property 1's side conditions: a_k*b_k not in FP16 (RZ != RU), their sum in FP16 (RZ == RU)."""
    conds = [alg.ne(mul_rm(alg, a, b, "fp16", "fp16", "fp16", "rz"), mul_rm(alg, a, b, "fp16", "fp16", "fp16", "ru"))
             for a, b in zip(x.a, x.b)]
    lo = run_model(alg, _wide16("rz"), x.a, x.b, x.c)
    hi = run_model(alg, _wide16("ru"), x.a, x.b, x.c)
    return conds + [alg.eq(lo, hi)]


def _p1_hyps() -> list[Hyp]:
    fma16 = Model("fma", "fp16", "fp16", "fp16", "fp16")
    return ([tc("sm70 f16f16", sm70_f16f16()), tc("fp16 FMA chain (RNE)", fma16)]
            + [_fp16_accumulate(rm) for rm in MODES])


@claim("exact-addition-fp16", source="001 Table 4 row 'Exact Addition in FP16' (§4.1, Property 1)", models=("sm70",),
       expected="sat", group="table4",
       summary="f16f16: products not in FP16 whose sum is; FP32 accumulation differs from every FP16-accumulation hypothesis")
def exact_addition_fp16(ctx: Context) -> Outcome:
    m = sm70_f16f16()
    hyps = _p1_hyps()
    found = []
    for h in hyps[2:]:  # one test input per hypothesis, as the paper generates them (pairwise)
        found.append(ask(f"Property 1: FP32 accumulation (sm70) != {h.name}", m, 2, [hyps[0], h],
                         lambda alg, x, o, n=h.name: _p1_side(alg, x, o) + _ne_all("sm70 f16f16", [n], "fp16")(alg, x, o),
                         domain=_P1_DOMAIN, solver=ctx.solver, timeout=ctx.timeout))
    detail = ("Property 1: a0*b0, a1*b1 not in FP16, their sum in FP16 (C = 0, exponents -4..4); one input per "
              "hypothesis against the unit (exact products, FP32-wide fused sum, one RNE to FP16): FP16 accumulation with "
              "products and sums rounded RNE, RZ, RU or RD. Not asked here (measured 9 s, unsat): an FP16 FMA chain "
              "(exact products, FP16 accumulator) gives the exact sum on every Property-1 input of this domain, so "
              "Property 1 cannot tell it from FP32 accumulation; nor does one input separate all hypotheses at once.")
    exact_ok = [to_fraction("fp16", f.outputs["sm70 f16f16"]) == sum(
        to_fraction("fp16", x) * to_fraction("fp16", y) for x, y in zip(f.witness.a, f.witness.b))
        for f in found if f.witness is not None]
    detail += f" On the {len(exact_ok)} inputs sm70 returns the exact sum {sum(exact_ok)} times."
    return _outcome("exact-addition-fp16", "001 Table 4", "sat", found, m, detail, ctx, show={h.name: "fp16" for h in hyps})


@claim("exact-addition-fp16-model", source="001 Table 4 row 'Exact Addition in FP16' (Property 1)", models=("sm70",),
       expected="holds", group="table4",
       summary="f16f16: whenever two products are not in FP16 but their sum is, the Volta model returns the sum exactly")
def exact_addition_fp16_model(ctx: Context) -> Outcome:
    m = sm70_f16f16()
    hyps = [tc("sm70 f16f16", m), tc("exact", _wide16("rz"))]  # the sum, exact: Property 1 has RZ == RU
    f = ask("Property 1's inputs: sm70 f16f16 != the exact sum", m, 2, hyps,
            lambda alg, x, o: _p1_side(alg, x, o) + [_differ(alg, "fp16", o["sm70 f16f16"], o["exact"])],
            domain=_P1_DOMAIN, **_proving(ctx))
    return _holds(_outcome("exact-addition-fp16-model", "001 Table 4", "unsat", [f], m,
                           "unsat on Property 1's domain (two lanes, C = 0, exponents -4..4): the unit accumulates "
                           "FP16 products in FP32 width, so a representable sum comes out exact.", ctx))


# -- 3. rounding of the final result to FP16 (Property 2) ---------------------------------------------

#: 001's published page (pyxis-roc/tensor_core_semantics index.html, "Rounding of Final Result to Half-Precision"):
#: (a1, b1, hardware result); the hardware matched RNE on all three.
FINAL_ROUNDING_ROWS = (
    ("1.3330078125*2^-13", "-1.5*2^-1", "-1*2^-13"),
    ("1.3330078125*2^-9", "1.5*2^-1", "1*2^-9"),
)  # the third row's a1 = 1.9619140625*2^-15 is not an FP16 value as printed


@claim("fp16-output-rne", source="001 Table 4 row 'Rounding of Final Result' (§4.2, Property 2)", models=("sm70",),
       expected="sat", group="table4",
       summary="for every pair of rounding modes, one FP16 product that they round differently (f16f16, C = 0)")
def fp16_output_rne(ctx: Context) -> Outcome:
    m = sm70_f16f16()
    found = []
    for r1, r2 in itertools.combinations(MODES, 2):
        found.append(_dist(f"one product rounded to FP16: {r1} vs {r2}", m.replace(rho=f"{r1}-fp16"),
                           m.replace(rho=f"{r2}-fp16"), 1, C0, ctx))
    agree = [_run(m, [paper_value("fp16", a)], [paper_value("fp16", b)], 0) == paper_value("fp16", hw) for a, b, hw in FINAL_ROUNDING_ROWS]
    detail = (f"Property 2: 6 pairs of {'/'.join(MODES)}, each separated by one product. The catalogue's rho is "
              f"{m.rho}; on the paper's published hardware rows (tensor_core_semantics index.html, the two whose "
              f"inputs are FP16 values as printed) sm70 gives the hardware's (RNE) value: {sum(agree)}/{len(agree)}.")
    return _outcome("fp16-output-rne", "001 Table 4", "sat", found, m, detail, ctx)


@claim("fp16-output-rne-model", source="001 Table 4 row 'Rounding of Final Result' (§5 Alg. 1 step 8)",
       models=("sm70", "sm75", "sm80"), expected="holds", group="table4",
       summary="f16f16: one product with C = 0 comes out as RNE-FP16 of the exact product, Volta/Turing/Ampere")
def fp16_output_rne_model(ctx: Context) -> Outcome:
    found = []
    for arch in ("sm70", "sm75", "sm80"):
        m = model_of(arch, "f16f16")
        found.append(ask(f"{arch} f16f16: a*b (C=0) != RNE-FP16(a*b)", m, 1, [tc("m", m), _product("rne", "fp16")],
                         _ne_all("m", ["rne-fp16(a0*b0)"], "fp16"), domain=C0, **_proving(ctx)))
    return _holds(_outcome("fp16-output-rne-model", "001 Table 4", "unsat", found, sm70_f16f16(),
                           "unsat for sm70, sm75, sm80 (f16f16, K=1, C=0): the final rounding is RNE, subnormal "
                           "results included.", ctx))


# -- 4. truncation, not round-to-zero (§4.2, Table 3) and the rounding of the accumulator --------------


def ieee_sum(rm: str, nominal: bool = False) -> Hyp:
    """The paper's ``ToFP32(a)*ToFP32(b) (+)_rm c``: the exact product plus c, rounded once to FP32 with ``rm``.

    An FP16 product is exact in FP32, so this is one FMA rounded with ``rm``
    (:func:`~smtmma.encodings.fma.fma`); the tests prove it equal, bit for bit,
    to the product rounded to FP32 then added (:func:`ieee_mul_add`).
    ``nominal``: the FMA places the product at e_a + e_b unnormalized, as the
    Volta model does (the same bits: tests/test_fma_nominal.py proves it).
    """
    f16, f32 = get_format("fp16"), get_format("fp32")
    return Hyp(f"ieee-{rm}", "fp32", lambda alg, a, b, c: fma(
        alg, unpack(alg, f16, a[0]), unpack(alg, f16, b[0]), unpack(alg, f32, c), out=f32, mode=rm,
        nominal_product=nominal))


def ieee_mul_add(rm: str) -> Hyp:
    """``ToFP32(a)*ToFP32(b) (+)_rm c`` as the paper writes it: a product rounded to FP32, then an addition with ``rm``."""
    return Hyp(f"ieee-{rm}", "fp32", lambda alg, a, b, c: add_rm(
        alg, mul_rm(alg, a[0], b[0], "fp16", "fp16", "fp32", "rz"), c, "fp32", rm))


@claim("truncation-not-rz", source="001 §4.2, Table 3 (Table 4 row 'Rounding of Accumulator')", models=("sm70",),
       expected="sat", group="table4",
       summary="an input a*b + c on which the Volta model (truncated alignment) differs from IEEE round-to-zero")
def truncation_not_rz(ctx: Context) -> Outcome:
    m = sm70_f16f32()
    hyps = [tc("sm70", m), ieee_sum("rz")]
    f = ask("truncation != RZ", m, 1, hyps, _ne_all("sm70", ["ieee-rz"]), solver=ctx.solver, timeout=ctx.timeout)
    t3 = (paper_value("fp16", "2"), ONE16, paper_value("fp32", "-1*2^-40"))
    outs, _ = evaluate(m, hyps, Witness((t3[0],), (t3[1],), t3[2]))
    detail = (f"Table 3's input a=2, b=1, c=-2^-40: sm70 {_show('fp32', outs['sm70'])} (the paper's hardware: 2), "
              f"RZ {_show('fp32', outs['ieee-rz'])} (the paper: 2 - 2^-23).")
    if f.witness is not None:
        detail += f" Solver's input: sm70 {_show('fp32', f.outputs['sm70'])}, RZ {_show('fp32', f.outputs['ieee-rz'])}."
    return _outcome("truncation-not-rz", "001 §4.2", "sat", [f], m, detail, ctx)


@claim("truncation-not-rz-model", source="001 §4.2 ('This difference only manifests in effective subtraction')",
       models=("sm70",), expected="holds", group="table4",
       summary="for a*b + c with a, b, c >= 0 the Volta model equals IEEE RZ: truncation differs only on subtraction")
def truncation_not_rz_model(ctx: Context) -> Outcome:
    m = sm70_f16f32()
    hyps = [tc("sm70", m), ieee_sum("rz")]
    every = ask("a,b,c >= 0: sm70 != RZ", m, 1, hyps, _ne_all("sm70", ["ieee-rz"]),
                domain=Domain(nonneg=True), **_proving(ctx))
    normal = ask("a,b,c >= 0 and normal: sm70 != RZ", m, 1, hyps, _ne_all("sm70", ["ieee-rz"]),
                 domain=Domain(nonneg=True, subnormals=False), **_proving(ctx))
    out = _holds(_outcome("truncation-not-rz-model", "001 §4.2", "unsat", [every, normal], m, "", ctx))
    if every.verdict == "sat" and normal.verdict == "unsat":
        out.verdict = "fails (holds for normal inputs)"
        out.certificate.meta["verdict"] = out.verdict  # type: ignore[union-attr]
        out.detail = ("K=1, a, b, c >= 0: sm70 equals RZ on every normal input (proof), but not with a subnormal "
                      "factor: the catalogue aligns at e_a + e_b with the subnormal's exponent e_min (MMA-Sim Alg. 7), "
                      "above the product's value, so a smaller C is cut even on an effective addition. Witness: "
                      f"sm70 {_show('fp32', every.outputs['sm70'])}, RZ {_show('fp32', every.outputs['ieee-rz'])}. "
                      "The paper's statement holds for its own model (normalized FP32 products).")
    else:
        out.detail = "K=1, a, b, c >= 0: truncation vs IEEE RZ on effective additions (all inputs; normal inputs)."
    return out


@claim("rounding-of-accumulator", source="001 Table 4 row 'Rounding of Accumulator' (§4.2)", models=("sm70",),
       expected="sat", group="table4",
       summary="inputs a*b + c separating each pair of IEEE modes, and one on which the Volta model is none of them")
def rounding_of_accumulator(ctx: Context) -> Outcome:
    m = sm70_f16f32()
    found = []
    for r1, r2 in itertools.combinations(MODES, 2):
        found.append(ask(f"a*b (+) c: {r1} vs {r2}", m, 1, [ieee_sum(r1), ieee_sum(r2)],
                         _ne_all(f"ieee-{r1}", [f"ieee-{r2}"]), solver=ctx.solver, timeout=ctx.timeout))
    hyps = [tc("sm70", m)] + [ieee_sum(rm) for rm in MODES]
    none = ask("sm70 differs from RNE, RZ, RU and RD", m, 1, hyps, _ne_all("sm70", [h.name for h in hyps[1:]]),
               solver=ctx.solver, timeout=ctx.timeout)
    detail = "6 pairwise separating inputs (the paper's test generation) and one input on which sm70 is no IEEE mode"
    if none.witness is not None:
        detail += ": " + ", ".join(f"{k} {_show('fp32', v)}" for k, v in none.outputs.items())
    return _outcome("rounding-of-accumulator", "001 Table 4", "sat", [none] + found, m, detail + ".", ctx)


@claim("rounding-of-accumulator-model", source="001 §4.2 / §5 Alg. 1 steps 3, 7 (truncation)", models=("sm70",),
       expected="holds", group="table4",
       summary="with a, b, c >= 0 the Volta model never exceeds RD(a*b + c): truncation never rounds up")
def rounding_of_accumulator_model(ctx: Context) -> Outcome:
    m = sm70_f16f32()
    f32 = get_format("fp32")
    hyps = [tc("sm70", m), ieee_sum("rd", nominal=True)]  # the product placed as sm70 places it: 12.2 s -> 3.4-3.9 s
    f = ask("a,b,c >= 0: sm70 > RD(a*b + c)", m, 1, hyps,
            lambda alg, x, o: [alg.lt(value_key(alg, f32, o["ieee-rd"]), value_key(alg, f32, o["sm70"]))],
            domain=Domain(nonneg=True), **_proving(ctx))
    return _holds(_outcome("rounding-of-accumulator-model", "001 §4.2", "unsat", [f], m,
                           "unsat (K=1 as the paper's two-input query, a, b, c >= 0, subnormals included): "
                           "sm70 <= RD(a*b + c): on effective additions the truncating accumulator never rounds up. "
                           "RD(a*b + c) is an FMA that places the product at e_a + e_b unnormalized, as sm70 does "
                           "(the same bits as the normalized FMA: tests/test_fma_nominal.py).", ctx))


# -- 5. accumulation order (Property 3) -----------------------------------------------------------------


def _seq(order: str) -> Hyp:
    """Property 3: (p0 (+)rz p1) (+)rz p2 ("left") or p0 (+)rz (p1 (+)rz p2) ("right"), exact FP32 products."""
    def fn(alg: Algebra, a: Sequence[Int], b: Sequence[Int], c: Int) -> Int:
        p = [mul_rm(alg, x, y, "fp16", "fp16", "fp32", "rz") for x, y in zip(a, b)]
        if order == "left":
            return add_rm(alg, add_rm(alg, p[0], p[1], "fp32", "rz"), p[2], "fp32", "rz")
        return add_rm(alg, p[0], add_rm(alg, p[1], p[2], "fp32", "rz"), "fp32", "rz")
    return Hyp(f"sequential-{order}", "fp32", fn)


@claim("accumulation-order", source="001 Table 4 row 'Accumulation Order' (§4.3, Property 3)", models=("sm70",),
       expected="sat", group="table4",
       summary="three products whose sequential RZ sum depends on the association; the Volta model gives one answer")
def accumulation_order(ctx: Context) -> Outcome:
    m = sm70_f16f32()
    f = ask("(p0+p1)+p2 != p0+(p1+p2) in RZ", m, 3, [_seq("left"), _seq("right")],
            _ne_all("sequential-left", ["sequential-right"]), domain=C0, solver=ctx.solver, timeout=ctx.timeout)
    detail = "Property 3 with C = 0."
    if f.witness is not None:
        w = f.witness
        d1, d2 = _run(m, w.a, w.b, w.c), _run(m, (w.a[1], w.a[2], w.a[0]), (w.b[1], w.b[2], w.b[0]), w.c)
        detail += (f" sm70 on lanes (0,1,2): {_show('fp32', d1)}, on (1,2,0): {_show('fp32', d2)} "
                   f"({'the same' if d1 == d2 else 'DIFFERENT'}).")
    return _outcome("accumulation-order", "001 Table 4", "sat", [f], m, detail, ctx)


@claim("accumulation-order-model", source="001 §4.3 ('the result does not depend on the order of the terms')",
       models=("sm70",), expected="holds", group="table4",
       summary="sm70 f16f32 (K=4): every adjacent transposition of the products leaves D unchanged (3 proofs)")
def accumulation_order_model(ctx: Context) -> Outcome:
    m = sm70_f16f32()
    found = transposition_proofs(m, 4, ctx)
    return _holds(_outcome("accumulation-order-model", "001 §4.3", "unsat", found, m,
                           "unsat for each of the 3 adjacent transpositions (they generate every permutation). Each "
                           "chain runs the model twice, on the lanes and on the swapped lanes (no operand order "
                           "canonicalized), proves equal e_max, asserts instances of lemmas proved on fresh variables "
                           "(equal summands at equal e_max, the sum unchanged by the swap, equal sums round alike), "
                           "and proves D = D_swapped.", ctx))


# -- 6. normalization (Property 4) ------------------------------------------------------------------------


def _normalizing() -> Hyp:
    """Property 4's left side: (a0*b0 (+)rz a1*b1) (+)rz c, each partial sum normalized."""
    def fn(alg: Algebra, a: Sequence[Int], b: Sequence[Int], c: Int) -> Int:
        p = [mul_rm(alg, x, y, "fp16", "fp16", "fp32", "rz") for x, y in zip(a, b)]
        return add_rm(alg, add_rm(alg, p[0], p[1], "fp32", "rz"), c, "fp32", "rz")
    return Hyp("normalizing", "fp32", fn)


@claim("no-normalization", source="001 Table 4 row 'Normalization' (§4.3, Property 4)", models=("sm70",),
       expected="sat", group="table4",
       summary="positive a, b, c on which normalizing partial sums differs from the Volta model's single normalization")
def no_normalization(ctx: Context) -> Outcome:
    m = sm70_f16f32()

    def positive(alg: Algebra, x: Inputs, o: dict[str, Int]) -> list[Bool]:
        nz = [alg.not_(unpack(alg, get_format(fmt), v).is_zero) for v, fmt in
              [(v, "fp16") for v in x.a + x.b] + [(x.c, "fp32")]]
        return nz + [alg.ne(o["sm70"], o["normalizing"])]
    f = ask("no-normalize-sum != normalized sum", m, 2, [tc("sm70", m), _normalizing()], positive,
            domain=Domain(nonneg=True), solver=ctx.solver, timeout=ctx.timeout)
    detail = "Property 4 (a1, a2, b1, b2, c > 0)."
    if f.witness is not None:
        detail += f" sm70 {_show('fp32', f.outputs['sm70'])}, normalizing {_show('fp32', f.outputs['normalizing'])}."
    return _outcome("no-normalization", "001 Table 4", "sat", [f], m, detail, ctx)


@claim("no-normalization-model", source="001 §4.3 / §5 Alg. 1 steps 4-7 (no-normalize-sum, 3 carry bits)",
       models=("sm70",), expected="holds", group="table4",
       summary="on Property 4's domain (two products and C, positive) the unbounded fused sum equals the paper's "
               "27-bit no-normalize register")
def no_normalization_model(ctx: Context) -> Outcome:
    m = sm70_f16f32()
    f = _dist("two products + c >= 0: unbounded register == 3 carry bits above the leading 1 (carry_bits=2)",
              m, m.replace(carry_bits=2), 2, Domain(nonneg=True), ctx)
    return _holds(_outcome("no-normalization-model", "001 §4.3", "unsat", [f], m,
                           "unsat (K=2, a, b, c >= 0): one normalization after the fused sum, in the paper's register "
                           "(3 bits above the leading 1 = smtmma carry_bits=2), loses nothing.", ctx))


# -- 7. subnormal inputs and outputs (§4.4) ---------------------------------------------------------------


def _subnormal(alg: Algebra, fmt: str, x: Int) -> Bool:
    u = unpack(alg, get_format(fmt), x)
    return alg.and_(alg.not_(u.is_zero), alg.lt(u.sig, 1 << get_format(fmt).man_bits))


def _normal(alg: Algebra, fmt: str, x: Int) -> Bool:
    u = unpack(alg, get_format(fmt), x)
    return alg.le(1 << get_format(fmt).man_bits, u.sig)


@claim("subnormal-inputs", source="001 Table 4 row 'Subnormal FP16 Inputs' (§4.4)", models=("sm70",), expected="sat",
       group="table4", summary="a subnormal FP16 input whose product is a normal FP16: flushing inputs would change D")
def subnormal_inputs(ctx: Context) -> Outcome:
    m = sm70_f16f16()
    hyps = [tc("sm70", m), tc("input FTZ", m.replace(ftz_inputs=True))]
    f = ask("a0 subnormal, a0*b0 normal: sm70 != inputs flushed", m, 1, hyps,
            lambda alg, x, o: [_subnormal(alg, "fp16", x.a[0]), _normal(alg, "fp16", o["sm70"]),
                               alg.ne(o["sm70"], o["input FTZ"])], domain=C0, solver=ctx.solver, timeout=ctx.timeout)
    return _outcome("subnormal-inputs", "001 Table 4", "sat", [f], m,
                    "f16f16, K=1, C=0 (two subnormals cannot give a normal FP16 product; one can): the catalogue keeps "
                    "the subnormal, as the paper's hardware did.", ctx, show={h.name: "fp16" for h in hyps})


@claim("subnormal-inputs-model", source="001 §4.4 ('tensor cores fully support subnormal numbers')",
       models=("sm70", "sm75", "sm80"), expected="holds", group="table4",
       summary="a product with a subnormal FP16 input is exact (never flushed), Volta/Turing/Ampere")
def subnormal_inputs_model(ctx: Context) -> Outcome:
    found = []
    for arch in ("sm70", "sm75", "sm80"):
        m = model_of(arch, "f16f32")
        found.append(ask(f"{arch}: a0 subnormal, a0*b0 != exact", m, 1, [tc("m", m), _product("rne", "fp32")],
                         lambda alg, x, o: [_subnormal(alg, "fp16", x.a[0]),
                                            _differ(alg, "fp32", o["m"], o["rne-fp32(a0*b0)"])],
                         domain=C0, **_proving(ctx)))
    return _holds(_outcome("subnormal-inputs-model", "001 §4.4", "unsat", found, sm70_f16f32(),
                           "unsat for sm70, sm75, sm80 (f16f32, K=1, C=0, a0 subnormal).", ctx))


@claim("subnormal-outputs", source="001 Table 4 row 'Subnormal FP16 Outputs' (§4.4)", models=("sm70",), expected="sat",
       group="table4", summary="normal FP16 inputs whose product is subnormal: flushing the output would change D")
def subnormal_outputs(ctx: Context) -> Outcome:
    m = sm70_f16f16()
    flushed = Hyp("output FTZ", "fp16", lambda alg, a, b, c: flush_subnormal(alg, get_format("fp16"),
                                                                            run_model(alg, m, list(a), list(b), c)))
    f = ask("a0, b0 normal, D subnormal: sm70 != output flushed", m, 1, [tc("sm70", m), flushed],
            lambda alg, x, o: [_normal(alg, "fp16", x.a[0]), _normal(alg, "fp16", x.b[0]),
                               _subnormal(alg, "fp16", o["sm70"]), alg.ne(o["sm70"], o["output FTZ"])],
            domain=C0, solver=ctx.solver, timeout=ctx.timeout)
    return _outcome("subnormal-outputs", "001 Table 4", "sat", [f], m,
                    "f16f16, K=1, C=0: the catalogue returns the subnormal, as the paper's hardware did.", ctx,
                    show={"sm70": "fp16", "output FTZ": "fp16"})


@claim("subnormal-outputs-model", source="001 §4.4 (subnormal outputs; FP32 via a subnormal C)",
       models=("sm70", "sm75", "sm80"), expected="holds", group="table4",
       summary="normal FP16 inputs give RNE-FP16 of the product, subnormal or not; a subnormal FP32 C passes through")
def subnormal_outputs_model(ctx: Context) -> Outcome:
    found = []
    for arch in ("sm70", "sm75", "sm80"):
        m = model_of(arch, "f16f16")
        found.append(ask(f"{arch} f16f16: a0, b0 normal, D != RNE-FP16(exact)", m, 1, [tc("m", m), _product("rne", "fp16")],
                         lambda alg, x, o: [_normal(alg, "fp16", x.a[0]), _normal(alg, "fp16", x.b[0]),
                                            _differ(alg, "fp16", o["m"], o["rne-fp16(a0*b0)"])],
                         domain=C0, **_proving(ctx)))
        m32 = model_of(arch, "f16f32")
        found.append(ask(f"{arch} f16f32: zero products, C subnormal, D != C", m32, 1, [tc("m", m32)],
                         lambda alg, x, o: [_subnormal(alg, "fp32", x.c), _differ(alg, "fp32", o["m"], x.c)],
                         domain=Domain(fixed=(("a0", 0),)), **_proving(ctx)))
    return _holds(_outcome("subnormal-outputs-model", "001 §4.4", "unsat", found, sm70_f16f16(),
                           "unsat for sm70, sm75, sm80: gradual underflow of FP16 results, subnormal FP32 results "
                           "kept.", ctx))


# -- 8. the SMT paper's own Volta model against the catalogue's sm70 --------------------------------------


def paper_volta() -> Hyp:
    """pyxis-roc/tensor_core_semantics smt/fp_add.py ``fp_add(5, 3)``: exact products as normalized FP32 values, aligned
    at the largest FP32 exponent among them and C, shifted bits discarded, one truncating normalization.

    Built from the catalogue's ops: the exact FP32 product (IEEE multiply, exact), then an FP32-input T-FDPA
    (F = 23, RZ) of the products times 1.0: its e_max is the largest *normalized* exponent.
    """
    m = Model("t-fdpa", "fp32", "fp32", "fp32", "fp32", L=4, F=23, rho="rz-fp32", nan="nvidia")
    one = 0x3F800000
    return Hyp("SMT paper fp_add(5,3)", "fp32", lambda alg, a, b, c: run_model(
        alg, m, [mul_rm(alg, x, y, "fp16", "fp16", "fp32", "rz") for x, y in zip(a, b)], [alg.const(one)] * len(a), c))


#: index.html "Rounding of Intermediate Sums", the fifth row: a1, b1, c and the result the hardware matched (RNE)
#: and the one it did not (RTN).
PUBLISHED_ROW = ("1.7060546875*2^15", "-1.7646484375*2^13", "1.9970703125*2^8",
                 "-1.5052924156188965*2^29", "-1.505292534828186*2^29")


@claim("volta-alignment-vs-smt-paper", source="001 §5 Alg. 1 and pyxis-roc/tensor_core_semantics (smt/fp_add.py, "
       "index.html 'Rounding of Intermediate Sums' row 5)", models=("sm70",), expected="the paper's model == hardware",
       group="smt-paper", summary="an input on which the SMT paper's Volta model and sm70 differ, and the paper's own "
       "published hardware row that decides between them")
def volta_alignment(ctx: Context) -> Outcome:
    m = sm70_f16f32()
    hyps = [tc("sm70", m), paper_volta()]
    f = ask("sm70 != the SMT paper's fp_add(5,3)", m, 4, hyps, _ne_all("sm70", ["SMT paper fp_add(5,3)"]),
            domain=Domain(subnormals=False), solver=ctx.solver, timeout=ctx.timeout)
    a1, b1, c, hw, other = PUBLISHED_ROW
    w = Witness((paper_value("fp16", a1), 0, 0, 0), (paper_value("fp16", b1), 0, 0, 0), paper_value("fp32", c))
    outs, _ = evaluate(m, hyps, w)
    hw_v = Fraction(hw.split("*")[0]) * Fraction(2) ** 29
    near = {k: abs(to_fraction("fp32", v) - hw_v) for k, v in outs.items()}
    side = min(near, key=near.__getitem__)
    verdict = f"hardware sides with {side}"
    detail = (f"The paper's model aligns at the largest normalized FP32 exponent (a product 1.xx*2^(e+1) when its "
              f"significand product is >= 2), sm70 (MMA-Sim Alg. 7) at the largest e_a + e_b, keeping one more bit. "
              f"Published row (index.html, Rounding of Intermediate Sums, row 5: a1={a1}, b1={b1}, c={c}; hardware "
              f"{hw}, not {other}): sm70 {_show('fp32', outs['sm70'])}, the paper's model "
              f"{_show('fp32', outs['SMT paper fp_add(5,3)'])}. Carry bits: the paper's '3' counts integer bits above "
              f"1 (a 27-bit register), smtmma's carry_bits above 2 (so 3 there is carry_bits=2 here).")
    rec = None
    if f.witness is not None:
        detail += (f" Solver's input (normal values): sm70 {_show('fp32', f.outputs['sm70'])}, paper "
                   f"{_show('fp32', f.outputs['SMT paper fp_add(5,3)'])}.")
        rec = witness_record(m, f.witness, {k: ("fp32", v) for k, v in f.outputs.items()})
    blocks = [f.block] if f.block is not None else []
    return Outcome(verdict, side != "sm70" if f.verdict == "sat" else None, f.solver, rec, detail,
                   certificate("volta-alignment-vs-smt-paper", "001 / tensor_core_semantics", ["sm70"], verdict,
                               f.solver, blocks, rec))
