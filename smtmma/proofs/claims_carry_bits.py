"""Carry bits of the fused sums: the SMT paper's 3 for Volta/Turing and 4 for Ampere, and what Hopper and Blackwell need.

001 §4 ("Number of Carry-Out Bits Required Due to Lack of Normalization")
quotes the rule of Fasi et al.: N summands need ceil(log2 N) carry-out
bits; it found inputs needing 3 for Volta and Turing (410 s with cvc5,
Table 4) and timed out after 6 h on Ampere's 4.  smtmma counts carry bits
as integer bits of the aligned register above 2 (a product of two
significands in [1, 2) lies in [1, 4): 2 integer bits); the seed model's
``fp_add(5, 3)`` counts integer bits above 1.  Each claim reports both.
"""

from __future__ import annotations

import math
from fractions import Fraction

from ..catalogue import lookup
from ..formats import get_format
from ..queries.properties import check_property
from .claim import Claim, Context, Outcome, add_claim
from .evidence import certificate, query_blocks, witness_record

__all__: list[str] = []

# name, arch, instr, op, K (products), expected carry bits (above 2), source, why
_CASES = [
    ("volta-carry-bits", "sm70", "f16f32", None, 4, 3, "001 §4, Table 4 ('3 Carry Bits')",
     "001 §4: 'the 5-term accumulator uses 3 extra bits for carry out' (found by cvc5 in 410 s)"),
    ("turing-carry-bits", "sm75", "f16f32", None, 4, 3, "001 §4, Table 4 ('3 Carry Bits')",
     "001 §4: 'cvc5 [finds] inputs proving that Volta and Turing require 3 bits for carry-out' (a 5-term sum: "
     "K = 4 products, as in m8n8k4, and C)"),
    ("ampere-carry-bits", "sm80", "f16f32", None, 8, 4, "001 §4, Table 4 ('4 Carry Bits (Ampere)': timed out after 6 h)",
     "001 §4: 'Ampere's 9-term accumulator should likewise require 4 extra bits, though attempts to find "
     "confirming inputs timed out after 6 hours'"),
    ("hopper-carry-bits", "sm90", "f16f32", None, 16, 5, "001 §4 rule ceil(log2 N), N = 17",
     "Hopper sums 16 products and C: 17 terms; the rule gives ceil(log2 17) = 5"),
    ("blackwell-fp8-carry-bits", "sm100", "e4m3e4m3f32", "tcgen05", 32, 6, "001 §4 rule ceil(log2 N), N = 33",
     "Blackwell tcgen05 FP8 sums 32 products and C: 33 terms; the rule gives ceil(log2 33) = 6"),
]


def _bound_reason(arch: str, instr: str, op: str | None, K: int) -> str:
    """Why the solver's count can be below ceil(log2 N): the largest magnitude the aligned sum can reach."""
    m = lookup(arch, instr, op).model
    fa, fb, fc = get_format(m.a_fmt), get_format(m.b_fmt), get_format(m.c_fmt)
    sig_a = 2 - Fraction(1, 1 << fa.man_bits)  # largest significand of A (hidden bit + all fraction bits)
    sig_b = 2 - Fraction(1, 1 << fb.man_bits)
    top = K * sig_a * sig_b + (2 - Fraction(1, 1 << fc.man_bits))  # every summand aligned at the largest exponent
    need = max(0, math.ceil(math.log2(float(top))) - 2) if top > 4 else 0
    return (f"the aligned sum is below {K} x {float(sig_a):g} x {float(sig_b):g} + {float(2 - Fraction(1, 1 << fc.man_bits)):g}"
            f" = {float(top):.6g} < 2^{need + 2}: {need} bits above 2 hold every sum")


def _make(name: str, arch: str, instr: str, op: str | None, K: int, rule: int, source: str, why: str) -> Claim:
    entry = lookup(arch, instr, op)
    label = f"{arch} {instr}" + (f" {op}" if op else "")

    def run(ctx: Context) -> Outcome:
        r = check_property("carry-bits", entry.model, name=label, K=K, solver=ctx.solver, timeout=ctx.timeout, seed=ctx.seed)
        if r.verdict != "holds":
            return Outcome("unknown", None, r.solver, detail=r.reason)
        n = int(r.extra["carry_bits"])  # type: ignore[arg-type]
        verdict = f"{n} (above 2; {n + 1} above 1)"
        w = None
        if r.witness is not None:
            fmt = entry.model.d_fmt
            w = witness_record(entry.model, r.witness, {k: (fmt, v) for k, v in r.outputs.items()})
        detail = (f"{why}. The solver proves {n} carry bits give the unbounded sum's output for every finite input "
                  f"of {K + 1} summands, and finds an input on which {n - 1} do not; {_bound_reason(arch, instr, op, K)}. "
                  f"In the seed's convention (integer bits above 1, pyxis-roc/tensor_core_semantics fp_add) the same "
                  f"register has {n + 1}.")
        blocks = query_blocks(r, f"carry bits of {label}")
        cert = certificate(name, source, [label], verdict, r.solver, blocks, w, carry_bits_above_2=n, carry_bits_above_1=n + 1,
                           model=entry.model.describe())
        return Outcome(verdict, n == rule, r.solver, w, detail, cert, {"carry_bits": n, "rule": rule, "summands": K + 1})

    return Claim(name, source, (label,), f"{rule} (ceil(log2 {K + 1}))", f"{label}: {K + 1}-term sums need {rule} carry bits",
                 run, "carry-bits")


for _case in _CASES:
    add_claim(_make(*_case))
