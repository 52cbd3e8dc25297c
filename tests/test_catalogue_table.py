"""The catalogue's property table: ``smtmma prove --catalogue``, its records, certificates and the report's cells."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from smtmma.catalogue import CATALOGUE, model_of
from smtmma.cli import main
from smtmma.errors import InputError, InputTypeError, SmtmmaError
from smtmma.proofs.catalogue_table import CELLS, cell_claims, decide_cell, spec_model, table_models
from smtmma.proofs.check_certificate import check_text
from smtmma.proofs.claim import Context
from smtmma.report.data import PROPERTIES, catalogue_groups, cell_text, load_table
from smtmma.simulate import simulate_dot

CTX = Context(None, 60.0, 0)


def test_every_row_in_exactly_one_table_model() -> None:
    models = table_models()
    assert len({tm.model for tm in models}) == len(models)
    assert len({tm.key for tm in models}) == len(models)
    rows = [r for tm in models for r in tm.rows]
    assert sorted(rows) == sorted(f"{e.arch} {e.instr} {e.op}" for e in CATALOGUE)
    model_of_row = {f"{e.arch} {e.instr} {e.op}": e.model for e in CATALOGUE}
    assert all(model_of_row[r] == tm.model for tm in models for r in tm.rows)

def test_filters_and_columns() -> None:
    (tm,) = table_models("sm70", "f16f32")
    assert tm.key == "sm70-f16f32-mma" and tm.rows == ("sm70 f16f32 mma",)
    assert {t.key for t in table_models("volta")} == {t.key for t in table_models("sm70")}
    names = [c.name for c in cell_claims([tm], ["monotone", "carry-bits"])]
    assert names == ["sm70-f16f32-mma.monotonicity", "sm70-f16f32-mma.carry-bits"]
    assert [c.name for c in cell_claims([tm])] == [f"sm70-f16f32-mma.{p}" for p in CELLS.values()]
    with pytest.raises(InputError, match="no table column 'order'"):
        cell_claims([tm], ["order"])
    with pytest.raises(SmtmmaError, match="unknown architecture .sm7.; did you mean"):
        table_models("sm7")


def test_monotonicity_cell_fails_with_a_replayed_witness() -> None:
    (tm,) = table_models("sm70", "f16f32")
    out = decide_cell(tm, "monotone", CTX)
    assert out.verdict == "fails" and out.extra["cell"] == "no" and out.certificate is not None
    w = out.witness
    assert w is not None and set(w["outputs"]) == {"d", "d_larger"}
    import numpy as np

    from smtmma.formats import get_format, parse_hex, to_fraction

    f16, f32 = get_format("fp16"), get_format("fp32")
    a = np.array([[parse_hex(f16, x) for x in w["a"]]], dtype=np.uint64)
    b = np.array([[parse_hex(f16, x) for x in w["b"]]], dtype=np.uint64)
    assert out.extra["raised"] == "c"  # to its next value: d drops (the two outputs replayed by the simulator)
    c = parse_hex(f32, w["c"])
    d = simulate_dot(tm.model, None, np.vstack([a, a]), np.vstack([b, b]), np.array([c, c + 1], dtype=np.uint64))
    assert [int(x) for x in d] == [parse_hex(f32, w["outputs"][k].split()[0]) for k in ("d", "d_larger")]
    assert to_fraction(f32, int(d[1])) < to_fraction(f32, int(d[0]))

def test_carry_bits_cell_and_not_applicable() -> None:
    (volta,) = table_models("sm70", "f16f32")
    out = decide_cell(volta, "carry", CTX)
    assert out.verdict == "holds" and out.extra["cell"] == "3"  # 001 Table 4: Volta keeps 3 carry bits
    cdna3 = table_models("gfx942", "f16f32")[0]
    na = decide_cell(cdna3, "carry", CTX)
    assert na.verdict == "n/a" and na.certificate is None
    assert na.extra["cell"].startswith("n/a: ") and "no carry-bit parameter" in na.extra["cell"]


def test_uncovered_error_bound_is_unknown_with_the_missing_part() -> None:
    chained = spec_model("tr-fdpa:c_after", "gfx942", "f16f32")  # a valid model no prover covers
    out = decide_cell(chained, "bound", CTX)
    assert out.verdict == "unknown" and out.certificate is None
    assert out.extra["cell"].startswith("unknown: not covered: no Table 9 bound is implemented for tr-fdpa:")
    assert out.extra["cell"].endswith("the error parts of adding C after the rounded fused sum (a second rounding) are missing")


def test_ftz_addmul_bound_cell_fails_with_a_flushed_input() -> None:
    cdna2 = next(tm for tm in table_models("gfx90a") if tm.model.kind == "ftz-addmul")
    out = decide_cell(cdna2, "bound", CTX)
    assert out.verdict == "fails" and out.witness is not None and out.certificate is not None
    ok, summary = check_text(out.certificate.text(), "z3", 60.0)  # the pinned witness, re-checked by a second solver
    assert ok and "1 witnesses" in summary


def test_spec_model_takes_the_rows_formats() -> None:
    tm = spec_model("t-fdpa:L=4,F=22", "sm70", "f16f32")
    assert tm.model == model_of("sm70", "f16f32").replace(F=22)
    assert tm.key == "sm70-f16f32-t-fdpa_L_4_F_22" and tm.rows == ("sm70 f16f32 spec t-fdpa:L=4,F=22",)
    with pytest.raises(InputError):
        spec_model("t-fdpa:Q=4", "sm70", "f16f32")


def test_cli_json_save_and_the_independent_checker(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["prove", "--catalogue", "--arch", "sm70", "--instr", "f16f32", "--property", "monotonicity,carry-bits",
               "--save", str(tmp_path), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0
    cells = {r["name"]: r for r in doc["cells"]}
    assert cells["sm70-f16f32-mma.monotonicity"]["verdict"] == "fails"
    assert cells["sm70-f16f32-mma.carry-bits"]["extra"]["cell"] == "3"
    for r in doc["cells"]:
        text = Path(r["certificate"]).read_text()
        passed, summary = check_text(text, "z3", 60.0)
        assert passed, (r["name"], summary)
    (tmp_path / "cat.json").write_text(json.dumps(doc))
    groups = catalogue_groups([], load_table(str(tmp_path / "cat.json")))
    g = next(g for g in groups if g.rows[0].arch == "sm70" and g.rows[0].instr == "f16f32")
    assert g.cells["monotone"].text == "no" and g.cells["carry"].text == "3"
    assert "symmetric" not in g.cells
    assert cell_text(g, "symmetric") == "not run (smtmma prove --catalogue --arch sm70 --instr f16f32)"


def test_claims_take_precedence_and_no_cell_is_empty() -> None:
    cell = {"name": "sm70-f16f32-mma.carry-bits", "verdict": "holds", "covers": ["sm70 f16f32 mma"],
            "extra": {"column": "carry", "cell": "99", "model": model_of("sm70", "f16f32").describe()}}
    claim = {"name": "volta-carry-bits", "verdict": "3 (above 2)", "covers": ["sm70 f16f32"], "extra": {"summands": 5}}
    groups = catalogue_groups([claim], [cell])
    assert all(cell_text(g, k) for g in groups for k in PROPERTIES)
    g = next(g for g in groups if g.rows[0].arch == "sm70" and g.rows[0].instr == "f16f32")
    assert g.cells["carry"].text == "3 (above 2)"
    other = dict(cell, extra=dict(cell["extra"], model="t-fdpa:L=99"))  # a cell of another model never fills this one
    g2 = next(g for g in catalogue_groups([], [other]) if g.rows[0].arch == "sm70" and g.rows[0].instr == "f16f32")
    assert "carry" not in g2.cells and cell_text(g2, "carry").startswith("not run")


@pytest.mark.parametrize("argv, message", [
    (["--model", "t-fdpa:F=22"], "--model belongs to --catalogue"),
    (["--catalogue", "--model", "t-fdpa:F=22"], "--model SPEC needs --arch and --instr"),
    (["--catalogue", "--op", "mma"], "--op picks the row of a --model spec"),
    (["--catalogue", "--arch", "sm70", "--instr", "f16f32", "--property", "order"], "no table column 'order'"),
    (["--catalogue", "--all"], "give no claim names"),
    (["--catalogue", "--arch", "sm70", "--instr", "f16f32", "--force"], "--force apply to the certificates"),
    (["--catalogue", "--arch", "gfx942", "--instr", "f64f64x"], "instr"),
])
def test_cli_bad_input(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_bad_table_file(tmp_path: Path) -> None:
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"cells": [{"name": "x", "extra": {"column": "speed", "cell": "fast"}}]}))
    with pytest.raises(InputError, match="must name its \"column\""):
        load_table(str(f))
    f.write_text(json.dumps({"claims": []}))
    with pytest.raises(InputError, match="expected an object"):
        load_table(str(f))


def test_python_api() -> None:
    import smtmma

    (rec,) = smtmma.property_table("volta", "f16f32", properties="carry-bits")
    assert rec["name"] == "sm70-f16f32-mma.carry-bits" and rec["verdict"] == "holds" and rec["extra"]["cell"] == "3"
    (spec,) = smtmma.property_table("sm70", "f16f32", model="t-fdpa:L=4,F=22", properties=["monotonicity"])
    assert spec["verdict"] == "fails" and spec["witness"]


@pytest.mark.parametrize("kw, error, message", [
    ({"jobs": 0}, InputError, "jobs must be an int in 1..256"),
    ({"timeout": -1}, InputError, "timeout must be a positive number of seconds"),
    ({"properties": 3}, InputTypeError, "properties must be a column name"),
    ({"model": "t-fdpa:F=22", "arch": None}, InputError, "a model spec needs an arch and an instr"),
    ({"op": "mma"}, InputError, "op picks the row of a model spec"),
    ({"solver": "yices"}, SmtmmaError, "solver"),
])
def test_python_api_refuses_nonsense(kw: dict, error: type, message: str) -> None:
    import smtmma

    args = {"arch": "sm70", "instr": "f16f32", "properties": "carry-bits", **kw}
    with pytest.raises(error, match=message):
        smtmma.property_table(args.pop("arch"), args.pop("instr"), **args)
