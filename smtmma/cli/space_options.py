"""What suite and identify share: the candidate space (--candidates, --grid, --like, --vendor) and the query options."""

from __future__ import annotations

import argparse
from typing import Optional

from ..catalogue import ARCHS, entries, resolve_instr, is_arch_name, split_arch_op
from ..discriminators.candidates import Space, catalogue_space, explicit_space, grid_space, parse_grid
from ..discriminators.provisional import provisional_space
from ..errors import InputError, UnknownNameError
from ..models import FLAGS, canonical_kind
from .common import draws_arg, k_length_arg, seconds_arg, seed_arg

#: Words --candidates takes besides architectures and specs.
_KEYWORDS = ("catalogue", "provisional")

SPACE_HELP = """\
candidates (default: the catalogue):
  --candidates catalogue            every architecture x op family of --instr (named ARCH,
                                    or ARCH/OP for a non-default family: sm90/wgmma)
  --candidates sm80,sm90/wgmma,t-fdpa:L=8,F=24,rho=rz-fp32
                                    a list: architectures, ARCH/OP, model specs (a spec's
                                    own commas are fine), 'catalogue' for all of it
  --grid 't-fdpa:L=4,8,16,32;F=23..26,35;rho=rz-fp32,rne-fp32;carry_bits=2..5'
                                    every combination (';' between parameters, ',' between
                                    values, LO..HI ranges, 'none' for unbounded); several
                                    kinds joined by '|'; 'structural' adds each model kind
                                    (E-FDPA, FMA chain, FTZ-AddMul P=2/4, T-, TR-, GTR-FDPA);
                                    points inconsistent with the instruction's formats
                                    are dropped (listed with --json)
  --candidates provisional --like gfx950
                                    a provisional architecture's space: its hypothesis, the
                                    structural grid around it and the measured rows of its
                                    vendor (the space of suites/provisional/ARCH-INSTR.jsonl)
  --like ARCH                       architecture whose formats and parameters specs take
                                    (default: the first architecture named, else the
                                    instruction's first catalogue architecture)
  --vendor nvidia|amd               only that vendor's catalogue entries"""


