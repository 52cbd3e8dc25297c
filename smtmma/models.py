"""Model parameterizations: which elementary op, with which parameters.

A :class:`Model` is plain frozen data, so a candidate hypothesis is
``dataclasses.replace(model, F=26)``.  Its ``kind`` names the MMA model of
the MMA-Sim paper (Table 1):

========== =========================================== =======================
kind       elementary op (paper)                        parameters used
========== =========================================== =======================
ftz-addmul FTZ-Add/FTZ-Mul, pairwise (Alg. 1, Alg. 2)   P
fma        standard FMA chain (Alg. 3, Alg. 4)          --
e-fdpa     exact FDPA (Alg. 6) chained (Alg. 5)         L
t-fdpa     truncated FDPA (Alg. 7)                      L, F, rho, carry_bits
st-fdpa    scaled T-FDPA (Alg. 8)                       L, F, rho, block
gst-fdpa   group-scaled T-FDPA (Alg. 9)                 L, G, F, rho, block
tr-fdpa    truncated-rounded FDPA (Alg. 10)             L, F, F2, rho
gtr-fdpa   group truncated-rounded FDPA (Alg. 11)       L, F, F2, rho
========== =========================================== =======================

``L`` is L_max of Alg. 5: a dot product of length K runs as a chain of
ceil(K / L) FDPAs over consecutive chunks, the last one padded with zeros.
"""

from __future__ import annotations

import dataclasses
import numbers
import re
from dataclasses import dataclass
from typing import Optional

from .errors import InputError, InputTypeError, UnknownNameError, choices, did_you_mean, unknown_name
from .formats import clip, get_format

__all__ = ["Model", "KINDS", "RHOS", "NAN_STYLES", "FLAGS", "Conversion", "canonical_kind", "parse_model_spec"]


@dataclass(frozen=True)
class Conversion:
    """A conversion function rho of Table 2: round to ``fmt`` with ``mode``.

    ``fmt`` is the format rounded to; results are delivered as bits of
    ``fmt``'s container when it has one (E8M13 in FP32).
    """

    name: str
    fmt: str
    mode: str  # "rne" | "rz" | "rd" | "ru"


#: Table 2 of the MMA-Sim paper, plus the other IEEE modes as hypotheses to test against.
RHOS: dict[str, Conversion] = {
    f"{mode}-{fmt}": Conversion(f"{mode}-{fmt}", fmt, mode)
    for fmt in ("fp32", "fp16", "e8m13", "fp64")
    for mode in ("rz", "rne", "rd", "ru")
}

KINDS = ("ftz-addmul", "fma", "e-fdpa", "t-fdpa", "st-fdpa", "gst-fdpa", "tr-fdpa", "gtr-fdpa")

#: Parameters each kind reads; the others must stay None.
KIND_PARAMS: dict[str, tuple[str, ...]] = {
    "ftz-addmul": ("P",),
    "fma": (),
    "e-fdpa": ("L",),
    "t-fdpa": ("L", "F", "rho", "carry_bits", "emax_floor"),
    "st-fdpa": ("L", "F", "rho", "block", "carry_bits", "emax_floor"),
    "gst-fdpa": ("L", "G", "F", "rho", "block", "carry_bits", "emax_floor"),
    "tr-fdpa": ("L", "F", "F2", "rho"),
    "gtr-fdpa": ("L", "F", "F2", "rho"),
}

#: Allowed ranges, for error messages and spec parsing.
PARAM_RANGES: dict[str, tuple[int, int]] = {
    "L": (1, 128),
    "F": (0, 64),
    "F2": (0, 64),
    "G": (1, 64),
    "P": (2, 4),
    "block": (1, 64),
    "carry_bits": (0, 16),
    "emax_floor": (-1100, 0),
}


