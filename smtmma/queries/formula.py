"""Formulas of dot products: shared symbolic inputs, one output per model, input domains.

A :class:`DotFormula` declares the inputs of one dot product of length K
(``a0..``, ``b0..``, ``c``, and block scales when the models need them) as
bit-vector constants, and runs any number of models on them through the
symbolic interpretation; each model's D pattern becomes a declared
constant ``out_<i>`` so a sat answer reports it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from ..encodings.algebra import Bool, Int
from ..encodings.fields import unpack
from ..encodings.symbolic import SmtAlgebra
from ..errors import InputError, InputTypeError, spell
from ..formats import Format, carried_in, clip, get_format
from ..limits import is_int
from ..models import Model
from ..simulate import output_format, run_model

__all__ = ["Domain", "DotFormula", "parse_domain", "output_bits"]


def output_bits(model: Model) -> int:
    """Width in bits of the model's D patterns (FP32 container for E8M13)."""
    f = output_format(model)
    return carried_in(f).bits


@dataclass(frozen=True)
class Domain:
    """Restrictions on the inputs of a query (all optional; the default is finite inputs).

    ``specials``: allow NaN/Inf inputs; ``subnormals``: allow subnormal
    inputs; ``exp``/``cexp``: (lo, hi) unbiased exponents of non-zero A/B
    and C values; ``lanes``: only the first n lanes may be non-zero;
    ``nonneg``: A, B and C non-negative; ``signs``: per operand, ``"+"``
    (every value >= 0) or ``"-"`` (every value <= 0), e.g. ``(("a", "-"),)``;
    ``fixed``: exact patterns for named inputs (``a0``, ``b3``, ``c``).
    """

    specials: bool = False
    subnormals: bool = True
    exp: Optional[tuple[int, int]] = None
    cexp: Optional[tuple[int, int]] = None
    lanes: Optional[int] = None
    nonneg: bool = False
    signs: tuple[tuple[str, str], ...] = ()
    fixed: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        for flag in ("specials", "subnormals", "nonneg"):
            if not isinstance(getattr(self, flag), bool):
                raise InputTypeError(f"Domain.{flag} must be True or False, got {getattr(self, flag)!r}")
        for name in ("exp", "cexp"):
            rng = getattr(self, name)
            if rng is None:
                continue
            if (not isinstance(rng, tuple) or len(rng) != 2 or not all(is_int(x) for x in rng)):
                raise InputTypeError(f"Domain.{name} must be a pair of ints (lo, hi), got {clip(repr(rng), quote=False)}")
            if rng[0] > rng[1]:
                raise InputError(f"domain: empty exponent range {name}={rng[0]}:{rng[1]}")
        if self.lanes is not None and (not is_int(self.lanes) or self.lanes < 1):
            raise InputError(f"Domain.lanes must be a positive int (lanes 0..N-1 may be non-zero), got {self.lanes!r}")
        for item in self.signs:
            if not (isinstance(item, tuple) and len(item) == 2 and item[0] in ("a", "b", "c") and item[1] in ("+", "-")):
                raise InputError(f"Domain.signs holds (operand, sign) pairs such as ('a', '-'), got {clip(repr(item), quote=False)}")
        for item in self.fixed:
            if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)
                    and re.fullmatch(r"(a\d{1,9}|b\d{1,9}|c)", item[0]) and is_int(item[1]) and item[1] >= 0):
                raise InputError(f"Domain.fixed holds (input, pattern) pairs such as ('a0', 0x3c00), got "
                                 f"{clip(repr(item), quote=False)}")

    def check_lanes(self, K: int) -> None:
        """InputError when the domain names lanes a dot product of ``K`` lanes does not have (``lanes=N``, ``a<k>=``)."""
        if self.lanes is not None and self.lanes > K:
            raise InputError(f"domain: lanes={self.lanes} but the dot product has only K={K} lanes")
        for name, _ in self.fixed:
            if name[0] in "ab" and int(name[1:]) >= K:
                raise InputError(f"domain: {name} is not an input of this query (K={K})")

    def describe(self) -> str:
        """One line stating the domain, e.g. ``finite inputs, exponents of a,b in [-8, 8]``."""
        parts = ["NaN/Inf allowed" if self.specials else "finite inputs"]
        if not self.subnormals:
            parts.append("no subnormals")
        if self.exp:
            parts.append(f"exponents of a,b in [{self.exp[0]}, {self.exp[1]}]")
        if self.cexp:
            parts.append(f"exponent of c in [{self.cexp[0]}, {self.cexp[1]}]")
        if self.lanes is not None:
            parts.append(f"only lanes 0..{self.lanes - 1} non-zero")
        if self.nonneg:
            parts.append("non-negative a, b, c")
        parts.extend(f"{'non-negative' if sign == '+' else 'non-positive'} {who}" for who, sign in self.signs)
        parts.extend(f"{k}={v:#x}" for k, v in self.fixed)
        return ", ".join(parts)


