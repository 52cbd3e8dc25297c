"""Any callable as a device (python:MODULE:FUNCTION, smtmma.hw.CallableDevice): vectors on the diagonal of GEMMs.

The identification of the kernel scheme a GEMM callable runs is in test_scheme_identify.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

import smtmma
from smtmma.cli import main
from smtmma.errors import InputError, UnknownNameError
from smtmma.hw import CallableDevice, open_device
from smtmma.hw.device import DeviceError, SimDevice
from smtmma.arrays import to_patterns
from smtmma.vectors import TestVector, read_vectors

ROOT = Path(__file__).resolve().parents[1]


def test_a_callable_device_gives_each_vector_its_dot_product() -> None:
    vectors = read_vectors(ROOT / "suites" / "f16f32.jsonl")[:40]
    sim = SimDevice("sim:sm80", "sm80")
    dev = CallableDevice(lambda A, B, C: smtmma.matmul("sm80", "f16f32", A, B, C))
    assert dev.run(vectors) == sim.run(vectors)
    wide = CallableDevice(lambda A, B, C: smtmma.matmul("sm80", "f16f32", A, B, C), shape=(48, 64, 16))
    assert wide.run(vectors) == sim.run(vectors)


def _random_vectors(n: int, K: int, seed: int = 0) -> list[TestVector]:
    """n sm90 f16f32 vectors of N(0, 1) values, every 7th with a -0 C and every 11th with an infinite a[0]."""
    rng = np.random.default_rng(seed)
    a = to_patterns(rng.standard_normal((n, K)), "fp16", round="rne")
    b = to_patterns(rng.standard_normal((n, K)), "fp16", round="rne")
    c = to_patterns(rng.standard_normal(n), "fp32", round="rne")
    c[::7] = 0x80000000
    a[::11, 0] = 0x7C00
    return [TestVector(i + 1, "sm90", "f16f32", "mma", tuple(map(int, a[i])), tuple(map(int, b[i])), int(c[i]))
            for i in range(n)]


def test_many_vectors_take_several_gemms_of_at_most_256() -> None:
    vectors = _random_vectors(300, 32)
    shapes = []

    def gemm(A, B, C):  # noqa: ANN001, ANN202
        shapes.append((A.shape, B.shape, A.dtype.name, C.dtype.name))
        return smtmma.matmul("sm90", "f16f32", A, B, C)

    assert CallableDevice(gemm).run(vectors) == SimDevice("sim:sm90", "sm90").run(vectors)
    assert shapes == [((256, 32), (32, 256), "float16", "float32"), ((256, 32), (32, 256), "float16", "float32")]
    shapes.clear()
    assert CallableDevice(gemm).run(vectors[:17]) == SimDevice("sim:sm90", "sm90").run(vectors[:17])
    assert shapes == [((32, 32), (32, 32), "float16", "float32")]


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
    with pytest.raises(DeviceError, match=r"returned None: FUNCTION\(A, B, C\) must return D"):
        CallableDevice(lambda A, B, C: None).run(v)
    with pytest.raises(DeviceError, match=r"raised KeyError$"):
        CallableDevice(lambda A, B, C: {}[""] if False else (_ for _ in ()).throw(KeyError())).run(v)
    with pytest.raises(DeviceError, match=r"returned an array of dtype complex128"):
        CallableDevice(lambda A, B, C: np.zeros(C.shape, complex)).run(v)
    with pytest.raises(DeviceError, match=r"is not representable in fp16 .*its output is not fp16"):
        CallableDevice(lambda A, B, C: np.full(C.shape, 1 + 2.0 ** -12)).run(read_vectors(ROOT / "suites" / "f16f16.jsonl")[:2])


def test_a_callable_answering_nan_is_a_mismatch_not_a_crash(user_module: Callable[[str, str], None],
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """NaN where the model gives a number: every D is read and validate reports the mismatches.  A float32 D's own bits
    are kept (a payload NaN stays itself); a float64 NaN becomes FP32's canonical one."""
    v = _random_vectors(3, 16)
    assert CallableDevice(lambda A, B, C: np.full(C.shape, np.nan)).run(v) == [0x7FC00000] * 3
    payload = lambda A, B, C: np.full(C.shape, 0x7FFFFFFF, np.uint32).view(np.float32)  # noqa: E731
    assert CallableDevice(payload).run(v) == [0x7FFFFFFF] * 3
    user_module("libnan", """
        import numpy as np
        def gemm(A, B, C):
            return np.full(C.shape, np.nan, np.float32)
    """)
    assert main(["validate", "--device", "python:libnan:gemm", "--arch", "sm80", "--instr", "f16f32", "-n", "50",
                 "--json"]) == 1
    rec = json.loads(capsys.readouterr().out)
    assert rec["mismatched"] > 0 and rec["matched"] + rec["mismatched"] == 50


def test_python_devices_open_by_name(user_module: Callable[[str, str], None]) -> None:
    user_module("libpd1", """
        import smtmma
        def gemm(A, B, C):
            return smtmma.matmul("sm90", "f16f32", A, B, C)
        notfn = 3

        class Gemm:
            @staticmethod
            def run(A, B, C):
                return smtmma.matmul("sm90", "f16f32", A, B, C)
    """)
    dev = open_device("python:libpd1:gemm@32x32x16")
    assert isinstance(dev, CallableDevice) and dev.shape == (32, 32, 16)
    assert open_device("python:libpd1:Gemm.run").name == "python:libpd1:Gemm.run"
    with pytest.raises(UnknownNameError, match="has no 'nope'"):
        open_device("python:libpd1:nope")
    with pytest.raises(UnknownNameError, match="has no 'Gemm.nope'"):
        open_device("python:libpd1:Gemm.nope")
    with pytest.raises(UnknownNameError, match="is a int, not a function"):
        open_device("python:libpd1:notfn")
    with pytest.raises(UnknownNameError, match="cannot import 'no_such_module_xyz'"):
        open_device("python:no_such_module_xyz:gemm")
    with pytest.raises(UnknownNameError, match="write python:MODULE:FUNCTION"):
        open_device("python:gemm")
    with pytest.raises(InputError, match="the shape after @ must be MxNxK"):
        open_device("python:libpd1:gemm@32x32")


def test_run_validate_and_identify_take_a_python_device(tmp_path: Path, user_module: Callable[[str, str], None],
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    user_module("libpd2", """
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


def test_a_callable_device_can_take_torch_tensors() -> None:
    torch = pytest.importorskip("torch")
    vectors = read_vectors(ROOT / "suites" / "bf16f32.jsonl")[:20]
    seen = []

    def gemm(A, B, C):  # noqa: ANN001, ANN202
        seen.append((A.dtype, C.dtype))
        return smtmma.matmul("sm90", "bf16f32", A, B, C)

    assert CallableDevice(gemm, array="torch").run(vectors) == SimDevice("sim:sm90", "sm90").run(vectors)
    assert seen[0] == (torch.bfloat16, torch.float32)
