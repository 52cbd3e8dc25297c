"""A one-line status or progress bar on stderr, shown only when stderr is a terminal (never on stdout)."""

from __future__ import annotations

import sys
import time
from typing import Optional


class Status:
    """Rewrites one line of stderr: messages (``status("solving")``) or a bar (``status.bar(done, total)``).

    Silent when stderr is not a terminal, or for runs shorter than ``delay``
    seconds (nothing flickers for a fast command).
    """

    def __init__(self, enabled: Optional[bool] = None, delay: float = 1.0) -> None:
        if enabled is None:
            try:
                enabled = sys.stderr.isatty()
            except (AttributeError, ValueError):
                enabled = False
        self.enabled = enabled
        self.t0 = time.perf_counter()
        self.delay = delay
        self.shown = False

    def _show(self, text: str) -> None:
        if not self.enabled or time.perf_counter() - self.t0 < self.delay:
            return
        print(f"\r\033[K{text}", end="", file=sys.stderr, flush=True)
        self.shown = True

    def __call__(self, message: str) -> None:
        """Show ``message`` (with the time elapsed)."""
        self._show(f"{message} ({time.perf_counter() - self.t0:.0f} s)\u2026")

    def bar(self, done: int, total: int, extra: str = "") -> None:
        """Show a bar of ``done`` out of ``total``, the rate and ``extra``."""
        frac = done / total if total else 1.0
        width = 30
        fill = int(frac * width)
        dt = time.perf_counter() - self.t0
        rate = f", {done / dt:,.0f}/s" if dt > 0 else ""
        self._show(f"[{'#' * fill}{'.' * (width - fill)}] {done:,}/{total:,} ({100 * frac:.0f}%{rate}){extra}")

    def close(self) -> None:
        """Erase the line."""
        if self.shown:
            print("\r\033[K", end="", file=sys.stderr, flush=True)
            self.shown = False

    def __enter__(self) -> "Status":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