_RANGE = re.compile(r"^(-?\d{1,9}):(-?\d{1,9})$")  # exponents beyond 9 digits mean nothing in any format


def parse_domain(spec: Optional[str]) -> Domain:
    """Parse ``finite,exp=-8:8,cexp=0:30,lanes=4,nonneg,a-,c+,normal,specials,a0=0x3c00`` into a :class:`Domain`."""
    kw: dict[str, object] = {}
    fixed: list[tuple[str, int]] = []
    signs: dict[str, str] = {}
    if spec is not None and not isinstance(spec, str):
        raise InputTypeError(f"a domain is a string such as 'exp=-8:8,lanes=4', got {type(spec).__name__}")
    if spec is not None and not spec.strip(" ,"):
        raise InputError(f"domain is empty; give items such as exp=-8:8,lanes=4, or leave {spell('domain')} out")
    seen: dict[str, str] = {}
    for tok in filter(None, (t.strip() for t in (spec or "").split(","))):
        key, eq, val = tok.partition("=")
        key = key.lower()
        if not tok.isascii():
            raise InputError(f"domain: bad item {clip(tok)}: only ASCII letters, digits and signs")
        # an item given twice, or finite with specials, would silently leave only the last one in force
        slot = "specials" if key in ("finite", "specials") else "subnormals" if key in ("normal", "nosubnormals") else key
        if slot in seen and not re.match(r"^[abc][+-]$", key):
            raise InputError(f"domain: {clip(seen[slot])} and {clip(tok)} both set {slot}; give it once")
        seen[slot] = tok
        if key == "finite" and not eq:
            kw["specials"] = False
        elif key == "specials" and not eq:
            kw["specials"] = True
        elif key in ("normal", "nosubnormals") and not eq:
            kw["subnormals"] = False
        elif key == "nonneg" and not eq:
            kw["nonneg"] = True
        elif re.match(r"^[abc][+-]$", key) and not eq:
            if signs.get(key[0], key[1]) != key[1]:
                raise InputError(f"domain: {key[0]}+ and {key[0]}- together leave only zeros; give one of them")
            signs[key[0]] = key[1]
        elif key in ("exp", "cexp") and eq and _RANGE.match(val):
            lo, hi = (int(x) for x in val.split(":"))
            if lo > hi:
                raise InputError(f"domain: empty exponent range {tok!r}")
            kw[key] = (lo, hi)
        elif key == "lanes" and eq and re.fullmatch(r"\d{1,9}", val) and int(val) >= 1:
            kw["lanes"] = int(val)
        elif re.match(r"^(a\d{1,9}|b\d{1,9}|c)$", key) and eq:
            digits = val[2:] if val.lower().startswith("0x") else val
            if not re.fullmatch(r"[0-9a-fA-F]{1,16}", digits):  # no format is wider than 64 bits
                raise InputError(f"domain: {clip(tok)} needs a hex bit pattern of at most 16 digits (e.g. a0=0x3c00)")
            fixed.append((key, int(digits, 16)))
        else:
            raise InputError(
                f"domain: bad item {clip(tok)}; items: finite, specials, normal, nonneg, a+, a-, b+, b-, c+, c-, "
                "exp=LO:HI, cexp=LO:HI, lanes=N, a<k>=0xHEX, b<k>=0xHEX, c=0xHEX"
            )
    return Domain(fixed=tuple(fixed), signs=tuple(sorted(signs.items())), **kw)  # type: ignore[arg-type]


