"""What the commands write (issue 33, item 7): ``-`` is standard output, files are written whole (a temporary
file renamed into place), sizes that cannot fit in memory are refused before any work, and a console that
cannot encode a character never ends a command in status 70."""

from __future__ import annotations

import errno
import io
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Sequence

import numpy as np
import pytest

from smtmma.cli import main, output
from smtmma.cli import device_options
from smtmma.errors import InputError
from smtmma.hw.device import DeviceError, SimDevice
from smtmma.queries.backends import available
from smtmma.vectors import TestVector

SUITES = Path(__file__).resolve().parent.parent / "suites"


def one_line_error(err: str, starts: str) -> None:
    assert err.startswith("smtmma: error: " + starts), err[:300]
    assert err.count("\n") == 1 and "Traceback" not in err, err[:300]


def binary_stdout(monkeypatch: pytest.MonkeyPatch) -> io.BytesIO:
    """Standard output as a text stream over bytes (as a pipe is), for commands that write .npy to it."""
    raw = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw, encoding="utf-8", write_through=True))
    return raw


@pytest.fixture
def ab(tmp_path: Path) -> tuple[str, str]:
    a, b = tmp_path / "A.npy", tmp_path / "B.npy"
    np.save(a, np.ones((4, 16), np.float16))
    np.save(b, np.ones((16, 3), np.float16))
    return str(a), str(b)


# ---------------------------------------------------------------- - is standard output

def test_matmul_writes_the_npy_to_standard_output(capsys, monkeypatch, tmp_path: Path, ab: tuple[str, str]) -> None:
    monkeypatch.chdir(tmp_path)
    raw = binary_stdout(monkeypatch)
    code = main(["matmul", "--arch", "sm90", "--instr", "f16f32", *ab, "-o", "-"])
    assert code == 0
    D = np.load(io.BytesIO(raw.getvalue()))
    assert D.dtype == np.float32 and (D == 16).all() and D.shape == (4, 3)
    assert "standard output" in capsys.readouterr().err  # the summary moves to stderr
    assert not (tmp_path / "-").exists()


def test_matmul_refuses_json_with_npy_on_standard_output(capsys, ab: tuple[str, str]) -> None:
    code = main(["matmul", "--arch", "sm90", "--instr", "f16f32", *ab, "-o", "-", "--json"])
    assert code == 2
    one_line_error(capsys.readouterr().err, "--json prints the summary on standard output, where -o - writes D")


def test_suite_and_run_stream_to_standard_output(capsys, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["suite", "--instr", "f16f32", "--candidates", "sm80,sm90", "--pool", "256", "-o", "-"])
    out, err = capsys.readouterr()
    assert code == 0 and json.loads(out.splitlines()[0])["instr"] == "f16f32"
    assert "vectors written to standard output" in err
    (tmp_path / "s.jsonl").write_text(out)
    code = main(["run", "--device", "sim:sm90", "s.jsonl", "-o", "-"])
    out, err = capsys.readouterr()
    assert code == 0 and all("d" in json.loads(line) for line in out.splitlines())
    assert "recorded on simulator: sm90" in err and not (tmp_path / "-").exists()
    assert main(["run", "--device", "sim:sm90", "s.jsonl", "-o", "-", "--json"]) == 2
    one_line_error(capsys.readouterr().err, "--json prints the summary on standard output, where -o - writes the lines")


def test_a_folder_output_refuses_standard_output_and_files(capsys, tmp_path: Path) -> None:
    assert main(["hw", "kernels", "--out", "-"]) == 2
    one_line_error(capsys.readouterr().err, "--out -: standard output cannot take it; give a folder")
    (tmp_path / "f").write_text("x")
    assert main(["hw", "kernels", "--out", str(tmp_path / "f")]) == 2
    one_line_error(capsys.readouterr().err, f"--out {tmp_path / 'f'} is a file, not a folder")


