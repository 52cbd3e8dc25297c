"""Candidate spaces for the provisional architectures: the structural grid around each row's hypothesis.

A provisional row (:attr:`smtmma.catalogue.Arch.provisional`) carries the
model of the nearest modelled generation as a hypothesis.  Its candidate
space is that hypothesis, the models one structural step away from it and
the measured catalogue rows of the same vendor and instruction type:

* L halved and doubled, F one bit either way (GST-FDPA: the group size G
  halved and doubled instead; its F=35 holds a group's FP4 products exactly),
  the final rounding toward zero or to nearest (every combination of the three);
* one step each: input subnormals flushed (FTZ, as CDNA2), 3 carry bits
  instead of unbounded, the alignment floor removed (T/ST/GST-FDPA), the
  group structure swapped (TR- <-> GTR-FDPA: one sum or even/odd groups),
  truncation instead of round-down inside (``sum_rz``), the other vendor's
  structure (T-FDPA for TR/GTR, TR-FDPA for T-FDPA, same L and F);
* the FP8 flavour of NVIDIA's fp8 rows: Hopper's QGMMA (F=13, E8M13), the
  FP16 HMMA route of PTX ``mma.sync`` on sm90 (two L=16 FDPAs per issue over
  interleaved halves, C added last) and Blackwell's native L=32, F=25;
* for FMA rows (fp32, fp64) the NaN styles.

Grid points a kind rejects (an L below the scale block, ...) are dropped and
listed in :attr:`Space.dropped`.  The hypothesis itself is named by its
architecture (``sm103``), the measured rows by theirs, the rest by spec.
:func:`provisional_space` builds the space; ``suites/provisional/`` ships a
minimal suite of each space in :data:`PROVISIONAL_SUITES` (``suites/generate.py``).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Iterator, Optional

from ..catalogue import ARCHS, Entry, entries, lookup, resolve_arch, resolve_instr
from ..errors import InputError, SmtmmaError
from ..models import NAN_STYLES, PARAM_RANGES, Model, parse_model_spec
from .candidates import Candidate, Space, entry_name, inconsistency, spec_name

__all__ = ["PROVISIONAL_SUITES", "neighbourhood", "provisional_space", "suite_file"]

#: Instruction types whose provisional suite ships in suites/provisional/ARCH-INSTR.jsonl, per architecture.
PROVISIONAL_SUITES: dict[str, tuple[str, ...]] = {
    "sm103": ("f16f32", "f16f16", "bf16f32", "tf32f32", "e4m3f32", "e4m3f16", "mxe4m3f32", "nvf4f32", "f64f64"),
    "sm110": ("f16f32", "f16f16", "bf16f32", "tf32f32", "e4m3f32", "e4m3f16", "mxe4m3f32", "nvf4f32", "f64f64"),
    "sm121": ("f16f32", "f16f16", "bf16f32", "tf32f32", "e4m3f32", "e4m3f16", "e2m1e2m1f32", "mxe4m3f32", "nvf4f32",
              "f64f64"),
    "gfx950": ("f16f32", "bf16f32", "e4m3f32", "e5m2f32", "e2m1e2m1f32", "mxe4m3f32", "mxe2m1f32", "f32f32", "f64f64"),
    "gfx11": ("f16f32", "bf16f32", "f16f16"),
    "gfx12": ("f16f32", "bf16f32", "f16f16", "e4m3f32", "e5m2f32"),
}

_FDPA = ("t-fdpa", "st-fdpa", "gst-fdpa", "tr-fdpa", "gtr-fdpa")


def _mode_swapped(rho: str) -> str:
    """``rz-fp32`` <-> ``rne-fp32`` (the same target, the other of RZ and RNE)."""
    mode, _, fmt = rho.partition("-")
    return ("rne-" if mode == "rz" else "rz-") + fmt


def _grid(h: Model) -> Iterator[dict[str, object]]:
    """Parameter changes of the L x F x rounding grid around ``h`` (an FDPA)."""
    assert h.L is not None and h.F is not None and h.rho is not None
    Ls = dict.fromkeys(v for v in (h.L // 2, h.L, 2 * h.L) if PARAM_RANGES["L"][0] <= v <= PARAM_RANGES["L"][1])
    if h.kind == "gst-fdpa":  # its F=35 keeps every bit of a group's FP4 products: the group size G is the axis
        assert h.G is not None
        axis = "G", (h.G // 2, h.G, 2 * h.G)
    else:
        axis = "F", (h.F - 1, h.F, h.F + 1)
    for L, v, rho in itertools.product(Ls, axis[1], (h.rho, _mode_swapped(h.rho))):
        change: dict[str, object] = {"L": L, axis[0]: v, "rho": rho}
        if h.issue:  # whole instructions of `issue` lanes: the FDPAs per issue stay, their L follows
            change["issue"] = h.issue * L // h.L
        if h.F2 is not None:
            change["F2"] = max(h.F2, int(change.get("F", h.F)))  # type: ignore[arg-type]
        yield change


def _steps(h: Model) -> Iterator[dict[str, object]]:
    """One structural step away from ``h``."""
    yield {"ftz_inputs": not h.ftz_inputs}
    if h.kind in ("t-fdpa", "st-fdpa", "gst-fdpa"):
        if h.carry_bits is None:
            yield {"carry_bits": 3}
        if h.emax_floor is not None:
            yield {"emax_floor": None}
    if h.kind in ("tr-fdpa", "gtr-fdpa"):
        yield {"kind": "gtr-fdpa" if h.kind == "tr-fdpa" else "tr-fdpa"}
        yield {"sum_rz": True}
        yield {"kind": "t-fdpa", "F2": None, "rho": "rz-" + h.rho.partition("-")[2]}  # type: ignore[union-attr]
    if h.kind == "t-fdpa" and not h.issue:
        yield {"kind": "tr-fdpa", "F2": 31 if h.d_fmt == "fp32" else max(h.F or 0, 24), "rho": "rne-" + h.rho.partition("-")[2],  # type: ignore[union-attr]
               "emax_floor": None}
    if h.kind == "t-fdpa" and h.a_fmt in ("e4m3", "e5m2") and h.b_fmt in ("e4m3", "e5m2"):
        out = "rz-e8m13" if h.d_fmt == "fp32" else "rne-fp16"
        yield {"L": 32, "F": 13, "rho": out, "via": None, "interleave": None, "c_after": False, "issue": None}  # QGMMA (T4)
        yield {"L": 16, "F": 25, "via": "fp16", "interleave": 2, "c_after": True, "issue": 32}  # sm90 mma.sync (H200)
        yield {"L": 32, "F": 25, "rho": "rz-fp32" if h.d_fmt == "fp32" else "rne-fp16", "via": None, "interleave": None,
               "c_after": False, "issue": None}  # Blackwell UTCQMMA (T4)


def neighbourhood(h: Model) -> tuple[list[Model], list[tuple[str, str]]]:
    """The models around hypothesis ``h`` (``h`` first), and the (spec, reason) of grid points that cannot be."""
    changes: list[dict[str, object]]
    if h.kind == "fma":
        changes = [{"nan": s} for s in NAN_STYLES] + [{"ftz_inputs": True}]
    elif h.kind in _FDPA:
        changes = [*_grid(h), *_steps(h)]
    else:  # e-fdpa, ftz-addmul: a measured CDNA kind is never a provisional hypothesis; still give L/P and FTZ steps
        changes = [{"ftz_inputs": not h.ftz_inputs}]
    models: dict[Model, None] = {h: None}
    dropped: list[tuple[str, str]] = []
    for change in changes:
        try:
            m = h.replace(**change)
        except SmtmmaError as e:
            dropped.append((", ".join(f"{k}={v}" for k, v in change.items()), str(e)))
            continue
        models.setdefault(m, None)
    return list(models), dropped


def provisional_space(arch: str, instr: str, op: Optional[str] = None) -> Space:
    """The candidate space of provisional row ``(arch, instr, op)``: its hypothesis (named ``arch``), the grid around
    it (named by spec) and the measured catalogue rows of the same vendor (named ``ARCH`` or ``ARCH/OP``).

    InputError for an architecture that is not provisional.
    """
    a = resolve_arch(arch)
    if not ARCHS[a].provisional:
        raise InputError(f"{a} is not provisional: its candidate space is the catalogue's (smtmma suite --instr INSTR)")
    row = lookup(a, instr, op)
    i = row.instr
    grid, dropped = neighbourhood(row.model)
    cands = [Candidate(entry_name(row), row.model, row.arch, row.op)]
    for e in _measured(i, ARCHS[a].vendor):
        cands.append(Candidate(entry_name(e), e.model, e.arch, e.op))
    seen = {c.model for c in cands}
    for m in grid[1:]:
        why = inconsistency(m, i)
        if why:
            dropped.append((m.describe(), why))
        elif m not in seen:
            name = _name(m, row.model)
            if name is None:
                dropped.append((m.describe(), f"its spec does not read back as this model against {a}'s"))
                continue
            seen.add(m)
            cands.append(Candidate(name, m))
    return Space(i, a, cands, dropped)


def _name(m: Model, like: Model) -> Optional[str]:
    """A spec that :func:`~smtmma.models.parse_model_spec` reads back as ``m`` against ``like``; None if there is none."""
    name = spec_name(m, like)
    for extra in ("", ",emax_floor=none"):
        try:
            if parse_model_spec(name + extra, like=like) == m:
                return name + extra
        except SmtmmaError:
            continue
    return None


def _measured(instr: str, vendor: str) -> list[Entry]:
    """The measured (not provisional) catalogue rows of ``instr`` of one vendor."""
    return [e for e in entries(instr=instr) if ARCHS[e.arch].vendor == vendor and not ARCHS[e.arch].provisional]


def suite_file(folder: Path, arch: str, instr: str) -> Path:
    """``folder/provisional/ARCH-INSTR.jsonl``: where the shipped suite of a provisional row lives."""
    return folder / "provisional" / f"{resolve_arch(arch)}-{resolve_instr(instr)}.jsonl"