@dataclass
class DotFormula:
    """Symbolic inputs of one dot product of length K and the outputs of models run on them."""

    a_fmt: Format
    b_fmt: Format
    c_fmt: Format
    K: int
    scale_fmt: Optional[Format] = None
    block: Optional[int] = None
    alg: SmtAlgebra = field(default_factory=SmtAlgebra)

    def __post_init__(self) -> None:
        if self.K < 1:
            raise InputError("K must be at least 1")
        alg = self.alg
        self.a = [alg.var(f"a{k}", self.a_fmt.bits) for k in range(self.K)]
        self.b = [alg.var(f"b{k}", self.b_fmt.bits) for k in range(self.K)]
        self.c = alg.var("c", self.c_fmt.bits)
        self.scale_a: Optional[list[Int]] = None
        self.scale_b: Optional[list[Int]] = None
        if self.scale_fmt is not None and self.block:
            n = -(-self.K // self.block)
            self.scale_a = [alg.var(f"sa{j}", self.scale_fmt.bits) for j in range(n)]
            self.scale_b = [alg.var(f"sb{j}", self.scale_fmt.bits) for j in range(n)]
        self.outputs: list[tuple[str, int]] = []

    @classmethod
    def for_models(cls, models: list[Model], K: int) -> "DotFormula":
        """Inputs shaped for ``models``, which must share their A/B/C formats (and scales)."""
        m0 = models[0]
        for m in models[1:]:
            if (m.a_fmt, m.b_fmt, m.c_fmt, m.scale_fmt, m.block) != (m0.a_fmt, m0.b_fmt, m0.c_fmt, m0.scale_fmt, m0.block):
                raise InputError(
                    f"models read different operand formats: {m0.describe()} ({m0.a_fmt},{m0.b_fmt},{m0.c_fmt}) vs "
                    f"{m.describe()} ({m.a_fmt},{m.b_fmt},{m.c_fmt})"
                )
        sf = get_format(m0.scale_fmt) if m0.scale_fmt else None
        return cls(get_format(m0.a_fmt), get_format(m0.b_fmt), get_format(m0.c_fmt), K, sf, m0.block)

    @property
    def input_names(self) -> list[str]:
        """Declared input constants, in order a0.., b0.., c, sa.., sb..."""
        names = [f"a{k}" for k in range(self.K)] + [f"b{k}" for k in range(self.K)] + ["c"]
        if self.scale_a is not None:
            names += [f"sa{j}" for j in range(len(self.scale_a))] + [f"sb{j}" for j in range(len(self.scale_a))]
        return names

    def output(self, model: Model, name: Optional[str] = None) -> tuple[str, Int]:
        """Run ``model`` on the inputs; declare its D pattern as a constant; return (name, term)."""
        d = run_model(self.alg, model, self.a, self.b, self.c, self.scale_a, self.scale_b)
        bits = output_bits(model)
        name = name or f"out{len(self.outputs)}"
        self.alg.decls.append(f"(declare-const {name} (_ BitVec {bits}))")
        self.alg.asserts.append(f"(assert (= {name} {self.alg.bits_of(d, bits)}))")
        self.outputs.append((name, bits))
        return name, d

    def restrict(self, domain: Domain) -> None:
        """Assert ``domain`` on the inputs."""
        alg = self.alg
        domain.check_lanes(self.K)
        by_name = dict(zip(self.input_names, self.a + self.b + [self.c] + (self.scale_a or []) + (self.scale_b or [])))
        widths = {n: (self.a_fmt if n[0] == "a" else self.b_fmt if n[0] == "b" else self.c_fmt) for n in by_name if n[0] in "abc"}
        for name, value in domain.fixed:
            if name not in by_name:
                raise InputError(f"domain: {name} is not an input of this query (K={self.K})")
            fmt = widths.get(name)
            if fmt is not None and not 0 <= value < (1 << fmt.bits):
                raise InputError(f"domain: {name}={value:#x} is not a {fmt.name} bit pattern ({fmt.bits} bits)")
            alg.assert_(alg.eq(by_name[name], value))
        for k in range(self.K):
            for fmt, x, who in ((self.a_fmt, self.a[k], "a"), (self.b_fmt, self.b[k], "b")):
                self._restrict_value(fmt, x, domain, domain.exp, who)
                if domain.lanes is not None and k >= domain.lanes:
                    alg.assert_(unpack(alg, fmt, x).is_zero)
        self._restrict_value(self.c_fmt, self.c, domain, domain.cexp, "c")

    def _restrict_value(self, fmt: Format, x: Int, domain: Domain, exp: Optional[tuple[int, int]], who: str) -> None:
        alg = self.alg
        u = unpack(alg, fmt, x)
        if not domain.specials:
            alg.assert_(alg.not_(alg.or_(u.is_nan, u.is_inf)))
        if not domain.subnormals:
            alg.assert_(alg.or_(u.is_zero, alg.le(1 << fmt.man_bits, u.sig)))
        if domain.nonneg:
            alg.assert_(alg.or_(alg.not_(u.neg), u.is_zero))
        sign = dict(domain.signs).get(who)
        if sign is not None:
            alg.assert_(alg.or_(alg.not_(u.neg) if sign == "+" else u.neg, u.is_zero))
        if exp is not None:
            lo, hi = exp
            ok: Bool = alg.and_(alg.le(lo, u.exp), alg.le(u.exp, hi))
            alg.assert_(alg.or_(u.is_zero, ok))
