"""The status line: shown only on a terminal, redrawn while a long step runs, erased before output."""

from __future__ import annotations

import io
import time

import pytest

from smtmma.cli.progress import Status


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_standing_message_is_redrawn_with_the_time_elapsed(monkeypatch) -> None:
    term = FakeTerminal()
    monkeypatch.setattr("sys.stderr", term)
    status = Status(delay=0.0, tick=0.05)
    status("solving with bitwuzla")
    time.sleep(0.5)  # a long solver call: nothing else writes
    assert term.getvalue().count("solving with bitwuzla") >= 4  # the ticker kept the line alive
    status.close()
    erased = len(term.getvalue())
    assert term.getvalue().endswith("\r\033[K")
    time.sleep(0.2)
    assert len(term.getvalue()) == erased  # a closed status draws nothing more
    status("next step")  # a status closed to print a line shows again
    time.sleep(0.2)
    status.close()
    assert "next step" in term.getvalue()[erased:]


@pytest.mark.parametrize("tty", [False, True])
def test_nothing_is_drawn_off_a_terminal_or_within_the_delay(monkeypatch, tty: bool) -> None:
    term = FakeTerminal() if tty else io.StringIO()
    monkeypatch.setattr("sys.stderr", term)
    with Status(delay=60.0 if tty else 0.0, tick=0.05) as status:
        status("working")
        time.sleep(0.2)
    assert term.getvalue() == ""


def test_a_standing_bar_is_redrawn_while_the_next_batch_is_drawn(monkeypatch) -> None:
    term = FakeTerminal()
    monkeypatch.setattr("sys.stderr", term)
    with Status(delay=0.0, tick=0.05) as status:
        status.bar(3, 10, ", 0 mismatched")
        time.sleep(0.5)  # a slow batch: nothing else writes
        assert term.getvalue().count("3/10 (30%") >= 4
        assert term.getvalue().rstrip("\u2026").endswith(", 0 mismatched")