@dataclass(frozen=True)
class Model:
    """One arithmetic model of an MMA instruction, with its operand formats.

    Attributes (units): ``L`` vector length (terms), ``F``/``F2`` fractional
    bits kept in the fused/rounded sums, ``G`` group size (terms), ``P``
    pairwise width, ``rho`` conversion name (Table 2), ``carry_bits`` width
    of the integer part of the aligned fixed-point sum beyond the 2 integer
    bits of a product (None = unbounded), ``block`` elements per scale
    factor, ``interleave`` lanes per register when chunks of L are
    interleaved (chunk of lane k = (k // interleave) mod chunks),
    ``issue`` lanes per instruction issue when interleave and c_after act
    per instruction (the sum is then one instruction after another, D of
    one the C of the next),
    ``c_after`` chain from zero and add C last with an RNE add,
    ``emax_floor`` lowest alignment exponent of the fused sum (exponent), ``nan`` canonical NaN style of the output ("nvidia": 0x7FFFFFFF
    / 0x7FFF; "ieee": 0x7FC00000 / 0x7E00; "propagate", fma only: the NaN
    operand's payload, quieted, b before c before a, invalid -> 0xFFF8...), ``ftz_inputs`` flush input
    subnormals to +0 (CDNA2).  ``zero_emax`` and ``ieee_zero`` are the
    alternatives to two decisions of docs/semantics.md that no recorded data
    settles yet (zero terms in e_max; the sign of a sum of -0s), for the
    vectors of suites/open-questions.jsonl.  ``sum_rz`` is the hypothetical
    twin of CDNA3's TR/GTR-FDPA that truncates toward zero where they round
    down (000 §6.2.4, Fig. 3).
    """

    kind: str
    a_fmt: str
    b_fmt: str
    c_fmt: str
    d_fmt: str
    L: Optional[int] = None
    F: Optional[int] = None
    F2: Optional[int] = None
    G: Optional[int] = None
    P: Optional[int] = None
    rho: Optional[str] = None
    carry_bits: Optional[int] = None
    block: Optional[int] = None
    scale_fmt: Optional[str] = None
    nan: str = "ieee"
    ftz_inputs: bool = False
    via: Optional[str] = None  # inputs converted exactly to this format first (e.g. fp8 run on the fp16 path)
    interleave: Optional[int] = None  # chunk of lane k is (k // interleave) % chunks, not k // L
    c_after: bool = False  # chain from a zero accumulator, then add C with an RNE add in d_fmt
    issue: Optional[int] = None  # lanes per instruction issue: interleave and c_after act within each, D of one is C of the next
    emax_floor: Optional[int] = None  # alignment exponent e_max is at least this (T/ST/GST-FDPA)
    zero_emax: bool = False  # hypothesis: zero terms take part in e_max with their own exponent (T/ST-FDPA)
    ieee_zero: bool = False  # hypothesis: a sum of zeros that are all -0 gives -0, not +0 (T/ST-FDPA)
    sum_rz: bool = False  # hypothesis: TR/GTR-FDPA truncate where they round down (the RZ twin of 000 §6.2.4, Fig. 3)

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or self.kind not in KINDS:
            raise UnknownNameError(unknown_name("model kind", self.kind, KINDS))
        for name in ("a_fmt", "b_fmt", "c_fmt", "d_fmt", "scale_fmt", "via"):
            fmt = getattr(self, name)
            if fmt is not None or name.endswith("_fmt") and name != "scale_fmt":
                try:
                    get_format(fmt)
                except (InputTypeError, UnknownNameError) as e:
                    raise type(e)(f"model {name}: {e}") from None
        for name in ("a_fmt", "b_fmt", "c_fmt", "d_fmt"):
            if not get_format(getattr(self, name)).signed:
                raise InputError(f"model {name}={getattr(self, name)} is a scale format (unsigned): operands and D are signed")
        for name in ("rho", "nan", "scale_fmt", "via"):
            v = getattr(self, name)
            if v is not None and not isinstance(v, str):
                raise InputTypeError(f"model {name} must be a name (str) or None, got {type(v).__name__} {clip(repr(v), quote=False)}")
        for name in ("c_after", "ftz_inputs", "zero_emax", "ieee_zero", "sum_rz"):
            if not isinstance(getattr(self, name), bool):
                raise InputTypeError(f"model flag {name} must be True or False, got {getattr(self, name)!r}")
        if self.interleave is not None and (not isinstance(self.interleave, numbers.Integral) or isinstance(self.interleave, bool)):
            raise InputTypeError(f"model interleave must be an int or None, got {self.interleave!r}")
        for name, (lo, hi) in PARAM_RANGES.items():
            v = getattr(self, name)
            if v is not None and (not isinstance(v, numbers.Integral) or isinstance(v, bool)):
                raise InputTypeError(f"model parameter {name} must be an int or None, got {type(v).__name__} {v!r}")
            if v is not None and not lo <= v <= hi:
                raise InputError(f"model parameter {name}={v} out of range {lo}..{hi}")
        self._check_parameters()
        if self.interleave is not None and (self.L is None or self.interleave < 1 or self.L % self.interleave):
            raise InputError(f"interleave={self.interleave} must divide L={self.L}")
        if self.issue is not None:
            if not isinstance(self.issue, numbers.Integral) or isinstance(self.issue, bool):
                raise InputTypeError(f"model issue must be an int or None, got {self.issue!r}")
            if self.L is None or self.kind == "fma" or self.issue < self.L or self.issue % self.L or self.issue > 4096:
                raise InputError(f"issue={self.issue} (lanes per instruction) must be a multiple of L={self.L} "
                                 "up to 4096, for a fused-sum model")
        if self.rho is not None and self.rho not in RHOS:
            raise UnknownNameError(unknown_name("conversion rho", self.rho, RHOS))
        if self.rho is not None:  # rho (Table 2) writes D: its format must be D's (or live in D's container)
            rf = get_format(RHOS[self.rho].fmt)
            if get_format(self.d_fmt).name not in (rf.name, rf.container):
                raise InputError(f"rho={self.rho} rounds to {rf.name}, but D is {self.d_fmt}")
        if self.P is not None and self.P not in (2, 4):
            raise InputError(f"P={self.P}: FTZ-AddMul (Alg. 2) adds products in pairs (P=2) or fours (P=4)")
        if self.F is not None and self.F2 is not None and self.F2 < self.F:
            raise InputError(f"F2={self.F2} < F={self.F}: Alg. 10/11 round the F-bit sum down to F2 >= F fraction bits")
        if self.nan not in NAN_STYLES:
            raise UnknownNameError(unknown_name("NaN style nan", self.nan, NAN_STYLES))
        if self.nan == "propagate" and (self.kind != "fma" or len({self.a_fmt, self.b_fmt, self.c_fmt, self.d_fmt}) > 1):
            raise InputError("nan=propagate (a NaN operand's payload carried to D) is a choice of fma models whose "
                             f"operands and D share one format; {self.kind} {self.a_fmt}/{self.b_fmt}/{self.c_fmt}/{self.d_fmt} has none")
        if self.kind == "fma" and not get_format(self.d_fmt).has_inf:  # Alg. 3 is IEEE 754's FMA: overflow gives +-inf
            raise InputError(f"fma rounds as IEEE 754 (Alg. 3: an overflow is infinite); D={self.d_fmt} has no infinity")
        if self.kind == "st-fdpa" and self.scale_fmt is not None and get_format(self.scale_fmt).man_bits:
            raise InputError(f"st-fdpa multiplies power-of-two scales (Alg. 8: UE8M0); {self.scale_fmt} scales have a "
                             "significand: use gst-fdpa (Alg. 9), as the catalogue's nvf4 rows do")
        for flag in ("zero_emax", "ieee_zero"):
            if getattr(self, flag) and self.kind not in ("t-fdpa", "st-fdpa"):
                raise InputError(f"{flag} is a hypothesis about T-FDPA and ST-FDPA sums; {self.kind} has no such choice")
        if self.sum_rz and self.kind not in ("tr-fdpa", "gtr-fdpa"):
            raise InputError(f"sum_rz replaces the round-down of TR-FDPA and GTR-FDPA sums; {self.kind} does not round down")

    def _check_parameters(self) -> None:
        """InputError unless the kind's parameters (Alg. 2-11) are set and no other kind's are."""
        allowed = KIND_PARAMS[self.kind]
        stray = [p for p in (*PARAM_RANGES, "rho") if p not in allowed and getattr(self, p) is not None]
        if stray:
            raise InputError(f"{self.kind} takes no {', '.join(stray)} (its parameters: {', '.join(allowed) or 'none'})")
        missing = [p for p in _REQUIRED[self.kind] if getattr(self, p) is None]
        if missing:
            need = ", ".join(f"{p}={'N ' if p in PARAM_RANGES else ''}{_param_range(p)}" for p in missing)
            raise InputError(f"{self.kind} needs {need}, e.g. {self.kind}:{','.join(f'{p}=...' for p in missing)}")
        if self.via is not None:  # inputs converted exactly to via first: it must hold every a and b value
            v = get_format(self.via)
            for f in (get_format(self.a_fmt), get_format(self.b_fmt)):
                if v.exp_bits < f.exp_bits or v.man_bits < f.man_bits:
                    raise InputError(f"via={self.via} cannot hold every {f.name} value exactly")
        scaled = self.kind in ("st-fdpa", "gst-fdpa")
        if scaled and self.scale_fmt is None:
            from .catalogue import INSTRS  # the catalogue builds on this module: import it only for this message

            names = ", ".join(name for name, i in INSTRS.items() if i.scale_fmt)
            raise InputError(f"{self.kind} multiplies block scales: use it with a block-scaled instruction ({names})")
        if not scaled and self.scale_fmt is not None:
            raise InputError(f"{self.kind} reads no block scales (scale_fmt={self.scale_fmt}): use st-fdpa or gst-fdpa")

    @property
    def conversion(self) -> Conversion:
        """The :class:`Conversion` named by ``rho``."""
        assert self.rho is not None, f"{self.kind} has no rho"
        return RHOS[self.rho]

    def describe(self) -> str:
        """Short spec string, e.g. ``t-fdpa:L=8,F=24,rho=rz-fp32``."""
        parts = [f"{p}={getattr(self, p)}" for p in KIND_PARAMS[self.kind] if getattr(self, p) is not None]
        if self.via:
            parts.append(f"via={self.via}")
        if self.interleave:
            parts.append(f"interleave={self.interleave}")
        if self.c_after:
            parts.append("c_after")
        if self.issue:
            parts.append(f"issue={self.issue}")
        if self.ftz_inputs:
            parts.append("ftz_inputs")
        parts += [flag for flag in ("zero_emax", "ieee_zero", "sum_rz") if getattr(self, flag)]
        if self.nan == "propagate":  # the other styles are an architecture's default; this one is a unit's finding
            parts.append("nan=propagate")
        return self.kind + (":" + ",".join(parts) if parts else "")

    def rounding_summary(self, *, short: bool = False) -> str:
        """Where this model rounds, in words: inside each fused sum, and D at the end (derived from its fields).

        E.g. ``"terms aligned at e_max and truncated toward zero (RZ) to F=25
        fraction bits inside each FDPA, then summed exactly; D rounded toward
        zero (RZ) to fp32 after each FDPA of L=16"``.  ``short=True``: the
        same as ``inside -> D`` (``"RZ F=25 -> RZ fp32"``,
        ``"RZ F=24, RD F2=31 -> RNE fp32"``), the ``ROUNDING`` column of
        ``smtmma list``.  Not a spec (:meth:`describe` is the one that parses back).
        """
        d = self.d_fmt
        rnd = "truncated toward zero (RZ)" if self.sum_rz else "rounded down (RD, toward -inf)"
        rs = "RZ" if self.sum_rz else "RD"
        tail_long = f"; C added last, rounded to nearest, ties to even (RNE), in {d}" if self.c_after else ""
        tail_short = f", +C RNE {d}" if self.c_after else ""
        if self.kind == "ftz-addmul":
            flush = "; subnormal inputs flushed to +0 first" if self.ftz_inputs else ""
            return (f"RNE+FTZ {d} per op" if short else
                    f"every product and every sum of the pairwise tree (P={self.P}) and the accumulation rounded to nearest, "
                    f"ties to even (RNE), in {d}, subnormal results flushed to zero{flush}")
        if self.kind == "fma":
            return (f"RNE {d} per FMA" if short else
                    f"each FMA of the chain (one per lane) rounded to nearest, ties to even (RNE), in {d}")
        if self.kind == "e-fdpa":
            return (f"exact -> RNE {d}" if short else
                    f"each chunk of L={self.L} products summed exactly with the accumulator, then rounded to nearest, "
                    f"ties to even (RNE), to {d}")
        conv = self.conversion
        mode = {"rz": "toward zero (RZ)", "rne": "to nearest, ties to even (RNE),", "rd": "down, toward -inf (RD)",
                "ru": "up, toward +inf (RU)"}[conv.mode]
        out_fmt = conv.fmt if conv.fmt == d else f"{conv.fmt} (in {d})"
        end = f"D rounded {mode} to {out_fmt} after each FDPA of L={self.L}"
        if self.kind in ("t-fdpa", "st-fdpa", "gst-fdpa"):
            if short:
                return f"RZ F={self.F} -> {conv.mode.upper()} {conv.fmt}{tail_short}"
            group = f"each group of G={self.G} products summed exactly; then " if self.kind == "gst-fdpa" else ""
            return (f"{group}terms aligned at e_max and truncated toward zero (RZ) to F={self.F} fraction bits inside each "
                    f"FDPA, then summed exactly; {end}{tail_long}")
        # tr-fdpa, gtr-fdpa (CDNA3): the sum is cut by the RD (or RZ) steps inside, and rho rounds D at the end
        if short:
            return f"RZ F={self.F}, {rs} F2={self.F2} -> {conv.mode.upper()} {conv.fmt}{tail_short}"
        if self.kind == "tr-fdpa":
            inside = (f"products aligned at e_max, truncated (RZ) to F={self.F} fraction bits and summed; inside each FDPA "
                      f"that sum {rnd} to F2={self.F2} bits and c {rnd} to F={self.F} bits at E = max(e_max, e_c)")
        else:
            inside = (f"even and odd lanes each aligned at their own exponent, truncated (RZ) to F={self.F} fraction bits "
                      f"and summed; inside each FDPA the two group sums {rnd} to F={self.F} bits at e_max, their sum to "
                      f"F2={self.F2} bits and c to F={self.F} bits at E = max(e_max, e_c)")
        return f"{inside}; {end}{tail_long}"

    def replace(self, **changes: object) -> "Model":
        """A copy with ``changes`` applied (``dataclasses.replace``); unknown fields raise InputTypeError."""
        fields = [f.name for f in dataclasses.fields(self)]
        for key in changes:
            if key not in fields:
                hint = did_you_mean(key, fields)
                raise InputTypeError(f"Model has no field {key!r}" + (f"; {hint}" if hint else f"; fields: {choices(fields)}"))
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


