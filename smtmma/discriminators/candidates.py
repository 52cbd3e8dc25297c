"""Hypothesis spaces: the candidate models a test suite must tell apart.

A :class:`Candidate` is a named model of one instruction type.  Names are
what the ``expect`` field of a test vector uses and what
``smtmma simulate`` takes back:

* a catalogue entry is ``ARCH`` (its default op family for the
  instruction) or ``ARCH/OP`` (another family, e.g. ``sm90/wgmma``);
* any other model is its full spec, :meth:`~smtmma.models.Model.describe`
  (``t-fdpa:L=8,F=24,rho=rz-fp32``), read against the catalogue model of
  the space's base architecture (:attr:`Space.base_arch`).

A :class:`Space` holds the candidates, the instruction and base
architecture, and the candidates a grid dropped as inconsistent with the
instruction's formats.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Optional, Sequence

from ..catalogue import ARCHS, INSTRS, Entry, entries, lookup, model_of, resolve_instr, is_arch_name, split_arch_op
from ..errors import InputError, SmtmmaError, UnknownNameError, unknown_name, spell
from ..formats import get_format
from ..models import FLAGS, KINDS, NAN_STYLES, PARAM_RANGES, RHOS, Model, canonical_kind, parse_model_spec

__all__ = [
    "Candidate",
    "Space",
    "catalogue_space",
    "explicit_space",
    "grid_space",
    "parse_grid",
    "inconsistency",
    "STRUCTURAL",
    "entry_name",
    "model_by_name",
    "spec_name",
]


@dataclass(frozen=True)
class Candidate:
    """A named candidate model (``name`` as in ``expect``; ``arch``/``op`` when it is a catalogue entry)."""

    name: str
    model: Model
    arch: Optional[str] = None
    op: Optional[str] = None


@dataclass
class Space:
    """Candidates of one instruction type; specs are read against ``base_arch``'s model of it."""

    instr: str
    base_arch: str
    candidates: list[Candidate]
    dropped: list[tuple[str, str]] = field(default_factory=list)  # (spec, why) for grid points left out

    @property
    def names(self) -> list[str]:
        """Candidate names, in order."""
        return [c.name for c in self.candidates]

    def by_name(self, name: str) -> Candidate:
        """The candidate called ``name``; UnknownNameError listing a few names otherwise."""
        for c in self.candidates:
            if c.name == name:
                return c
        raise UnknownNameError(f"no candidate {name!r} in this space (e.g. {', '.join(self.names[:6])})")


def entry_name(e: Entry) -> str:
    """``ARCH`` for the default op family of (arch, instr), ``ARCH/OP`` for the others."""
    return e.arch if e.default else f"{e.arch}/{e.op}"


def _base_arch(instr: str, like: Optional[str]) -> str:
    rows = entries(instr=instr)
    measured = [e for e in rows if not ARCHS[e.arch].provisional]
    if not rows:
        raise UnknownNameError(f"no architecture has instruction {instr}")
    if like:
        arch, _ = split_arch_op(like)
        if not any(e.arch == arch for e in rows):
            have = ", ".join(dict.fromkeys(e.arch for e in rows))
            raise UnknownNameError(f"{spell('like', like)}: {arch} has no instruction {instr}; architectures with it: {have}")
        return arch
    return (measured or rows)[0].arch


def catalogue_space(instr: str, *, vendor: Optional[str] = None, like: Optional[str] = None,
                    provisional: bool = False) -> Space:
    """Every catalogue entry (architecture x op family) of ``instr``, optionally of one vendor.

    Rows of provisional architectures (no recorded output; a measured row's model as hypothesis) join only with
    ``provisional=True``.  The base architecture (of the vectors' ``arch``) is ``like``, else the first entry's.
    """
    i = resolve_instr(instr)
    rows = [e for e in entries(instr=i) if (vendor is None or ARCHS[e.arch].vendor == vendor)
            and (provisional or not ARCHS[e.arch].provisional)]
    if not rows:
        only = [a for a in dict.fromkeys(e.arch for e in entries(instr=i)) if vendor is None or ARCHS[a].vendor == vendor]
        raise UnknownNameError(f"no {vendor + ' ' if vendor else ''}architecture has instruction {i}"
                               + (f" but the provisional {', '.join(only)} (no recorded output)" if only else ""))
    cands = [Candidate(entry_name(e), e.model, e.arch, e.op) for e in rows]
    return Space(i, _base_arch(i, like) if like else rows[0].arch, cands)


