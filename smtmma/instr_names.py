"""Instruction names users already have, matched against :data:`smtmma.isa.SHAPES`.

Besides an op family (``mma``, ``wgmma``, ``tcgen05``, ``mfma``, ``mfma_1k``),
an op may be spelled as:

* a PTX instruction: ``mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32``
  (types d.a.b.c, block-scaled forms end in the scale type ``.ue8m0``),
  ``wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16`` (d.a.b),
  ``tcgen05.mma.cta_group::1.kind::f16`` (no types; ``.block_scale``,
  ``.scale_vec::NX``, ``.cta_group::2`` and ``.ws`` accepted);
* an MMA-Sim qualifier string (microsoft/MMA-Sim, mmasim/isa/nv_ptx/nv_mma.py,
  nv_wgmma.py, nv_tcgen05mma.py: ``m16n8k16.f32.f16.f16.f32``,
  ``m16n8k32.block32.f32.e4m3.e4m3.f32.ue8m0``, ``m64n8k16.f32.f16.f16``;
  mmasim/isa/amd.py: ``f32_16x16x16_f16``);
* an AMD MFMA mnemonic with or without ``v_`` / ``v_mfma_``, in any case, with
  or without the underscore before the type (``V_MFMA_F32_16X16X16F16``).

Types in a name must agree with the instruction type given with it; a name
that fixes the types alone names the instruction type (see :func:`resolve`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from .errors import InputError, UnknownNameError, choices, did_you_mean, spell
from .isa import SHAPES, InstrShape

__all__ = ["FAMILIES", "OpName", "parse_op", "resolve", "named_shape"]

#: Op families (the ``op`` of a catalogue row); on NVIDIA ``wmma`` is read as ``mma``, on AMD it is RDNA's WMMA.
FAMILIES = ("mma", "wgmma", "tcgen05", "wmma", "mfma", "mfma_1k")
_AMD_FAMILIES = ("mfma", "wmma")

_NV_TYPES = {"f16": "fp16", "f32": "fp32", "f64": "fp64", "bf16": "bf16", "tf32": "tf32", "e4m3": "e4m3",
             "e5m2": "e5m2", "e2m3": "e2m3", "e3m2": "e3m2", "e2m1": "e2m1", "ue8m0": "ue8m0", "ue4m3": "ue4m3"}
#: AMD type tags; fp8/bf8 are FNUZ on CDNA3 and OCP on gfx950 and gfx12 (the same mnemonics: llvm/llvm-project
#: PR 106160), so a name's fp8 fits either and the architecture's shape table decides.
_AMD_TYPES: dict[str, tuple[str, ...]] = {"f32": ("fp32",), "f64": ("fp64",), "f16": ("fp16",), "bf16": ("bf16",),
                                          "xf32": ("tf32",), "fp8": ("e4m3fnuz", "e4m3"), "bf8": ("e5m2fnuz", "e5m2")}
#: Elements per scale of each scale format (catalogue.INSTRS: MX per 32, NVFP4 per 16).
_NOISE = {"sync", "aligned", "mma_async", "satfinite", "ws"}  # accepted, no effect on the arithmetic
_QUALIFIERS = sorted(_NOISE | {"row", "col", "block_scale", "cta_group::1", "cta_group::2", "scale_vec::1X",
                               "scale_vec::2X", "scale_vec::4X", "block16", "block32", *_NV_TYPES})
_SHAPE = re.compile(r"m(\d+)n(\d+)k(\d+)")
_KIND = re.compile(r"kind::(\w+)")
_AMD = re.compile(r"(f32|f64|f16)_(\d+)x(\d+)x(\d+)(?:_(\d+)b)?_?(xf32|f32|f64|f16|bf16|fp8|bf8|f8f6f4)(?:_(fp8|bf8))?(_1k)?")
_AMD_PREFIX = re.compile(r"^(?:v_)?(mfma_scale|mfma|wmma)_")


@dataclass(frozen=True)
class OpName:
    """What an instruction name says: family, shape, kind, scales and operand formats (None: not said)."""

    text: str
    family: str  # "mma" | "wgmma" | "tcgen05" | "async" (MMA-Sim d.a.b: wgmma or tcgen05) | "mfma" | "wmma" (AMD)
    mnk: Optional[tuple[int, int, int]] = None
    kind: Optional[str] = None
    scaled: bool = False
    block: Optional[int] = None
    scale_vec: Optional[int] = None
    ptx: bool = False
    fmts: dict[str, object] = field(default_factory=dict)  # a, b, c, d, scale -> format, or a tuple of formats (AMD fp8)
    amd_key: Optional[str] = None


def _amd_key(name: str) -> str:
    """A mnemonic's identity: no ``v_``, no block tag, no underscores; ``wmma``/``scale`` kept (an MFMA has no prefix)."""
    key = name.strip().lower()
    key = key[2:] if key.startswith("v_") else key
    key = key[5:] if key.startswith("mfma_") else key
    return re.sub(r"_\d+b(?=_)", "", key).replace("_", "")  # the CDNA3 block tag follows from m, n, k


