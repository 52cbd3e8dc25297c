"""C helpers for integers wider than ``__int128``: fixed-size multi-limb two's complement.

A ``wideN_t`` is ``struct { uint64_t w[N]; }``, limb 0 the least
significant, the top bit of limb N-1 the sign.  Every helper is a
``static inline`` function written out limb by limb here (no loops for the
compiler to unroll), branch-free, and exact whenever the true result fits N
limbs (the static intervals guarantee that; :class:`.ccode.CAlgebra` picks N
per term).  Shifts index a small stack buffer with the limb offset of the
amount instead of branching on it.

:func:`wide_prelude` returns the definitions of a set of limb counts, each
family behind an include guard, so two generated functions can share a
translation unit.
"""

from __future__ import annotations

from typing import Callable, Iterable

__all__ = ["wide_prelude", "wide_type", "wide_literal", "LIMB_BITS"]

#: Bits per limb.
LIMB_BITS = 64

_U128 = "unsigned __int128"


def wide_type(n: int) -> str:
    """The C type name of an ``n``-limb integer."""
    return f"wide{n}_t"


def wide_literal(value: int, n: int) -> str:
    """A C expression of type ``wide_type(n)`` equal to ``value`` (which must fit ``n`` limbs, sign included)."""
    assert -(1 << (LIMB_BITS * n - 1)) <= value < (1 << (LIMB_BITS * n - 1)), (value, n)
    bits = value & ((1 << (LIMB_BITS * n)) - 1)
    limbs = ", ".join(f"UINT64_C({(bits >> (LIMB_BITS * i)) & ((1 << LIMB_BITS) - 1)})" for i in range(n))
    return f"wide{n}_lit({limbs})"


Emit = Callable[[str, str, str, list[str]], None]  # (return type, helper name, parameters, body lines)


def _fn(q: str, ret: str, name: str, params: str, body: list[str]) -> str:
    inner = "\n    ".join(body)
    return f"{q} {ret} {name}({params})\n{{\n    {inner}\n}}\n"


def _family(n: int, q: str) -> str:
    """Type and helpers of ``n``-limb integers (``q``: the functions' qualifier), behind an include guard."""
    assert n >= 3, n  # two limbs are __int128
    t = wide_type(n)
    out = [f"typedef struct {{ uint64_t w[{n}]; }} {t};\n"]

    def fn(ret: str, name: str, params: str, body: list[str]) -> None:
        out.append(_fn(q, ret, f"wide{n}_{name}", params, body))

    _conversions(fn, n, t)
    _arithmetic(fn, n, t)
    _shifts(fn, n, t)
    _comparisons(fn, n, t)
    return _guard(f"SMTMMA_WIDE{n}", "".join(out))


def _conversions(fn: Emit, n: int, t: str) -> None:
    """``lit`` (from limbs), ``from`` (an __int128, sign-extended), ``i128`` and ``i64`` (the low limbs)."""
    fn(t, "lit", ", ".join(f"uint64_t w{i}" for i in range(n)), [f"{t} r;"] + [f"r.w[{i}] = w{i};" for i in range(n)] + ["return r;"])
    fn(t, "from", "__int128 x", [f"{t} r;", "r.w[0] = (uint64_t)x;", "r.w[1] = (uint64_t)(x >> 64);", "const uint64_t s = (uint64_t)(x >> 127);"]
       + [f"r.w[{i}] = s;" for i in range(2, n)] + ["return r;"])
    fn("__int128", "i128", f"{t} a", [f"return (__int128)((({_U128})a.w[1] << 64) | a.w[0]);"])
    fn("int64_t", "i64", f"{t} a", ["return (int64_t)a.w[0];"])


def _arithmetic(fn: Emit, n: int, t: str) -> None:
    """``add``, ``sub``, ``mul``, ``and``: modulo 2**(64 n), so exact when the result fits."""
    top = n - 1
    # carries by comparisons: portable C that compilers turn into short add/adc-like sequences
    fn(t, "add", f"{t} a, {t} b", [f"{t} r;", "uint64_t s, c;", "r.w[0] = a.w[0] + b.w[0];", "c = r.w[0] < a.w[0];"]
       + [ln for i in range(1, top) for ln in (f"s = a.w[{i}] + b.w[{i}];", f"r.w[{i}] = s + c;", f"c = (s < a.w[{i}]) | (r.w[{i}] < s);")]
       + [f"r.w[{top}] = a.w[{top}] + b.w[{top}] + c;", "return r;"])
    fn(t, "sub", f"{t} a, {t} b", [f"{t} r;", "uint64_t s, c;", "r.w[0] = a.w[0] - b.w[0];", "c = a.w[0] < b.w[0];"]
       + [ln for i in range(1, top) for ln in (f"s = a.w[{i}] - b.w[{i}];", f"r.w[{i}] = s - c;", f"c = (a.w[{i}] < b.w[{i}]) | (s < c);")]
       + [f"r.w[{top}] = a.w[{top}] - b.w[{top}] - c;", "return r;"])
    mul = [f"{t} r;"] + [f"r.w[{i}] = 0;" for i in range(n)] + [f"{_U128} s;", "uint64_t c;"]
    for i in range(n):  # schoolbook, the partial products above limb n - 1 left out
        mul.append("c = 0;")
        for j in range(n - i):
            mul += [f"s = ({_U128})a.w[{i}] * b.w[{j}] + r.w[{i + j}] + c;", f"r.w[{i + j}] = (uint64_t)s;", "c = (uint64_t)(s >> 64);"]
    fn(t, "mul", f"{t} a, {t} b", mul + ["return r;"])
    fn(t, "and", f"{t} a, {t} b", [f"{t} r;"] + [f"r.w[{i}] = a.w[{i}] & b.w[{i}];" for i in range(n)] + ["return r;"])