def explicit_space(tokens: Sequence[str], instr: str, *, like: Optional[str] = None) -> Space:
    """Candidates named on the command line: ``ARCH``, ``ARCH/OP`` or model specs (``t-fdpa:F=26``).

    Specs are read against the model of ``like`` (or of the first
    architecture among the tokens, else the instruction's first catalogue
    architecture); an architecture's candidate is its catalogue entry.
    """
    i = resolve_instr(instr)
    toks = [t.strip() for t in tokens if t.strip()]
    if not toks:
        raise InputError("empty candidate list: name architectures (sm80, sm90/wgmma) or model specs")
    first_arch = next((split_arch_op(t)[0] for t in toks if is_arch_name(t)), None)
    base = _base_arch(i, like or first_arch)
    like_model = lookup(base, i).model
    cands: list[Candidate] = []
    for t in toks:
        if is_arch_name(t):
            arch, op = split_arch_op(t)
            try:
                e = lookup(arch, i, op)
            except SmtmmaError as err:
                raise type(err)(f"candidate {t!r}: {err}") from None
            cands.append(Candidate(entry_name(e), e.model if not op else model_of(arch, i, op), e.arch, e.op))
        else:
            try:
                m = parse_model_spec(t, like=like_model)
            except SmtmmaError as err:
                raise type(err)(f"candidate {t!r}: {err}") from None
            why = inconsistency(m, i)
            if why:
                raise InputError(f"candidate {t!r}: {why}")
            cands.append(Candidate(m.describe(), m))
    return Space(i, base, _unique_names(cands))


def spec_name(model: Model, like: Model) -> str:
    """A spec that parses back to ``model`` against ``like``: its description, plus ``nan=`` when the two differ there."""
    name = model.describe()
    if model.nan == like.nan or "nan=" in name:
        return name
    return name + ("," if ":" in name else ":") + f"nan={model.nan}"


def model_by_name(name: str, instr: str, arch: str, op: Optional[str] = None) -> Model:
    """The model a candidate name stands for, for a test vector of (arch, instr, op).

    ``ARCH`` / ``ARCH/OP``: that catalogue entry of ``instr``; anything else
    is a model spec read against the model of (arch, instr, op).
    UnknownNameError / InputError with a one-line message otherwise.
    """
    i = resolve_instr(instr)
    if is_arch_name(name):
        a, o = split_arch_op(name)
        return model_of(a, i, o)
    if canonical_kind(name) is None:
        raise UnknownNameError(f"unknown model {name!r}: neither an architecture (ARCH or ARCH/OP: {', '.join(ARCHS)}) "
                               f"nor a model spec (KIND:PARAM=V,...; kinds: {', '.join(KINDS)})")
    m = parse_model_spec(name, like=lookup(arch, i, op).model)
    why = inconsistency(m, i)
    if why:
        raise InputError(f"model {name!r}: {why}")
    return m


def _unique_names(cands: list[Candidate]) -> list[Candidate]:
    seen: dict[str, Candidate] = {}
    for c in cands:
        if c.name in seen:
            if seen[c.name].model != c.model:
                raise InputError(f"two different candidates are both called {c.name!r}")
            continue
        seen[c.name] = c
    return list(seen.values())


def inconsistency(model: Model, instr: str) -> Optional[str]:
    """Why ``model`` cannot run instruction ``instr`` (formats, scales, rounding target), or None when it can."""
    i = INSTRS[resolve_instr(instr)]
    if (model.a_fmt, model.b_fmt, model.c_fmt, model.d_fmt) != (i.a_fmt, i.b_fmt, i.c_fmt, i.d_fmt):
        return f"reads {model.a_fmt}/{model.b_fmt}/{model.c_fmt} -> {model.d_fmt}, not {instr}'s formats"
    if (model.scale_fmt is not None) != (i.scale_fmt is not None):
        return ("ignores the block scales of " + i.name) if i.scale_fmt else f"needs block scales; {i.name} has none"
    if model.scale_fmt is not None and model.scale_fmt != i.scale_fmt:
        return f"reads {model.scale_fmt} scales, {i.name} has {i.scale_fmt}"
    if model.block is not None and i.block is not None and model.block != i.block:
        return f"reads one scale per {model.block} elements, {i.name} has one per {i.block}"
    if model.kind == "ftz-addmul" and (i.c_fmt, i.d_fmt) != ("fp32", "fp32"):
        return "FTZ-AddMul accumulates in fp32; D is " + i.d_fmt
    if model.block is not None and model.L is not None and model.kind == "gst-fdpa" and model.G and model.L % model.G:
        return f"G={model.G} must divide L={model.L}"
    return None


# ---------------------------------------------------------------- grids

_INT = re.compile(r"^-?\d+$")
_RANGE = re.compile(r"^(-?\d+)\.\.(-?\d+)$")
_FLAG_PARAMS = FLAGS
_GRID_PARAMS = tuple(PARAM_RANGES) + ("rho", "via", "interleave", "nan") + _FLAG_PARAMS

#: ``--grid structural``: each model kind of the paper once per plausible shape, for one instruction type.
STRUCTURAL = (
    "fma",
    "e-fdpa:L=2,4,8,16,32",
    "ftz-addmul:P=2,4;ftz_inputs=0,1",
    "t-fdpa:L=4,8,16,32;F=13,23,24,25",
    "tr-fdpa:L=4,8,16;F=24;F2=31;rho=rne-fp32",
    "gtr-fdpa:L=16,32;F=24;F2=31;rho=rne-fp32",
    "st-fdpa:L=32;F=25;block=32",
    "gst-fdpa:L=64;G=16;F=35;block=16,32",
)


