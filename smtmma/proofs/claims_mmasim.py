"""Claims of the MMA-Sim paper (000): Table 8 / Eq. 10 discrepancies, more of them, and Table 10's risky designs."""

from __future__ import annotations

import time
from fractions import Fraction
from typing import Any

from ..catalogue import model_of
from ..formats import from_fraction, get_format, to_fraction
from ..gemm import instruction_k
from ..models import Model
from ..queries.backends import solve
from ..queries.distinguish import Witness, distinguish
from ..queries.formula import Domain
from .mmasim_common import (
    container,
    exact_value,
    fixed_output_block,
    pair_query,
    sim,
    ulps,
)
from ..proof_kernel.blocks import Block
from .claim import Context, Outcome, claim
from .evidence import certificate, witness_record

F = Fraction
P2 = lambda e: F(2) ** e

# -- Table 8 -------------------------------------------------------------------------------------------

#: 000 Eq. (10): a = (-2^13, -0.5, -0.25, -0.125, 0, ...), b = (2^10, 1, 1, 1, 0, ...), c = 2^23.
EQ10_A = (-P2(13), F(-1, 2), F(-1, 4), F(-1, 8))
EQ10_B = (P2(10), F(1), F(1), F(1))
EQ10_C = P2(23)
_SPLIT = ((13, 10), (-1, 0), (-2, 0), (-3, 0))  # exponents of (|a_k|, b_k) in Eq. 10

#: 000 Table 8, cell by cell: (row, column, arch, instr, op, d_00).  "0.0" is +0 (NVIDIA never returns -0, 001 §4.4;
#: on CDNA2 it is the RNE sum 2^23 + (-2^23)).  CDNA2 "-0.375 or 0.0": BF16 without / with "_1k" (000 §5).
TABLE8: tuple[tuple[str, str, str, str, str | None, Fraction], ...] = (
    ("Volta", "FP16", "sm70", "f16f32", "mma", F(0)),
    ("Turing", "FP16", "sm75", "f16f32", "mma", F(-1, 2)),
    ("Ampere", "TF32/BF16", "sm80", "tf32f32", "mma", F(-1, 2)),
    ("Ampere", "TF32/BF16", "sm80", "bf16f32", "mma", F(-1, 2)),
    ("Ampere", "FP16", "sm80", "f16f32", "mma", F(-1, 2)),
    ("Ada Lovelace", "TF32/BF16", "sm89", "tf32f32", "mma", F(-1, 2)),
    ("Ada Lovelace", "TF32/BF16", "sm89", "bf16f32", "mma", F(-1, 2)),
    ("Ada Lovelace", "FP16", "sm89", "f16f32", "mma", F(-1, 2)),
    ("Ada Lovelace", "FP8", "sm89", "e4m3e4m3f32", "mma", F(0)),
    ("Hopper", "TF32/BF16", "sm90", "tf32f32", "wgmma", F(-3, 4)),
    ("Hopper", "TF32/BF16", "sm90", "bf16f32", "wgmma", F(-3, 4)),
    ("Hopper", "FP16", "sm90", "f16f32", "wgmma", F(-3, 4)),
    ("Hopper", "FP8", "sm90", "e4m3e4m3f32", "wgmma", F(0)),
    ("Blackwell", "TF32/BF16", "sm100", "tf32f32", "tcgen05", F(-3, 4)),
    ("Blackwell", "TF32/BF16", "sm100", "bf16f32", "tcgen05", F(-3, 4)),
    ("Blackwell", "FP16", "sm100", "f16f32", "tcgen05", F(-3, 4)),
    ("Blackwell", "FP8", "sm100", "e4m3e4m3f32", "tcgen05", F(-3, 4)),
    ("RTX Blackwell", "TF32/BF16", "sm120", "tf32f32", "mma", F(-3, 4)),
    ("RTX Blackwell", "TF32/BF16", "sm120", "bf16f32", "mma", F(-3, 4)),
    ("RTX Blackwell", "FP16", "sm120", "f16f32", "mma", F(-3, 4)),
    ("RTX Blackwell", "FP8", "sm120", "e4m3e4m3f32", "mma", F(-3, 4)),
    ("CDNA1", "TF32/BF16", "gfx908", "bf16f32", "mfma", F(-7, 8)),
    ("CDNA1", "FP16", "gfx908", "f16f32", "mfma", F(-7, 8)),
    ("CDNA2", "TF32/BF16", "gfx90a", "bf16f32", "mfma", F(-3, 8)),
    ("CDNA2", "TF32/BF16", "gfx90a", "bf16f32", "mfma_1k", F(0)),
    ("CDNA2", "FP16", "gfx90a", "f16f32", "mfma", F(0)),
    ("CDNA3", "TF32/BF16", "gfx942", "tf32f32", "mfma", F(-1, 2)),
    ("CDNA3", "TF32/BF16", "gfx942", "bf16f32", "mfma", F(-1, 2)),
    ("CDNA3", "FP16", "gfx942", "f16f32", "mfma", F(-1, 2)),
    ("CDNA3", "FP8", "gfx942", "fp8fp8f32", "mfma", F(-1)),
    # Table 8's caption: "all FP64/FP32 instructions produce d_00 = -0.875" (simulated, not in the certificate)
    ("caption", "FP32", "gfx908", "f32f32", "mfma", F(-7, 8)),
    ("caption", "FP32", "gfx942", "f32f32", "mfma", F(-7, 8)),
    ("caption", "FP64", "gfx90a", "f64f64", "mfma", F(-7, 8)),
    ("caption", "FP64", "sm80", "f64f64", "mma", F(-7, 8)),
    ("caption", "FP64", "sm90", "f64f64", "mma", F(-7, 8)),
)