def _bad(text: str, why: str) -> InputError:
    return InputError(f"op {text!r}: {why}")


def parse_op(text: str) -> Optional[OpName]:
    """The :class:`OpName` of a PTX, MMA-Sim or MFMA spelling; None when ``text`` looks like none of them."""
    key = text.strip().lower()
    prefix = _AMD_PREFIX.match(key)
    if "mfma" in key or prefix or _AMD.fullmatch(key):
        family = "wmma" if prefix and prefix.group(1) == "wmma" else "mfma"
        m = _AMD.fullmatch(key[prefix.end():] if prefix else key[2:] if key.startswith("v_") else key)
        m = m or _AMD.fullmatch(key.split("mfma_", 1)[-1])
        fmts: dict[str, object] = {}
        if m:
            d, _, _, _, _, a, b, _ = m.groups()
            if a != "f8f6f4":  # f8f6f4: A's and B's types are operands (CBSZ, BLGP), not in the name
                fmts = {"a": _AMD_TYPES[a], "b": _AMD_TYPES[b or a], "c": _AMD_TYPES[d], "d": _AMD_TYPES[d]}
            fmts["scale"] = ("ue8m0",) if prefix and prefix.group(1) == "mfma_scale" else None
        mnk = tuple(int(x) for x in m.groups()[1:4]) if m else None
        return OpName(text, family, mnk=mnk, fmts=fmts, amd_key=_amd_key(key))  # type: ignore[arg-type]
    tokens = key.split(".")
    head = tokens[0]
    if head in ("mma", "wgmma", "tcgen05"):
        family, ptx, tokens = head, True, tokens[1:]
    elif _SHAPE.fullmatch(head):
        family, ptx = "", False
    else:
        return None
    mnk = None
    kind = None
    layouts: list[str] = []
    types: list[str] = []
    scaled = False
    block = scale_vec = None
    for tok in tokens:
        shape = _SHAPE.fullmatch(tok)
        if shape and mnk is None:
            mnk = tuple(map(int, shape.groups()))
        elif tok in _NOISE or (tok == "mma" and family == "tcgen05"):
            continue
        elif tok in ("row", "col"):
            layouts.append(tok)
        elif tok.startswith("kind::"):
            kind = tok[6:]
        elif tok == "block_scale":
            scaled = True
        elif re.fullmatch(r"cta_group::[12]", tok):
            continue
        elif re.fullmatch(r"scale_vec::[124]x", tok):
            scaled, scale_vec = True, int(tok[11])
        elif re.fullmatch(r"block(16|32)", tok):
            scaled, block = True, int(tok[5:])
        elif tok in _NV_TYPES:
            types.append(_NV_TYPES[tok])
        elif tok == "sp":
            raise _bad(text, "sparse MMA (.sp) is not modelled")
        else:
            hint = did_you_mean(tok, _QUALIFIERS)
            raise UnknownNameError(f"op {text!r}: unknown qualifier {'.' + tok!r}" + (f"; {hint}" if hint else ""))
    fmts = {}
    if types and types[-1] in ("ue8m0", "ue4m3"):
        scaled, fmts["scale"] = True, types.pop()
    if not family:  # MMA-Sim: shape.d.a.b.c is mma.sync, shape.d.a.b wgmma / tcgen05
        family = "mma" if len(types) == 4 else "async"
    want = {"mma": (4,), "wgmma": (3,), "tcgen05": (0, 3), "async": (3,)}[family]
    if types and len(types) not in want or not types and not ptx:
        raise _bad(text, f"expected {' or '.join(str(n) for n in want)} operand types after the shape, got {len(types)}")
    if types:
        d, a, b = types[:3]
        fmts.update(a=a, b=b, d=d, c=types[3] if len(types) == 4 else d)
    if family == "tcgen05" and ptx and kind is None:
        raise _bad(text, "tcgen05.mma needs a .kind:: qualifier (kind::tf32, kind::f16, kind::f8f6f4, ...)")
    if family in ("mma", "wgmma") and ptx and mnk is None:
        raise _bad(text, f"no shape (mMnNkK) in the {family} name")
    if layouts and (family != "mma" or (layouts != ["row", "col"] and mnk != (8, 8, 4))):
        raise _bad(text, f"{'.'.join(layouts)}: {family} takes .row.col" + (" only" if family == "mma" else " in no form"))
    if mnk and family in ("wgmma", "async", "tcgen05"):
        m, n, _ = mnk
        if family == "wgmma" and m != 64 or m not in (64, 128, 256):
            raise _bad(text, f"m={m}: {'wgmma takes m64' if family == 'wgmma' else 'm is 64, 128 or 256'}")
        if not (8 <= n <= 256 and n % 8 == 0):
            raise _bad(text, f"n={n}: n is a multiple of 8 in 8..256")
    return OpName(text, family, mnk=mnk, kind=kind, scaled=scaled, block=block, scale_vec=scale_vec,  # type: ignore[arg-type]
                  ptx=ptx, fmts=fmts)


