"""Sign symmetry: proved for NVIDIA's fused sums, refuted for CDNA3's round-down sums (000 §6.2.4, Table 10).

``D(-A, B, -C) = -D(A, B, C)`` holds when every step of the sum rounds
symmetrically (truncation toward zero, RNE); CDNA3's TR-FDPA and GTR-FDPA
round the aligned summands *down* (Alg. 10 and 11 of 000), so negating the
inputs moves the result by up to an ulp.  The MMA-Sim paper lists this
asymmetry as a risky design (Table 10).
"""

from __future__ import annotations

from typing import Optional

from ..catalogue import ARCHS, CATALOGUE, Entry, lookup
from ..formats import get_format
from ..models import Model
from ..queries.properties import check_property
from ..queries.properties.common import QueryResult, py_value
from ..proof_kernel.blocks import Block
from .claim import Context, Outcome, claim
from .evidence import certificate, query_blocks, witness_record

__all__ = ["symmetry_groups"]

_NVIDIA_KINDS = ("t-fdpa", "st-fdpa", "gst-fdpa")


def symmetry_groups() -> list[tuple[Model, list[Entry]]]:
    """NVIDIA fused-sum models grouped by everything symmetry can depend on except the input formats.

    Returns (the first model of the group, its rows).  The proof is done
    for that model; models that differ from it only in the FP8/FP6/FP4
    input formats follow the same algorithm on other significand widths.
    """
    groups: dict[tuple[object, ...], tuple[Model, list[Entry]]] = {}
    for e in CATALOGUE:
        m = e.model
        if ARCHS[e.arch].vendor != "nvidia" or m.kind not in _NVIDIA_KINDS:
            continue
        key = (m.kind, m.L, m.F, m.rho, m.emax_floor, m.via, m.interleave, m.c_after, m.c_fmt, m.d_fmt,
               m.block, m.scale_fmt is not None, get_format(m.a_fmt).man_bits == get_format(m.b_fmt).man_bits)
        if key not in groups:
            groups[key] = (m, [])
        groups[key][1].append(e)
    return list(groups.values())


def _label(e: Entry) -> str:
    return f"{e.arch} {e.instr} {e.op}"


def _part(model: Model) -> str:
    """Which symmetry claim proves a group: "narrow" (L <= 16), "wide" (L >= 32, T/ST-FDPA) or "gst" (GST-FDPA)."""
    if model.kind == "gst-fdpa":
        return "gst"
    return "wide" if (model.L or 0) >= 32 else "narrow"


def _nvidia_symmetry(ctx: Context, name: str, part: str) -> Outcome:
    """A proof per group of :func:`symmetry_groups` in ``part`` (see :func:`_part`); K = L, finite inputs.

    Rows that chain FDPAs from zero and add C last (``c_after``: the FP8
    ``mma.sync`` rows of sm90/sm100, an experiment of the catalogue) are not
    one FDPA and are left out: their symmetry needs a proof over the chain.
    """
    blocks: list[Block] = []
    proved: list[dict[str, object]] = []
    failed: list[str] = []
    unknown: list[str] = []
    solver = ""
    chained = [g for g in symmetry_groups() if g[0].c_after]
    for model, rows in symmetry_groups():
        if model.c_after or _part(model) != part:
            continue
        label = _label(rows[0])
        r = check_property("symmetry", model, name=label, solver=ctx.solver, timeout=ctx.timeout, seed=ctx.seed)
        solver = r.solver
        proved.append({"model": label, "describe": model.describe(), "rows": [_label(e) for e in rows], "verdict": r.verdict,
                       "seconds": round(r.seconds, 2), "K": r.K,
                       "proved_rows": [_label(e) for e in rows if e.model == model]})  # same model, formats included
        if r.verdict == "holds":
            blocks += query_blocks(r, f"symmetry of {label} ({model.describe()}), K={r.K}")
        elif r.verdict == "fails":
            failed.append(f"{label}: {r.reason}")
            blocks += query_blocks(r, f"asymmetry of {label}")
        else:
            unknown.append(f"{label}: {r.reason}")
    n_rows = sum(len(p["rows"]) for p in proved)  # type: ignore[misc, arg-type]
    n_proved = sum(len(p["proved_rows"]) for p in proved if p["verdict"] == "holds")  # type: ignore[misc, arg-type]
    if failed:
        verdict, agrees = "fails", False
    elif unknown:
        verdict, agrees = "unknown", None
    else:
        verdict, agrees = "holds", True
    detail = (f"{len(proved)} proofs, one per group of models that differ only in their input formats ({n_rows} catalogue "
              f"rows; {n_proved} of them are the very model proved, the others share its algorithm on other input "
              f"formats); " + ("; ".join(failed + unknown) or "every one holds for all finite inputs"))
    if chained and part == "narrow":
        detail += (f". Not covered here: the {sum(len(r) for _, r in chained)} c_after rows (sm90/sm100 FP8 mma.sync via FP16), "
                   "which chain FDPAs and add C last; the catalogue's property table proves their symmetry, one chain "
                   "of facts per model (smtmma prove --catalogue --property symmetry; proofs/catalogue/)")
    cert = certificate(name, "000 §6.2.4", [p["model"] for p in proved], verdict, solver, blocks)  # type: ignore[misc]
    covers = [row for p in proved if p["verdict"] == "holds" for row in p["proved_rows"]]  # type: ignore[union-attr]
    return Outcome(verdict, agrees, solver, None, detail, cert, {"proofs": proved}, covers)