def _normal_pow2(fmt: str, e: int) -> bool:
    f = get_format(fmt)
    return f.emin <= e <= f.emax


def eq10_input(model: Model) -> tuple[tuple[Fraction, ...], tuple[Fraction, ...], Fraction, int]:
    """(a, b, c, s): Eq. 10 when representable (s = 0), else the same input scaled by 2^-s.

    The pattern is scale invariant as long as every value stays normal (each model commutes with multiplying
    c and every product by 2^-s); s is the smallest shift for which c and a split of each product into normal
    powers of two of A's and B's formats exist (e4m3: s = 7; e4m3fnuz: s = 9).  d scales by 2^-s.
    """
    fa, fb, fc = model.a_fmt, model.b_fmt, model.c_fmt
    for s in range(40):
        if not _normal_pow2(fc, 23 - s):
            continue
        splits = []
        for pa, pb in _SPLIT:
            t = pa + pb - s
            cands = [(abs(ea - pa) + abs(t - ea - pb), ea) for ea in range(get_format(fa).emin, get_format(fa).emax + 1)
                     if _normal_pow2(fb, t - ea)]
            if not cands:
                break
            ea = min(cands)[1]
            splits.append((ea, t - ea))
        else:
            a = tuple(-P2(ea) for ea, _ in splits)
            b = tuple(P2(eb) for _, eb in splits)
            return a, b, P2(23 - s), s
    raise AssertionError(f"no Eq. 10 input for {model.describe()}")


def eq10_witness(model: Model, K: int) -> tuple[Witness, int]:
    """The Eq. 10 input (scaled by 2^-s) as bit patterns on K lanes (zeros after lane 3), and s."""
    a, b, c, s = eq10_input(model)
    wa = tuple(from_fraction(model.a_fmt, x) for x in a) + (0,) * (K - 4)
    wb = tuple(from_fraction(model.b_fmt, x) for x in b) + (0,) * (K - 4)
    return Witness(wa, wb, from_fraction(model.c_fmt, c)), s


def one_fdpa_k(model: Model) -> int:
    """Lanes of one step of the model (L, P), at least Eq. 10's 4."""
    return max(4, model.L or model.P or 4)


def _model(arch: str, instr: str, op: str | None) -> Model:
    return model_of(arch, instr, op)


def table8_rows() -> list[dict[str, Any]]:
    """Each Table 8 cell simulated on Eq. 10: at one FDPA's K and at the instruction's k (both must match)."""
    rows = []
    for row, col, arch, instr, op, value in TABLE8:
        m = _model(arch, instr, op)
        fd = container(m)
        results = {}
        for K in sorted({one_fdpa_k(m), max(4, instruction_k(arch, instr, op))}):
            w, s = eq10_witness(m, K)
            results[K] = sim(m, w)
        want = from_fraction(fd, value * P2(-s))
        got = sorted(set(results.values()))
        rows.append({"row": row, "column": col, "arch": arch, "instr": instr, "op": op, "model": m.describe(),
                     "scale": s, "table": str(value), "want_bits": want,
                     "got": {K: f"{v:#x} ({to_fraction(fd, v) * P2(s) if isinstance(to_fraction(fd, v), F) else v})"
                             for K, v in results.items()},
                     "match": got == [want]})
    return rows