def _values(param: str, text: str, grid: str) -> list[str]:
    """The values one grid parameter takes: ``4,8,16``, ``23..26``, ``rz-fp32,rne-fp32``, ``none``, ``0,1``."""
    out: list[str] = []
    for tok in filter(None, (t.strip() for t in text.split(","))):
        m = _RANGE.match(tok)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            if lo > hi:
                raise InputError(f"grid {grid!r}: empty range {param}={tok}")
            if hi - lo > 4096:
                raise InputError(f"grid {grid!r}: range {param}={tok} is too long (at most 4097 values)")
            out += [str(v) for v in range(lo, hi + 1)]
        else:
            out.append(tok)
    if not out:
        raise InputError(f"grid {grid!r}: {param}= needs at least one value")
    for v in out:
        _check_value(param, v, grid)
    return list(dict.fromkeys(out))


def _check_value(param: str, v: str, grid: str) -> None:
    low = v.lower()
    if param == "rho":
        if low not in RHOS:
            raise InputError(f"grid {grid!r}: {unknown_name('conversion rho', v, RHOS)}")
    elif param == "nan":
        if low not in NAN_STYLES:
            raise InputError(f"grid {grid!r}: {unknown_name('NaN style', v, NAN_STYLES)}")
    elif param == "via":
        if low != "none":
            get_format(v)
    elif param in _FLAG_PARAMS:
        if low not in ("0", "1", "true", "false"):
            raise InputError(f"grid {grid!r}: {param} takes 0 or 1, got {v!r}")
    elif low not in ("none", "inf"):
        if not _INT.match(v):
            raise InputError(f"grid {grid!r}: {param}={v} is not an integer")
        if param in PARAM_RANGES:
            lo, hi = PARAM_RANGES[param]
            if not lo <= int(v) <= hi:
                raise InputError(f"grid {grid!r}: {param}={v} is out of range {lo}..{hi}")


def parse_grid(grid: str) -> list[str]:
    """The model specs of a grid, in order: ``KIND:P=v,v;Q=lo..hi`` (several kinds joined by ``|``).

    ``structural`` stands for :data:`STRUCTURAL`.  Every spec is
    ``KIND:P=v,Q=w,...`` (flags as ``ftz_inputs=1``), ready for
    :func:`~smtmma.models.parse_model_spec`.  Raises InputError for an unknown
    kind or parameter, a value out of range, or an empty range.
    """
    specs: list[str] = []
    parts = [p.strip() for p in grid.split("|")]
    for part in parts:
        if not part:
            raise InputError(f"grid {grid!r}: empty part between '|'")
        if part.lower() == "structural":
            specs += parse_grid("|".join(STRUCTURAL))
            continue
        kind, _, rest = part.partition(":")
        k = canonical_kind(kind)
        if k is None:
            raise UnknownNameError(f"grid {grid!r}: {unknown_name('model kind', kind.strip(), [*KINDS, 'structural'])}")
        axes: list[tuple[str, list[str]]] = []
        for item in filter(None, (t.strip() for t in rest.split(";"))):
            key, eq, vals = item.partition("=")
            key = key.strip()
            if not eq or key not in _GRID_PARAMS:
                raise InputError(f"grid {grid!r}: bad item {item!r}; write PARAM=V1,V2 or PARAM=LO..HI with PARAM one of "
                                 f"{', '.join(_GRID_PARAMS)}")
            if key in (a for a, _ in axes):
                raise InputError(f"grid {grid!r}: {key} is given twice in {k}")
            axes.append((key, _values(key, vals, grid)))
        for combo in itertools.product(*(vals for _, vals in axes)):
            items = [f"{key}={val}" for (key, _), val in zip(axes, combo)]
            specs.append(k + (":" + ",".join(items) if items else ""))
    return specs


def grid_space(grid: str, instr: str, *, like: Optional[str] = None, limit: int = 100_000) -> Space:
    """The models of ``grid`` for ``instr`` (formats and unnamed parameters from ``like``'s model).

    Grid points that cannot run the instruction (:func:`inconsistency`, or a
    spec the kind rejects, e.g. an ``interleave`` that does not divide L)
    are dropped and listed in :attr:`Space.dropped`; identical models are
    kept once.  InputError when nothing is left or the grid exceeds ``limit`` points.
    """
    i = resolve_instr(instr)
    base = _base_arch(i, like)
    like_model = lookup(base, i).model
    specs = parse_grid(grid)
    if len(specs) > limit:
        raise InputError(f"grid has {len(specs)} points; at most {limit}")
    cands: dict[Model, Candidate] = {}
    dropped: list[tuple[str, str]] = []
    for spec in specs:
        try:
            m = parse_model_spec(spec, like=like_model)
        except SmtmmaError as e:
            dropped.append((spec, str(e)))
            continue
        why = inconsistency(m, i)
        if why:
            dropped.append((spec, why))
            continue
        cands.setdefault(m, Candidate(m.describe(), m))
    if not cands:
        reasons = "; ".join(sorted({w for _, w in dropped})[:3])
        raise InputError(f"grid {grid!r}: no point can run {i} ({reasons})")
    return Space(i, base, _unique_names(list(cands.values())), dropped)
