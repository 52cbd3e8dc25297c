"""Lane-parallel batch loops: the op definitions run once on :class:`VecCAlgebra`, LANES dot products per step.

:func:`lane_loops` returns a vector dot product ``dotv`` of the finite
inputs and the steps of the exported loops (``smtmma_rows`` and
``smtmma_gemm``, written once in :func:`.source.batch_loops`) that run
whole groups of lanes through it.  A group of lanes holding an infinity or a NaN is
recomputed lane by lane with the scalar full definition (``dot1_full``),
and rows past the last whole group use the scalar ``dot1``: the vector
code never answers for an input it was not generated for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..encodings.cvector import NotVectorizable, VecCAlgebra, vector_prelude
from ..models import Model
from .source import any_special, model_inputs

__all__ = ["lane_loops", "LaneLoops", "choose_lanes", "LANES"]

#: Dot products per vector step on a 512-bit target: 16 (int32 terms fill a 512-bit register) for bodies of mostly
#: int32 terms, 8 for large or int64-heavy ones, where 16 lanes spill registers (measured with AVX-512 at -O1: sm90
#: f16f32 44 vs 39 M/s at 16 vs 8 lanes; gfx90a bf16f32, 16% int64 terms, 2.8 vs 5.0 M/s).  Narrower targets take
#: proportionally fewer (:func:`choose_lanes`).
LANES = (8, 16)


def choose_lanes(lines: list[str], vector_bits: int = 512) -> int:
    """Lanes for a vector body of these lines on a target whose vector registers hold ``vector_bits`` bits (see
    :data:`LANES`; 256 bits: 4 or 8, 128 bits: 2 or 4): an int32 term (an int64 one in int64-heavy bodies) fills
    one register; wider generic vectors are split by the compiler, at a cost of minutes (:func:`.build.vector_bits`)."""
    wide = sum(ln.startswith("const v64") for ln in lines)
    lanes = LANES[0] if wide > 0.05 * len(lines) or len(lines) > 4000 else LANES[1]
    return max(2, lanes * min(vector_bits, 512) // 512)


def _vtypes(a: int, b: int, c: int, d: int, s: int, lanes: int) -> str:
    out = []
    for name, bits in (("vta_t", a), ("vtb_t", b), ("vtc_t", c), ("vtd_t", d), ("vts_t", s)):
        out.append(f"typedef uint{bits}_t {name} __attribute__((vector_size({bits // 8 * lanes})));")
    return "\n".join(out) + "\n"


def _dotv(model: Model, K: int, finite: bool, *, special: bool = False) -> tuple[list[str], str]:
    """(lines, result) of the vector dot product (``special``: the any-input-special mask instead)."""
    from ..simulate import run_model  # late: simulate imports the catalogue

    alg = VecCAlgebra(finite_inputs=finite)
    inputs = model_inputs(alg, model, K, strided=False)
    if special:
        return alg.lines, alg.bexpr(any_special(alg, model, inputs))
    d = run_model(alg, model, *inputs)
    return alg.lines, f"__builtin_convertvector({alg.expr(d, 64)}, vtd_t)"


@dataclass(frozen=True)
class LaneLoops:
    """The vector parts of a kernel unit: definitions (``dotv``...), the whole-group steps of the rows and GEMM
    loops (C statements advancing ``i`` / ``j`` by LANES; :func:`.source.batch_loops` runs the scalar tail), lanes."""

    definitions: str
    rows_step: str
    gemm_step: str
    lanes: int


def lane_loops(model: Model, K: int, bits: tuple[int, int, int, int, int], scales: int, special: bool,
               lanes: Optional[int] = None, vector_bits: int = 512) -> Optional[LaneLoops]:
    """The vector ``dotv`` and the loop steps over it, or None when a term needs more than 64 bits.

    ``bits``: unsigned container widths (bits) of the A, B, C, D and scale
    patterns; ``scales``: scale values per row of one call; ``special``:
    the unit defines ``dot1_full`` and inputs may be infinite or NaN;
    ``lanes``: dot products per step (default: :func:`choose_lanes` for
    vector registers of ``vector_bits`` bits).
    """
    try:
        lines, result = _dotv(model, K, finite=special)
        sp_lines, sp = _dotv(model, K, False, special=True) if special else ([], "")
    except NotVectorizable:
        return None
    lanes = lanes or choose_lanes(lines, vector_bits)
    sig = "(const vta_t *a, const vtb_t *b, vtc_t c, const vts_t *sa, const vts_t *sb)"
    unused = "(void)a; (void)b; (void)c; (void)sa; (void)sb;"
    inline = "static inline __attribute__((always_inline))"
    text = vector_prelude(lanes) + _vtypes(*bits, lanes) + f"""#define NSV {max(scales, 1)}
{inline} vtd_t dotv{sig}
{{
    {unused}
    {chr(10).join('    ' + ln for ln in lines).lstrip()}
    return {result};
}}
"""
    if special:
        text += f"""{inline} v32 dotv_special{sig}
{{
    {unused}
    {chr(10).join('    ' + ln for ln in sp_lines).lstrip()}
    return {sp};
}}
"""
    fix_rows = fix_gemm = ""
    if special:  # lanes with an infinity or NaN: the full scalar definition
        fix_rows = """const v32 sp = dotv_special(av, bv, cv, sav, sbv);
        if (any_lane(sp))
            for (int l = 0; l < LANES; l++)
                if (sp[l]) dv[l] = dot1_full(a + (i + l) * lda, 1, b + (i + l) * ldb, 1, c[i + l], sa + (i + l) * ldsa, 1,
                                              sb + (i + l) * ldsb, 1);"""
        fix_gemm = """const v32 sp = dotv_special(av, bv, cv, sav, sbv);
                        if (any_lane(sp))
                            for (int l = 0; l < LANES; l++)
                                if (sp[l]) dv[l] = dot1_full(arow, 1, bk + j + l, ldb, (tc_t)crow[j + l], sarow, 1, sbk ? sbk + j + l : 0, ldsb);"""
        text += """static inline __attribute__((always_inline)) int any_lane(v32 m)
{
    int any = 0;
    for (int l = 0; l < SMTMMA_VLANES; l++) any |= m[l];
    return any;
}
"""
    rows_step = f"""for (; i + LANES <= n; i += LANES) {{
        ta_t at[KSTEP][LANES]; tb_t bt[KSTEP][LANES]; ts_t sat[NSV][LANES], sbt[NSV][LANES];
        for (int l = 0; l < LANES; l++) {{  /* LANES rows, transposed: lane l of value k is row i + l's k-th */
            ta_t ra[KSTEP]; tb_t rb[KSTEP];
            __builtin_memcpy(ra, a + (i + l) * lda, sizeof ra);
            __builtin_memcpy(rb, b + (i + l) * ldb, sizeof rb);
            for (int k = 0; k < KSTEP; k++) {{
                at[k][l] = ra[k];
                bt[k][l] = rb[k];
            }}
            for (int q = 0; q < NSCALE; q++) {{
                sat[q][l] = sa[(i + l) * ldsa + q];
                sbt[q][l] = sb[(i + l) * ldsb + q];
            }}
        }}
        vta_t av[KSTEP]; vtb_t bv[KSTEP]; vtc_t cv; vts_t sav[NSV] = {{{{0}}}}, sbv[NSV] = {{{{0}}}};
        __builtin_memcpy(av, at, sizeof av);
        __builtin_memcpy(bv, bt, sizeof bv);
        __builtin_memcpy(&cv, c + i, sizeof cv);
        if (NSCALE) {{
            __builtin_memcpy(sav, sat, sizeof sav);
            __builtin_memcpy(sbv, sbt, sizeof sbv);
        }}
        vtd_t dv = dotv(av, bv, cv, sav, sbv);
        {fix_rows}
        __builtin_memcpy(d + i, &dv, sizeof dv);
    }}
