"""Any callable as a device (python:MODULE:FUNCTION, smtmma.hw.CallableDevice) and the identification of the
instruction and kernel scheme a GEMM callable runs."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

import smtmma
from smtmma.cli import main
from smtmma.discriminators.scheme_identify import identify_scheme, parse_grid
from smtmma.errors import InputError, UnknownNameError
from smtmma.hw import CallableDevice, open_device
from smtmma.hw.device import DeviceError, SimDevice
from smtmma.scheme import Scheme
from smtmma.vectors import read_vectors

ROOT = Path(__file__).resolve().parents[1]


def _module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, body: str) -> None:
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(body))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))


def test_a_callable_device_gives_each_vector_its_dot_product() -> None:
    vectors = read_vectors(ROOT / "suites" / "f16f32.jsonl")[:40]
    sim = SimDevice("sim:sm80", "sm80")
    dev = CallableDevice(lambda A, B, C: smtmma.matmul("sm80", "f16f32", A, B, C))
    assert dev.run(vectors) == sim.run(vectors)
    wide = CallableDevice(lambda A, B, C: smtmma.matmul("sm80", "f16f32", A, B, C), shape=(48, 64, 16))
    assert wide.run(vectors) == sim.run(vectors)


def test_a_callable_that_fails_or_answers_nonsense_is_one_line() -> None:
    v = read_vectors(ROOT / "suites" / "f16f32.jsonl")[:2]

    def boom(A, B, C):  # noqa: ANN001, ANN202
        raise ZeroDivisionError("division by zero\nsecond line")

    with pytest.raises(DeviceError, match=r"raised ZeroDivisionError: division by zero$"):
        CallableDevice(boom).run(v)
    with pytest.raises(DeviceError, match=r"returned shape \(2, 2\); a GEMM of A \(16, 16\) and B \(16, 16\) gives"):
        CallableDevice(lambda A, B, C: np.zeros((2, 2))).run(v)
    with pytest.raises(DeviceError, match="returned an array of dtype <U1"):
        CallableDevice(lambda A, B, C: np.full(C.shape, "x")).run(v)
    with pytest.raises(DeviceError, match="is not representable in fp32"):
        CallableDevice(lambda A, B, C: np.full(C.shape, 0.1)).run(v)
    with pytest.raises(InputError, match="needs a function"):
        CallableDevice(42)  # type: ignore[arg-type]


def test_python_devices_open_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _module(tmp_path, monkeypatch, "libpd1", """
        import smtmma
        def gemm(A, B, C):
            return smtmma.matmul("sm90", "f16f32", A, B, C)
        notfn = 3
    """)
    dev = open_device("python:libpd1:gemm@32x32x16")
    assert isinstance(dev, CallableDevice) and dev.shape == (32, 32, 16)
    with pytest.raises(UnknownNameError, match="has no 'nope'"):
        open_device("python:libpd1:nope")
    with pytest.raises(UnknownNameError, match="is a int, not a function"):
        open_device("python:libpd1:notfn")
    with pytest.raises(UnknownNameError, match="cannot import 'no_such_module_xyz'"):
        open_device("python:no_such_module_xyz:gemm")
    with pytest.raises(UnknownNameError, match="write python:MODULE:FUNCTION"):
        open_device("python:gemm")
    with pytest.raises(InputError, match="the shape after @ must be MxNxK"):
        open_device("python:libpd1:gemm@32x32")


def test_run_validate_and_identify_take_a_python_device(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    _module(tmp_path, monkeypatch, "libpd2", """
        import smtmma
        def gemm(A, B, C):
            return smtmma.matmul("sm80", "bf16f32", A, B, C)
        def bad(A, B, C):
            raise RuntimeError("no GPU")
    """)
    suite = ROOT / "suites" / "bf16f32.jsonl"
    assert main(["run", "--device", "python:libpd2:gemm", str(suite), "-o", str(tmp_path / "out.jsonl")]) == 0
    assert main(["check", str(tmp_path / "out.jsonl"), "--against", "sm80", "--json"]) == 0
    capsys.readouterr()
    assert main(["validate", "--device", "python:libpd2:gemm", "--arch", "sm80", "--instr", "bf16f32", "-n", "300",
                 "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert (rec["matched"], rec["mismatched"]) == (300, 0)
    assert main(["identify", "--device", "python:libpd2:gemm", "--instr", "bf16f32", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["verdict"] == "identified" and "sm80" in rec["models"]
    assert main(["run", "--device", "python:libpd2:bad", str(suite), "-o", str(tmp_path / "o2.jsonl")]) == 2
    assert "raised RuntimeError: no GPU" in capsys.readouterr().err


def _hidden(scheme: Scheme, arch: str = "sm90", instr: str = "f16f32") -> CallableDevice:
    return CallableDevice(lambda A, B, C: smtmma.matmul(arch, instr, A, B, C, scheme=scheme), name="python:test:hidden")


def test_identify_names_a_hidden_instruction_and_scheme() -> None:
    grid = parse_grid("promote_every=none,32,64,128;split_k=1,2")
    r = identify_scheme(_hidden(Scheme(promote_every=64)), "f16f32", grid)
    assert r.verdict == "identified" and r.left[0].scheme == Scheme(promote_every=64)
    assert r.left[0].model == smtmma.lookup("sm90", "f16f32").model
    r = identify_scheme(_hidden(Scheme(split_k=2, partial="fp16"), arch="sm80"), "f16f32",
                        parse_grid("split_k=1,2;partial=fp32,fp16"))
    assert r.verdict == "identified" and r.left[0].scheme == Scheme(split_k=2, partial="fp16")
    assert "sm80" in r.left[0].names


def test_bf16_partials_can_hide_the_instruction_and_say_so() -> None:
    """Partial sums rounded to bf16 (8 bits) hide what the FP32 accumulators differed in: the scheme is told, the
    instruction is not, and the verdict says undecided instead of naming one."""
    r = identify_scheme(_hidden(Scheme(split_k=2, partial="bf16"), arch="sm80"), "f16f32",
                        parse_grid("split_k=1,2;partial=fp32,bf16"))
    assert r.verdict == "undecided" and len(r.left) > 1
    assert {c.scheme for c in r.left} == {Scheme(split_k=2, partial="bf16")} and r.scheme == Scheme(split_k=2, partial="bf16")
    assert any("sm80" in c.names for c in r.left)


def test_a_scheme_outside_the_grid_is_none_not_a_guess() -> None:
    r = identify_scheme(_hidden(Scheme(split_k=4, partial="fp16")), "f16f32",
                        parse_grid("promote_every=none,32,64,128;split_k=1,2"))
    assert r.verdict == "none" and not r.left and r.nearest


def test_tf32_operand_rounding_is_told_apart() -> None:
    r = identify_scheme(_hidden(Scheme(round="rna"), arch="sm80", instr="tf32f32"), "tf32f32",
                        parse_grid("round=rne,rna,rz"))
    assert r.verdict == "identified" and r.left[0].scheme.round == "rna"


def test_what_a_shape_cannot_show_is_one_candidate() -> None:
    r = identify_scheme(_hidden(Scheme(promote_every=64)), "f16f32", parse_grid("promote_every=none,64"),
                        shape=(8, 8, 64))
    assert r.verdict == "identified" and r.left[0].scheme == Scheme()  # promote_every >= K is no promotion


def test_scheme_grids_refuse_nonsense(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InputError, match="split_k must be an int"):
        parse_grid("split_k=0,1")
    with pytest.raises(InputError, match="is not FIELD=V1,V2"):
        parse_grid("split_k")
    with pytest.raises(InputError, match="identifies a GEMM callable"):
        identify_scheme(SimDevice("sim:sm90", "sm90"), "f16f32", parse_grid("split_k=1,2"))
    assert main(["identify", "--device", "sim:sm90", "--instr", "f16f32", "--scheme-grid", "split_k=1,2"]) == 2
    assert "identifies a GEMM callable" in capsys.readouterr().err
    assert main(["identify", "--device", "sim:sm90", "--instr", "f16f32", "--gemm-shape", "8x8x8"]) == 2


def test_a_callable_device_can_take_torch_tensors() -> None:
    torch = pytest.importorskip("torch")
    vectors = read_vectors(ROOT / "suites" / "bf16f32.jsonl")[:20]
    seen = []

    def gemm(A, B, C):  # noqa: ANN001, ANN202
        seen.append((A.dtype, C.dtype))
        return smtmma.matmul("sm90", "bf16f32", A, B, C)

    assert CallableDevice(gemm, array="torch").run(vectors) == SimDevice("sim:sm90", "sm90").run(vectors)
    assert seen[0] == (torch.bfloat16, torch.float32)
