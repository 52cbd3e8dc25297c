"""Lane-parallel batch loops: the op definitions run once on :class:`VecCAlgebra`, LANES dot products per call.

:func:`lane_loops` returns the two exported loops of a kernel unit
(``smtmma_rows`` and ``smtmma_gemm``, same signatures and results as the
scalar loops of :mod:`.source`) built on a vector dot product ``dotv`` of
the finite inputs.  A group of lanes holding an infinity or a NaN is
recomputed lane by lane with the scalar full definition (``dot1_full``),
and rows past the last whole group use the scalar ``dot1``: the vector
code never answers for an input it was not generated for.
"""

from __future__ import annotations

from typing import Optional

from ..encodings.cvector import NotVectorizable, VecCAlgebra, vector_prelude
from ..models import Model
from .source import any_special, model_inputs

__all__ = ["lane_loops", "choose_lanes", "LANES"]

#: Dot products per vector step: 16 (int32 terms fill a 512-bit register) for bodies of mostly int32 terms, 8
#: for large or int64-heavy ones, where 16 lanes spill registers (measured with AVX-512 at -O1: sm90 f16f32 44 vs
#: 39 M/s at 16 vs 8 lanes; gfx90a bf16f32, 16% int64 terms, 2.8 vs 5.0 M/s).
LANES = (8, 16)


def choose_lanes(lines: list[str]) -> int:
    """Lanes for a vector body of these lines (see :data:`LANES`)."""
    wide = sum(ln.startswith("const v64") for ln in lines)
    return LANES[0] if wide > 0.05 * len(lines) or len(lines) > 4000 else LANES[1]


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


def lane_loops(model: Model, K: int, bits: tuple[int, int, int, int, int], scales: int, special: bool,
               lanes: Optional[int] = None) -> Optional[tuple[str, int]]:
    """(C text of the vector ``dotv`` and the exported loops over it, lanes), or None when a term needs more than 64 bits.

    ``bits``: unsigned container widths (bits) of the A, B, C, D and scale
    patterns; ``scales``: scale values per row of one call; ``special``:
    the unit defines ``dot1_full`` and inputs may be infinite or NaN;
    ``lanes``: dot products per step (default: :func:`choose_lanes`).
    """
    try:
        lines, result = _dotv(model, K, finite=special)
        sp_lines, sp = _dotv(model, K, False, special=True) if special else ([], "")
    except NotVectorizable:
        return None
    lanes = lanes or choose_lanes(lines)
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
    if special:
        fix_rows = """const v32 sp = dotv_special(av, bv, cv, sav, sbv);
            int any = 0;
            for (int l = 0; l < LANES; l++) any |= sp[l];
            if (any)
                for (int l = 0; l < LANES; l++)
                    if (sp[l]) dv[l] = dot1_full(a + (i + l) * lda, 1, b + (i + l) * ldb, 1, c[i + l], sa + (i + l) * ldsa, 1,
                                                  sb + (i + l) * ldsb, 1);"""
        fix_gemm = """const v32 sp = dotv_special(av, bv, cv, sav, sbv);
                        int any = 0;
                        for (int l = 0; l < LANES; l++) any |= sp[l];
                        if (any)
                            for (int l = 0; l < LANES; l++)
                                if (sp[l]) dv[l] = dot1_full(arow, 1, bk + j + l, ldb, (tc_t)crow[j + l], sarow, 1, sbk ? sbk + j + l : 0, ldsb);"""
    text += f"""#define LANES {lanes}
void smtmma_rows(int64_t n, const ta_t *a, int64_t lda, const tb_t *b, int64_t ldb, const tc_t *c, td_t *d,
                 const ts_t *sa, int64_t ldsa, const ts_t *sb, int64_t ldsb)
{{
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES) {{
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
    for (; i < n; i++)
        d[i] = dot1(a + i * lda, 1, b + i * ldb, 1, c[i], sa + i * ldsa, 1, sb + i * ldsb, 1);
}}

void smtmma_gemm(int64_t M, int64_t N, int64_t nk, const ta_t *A, int64_t lda, const tb_t *B, int64_t ldb,
                 td_t *acc, int64_t ldc, const ts_t *SA, int64_t ldsa, const ts_t *SB, int64_t ldsb)
{{
    for (int64_t i0 = 0; i0 < M; i0 += TILE_I)
        for (int64_t j0 = 0; j0 < N; j0 += TILE_J)
            for (int64_t s = 0; s < nk; s++)
                for (int64_t i = i0; i < (i0 + TILE_I < M ? i0 + TILE_I : M); i++) {{
                    const ta_t *arow = A + i * lda + s * KSTEP;
                    const tb_t *bk = B + s * KSTEP * ldb;
                    const ts_t *sarow = SA ? SA + i * ldsa + s * NSCALE : 0;
                    const ts_t *sbk = SB ? SB + s * NSCALE * ldsb : 0;
                    td_t *crow = acc + i * ldc;
                    const int64_t jend = j0 + TILE_J < N ? j0 + TILE_J : N;
                    vta_t av[KSTEP]; vts_t sav[NSV] = {{{{0}}}};
                    for (int k = 0; k < KSTEP; k++) av[k] = (vta_t){{0}} + arow[k];
                    for (int q = 0; q < NSCALE; q++) sav[q] = (vts_t){{0}} + (ts_t)(sarow ? sarow[q] : 0);
                    int64_t j = j0;
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
                    for (; j < jend; j++)
                        crow[j] = dot1(arow, 1, bk + j, ldb, (tc_t)crow[j], sarow, 1, sbk ? sbk + j : 0, ldsb);
                }}
}}
"""
    return text, lanes