@pytest.mark.skipif(not available(), reason="no SMT backend installed")
def test_emit_smt2_to_standard_output_moves_the_report_to_stderr(capsys, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["distinguish", "sm80", "sm90", "--instr", "f16f32", "--domain", "lanes=2", "--timeout", "30"]
    assert main([*argv, "--emit-smt2", "-"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("; smtmma distinguish sm80 sm90") and "(check-sat)" in out
    assert err.startswith("sat: sm80 and sm90 differ") and "smt2: standard output" in err
    assert not (tmp_path / "-").exists()
    assert main([*argv, "--emit-smt2", "-", "--json"]) == 2
    one_line_error(capsys.readouterr().err, "--json prints the result on standard output, where --emit-smt2 -")
    assert main([*argv, "--emit-smt2", str(tmp_path / "no" / "x.smt2")]) == 2  # refused before the solver runs
    one_line_error(capsys.readouterr().err, f"--emit-smt2 {tmp_path / 'no' / 'x.smt2'}: no such directory")


# ---------------------------------------------------------------- whole files

def test_concurrent_writers_do_not_interleave(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    with output.open_output(path, "-o") as first, output.open_output(path, "-o") as second:
        for i in range(100):  # both write line by line, in turns, as two processes would
            first.write(f"first {i}\n")
            first.flush()
            second.write(f"second {i}\n")
            second.flush()
    assert path.read_text() == "".join(f"first {i}\n" for i in range(100))  # the last one renamed wins, whole
    assert os.listdir(tmp_path) == ["out.jsonl"]


def test_a_failed_write_leaves_the_old_file(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "D.npy"
    path.write_text("old")
    with pytest.raises(RuntimeError):
        with output.open_output(path, "-o") as fh:
            fh.write("half")
            raise RuntimeError("the work failed")
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left on device")))
    with pytest.raises(InputError, match=r"^-o .*D.npy: cannot write \(No space left on device\)$"):
        output.write_output(path, "new", "-o")
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["D.npy"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_a_full_disk_is_one_line(capsys, tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text((SUITES / "f16f16.jsonl").read_text())
    assert main(["run", "--device", "sim:sm90", str(src), "-o", "/dev/full"]) == 2
    one_line_error(capsys.readouterr().err, "-o /dev/full: cannot write (No space left on device)")


class Interrupted(SimDevice):
    """The simulator of sm90, interrupted (Ctrl-C) or failing on its ``stop``-th batch."""

    def __init__(self, stop: int, error: BaseException) -> None:
        super().__init__("sim:sm90", "sm90")
        self.calls, self.stop, self.error = 0, stop, error

    def run(self, vectors: Sequence[TestVector]) -> list[int]:
        self.calls += 1
        if self.calls == self.stop:
            raise self.error
        return super().run(vectors)


def test_run_keeps_the_lines_done_when_interrupted(capsys, monkeypatch, tmp_path: Path) -> None:
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text((SUITES / "f16f16.jsonl").read_text() * 3)
    out.write_text("an older recording\n")
    monkeypatch.setattr(device_options, "open_device", lambda name: Interrupted(2, KeyboardInterrupt()))
    assert main(["run", "--device", "sim:sm90", str(src), "-o", str(out), "--batch", "2"]) == 130
    assert len(out.read_text().splitlines()) == 2 and "older" not in out.read_text()
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "out.jsonl"]  # no temporary file left behind
    out.write_text("an older recording\n")
    monkeypatch.setattr(device_options, "open_device", lambda name: Interrupted(1, DeviceError("cuda: launch failed")))
    assert main(["run", "--device", "sim:sm90", str(src), "-o", str(out), "--batch", "2"]) == 2
    assert out.read_text() == "an older recording\n"  # nothing done: the old file stays
    assert "0 of 6 lines recorded" in capsys.readouterr().err


# ---------------------------------------------------------------- too large for memory

def test_a_d_too_large_for_memory_is_refused_before_the_work(capsys, tmp_path: Path) -> None:
    a, b = tmp_path / "A.npy", tmp_path / "B.npy"
    np.save(a, np.ones((2_000_000, 1), np.float16))
    np.save(b, np.ones((1, 2_000_000), np.float16))
    assert main(["matmul", "--arch", "sm90", "--instr", "f16f32", str(a), str(b), "-o", str(tmp_path / "D.npy")]) == 2
    one_line_error(capsys.readouterr().err, "D (2000000 x 2000000: A's rows x B's columns) needs")


def test_a_pool_too_large_for_memory_is_refused_before_the_work(capsys) -> None:
    assert main(["suite", "--instr", "f16f32", "--candidates", "sm80,sm90", "--pool", "1000000", "--k", "65536"]) == 2
    one_line_error(capsys.readouterr().err, "the pool (--pool 1000000 x --k 65536 lanes) needs")


def test_out_of_memory_anywhere_is_one_line(capsys, monkeypatch) -> None:
    from smtmma.cli import list_cmd

    def no_memory(args: object) -> int:
        raise MemoryError("Unable to allocate 48.8 GiB for an array with shape (100000, 65536)")

    monkeypatch.setattr(list_cmd, "_cmd_list", no_memory)  # the parser is built on each call: it takes this one
    assert main(["list"]) == 2
    one_line_error(capsys.readouterr().err, "out of memory: Unable to allocate 48.8 GiB")


# ---------------------------------------------------------------- the console

@pytest.mark.parametrize("encoding, errors", [("ascii", "strict"), ("latin-1", "strict"), ("ascii", "surrogateescape")],
                         ids=["PYTHONIOENCODING=ascii", "latin-1", "LC_ALL=C"])
@pytest.mark.parametrize("argv", [["validate", "--help"], ["identify", "--help"], ["report", "--help"]],
                         ids=lambda a: a[0])
def test_a_console_that_cannot_encode_a_character(monkeypatch, argv: list[str], encoding: str, errors: str) -> None:
    raw = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw, encoding=encoding, errors=errors))
    code = main(argv)
    sys.stdout.flush()
    assert code == 0 and b"usage: smtmma" in raw.getvalue()
    if argv[0] == "validate" and encoding == "ascii":
        assert b"(\\xa73.1.4)" in raw.getvalue()  # the section sign, escaped


def test_a_file_name_that_is_not_utf8_prints_as_its_bytes(monkeypatch) -> None:
    from smtmma.cli.output import install_console

    raw = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw, encoding="ascii", errors="surrogateescape"))
    install_console()
    print("\udcff.jsonl \u2192 ok")  # argv of a C locale holds the byte 0xff as U+DCFF
    sys.stdout.flush()
    assert raw.getvalue() == b"\xff.jsonl \\u2192 ok\n"


def test_warnings_are_one_line_without_the_source(capsys, monkeypatch, ab: tuple[str, str], tmp_path: Path) -> None:
    import smtmma.gemm
    from smtmma.native.kernels import NativeFallbackWarning

    real = smtmma.gemm.matmul

    def warns(*args: object, **kw: object) -> np.ndarray:
        warnings.warn("smtmma: compiled kernels unavailable (cc failed:\n  error: x);\nusing the NumPy simulator",
                      NativeFallbackWarning, stacklevel=2)
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(smtmma.gemm, "matmul", warns)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        assert main(["matmul", "--arch", "sm90", "--instr", "f16f32", *ab, "-o", str(tmp_path / "D.npy")]) == 0
    err = capsys.readouterr().err
    assert err == "smtmma: warning: compiled kernels unavailable (cc failed: error: x); using the NumPy simulator\n"