#: Parameters a kind cannot run without (carry_bits, emax_floor: None means unbounded / no floor).
_REQUIRED: dict[str, tuple[str, ...]] = {k: tuple(p for p in ps if p not in ("carry_bits", "emax_floor")) for k, ps in KIND_PARAMS.items()}

#: Options every kind takes besides its parameters (what :meth:`Model.describe` prints after them).
_COMMON_OPTIONS = ("via", "interleave", "issue", "c_after", "ftz_inputs", "zero_emax", "ieee_zero", "sum_rz", "nan")
#: Options of a spec that are flags (bare, or =1 / =0).
FLAGS = ("c_after", "ftz_inputs", "zero_emax", "ieee_zero", "sum_rz")
_FLAGS = FLAGS

#: Canonical NaN styles of a model's output (the ``nan`` option of a spec).
NAN_STYLES = ("ieee", "nvidia", "propagate")


def _param_range(p: str) -> str:
    """What parameter ``p`` accepts, for error messages: ``(1..128)`` or ``(rz-fp32, rne-fp32, ...)``."""
    if p == "P":
        return "(2 or 4)"
    return f"({PARAM_RANGES[p][0]}..{PARAM_RANGES[p][1]})" if p in PARAM_RANGES else f"({choices(RHOS)})"


def canonical_kind(spec: str) -> Optional[str]:
    """The model kind a spec's head names (``tfdpa``, ``T_FDPA:...`` -> ``t-fdpa``), or None when it names none."""
    kind = spec.partition(":")[0].strip().lower().replace("_", "-")
    if kind in ("tfdpa", "efdpa", "stfdpa", "gstfdpa", "trfdpa", "gtrfdpa"):
        kind = kind[:-4] + "-fdpa"
    if kind == "ftzaddmul":
        kind = "ftz-addmul"
    return kind if kind in KINDS else None


