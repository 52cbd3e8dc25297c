"""Ctrl-C, time limits and internal errors: every way a command can end early ends with one line and its own status."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from smtmma.cli import EXIT_INTERNAL, EXIT_TIMEOUT, main
from smtmma.deadline import TimeLimitError, remaining, time_limit
from smtmma.queries.backends import available

ROOT = Path(__file__).resolve().parents[1]
# Five models no pool row splits on this domain: the solver works for a minute or more.
HARD = ["distinguish", "sm80", "sm90", "gfx908", "gfx90a", "gfx942", "--instr", "bf16f32", "--domain", "exp=-8:8,lanes=4",
        "--timeout", "300"]


def _spawn(argv: list[str]) -> subprocess.Popen:
    """``python -m smtmma ARGV`` in a session of its own, with SIGINT's default action as a foreground command has
    it (a shell starts a background job -- a CI run started with ``&`` -- with SIGINT ignored, which Python and
    smtmma then rightly leave ignored)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-m", "smtmma", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _kill_session(p: subprocess.Popen) -> None:
    """Kill what is left of ``p``'s session (a failed test leaves no solver running for minutes) and reap ``p``."""
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.communicate()


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.skipif(not hasattr(signal, "SIGINT") or os.name != "posix", reason="POSIX process groups")
@pytest.mark.parametrize("solver", [*available(), "portfolio"])
def test_ctrl_c_during_a_solve_ends_the_command_and_its_solver_processes(solver: str) -> None:
    p = _spawn([*HARD, "--solver", solver])
    try:
        time.sleep(3)  # well inside the solver call
        assert p.poll() is None, p.communicate()
        os.killpg(p.pid, signal.SIGINT)  # what a terminal sends: the whole process group
        out, err = p.communicate(timeout=20)  # ends promptly, not when the 300 s run out
        assert p.returncode == 130, err
        assert err == "smtmma: interrupted\n"
        time.sleep(0.2)
        left = subprocess.run(["pgrep", "-g", str(p.pid)], capture_output=True, text=True).stdout.split()
        assert left == []  # no orphaned solver process
    finally:
        _kill_session(p)


# A certificate whose one check keeps every backend busy for minutes: the prime 2^48 - 59 has no factors (the
# 32-bit version of this query takes bitwuzla 13 s, z3 and cvc5 longer).
BUSY = """; smtmma-certificate 2
; meta: {"claim": "busy", "verdict": "holds"}
(set-logic QF_BV)
(declare-const x (_ BitVec 48))
(declare-const y (_ BitVec 48))
(assert (and (= (bvmul ((_ zero_extend 48) x) ((_ zero_extend 48) y)) (_ bv281474976710597 96))
             (bvugt x (_ bv1 48)) (bvugt y (_ bv1 48))))
; expect: unsat
(check-sat)
"""
QUICK = """; smtmma-certificate 2
; meta: {"claim": "quick", "verdict": "holds"}
(set-logic QF_BV)
(declare-const x (_ BitVec 4))
(assert (= (bvadd x #x1) x))
; expect: unsat
(check-sat)
"""
LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _session(sid: int) -> list[tuple[int, bytes]]:
    """(pid, command line) of the live processes of session ``sid`` (zombies left out)."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            with open(f"/proc/{d}/cmdline", "rb") as fh:
                cmdline = fh.read()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] not in (b"Z", b"X"):
            found.append((int(d), cmdline))
    return found


def _forked(pid: int) -> list[int]:
    """The processes ``pid`` forked (solver processes, --jobs workers): its session's others with its command line."""
    procs = dict(_session(pid))
    return [q for q, cmd in procs.items() if q != pid and cmd == procs.get(pid)]


