"""Solver backends behind one small interface: SMT-LIB2 text in, verdict and values out.

Every backend takes the same script (declarations, definitions,
assertions: what :class:`~smtmma.encodings.symbolic.SmtAlgebra` writes),
checks it with a timeout, and returns a :class:`SolverResult`: ``sat``
with the values of the named bit-vector constants, ``unsat``, or
``unknown`` with a reason.  Solvers are imported lazily; a backend is
*available* when its Python package imports.  Preference order: bitwuzla,
z3, cvc5 (bitwuzla is the fastest on these pure bit-vector queries).
Every check runs in a child process, so that Ctrl-C, SIGTERM and a
command's time limit end it at once (on Linux the child also dies with its
parent, even a parent killed with SIGKILL); ``portfolio`` races the
available backends in separate processes and keeps the first definite answer.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import importlib
import importlib.util
import multiprocessing as mp
import os
import queue as queue_mod
import signal
import sys
import time
from dataclasses import dataclass, field, replace
from typing import Callable, Iterator, Optional, Sequence

from ..deadline import remaining
from ..errors import SmtmmaError, UnknownNameError, choices, unknown_name

__all__ = ["SolverResult", "BACKENDS", "available", "default_backend", "solve", "NoBackendError", "die_with_parent",
           "signals_deferred"]


class NoBackendError(SmtmmaError, RuntimeError):
    """No SMT backend is installed (or the one asked for is not)."""


@dataclass(frozen=True)
class SolverResult:
    """A solver's answer: ``verdict`` is "sat", "unsat" or "unknown"; ``values`` maps constant names to unsigned ints."""

    verdict: str
    solver: str
    seconds: float
    values: dict[str, int] = field(default_factory=dict)
    reason: str = ""


Want = Sequence[str]  # names of bit-vector constants whose values a sat answer reports


def _run_bitwuzla(script: str, want: Want, timeout: float, seed: int, proof: bool = False) -> SolverResult:
    """Two phases: propagation-based local search (finds witnesses of these queries in a fraction of a
    second, cannot prove unsat) for a short budget, then bit-blasting (complete) for the rest.
    ``proof``: the caller expects unsat, so only the complete phase runs."""
    import bitwuzla as bw

    t0 = time.perf_counter()
    quick = min(2.0, timeout / 4) if timeout else 2.0
    phases = [("preprop", quick), ("bitblast", (timeout - quick) if timeout else 0)]
    if proof:
        phases = [("bitblast", timeout)]
    for engine, limit in phases:
        tm = bw.TermManager()
        opts = bw.Options()
        opts.set(bw.Option.PRODUCE_MODELS, True)
        opts.set(bw.Option.SEED, seed)
        opts.set(bw.Option.BV_SOLVER, engine)
        if limit:
            opts.set(bw.Option.TIME_LIMIT_PER, max(1, int(limit * 1000)))
        parser = bw.Parser(tm, opts)
        parser.parse(script, True, False)
        solver = parser.bitwuzla()
        res = solver.check_sat()
        if res == bw.Result.SAT:
            terms = {str(t): t for t in parser.get_declared_funs()}
            values = {n: int(solver.get_value(terms[n]).value(10)) for n in want}
            return SolverResult("sat", "bitwuzla", time.perf_counter() - t0, values)
        if res == bw.Result.UNSAT:
            return SolverResult("unsat", "bitwuzla", time.perf_counter() - t0)
    dt = time.perf_counter() - t0
    return SolverResult("unknown", "bitwuzla", dt, reason=f"timeout after {timeout:g} s" if timeout else "solver gave up")


def _run_z3(script: str, want: Want, timeout: float, seed: int, proof: bool = False) -> SolverResult:
    import z3

    t0 = time.perf_counter()
    s = z3.SolverFor("QF_BV")
    s.set("random_seed", seed)
    if timeout:
        s.set("timeout", int(timeout * 1000))
    s.from_string(script)
    res = s.check()
    dt = time.perf_counter() - t0
    if res == z3.sat:
        m = s.model()
        by_name = {d.name(): d for d in m.decls()}
        values = {n: (m[by_name[n]].as_long() if n in by_name else 0) for n in want}
        return SolverResult("sat", "z3", dt, values)
    if res == z3.unsat:
        return SolverResult("unsat", "z3", dt)
    return SolverResult("unknown", "z3", dt, reason=s.reason_unknown() or "unknown")