@claim("nvidia-symmetry", source="000 §6.2.4, Table 10 (NVIDIA's sums are symmetric)",
       models=("NVIDIA T-/ST-/GST-FDPA, L <= 16",), expected="holds",
       summary="D(-A, B, -C) = -D(A, B, C) for NVIDIA's fused sums of up to 16 products (Volta..Blackwell 16-bit, TF32, "
               "Ada FP8), one FDPA, every finite input", group="symmetry")
def nvidia_symmetry(ctx: Context) -> Outcome:
    """Symmetry proofs of the NVIDIA fused-sum models with L <= 16."""
    return _nvidia_symmetry(ctx, "nvidia-symmetry", "narrow")


@claim("nvidia-symmetry-fp8", source="000 §6.2.4, Table 10 (NVIDIA's sums are symmetric)",
       models=("NVIDIA T-/ST-FDPA, L = 32",), expected="holds",
       summary="the same for the sums of 32 products (Hopper wgmma FP8, Blackwell tcgen05 FP8/FP6/FP4, MX block scales)",
       group="symmetry")
def nvidia_symmetry_fp8(ctx: Context) -> Outcome:
    """Symmetry proofs of the NVIDIA T-FDPA/ST-FDPA models with L = 32 (separate: they take most of the time)."""
    return _nvidia_symmetry(ctx, "nvidia-symmetry-fp8", "wide")


@claim("nvidia-symmetry-fp4", source="000 §6.2.4, Table 10 (NVIDIA's sums are symmetric)",
       models=("NVIDIA GST-FDPA (mxf4, nvf4)",), expected="holds",
       summary="the same for Blackwell's group-scaled FP4 sums of 64 products (GST-FDPA, Alg. 9)", group="symmetry")
def nvidia_symmetry_fp4(ctx: Context) -> Outcome:
    """Symmetry of the GST-FDPA models: one query each (no lemma decomposition of GST-FDPA yet)."""
    return _nvidia_symmetry(ctx, "nvidia-symmetry-fp4", "gst")


def _nonzero_witness(model: Model, label: str, ctx: Context) -> tuple[QueryResult, Optional[str]]:
    """A symmetry witness whose two outputs are both non-zero values (seeds tried in turn); the result and a note."""
    last: Optional[QueryResult] = None
    out = get_format(model.d_fmt)
    for seed in range(ctx.seed, ctx.seed + 8):
        r = check_property("symmetry", model, name=label, solver=ctx.solver, timeout=ctx.timeout, seed=seed)
        last = r
        if r.verdict != "fails":
            return r, None
        d, dn = py_value(out, r.outputs["d"]), py_value(out, r.outputs["d_neg"])
        if d not in (0, None) and dn not in (0, None):
            return r, None
    assert last is not None
    return last, "every witness found has a zero output"


@claim("cdna3-asymmetry", source="000 §6.2.4, Table 10 (CDNA3 round-down: asymmetric)",
       models=("gfx942 f16f32", "gfx942 fp8fp8f32"), expected="fails",
       summary="CDNA3's TR-FDPA (f16f32) and GTR-FDPA (fp8fp8f32) are not sign-symmetric: witnesses with non-zero values",
       group="symmetry")
def cdna3_asymmetry(ctx: Context) -> Outcome:
    """A witness for gfx942 TR-FDPA and one for GTR-FDPA, each replayed, each with non-zero outputs."""
    blocks: list[Block] = []
    found: dict[str, object] = {}
    lines: list[str] = []
    verdicts = []
    solver = ""
    for instr in ("f16f32", "fp8fp8f32"):
        e = lookup("gfx942", instr)
        label = _label(e)
        r, note = _nonzero_witness(e.model, label, ctx)
        solver = r.solver
        verdicts.append(r.verdict)
        if r.verdict != "fails" or r.witness is None:
            lines.append(f"{label} ({e.model.kind}): {r.verdict} ({r.reason})")
            continue
        fmt = e.model.d_fmt
        found[label] = witness_record(e.model, r.witness, {"d": (fmt, r.outputs["d"]), "d_neg": (fmt, r.outputs["d_neg"])})
        lines.append(f"{label} ({e.model.kind}): {r.reason}" + (f" [{note}]" if note else ""))
        blocks += query_blocks(r, f"asymmetry of {label}: the witness, pinned")
    if all(v == "fails" for v in verdicts):
        verdict, agrees = "fails", True
    elif "unknown" in verdicts:
        verdict, agrees = "unknown", None
    else:
        verdict, agrees = "holds", False
    witness = {"cases": found} if found else None
    cert = certificate("cdna3-asymmetry", "000 §6.2.4", list(found), verdict, solver, blocks, witness)
    return Outcome(verdict, agrees, solver, witness, "; ".join(lines), cert)


__all__ += ["nvidia_symmetry", "nvidia_symmetry_fp8", "nvidia_symmetry_fp4", "cdna3_asymmetry"]