"""
    gemm_step = f"""vta_t av[KSTEP]; vts_t sav[NSV] = {{{{0}}}};
                                for (int k = 0; k < KSTEP; k++) av[k] = (vta_t){{0}} + arow[k];
                    for (int q = 0; q < NSCALE; q++) sav[q] = (vts_t){{0}} + (ts_t)(sarow ? sarow[q] : 0);
                    for (; j + LANES <= jend; j += LANES) {{
                        vtb_t bv[KSTEP]; vtd_t accv; vts_t sbv[NSV] = {{{{0}}}};
                        for (int k = 0; k < KSTEP; k++) __builtin_memcpy(&bv[k], bk + k * ldb + j, sizeof bv[k]);
                        __builtin_memcpy(&accv, crow + j, sizeof accv);
                        const vtc_t cv = __builtin_convertvector(accv, vtc_t);
                        for (int q = 0; q < NSCALE; q++)
                            if (sbk) __builtin_memcpy(&sbv[q], sbk + q * ldsb + j, sizeof sbv[q]);
                        vtd_t dv = dotv(av, bv, cv, sav, sbv);
                        {fix_gemm}
                        __builtin_memcpy(crow + j, &dv, sizeof dv);
                    }}
"""
    return LaneLoops(text + f"#define LANES {lanes}\n", rows_step, gemm_step, lanes)
