"""The shipped property table (proofs/catalogue.json, proofs/catalogue/): complete, consistent, its certificates
accepted by the independent checker, a sample re-checked with a second solver."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from smtmma.proofs.catalogue_table import CELLS, table_models
from smtmma.proofs.certificate import parse_certificate
from smtmma.proofs.check_certificate import check_text
from smtmma.proofs.runner import read_text
from smtmma.queries.backends import available
from smtmma.report.data import PROPERTIES, catalogue_groups, load_records, load_table

PROOFS = Path(__file__).resolve().parent.parent / "proofs"
TABLE = PROOFS / "catalogue.json"
CELL_VERDICTS = ("holds", "fails", "unknown", "n/a")


def _cells() -> list[dict]:
    return json.loads(TABLE.read_text())["cells"]


def test_every_model_has_every_cell_once() -> None:
    cells = _cells()
    names = [c["name"] for c in cells]
    assert len(names) == len(set(names))
    want = {f"{tm.key}.{p}": tm for tm in table_models() for p in CELLS.values()}
    assert set(names) == set(want), sorted(set(names) ^ set(want))[:5]
    for c in cells:
        tm = want[c["name"]]
        assert c["verdict"] in CELL_VERDICTS, c["name"]
        assert c["extra"]["model"] == tm.model.describe() and c["covers"] == list(tm.rows)
        has_file = bool(c["certificate"])
        assert has_file == (c["verdict"] in ("holds", "fails")), c["name"]
        if has_file:
            assert (PROOFS / "catalogue" / Path(c["certificate"]).name).is_file(), c["name"]
        if c["verdict"] == "fails":
            assert c["witness"], c["name"]
        if c["verdict"] in ("unknown", "n/a"):
            assert c["extra"]["cell"].startswith(c["verdict"] + ": ") and len(c["extra"]["cell"]) > 12, c["name"]


def test_the_report_has_no_empty_or_unrun_cell() -> None:
    groups = catalogue_groups(load_records(str(PROOFS / "claims.json")), load_table(str(TABLE)))
    assert len(groups) == len(table_models())
    empty = [(g.model.describe(), k) for g in groups for k in PROPERTIES if k not in g.cells or not g.cells[k].text]
    assert not empty, empty[:5]


def _files() -> list[Path]:
    return sorted((PROOFS / "catalogue").glob("*.smt2*"))


def test_every_certificate_follows_the_checkers_rule() -> None:
    files = _files()
    assert len(files) == sum(bool(c["certificate"]) for c in _cells())
    bad = []
    for f in files:
        passed, summary = check_text(read_text(str(f)), structure_only=True)
        if not passed:
            bad.append((f.name, summary))
    assert not bad, bad[:3]


#: Re-checked with z3 by the independent checker in CI: certificates z3 answers in under a second (measured
#: 2026-11-27, 2-core machine); the slow ones (23-27 s each) run under -m slow.  z3 re-checks none of the table's
#: symmetry proofs in 30 s (bitwuzla made them in 3-60 s): docs/property-table.md.
SAMPLE = ["sm70-f16f32-mma.carry-bits", "sm80-tf32f32-mma.monotonicity", "gfx942-f16f32-mfma.symmetry",
          "gfx11-f16f16-wmma.symmetry"]
SLOW_SAMPLE = ["sm70-f16f16-mma.error-bound", "sm70-f16f16-mma.monotonicity", "sm75-f16f16-mma.monotonicity",
               "gfx90a-bf16f32-mfma.symmetry", "gfx942-tf32f32-mfma.monotonicity"]  # z3: 28 s (FTZ-AddMul),
# 55 s for TR-FDPA's monotonicity chain on the model's terms (2026-11-29, with its overflow facts; two at once),
# 55 s of CPU for sm70 f16f16's error bound (a chain on the model's terms since 2026-11-28, 60-bit exact values; the
# FP32-accumulating ones' ~300-bit running sums get no answer from z3 in 120 s). The GST-FDPA bound of sm100 nvf4f32
# left the sample when it became a chain (2026-11-29): z3 takes 99 s on one running sum and gives no answer in
# 120 s on its last fact.


@pytest.mark.parametrize("name", SAMPLE + [pytest.param(n, marks=pytest.mark.slow) for n in SLOW_SAMPLE])
def test_sample_rechecks_with_a_second_solver(name: str) -> None:
    path = PROOFS / "catalogue" / f"{name}.smt2.gz"
    text = read_text(str(path))
    assert parse_certificate(text, str(path)).meta["solver"] == "bitwuzla"
    if "z3" not in available():
        pytest.skip("needs z3")
    passed, summary = check_text(text, "z3", 120.0)
    assert passed, summary
