"""``smtmma hw survey``: every architecture surveyed on the simulator names itself; bad input gets one line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import numpy as np
import pytest

from smtmma.catalogue import ARCHS, lookup, model_of
from smtmma.check import check_files
from smtmma.cli import main
from smtmma.hw.device import SimDevice, open_device
from smtmma.discriminators.provisional import PROVISIONAL_SUITES, suite_file
from smtmma.hw.survey import InstrSurvey, survey, survey_targets
from smtmma.vectors import read_vectors
from smtmma.simulate import simulate_dot

SUITES = Path(__file__).resolve().parents[1] / "suites"

#: Small enough for CI: the full default survey (2000 random vectors) of sm90 runs under -m slow.
FAST = dict(n_random=10, pool_rows=120)


MEASURED = [a for a, x in ARCHS.items() if not x.provisional]
PROVISIONAL = [a for a, x in ARCHS.items() if x.provisional]


def _identifies_itself(arch: str, tmp_path: Path, instrs: Optional[list[str]] = None) -> list[InstrSurvey]:
    result = survey(open_device(f"sim:{arch}"), tmp_path, instrs=instrs, **FAST)  # type: ignore[arg-type]
    assert [(s.instr, s.op) for s in result.instructions] == [(t.entry.instr, t.shape.name)
                                                              for t in survey_targets(arch, instrs)]
    for s in result.instructions:
        assert s.error is None and s.lines > 10 and s.matched == s.lines, (s.instr, s.op, s.error)
        assert s.own_identified, (s.instr, s.op, s.identified)
        assert not s.surprises
    files = sorted(p.name for p in tmp_path.glob("*.jsonl"))
    assert len(files) == len(result.instructions)
    return result.instructions


@pytest.mark.parametrize("arch", MEASURED)
def test_every_architecture_is_identified_as_its_own_catalogue_model(arch: str, tmp_path: Path) -> None:
    _identifies_itself(arch, tmp_path)


@pytest.mark.parametrize("arch", PROVISIONAL)
def test_a_provisional_architecture_runs_its_suite_and_names_its_hypothesis(arch: str, tmp_path: Path) -> None:
    """The first instruction type with a shipped provisional suite: that suite runs, and the device (the hypothesis
    itself) is named with the measured row it was taken from."""
    instr = PROVISIONAL_SUITES[arch][0]
    for s in _identifies_itself(arch, tmp_path, [instr]):
        lines = [json.loads(x) for x in (tmp_path / f"{arch}-{s.instr}-{s.op}.jsonl").read_text().splitlines()]
        suite = read_vectors(suite_file(SUITES, arch, instr))
        assert sum(ln["source"] == "provisional suite" for ln in lines) == len(suite)
        (own,) = [c for c in s.identified if arch in c]
        assert any(n.split("/")[0] == ARCHS[arch].like for n in own), own


@pytest.mark.slow
@pytest.mark.parametrize("arch", PROVISIONAL)
def test_every_provisional_instruction_is_identified_as_its_own_row(arch: str, tmp_path: Path) -> None:
    _identifies_itself(arch, tmp_path)


def test_cli_writes_recordings_and_summaries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "survey"
    rc = main(["hw", "survey", "--device", "sim:sm90", "--instr", "f16f32", "--random", "20", "-o", str(out), "--json"])
    assert rc == 0
    printed = json.loads(capsys.readouterr().out)
    summary = json.loads((out / "summary.json").read_text())
    assert printed["instructions"] == summary["instructions"]
    assert summary["gpu"]["arch"] == "sm90" and summary["gpu"]["description"] == "simulator: sm90"
    rows = summary["instructions"]
    assert [r["op"] for r in rows] == ["mma.sync.aligned.m16n8k8", "mma.sync.aligned.m16n8k16",
                                       "wgmma.mma_async.sync.aligned.m64n8k16", "wgmma.mma_async.sync.aligned.m64n256k16"]
    for r in rows:
        assert set(r) >= {"arch", "instr", "op", "lines", "matched", "identified", "open_questions", "error"}
        assert r["error"] is None and r["lines"] == r["matched"] and "sm90" in r["identified"]
    # the shipped open question of sm90 f16f32 runs on the shape whose model it was asked of, and the simulator
    # answers with the catalogue's choice
    assert rows[1]["open_questions"] == {"zero-products-in-emax": "sm90"} and rows[0]["open_questions"] == {}
    md = (out / "summary.md").read_text()
    assert "| sm90 | f16f32 | wgmma.mma_async.sync.aligned.m64n256k16 |" in md
    report = check_files(sorted(out.glob("*.jsonl")))
    assert report.lines == report.matched == sum(r["lines"] for r in rows)
    # every recorded line says where it came from, and a quarter of the random ones chain instructions
    lines = [json.loads(x) for x in (out / f"{rows[0]['arch']}-f16f32-{rows[0]['op']}.jsonl").read_text().splitlines()]
    assert {ln["source"].split(":")[0] for ln in lines} == {"suite", "random"}
    assert {len(ln["a"]) for ln in lines if ln["source"].startswith("random")} == {16, 36}


class _OtherUnit(SimDevice):
    """A unit that calls itself sm80 but truncates to F=23: no catalogue model."""

    def __init__(self) -> None:
        super().__init__("sim:t-fdpa:L=8,F=23,rho=rz-fp32", "t-fdpa:L=8,F=23,rho=rz-fp32")
        self.arch = "sm80"


def test_a_unit_that_is_no_catalogue_model_is_named_none() -> None:
    result = survey(_OtherUnit(), None, instrs=["f16f32"], n_random=200, pool_rows=200)
    (k8, k16) = result.instructions
    for s in (k8, k16):
        assert s.identified == [] and s.matched < s.lines and s.error is None
        assert s.surprises and s.surprises[0].startswith("the catalogue model differs on")
    assert "none" in result.table()[1]


def test_interrupt_keeps_what_is_done(tmp_path: Path) -> None:
    def stop_at_second(n: int, total: int, name: str) -> None:
        if n == 1:
            raise KeyboardInterrupt

    result = survey(open_device("sim:sm80"), tmp_path, instrs=["f16f32"], progress=stop_at_second, **FAST)  # type: ignore[arg-type]
    assert result.interrupted and len(result.instructions) == 1 and result.instructions[0].matched > 0
    assert len(list(tmp_path.glob("*.jsonl"))) == 1


def test_a_full_disk_is_the_instructions_error_and_the_survey_goes_on(monkeypatch: pytest.MonkeyPatch,
                                                                        tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    import smtmma.hw.survey as mod

    def full(*args: object, **kw: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(mod, "open", full, raising=False)
    rc = main(["hw", "survey", "--device", "sim:sm70", "--random", "5", "-o", str(tmp_path / "s")])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.count("error: cannot write") == 3  # every instruction tried, each with its own line
    assert err.strip().splitlines()[-1].startswith("smtmma: error: nothing could be surveyed on simulator: sm70: cannot write")


@pytest.mark.parametrize("args,message", [
    (["--device", "cuda"], "cuda: CuPy is not installed"),
    (["--device", "python:math:fsum"], "has no architecture to survey"),
    (["--device", "sim:sm70", "--instr", "e4m3f32"], "sm70 has no instruction e4m3e4m3f32"),
    (["--device", "sim:sm90", "--random", "-3"], "--random: expected a number of random inputs"),
    (["--device", "sim:nonsense"], "is neither an architecture"),
])
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    if args[1] == "cuda" and "cupy" in sys.modules:
        pytest.skip("CuPy is installed here")
    with pytest.raises(SystemExit) as e:
        rc = main(["hw", "survey", *args])
        raise SystemExit(rc)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err


def test_an_output_that_is_a_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    assert main(["hw", "survey", "--device", "sim:sm70", "-o", str(f)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_a_device_whose_cells_disagree_is_recorded_and_the_survey_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from test_hw_cuda import fake_cupy

    fake_cupy(monkeypatch, (9, 0), scramble=True)
    result = survey(open_device("cuda"), None, instrs=["tf32f32"], n_random=2, pool_rows=50)
    assert len(result.instructions) == 4
    for s in result.instructions:
        assert s.lines == 0 and s.error is not None and "of a tile disagree" in s.error


def test_chained_instructions_are_one_instruction_after_another() -> None:
    """``issue``: a dot product of 2.5 instructions is the FP8 m16n8k16 model applied per instruction, D -> C."""
    model = model_of("sm90", "e4m3e4m3f16", "mma.sync.aligned.m16n8k16")
    assert (model.L, model.issue, model.interleave, model.c_after) == (8, 16, 2, True)
    rng = np.random.default_rng(5)
    n, K = 300, 40
    a = rng.integers(0, 256, (n, K)).astype(np.uint64)
    b = rng.integers(0, 256, (n, K)).astype(np.uint64)
    a[(a & 0x7F) == 0x7F] = 0x38  # no NaN inputs: this is about chaining
    b[(b & 0x7F) == 0x7F] = 0x38
    c = rng.integers(0, 0x7C00, n).astype(np.uint64)
    whole = simulate_dot(model, None, a, b, c)
    d = c
    for lo in range(0, K, 16):
        pa = np.zeros((n, 16), np.uint64)
        pb = np.zeros((n, 16), np.uint64)
        pa[:, : min(16, K - lo)] = a[:, lo:lo + 16]
        pb[:, : min(16, K - lo)] = b[:, lo:lo + 16]
        d = simulate_dot(model, None, pa, pb, d)
    assert np.array_equal(whole, d)
    # and one issue of K=40 lanes in one Alg. 5 (the model before the survey) is another computation
    assert not np.array_equal(whole, simulate_dot(model.replace(issue=None), None, a, b, c))


def test_the_h200_lines_refute_the_models_they_replaced() -> None:
    from smtmma.vectors import read_vectors

    root = Path(__file__).resolve().parents[1] / "hw-samples"
    f64 = [v for v in read_vectors(root / "H200-survey-f64f64.jsonl") if v.K == 8]
    old = model_of("sm90", "f64f64").replace(nan="ieee")
    got = np.array([v.d for v in f64], np.uint64)
    ran = simulate_dot(old, None, np.array([v.a for v in f64], np.uint64), np.array([v.b for v in f64], np.uint64),
                       np.array([v.c for v in f64], np.uint64))
    assert int(np.count_nonzero(ran != got)) >= 5  # the NaN payloads
    fp8 = [v for v in read_vectors(root / "H200-survey-e4m3e4m3f16.jsonl")
           if v.raw["op"] == "mma.sync.aligned.m16n8k16" and v.K == 16]
    old8 = lookup("sm90", "e4m3e4m3f16", "mma").model.replace(issue=None)  # L=16 on the k16 shape
    ran8 = simulate_dot(old8, None, np.array([v.a for v in fp8], np.uint64), np.array([v.b for v in fp8], np.uint64),
                        np.array([v.c for v in fp8], np.uint64))
    assert int(np.count_nonzero(ran8 != np.array([v.d for v in fp8], np.uint64))) >= 5


@pytest.mark.slow
def test_the_full_sm90_survey_on_the_simulator(tmp_path: Path) -> None:
    result = survey(open_device("sim:sm90"), tmp_path)
    assert len(result.instructions) == 52
    assert all(s.own_identified and s.matched == s.lines >= 2000 for s in result.instructions)
