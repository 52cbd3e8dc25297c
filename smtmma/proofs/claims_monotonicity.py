"""Monotonicity claims: Fasi et al. §3.1.4 (Volta is not monotonic) and a verdict per distinct catalogue model family."""

from __future__ import annotations

from typing import Optional

from ..catalogue import model_of
from ..queries.distinguish import Witness
from ..queries.properties import check_property
from ..queries.properties.common import py_value, show_value
from ..queries.query_algebra import witness_pins
from ..queries.properties.monotonicity import monotone_script, raised_inputs
from ..queries.query_algebra import InputSet, QueryAlgebra, Runner, output_container
from ..queries.formula import Domain
from ..simulate import simulate_dot
from ..proof_kernel.blocks import pin_block
from .claim import Claim, Context, Outcome, add_claim, claim
from .evidence import certificate, query_blocks, witness_record

# 002 §3.1.4: b_k1 = 2**-24 (fp16 0x0001) for k = 1..4, a_1k = 1, and c = 1 - 2**-24, then c = 1.
VOLTA_A = (0x3C00,) * 4
VOLTA_B = (0x0001,) * 4
VOLTA_C, VOLTA_C_LARGER = 0x3F7FFFFF, 0x3F800000


@claim("volta-nonmonotonic", source="002 §3.1.4 (Monotonicity of dot product)", models=("sm70 f16f32",), expected="fails",
       summary="Volta's f16f32 tensor core is not monotonic: raising c from 1-2^-24 to 1 lowers d from 1+2^-23 to 1",
       group="monotonicity")
def volta_nonmonotonic(ctx: Context) -> Outcome:
    """The paper's own input pair, replayed by the simulator and pinned in the single-move query (expect sat)."""
    import numpy as np

    m = model_of("sm70", "f16f32")
    w = Witness(VOLTA_A, VOLTA_B, VOLTA_C)
    a, b = np.array([VOLTA_A], dtype=np.uint64), np.array([VOLTA_B], dtype=np.uint64)
    d1 = int(simulate_dot(m, None, a, b, np.array([VOLTA_C], dtype=np.uint64))[0])
    d2 = int(simulate_dot(m, None, a, b, np.array([VOLTA_C_LARGER], dtype=np.uint64))[0])
    out = output_container(m)
    alg = QueryAlgebra()
    dom = Domain(nonneg=True)
    x = InputSet.of(alg, m, 4)
    x.restrict(dom)
    y = raised_inputs(alg, x, "c", dom)
    pins = witness_pins(m, w)
    pins["c_2"] = (VOLTA_C_LARGER, 32)
    pins["d"], pins["d_larger"] = (d1, out.bits), (d2, out.bits)  # the simulator's outputs: the solver must agree
    block = pin_block("002 §3.1.4: c = 1 - 2^-24 -> 1 lowers d (inputs and both outputs pinned)",
                      monotone_script(alg, m, x, y, out), pins, "sat")
    r = Runner(ctx.solver, ctx.timeout, ctx.seed).check(block.text)
    v1, v2 = py_value(out, d1), py_value(out, d2)
    fails = r.verdict == "sat" and v1 is not None and v2 is not None and v2 < v1
    verdict = "fails" if fails else ("unknown" if r.verdict == "unknown" else "holds")
    rec = witness_record(m, w, {"d": ("fp32", d1), "d_larger": ("fp32", d2)})
    rec["larger"] = {"c": f"{VOLTA_C_LARGER:08x}", "decimal": {"c": "1"}}
    return Outcome(verdict, verdict == "fails" if verdict != "unknown" else None, r.solver, rec,
                   f"002 §3.1.4: d = {show_value(out, d1)} for c = 1 - 2^-24 but {show_value(out, d2)} for c = 1: raising c to a power "
                   "of two raises e_max and the four 2^-24 products are truncated away (no normalization of partial sums).",
                   certificate("volta-nonmonotonic", "002 §3.1.4", ["sm70 f16f32"], verdict, r.solver, [block], rec))


#: (arch, instr, op, expected verdict, where the documents say it).  "-": no document states it.
REPRESENTATIVES: tuple[tuple[str, str, Optional[str], str, str], ...] = (
    ("sm70", "f16f32", None, "fails", "002 §3.1.4"),
    ("sm75", "f16f32", None, "fails", "002 §3.2 (every Volta conclusion holds on T4)"),
    ("sm80", "f16f32", None, "fails", "002 §3.3 (binary16/binary32 as on T4)"),
    ("sm80", "f64f64", None, "holds", "002 §3.3 (binary64: each addition normalized and RNE, the §3.1.4 issue does not occur)"),
    ("sm89", "e4m3e4m3f32", None, "-", "not stated"),
    ("sm90", "f16f32", None, "-", "not stated"),
    ("sm90", "f16f16", None, "-", "not stated"),
    ("sm90", "e4m3e4m3f32", None, "-", "not stated"),
    ("sm100", "f16f32", None, "-", "not stated"),
    ("sm100", "mxe4m3f32", None, "-", "not stated"),
    ("sm100", "nvf4f32", None, "-", "not stated"),
    ("sm120", "f16f32", None, "-", "not stated"),
    ("gfx908", "f16f32", None, "holds", "004 §VI (MI100/MI250X: monotonicity preserved)"),
    ("gfx90a", "f16f32", None, "holds", "004 §VI (MI100/MI250X: monotonicity preserved)"),
    ("gfx942", "f16f32", None, "-", "not stated"),
    ("gfx942", "fp8fp8f32", None, "-", "not stated"),
)


def _model_claim(arch: str, instr: str, op: Optional[str], expected: str, where: str) -> Claim:
    name = f"monotonicity-{arch}-{instr}"

    def run(ctx: Context) -> Outcome:
        m = model_of(arch, instr, op)
        r = check_property("monotonicity", m, name=f"{arch} {instr}", solver=ctx.solver, timeout=min(ctx.timeout, 20.0),
                           seed=ctx.seed)
        agrees = None if expected == "-" or r.verdict == "unknown" else r.verdict == expected
        rec = None
        if r.witness is not None:
            out = output_container(m)
            rec = witness_record(m, r.witness, {k: (out.name, v) for k, v in r.outputs.items()})
            rec["larger"] = r.extra.get("larger")
            rec["raised"] = r.extra.get("raised")
        detail = (f"{r.reason} (K={r.K}, the property's default K: one FDPA of L terms, P for FTZ-AddMul, 4 FMAs). "
                  f"Document: {where}.")
        cert = certificate(name, where, [f"{arch} {instr}"], r.verdict, r.solver, query_blocks(r, name), rec)
        return Outcome(r.verdict, agrees, r.solver, rec, detail, cert)

    return Claim(name, where if expected != "-" else "- (no document states it)", (f"{arch} {instr}",), expected,
                 f"monotonicity of {arch} {instr} ({model_of(arch, instr, op).describe()}) on all finite non-negative inputs",
                 run, "monotonicity")


for _row in REPRESENTATIVES:
    add_claim(_model_claim(*_row))
