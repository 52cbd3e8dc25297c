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


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.skipif(not hasattr(signal, "SIGINT") or os.name != "posix", reason="POSIX process groups")
@pytest.mark.parametrize("solver", [*available(), "portfolio"])
def test_ctrl_c_during_a_solve_ends_the_command_and_its_solver_processes(solver: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.Popen([sys.executable, "-m", "smtmma", *HARD, "--solver", solver], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    time.sleep(3)  # well inside the solver call
    assert p.poll() is None, p.communicate()
    os.killpg(p.pid, signal.SIGINT)  # what a terminal sends: the whole process group
    out, err = p.communicate(timeout=20)  # ends promptly, not when the 300 s run out
    assert p.returncode == 130, err
    assert err == "smtmma: interrupted\n"
    time.sleep(0.2)
    left = subprocess.run(["pgrep", "-g", str(p.pid)], capture_output=True, text=True).stdout.split()
    assert left == []  # no orphaned solver process


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