@claim("table8-discrepancy", source="000 §5 Table 8, Eq. 10",
       models=tuple(f"{a} {i}" + (f" ({o})" if o not in ("mma", "mfma") else "") for _, _, a, i, o, _ in TABLE8),
       expected="holds", group="mmasim",
       summary="the Eq. 10 input gives exactly Table 8's d_00 on every architecture and input type")
def table8_discrepancy(ctx: Context) -> Outcome:
    rows = table8_rows()
    bad = [r for r in rows if not r["match"]]
    # Certificate: per Table 8 row (architecture), its FP16 cell (every row has one) with Eq. 10 pinned on one FDPA's
    # lanes, asserting d != Table 8's value: unsat.
    # Rows whose FP16 models are one arithmetic (same catalogue parameters: Turing = Ampere = Ada Lovelace,
    # Hopper = Blackwell = RTX Blackwell) share a block, labelled with every row it covers (keeps the file small).
    groups: dict[Model, list[tuple[str, str, Fraction]]] = {}
    for row, col, arch, instr, op, value in TABLE8:
        if col == "FP16":
            groups.setdefault(_model(arch, instr, op), []).append((row, arch, value))
    blocks: list[Block] = []
    for m, cells in groups.items():
        values = {v for _, _, v in cells}
        assert len(values) == 1, cells  # one arithmetic cannot give two values on one input
        value = values.pop()
        w, s = eq10_witness(m, one_fdpa_k(m))
        want = from_fraction(container(m), value * P2(-s))
        rows_txt = ", ".join(f"{r} ({a})" for r, a, _ in cells)
        blocks.append(fixed_output_block(f"{rows_txt} f16f32 = {m.describe()}: Eq. 10 gives d = {value} (Table 8)",
                                         m, w, want))
    solver = ""
    failed_blocks = []
    for b in blocks:
        r = solve(b.text, (), solver=ctx.solver, timeout=ctx.timeout, seed=ctx.seed)
        solver = r.solver or solver
        if r.verdict != "unsat":
            failed_blocks.append(f"{b.label}: {r.verdict}")
    ok = not bad and not failed_blocks
    verdict = "holds" if ok else "fails: " + "; ".join(
        [f"{r['row']} {r['column']} {r['arch']} {r['instr']}: table {r['table']}, model {r['got']}" for r in bad]
        + failed_blocks)
    detail = (f"000 Table 8: {len(rows) - len(bad)}/{len(rows)} cells (incl. the caption's FP32/FP64 '-0.875') match "
              "the catalogue models on Eq. 10, simulated at one FDPA's lanes and at the instruction's k; e4m3/fnuz "
              "cells use Eq. 10 scaled by 2^-s (s = 7 / 9). Certificate: one block per FP16 model (rows sharing one "
              f"model share its block), inputs pinned, 'd != table value' unsat ({len(blocks) - len(failed_blocks)}/{len(blocks)}).")
    cert = certificate("table8-discrepancy", "000 §5 Table 8, Eq. 10", [r["arch"] + " " + r["instr"] for r in rows],
                       "holds" if ok else "fails", solver, blocks)
    return Outcome("holds" if ok else verdict, ok, solver, None, detail, cert, extra={"rows": rows})


# -- more discrepancy than Eq. 10 ------------------------------------------------------------------

#: The FP16 column of Table 8: every architecture has an f16f32 instruction (the op Table 8 measured).
FP16_ARCHS: tuple[tuple[str, str], ...] = (
    ("sm70", "mma"), ("sm75", "mma"), ("sm80", "mma"), ("sm89", "mma"), ("sm90", "wgmma"), ("sm100", "tcgen05"),
    ("sm120", "mma"), ("gfx908", "mfma"), ("gfx90a", "mfma"), ("gfx942", "mfma"))
MAXD_K = 16  # one FDPA of Hopper/Blackwell (L = 16); the other models chain FDPAs over it


@claim("max-discrepancy", source="000 §5 Table 8 (FP16 column)",
       models=tuple(f"{a} f16f32" for a, _ in FP16_ARCHS), expected="more than Table 8", group="mmasim",
       summary="a solver-found input gives more distinct f16f32 outputs across Table 8's architectures than Eq. 10")