def parse_model_spec(spec: str, like: Model) -> Model:
    """Parse ``kind:P=V,...`` into a Model with the operand formats of ``like``.

    Missing parameters default to those of ``like`` when its kind matches.
    Besides the kind's parameters: ``via=FORMAT`` (inputs converted exactly
    to FORMAT first), ``interleave=N``, ``issue=N``, ``nan=ieee|nvidia|propagate`` (the output's
    NaN pattern; default ``like``'s), and the flags ``c_after``,
    ``ftz_inputs``, ``zero_emax``, ``ieee_zero`` and ``sum_rz`` (bare, or ``=1``/``=0``);
    so every :meth:`Model.describe` string parses back to its model.
    """
    if not isinstance(spec, str):
        raise InputTypeError(f"model spec must be a str such as 't-fdpa:F=26', got {type(spec).__name__} {clip(repr(spec), quote=False)}")
    if not isinstance(like, Model):
        raise InputTypeError(f"like must be a Model (e.g. lookup('sm90', 'f16f32').model), got {type(like).__name__}")
    head, _, rest = spec.partition(":")
    kind = canonical_kind(head)
    if kind is None:
        raise UnknownNameError(unknown_name("model kind", head.strip().lower().replace('_', '-'), KINDS))
    allowed = KIND_PARAMS[kind]
    if like.kind == kind:
        fields = {f.name: getattr(like, f.name) for f in dataclasses.fields(Model)}
    else:  # another kind: the operand formats, and those of like's parameters the kind takes
        fields = {"kind": kind, "a_fmt": like.a_fmt, "b_fmt": like.b_fmt, "c_fmt": like.c_fmt, "d_fmt": like.d_fmt,
                  "nan": like.nan, **{p: getattr(like, p) for p in allowed if getattr(like, p) is not None}}
        if "block" in allowed:
            fields["scale_fmt"] = like.scale_fmt
    changes: dict[str, object] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, val = item.partition("=")
        key, val = key.strip(), val.strip()
        if key in changes:
            raise InputError(f"parameter {clip(key, quote=False)} is given twice in {clip(spec)}")
        if key in _FLAGS:
            if eq and val.lower() not in ("0", "1", "true", "false"):
                raise InputError(f"{key} is a flag: give it bare, or as {key}=1 / {key}=0")
            changes[key] = not eq or val.lower() in ("1", "true")
            continue
        if key not in allowed + _COMMON_OPTIONS or not eq:
            ranges = ", ".join(f"{p} {_param_range(p)}" for p in allowed)
            hint = did_you_mean(key, allowed + _COMMON_OPTIONS + _FLAGS) if key not in allowed + _COMMON_OPTIONS else ""
            raise InputError(f"bad parameter {clip(item)} for {kind}; {hint + ' ' if hint else ''}parameters: {ranges}; "
                             "options: via=FORMAT, interleave=N, issue=N, nan=ieee|nvidia|propagate, c_after, ftz_inputs, zero_emax, ieee_zero, sum_rz")
        if key in ("rho", "nan"):
            changes[key] = val.lower()
        elif key == "via":
            try:
                changes[key] = None if val.lower() == "none" else get_format(val).name
            except UnknownNameError as e:
                raise UnknownNameError(f"via: {e}") from None
        else:
            if val.lower() not in ("none", "inf") and not re.fullmatch(r"[+-]?\d{1,9}", val, re.ASCII):
                what = "out of range" if re.fullmatch(r"[+-]?\d+", val, re.ASCII) else "not an integer"
                rng = f" {_param_range(key)}" if key in PARAM_RANGES else ""
                raise InputError(f"parameter {key}={clip(val, quote=False)}: {what}{rng}")
            changes[key] = None if val.lower() in ("none", "inf") else int(val)
    fields.update(changes)
    return Model(**fields)  # type: ignore[arg-type]  # it checks the kind's parameters (__post_init__)
