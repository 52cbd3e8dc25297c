"""Table 9 of MMA-Sim (000 §6.1): the error bound of one FDPA, proved on every finite input by a compositional proof.

``error-bound-<arch>-<instr>``: |Phi - exact| <= (L+1) 2^(e_max-F) + u ulp(Phi)
(u = 1 for RZ outputs, 1/2 for RNE), K = L, every exponent, outputs finite.
For one T-FDPA (and ST-FDPA) the proof is a chain of facts on the model's own
terms (per summand, per running sum, the glue and the output rounding; see
smtmma/op_proofs/tfdpa.py), every one a check-sat of the certificate, whose
last check is the query itself.  ``error-bound-tight-*``: the smallest multiple of the bound the
solver certifies (bisection: a proof at the constant, a witness below it).

CDNA3 TR-FDPA / GTR-FDPA (gfx942, Alg. 10 / 11): Table 9's e_max is E = max(e_max, e_c)
there (c joins the sum after the products' alignment); their chains (smtmma/op_proofs/trfdpa.py,
gtrfdpa.py) add facts for the round-down steps, the two groups and the dropped far c.
``cdna3-one-sided-bound``: the asymmetric interval round-down implies, exact - Phi in
[-(L 2^(E-F) + 1/2 ulp), (L+1) 2^(E-F) + 1/2 ulp] (TR) and [-((L+1/2) 2^(E-F) + 1/2 ulp), ...]
(GTR: a dropped negative c), the same chains with a one-sided last check (``error_bound(above=)``).

The other kinds' bounds are cells of the catalogue's property table (``smtmma prove --catalogue``).
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from ..catalogue import model_of
from ..queries.properties.error_bound import error_bound, error_facts, error_prover
from .claim import Claim, Context, Outcome, add_claim
from .evidence import certificate, query_blocks, witness_record

#: (arch, instr, op): the models whose Table 9 bound is claimed.
MODELS: tuple[tuple[str, str, str | None], ...] = (
    ("sm70", "f16f32", None),
    ("sm75", "f16f32", None),
    ("sm80", "f16f32", None),
    ("sm80", "bf16f32", None),
    ("sm80", "f16f16", None),
    ("sm89", "e4m3e4m3f32", None),
    ("sm90", "f16f32", None),
    ("sm90", "tf32f32", None),
    ("sm90", "e4m3e4m3f32", "wgmma"),
    ("sm100", "f16f32", None),
    ("sm120", "e4m3e4m3f32", None),
    ("gfx942", "f16f32", None),
    ("gfx942", "fp8fp8f32", None),
)

#: Models whose tightest constant is searched.
TIGHT: tuple[tuple[str, str, str | None], ...] = (("sm70", "f16f32", None), ("sm90", "f16f32", None))

SOURCE = "000 Table 9"

def _label(arch: str, instr: str, op: str | None) -> str:
    return f"{arch} {instr}" + (f" ({op})" if op else "")


def _bound_claim(arch: str, instr: str, op: str | None) -> Claim:
    name = f"error-bound-{arch}-{instr}" + (f"-{op}" if op else "")
    models = (_label(arch, instr, op),)

    def run(ctx: Context) -> Outcome:
        model = model_of(arch, instr, op)
        K = model.L or 1
        proved = error_prover(model, K) is not None or error_facts(model, K) is not None
        timeout = ctx.timeout if proved else min(ctx.timeout, 30.0)
        r = error_bound(model, name=models[0], K=K, solver=ctx.solver, timeout=timeout, seed=ctx.seed)
        agrees = None if r.verdict == "unknown" else r.verdict == "holds"
        wit = witness_record(model, r.witness, {"d": (model.d_fmt, r.outputs["d"])}) if r.witness else None
        how = ("a chain of facts on the model's own terms" if "lemmas" in r.extra else "compositional proof" if r.blocks
               else "no compositional proof for this kind yet (monolithic query)")
        detail = (f"|Phi - exact| <= {r.extra.get('bound')} (Table 9: (L+1)2^(e_max-F) + u ulp), K={K}: {r.verdict}; {how}"
                  + (f"; {r.reason}" if r.verdict != "holds" else f"; for {r.extra['scope']}")
                  + (f"; where {r.extra['symbols']}" if r.extra.get("symbols") else ""))
        blocks = query_blocks(r, name) if r.verdict != "unknown" else []
        cert = certificate(name, SOURCE, models, r.verdict, r.solver, blocks, wit)
        return Outcome(r.verdict, agrees, r.solver, wit, detail, cert, {"bound": r.extra.get("bound"), "blocks": len(blocks)})

    return Claim(name, SOURCE, models, "holds", f"Table 9's error bound holds for {models[0]} on every finite input", run,
                 "error-bound")


def _tight_claim(arch: str, instr: str, op: str | None) -> Claim:
    name = f"error-bound-tight-{arch}-{instr}"
    models = (_label(arch, instr, op),)

    def run(ctx: Context) -> Outcome:
        model = model_of(arch, instr, op)
        K = model.L or 1
        r = error_bound(model, name=models[0], K=K, solver=ctx.solver, timeout=ctx.timeout, seed=ctx.seed, tight=True,
                        resolution=Fraction(1, 8))
        tight = r.extra.get("tight")
        if tight is None:
            return Outcome("unknown", None, r.solver, detail=str(r.extra.get("tight_reason", r.reason)))
        if Fraction(str(tight)) == 1 and r.verdict == "holds":  # the bisection's own proof at scale 1 (its script)
            proof = replace(r, blocks=[b for b in r.blocks if b.expect != "sat"])
        else:
            proof = error_bound(model, name=models[0], K=K, solver=ctx.solver, timeout=ctx.timeout, seed=ctx.seed,
                                scale=Fraction(str(tight)))
        blocks = query_blocks(proof, name) if proof.verdict == "holds" else []
        blocks += [b for b in r.blocks if b.expect == "sat"]  # the witness just below, pinned (error/bound > attained)
        attained = Fraction(str(r.extra.get("attained")))
        detail = (f"smallest scale certified: {tight} x ({r.extra.get('bound')}) (proof); the largest error found "
                  f"reaches {float(attained):.4f} x the bound")
        if "attained_witness" in r.extra:
            detail += f" (a simulated input, confirmed by the solver: {r.extra['attained_witness']})"
        if r.extra.get("tight_reason"):
            detail += f"; bisection stopped, {r.extra['tight_reason']}"
        detail += "; resolution 1/8"
        verdict = f"scale {tight}"
        cert = certificate(name, SOURCE, models, verdict, r.solver, blocks)
        return Outcome(verdict, Fraction(str(tight)) <= 1, r.solver, None, detail, cert,
                       {"tight": str(tight), "attained": str(r.extra.get("attained"))})

    return Claim(name, SOURCE, models, "scale <= 1", "the tightest multiple of Table 9's bound the solver certifies",
                 run, "error-bound")


def _one_sided_claim() -> Claim:
    name = "cdna3-one-sided-bound"
    rows = (("gfx942", "f16f32"), ("gfx942", "fp8fp8f32"))
    models = tuple(_label(a, i, None) for a, i in rows)

    def run(ctx: Context) -> Outcome:
        from ..proof_kernel.blocks import Block

        blocks, lines, verdict, lemmas = [], [], "holds", 0
        for arch, instr in rows:
            model = model_of(arch, instr)
            L = model.L
            assert L is not None
            lo = Fraction(L) if model.kind == "tr-fdpa" else Fraction(2 * L + 1, 2)  # GTR: a dropped c < 0 (Alg. 11 l. 24-25)
            r = error_bound(model, name=_label(arch, instr, None), K=L, solver=ctx.solver, timeout=ctx.timeout, seed=ctx.seed,
                            fused=L + 1, above=lo)
            lines.append(f"{arch} {instr}: {r.extra.get('bound')}: {r.verdict} ({r.seconds:.1f} s"
                         + (f", {r.extra['lemmas']} lemmas and facts)" if "lemmas" in r.extra else ")")
                         + (f"; {r.reason}" if r.verdict != "holds" else ""))
            blocks += [Block(f"{arch} {instr}: {b.label}", b.text, b.expect) for b in query_blocks(r, f"{arch} {instr}")]
            lemmas += int(r.extra.get("lemmas", 0))  # type: ignore[call-overload]
            if r.verdict != "holds":
                verdict = "unknown" if r.verdict == "unknown" or verdict == "unknown" else "fails"
        detail = ("round-down (RD_F2 of T, RD_F of c; 000 §6.2.4, Alg. 10 l. 14-15 / Alg. 11 l. 15-16, 22-23) only ever "
                  "pushes Phi below the exact value, so the interval is asymmetric; each a chain of facts on the model's own "
                  "terms, its last check the interval itself: " + " | ".join(lines))
        agrees = None if verdict == "unknown" else verdict == "holds"
        cert = certificate(name, "000 §6.2.4 + Table 9", models, verdict, ctx.solver or "bitwuzla", blocks if verdict == "holds" else [])
        return Outcome(verdict, agrees, ctx.solver or "bitwuzla", None, detail, cert, {"lemmas": lemmas} if lemmas else {})

    return Claim(name, "000 §6.2.4 + Table 9", models, "holds",
                 "CDNA3's round-down steps give an asymmetric error interval (exact - Phi down to -L, up to L+1 units 2^(E-F))",
                 run, "error-bound")


add_claim(_one_sided_claim())
for _m in MODELS:
    add_claim(_bound_claim(*_m))
for _m in TIGHT:
    add_claim(_tight_claim(*_m))