def max_discrepancy(ctx: Context) -> Outcome:
    models = [model_of(a, "f16f32", o) for a, o in FP16_ARCHS]
    names = [a for a, _ in FP16_ARCHS]
    w10, _ = eq10_witness(models[0], MAXD_K)
    eq10_outs = [sim(m, w10) for m in models]
    n10 = len(set(eq10_outs))
    r = distinguish(models, names, K=MAXD_K, solver=ctx.solver, timeout=ctx.timeout, seed=ctx.seed)
    classes = r.classes or [[n] for n in names]
    if r.verdict != "sat" or r.witness is None:
        return Outcome("unknown", None, r.solver, None, f"distinguish gave {r.verdict}: {r.reason}")
    got = [sim(m, r.witness) for m in models]  # replay through the NumPy simulator
    assert got == [r.outputs[n] for n in names]
    n = len(set(got))
    fd = get_format("fp32")
    outs = {nm: (fd.name, v) for nm, v in zip(names, got)}
    wit = witness_record(models[0], r.witness, outs)
    blocks = [Block(f"{n} pairwise-different outputs of one representative per class, inputs pinned", r.smt2, "sat")]
    # Upper bound: the models of one class are one arithmetic (same parameters); the solver checks each pair
    # on two separately built encodings (no sharing of terms made in Python), so no input splits them.
    # One lemma per class: its first two members; the others are equal Model values (the same parameters, so
    # byte-identical encodings), which keeps the file small.
    for cls in classes:
        rep = names.index(cls[0])
        assert all(models[names.index(o)] == models[names.index(cls[1])] for o in cls[1:])
        for other in cls[1:2]:
            j = names.index(other)
            pair = distinguish([models[rep], models[j]], [cls[0], other], K=MAXD_K, solver=ctx.solver,
                               timeout=ctx.timeout, seed=ctx.seed, check_domain=False)
            if pair.verdict != "unsat":
                return Outcome("unknown", None, r.solver, wit, f"class {cls} not proved equal: {pair.verdict}")
            blocks.append(Block(f"{cls[0]} and {other} agree on every finite input (K={MAXD_K})", pair.smt2, "unsat"))
    verdict = f"{n} distinct (Eq. 10: {n10}); max {len(classes)}"
    detail = (f"000 Table 8's FP16 column has {n10} distinct values on Eq. 10 ({sorted({str(to_fraction(fd, v)) for v in eq10_outs})}); "
              f"the solver's input gives {n} distinct outputs at K={MAXD_K} (replayed through the simulator). "
              f"Classes of identical models: {' | '.join(' = '.join(c) for c in classes)}; the first two of each class are proved equal "
              f"(unsat; the rest are the same catalogue parameters, byte-identical encodings), so no input gives more than {len(classes)}: {n} is the maximum.")
    cert = certificate("max-discrepancy", "000 §5 Table 8", [f"{a} f16f32" for a in names], verdict, r.solver, blocks,
                       wit)
    return Outcome(verdict, n > n10, r.solver, wit, detail, cert,
                   extra={"count": n, "eq10_count": n10, "max": len(classes), "classes": classes})


# -- Table 10: risky designs ----------------------------------------------------------------------


def _fp32_pos_finite(name: str) -> str:
    """SMT: ``name`` (an FP32 pattern) is a positive finite non-zero number."""
    return (f"(assert (and (= ((_ extract 31 31) {name}) #b0) (not (= ((_ extract 30 23) {name}) #xff)) "
            f"(not (= {name} #x00000000))))")


def _row(label: str, model: Model, w: Witness, outs: dict[str, tuple[Model, int]], note: str) -> dict[str, Any]:
    """A Table 10 row's witness: inputs, each output with its error vs exact (in ulps of its own format)."""
    exact = exact_value(model, w)
    rec = witness_record(model, w, {n: (container(m).name, bits) for n, (m, bits) in outs.items()})
    errs = {}
    for n, (m, bits) in outs.items():
        fo = get_format(m.d_fmt)
        v = to_fraction(container(m), bits)
        if not isinstance(v, F):
            errs[n] = {"value": str(v)}
            continue
        errs[n] = {"value": _g(v), "error": _g(v - exact), f"ulps_{fo.name}": _g(ulps(fo, v, exact)),
                   "ulps_fp32": _g(ulps(get_format("fp32"), v, exact))}
    return {"row": label, "exact": _g(exact), "witness": rec, "errors": errs, "note": note}


