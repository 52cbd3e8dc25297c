"""Regenerate tests/data/report_claims.json: real claim records for tests/test_report.py.

Until ``smtmma prove --json`` exists on this branch, the records are made
here from real solver answers of ``smtmma.queries.api.query``, in the
record format of ``prove --json`` (witnesses via ``evidence.witness_record``,
hex and decimal).  Run: ``PYTHONPATH=. python tests/data/make_report_claims.py``
(about 10 s).  tests/test_report.py replays every witness in the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from smtmma.catalogue import model_of
from smtmma.proofs.evidence import witness_record
from smtmma.queries.api import query
from smtmma.queries.distinguish import Witness

# (claim name, source, property, arch, expected verdict per the document or None)
CLAIMS: list[tuple[str, str, str, str, Optional[str]]] = [
    ("cdna3-asymmetry", "000 §6.2.4, Table 10", "symmetry", "gfx942", "fails"),
    ("nvidia-symmetry", "000 §6.2, Table 10", "symmetry", "sm70", "holds"),
    ("monotonicity-sm70-f16f32", "002 §3.1.4", "monotonicity", "sm70", "fails"),
    ("volta-carry-bits", "001 §4, Table 4", "carry-bits", "sm70", "3 carry bits"),
]


def record(name: str, source: str, prop: str, arch: str, expected: Optional[str]) -> dict[str, Any]:
    """One claim record of ``prove --json`` from a real query answer."""
    r = query(prop, arch, "f16f32", timeout=60)
    model = model_of(arch, "f16f32")
    verdict = f"{r['carry_bits']} carry bits" if prop == "carry-bits" and r["verdict"] == "holds" else r["verdict"]
    witness = None
    if r.get("witness") and prop != "carry-bits":
        w = r["witness"]
        wit = Witness(tuple(int(x, 16) for x in w["a"]), tuple(int(x, 16) for x in w["b"]), int(w["c"], 16))
        witness = witness_record(model, wit, {k: ("fp32", int(v, 16)) for k, v in r["outputs"].items()})
    return {"name": name, "source": source, "models": [f"{arch} f16f32"], "expected": expected, "verdict": verdict,
            "agrees": None if expected is None else verdict == expected, "solver": r["solver"],
            "seconds": r["seconds"], "witness": witness, "certificate": None}


def main() -> None:
    out = Path(__file__).with_name("report_claims.json")
    out.write_text(json.dumps({"claims": [record(*c) for c in CLAIMS]}, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
