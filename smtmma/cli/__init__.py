"""The ``smtmma`` command line: a thin argparse layer over the library.

Subcommands: ``list`` (the catalogue), ``simulate`` (one dot product), ``matmul`` (a whole GEMM),
``check`` (test-vector files against the models; ``--against``: which models match a log),
``compare`` (two models' outputs, or a model's and recorded ones, in ulps), ``distinguish`` (a
solver's inputs on which models differ, or a proof of equivalence),
``query`` (a property of one model: proof or witness), ``prove`` (the literature's claims, with certificates), ``suite`` (a
minimal test suite for candidate models), ``identify`` (name a device's
model, closed loop), ``run`` (record a device's outputs), ``validate``
(a device against a model on random inputs) and ``hw`` (kernel sources).  Every command speaks
``--json``.  :func:`main` returns the exit status (it never raises for user
errors and never prints a traceback for them):

* 0 -- success;
* 1 -- ``check`` found mismatches;
* 2 -- usage or input error (unknown name, malformed value, missing file, bad
  line, bad or empty domain, no solver backend installed);
* 3 -- a solver gave up (timeout or resource limit) or the command's time
  limit ran out: the verdict is unknown;
* 70 -- an internal error (a bug in smtmma): one line on stderr names the
  file that holds the traceback (``--debug`` prints it instead);
* 130 -- interrupted (Ctrl-C); solver processes are killed on the way out;
* 143 (129) -- terminated by SIGTERM (SIGHUP): one line ``smtmma: terminated``,
  solver processes killed the same way.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import threading
import traceback
from typing import Optional, Sequence

from .. import __version__
from ..deadline import TimeLimitError, time_limit
from ..errors import SmtmmaError, command_line
from . import (check_cmd, compare_cmd, distinguish_cmd, hw_cmd, identify_cmd, list_cmd, matmul_cmd, prove_cmd, query_cmd, report_cmd, run_cmd,
               simulate_cmd, suite_cmd, validate_cmd)
from .common import EXIT_INTERNAL, EXIT_MISMATCH, EXIT_OK, EXIT_TIMEOUT, EXIT_USAGE, Parser, print_error
from .output import install_console
from .values import parse_cli_value

__all__ = ["main", "build_parser", "parse_cli_value", "EXIT_OK", "EXIT_MISMATCH", "EXIT_USAGE", "EXIT_TIMEOUT", "EXIT_INTERNAL"]

_EXIT_CODES = """\
exit status:
  0  success
  1  check: some line's simulated D differs from its recorded d; identify: no
     candidate matches the device; validate: the device and the model differ
  2  usage or input error (unknown name, malformed value, missing file, bad line),
     or a device that cannot run (toolkit missing, wrong architecture)
  3  a solver gave up (timeout or resource limit; distinguish, query, suite,
     identify), or the command's time limit ran out (--timeout of distinguish
     and query, --time-limit of suite and identify); query also when no prover
     covers the model's kind (verdict unknown, "not covered: ..." names the part)
  70 internal error (a bug in smtmma): one line names the file with the
     details; --debug prints the traceback instead
  130 interrupted (Ctrl-C); solver processes are killed on the way out
  143 terminated (SIGTERM; 129: SIGHUP), solver processes killed likewise"""

_TOP_EPILOG = f"""\
examples:
  smtmma list --arch h100                 what the H100 tensor cores run
  smtmma simulate --arch sm90 --instr f16f32 --a 1,2^-10 --b 1,2^-10 --c 0
  smtmma matmul --arch sm90 --instr f16f32 A.npy B.npy -o D.npy   a whole GEMM as an H100 computes it
  smtmma check logs/*.jsonl               compare recorded GPU outputs with the models
  smtmma distinguish sm80 sm90 --instr f16f32          inputs on which A100 and H100 differ
  smtmma distinguish sm80 t-fdpa:F=25 --instr f16f32 --domain exp=-8:8
  smtmma query carry-bits --arch volta --instr f16f32  do Volta's carry bits suffice?
  smtmma prove --all --save my-proofs/                 re-check the literature's claims, with certificates
  smtmma suite --instr f16f32 -o f16f32.jsonl          few vectors that tell every architecture apart
  smtmma run --device cuda f16f32.jsonl -o mine.jsonl  record your GPU's outputs (then: smtmma check mine.jsonl)
  smtmma identify --device cuda --instr bf16f32        name the model your GPU implements
  smtmma report --claims claims.json -o report.html   claims, catalogue properties and error plots

Run 'smtmma COMMAND --help' for the options and examples of each command.

{_EXIT_CODES}"""


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``smtmma`` command."""
    fmt = argparse.RawDescriptionHelpFormatter
    p = Parser(
        prog="smtmma",
        description="Bit-accurate models of GPU matrix units (NVIDIA Tensor Cores, AMD Matrix Cores): "
        "simulate MMA instructions, check recorded hardware outputs, and ask an SMT solver where models "
        "differ or whether a property holds.",
        epilog=_TOP_EPILOG,
        formatter_class=fmt,
    )
    p.add_argument("--version", action="version", version=f"smtmma {__version__}")
    p.add_argument("--debug", action="store_true", help="on an internal error, print the traceback (default: write it to a file)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    list_cmd.add_parser(sub, fmt)
    simulate_cmd.add_parser(sub, fmt)
    matmul_cmd.add_parser(sub, fmt)
    check_cmd.add_parser(sub, fmt)
    compare_cmd.add_parser(sub, fmt)
    distinguish_cmd.add_parser(sub, fmt)
    query_cmd.add_parser(sub, fmt)
    prove_cmd.add_parser(sub, fmt)
    suite_cmd.add_parser(sub, fmt)
    identify_cmd.add_parser(sub, fmt)
    run_cmd.add_parser(sub, fmt)
    validate_cmd.add_parser(sub, fmt)
    hw_cmd.add_parser(sub, fmt)
    report_cmd.add_parser(sub, fmt)
    return p


_VALUE_OPTIONS = frozenset({"--a", "--b", "--c", "--scale-a", "--scale-b"})


def _join_negative_values(argv: list[str]) -> list[str]:
    """``--a -1,2`` -> ``--a=-1,2`` (argparse would take ``-1,2`` for an option)."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok in _VALUE_OPTIONS and i + 1 < len(argv) and argv[i + 1].startswith("-") and argv[i + 1] not in ("-h", "--help"):
            out.append(f"{tok}={argv[i + 1]}")
            i += 2
            continue
        out.append(tok)
        i += 1
    return out


def _internal_error(exc: BaseException, debug: bool) -> int:
    """Report a bug in smtmma: the traceback to a file (or to stderr with --debug), one line naming it; status 70."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    if debug:
        print(text, end="", file=sys.stderr)
        print_error(f"internal error: {type(exc).__name__}: {exc}")
        return EXIT_INTERNAL
    where = "the traceback could not be saved"
    try:
        fd, path = tempfile.mkstemp(prefix="smtmma-crash-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"smtmma {__version__}, python {sys.version.split()[0]}\nargv: {sys.argv!r}\n\n{text}")
        where = f"details in {path}"
    except OSError:
        pass
    first = str(exc).splitlines()[0][:200] if str(exc) else ""
    print_error(f"internal error (a bug in smtmma, please report it): {type(exc).__name__}"
                f"{': ' + first if first else ''}; {where} (or rerun with --debug)")
    return EXIT_INTERNAL


class _Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: unwinds the stack like Ctrl-C, so ``finally`` blocks kill solver processes."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _on_terminate(signum: int, frame: object) -> None:
    signal.signal(signum, signal.SIG_DFL)  # a second signal during the clean-up ends the process at once
    raise _Terminated(signum)


def _catch_termination() -> dict[int, object]:
    """Turn SIGTERM and SIGHUP into :class:`_Terminated` (main thread only, and not when ignored, as nohup does);
    the handlers replaced, to restore."""
    old: dict[int, object] = {}
    if threading.current_thread() is not threading.main_thread():
        return old
    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None and signal.getsignal(sig) is signal.SIG_DFL:
            old[sig] = signal.signal(sig, _on_terminate)
    return old


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the ``smtmma`` command with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    install_console()  # no UnicodeEncodeError on an ASCII or Latin-1 console; warnings on one line
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    debug = "--debug" in args_list
    replaced = _catch_termination()
    try:
        args = parser.parse_args(_join_negative_values(args_list))
        if getattr(args, "func", None) is None:
            print_error("a command is required: list, simulate or check to run the models; distinguish or query "
                        "to ask a solver; suite, identify, run or validate to test a device (see 'smtmma --help')")
            return EXIT_USAGE
        limit, name = getattr(args, "time_limit", None), "--time-limit"
        if limit is None and getattr(args, "timeout_bounds_command", False):
            limit, name = args.timeout, "--timeout"
        with time_limit(limit, name), command_line():  # messages name options (--round rne), not keywords
            return int(args.func(args))
    except SystemExit as e:  # --help, --version, usage errors
        return e.code if isinstance(e.code, int) else (0 if e.code is None else EXIT_USAGE)
    except TimeLimitError as e:
        print_error(f"no answer: {e}")
        return EXIT_TIMEOUT
    except AssertionError as e:  # an internal invariant, e.g. a witness the simulator does not replay
        return _internal_error(e, debug)
    except SmtmmaError as e:
        print_error(str(e))
        return EXIT_USAGE
    except BrokenPipeError:  # output piped into head & co.: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except OSError as e:  # a file that vanished or cannot be read mid-run
        print_error(f"{e.filename + ': ' if e.filename else ''}{e.strerror or e}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("smtmma: interrupted", file=sys.stderr)
        return 130
    except _Terminated as e:
        print("smtmma: terminated", file=sys.stderr)
        return 128 + e.signum
    except MemoryError as e:  # sizes checked up front are estimates: what still does not fit is one line too
        print_error(f"out of memory{': ' + str(e).splitlines()[0][:200] if str(e) else ''}; "
                    "the inputs or the sizes asked are too large for this machine")
        return EXIT_USAGE
    except Exception as e:  # anything else is a bug: one line, the details in a file
        return _internal_error(e, debug)
    finally:
        for sig, handler in replaced.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]