def _g(x: Fraction) -> str:
    """A value for reports: exact when short (dyadic, few digits), else 10 significant digits."""
    text = str(x)
    return text if len(text) <= 12 else f"{float(x):.10g}"


def risky_rows(ctx: Context) -> tuple[list[dict[str, Any]], list[Block], str, list[str]]:
    """One solver witness per row of 000 Table 10, each replayed and measured against exact arithmetic."""
    rows: list[dict[str, Any]] = []
    blocks: list[Block] = []
    solver = ""
    missing: list[str] = []
    kw = {"solver": ctx.solver, "timeout": ctx.timeout, "seed": ctx.seed}

    def take(label: str, res: Any, model: Model, outs: dict[str, Model], note: str) -> None:
        nonlocal solver
        solver = res.solver or solver
        if res.verdict != "sat":
            missing.append(f"{label}: {res.verdict} {res.reason}")
            return
        from ..proof_kernel.blocks import pin_block
        from .evidence import witness_pins

        rows.append(_row(label, model, res.witness, {n: (m, res.outputs[n]) for n, m in outs.items()}, note))
        blocks.append(pin_block(label, res.script, witness_pins(model, res.witness), "sat"))

    # Row 1 (000 §6.2.1): CDNA2 FP16 input FTZ; safe = the same FTZ-AddMul without input flushing.
    # One lane, c = 0: d_risky = 0 while the product is >= 1.
    m = model_of("gfx90a", "f16f32", "mfma")
    safe = m.replace(ftz_inputs=False)
    res = pair_query([("d", m), ("d_safe", safe)], 4, Domain(lanes=1, fixed=(("c", 0),)),
                     ["(assert (= d #x00000000))", _fp32_pos_finite("d_safe"),
                      "(assert (bvuge ((_ extract 30 23) d_safe) #x7f))"], **kw)
    take("CDNA2 gfx90a f16f32: input FTZ (000 Table 10 row 1, §6.2.1)", res, m, {"d": m, "d_safe": safe},
         "a subnormal fp16 input is flushed: the product (>= 1) is lost; safe = no input FTZ")

    # Row 2 (000 §6.2.2): F = 13 in the fused sum of FP8 QMMA (Ada) / QGMMA (Hopper); safe = HMMA's F (24 / 25).
    for arch, op, f_safe in (("sm89", "mma", 24), ("sm90", "wgmma", 25)):
        m = model_of(arch, "e4m3e4m3f32", op)
        safe = m.replace(F=f_safe)
        K = m.L or 16
        # Non-negative inputs: truncation is one-sided, d <= d_safe <= exact; >= 16 E8M13 ulps (2^14 FP32 ulps)
        # asked on Ada; on Hopper's L = 32 FDPA, >= 8 with lanes 0..7 live (keeps the query at ~10 s, not ~50 s).
        lanes, gap = (16, 0x4000) if K <= 16 else (8, 0x2000)
        res = pair_query([("d", m), ("d_safe", safe)], K, Domain(nonneg=True, lanes=lanes), [
            _fp32_pos_finite("d"), _fp32_pos_finite("d_safe"), "(assert (bvuge d_safe d))",
            f"(assert (bvuge (bvsub d_safe d) #x{gap:08x}))"], **kw)
        take(f"{arch} e4m3e4m3f32: F = 13 (000 Table 10 row 2, §6.2.2)", res, m, {"d": m, "d_safe": safe},
             f"fused sum truncated at F = 13; safe = F = {f_safe} (its HMMA/HGMMA), same RZ-E8M13 output: "
             f"d_safe - d >= {gap >> 10} E8M13 ulps asked, non-negative inputs")

    # Row 3 (000 §6.2.3): RZ-E8M13 output of FP8 QMMA/QGMMA with FP32 output; safe = RZ-FP32.
    for arch, op in (("sm89", "mma"), ("sm90", "wgmma")):
        m = model_of(arch, "e4m3e4m3f32", op)
        safe = m.replace(rho="rz-fp32")
        K = m.L or 16
        res = pair_query([("d", m), ("d_safe", safe)], K, Domain(), [
            _fp32_pos_finite("d"), _fp32_pos_finite("d_safe"), "(assert (bvuge d_safe d))",
            "(assert (bvuge (bvsub d_safe d) #x00000300))"], **kw)  # >= 0.75 E8M13 ulp (768 FP32 ulps)
        take(f"{arch} e4m3e4m3f32: rho = RZ-E8M13 (000 Table 10 row 3, §6.2.3)", res, m, {"d": m, "d_safe": safe},
             "output truncated to 13 fraction bits; safe = RZ-FP32, same F = 13: d_safe - d >= 768 FP32 ulps asked")

    # Row 4 (000 §6.2.3): RNE-FP16 output (all NVIDIA; here Hopper HMMA f16f16); safe = the same T-FDPA into FP32
    # (fp16 C widened exactly, as f16f32c16 does).  Asked: the FP32 result lies exactly half an fp16 ulp off the
    # fp16 grid (low 13 bits 0x1000, fp16-normal exponent), so RNE-FP16 errs by 0.5 ulp_fp16 = 4096 FP32 ulps.
    m = model_of("sm90", "f16f16", "mma")
    safe = m.replace(d_fmt="fp32", rho="rz-fp32")
    res = pair_query([("d", m), ("d_safe", safe)], m.L or 16, Domain(), [
        _fp32_pos_finite("d_safe"), "(assert (= ((_ extract 12 0) d_safe) #b1000000000000))",
        "(assert (bvuge ((_ extract 30 23) d_safe) #x71))", "(assert (bvule ((_ extract 30 23) d_safe) #x8e))"], **kw)
    take("sm90 f16f16: rho = RNE-FP16 (000 Table 10 row 4, §6.2.3)", res, m, {"d": m, "d_safe": safe},
         "FP16 output: 0.5 ulp_fp16 = 4096 FP32 ulps from the FP32-output result; safe = RZ-FP32 output")

    # Row 5 (000 §6.2.4): CDNA3 asymmetry (round-down in TR-FDPA): Phi(-A, B, -C) != -Phi(A, B, C), non-zero values.
    m = model_of("gfx942", "f16f32", "mfma")
    res = pair_query([("d", m)], m.L or 8, Domain(), [
        "(assert (not (= d_neg (bvxor d #x80000000))))",
        "(assert (not (= ((_ extract 30 0) d) #b0000000000000000000000000000000)))",
        "(assert (not (= ((_ extract 30 0) d_neg) #b0000000000000000000000000000000)))",
        "(assert (not (= ((_ extract 30 23) d) #xff)))", "(assert (not (= ((_ extract 30 23) d_neg) #xff)))"],
        negated=("d_neg", m), **kw)
    take("gfx942 f16f32: asymmetry (000 Table 10 row 5, §6.2.4)", res, m, {"d": m},
         "d_neg = Phi(-A, B, -C) is not -d (both non-zero): round-down makes the error sign-dependent")
    if res.verdict == "sat" and res.witness is not None:
        fa, fc = get_format(m.a_fmt), get_format(m.c_fmt)
        wn = Witness(tuple(x ^ fa.sign_mask for x in res.witness.a), res.witness.b, res.witness.c ^ fc.sign_mask)
        neg_row = _row("gfx942 f16f32 on (-A, B, -C)", m, wn, {"d_neg": (m, res.outputs["d_neg"])}, "the mirrored input")
        rows[-1]["mirrored"] = neg_row
    return rows, blocks, solver, missing