def _run_cvc5(script: str, want: Want, timeout: float, seed: int, proof: bool = False) -> SolverResult:
    import cvc5

    t0 = time.perf_counter()
    s = cvc5.Solver()
    s.setOption("produce-models", "true")
    s.setOption("bitblast", "eager")  # without it cvc5 times out even on easy sat queries (issue 3)
    s.setOption("seed", str(seed))
    if timeout:
        s.setOption("tlimit-per", str(int(timeout * 1000)))
    ip = cvc5.InputParser(s)
    ip.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, script, "smtmma")
    sm = ip.getSymbolManager()
    while True:
        cmd = ip.nextCommand()
        if cmd.isNull():
            break
        cmd.invoke(s, sm)
    res = s.checkSat()
    dt = time.perf_counter() - t0
    if res.isSat():
        terms = {str(t): t for t in sm.getDeclaredTerms()}
        values = {n: int(s.getValue(terms[n]).getBitVectorValue(10)) for n in want}
        return SolverResult("sat", "cvc5", dt, values)
    if res.isUnsat():
        return SolverResult("unsat", "cvc5", dt)
    return SolverResult("unknown", "cvc5", dt, reason=str(res.getUnknownExplanation()))


#: name -> (python module, runner), in preference order.
#: A runner: (script, want, timeout in s, seed, proof) -> SolverResult; ``proof``: unsat is expected (a hint only).
BACKENDS: dict[str, tuple[str, Callable[[str, Want, float, int, bool], SolverResult]]] = {
    "bitwuzla": ("bitwuzla", _run_bitwuzla),
    "z3": ("z3", _run_z3),
    "cvc5": ("cvc5", _run_cvc5),
}


def available() -> list[str]:
    """Names of the installed backends, preferred first."""
    return [name for name, (module, _) in BACKENDS.items() if importlib.util.find_spec(module) is not None]


def default_backend() -> str:
    """The preferred installed backend; NoBackendError when none is."""
    have = available()
    if not have:
        raise NoBackendError("no SMT backend is installed; install one: pip install 'smtmma[bitwuzla]' (or [z3], [cvc5])")
    return have[0]


