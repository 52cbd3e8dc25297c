"""Where each thread's registers (or shared-memory slots) hold the elements of an NVIDIA MMA operand.

The PTX ISA gives, for every ``mma.sync`` shape and type, the matrix
element ``(row, col)`` that element ``i`` of the fragment of thread
``%laneid`` holds ("Matrix Fragments for mma.mMnNkK", section 9.7.14.5.x
of PTX ISA 9.0); ``wgmma`` (9.7.15.5.1) and ``tcgen05.mma`` (9.7.16) add
warpgroup-wide register fragments, the canonical shared-memory layouts
read through matrix descriptors, and tensor memory.  This module writes
each of those layouts once, as a Python function of ``(thread, i)`` built
only from ``+ - * // % >> &``, so that the same function

* evaluated on ints gives the layout tables (tests, the pure-Python
  emulation of a kernel launch), and
* evaluated on :class:`Expr` gives C expressions that
  :mod:`smtmma.hw.cuda_kernels` pastes into the kernels.

Conventions: A is m x k, B is k x n, C and D are m x n (row, col);
``scale_a`` is m x (k / block), ``scale_b`` is (k / block) x n.  A
:class:`Fragment` element of ``bits`` bits sits in 32-bit register
``i // per_reg`` at bit ``bits * (i % per_reg)`` ("Elements (low to
high)" in the PTX tables); 64-bit elements take a register each.

Sources: the PTX ISA 9.0 text: each ``mma.sync`` layout follows the
row/col formulas printed under its figure (the figures themselves were
not consulted).  Where the PTX ISA gives only a figure (the wgmma register
fragments, tcgen05 Layout D, which lanes give the mma.sync scale factors)
the layout is taken from the NVIDIA/cutlass layout named next to it;
cutlass was also read to cross-check the formulas:
``include/cute/atom/mma_traits_sm70.hpp`` (quad-pair layouts),
``mma_traits_sm80.hpp`` (SM80_16x8_Row), ``mma_traits_sm90_gmma.hpp``
(CLayout_64xN, ALayout_64x*, make_gmma_desc), ``mma_traits_sm120.hpp``
(SFALayout/SFBLayout of the block-scaled m16n8k32/k64),
``include/cute/arch/mma_sm100_desc.hpp`` (descriptor bit fields) and
``include/cute/atom/mma_traits_sm100_frag.hpp`` (tensor memory for M=128).

Left out, because the PTX ISA gives them only as figures: the
tensor-memory layout of tcgen05 block-scale factors (``.kind::mxf8f6f4``,
``mxf4``, ``mxf4nvf4``) and the shared-memory packing of 4/6-bit
``.kind::f8f6f4`` operands; :func:`instr_layout` refuses those.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Union

from ..isa import InstrShape
from .device import DeviceError

__all__ = [
    "Expr",
    "Fragment",
    "SmemTile",
    "InstrLayout",
    "instr_layout",
    "family_of",
    "kind_of",
    "TCGEN05_SUPPORTED",
]

Val = Union[int, "Expr"]


# ---------------------------------------------------------------- expressions


class Expr:
    """A C integer expression over the kernel's variables (non-negative ints; ``//`` prints as ``/``)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Expr({self.text!r})"

    @staticmethod
    def _op(x: Val, op: str, y: Val) -> Val:
        if isinstance(x, int) and isinstance(y, int):  # constant folding keeps the C short
            return {"+": x + y, "-": x - y, "*": x * y, "/": x // y, "%": x % y, ">>": x >> y, "&": x & y}[op]
        if op == "*" and (x == 0 or y == 0):
            return 0
        if op in ("+", "-") and y == 0:
            return x
        if op == "+" and x == 0:
            return y
        if op == "*" and y == 1:
            return x
        if op == "*" and x == 1:
            return y
        return Expr(f"({x} {op} {y})")

    def __add__(self, o: Val) -> Val:
        return Expr._op(self, "+", o)

    def __radd__(self, o: Val) -> Val:
        return Expr._op(o, "+", self)

    def __sub__(self, o: Val) -> Val:
        return Expr._op(self, "-", o)

    def __rsub__(self, o: Val) -> Val:
        return Expr._op(o, "-", self)

    def __mul__(self, o: Val) -> Val:
        return Expr._op(self, "*", o)

    def __rmul__(self, o: Val) -> Val:
        return Expr._op(o, "*", self)

    def __floordiv__(self, o: Val) -> Val:
        return Expr._op(self, "/", o)

    def __mod__(self, o: Val) -> Val:
        return Expr._op(self, "%", o)

    def __rshift__(self, o: Val) -> Val:
        return Expr._op(self, ">>", o)

    def __and__(self, o: Val) -> Val:
        return Expr._op(self, "&", o)


# ---------------------------------------------------------------- layout records

Coord = tuple[Val, Val]


@dataclass(frozen=True)
class Fragment:
    """An operand held in registers: element ``i`` of thread ``t`` is matrix element ``at(t, i)``.

    ``rows`` x ``cols`` is the operand's matrix; ``count`` elements per
    thread, ``bits`` each in the register (4, 8, 16, 32 or 64), placed
    ``shift`` bits above the element's lowest register bit (e2m1 in the
    8-bit containers of ``.kind::f8f6f4``: 2).  ``owner(t)`` is 1 for the
    threads whose registers the instruction reads (scale factors: only the
    selected thread pair / thread of each quad), None when all do.
    """

    rows: int
    cols: int
    count: int
    bits: int
    at: Callable[[Val, Val], Coord]
    threads: int = 32
    shift: int = 0
    owner: Optional[Callable[[int], int]] = None
    source: str = ""

    @property
    def per_reg(self) -> int:
        """Elements per register (1 for 32- and 64-bit elements)."""
        return max(1, 32 // self.bits)

    @property
    def regs(self) -> int:
        """Registers per thread (32-bit, or 64-bit for f64)."""
        return -(-self.count // self.per_reg)

    def place(self, i: int) -> tuple[int, int]:
        """(register, lowest bit) of element ``i`` in the thread's registers."""
        return i // self.per_reg, self.bits * (i % self.per_reg) if self.bits < 32 else 0

    def owns(self, t: int) -> bool:
        """True if thread ``t``'s registers are read by the instruction."""
        return self.owner is None or bool(self.owner(t))

    def table(self) -> list[list[tuple[int, int]]]:
        """``table[t][i]`` = (row, col) for every thread and element (ints)."""
        return [[self._int_at(t, i) for i in range(self.count)] for t in range(self.threads)]

    def _int_at(self, t: int, i: int) -> tuple[int, int]:
        r, c = self.at(t, i)
        assert isinstance(r, int) and isinstance(c, int)
        return r, c


@dataclass(frozen=True)
class SmemTile:
    """An operand in shared memory, K-major, no swizzle (PTX "canonical layout" ``((8,m),(T,2k)):((1T,SBO),(1,LBO))``).

    The matrix is stored as ``mn`` rows of ``k`` elements of ``elem_bits``
    (A: its m rows; B: its n columns); ``T = 128 / elem_bits`` elements make
    16 bytes.  Core matrices of 8 rows x 16 bytes are contiguous (128 B);
    those adjacent along K are ``lbo`` bytes apart, groups of 8 rows ``sbo``.
    ``transposed`` says the operand's matrix is k x mn (B).
    """

    mn: int
    k: int
    elem_bits: int
    transposed: bool
    source: str = ""

    @property
    def t(self) -> int:
        """Elements per 16 bytes."""
        return 128 // self.elem_bits

    @property
    def lbo(self) -> int:
        """Leading-dimension byte offset: core matrix to the next along K (bytes)."""
        return 128

    @property
    def sbo(self) -> int:
        """Stride-dimension byte offset: 8 rows to the next 8 rows (bytes)."""
        return 8 * self.k * self.elem_bits // 8

    @property
    def rows(self) -> int:
        """Rows of the operand's matrix (k for B)."""
        return self.k if self.transposed else self.mn

    @property
    def cols(self) -> int:
        """Columns of the operand's matrix."""
        return self.mn if self.transposed else self.k

    @property
    def size(self) -> int:
        """Elements in the tile."""
        return self.mn * self.k

    def offset(self, row: Val, col: Val) -> Val:
        """Element offset in shared memory of the operand's matrix element (row, col)."""
        r, kk = (col, row) if self.transposed else (row, col)
        t = self.t
        return (r % 8) * t + kk % t + (kk // t) * (8 * t) + (r // 8) * (8 * self.k)


Operand = Union[Fragment, SmemTile]


@dataclass(frozen=True)
class InstrLayout:
    """Every operand's layout for one instruction shape and its operand types.

    ``threads`` take part in one issue (32: a warp; 128: a warpgroup / the
    CTA of a tcgen05 kernel); they compute ``tiles`` independent MMAs
    (4 for ``mma.m8n8k4`` with ``.f16``: one per quad pair), thread ``t``
    working on tile ``tile_of(t)``.  ``c`` is the layout of C and D.
    """

    family: str
    shape: InstrShape
    threads: int
    tiles: int
    tile_of: Callable[[Val], Val]
    a: Operand
    b: Operand
    c: Fragment
    scale_a: Optional[Fragment] = None
    scale_b: Optional[Fragment] = None
    scale_vec: int = 0  # scale factors per row of A per issue (block-scaled), else 0

    def operands(self) -> dict[str, Operand]:
        """The operands by name: a, b, c and, when block-scaled, scale_a and scale_b."""
        out: dict[str, Operand] = {"a": self.a, "b": self.b, "c": self.c}
        if self.scale_a is not None and self.scale_b is not None:
            out["scale_a"], out["scale_b"] = self.scale_a, self.scale_b
        return out


# ---------------------------------------------------------------- helpers


def family_of(shape: InstrShape) -> str:
    """``mma``, ``wgmma`` or ``tcgen05`` from the instruction's name."""
    name = shape.name
    if name.startswith("mma.sync"):
        return "mma"
    if name.startswith("wgmma"):
        return "wgmma"
    if name.startswith("tcgen05"):
        return "tcgen05"
    raise DeviceError(f"cuda: {name} is not an NVIDIA mma.sync, wgmma or tcgen05.mma instruction")


def kind_of(shape: InstrShape) -> Optional[str]:
    """The ``.kind`` of the instruction (``f8f6f4``, ``mxf4nvf4``, ``f16``...), None for plain mma.sync forms."""
    name = shape.name
    if "kind::" not in name:
        return None
    return name.split("kind::", 1)[1].split(".", 1)[0]


_WIDTH = {"fp64": 64, "fp32": 32, "tf32": 32, "fp16": 16, "bf16": 16,
          "e4m3": 8, "e5m2": 8, "e3m2": 8, "e2m3": 8, "e2m1": 8}


def _elem_bits(fmt: str, kind: Optional[str]) -> int:
    """Register width of an A/B element: 8-bit containers for fp6/fp4 except the packed mxf4 kinds (4)."""
    if fmt == "e2m1" and kind in ("mxf4", "mxf4nvf4"):
        return 4
    try:
        return _WIDTH[fmt]
    except KeyError:
        raise DeviceError(f"cuda: no NVIDIA MMA reads {fmt} operands") from None


def _shift(fmt: str, kind: Optional[str]) -> int:
    """e2m1 sits in bits 2..5 of its 8-bit container in .kind::f8f6f4 / mxf8f6f4 (PTX 9.7.14.5.14)."""
    return 2 if fmt == "e2m1" and kind in ("f8f6f4", "mxf8f6f4") else 0


def _gt(t: Val) -> tuple[Val, Val]:
    """(groupID, threadID_in_group) of a lane."""
    return t >> 2, t & 3


def _c16x8(bits: int) -> Fragment:
    # PTX 9.7.14.5.7-11, "Accumulators (C or D)": row = groupID (+8 for c2, c3), col = 2*threadID_in_group + (i & 1)
    def at(t: Val, i: Val) -> Coord:
        g, q = _gt(t)
        return g + 8 * (i >> 1), 2 * q + (i & 1)

    return Fragment(16, 8, 4, bits, at, source="PTX 9.7.14.5.8 Figure 83 (m16n8 accumulators)")


# ---------------------------------------------------------------- mma.sync


def _mma_m8n8k4_f16(c_bits: int) -> InstrLayout:
    """Volta quad-pair layout (A row-major, B column-major): 4 independent 8x8x4 MMAs per warp."""
    hi = lambda t: 4 * (t >> 4)  # noqa: E731  high group (lanes 16..31) holds rows/cols 4..7

    # PTX 9.7.14.5.1 Figure 46 (row-major A): row = %laneid % 4 (+4 for lanes >= 16), col = i
    a = Fragment(8, 4, 4, 16, lambda t, i: ((t & 3) + hi(t), i), source="PTX 9.7.14.5.1 Figure 46")
    # PTX 9.7.14.5.1 Figure 49 (column-major B): row = i, col = %laneid % 4 (+4 for lanes >= 16)
    b = Fragment(4, 8, 4, 16, lambda t, i: (i, (t & 3) + hi(t)), source="PTX 9.7.14.5.1 Figure 49")
    if c_bits == 16:
        # PTX 9.7.14.5.1 Figure 50 (.ctype .f16): row = %laneid % 4 (+4), col = i
        c = Fragment(8, 8, 8, 16, lambda t, i: ((t & 3) + hi(t), i), source="PTX 9.7.14.5.1 Figure 50")
    else:
        # PTX 9.7.14.5.1 Figures 51-52 (.ctype .f32): row = (lane & 1) + (i & 2) (+4), col = (i & 4) + (lane & 2) + (i & 1)
        c = Fragment(8, 8, 8, 32, lambda t, i: ((t & 1) + (i & 2) + hi(t), (i & 4) + (t & 2) + (i & 1)),
                     source="PTX 9.7.14.5.1 Figures 51-52")
    shape = InstrShape("mma.sync.aligned.m8n8k4", 8, 8, 4)
    return InstrLayout("mma", shape, 32, 4, lambda t: (t >> 2) & 3, a, b, c)


def _mma_16bit(k: int, c_bits: int) -> tuple[Fragment, Fragment, Fragment]:
    """f16 / bf16 m16n8k8 and m16n8k16."""
    if k == 8:
        # PTX 9.7.14.5.7 Figure 71: row = groupID (+8 for a2, a3), col = 2*tig + (i & 1)
        a = Fragment(16, 8, 4, 16, lambda t, i: (_gt(t)[0] + 8 * (i >> 1), 2 * _gt(t)[1] + (i & 1)),
                     source="PTX 9.7.14.5.7 Figure 71")
        # PTX 9.7.14.5.7 Figure 74: row = 2*tig + i, col = groupID
        b = Fragment(8, 8, 2, 16, lambda t, i: (2 * _gt(t)[1] + i, _gt(t)[0]), source="PTX 9.7.14.5.7 Figure 74")
    else:
        # PTX 9.7.14.5.8 Figure 79: row = groupID (+8 for a2,a3,a6,a7), col = 2*tig + (i & 1) (+8 for i >= 4)
        a = Fragment(16, 16, 8, 16,
                     lambda t, i: (_gt(t)[0] + 8 * ((i >> 1) & 1), 2 * _gt(t)[1] + (i & 1) + 8 * (i >> 2)),
                     source="PTX 9.7.14.5.8 Figure 79")
        # PTX 9.7.14.5.8 Figure 81: row = 2*tig + (i & 1) (+8 for i >= 2), col = groupID
        b = Fragment(16, 8, 4, 16, lambda t, i: (2 * _gt(t)[1] + (i & 1) + 8 * (i >> 1), _gt(t)[0]),
                     source="PTX 9.7.14.5.8 Figure 81")
    return a, b, _c16x8(c_bits)


def _mma_32bit(k: int, bits: int) -> tuple[Fragment, Fragment, Fragment]:
    """tf32 (bits 32) m16n8k4/k8 and f64 (bits 64) m16n8k4/k8/k16: one element per register."""
    tag = "tf32" if bits == 32 else "f64"
    if k == 4:
        # PTX 9.7.14.5.6 Figures 65/66: row = groupID (+8 for a1), col = tig
        a = Fragment(16, 4, 2, bits, lambda t, i: (_gt(t)[0] + 8 * i, _gt(t)[1]), source=f"PTX 9.7.14.5.6 ({tag} A)")
        # PTX 9.7.14.5.6 Figures 67/68: row = tig, col = groupID
        b = Fragment(4, 8, 1, bits, lambda t, i: (_gt(t)[1] + i, _gt(t)[0]), source=f"PTX 9.7.14.5.6 ({tag} B)")
    else:
        # PTX 9.7.14.5.7 Figures 72/73 (k8) and 9.7.14.5.8 Figure 80 (f64 k16):
        # row = groupID (+8 for odd i), col = tig + 4 * (i >> 1)
        a = Fragment(16, k, k // 2, bits, lambda t, i: (_gt(t)[0] + 8 * (i & 1), _gt(t)[1] + 4 * (i >> 1)),
                     source=f"PTX 9.7.14.5.{7 if k == 8 else 8} ({tag} A)")
        # PTX 9.7.14.5.7 Figures 75/76 and 9.7.14.5.8 Figure 82: row = tig + 4 * i, col = groupID
        b = Fragment(k, 8, k // 4, bits, lambda t, i: (_gt(t)[1] + 4 * i, _gt(t)[0]),
                     source=f"PTX 9.7.14.5.{7 if k == 8 else 8} ({tag} B)")
    return a, b, _c16x8(bits)


def _mma_f64_m8n8k4() -> tuple[Fragment, Fragment, Fragment]:
    # PTX 9.7.14.5.2 Figures 53-55: A row = %laneid >> 2, col = %laneid % 4; B transposed; C row = groupID, col = 2*tig + i
    a = Fragment(8, 4, 1, 64, lambda t, i: (t >> 2, t & 3), source="PTX 9.7.14.5.2 Figure 53")
    b = Fragment(4, 8, 1, 64, lambda t, i: (t & 3, t >> 2), source="PTX 9.7.14.5.2 Figure 54")
    c = Fragment(8, 8, 2, 64, lambda t, i: (t >> 2, 2 * (t & 3) + i), source="PTX 9.7.14.5.2 Figure 55")
    return a, b, c


def _mma_8bit(k: int, c_bits: int, a_shift: int, b_shift: int) -> tuple[Fragment, Fragment, Fragment]:
    """e4m3/e5m2 m16n8k16 and the 8-bit-container m16n8k32 (fp8, and fp6/fp4 under .kind::f8f6f4 / mxf8f6f4)."""
    if k == 16:
        # PTX 9.7.14.5.9 Figure 84: row = groupID (+8 for i >= 4), col = 4*tig + (i & 3)
        a = Fragment(16, 16, 8, 8, lambda t, i: (_gt(t)[0] + 8 * (i >> 2), 4 * _gt(t)[1] + (i & 3)),
                     shift=a_shift, source="PTX 9.7.14.5.9 Figure 84")
        # PTX 9.7.14.5.9 Figure 85: row = 4*tig + i, col = groupID
        b = Fragment(16, 8, 4, 8, lambda t, i: (4 * _gt(t)[1] + i, _gt(t)[0]), shift=b_shift,
                     source="PTX 9.7.14.5.9 Figure 85")
    else:
        # PTX 9.7.14.5.10 Figure 88: row = groupID (+8 for 4 <= i < 8, 12 <= i), col = 4*tig + (i & 3) (+16 for i >= 8)
        a = Fragment(16, 32, 16, 8,
                     lambda t, i: (_gt(t)[0] + 8 * ((i >> 2) & 1), 4 * _gt(t)[1] + (i & 3) + 16 * (i >> 3)),
                     shift=a_shift, source="PTX 9.7.14.5.10 Figure 88")
        # PTX 9.7.14.5.10 Figures 90-91: row = 4*tig + (i & 3) (+16 for i >= 4), col = groupID
        b = Fragment(32, 8, 8, 8, lambda t, i: (4 * _gt(t)[1] + (i & 3) + 16 * (i >> 2), _gt(t)[0]),
                     shift=b_shift, source="PTX 9.7.14.5.10 Figures 90-91")
    return a, b, _c16x8(c_bits)


def _mma_4bit() -> tuple[Fragment, Fragment, Fragment]:
    """Packed e2m1 m16n8k64 (.kind::mxf4 / mxf4nvf4): 8 elements per register."""
    # PTX 9.7.14.5.11 Figure 93: row = groupID (+8 for 8 <= i < 16, 24 <= i), col = 8*tig + (i & 7) (+32 for i >= 16)
    a = Fragment(16, 64, 32, 4,
                 lambda t, i: (_gt(t)[0] + 8 * ((i >> 3) & 1), 8 * _gt(t)[1] + (i & 7) + 32 * (i >> 4)),
                 source="PTX 9.7.14.5.11 Figure 93")
    # PTX 9.7.14.5.11 Figures 94-95: row = 8*tig + (i & 7) (+32 for i >= 8), col = groupID
    b = Fragment(64, 8, 16, 4, lambda t, i: (8 * _gt(t)[1] + (i & 7) + 32 * (i >> 3), _gt(t)[0]),
                 source="PTX 9.7.14.5.11 Figures 94-95")
    return a, b, _c16x8(32)


def _mma_scales(k: int, block: int) -> tuple[Fragment, Fragment, int]:
    """scale_a / scale_b of the block-scaled mma.sync with every selector 0 (PTX 9.7.14.3, Figures 43-45).

    thread-id-a = 0: lanes with %laneid % 4 in {0, 1} give SF_A, lane 4g gives
    row g and lane 4g + 1 row g + 8 (cutlass mma_traits_sm120.hpp SFALayout
    ``((2,2,8),V):((8,0,1),16)``); thread-id-b = 0: lane 4g gives column g
    (SFBLayout ``((4,8),V):((0,1),8)``).  byte-id 0: byte j of the .b32
    register is the scale of the j-th block of k (1X: 1 byte, 2X: 2, 4X: 4).
    """
    nsf = k // block
    sa = Fragment(16, nsf, nsf, 8, lambda t, i: (_gt(t)[0] + 8 * (t & 1), i), owner=lambda t: int((t & 2) == 0),
                  source="cutlass SM120 SFALayout (PTX 9.7.14.3 Figures 43, 45)")
    sb = Fragment(nsf, 8, nsf, 8, lambda t, i: (i, _gt(t)[0]), owner=lambda t: int((t & 3) == 0),
                  source="cutlass SM120 SFBLayout (PTX 9.7.14.3 Figures 44, 45)")
    return sa, sb, nsf


def _mma_layout(shape: InstrShape, a_fmt: str, b_fmt: str, c_fmt: str, block: Optional[int]) -> InstrLayout:
    kind = kind_of(shape)
    m, n, k = shape.m, shape.n, shape.k
    c_bits = _WIDTH.get(c_fmt, 0)
    a_bits, b_bits = _elem_bits(a_fmt, kind), _elem_bits(b_fmt, kind)
    if a_bits != b_bits:
        raise DeviceError(f"cuda: {shape.name} needs A and B of one width (got {a_fmt} and {b_fmt})")
    if (m, n, k) == (8, 8, 4) and a_bits == 16:
        if a_fmt != "fp16":
            raise DeviceError(f"cuda: {shape.name} takes .f16 operands only (got {a_fmt})")
        return _mma_m8n8k4_f16(c_bits)
    if (m, n, k) == (8, 8, 4) and a_bits == 64:
        a, b, c = _mma_f64_m8n8k4()
    elif (m, n) != (16, 8):
        raise DeviceError(f"cuda: no fragment layout for {shape.name} with {a_fmt}")
    elif a_bits == 16 and k in (8, 16):
        a, b, c = _mma_16bit(k, c_bits)
    elif a_bits in (32, 64) and k in ((4, 8) if a_bits == 32 else (4, 8, 16)):
        a, b, c = _mma_32bit(k, a_bits)
    elif a_bits == 8 and k in (16, 32):
        a, b, c = _mma_8bit(k, c_bits, _shift(a_fmt, kind), _shift(b_fmt, kind))
    elif a_bits == 4 and k == 64:
        a, b, c = _mma_4bit()
    else:
        raise DeviceError(f"cuda: no fragment layout for {shape.name} with {a_fmt} operands")
    sa = sb = None
    nsf = 0
    if kind in ("mxf8f6f4", "mxf4", "mxf4nvf4"):
        if not block:
            raise DeviceError(f"cuda: {shape.name} needs a block size for its scale factors")
        sa, sb, nsf = _mma_scales(k, block)
    return InstrLayout("mma", shape, 32, 1, lambda t: 0, a, b, c, sa, sb, nsf)


# ---------------------------------------------------------------- wgmma (sm_90a)


def _wg_row(t: Val) -> Val:
    """First row of a warp's 16-row slice: warp w of the warpgroup covers rows 16w..16w+15."""
    return 16 * (t >> 5)


def _wgmma_layout(shape: InstrShape, a_fmt: str, c_fmt: str) -> InstrLayout:
    """A from registers, B from shared memory (K-major, no swizzle), D in registers (PTX 9.7.15.5.1)."""
    n, k = shape.n, shape.k
    bits = _elem_bits(a_fmt, None)

    def lane(t: Val) -> tuple[Val, Val]:
        return _gt(t & 31)

    if k == 16 and bits == 16:
        # PTX 9.7.15.5.1.1 Figure 148 = cutlass ALayout_64x16: each warp's 16 rows as mma.m16n8k16 A
        a = Fragment(64, 16, 8, 16,
                     lambda t, i: (_wg_row(t) + lane(t)[0] + 8 * ((i >> 1) & 1), 2 * lane(t)[1] + (i & 1) + 8 * (i >> 2)),
                     threads=128, source="cutlass ALayout_64x16 (PTX 9.7.15.5.1.1 Figure 148)")
    elif k == 8 and bits == 32:
        # PTX 9.7.15.5.1.1 Figure 150 = cutlass ALayout_64x8: as mma.m16n8k8 .tf32 A
        a = Fragment(64, 8, 4, 32, lambda t, i: (_wg_row(t) + lane(t)[0] + 8 * (i & 1), lane(t)[1] + 4 * (i >> 1)),
                     threads=128, source="cutlass ALayout_64x8 (PTX 9.7.15.5.1.1 Figure 150)")
    elif k == 32 and bits == 8:
        # PTX 9.7.15.5.1.1 Figure 152 = cutlass ALayout_64x32: as mma.m16n8k32 8-bit A
        a = Fragment(64, 32, 16, 8,
                     lambda t, i: (_wg_row(t) + lane(t)[0] + 8 * ((i >> 2) & 1), 4 * lane(t)[1] + (i & 3) + 16 * (i >> 3)),
                     threads=128, source="cutlass ALayout_64x32 (PTX 9.7.15.5.1.1 Figure 152)")
    else:
        raise DeviceError(f"cuda: no wgmma layout for {shape.name} with {a_fmt} operands")
    b = SmemTile(n, k, bits, transposed=True,
                 source="PTX 9.7.15.5.1.2 (K-major, no swizzle); cutlass make_gmma_desc<Major::K> INTERLEAVE")
    # PTX 9.7.15.5.1.1 Figures 149/151/153 = cutlass CLayout_64xN: row = 16*warp + groupID (+8 for (i >> 1) & 1),
    # col = 8*(i >> 2) + 2*tig + (i & 1); N/2 elements per thread (f16: two per .f16x2 register)
    c = Fragment(64, n, n // 2, _WIDTH[c_fmt],
                 lambda t, i: (_wg_row(t) + lane(t)[0] + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * lane(t)[1] + (i & 1)),
                 threads=128, source="cutlass CLayout_64xN (PTX 9.7.15.5.1.1 Figures 149/151/153)")
    return InstrLayout("wgmma", shape, 128, 1, lambda t: 0, a, b, c)


# ---------------------------------------------------------------- tcgen05.mma (sm_100a)

#: tcgen05 kinds this package runs; the rest are refused (see :func:`instr_layout`).
TCGEN05_SUPPORTED = ("tf32", "f16", "f8f6f4")


def _tcgen05_layout(shape: InstrShape, a_fmt: str, b_fmt: str, c_fmt: str) -> InstrLayout:
    """A and B from shared memory (K-major, no swizzle), D in tensor memory, cta_group::1, M=128."""
    kind = kind_of(shape)
    m, n, k = shape.m, shape.n, shape.k
    if kind not in TCGEN05_SUPPORTED or shape.name.endswith(".block_scale"):
        raise DeviceError(
            f"cuda: {shape.name} is not supported: the tensor-memory layout of block-scale factors is given only "
            f"in figures of the PTX ISA, which this device does not guess; use sim:sm100 or an sm_120a GPU")
    for fmt in (a_fmt, b_fmt):
        if fmt in ("e2m1", "e2m3", "e3m2"):
            raise DeviceError(
                f"cuda: {shape.name} with {fmt} operands is not supported: the shared-memory packing of 4/6-bit "
                f"elements is given only in figures of the PTX ISA; use sim:sm100 or an sm_120a GPU")
    if m != 128:
        raise DeviceError(f"cuda: tcgen05 kernels use M=128 (cta_group::1), not M={m}")
    bits = _elem_bits(a_fmt, kind)
    src = "PTX 9.7.16.3.3 (K-major, no swizzle); cutlass make_umma_desc<Major::K> INTERLEAVE"
    a = SmemTile(m, k, bits, transposed=False, source=src)
    b = SmemTile(n, k, bits, transposed=True, source=src)
    # PTX 9.7.16.10.5.4 Layout D (M = 128, cta_group::1) and cutlass tmem_frg (M_MMA = 128: (m, n) -> lane m,
    # column n): thread t of the CTA reads tensor-memory lane t (warp w: lanes 32w..32w+31) with tcgen05.ld.32x32b,
    # so element i of thread t is D[t, i]; 16-bit D sits unpacked in the low half of each 32-bit word (9.7.16.10.4.1).
    c = Fragment(m, n, n, 32, lambda t, i: (t, i), threads=128,
                 source="cutlass tmem_frg M_MMA=128 (PTX 9.7.16.10.5.4 Layout D; 9.7.16.10.4.1)")
    del c_fmt
    return InstrLayout("tcgen05", shape, 128, 1, lambda t: 0, a, b, c)


# ---------------------------------------------------------------- entry point


def instr_layout(shape: InstrShape, a_fmt: str, b_fmt: str, c_fmt: str, block: Optional[int] = None) -> InstrLayout:
    """The layout of every operand of ``shape`` with A/B/C formats (``fp16``, ``e4m3``...); block-scaled: ``block``.

    Raises :class:`~smtmma.hw.device.DeviceError` for shapes or types this
    package has no layout for (tcgen05 block-scaled kinds and 4/6-bit
    tcgen05 operands, among others).
    """
    family = family_of(shape)
    if family == "mma":
        return _mma_layout(shape, a_fmt, b_fmt, c_fmt, block)
    if family == "wgmma":
        if _elem_bits(a_fmt, None) != _elem_bits(b_fmt, None):
            raise DeviceError(f"cuda: {shape.name} needs A and B of one width (got {a_fmt} and {b_fmt})")
        return _wgmma_layout(shape, a_fmt, c_fmt)
    return _tcgen05_layout(shape, a_fmt, b_fmt, c_fmt)
