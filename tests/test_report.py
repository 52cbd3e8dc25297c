"""smtmma report: claims table, catalogue properties, the Fig. 3 experiment, HTML/Markdown output, bad input."""

from __future__ import annotations

import base64
import json
import re
import struct
from html import unescape
from pathlib import Path

import numpy as np
import pytest

from smtmma.catalogue import CATALOGUE, model_of
from smtmma.cli import main
from smtmma.report.data import catalogue_groups, load_records, property_of
from smtmma.report.experiments import cdna3_bias, f16f32_errors
from smtmma.simulate import simulate_dot

CLAIMS = Path(__file__).parent / "data" / "report_claims.json"
ROOT = Path(__file__).resolve().parents[1]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _records() -> list[dict]:
    return load_records(str(CLAIMS))


def _neg(bits: np.ndarray, width: int) -> np.ndarray:
    return bits ^ np.array(1 << (width - 1), dtype=bits.dtype)


# --- the fixture: real solver answers, every witness replayed here -----------------------------------------


def _witness_arrays(w: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = np.array([[int(x, 16) for x in w["a"]]], dtype=np.uint16)
    b = np.array([[int(x, 16) for x in w["b"]]], dtype=np.uint16)
    return a, b, np.array([int(w["c"], 16)], dtype=np.uint32)


def _out(w: dict, name: str) -> int:
    return int(w["outputs"][name].split()[0], 16)


def test_fixture_witnesses_replay_through_the_simulator() -> None:
    recs = {r["name"]: r for r in _records()}
    w = recs["cdna3-asymmetry"]["witness"]  # Phi(-A, B, -C) != -Phi(A, B, C) on gfx942 (000 §6.2.4)
    a, b, c = _witness_arrays(w)
    d = int(simulate_dot("gfx942", "f16f32", a, b, c, backend="numpy")[0])
    d_neg = int(simulate_dot("gfx942", "f16f32", _neg(a, 16), b, _neg(c, 32), backend="numpy")[0])
    assert (d, d_neg) == (_out(w, "d"), _out(w, "d_neg"))
    assert d_neg != d ^ 0x80000000 and d != 0 and d_neg & 0x7FFFFFFF != 0  # values, not just +-0
    w = recs["monotonicity-sm70-f16f32"]["witness"]  # raising c lowers D on Volta (002 §3.1.4)
    a, b, c = _witness_arrays(w)
    d = int(simulate_dot("sm70", "f16f32", a, b, c, backend="numpy")[0])
    d_up = int(simulate_dot("sm70", "f16f32", a, b, c + np.uint32(1), backend="numpy")[0])
    assert (d, d_up) == (_out(w, "d"), _out(w, "d_larger"))
    assert np.float32(np.uint32(d_up).view(np.float32)) < np.uint32(d).view(np.float32)


# --- catalogue properties from records ---------------------------------------------------------------------


def test_catalogue_groups_every_row_once_and_properties_from_records() -> None:
    groups = catalogue_groups(_records())
    rows = [e for g in groups for e in g.rows]
    assert len(rows) == len(CATALOGUE) and set(map(id, rows)) == set(map(id, CATALOGUE))
    assert len(groups) == len({e.model for e in CATALOGUE})
    by_model = {g.model: g for g in groups}
    sm70 = by_model[model_of("sm70", "f16f32")].cells
    assert {k: c.text for k, c in sm70.items()} == {"symmetric": "yes", "monotone": "no", "carry": "3 carry bits"}
    gfx = by_model[model_of("gfx942", "f16f32")].cells
    assert {k: c.text for k, c in gfx.items()} == {"symmetric": "no"}
    assert not by_model[model_of("sm90", "f16f32")].cells  # no record: "—" in the report


@pytest.mark.parametrize("name, verdict, witness, expect", [
    ("nvidia-symmetry", "holds", None, "yes"),
    ("cdna3-asymmetry", "holds", None, "no"),  # the asymmetry claim holds: not symmetric
    ("cdna3-asymmetry", "unsat", None, "yes"),  # no witness of asymmetry exists
    ("volta-nonmonotonic", "fails", None, "yes"),
    ("monotonicity-sm90-f16f32", "fails", {"a": ["0"]}, "no"),
    ("monotonicity-sm90-f16f32", "unknown", None, "unknown"),
])
def test_yes_no_reading_of_verdicts(name: str, verdict: str, witness: object, expect: str) -> None:
    rec = {"name": name, "models": ["sm90 f16f32"], "verdict": verdict, "witness": witness}
    (cell,) = [g.cells[property_of(name)] for g in catalogue_groups([rec]) if g.cells]
    assert cell.text == expect


# --- Fig. 3 (000 §6.2.4): exact consequences of round-down --------------------------------------------------


def test_carry_bits_posed_on_fewer_products_than_the_model_sums_say_so() -> None:
    """turing-carry-bits is posed with K = 4 on the L = 8 model sm80 also runs: its 3 is not the model's 4."""
    records = json.loads((Path(__file__).resolve().parents[1] / "proofs" / "claims.json").read_text())["claims"]
    cells = {g.model.describe(): g.cells["carry"] for g in catalogue_groups(records) if "carry" in g.cells}
    l8 = cells["t-fdpa:L=8,F=24,rho=rz-fp32"]
    assert l8.verdicts == ["3 (above 2; 4 above 1) for K=4", "4 (above 2; 5 above 1)"]
    assert cells["t-fdpa:L=4,F=23,rho=rz-fp32"].verdicts == ["3 (above 2; 4 above 1)"]


def test_round_down_bias_exact_properties() -> None:
    r = cdna3_bias(samples=4000, seed=3)
    # RD_F(x) <= RZ_F(x) for every x (Alg. 10 lines 14-15) and RNE-FP32 is monotone: D_RD <= D_RZ, so delta_RD <= delta_RZ
    assert np.all(r.delta_rd <= r.delta_rz)
    assert np.all(r.d_rd.view(np.float32) <= r.d_rz.view(np.float32))
    # the RZ twin is symmetric: Phi'(-A, B, -C) = -Phi'(A, B, C) bit for bit
    neg_a, neg_c = _neg(r.a, 16), _neg(r.c, 32)
    assert np.array_equal(simulate_dot(r.model.replace(sum_rz=True), "f16f32", neg_a, r.b, neg_c).astype(np.uint32), _neg(r.d_rz, 32))
    # round-down: RD(-x) = -RU(x) <= -RD(x), so Phi(-A, B, -C) <= -Phi(A, B, C) on the catalogue model
    d_neg = simulate_dot(r.model, "f16f32", neg_a, r.b, neg_c).astype(np.uint32)
    assert np.all(d_neg.view(np.float32) <= -r.d_rd.view(np.float32))
    assert np.any(d_neg != _neg(r.d_rd, 32))  # and the asymmetry shows on these inputs (fixed seed)


def test_single_efdpa_errors_are_within_half_an_ulp() -> None:
    # gfx908 f16f32 is E-FDPA with L = 4 (000 Table 6): with K = 4, one exact sum and one RNE rounding (Alg. 6)
    errs = {e.model.kind: e for e in f16f32_errors(samples=3000, seed=1, k=4)}
    assert np.max(np.abs(errs["e-fdpa"].ulps)) <= 0.5
    assert np.max(np.abs(errs["t-fdpa"].ulps)) > 0.5  # truncation (RZ) does exceed it


# --- the command: HTML and Markdown ------------------------------------------------------------------------


def _png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == PNG_SIGNATURE and png[12:16] == b"IHDR"
    return struct.unpack(">II", png[16:24])


def test_report_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "report.html"
    assert main(["report", "--claims", str(CLAIMS), "-o", str(out), "--samples", "600"]) == 0
    html = out.read_text(encoding="utf-8")
    for rec in _records():
        row = re.search(rf'<tr id="claim-{re.escape(rec["name"])}"[^>]*>(.*?)</tr>', html, re.S)
        assert row is not None
        cells = [unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)]
        assert cells[:2] == [rec["name"], rec["source"]] and cells[4] == rec["verdict"]
        assert cells[7] == f"{rec['seconds']:.2f}"
        if rec["witness"]:
            assert rec["witness"]["c"] in cells[8] and rec["witness"]["decimal"]["c"] in cells[9]
    for e in CATALOGUE:
        assert f"{e.arch} {e.instr} {e.op}{'*' if e.default else ''}" in html
    imgs = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)" width="(\d+)" height="(\d+)"', html)
    assert len(imgs) == 2
    from smtmma.report.plots import BIAS_SIZE, DPI

    sizes = [_png_size(base64.b64decode(data)) for data, _, _ in imgs]
    assert sizes == [(int(w), int(h)) for _, w, h in imgs]
    assert sizes[0] == (BIAS_SIZE[0] * DPI, BIAS_SIZE[1] * DPI)
    assert "wrote" in capsys.readouterr().out