def _until(cond, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


def _signal_alone(argv: list[str], sig: signal.Signals, busy: int = 1, before=None) -> tuple[int, str, str, float]:
    """Start smtmma with ``argv`` in a session of its own, wait until it has forked ``busy`` processes, send ``sig``
    to it alone (not its group); its status, stdout, stderr, seconds from the signal to its exit.  Asserts that no
    process of its session outlives it (and kills any that does)."""
    p = _spawn(argv)
    try:
        if before is not None:
            before(p)
        assert _until(lambda: len(_forked(p.pid)) >= busy or p.poll() is not None, 30)
        assert p.poll() is None, p.communicate()
        t0 = time.monotonic()
        p.send_signal(sig)
        out, err = p.communicate(timeout=20)  # ends promptly, not when the solver's timeout runs out
        seconds = time.monotonic() - t0
        assert _until(lambda: not _session(p.pid), 3), _session(p.pid)  # no orphaned solver or worker
        return p.returncode, out, err, seconds
    finally:
        _kill_session(p)


@LINUX
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("solver", [*available(), "portfolio"])
def test_a_signal_to_the_process_alone_ends_it_and_its_solver_processes(tmp_path: Path, solver: str, sig: str) -> None:
    # issue 33: SIGTERM killed smtmma but left its forked solver running until its timeout
    path = tmp_path / "busy.smt2"
    path.write_text(BUSY)
    busy = len(available()) if solver == "portfolio" else 1
    code, out, err, seconds = _signal_alone(["prove", "--check", str(path), "--solver", solver, "--timeout", "60"],
                                            getattr(signal, sig), busy)
    assert (code, err) == ((130, "smtmma: interrupted\n") if sig == "SIGINT" else (143, "smtmma: terminated\n"))
    assert seconds < 5


@LINUX
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_ends_prove_jobs_without_waiting_for_the_running_claims(sig: str) -> None:
    # issue 33: Ctrl-C waited for the running claims (ProcessPoolExecutor's shutdown), here 30 s and more
    argv = ["prove", "error-bound-tight-sm90-f16f32", "error-bound-tight-sm70-f16f32", "--jobs", "2"]
    code, out, err, seconds = _signal_alone(argv, getattr(signal, sig), busy=3)  # 2 workers, a solver
    assert (code, err) == ((130, "smtmma: interrupted\n") if sig == "SIGINT" else (143, "smtmma: terminated\n"))
    assert seconds < 5


@LINUX
def test_ctrl_c_during_check_prints_the_certificates_already_checked(tmp_path: Path) -> None:
    for name in ("a", "b", "d"):
        (tmp_path / f"{name}.smt2").write_text(QUICK.replace("quick", f"quick-{name}"))
    (tmp_path / "c.smt2").write_text(BUSY)
    lines: list[str] = []

    def two_lines(p: subprocess.Popen) -> None:
        lines.extend(p.stdout.readline() for _ in range(2))  # printed as each certificate finishes

    code, out, err, seconds = _signal_alone(["prove", "--check", str(tmp_path), "--timeout", "60"], signal.SIGINT,
                                            before=two_lines)
    assert code == 130 and err == "smtmma: interrupted\n" and seconds < 5
    assert [line.split()[:2] for line in lines] == [["ok", "quick-a"], ["ok", "quick-b"]]
    assert out == (f"2/4 certificates re-checked (ok 2, mismatch 0, unknown 0, error 0; interrupted during "
                   f"{tmp_path / 'c.smt2'}, 1 not started)\n")


def test_timeout_bounds_building_the_formula_too(capsys) -> None:
    # K = 65536 (the largest --k) takes minutes to build; --timeout 2 ends the command after 2 s with status 3.
    code, out, err = run(capsys, "distinguish", "sm80", "sm90", "--instr", "f16f32", "--k", "65536", "--timeout", "2")
    assert code == EXIT_TIMEOUT and out == ""
    assert err == "smtmma: error: no answer: --timeout (2 s) ran out before an answer\n"


def test_time_limit_bounds_a_suite(capsys, tmp_path) -> None:
    # --pool 0: every pair goes to the solver, hundreds of calls, far more than a second.
    code, out, err = run(capsys, "suite", "--instr", "f16f32", "--grid", "t-fdpa:L=4,8,16,32;F=20..30", "--pool", "0", "--time-limit", "1",
                         "-o", str(tmp_path / "s.jsonl"))
    assert code == EXIT_TIMEOUT, err
    assert err == "smtmma: error: no answer: --time-limit (1 s) ran out before an answer\n"


def test_time_limits_nest_and_are_not_swallowed_by_input_error_handlers() -> None:
    from smtmma.errors import SmtmmaError

    assert not issubclass(TimeLimitError, Exception)  # `except SmtmmaError` / `except Exception` cannot catch it
    with time_limit(30):
        outer = remaining()
        with pytest.raises(TimeLimitError):
            with time_limit(0.2, "inner", grace=0.1):
                try:
                    while True:
                        pass
                except SmtmmaError:  # pragma: no cover - must not catch it
                    pytest.fail("a time limit was caught as an input error")
        assert outer is not None and 25 < remaining() <= 30  # the outer limit is still armed
    assert remaining() is None


def test_an_internal_error_has_its_own_status_and_a_file_with_the_details(capsys, monkeypatch) -> None:
    def boom(args: object) -> int:
        raise ZeroDivisionError("division by zero in a place that has no business dividing")

    import smtmma.cli as cli

    parser = cli.build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda: _with_func(parser, "list", boom))
    code, out, err = run(capsys, "list")
    assert code == EXIT_INTERNAL == 70
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("smtmma: error: internal error (a bug in smtmma, please report it): ZeroDivisionError: division by zero")
    path = err.split("details in ", 1)[1].split(" (or rerun")[0]
    text = Path(path).read_text()
    assert "Traceback (most recent call last)" in text and "ZeroDivisionError" in text
    os.unlink(path)
    code, out, err = run(capsys, "--debug", "list")
    assert code == 70 and "Traceback (most recent call last)" in err and "ZeroDivisionError" in err


def _with_func(parser, command: str, func):
    sub = next(a for a in parser._actions if a.dest == "command")
    sub.choices[command].set_defaults(func=func)
    return parser
