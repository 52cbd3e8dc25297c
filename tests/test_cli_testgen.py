"""The test-generation commands: suite, identify, run, validate, hw kernels; --json contracts, exit codes, bad input."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Sequence

import pytest

from smtmma.cli import main
from smtmma.cli import device_options
from smtmma.hw.device import Device, DeviceError, SimDevice
from smtmma.hw.record import record_file
from smtmma.vectors import TestVector

SUITES = Path(__file__).resolve().parents[1] / "suites"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str, starts: str) -> None:
    assert err.startswith("smtmma: error: " + starts), err
    assert err.count("\n") == 1 and "Traceback" not in err, err


# ---------------------------------------------------------------- suite

def test_suite_json_and_file(capsys, tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    code, stdout, _ = run(capsys, "suite", "--instr", "bf16f32", "-o", str(out), "--json")
    assert code == 0
    rec = json.loads(stdout)
    assert {"instr", "candidates", "classes", "vectors", "seconds", "equivalent"} <= set(rec)
    assert (rec["instr"], rec["candidates"], rec["classes"]) == ("bf16f32", 12, 7)
    assert rec["vectors"] == len(out.read_text().splitlines()) <= rec["log2_classes"] == 3
    assert rec["equivalent"] == [["sm80", "sm86", "sm89"], ["sm90", "sm90/wgmma", "sm100", "sm100/tcgen05"]]


def test_suite_text_summary_and_stdout(capsys) -> None:
    code, out, err = run(capsys, "suite", "--instr", "f16f32", "--candidates", "sm80,sm90,t-fdpa:L=16,F=26")
    assert code == 0
    lines = [json.loads(x) for x in out.splitlines()]
    assert lines and set(lines[0]["expect"]) == {"sm80", "sm90", "t-fdpa:L=16,F=26,rho=rz-fp32"}
    assert "3 candidates, 3 classes" in err


def test_a_single_candidate_gets_a_conformance_vector(capsys, tmp_path: Path) -> None:
    code, out, _ = run(capsys, "suite", "--instr", "fp8f32", "-o", str(tmp_path / "one.jsonl"), "--json")
    rec = json.loads(out)
    assert code == 0 and (rec["candidates"], rec["classes"], rec["vectors"], rec["conformance"]) == (1, 1, 0, 1)
    assert len((tmp_path / "one.jsonl").read_text().splitlines()) == 1


def test_suite_grid_lists_what_it_drops(capsys, tmp_path: Path) -> None:
    code, out, _ = run(capsys, "suite", "--instr", "f16f16", "--grid", "t-fdpa:L=4,8;F=24;rho=rne-fp16,rz-fp32",
                       "-o", str(tmp_path / "g.jsonl"), "--json")
    rec = json.loads(out)
    assert code == 0 and rec["candidates"] == 2 and rec["classes"] == 2
    assert rec["dropped"] == [{"spec": f"t-fdpa:L={L},F=24,rho=rz-fp32", "reason": "rho=rz-fp32 rounds to fp32, but D is fp16"}
                              for L in (4, 8)]


@pytest.mark.parametrize("argv, starts", [
    (("--instr", "f16f32", "--grid", "t-fdpa:F=99"), "grid 't-fdpa:F=99': F=99 is out of range 0..64"),
    (("--instr", "f16f32", "--grid", "q-fdpa:F=9"), "grid 'q-fdpa:F=9': unknown model kind 'q-fdpa'"),
    (("--instr", "f16f32", "--candidates", ","), "--candidates is empty"),
    (("--instr", "f16f32", "--candidates", "sm80,sm99"), "candidate 'sm99': unknown"),
    (("--instr", "e4m3f32", "--candidates", "sm75,sm90"), "candidate 'sm75': sm75 has no instruction"),
    (("--instr", "f16f32", "--json"), "--json prints the summary on standard output: give -o FILE"),
    (("--instr", "f17f32",), "unknown instruction 'f17f32'"),
    (("--instr", "f16f32", "--domain", "exp=4:1"), "domain: empty exponent range"),
    (("--instr", "f16f32", "--grid", "t-fdpa:L=4", "--vendor", "amd"), "--vendor selects catalogue entries"),
])
def test_suite_bad_input(capsys, argv: Sequence[str], starts: str) -> None:
    code, out, err = run(capsys, "suite", *argv)
    assert code == 2 and out == ""
    one_line_error(err, starts)


# ---------------------------------------------------------------- identify

def test_identify_json(capsys) -> None:
    code, out, _ = run(capsys, "identify", "--device", "sim:sm90/wgmma", "--instr", "f16f32", "--json")
    rec = json.loads(out)
    assert code == 0 and rec["verdict"] == "identified"
    assert rec["models"] == ["sm90", "sm90/wgmma", "sm100", "sm100/tcgen05", "sm120"]
    assert rec["vectors_run"] == len(rec["transcript"]) + rec["confirmation"]["vectors"] and len(rec["transcript"]) >= 1
    assert rec["confirmation"]["matched"] == rec["confirmation"]["vectors"] >= 688
    step = rec["transcript"][0]
    assert {"vector", "d", "survivors"} <= set(step) and step["vector"]["expect"]["sm90"] == step["d"]


def test_identify_none_prints_the_vector_and_exits_1(capsys) -> None:
    code, out, _ = run(capsys, "identify", "--device", "sim:t-fdpa:L=16,F=26,rho=rz-fp32", "--instr", "f16f32")
    assert code == 1 and out.startswith("vector 1 (pool)")
    line = json.loads(next(ln for ln in out.splitlines() if ln.startswith("{")))
    assert line["d"] not in line["expect"].values()


def test_identify_confirms_and_says_none_for_a_device_that_is_no_candidate(capsys) -> None:
    code, out, _ = run(capsys, "identify", "--device", "sim:t-fdpa:L=16,F=25,rho=rne-fp32", "--instr", "f16f32")
    lines = out.splitlines()
    assert code == 1 and lines[0].startswith("vector 1 (pool)") and lines[1].startswith("confirmation: ")
    assert lines[2].startswith("none: the device matched sm90 = sm90/wgmma = sm100 = sm100/tcgen05 = sm120 on every "
                               "vector that split the candidates, but not on ")
    failing = json.loads(lines[3])
    assert failing["d"] != failing["expect"]["sm90"] and failing["d"] == failing["expect"]["t-fdpa:L=16,F=25,rho=rne-fp32"]
    assert lines[4].startswith("nearest (vectors explained): t-fdpa:L=16,F=25,rho=rne-fp32 ")


@pytest.mark.parametrize("argv, starts", [
    (["--rate", "0"], "argument --rate: expected a disagreement rate in (0, 1), got '0'"),
    (["--confidence", "1"], "argument --confidence: expected a confidence in (0, 1), got '1'"),
    (["--confidence", "nan"], "argument --confidence: expected a confidence in (0, 1), got 'nan'"),
])
def test_identify_refuses_a_confirmation_it_cannot_give(capsys, argv, starts) -> None:
    code, out, err = run(capsys, "identify", "--device", "sim:sm90", "--instr", "f16f32", *argv)
    assert code == 2 and out == ""
    one_line_error(err, starts)


def test_identify_names_a_grid_variant(capsys) -> None:
    code, out, _ = run(capsys, "identify", "--device", "sim:t-fdpa:L=8,F=25,rho=rz-fp32", "--instr", "f16f32",
                       "--grid", "t-fdpa:L=4,8,16;F=23..26", "--json")
    rec = json.loads(out)
    assert code == 0 and rec["verdict"] == "identified" and rec["models"] == ["t-fdpa:L=8,F=25,rho=rz-fp32"]


@pytest.mark.parametrize("device, starts", [
    ("gpu0", "unknown device 'gpu0'; valid: sim:ARCH"),
    ("sim:", "device 'sim:': sim needs a target"),
    ("sim:q-fdpa:L=4", "device 'sim:q-fdpa:L=4': 'q-fdpa:L=4' is neither an architecture"),
    ("cuda", "cuda: CuPy is not installed; pip install 'smtmma[cuda]'"),
    ("cuda:x", "device 'cuda:x': the GPU index must be a number"),
    ("hip", "hip: no HIP toolchain"),
])
def test_unknown_or_unavailable_devices(capsys, device: str, starts: str) -> None:
    if device == "cuda" and importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed here")
    code, out, err = run(capsys, "identify", "--device", device, "--instr", "f16f32")
    assert code == 2 and out == ""
    one_line_error(err, starts)


class FakeGpu(Device):
    """A 'GPU' that reports sm90 and computes with the simulator."""

    name = "cuda"
    description = "Fake H100 (sm90, cuda:0)"
    arch = "sm90"
    hardware = True

    def __init__(self, fail_after: int = -1) -> None:
        self.sim = SimDevice("sim:sm90", "sm90")
        self.calls = 0
        self.fail_after = fail_after

    def run(self, vectors: Sequence[TestVector]) -> list[int]:
        self.calls += 1
        if self.calls == self.fail_after:
            raise DeviceError("cuda: launch failed (an illegal memory access was encountered)")
        return self.sim.run(vectors)


def test_a_gpu_of_another_architecture_is_refused(capsys, monkeypatch) -> None:
    monkeypatch.setattr(device_options, "open_device", lambda name: FakeGpu())
    code, out, err = run(capsys, "validate", "--device", "cuda", "--arch", "a100", "--instr", "f16f32", "-n", "10")
    assert code == 2 and out == ""
    one_line_error(err, "device cuda is Fake H100 (sm90, cuda:0), an sm90, but --arch is sm80; give --arch sm90")
    code, out, _ = run(capsys, "validate", "--device", "cuda", "--arch", "h100", "--instr", "f16f32", "-n", "100")
    assert code == 0 and "100 of 100 match" in out


# ---------------------------------------------------------------- run and check

def test_run_then_check_names_the_gpu_class(capsys, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(device_options, "open_device", lambda name: FakeGpu())
    out = tmp_path / "mine.jsonl"
    code, stdout, _ = run(capsys, "run", "--device", "cuda", str(SUITES / "f16f32.jsonl"), "-o", str(out), "--json")
    assert code == 0 and json.loads(stdout)["written"] == 1
    rec = json.loads(out.read_text())
    assert (rec["arch"], rec["gpu"]) == ("sm90", "Fake H100 (sm90, cuda:0)") and rec["d"] == rec["expect"]["sm90"]
    code, stdout, _ = run(capsys, "check", str(out))
    assert code == 0
    assert "models whose expectations match d on every line: sm90, sm90/wgmma, sm100, sm100/tcgen05, sm120" in stdout


def test_a_run_that_fails_half_way_keeps_the_lines_done(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text((SUITES / "f16f16.jsonl").read_text() * 3)
    out = tmp_path / "out.jsonl"
    rep = record_file(FakeGpu(fail_after=2), src, out, batch=2)
    assert rep.error is not None and "illegal memory access" in rep.error
    assert rep.written == 2 and len(out.read_text().splitlines()) == 2 and rep.lines == 6


def test_check_refuses_an_expect_naming_an_unknown_model(capsys, tmp_path: Path) -> None:
    rec = json.loads((SUITES / "f16f32.jsonl").read_text().splitlines()[0])
    rec["expect"]["sm99"] = "00000000"
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    code, out, err = run(capsys, "check", str(path))
    assert code == 2
    assert 'expect["sm99"]: unknown model \'sm99\'' in out and "Traceback" not in err


def test_check_reports_an_expectation_the_model_contradicts(capsys, tmp_path: Path) -> None:
    rec = json.loads((SUITES / "f16f32.jsonl").read_text().splitlines()[0])
    rec["expect"]["sm80"] = "3f800000"
    path = tmp_path / "stale.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    code, out, _ = run(capsys, "check", str(path), "--json")
    assert code == 1
    (f,) = json.loads(out)["files"]
    assert f["expect_disagree"] == 1 and f["expect_wrong"][0]["model"] == "sm80"


def test_run_refuses_writing_over_its_input(capsys, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text((SUITES / "f16f32.jsonl").read_text())
    code, _, err = run(capsys, "run", "--device", "sim:sm80", str(path), "-o", str(path))
    assert code == 2
    one_line_error(err, f"-o {path} is the input file")


# ---------------------------------------------------------------- validate

def test_validate_finds_and_shrinks_a_perturbed_model(capsys) -> None:
    code, out, _ = run(capsys, "validate", "--device", "sim:t-fdpa:L=16,F=26,rho=rz-fp32", "--arch", "sm90",
                       "--instr", "f16f32", "-n", "5000", "--shrink", "2", "--json")
    rec = json.loads(out)
    assert code == 1 and rec["mismatched"] > 0 and rec["n"] == 5000
    assert set(rec["by_kind"]) == {"normal", "uniform", "dnn", "ill-conditioned", "bits"}
    for m in rec["mismatches"]:
        v = m["vector"]
        assert v["d"] != v["expect"]["sm90"]
        assert sum(x != "0000" for x in v["a"]) <= 3  # shrunk: a lane or two, not 16
    # the shrunk vector still mismatches: replay it through both models
    from smtmma.vectors import parse_line

    v = parse_line(json.dumps(rec["mismatches"][0]["vector"]))
    dev = SimDevice("sim:t-fdpa:L=16,F=26,rho=rz-fp32", "t-fdpa:L=16,F=26,rho=rz-fp32")
    assert dev.run([v]) == [v.d] and SimDevice("sim:sm90", "sm90").run([v]) == [v.expect["sm90"]]


def test_validate_agrees_with_itself(capsys) -> None:
    code, out, _ = run(capsys, "validate", "--device", "sim:gfx90a", "--arch", "gfx90a", "--instr", "bf16f32", "-n", "2000")
    assert code == 0 and "2,000 of 2,000 match" in out


# ---------------------------------------------------------------- hw kernels

def test_hw_kernels_writes_sources_and_manifest(capsys, tmp_path: Path) -> None:
    code, out, _ = run(capsys, "hw", "kernels", "--out", str(tmp_path), "--json")
    assert code == 0
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest == json.loads(out)
    for row in manifest:
        assert {"file", "arch", "instr", "op", "shape"} <= set(row) and (tmp_path / row["file"]).is_file()
        assert ("nvcc_arch" in row) != ("offload_arch" in row)
    archs = {row["arch"] for row in manifest}
    assert {"sm70", "sm80", "sm90", "sm100", "sm120", "gfx908", "gfx90a", "gfx942"} <= archs


def test_hw_without_a_subcommand(capsys) -> None:
    code, _, err = run(capsys, "hw")
    assert code == 2 and "a subcommand is required: kernels" in err


def test_every_expectation_is_reproduced_by_simulate(capsys, tmp_path: Path) -> None:
    """Catalogue names through --arch/--op, other candidates through --model, with the line's --arch."""
    out = tmp_path / "g.jsonl"
    code, _, _ = run(capsys, "suite", "--instr", "f16f32", "--candidates", "catalogue,t-fdpa:L=16,F=26",
                     "--grid", "tr-fdpa:L=8;F=23,24;F2=31;rho=rne-fp32", "-o", str(out))
    assert code == 0
    rec = json.loads(out.read_text().splitlines()[0])
    values = ["--a", ",".join("0x" + x for x in rec["a"]), "--b", ",".join("0x" + x for x in rec["b"]), "--c", "0x" + rec["c"]]
    assert {"sm90/wgmma", "t-fdpa:L=16,F=26,rho=rz-fp32", "tr-fdpa:L=8,F=23,F2=31,rho=rne-fp32"} <= set(rec["expect"])
    for name, d in rec["expect"].items():
        if ":" in name:
            target = ["--arch", rec["arch"], "--model", name]
        else:
            arch, _, op = name.partition("/")
            target = ["--arch", arch] + (["--op", op] if op else [])
        code, stdout, _ = run(capsys, "simulate", *target, "--instr", rec["instr"], *values, "--json")
        assert code == 0 and json.loads(stdout)["d"] == d, name
