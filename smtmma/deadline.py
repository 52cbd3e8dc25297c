"""A time limit for a whole command: formula building, solver calls and everything between.

:func:`time_limit` arms a real-time timer in the main thread; when it
expires, :class:`TimeLimitError` is raised wherever the main thread is
(Python code, or waiting for a solver's process, which is then killed).
:func:`remaining` tells solver calls how much of the limit is left, so each
call's own timeout never runs past it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from typing import Iterator, Optional

__all__ = ["TimeLimitError", "time_limit", "remaining"]


class TimeLimitError(BaseException):
    """The command's time limit ran out before it had an answer.

    Like ``KeyboardInterrupt`` it arrives asynchronously, anywhere in the
    main thread, so it is not an ``Exception``: handlers of input errors
    (``except SmtmmaError``) must not swallow it.
    """


_deadline: list[float] = []  # perf_counter() deadlines of the active limits, innermost last


def remaining() -> Optional[float]:
    """Seconds left before the innermost active time limit (at least 0.01), or None when none is active."""
    if not _deadline:
        return None
    return max(0.01, min(_deadline) - time.perf_counter())


@contextlib.contextmanager
def time_limit(seconds: Optional[float], what: str = "the time limit", *, grace: float = 1.0) -> Iterator[None]:
    """Raise :class:`TimeLimitError` (naming ``what``) if the block runs longer than ``seconds`` + ``grace``; None: no limit.

    Solver calls see ``seconds`` through :func:`remaining` and end by then
    with an ordinary "unknown" answer; the timer, ``grace`` seconds later,
    stops whatever else overran (building a huge formula).  It works in the
    main thread of platforms with ``setitimer`` (POSIX); elsewhere only the
    solver calls are bounded.
    """
    if seconds is None:
        yield
        return
    start = time.perf_counter()
    end = start + seconds
    armed = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    old_handler = None
    old_timer = (0.0, 0.0)

    def expire(signum: int, frame: object) -> None:
        raise TimeLimitError(f"{what} ({seconds:g} s) ran out before an answer")

    if armed:
        old_handler = signal.signal(signal.SIGALRM, expire)
        old_timer = signal.setitimer(signal.ITIMER_REAL, max(seconds + grace, 0.001))
    _deadline.append(end)
    try:
        yield
    finally:
        _deadline.remove(end)
        if armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old_handler)
            if old_timer[0]:  # an outer limit: re-arm it with what is left of it
                signal.setitimer(signal.ITIMER_REAL, max(0.001, old_timer[0] - (time.perf_counter() - start)))