def _shape_fits(p: OpName, family: str, s: InstrShape) -> bool:
    if p.family in _AMD_FAMILIES:
        return family.startswith(p.family) and _amd_key(s.name) == p.amd_key
    if family != p.family and not (p.family == "async" and family in ("wgmma", "tcgen05")):
        return False
    kind = _KIND.search(s.name)
    if p.kind is not None and (kind is None or kind.group(1) != p.kind):
        return False
    if p.kind is None and p.ptx and family == "mma" and kind is not None:
        return False
    if p.scaled != (".block_scale" in s.name):
        return False
    if p.mnk is None:
        return True
    m, n, k = p.mnk
    return (m, n, k) == (s.m, s.n, s.k) if family == "mma" else k == s.k


def _fmts_fit(p: OpName, instr: object) -> bool:
    f = p.fmts
    have = {"a": instr.a_fmt, "b": instr.b_fmt, "c": instr.c_fmt, "d": instr.d_fmt, "scale": instr.scale_fmt}  # type: ignore[attr-defined]
    return all(f.get(x) is None or have[x] in (f[x] if isinstance(f[x], tuple) else (f[x],)) for x in have)


def _types_fit(p: OpName, instr: object, s: InstrShape) -> bool:
    if not _fmts_fit(p, instr):
        return False
    block = p.block or (s.k // p.scale_vec if p.scale_vec else None)
    return block is None or instr.block == block  # type: ignore[attr-defined]


def _implied(p: OpName) -> str:
    """What the types of a name say, e.g. ``a fp16, b fp16, c fp32, d fp32``."""
    def text(v: object) -> str:
        return " or ".join(v) if isinstance(v, tuple) else str(v)
    return ", ".join(f"{x} {text(p.fmts[x])}" for x in ("a", "b", "c", "d", "scale") if p.fmts.get(x))


def resolve(arch: str, instr: Optional[str], op: str, vendor: str) -> Optional[tuple[str, str, InstrShape]]:
    """``(instr, family, shape)`` that ``op`` names on ``arch``; None when ``op`` is no instruction name.

    ``arch`` and ``instr`` are canonical (``instr`` None: the name must fix
    the instruction type).  The shape carries the m, n, k of the name where
    it gives them.  Raises :class:`InputError` when the name's types disagree
    with ``instr``, or ``arch`` offers no such shape (listing those it has).
    """
    from .catalogue import INSTRS  # the catalogue imports this module

    p = parse_op(op)
    if p is None:
        return None
    if (vendor == "amd") != (p.family in _AMD_FAMILIES):
        other = f"an {p.family.upper()} name (v_{p.family}_...)" if p.family in _AMD_FAMILIES else "a PTX name"
        raise _bad(op, f"{arch} is an {vendor.upper() if vendor == 'amd' else 'NVIDIA'} architecture; this is {other}")
    table = SHAPES.get(arch, {})
    hits = [(i, fam, s) for i, fams in table.items() for fam, shapes in fams.items() for s in shapes
            if _shape_fits(p, fam, s) and _types_fit(p, INSTRS[i], s)]
    if not hits and p.amd_key and p.amd_key.endswith("1k") and not any("mfma_1k" in f for f in table.values()):
        return resolve(arch, instr, op[:-3], vendor)  # CDNA3 bf16 is the _1k datapath under its plain name
    named = {i for i, _, _ in hits}
    if instr is not None:
        mine = [h for h in hits if h[0] == instr]
        if not mine and (named or (p.fmts and not _fmts_fit(p, INSTRS[instr]))):
            says = choices(sorted(named)) + (f" ({_implied(p)})" if p.fmts else "") if named else _implied(p)
            raise InputError(f"op {op!r} implies {says}, not instruction {instr}")
        hits = mine
    elif len(named) > 1:
        raise InputError(f"op {op!r} names several instruction types on {arch} ({choices(sorted(named))}): give one as {spell('instr')}")
    if not hits:
        raise _no_shape(arch, instr, p, table)
    i, fam, s = hits[0]
    m, n, k = p.mnk or (s.m, s.n, s.k)
    return i, fam, InstrShape(s.name, m, n, k)


def _no_shape(arch: str, instr: Optional[str], p: OpName, table: dict[str, dict[str, tuple[InstrShape, ...]]]) -> InputError:
    """Error for a well-formed name that ``arch`` does not offer: the shapes it has instead."""
    from .catalogue import INSTRS

    if instr is None:  # the types may still name one instruction type: show its shapes
        implied = [i for i in table if p.fmts and _fmts_fit(p, INSTRS[i])]
        instr = implied[0] if len(implied) == 1 else None
    tables = [table.get(instr, {})] if instr else list(table.values())  # every instruction type's shapes
    fams = {f: s for t in tables for f, s in t.items()}  # the families, for their names
    family = ("wgmma" if "wgmma" in fams else "tcgen05") if p.family == "async" else p.family
    names = list(dict.fromkeys(s.name for t in tables for f, shapes in t.items() if f.startswith(family) for s in shapes))
    what = f"{arch} {instr}" if instr else arch
    if not names:
        return InputError(f"op {p.text!r}: {what} has no {family} instructions" + (f" of {_implied(p)}" if p.fmts and not instr else "")
                          + f"; its ops: {choices(fams) or 'none'}")
    if family in _AMD_FAMILIES:
        hint = did_you_mean(p.text.lower(), names)
        return InputError(f"op {p.text!r}: {what} has no such {family.upper()}; {hint + ' ' if hint else ''}"
                          f"its {family.upper()}s: {choices(names)}")
    shape = "m{}n{}k{}".format(*p.mnk) if p.mnk else "of this name"
    same = p.mnk and any(s.k == p.mnk[2] and (family != "mma" or (s.m, s.n) == p.mnk[:2])
                         for t in tables for f, shapes in t.items() if f == family for s in shapes)
    return InputError(f"op {p.text!r}: {what} has no {family} shape {shape}{' with these qualifiers' if same else ''}; "
                      f"its {family} shapes: {choices(names)}")


def named_shape(arch: str, instr: str, op: Optional[str], vendor: str) -> Optional[InstrShape]:
    """The shape ``op`` names for ``(arch, instr)``, None for a family or no op."""
    if not op or op.strip().lower() in FAMILIES:
        return None
    hit = resolve(arch, instr, op, vendor)
    return hit[2] if hit else None
