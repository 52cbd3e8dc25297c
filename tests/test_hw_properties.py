"""``smtmma hw properties``: the property table's cells put to a device, judged from the bits it returns."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from smtmma.catalogue import ARCHS
from smtmma.cli import main
from smtmma.hw.device import open_device
from smtmma.hw.properties import judge, load_cells, property_cases, property_lines
from smtmma.hw.record import recorded_line
from smtmma.vectors import parse_line, read_vectors

HW_SAMPLES = Path(__file__).resolve().parents[1] / "hw-samples"
CELLS = load_cells()


def _record(arch: str, lines: list[dict]) -> list:
    dev = open_device(f"sim:{arch}")
    vs = [parse_line(json.dumps(r), i + 1) for i, r in enumerate(lines)]
    return [parse_line(recorded_line(v, d, dev), i + 1) for i, (v, d) in enumerate(zip(vs, dev.run(vs)))]


@pytest.mark.parametrize("arch", [a for a, x in ARCHS.items() if not x.provisional])
def test_the_simulator_keeps_every_cell_of_its_table(arch):
    """Each measured architecture's cells, put to its own simulator: proved cells hold on random pairs, every witness
    shows its refutation (the table and the simulator agree)."""
    cases = property_cases(arch, CELLS)
    assert cases
    rows = judge(_record(arch, property_lines(cases, pairs=4, near=0)), CELLS)
    bad = [(r.cell, r.op, r.notes) for r in rows if not r.agrees]
    assert not bad
    assert {r.cell for r in rows} == {c.cell["name"] for c in cases}
    assert all(r.test == "witness" for r in rows if r.verdict == "fails")


def test_a_non_monotone_device_is_caught_on_the_binade_edge_pairs():
    """Pretend the f16f32 monotonicity cell held: the edge pairs (c raised across a binade) show sm90's drops."""
    fake = [dict(copy.deepcopy(c), verdict="holds", witness=None) if c["name"] == "sm90-f16f32-mma.monotonicity" else c
            for c in CELLS]
    cases = [c for c in property_cases("sm90", fake, ["f16f32"]) if c.prop == "monotonicity"]
    assert [c.target.shape.name for c in cases] == ["mma.sync.aligned.m16n8k16", "wgmma.mma_async.sync.aligned.m64n8k16",
                                                    "wgmma.mma_async.sync.aligned.m64n256k16"]
    rec = _record("sm90", property_lines(cases, pairs=64))
    rows = judge(rec, fake)
    assert len(rows) == 3 and all(r.tried == 64 and not r.agrees for r in rows)
    case = rows[0].notes[0].split(":")[0]
    base, up = (next(v for v in rec if v.raw["case"] == case and v.raw["role"] == role) for role in ("base", "raised"))
    assert up.c == base.c + 1 and (up.a, up.b) == (base.a, base.b)  # c raised to its next pattern, nothing else
    assert up.d < base.d  # positive fp32 D: a smaller pattern is a smaller value


def test_a_wrong_bit_breaks_symmetry_and_names_the_case():
    cases = [c for c in property_cases("sm90", CELLS, ["bf16f32"]) if c.prop == "symmetry"][:1]
    lines = _record("sm90", property_lines(cases, pairs=3))
    assert [r.agree for r in judge(lines, CELLS)] == [3]
    neg = next(i for i, v in enumerate(lines) if v.raw["role"] == "negated")
    raw = dict(lines[neg].raw, d=f"{lines[neg].d ^ 1:08x}")
    lines[neg] = parse_line(json.dumps(raw), neg + 1)
    (row,) = judge(lines, CELLS)
    assert (row.agree, row.tried) == (2, 3) and row.notes[0].startswith(raw["case"] + ":")


def test_near_bound_inputs_come_from_the_search_and_stay_within_the_bound():
    cases = [c for c in property_cases("sm90", CELLS, ["f16f16"]) if c.prop == "error-bound"][:1]
    rows = judge(_record("sm90", property_lines(cases, pairs=0, near=1)), CELLS)
    (row,) = rows
    assert (row.test, row.tried, row.agree) == ("near", 1, 1)
    assert 0.99 < row.worst <= 1  # the search's input sits just below f16f16's proved bound


def test_the_h200_recording_keeps_the_table():
    path = HW_SAMPLES / "H200-properties.jsonl"
    rows = judge(read_vectors(path), CELLS)
    assert len(rows) == 172 and all(r.agrees for r in rows)
    assert sum(r.tried for r in rows) == 447
    fails = {r.cell for r in rows if r.verdict == "fails"}
    assert len(fails) == 23  # 15 monotonicity and 8 FP8 mma error-bound refutations, each shown by the GPU
    worst = max(r.worst for r in rows if r.worst is not None and r.verdict == "holds")
    assert 0.999 < worst <= 1


def test_cli_rehearses_on_the_simulator_and_judges_a_recording(tmp_path, capsys):
    out = tmp_path / "p"
    assert main(["hw", "properties", "--device", "sim:sm90", "--instr", "tf32f32", "--pairs", "2", "--near", "0",
                 "-o", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["gpu"] == "simulator: sm90" and all(r["agree"] == r["tried"] > 0 for r in summary["rows"])
    capsys.readouterr()
    assert main(["hw", "properties", "--recorded", str(out / "properties.jsonl"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"] == summary["rows"]
    vec = tmp_path / "v.jsonl"
    assert main(["hw", "properties", "--arch", "h100", "--instr", "tf32f32", "--pairs", "1", "--near", "0",
                 "--write", str(vec)]) == 0
    assert {json.loads(x)["arch"] for x in vec.read_text().splitlines()} == {"sm90"}


@pytest.mark.parametrize("argv, message", [
    (["--device", "sim:sm90", "--arch", "sm90"], "--arch goes with --write"),
    (["--write", "x.jsonl"], "--write needs --arch"),
    (["--arch", "sm1234", "--write", "x.jsonl"], "sm1234"),
    (["--recorded", "missing.jsonl"], "missing.jsonl"),
    (["--device", "sim:sm90", "--table", "missing.json"], "missing.json"),
])
def test_bad_input_is_one_line(argv, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["hw", "properties", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_a_file_without_cases_is_refused(tmp_path, capsys):
    path = tmp_path / "plain.jsonl"
    path.write_text(json.dumps({"arch": "sm90", "instr": "f16f32", "a": ["3c00"] * 16, "b": ["3c00"] * 16,
                                "c": "00000000", "d": "41800000"}) + "\n")
    assert main(["hw", "properties", "--recorded", str(path)]) == 2
    assert "no property case" in capsys.readouterr().err
