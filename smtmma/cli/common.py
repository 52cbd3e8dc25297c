"""Exit statuses, one-line error messages and the argparse pieces every subcommand shares."""

from __future__ import annotations

import argparse
import sys
from typing import Callable, NoReturn

EXIT_OK = 0
EXIT_MISMATCH = 1
EXIT_USAGE = 2
EXIT_TIMEOUT = 3
EXIT_INTERNAL = 70  # EX_SOFTWARE of sysexits.h: a bug in smtmma


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors are one line on stderr and status 2."""

    def error(self, message: str) -> NoReturn:
        _print_error(f"{message} (see '{self.prog} --help')")
        raise SystemExit(EXIT_USAGE)


def _print_error(message: str) -> None:
    one_line = " ".join(str(message).split())
    print(f"smtmma: error: {one_line}", file=sys.stderr)


def _int_at_least(lo: int, what: str) -> Callable[[str], int]:
    """An argparse type: an integer >= ``lo`` (``what`` names it in the error, e.g. "a positive integer")."""

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if n < lo:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return n

    return parse


_non_negative = _int_at_least(0, "a non-negative integer")
_positive_int = _int_at_least(1, "a positive integer")