@claim("risky-designs", source="000 §6.2 Table 10",
       models=("gfx90a f16f32", "sm89 e4m3e4m3f32", "sm90 e4m3e4m3f32 (wgmma)", "sm90 f16f16", "gfx942 f16f32"),
       expected="holds", group="mmasim",
       summary="each risky design of Table 10 causes an error a safe variant avoids: one witness per row")
def risky_designs(ctx: Context) -> Outcome:
    t0 = time.perf_counter()
    rows, blocks, solver, missing = risky_rows(ctx)
    ok = not missing
    verdict = "holds" if ok else "unknown"
    lines = []
    for r in rows:
        e = r["errors"]["d"]
        lines.append(f"{r['row']}: exact {r['exact']}, d {e['value']} ({e['ulps_fp32']} FP32 ulps)")
    detail = ("000 Table 10, one solver witness per row (replayed; error vs exact in ulps in extra['rows']): "
              + "; ".join(lines) + (f"; no witness: {missing}" if missing else "") + f" [{time.perf_counter() - t0:.1f} s]")
    cert = certificate("risky-designs", "000 §6.2 Table 10", [r["row"] for r in rows], verdict, solver, blocks)
    return Outcome(verdict, True if ok else None, solver, rows[0]["witness"] if rows else None, detail, cert,
                   extra={"rows": rows})
