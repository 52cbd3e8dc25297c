"""Turning query results into claim evidence: witnesses as hex and decimal, results as certificates."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from ..formats import format_hex, get_format
from ..models import Model
from ..queries.query_algebra import witness_pins
from ..queries.distinguish import Witness
from ..queries.properties.common import QueryResult, pattern_text, show_value
from ..proof_kernel.blocks import Block, chain_block, pin_block
from .certificate import Certificate, solver_version

__all__ = ["witness_record", "witness_pins", "query_blocks", "certificate"]


def witness_record(model: Model, w: Witness, outputs: Optional[dict[str, tuple[str, int]]] = None) -> dict[str, Any]:
    """A witness as JSON: ``a``, ``b``, ``c`` (and scales) as hex, ``decimal`` the same as ``0x3c00 (1)`` strings,
    ``outputs`` name -> ``0x.. (value)`` (``outputs`` maps a name to (format name, bits))."""
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    rec: dict[str, Any] = {
        "a": [format_hex(fa, x) for x in w.a],
        "b": [format_hex(fb, x) for x in w.b],
        "c": format_hex(fc, w.c),
        "decimal": {"a": [pattern_text(fa, x) for x in w.a], "b": [pattern_text(fb, x) for x in w.b],
                    "c": pattern_text(fc, w.c)},
    }
    if w.scale_a is not None and w.scale_b is not None and model.scale_fmt:
        fs = get_format(model.scale_fmt)
        rec["scale_a"] = [format_hex(fs, x) for x in w.scale_a]
        rec["scale_b"] = [format_hex(fs, x) for x in w.scale_b]
    if outputs:
        rec["outputs"] = {k: show_value(get_format(f), bits) for k, (f, bits) in outputs.items()}
    return rec


def query_blocks(r: QueryResult, label: str) -> list[Block]:
    """The blocks a property result rests on: its own ``blocks`` when it made them, else built from ``smt2``.

    "holds": the script (or lemma chain) expecting unsat; "fails": the script
    with the witness's inputs pinned, expecting sat; "unknown": none.
    """
    if r.blocks:
        return list(r.blocks)
    if r.verdict == "unknown" or not r.smt2:
        return []
    if r.verdict == "holds":
        text = r.smt2.rstrip("\n")
        if text.endswith("(check-sat)"):  # a lemma chain, ending with the property's own check
            return [chain_block(label, text)]
        return [Block(label, text, "unsat")]
    assert r.witness is not None
    text = r.smt2.rstrip("\n")
    if text.endswith("(check-sat)"):  # a lemma chain whose property failed: keep the lemmas, pin the witness
        text = text[: -len("(check-sat)")].rstrip("\n")
        if text.endswith("; expect: unsat"):
            text = text[: -len("; expect: unsat")]
    return [pin_block(label, text, witness_pins(r.model, r.witness), "sat")]


def certificate(claim: str, source: str, models: Sequence[str], verdict: str, solver: str, blocks: Sequence[Block],
                witness: Optional[dict[str, Any]] = None, **meta: Any) -> Optional[Certificate]:
    """A :class:`Certificate` of ``blocks`` with its metadata (None when there are no blocks)."""
    if not blocks:
        return None
    data: dict[str, Any] = {"claim": claim, "source": source, "models": list(models), "verdict": verdict,
                            "solver": solver, "solver_version": solver_version(solver)}
    if witness is not None:
        data["witness"] = witness
    data.update(meta)
    return Certificate(data, list(blocks))
