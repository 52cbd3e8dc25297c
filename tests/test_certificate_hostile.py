"""``prove --check`` on hostile or huge files: each is one error line, found quickly and in bounded memory (issue 33)."""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from smtmma.cli import main
from smtmma.proofs import certificate
from smtmma.proofs.certificate import CertificateError, parse_certificate
from smtmma.proofs.runner import read_text

ROOT = Path(__file__).resolve().parents[1]
HEAD = '; smtmma-certificate 2\n; meta: {"claim": "toy", "verdict": "holds"}\n(set-logic QF_BV)\n'
CHECK = "; expect: sat\n(check-sat)\n"


def _hostile(folder: Path) -> dict[str, str]:
    """Write the hostile files into ``folder``; file name -> what its error line says."""
    deep = 10**6
    files = {
        "push-huge.smt2": (HEAD + "(push 1000000000000)\n" + CHECK, "more than 1000 scopes"),
        "push-many.smt2": (HEAD + "(push 1)\n" * 1001 + CHECK, "push scopes nested deeper than 1000"),
        "deep.smt2": (HEAD + "(assert " + "(not " * deep + "true" + ")" * deep + ")\n" + CHECK,
                      "parentheses nested deeper than 10000"),
        "deep-meta.smt2": ('; smtmma-certificate 2\n; meta: ' + "[" * 10**5 + "]" * 10**5 + "\n" + CHECK,
                           "the meta line's JSON nests too deeply"),
        "empty-meta.smt2": ("; smtmma-certificate 2\n; meta: {}\n(set-logic QF_BV)\n" + CHECK,
                            "its meta line names no claim and no verdict (it is empty)"),
        "no-verdict.smt2": ('; smtmma-certificate 2\n; meta: {"claim": "toy"}\n' + CHECK, "its meta line names no verdict"),
        "pop.smt2": (HEAD + "(pop 1)\n" + CHECK, "(pop 1) without as many (push) before it"),
    }
    for name, (text, _) in files.items():
        (folder / name).write_text(text)
    expected = {name: message for name, (_, message) in files.items()}
    with gzip.open(folder / "bomb.smt2.gz", "wb", compresslevel=9) as gz:  # ~40 kB that expand to 40 MiB
        gz.write(HEAD.encode())
        for _ in range(40):
            gz.write(b" " * 2**20)
    expected["bomb.smt2.gz"] = "expands beyond 32 MiB"
    os.mkfifo(folder / "fifo.smt2")  # open() would block until a writer comes
    expected["fifo.smt2"] = "a FIFO, not a regular file"
    for name in ("zero.smt2", "zero.smt2.gz"):  # endless zeros behind a harmless name
        os.symlink("/dev/zero", folder / name)
        expected[name] = "a character device, not a regular file"
    (folder / "ok.smt2").write_text(HEAD + "(declare-const x (_ BitVec 4))\n" + CHECK)
    return expected


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"), reason="POSIX FIFOs and /dev/zero")
def test_hostile_certificates_are_one_error_line_each_quickly_and_in_bounded_memory(tmp_path: Path) -> None:
    expected = _hostile(tmp_path)
    t0 = time.monotonic()
    p = subprocess.Popen([sys.executable, "-m", "smtmma", "prove", "--check", str(tmp_path), "--timeout", "20"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    _, status, usage = os.wait4(p.pid, 0)  # its peak memory; the output is a few lines: no pipe fills up
    seconds = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    out, err = p.communicate()
    out, err = out.decode(), err.decode()
    assert p.returncode == 2, err
    lines = out.splitlines()
    assert len(lines) == len(expected) + 2  # one per file, then the tally
    errors = {Path(m.group(1)).name: m.group(2) for m in (re.match(r"error    (\S+): (.*)", x) for x in lines) if m}
    assert set(errors) == set(expected)
    for name, message in expected.items():
        assert message in errors[name], (name, errors[name])
    assert [x.split()[:2] for x in lines if x.startswith("ok ")] == [["ok", "toy"]]  # the good file still ran
    assert lines[-1] == f"1/{len(expected) + 1} certificates re-checked (ok 1, mismatch 0, unknown 0, error {len(expected)})"
    assert err.count("\n") == 1 and "Traceback" not in err
    assert seconds < 30  # measured 2-4 s (the bomb is read up to 32 MiB, the deep term up to depth 10001)
    # KiB, the process and the solver processes it forked (they count its pages too): 85 MiB alone, 476 MiB once
    # inside a full CI run; a reader without caps would hold /dev/zero's endless zeros
    assert usage.ru_maxrss < 1024 * 1024, f"{usage.ru_maxrss} KiB"


@pytest.mark.parametrize("limit, value, text, message", [
    ("MAX_COMMANDS", 10, HEAD + "(assert true)\n" * 10 + CHECK, "more than 10 commands"),
    ("MAX_CHECKS", 2, HEAD + CHECK * 3, "more than 2 (check-sat) commands"),
    ("MAX_SOLVER_INPUT", 1000, HEAD + "(assert true)\n" * 30 + CHECK * 3, "over 1,000 bytes of assertions in all"),
    ("MAX_TEXT_BYTES", 100, HEAD + "(assert true)\n" * 10 + CHECK, "over 100 bytes of text"),
    ("MAX_NESTING", 2, HEAD + "(assert (not (not true)))\n" + CHECK, "nested deeper than 2"),
], ids=["commands", "checks", "solver-input", "text", "nesting"])
def test_every_bound_is_checked_before_a_solver_runs(monkeypatch: pytest.MonkeyPatch, limit: str, value: int, text: str,
                                                     message: str) -> None:
    parse_certificate(text)  # within the real bounds
    monkeypatch.setattr(certificate, limit, value)
    with pytest.raises(CertificateError, match=re.escape(message)):
        parse_certificate(text)


@pytest.mark.parametrize("cmd, message", [
    ("(push 99999999999999999999999999999999999999999999)", "more than 1000 scopes"),
    ("(push x)", "malformed '(push x)'"),
    ("(pop)", "(pop) without as many (push)"),
], ids=["huge-push", "malformed-push", "pop"])
def test_scopes_are_parsed_without_trusting_their_counts(cmd: str, message: str) -> None:
    with pytest.raises(CertificateError, match=re.escape(message)):
        parse_certificate(HEAD + cmd + "\n" + CHECK)


def test_read_text_stops_a_gzip_bomb_at_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "b.smt2.gz"
    path.write_bytes(gzip.compress(b" " * 10_001))
    assert read_text(str(path), limit=10_001) == " " * 10_001
    with pytest.raises(CertificateError, match="expands beyond"):
        read_text(str(path), limit=10_000)
    (tmp_path / "bad.smt2.gz").write_bytes(b"not gzip")
    with pytest.raises(CertificateError, match="cannot read .*bad.smt2.gz"):
        read_text(str(tmp_path / "bad.smt2.gz"))
    (tmp_path / "latin1.smt2").write_bytes(b"; caf\xe9\n")
    with pytest.raises(CertificateError, match="not UTF-8 text"):
        read_text(str(tmp_path / "latin1.smt2"))


def test_check_shows_the_running_tally(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from smtmma.cli import prove_cmd

    shown: list[str] = []

    class Recorder(prove_cmd.Status):  # what a terminal would show
        def __call__(self, message: str) -> None:
            shown.append(message)

    monkeypatch.setattr(prove_cmd, "Status", Recorder)
    (tmp_path / "a.smt2").write_text(HEAD + "(declare-const x (_ BitVec 4))\n" + CHECK)
    (tmp_path / "b.smt2").write_text("; smtmma-certificate 2\n; meta: {}\n" + CHECK)
    assert main(["prove", "--check", str(tmp_path)]) == 2
    a, b = str(tmp_path / "a.smt2"), str(tmp_path / "b.smt2")
    assert shown == [f"[1/2] {a}; ok 0, mismatch 0, unknown 0, error 0",
                     f"[1/2] {a}: check 1/1; ok 0, mismatch 0, unknown 0, error 0",
                     f"[2/2] {b}; ok 1, mismatch 0, unknown 0, error 0"]
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("ok       toy (holds): 1 checks") and out[1].startswith("error    ")
    assert out[2] == "1/2 certificates re-checked (ok 1, mismatch 0, unknown 0, error 1)"