_PR_SET_PDEATHSIG = 1  # prctl option of <linux/prctl.h>
_DEFERRED = frozenset(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold Ctrl-C, SIGTERM and SIGHUP in this thread while it forks; one that arrives meanwhile is handled just after.

    A Python signal handler that runs inside ``os.fork``'s after-fork
    callbacks (logging registers some) cannot raise: its exception is
    printed and dropped, and the command would go on waiting for its solver.
    Children start with these signals held; :func:`die_with_parent` releases them.
    """
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _DEFERRED)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def die_with_parent(parent: int) -> None:
    """In a child process: let the kernel SIGKILL it when its parent ``parent`` (a pid) ends, however it ends.

    Linux only (``prctl(PR_SET_PDEATHSIG)``).  If the parent is already gone
    (it died between the fork and this call), the child exits at once.
    SIGTERM and SIGHUP get their default action back where the parent had a
    Python handler (inherited through ``fork``, it would only raise here),
    and the signals :func:`signals_deferred` held are released: set the
    child's own SIGINT disposition before calling this.
    """
    for sig in _DEFERRED - {getattr(signal, "SIGINT", None)}:
        if callable(signal.getsignal(sig)):
            signal.signal(sig, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _DEFERRED)
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - an unusual libc: the parent still kills its children
        return
    if os.getppid() != parent:
        os._exit(1)


def _child(name: str, script: str, want: Want, timeout: float, seed: int, proof: bool,
           queue: "mp.Queue[SolverResult]", parent: int, memory: Optional[int]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it kills this process
    die_with_parent(parent)
    if memory is not None:
        _limit_memory(memory)
    try:
        queue.put(BACKENDS[name][1](script, want, timeout, seed, proof))
    except MemoryError:
        queue.put(SolverResult("unknown", name, 0.0, reason=f"out of memory (limit {memory // 2**20} MiB)"
                               if memory else "out of memory"))
    except Exception as e:  # a crash in one racer must not stop the race
        queue.put(SolverResult("unknown", name, 0.0, reason=f"{type(e).__name__}: {e}"))


def _limit_memory(extra: int) -> None:
    """Cap this process's address space at its present size plus ``extra`` bytes (POSIX; elsewhere nothing)."""
    try:
        import resource

        with open("/proc/self/statm", encoding="ascii") as fh:
            size = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = size + extra if hard == resource.RLIM_INFINITY else min(hard, size + extra)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (ImportError, OSError, ValueError):  # pragma: no cover - no /proc or no rlimits: the time limit still applies
        pass


def _race(script: str, want: Want, timeout: float, seed: int, names: Sequence[str], proof: bool = False,
          memory: Optional[int] = None) -> SolverResult:
    """Run the backends ``names`` in child processes; the first definite answer wins.

    The parent only waits, so Ctrl-C, SIGTERM (turned into an exception by
    the CLI) and a command's time limit (:mod:`smtmma.deadline`) reach it at
    once; every child is killed on the way out, whatever ends the wait.  A
    child that dies without answering (a crash, its memory cap) is noticed
    within 0.2 s.  One name: that backend, in a process of its own;
    several: a portfolio.
    """
    t0 = time.perf_counter()
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    if ctx.get_start_method() == "fork":
        for n in names:  # loaded once here, every forked child starts with the solver ready
            module = importlib.import_module(BACKENDS[n][0])
            if n == "z3":
                module.main_ctx()  # z3's global context costs ~40 ms to make; a child inherits it
    queue: "mp.Queue[SolverResult]" = ctx.Queue()
    procs = [ctx.Process(target=_child, args=(n, script, want, timeout, seed, proof, queue, os.getpid(), memory),
                         daemon=True) for n in names]
    started: list[mp.process.BaseProcess] = []
    answers: list[SolverResult] = []
    died: list[str] = []
    many = len(names) > 1
    try:
        with signals_deferred():
            for p in procs:
                p.start()
                started.append(p)
        deadline = t0 + (timeout or 1e9) + 5
        while len(answers) < len(procs):
            left = deadline - time.perf_counter()
            if left <= 0:
                break
            try:
                r = queue.get(timeout=min(0.2, max(0.01, left)))
            except queue_mod.Empty:
                if any(p.exitcode is None for p in procs):
                    continue
                try:  # every racer has ended: what one sent was in the pipe before it exited
                    r = queue.get(timeout=0.05)
                except queue_mod.Empty:
                    answered = {a.solver for a in answers}
                    died = [f"{n}: the solver process died ({_how(p.exitcode)})" for n, p in zip(names, procs)
                            if n not in answered]
                    break
            answers.append(r)
            if r.verdict in ("sat", "unsat"):
                label = f"portfolio:{r.solver}" if many else r.solver
                return SolverResult(r.verdict, label, time.perf_counter() - t0, r.values, r.reason)
    finally:
        for p in started:
            if p.is_alive():
                p.kill()
        for p in started:
            p.join(timeout=1)
        queue.close()
    if not many and answers:
        return replace(answers[0], seconds=time.perf_counter() - t0)
    if not many and died:
        return SolverResult("unknown", names[0], time.perf_counter() - t0, reason=died[0].split(": ", 1)[1])
    reasons = "; ".join([*(f"{r.solver}: {r.reason}" for r in answers), *died]) or f"timeout after {timeout:g} s"
    return SolverResult("unknown", "portfolio" if many else names[0], time.perf_counter() - t0, reason=reasons)


def _how(exitcode: Optional[int]) -> str:
    """How a process ended, from its exit code: "signal 11 (SIGSEGV)", "exit status 1"."""
    if exitcode is None:
        return "still running"
    if exitcode < 0:
        try:
            return f"signal {-exitcode} ({signal.Signals(-exitcode).name})"
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit status {exitcode}"


def solve(script: str, want: Want = (), *, solver: Optional[str] = None, timeout: float = 60.0, seed: int = 0,
          proof: bool = False, memory: Optional[int] = None) -> SolverResult:
    """Check ``script`` (SMT-LIB2 without ``check-sat``) with ``solver`` (default: the preferred installed one).

    ``want``: names of declared bit-vector constants whose values a sat
    answer returns.  ``solver="portfolio"`` races every installed backend.
    The solver runs in a child process (killed on Ctrl-C or when the
    command's time limit runs out); ``timeout`` (seconds) is cut to what is
    left of that limit.  ``proof``: the caller expects unsat (a lemma, a
    property it proves); a hint that skips search that can only find
    witnesses (bitwuzla's local search), never a change of the verdict.
    ``memory``: bytes the solver process may allocate beyond what it starts
    with (POSIX address-space limit; None: no cap); over it the answer is
    unknown.
    """
    have = available()
    if solver in (None, "", "default"):
        solver = default_backend()
    left = remaining()
    if left is not None:
        timeout = min(timeout, left) if timeout else left
    if solver == "portfolio":
        if not have:
            default_backend()
        return _race(script, want, timeout, seed, have, proof, memory)
    if solver not in BACKENDS:
        raise UnknownNameError(unknown_name("solver", solver, [*BACKENDS, "portfolio"]))
    if solver not in have:
        raise NoBackendError(f"solver {solver} is not installed (installed: {choices(have) or 'none'}); pip install 'smtmma[{solver}]'")
    return _race(script, want, timeout, seed, [solver], proof, memory)