def add_space_options(p: argparse.ArgumentParser) -> None:
    """--instr, --candidates, --grid, --like, --vendor, and the query options (--k, --domain, --solver, ...)."""
    p.add_argument("--instr", required=True, help="instruction type (f16f32, bf16f32, e4m3f32, mxe4m3f32, ...)")
    p.add_argument("--candidates", action="append", metavar="LIST", help="'catalogue' or a list of architectures, "
                   "ARCH/OP and model specs (see below); may be repeated")
    p.add_argument("--grid", action="append", metavar="GRID", help="a parameter grid of models (see below); may be repeated")
    p.add_argument("--like", metavar="ARCH", help="architecture whose formats and parameters model specs take")
    p.add_argument("--vendor", choices=["nvidia", "amd"], help="only this vendor's catalogue entries")
    p.add_argument("--k", type=k_length_arg, metavar="K", help="dot-product length (default: the longest L and "
                   "instruction k among the candidates)")
    p.add_argument("--domain", metavar="ITEMS", help="restrict the inputs, e.g. exp=-8:8,lanes=4 (see 'smtmma distinguish --help')")
    from ..queries.backends import BACKENDS

    p.add_argument("--solver", choices=[*BACKENDS, "portfolio"], metavar="S", help="bitwuzla, z3, cvc5 or portfolio "
                   "(default: the first installed of bitwuzla, z3, cvc5)")
    p.add_argument("--timeout", type=seconds_arg, default=60.0, metavar="SEC", help="per solver call, in seconds (default 60)")
    p.add_argument("--time-limit", type=seconds_arg, metavar="SEC", help="the whole command, in seconds: pool, formulas "
                   "and every solver call (default: none); exit status 3 when it runs out")
    p.add_argument("--seed", type=seed_arg, default=0, metavar="N", help="seed of the input pool and the solver (default 0)")
    p.add_argument("--pool", type=draws_arg, default=2048, metavar="N", help="random inputs drawn before the solver "
                   "is asked (default 2048; 0: the solver alone)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _split_list(text: str) -> list[str]:
    """Split 'sm80,t-fdpa:L=8,F=24,sm90/wgmma' into candidates: a PARAM=V or flag after a spec belongs to that spec."""
    out: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        prev_is_spec = bool(out) and (":" in out[-1] or canonical_kind(out[-1]) is not None)
        is_param = "=" in part and ":" not in part or part in FLAGS
        if prev_is_spec and is_param:
            out[-1] += "," + part
        else:
            out.append(part)
    return out


def _has(token: str, instr: str) -> bool:
    arch, _ = split_arch_op(token)
    return any(e.arch == arch for e in entries(instr=instr))


def space_from_args(args: argparse.Namespace) -> Space:
    """The candidate space the options name (the catalogue of --instr by default)."""
    space = build_space(args.instr, args.candidates, args.grid, args.like, args.vendor)
    assert space is not None, "a strict build never comes back empty"
    return space


def check_space_options(candidates: Optional[list[str]], grids: Optional[list[str]]) -> None:
    """Refuse malformed candidate options once, before any instruction is looked at: an empty list,
    a name that is neither an architecture nor a model kind, a grid that does not parse."""
    tokens = [t for text in (candidates or []) for t in _split_list(text)]
    if candidates is not None and not tokens:
        raise InputError("--candidates is empty: give 'catalogue' or architectures / model specs")
    for t in tokens:
        if t.lower() not in _KEYWORDS and not is_arch_name(t) and canonical_kind(t) is None:
            raise UnknownNameError(f"candidate {t!r}: neither 'catalogue', 'provisional', an architecture (ARCH or ARCH/OP) "
                                   f"nor a model spec (KIND:PARAM=V,...)")
    for g in grids or []:
        parse_grid(g)


def build_space(instr: str, candidates: Optional[list[str]], grids: Optional[list[str]], like: Optional[str],
                vendor: Optional[str], *, lenient: bool = False) -> Optional[Space]:
    """The candidate space of one instruction type: ``candidates`` (texts of --candidates: 'catalogue',
    architectures, ARCH/OP, model specs), ``grids`` (--grid), read against ``like`` (--like); the
    catalogue when neither is given.

    ``lenient`` (one option for a log mixing instruction types): architectures
    without ``instr`` are left out, as are ``like`` when it lacks it and grids
    with no point that runs it; None when no candidate is left.
    """
    instr = resolve_instr(instr)
    tokens = [t for text in (candidates or []) for t in _split_list(text)]
    grids = grids or []
    if candidates is not None and not tokens:
        raise InputError("--candidates is empty: give 'catalogue' or architectures / model specs")
    wants_catalogue = (not tokens and not grids) or any(t.lower() == "catalogue" for t in tokens)
    wants_provisional = any(t.lower() == "provisional" for t in tokens)
    explicit = [t for t in tokens if t.lower() not in _KEYWORDS]
    if wants_provisional and not like:
        raise InputError("--candidates provisional needs --like ARCH, a provisional architecture "
                         f"({', '.join(a for a, x in ARCHS.items() if x.provisional)})")
    if lenient:
        explicit = [t for t in explicit if not is_arch_name(t) or _has(t, instr)]
        if like and not _has(like, instr):
            like = None
    # one base for every part: --like, else the first architecture named that has the instruction
    like = like or next((t for t in explicit if is_arch_name(t) and _has(t, instr)), None)
    spaces: list[Space] = []
    if wants_provisional:
        spaces.append(provisional_space(like, instr))  # type: ignore[arg-type]
    if wants_catalogue:
        try:
            spaces.append(catalogue_space(instr, vendor=vendor, like=like))
        except UnknownNameError:
            if not lenient:
                raise
    elif vendor:
        raise InputError("--vendor selects catalogue entries: use it with the catalogue (the default, or --candidates catalogue)")
    if explicit:
        spaces.append(explicit_space(explicit, instr, like=like))
    for g in grids:
        try:
            spaces.append(grid_space(g, instr, like=like))
        except InputError as e:
            if not lenient or "no point can run" not in str(e):
                raise
    return merge_spaces(spaces) if spaces else None


def merge_spaces(spaces: list[Space]) -> Space:
    """One space holding every candidate of ``spaces`` (the first one's base architecture; names kept once)."""
    first = spaces[0]
    if len(spaces) == 1:
        return first
    seen: dict[str, object] = {}
    cands = []
    for sp in spaces:
        assert sp.base_arch == first.base_arch, "every part is read against one base architecture"
        for c in sp.candidates:
            if c.name in seen:
                if seen[c.name] != c.model:
                    raise InputError(f"two different candidates are both called {c.name!r}")
                continue
            seen[c.name] = c.model
            cands.append(c)
    return Space(first.instr, first.base_arch, cands, [d for sp in spaces for d in sp.dropped])
