"""A one-line status or progress bar on stderr, shown only when stderr is a terminal (never on stdout)."""

from __future__ import annotations

import sys
import threading
import time
from typing import Callable, Optional


class Status:
    """Rewrites one line of stderr: messages (``status("solving")``) or a bar (``status.bar(done, total)``).

    Silent when stderr is not a terminal, or for runs shorter than ``delay``
    seconds (nothing flickers for a fast command).  While a message or a bar
    stands, a ticker redraws it every ``tick`` seconds with the time elapsed,
    so a long step (a solver call, a big simulation, drawing the next batch
    of a bar) never leaves the terminal silent.
    """

    def __init__(self, enabled: Optional[bool] = None, delay: float = 0.5, tick: float = 1.0) -> None:
        if enabled is None:
            try:
                enabled = sys.stderr.isatty()
            except (AttributeError, ValueError):
                enabled = False
        self.enabled = enabled
        self.t0 = time.perf_counter()
        self.delay = delay
        self.tick = tick
        self.shown = False
        self._render: Optional[Callable[[], str]] = None  # what the ticker redraws (None: nothing stands)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: Optional[threading.Thread] = None

    def _show(self, text: str, ticker: Optional[threading.Event] = None) -> None:
        if not self.enabled or time.perf_counter() - self.t0 < self.delay:
            return
        with self._lock:
            if ticker is not None and (ticker.is_set() or ticker is not self._stop):
                return  # a ticker that close() stopped draws nothing more
            print(f"\r\033[K{text}", end="", file=sys.stderr, flush=True)
            self.shown = True

    def _text(self, message: str) -> str:
        return f"{message} ({time.perf_counter() - self.t0:.0f} s)\u2026"

    def _run_ticker(self, stop: threading.Event) -> None:
        while not stop.wait(self.tick):
            render = self._render
            if render is not None:
                self._show(render(), stop)

    def __call__(self, message: str) -> None:
        """Show ``message`` (with the time elapsed), redrawn every ``tick`` seconds until the next message."""
        self._render = lambda: self._text(message)
        self._show(self._render())
        self._start_ticker()

    def _start_ticker(self) -> None:
        if self.enabled and self._ticker is None:
            self._ticker = threading.Thread(target=self._run_ticker, args=(self._stop,), name="smtmma-status", daemon=True)
            self._ticker.start()

    def bar(self, done: int, total: int, extra: str = "") -> None:
        """Show a bar of ``done`` out of ``total``, the rate, the time elapsed (s) and ``extra``; redrawn every
        ``tick`` seconds until the next call."""
        frac = done / total if total else 1.0
        width = 30
        fill = int(frac * width)

        def render() -> str:
            dt = time.perf_counter() - self.t0
            rate = f", {done / dt:,.0f}/s" if dt > 0 else ""
            return f"[{'#' * fill}{'.' * (width - fill)}] {done:,}/{total:,} ({100 * frac:.0f}%{rate}, {dt:.0f} s){extra}"

        self._render = render
        self._show(render())
        self._start_ticker()

    def close(self) -> None:
        """Stop the ticker and erase the line (before printing to the terminal; a later message shows again)."""
        self._render = None
        ticker, stop = self._ticker, self._stop
        stop.set()
        if ticker is not None:
            ticker.join(timeout=2)
        with self._lock:
            if self.shown:
                print("\r\033[K", end="", file=sys.stderr, flush=True)
                self.shown = False
            self._ticker, self._stop = None, threading.Event()

    def __enter__(self) -> "Status":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