def _comparisons(fn: Emit, n: int, t: str) -> None:
    """``lt``, ``eq`` (int 0 or 1), ``sel`` (by a mask), ``max``, ``min``, ``bitlen`` (of a >= 0)."""
    top, p = n - 1, f"wide{n}_"
    fn("int", "lt", f"{t} a, {t} b", ["int c = a.w[0] < b.w[0];"]  # lexicographic: the highest differing limb decides
       + [f"c = (a.w[{i}] < b.w[{i}]) | ((a.w[{i}] == b.w[{i}]) & c);" for i in range(1, top)]
       + [f"return ((int64_t)a.w[{top}] < (int64_t)b.w[{top}]) | ((a.w[{top}] == b.w[{top}]) & c);"])
    fn("int", "eq", f"{t} a, {t} b", [f"return ({' | '.join(f'(a.w[{i}] ^ b.w[{i}])' for i in range(n))}) == 0;"])
    fn(t, "sel", f"int c, {t} a, {t} b", ["const uint64_t m = (uint64_t)0 - (uint64_t)(c != 0);", f"{t} r;"]
       + [f"r.w[{i}] = (a.w[{i}] & m) | (b.w[{i}] & ~m);" for i in range(n)] + ["return r;"])
    fn(t, "max", f"{t} a, {t} b", [f"return {p}sel({p}lt(a, b), b, a);"])
    fn(t, "min", f"{t} a, {t} b", [f"return {p}sel({p}lt(a, b), a, b);"])
    fn("int", "bitlen", f"{t} a", ["int len = 0;"]  # the highest non-zero limb decides (selects, no branch)
       + [f"len = a.w[{i}] ? {64 * (i + 1)} - SMTMMA_CLZ64(a.w[{i}]) : len;" for i in range(n)] + ["return len;"])


def _shifts(fn: Emit, n: int, t: str) -> None:
    """``shl``, ``shl_i64``, ``shr``, ``shr_i64`` by a variable k in [0, 64 n): the limb offset k / 64 indexes a
    stack buffer (a load, not a branch or a chain of selects), then each limb takes bits of its neighbour."""
    sign = f"(uint64_t)((int64_t)a.w[{n - 1}] >> 63)"
    # a * 2**k, 0 <= k < 64 n: s[i] is limb i - k / 64 of a (0 below limb 0)
    fn(t, "shl", f"{t} a, int k",
       [f"const uint64_t b[{2 * n}] = {{{', '.join(['0'] * n + [f'a.w[{i}]' for i in range(n)])}}};",
        f"const uint64_t *s = b + {n} - (k >> 6);", "const int r = k & 63;", f"{t} o;", "o.w[0] = s[0] << r;"]
       + [f"o.w[{i}] = (s[{i}] << r) | ((s[{i - 1}] >> 1) >> (63 - r));" for i in range(1, n)] + ["return o;"])
    # floor(a / 2**k), 0 <= k < 64 n: s[i] is limb i + k / 64 of a (the sign above the top)
    shr_head = [f"const uint64_t g = {sign};",
                f"const uint64_t b[{2 * n}] = {{{', '.join([f'a.w[{i}]' for i in range(n)] + ['g'] * n)}}};",
                "const uint64_t *s = b + (k >> 6);", "const int r = k & 63;"]
    fn(t, "shr", f"{t} a, int k", shr_head + [f"{t} o;"]
       + [f"o.w[{i}] = (s[{i}] >> r) | ((s[{i + 1}] << 1) << (63 - r));" for i in range(n)] + ["return o;"])
    fn("int64_t", "shr_i64", f"{t} a, int k",  # the low limb of shr: a result that fits int64
       shr_head + ["return (int64_t)((s[0] >> r) | ((s[1] << 1) << (63 - r)));"])
    # an int64 times 2**k: its two limbs stored at limb k / 64 of a buffer of zeros and signs
    fn(t, "shl_i64", "int64_t a, int k",
       ["const int r = k & 63;", "const uint64_t g = (uint64_t)(a >> 63);",
        f"const uint64_t b[{2 * n}] = {{{', '.join(['0'] * n + ['(uint64_t)a << r', '(uint64_t)(a >> 1) >> (63 - r) | (g << 1 << r)'] + ['g'] * (n - 2))}}};",
        f"const uint64_t *s = b + {n} - (k >> 6);", f"{t} o;"]
       + [f"o.w[{i}] = s[{i}];" for i in range(n)] + ["return o;"])


def _resize(n: int, m: int, q: str) -> str:
    """``wideN_from_wideM``: an m-limb integer as n limbs (sign-extended, or truncated when it fits)."""
    body = [f"{wide_type(n)} r;"] + [f"r.w[{i}] = a.w[{i}];" for i in range(min(n, m))]
    if n > m:
        body.append(f"const uint64_t s = (uint64_t)((int64_t)a.w[{m - 1}] >> 63);")
        body += [f"r.w[{i}] = s;" for i in range(m, n)]
    text = _fn(q, wide_type(n), f"wide{n}_from_wide{m}", f"{wide_type(m)} a", body + ["return r;"])
    return _guard(f"SMTMMA_WIDE{n}_FROM_WIDE{m}", text)


def _guard(name: str, text: str) -> str:
    return f"#ifndef {name}\n#define {name}\n{text}#endif\n"


def wide_prelude(limbs: Iterable[int], qualifier: str = "static inline") -> str:
    """C definitions of the ``wideN_t`` helpers for every N in ``limbs`` and conversions between them ("" if none)."""
    ns = sorted(set(limbs))
    if not ns:
        return ""
    families = [_family(n, qualifier) for n in ns]
    resizes = [_resize(n, m, qualifier) for n in ns for m in ns if n != m]
    return "".join(families + resizes)
