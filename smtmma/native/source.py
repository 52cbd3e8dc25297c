"""C source of one model's dot product of length K: the op definitions run once on :class:`CAlgebra`.

The generated unit has one ``static inline`` function computing a single
dot product ``d = c + sum_k a_k b_k`` (bit patterns in and out, every input
read through a stride) and two exported batch loops over it:

* ``smtmma_rows(n, a, lda, b, ldb, c, d, sa, ldsa, sb, ldsb)``: n
  independent dot products of row-major arrays (``a[i * lda + k]``: the
  k-th value of row i), ``d[i]`` the i-th result;
* ``smtmma_gemm(M, N, nk, A, lda, B, ldb, acc, ldc, SA, ldsa, SB, ldsb)``:
  ``nk`` chained instructions over an M x N block of D (row-major arrays;
  ``acc`` holds C on entry and D on return, in D's format), the
  accumulator carried from one instruction to the next as the hardware's
  k-loop does (Alg. 5).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

from ..encodings.algebra import Bool, Int
from ..encodings.ccode import CLZ_MACROS, CAlgebra
from ..encodings.cwide import wide_prelude
from ..encodings.fields import unpack
from ..formats import carried_in, get_format
from ..models import Model

__all__ = ["KernelSource", "kernel_source", "batch_loops", "dot_function", "GENERATOR_VERSION", "uint_bits"]

#: Bumped whenever the generated code changes for the same model (part of the cache key with the source itself).
GENERATOR_VERSION = 4


def uint_bits(bits: int) -> int:
    """Bits (8, 16, 32 or 64) of the unsigned C type that holds a pattern of ``bits`` bits."""
    for width in (8, 16, 32, 64):
        if bits <= width:
            return width
    raise ValueError(f"no unsigned type for {bits}-bit patterns")


@dataclass(frozen=True)
class KernelSource:
    """Generated C for (model, K): the text and the pattern widths of its arrays (bits)."""

    text: str
    a_bits: int
    b_bits: int
    c_bits: int
    d_bits: int
    s_bits: Optional[int]  # scale patterns (block-scaled models), else None
    scales: int  # scale values per row: ceil(K / block), 0 when unscaled
    max_width: int  # widest C integer type used (bits)
    lanes: int = 0  # dot products per vector step of the loops (0: scalar loops)


def model_inputs(alg: CAlgebra, model: Model, K: int, *, strided: bool = True
                 ) -> tuple[list[Int], list[Int], Int, Optional[list[Int]], Optional[list[Int]]]:
    """Input terms of one dot product, (a, b, c, scale_a, scale_b): ``a[k * as]``... read through the strided
    pointers, or ``a[k]``... (elements of arrays of vectors, ``strided=False``)."""
    at = (lambda arr, i, stride: f"{arr}[{i} * {stride}]") if strided else (lambda arr, i, stride: f"{arr}[{i}]")
    fa, fb, fc = (get_format(getattr(model, f)) for f in ("a_fmt", "b_fmt", "c_fmt"))
    a = [alg.input(at("a", k, "as"), 0, (1 << fa.bits) - 1) for k in range(K)]
    b = [alg.input(at("b", k, "bs"), 0, (1 << fb.bits) - 1) for k in range(K)]
    c = alg.input("c", 0, (1 << fc.bits) - 1)
    sa = sb = None
    if model.scale_fmt is not None:
        top = (1 << get_format(model.scale_fmt).bits) - 1
        n = -(-K // (model.block or K))
        sa = [alg.input(at("sa", j, "sas"), 0, top) for j in range(n)]
        sb = [alg.input(at("sb", j, "sbs"), 0, top) for j in range(n)]
    return a, b, c, sa, sb


def any_special(alg: CAlgebra, model: Model, inputs: tuple) -> Bool:
    """Whether any of ``inputs`` (from :func:`model_inputs`) is an infinity or a NaN (by ``unpack``, the same definition)."""
    a, b, c, sa, sb = inputs
    named = [(model.a_fmt, x) for x in a] + [(model.b_fmt, x) for x in b] + [(model.c_fmt, c)]
    named += [(model.scale_fmt, x) for x in (sa or []) + (sb or [])]
    flags = []
    for fmt, x in named:
        u = unpack(alg, get_format(fmt), x)
        flags.append(alg.or_(u.is_inf, u.is_nan))
    return alg.any(flags)


def _body(model: Model, K: int, finite: bool) -> tuple[CAlgebra, str]:
    """(the algebra holding the lines, D's expression) of one dot product; ``finite``: inputs known finite."""
    from ..simulate import output_format, run_model  # late: simulate imports the catalogue

    alg = CAlgebra(finite_inputs=finite)
    d = run_model(alg, model, *model_inputs(alg, model, K))
    dfmt = output_format(model)
    width = 128 if carried_in(dfmt).bits >= 64 else 64
    return alg, alg.expr(d, width)


def _special(model: Model, K: int) -> tuple[list[str], str]:
    """(lines, int expression): whether any input pattern is an infinity or a NaN."""
    alg = CAlgebra()
    flag = any_special(alg, model, model_inputs(alg, model, K))
    return alg.lines, alg.bexpr(flag)


_SIGNATURE = "(const ta_t *a, int64_t as, const tb_t *b, int64_t bs, tc_t c, const ts_t *sa, int64_t sas, const ts_t *sb, int64_t sbs)"
_ARGS = "(a, as, b, bs, c, sa, sas, sb, sbs)"


def dot_function(model: Model, K: int, *, name: str = "dot1", qualifier: str = "static inline __attribute__((always_inline))") -> tuple[str, KernelSource]:
    """(C definition of ``name``: one dot product of length ``K``, the array types it reads) for ``model``.

    The function is ``td_t name(const ta_t *a, int64_t as, const tb_t *b, int64_t bs, tc_t c, const ts_t *sa,
    int64_t sas, const ts_t *sb, int64_t sbs)``: A values ``a[k * as]``, scales ``sa[j * sas]``; the
    ``typedef``s of ``ta_t``... are in the returned text too, after the leading-zero macros (``CLZ_MACROS``;
    a CUDA unit defines its own first) and the helpers of terms wider than 128 bits (:meth:`CAlgebra.prelude`,
    with the same ``qualifier``; none for most models).  ``qualifier`` prefixes it (``__device__`` for CUDA).
    The KernelSource's ``text`` is this function alone.
    """
    fa, fb, fc = (get_format(getattr(model, f)) for f in ("a_fmt", "b_fmt", "c_fmt"))
    fd = get_format(model.d_fmt)
    fd = carried_in(fd)
    ta, tb, tc, td = (f"uint{uint_bits(f.bits)}_t" for f in (fa, fb, fc, fd))
    s_bits = get_format(model.scale_fmt).bits if model.scale_fmt else None
    ts = f"uint{uint_bits(s_bits)}_t" if s_bits else "uint8_t"
    full_alg, d_full = _body(model, K, finite=False)
    fast_alg, d_fast = _body(model, K, finite=True)
    full, fast, widest = full_alg.lines, fast_alg.lines, full_alg.max_width
    prelude = wide_prelude(full_alg.wide_limbs | fast_alg.wide_limbs, qualifier)
    special, any_special = _special(model, K)
    types = CLZ_MACROS + prelude + f"""typedef {ta} ta_t;
typedef {tb} tb_t;
typedef {tc} tc_t;
typedef {td} td_t;
typedef {ts} ts_t;
"""

    def define(fname: str, qual: str, ret: str, lines: list[str], expr: str) -> str:
        body = "\n    ".join(lines)
        return f"""{qual} {ret} {fname}{_SIGNATURE}
{{
    (void)a; (void)as; (void)b; (void)bs; (void)c; (void)sa; (void)sas; (void)sb; (void)sbs;
    {body}
    return ({ret})({expr});
}}
"""
    if any_special == "0" or fast == full:  # no input can be special: one straight-line function
        text = types + define(name, qualifier, "td_t", full, d_full)
    else:  # the common case without branches; inputs with an infinity or NaN take the full definition
        cold = qualifier.replace("inline __attribute__((always_inline))", "__attribute__((noinline, cold))")
        cold = cold.replace("__forceinline__", "__noinline__")
        text = (types + define(f"{name}_full", cold, "td_t", full, d_full) + define(f"{name}_finite", qualifier, "td_t", fast, d_fast)
                + define(f"{name}_special", qualifier, "int", special, any_special)
                + f"""{qualifier} td_t {name}{_SIGNATURE}
{{
    return {name}_special{_ARGS} ? {name}_full{_ARGS} : {name}_finite{_ARGS};
}}
""")
    scales = -(-K // model.block) if model.scale_fmt and model.block else 0
    return text, KernelSource(text, fa.bits, fb.bits, fc.bits, fd.bits, s_bits, scales, widest)


def kernel_source(model: Model, K: int, *, lanes: Optional[int] = None, vector_bits: int = 512) -> KernelSource:
    """The C translation unit of ``model``'s dot product of length ``K`` (see module docstring).

    The loops run several dot products per step through the vector
    interpretation where every term fits 64 bits (:mod:`.lanes`; ``lanes``:
    how many instead of its choice for a target with ``vector_bits``-bit
    vector registers, 0 for the scalar loops only).
    """
    from .lanes import lane_loops

    func, info = dot_function(model, K)
    bits = tuple(uint_bits(x) for x in (info.a_bits, info.b_bits, info.c_bits, info.d_bits, info.s_bits or 8))
    vec = lane_loops(model, K, bits, info.scales, f"dot1_full{_SIGNATURE}" in func, lanes,
                     vector_bits) if lanes != 0 else None
    text = f"""/* smtmma generated kernel (generator {GENERATOR_VERSION}): {model.describe()}, K = {K} */
#include <stdint.h>
{func}
#define KSTEP {K}
#define NSCALE {info.scales}
#define TILE_I 16
#define TILE_J 512
"""
    if vec is None:
        return replace(info, text=text + batch_loops("", ""), lanes=0)
    return replace(info, text=text + vec.definitions + batch_loops(vec.rows_step, vec.gemm_step), lanes=vec.lanes)


def batch_loops(rows_step: str, gemm_step: str) -> str:
    """C text of ``smtmma_rows`` and ``smtmma_gemm`` over ``dot1``: each runs its optional vector step first (whole
    groups of lanes, advancing ``i`` over rows or ``j`` over columns of D; "" for none), then ``dot1`` on the rest."""
    return f"""void smtmma_rows(int64_t n, const ta_t *a, int64_t lda, const tb_t *b, int64_t ldb, const tc_t *c, td_t *d,
                 const ts_t *sa, int64_t ldsa, const ts_t *sb, int64_t ldsb)
{{
    int64_t i = 0;
    {rows_step}
    for (; i < n; i++)
        d[i] = dot1(a + i * lda, 1, b + i * ldb, 1, c[i], sa + i * ldsa, 1, sb + i * ldsb, 1);
}}

/* acc[i, j] <- dot(A[i, s*KSTEP:(s+1)*KSTEP], B[s*KSTEP:(s+1)*KSTEP, j], acc[i, j]) for s = 0..nk-1: nk chained
   instructions on an M x N tile of D, tiled so that a B panel stays in cache across rows */
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
                    int64_t j = j0;
                    {gemm_step}
                    for (; j < jend; j++)
                        crow[j] = dot1(arow, 1, bk + j, ldb, (tc_t)crow[j], sarow, 1, sbk ? sbk + j : 0, ldsb);
                }}
}}
"""