def test_report_markdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "r.md"
    assert main(["report", "--claims", str(CLAIMS), "-o", str(out), "--samples", "600", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    text = out.read_text(encoding="utf-8")
    links = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", text)
    assert len(links) == 2 and sorted(str(tmp_path / x) for x in links) == sorted(summary["files"][1:])
    for x in links:
        _png_size((tmp_path / x).read_bytes())
    assert "| cdna3-asymmetry | 000 §6.2.4, Table 10 | gfx942 f16f32 | fails | fails | yes |" in text
    # every bound printed explains its symbols: once, under the catalogue table
    legend = next(ln for ln in text.splitlines() if ln.startswith("Error bounds are Table 9's"))
    assert "e_max the largest unbiased exponent" in legend and "ulp(FMT) the unit in the last place of D" in legend


def test_report_without_plots_or_claims(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert main(["report", "--no-claims", "--no-plots", "-o", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert "<img" not in html and "No claim records" in html
    assert "<p>Error bounds are Table 9&#x27;s |Phi - exact| &lt;= (L+1) 2^(e_max-F) + u ulp(FMT)" in html


# --- help and bad input ------------------------------------------------------------------------------------


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--help"]) == 0
    assert "--claims" in capsys.readouterr().out


@pytest.mark.parametrize("content, message", [
    (None, "no such claims file"),
    ("{\"claims\": [", "malformed JSON at line 1"),
    ("[1, 2]", "expected an object"),
    ("{\"claims\": [{\"verdict\": \"holds\"}]}", "has no \"name\""),
    ("{\"claims\": [{\"name\": \"x\", \"models\": \"sm90\"}]}", "must be a list of strings"),
])
def test_bad_claims_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str) -> None:
    path = tmp_path / "claims.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    assert main(["report", "--claims", str(path), "-o", str(tmp_path / "r.html"), "--no-plots"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("args, message", [
    (["-o", "r.pdf", "--no-claims"], "suffix: .html or .md"),
    (["-o", "nodir/r.html", "--no-claims", "--no-plots"], "no such directory"),
    (["-o", "r.html", "--samples", "0"], "expected a number of random inputs in 1..1000000"),
    (["-o", "r.html", "--samples", "99999999999"], "expected a number of random inputs in 1..1000000"),
    (["-o", "r.html", "--seed", "-1", "--no-claims"], "expected a seed in 0..4294967295"),
    (["-o", "r.html", "--timeout", "inf", "--only", "exact-products"], "expected a positive number of seconds"),
    (["-o", "r.html", "--only", " , "], "--only is empty"),
    (["-o", "folder.html", "--no-claims", "--no-plots"], "is a directory"),
])
def test_bad_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                     args: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder.html").mkdir()
    assert main(["report", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_unwritable_output_fails_before_the_claims_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    import smtmma.report as report

    def no_claims(*args: object, **kwargs: object) -> None:
        raise AssertionError("claims ran before the output path was checked")
    monkeypatch.setattr(report, "run_claims", no_claims)
    assert main(["report", "-o", str(tmp_path / "nodir" / "r.html"), "--only", "volta-nonmonotonic"]) == 2
    assert "no such directory" in capsys.readouterr().err


def test_report_reads_the_shipped_claims_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 33: 'smtmma report -o report.html', as the README's tour writes it, re-ran every claim (minutes)
    import smtmma.report as report

    def no_claims(*args: object, **kwargs: object) -> None:
        raise AssertionError("claims ran although the shipped results are there")
    monkeypatch.setattr(report, "run_claims", no_claims)
    out = tmp_path / "r.html"
    assert main(["report", "-o", str(out), "--no-plots"]) == 0
    html = out.read_text(encoding="utf-8")
    shipped = json.loads((ROOT / "proofs" / "claims.json").read_text())["claims"]
    assert all(f'<tr id="claim-{r["name"]}"' in html for r in shipped)
    assert "claims from proofs/claims.json (shipped)" in html


def test_report_without_shipped_claims_says_so_and_runs_them_with_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    import smtmma.report as report
    import smtmma.report.data as data
    from smtmma.cli import report_cmd
    from smtmma.proofs.runner import select

    shown: list[str] = []

    class Recorder(report_cmd.Status):  # what a terminal would show
        def __call__(self, message: str) -> None:
            shown.append(message)

    def fake_run(names: object, *, solver: object, timeout: float, progress) -> list:
        claims = select([], all_claims=True)
        progress(claims[0], None)
        progress(claims[0], {"name": claims[0].name})
        progress(claims[1], None)
        return []
    monkeypatch.setattr(data, "shipped_claims", lambda: None)  # an installed package: no proofs/ folder
    monkeypatch.setattr(report, "run_claims", fake_run)
    monkeypatch.setattr(report_cmd, "Status", Recorder)
    assert main(["report", "-o", str(tmp_path / "r.html"), "--no-plots"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("smtmma: note: no shipped proofs/claims.json") and err.count("\n") == 1
    n = len(select([], all_claims=True))
    assert shown[:2] == [f"running claims: [1/{n}] {select([], all_claims=True)[0].name}",
                         f"running claims: [2/{n}] {select([], all_claims=True)[1].name}"]
