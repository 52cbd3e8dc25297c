"""Exit statuses, one-line error messages and the argparse pieces every subcommand shares."""

from __future__ import annotations

import argparse
import sys
from typing import Callable, NoReturn, Optional

import numpy as np

from ..errors import InputError
from ..limits import MAX_DRAWS, MAX_K, MAX_SECONDS, MAX_SEED

EXIT_OK = 0
EXIT_MISMATCH = 1
EXIT_USAGE = 2
EXIT_TIMEOUT = 3
EXIT_INTERNAL = 70  # EX_SOFTWARE of sysexits.h: a bug in smtmma


class Parser(argparse.ArgumentParser):
    """ArgumentParser whose usage errors are one line on stderr and status 2."""

    def error(self, message: str) -> NoReturn:
        print_error(f"{message} (see '{self.prog} --help')")
        raise SystemExit(EXIT_USAGE)


def print_error(message: str) -> None:
    """``smtmma: error: message`` on stderr, folded onto one line."""
    one_line = " ".join(str(message).split())
    print(f"smtmma: error: {one_line}", file=sys.stderr)


def _int_at_least(lo: int, what: str, hi: Optional[int] = None) -> Callable[[str], int]:
    """An argparse type: an integer >= ``lo`` (and <= ``hi``); ``what`` names it in the error ("a positive integer")."""

    def parse(text: str) -> int:
        t = text.strip()
        if not t.isascii():
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        try:
            n = int(t)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if n < lo or (hi is not None and n > hi):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return n

    return parse


non_negative_arg = _int_at_least(0, "a non-negative integer")
positive_int_arg = _int_at_least(1, "a positive integer")
k_length_arg = _int_at_least(1, f"a dot-product length in 1..{MAX_K}", MAX_K)
draws_arg = _int_at_least(0, f"a number of random inputs in 0..{MAX_DRAWS}", MAX_DRAWS)
positive_draws_arg = _int_at_least(1, f"a number of random inputs in 1..{MAX_DRAWS}", MAX_DRAWS)
seed_arg = _int_at_least(0, f"a seed in 0..{MAX_SEED}", MAX_SEED)


def _nonempty(what: str) -> Callable[[str], str]:
    """An argparse type: a string that is not blank (``what`` names it in the error, e.g. "a file or folder name")."""

    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"expected {what}, got an empty one")
        return text

    return parse


path_arg = _nonempty("a file or folder name")  # an empty one would write into the current folder
model_spec_arg = _nonempty("a model spec such as t-fdpa:F=26")  # an empty one would quietly keep the catalogue's model


def fraction_arg(what: str) -> Callable[[str], float]:
    """An argparse type: a number strictly between 0 and 1 (``what`` names it in the error)."""

    def parse(text: str) -> float:
        try:
            x = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not 0 < x < 1:  # NaN fails here too
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return x

    return parse


def seconds_arg(text: str) -> float:
    """An argparse type: seconds, a finite number in (0, MAX_SECONDS]."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 < x <= MAX_SECONDS:  # NaN and inf fail here too
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds up to {MAX_SECONDS:g}, got {text!r}")
    return x


def load_npy(path: str, what: str = "") -> np.ndarray:
    """The array in the .npy file ``path``; one InputError line naming ``what`` (an operand, an option) and the file
    when it is missing, unreadable, or not one array (an .npz archive)."""
    name = f"{what}: {path}" if what else path
    try:
        arr = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except (OSError, ValueError, EOFError) as e:
        raise InputError(f"{name}: not a readable .npy array ({str(e).splitlines()[0][:80]})") from None
    if not isinstance(arr, np.ndarray):
        if hasattr(arr, "close"):
            arr.close()
        raise InputError(f"{name}: holds no single array (an .npz archive?)")
    return arr
