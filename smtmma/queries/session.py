"""An incremental solver session: definitions sent once, many scoped checks on them.

A lemma chain checks dozens of facts about one formula, each under a few
earlier facts.  Run as separate scripts, every check makes the solver parse
the formula and bit-blast the terms it touches again (a running-sum fact of
an L = 32 sum re-blasts every summand before it).  A :class:`Session` keeps
one solver in a child process: :meth:`Session.add` sends new declarations,
definitions and top-level assertions, :meth:`Session.check` asks one
question in a ``push``/``pop`` scope (its premises and negated goal), so the
solver's encoding of a term is made once and reused (a lemma chain of an
L = 16 T-FDPA's symmetry: 53 facts in 3.5 s instead of 13 s).  A question
has the answer a script of the same assertions would give; only bitwuzla
has a session (:func:`open_session` returns None for the others: their
callers keep separate scripts).

The child dies with its parent, ignores Ctrl-C (the parent handles it),
and a check that overruns its limit by 5 s ends the session: the answer is
``unknown`` and the caller goes on with separate scripts.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
import weakref
from typing import Any, Optional

from .backends import SolverResult, available, default_backend, die_with_parent, signals_deferred

__all__ = ["Session", "open_session"]

_GRACE = 5.0  # seconds a check may overrun its limit before the session is ended


def _serve(conn: Any, seed: int, parent: int) -> None:
    """The child: one bitwuzla parser and solver; ("add", text) parses at top level, ("check", text, seconds)
    answers in a scope, ("close",) ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent)
    import bitwuzla as bw

    opts = bw.Options()
    opts.set(bw.Option.SEED, seed)
    opts.set(bw.Option.BV_SOLVER, "bitblast")  # the questions expect unsat: local search cannot answer them
    parser = bw.Parser(bw.TermManager(), opts)
    parser.parse("(set-logic QF_BV)", True, False)
    solver = parser.bitwuzla()
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg[0] == "close":
            return
        t0 = time.perf_counter()
        try:
            if msg[0] == "add":
                parser.parse(msg[1], True, False)
                conn.send(True)
                continue
            _, text, seconds = msg
            solver.push(1)
            try:
                parser.parse(text, True, False)
                end = time.perf_counter() + seconds
                solver.configure_terminator(lambda: time.perf_counter() > end)
                res = solver.check_sat()
            finally:
                solver.pop(1)
            verdict = {bw.Result.SAT: "sat", bw.Result.UNSAT: "unsat"}.get(res, "unknown")
            reason = "" if verdict != "unknown" else f"timeout after {seconds:g} s"
            conn.send(SolverResult(verdict, "bitwuzla", time.perf_counter() - t0, reason=reason))
        except Exception as e:  # a parse error or a crash in the solver: an answer of its own
            conn.send(SolverResult("unknown", "bitwuzla", time.perf_counter() - t0, reason=f"{type(e).__name__}: {e}"))


def _end(conn: Any, proc: Any) -> None:
    """Close a session's pipe and end its child (at :meth:`Session.close`, or when the session is collected)."""
    try:
        conn.send(("close",))
    except (OSError, EOFError, ValueError):
        pass
    proc.join(timeout=1)
    if proc.is_alive():
        proc.kill()
        proc.join(timeout=1)
    conn.close()


class Session:
    """One solver in a child process, kept across checks; :attr:`alive` is False once it failed or was closed."""

    def __init__(self, seed: int = 0) -> None:
        ctx = mp.get_context("fork")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child, seed, os.getpid()), daemon=True)
        with signals_deferred():
            self._proc.start()
        child.close()
        self.alive = True
        self._end = weakref.finalize(self, _end, self._conn, self._proc)  # runs once: at close() or collection

    def _ask(self, msg: tuple, seconds: float) -> Any:
        """Send ``msg``, wait at most ``seconds`` (+ grace) for the reply; None (and the session ends) when none came."""
        try:
            self._conn.send(msg)
            if self._conn.poll(seconds + _GRACE):
                return self._conn.recv()
        except (OSError, EOFError):
            pass
        self.close()
        return None

    def add(self, lines: list[str]) -> bool:
        """Parse ``lines`` (declarations, definitions, assertions) at top level, in every later check; False (and the
        session ends: the solver may hold part of the text) when they were refused or the session had ended."""
        if not self.alive:
            return False
        if not lines:
            return True
        if self._ask(("add", "\n".join(lines)), 600.0) is True:
            return True
        self.close()
        return False

    def check(self, lines: list[str], seconds: float) -> SolverResult:
        """Assert ``lines`` in a scope of their own and check: unsat, sat (no values) or unknown; the scope is
        popped after."""
        t0 = time.perf_counter()
        if not self.alive:
            return SolverResult("unknown", "bitwuzla", 0.0, reason="the solver session ended")
        got = self._ask(("check", "\n".join(lines), seconds), seconds)
        if got is None:
            return SolverResult("unknown", "bitwuzla", time.perf_counter() - t0,
                                reason=f"timeout after {seconds:g} s (the solver session ended)")
        return got

    def close(self) -> None:
        """End the child (idempotent)."""
        if not self.alive:
            return
        self.alive = False
        self._end()


def open_session(solver: Optional[str], seed: int = 0) -> Optional[Session]:
    """A session for ``solver`` (None/"default": the preferred backend), or None where it has none (z3, cvc5, a
    portfolio) or fork is not available: the caller then checks separate scripts."""
    if solver in (None, "", "default"):
        solver = default_backend()
    if solver != "bitwuzla" or "bitwuzla" not in available() or "fork" not in mp.get_all_start_methods():
        return None
    return Session(seed)
