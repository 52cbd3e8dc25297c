"""Self-contained SMT-LIB2 certificates: every check-sat a verdict rests on, with the answer each must give.

A certificate is one ``.smt2`` file that any SMT solver runs as it is
(``bitwuzla F``, ``z3 F``, ``cvc5 F``):

* a header of ``;`` comments: ``; smtmma-certificate 1``, then ``; meta:``
  and one line of JSON (claim, source, models, solver and version, verdict,
  witness);
* ``(set-logic QF_BV)`` and then blocks; every ``(check-sat)`` is preceded
  (since the command before it) by a comment ``; expect: unsat`` or
  ``; expect: sat``.  ``push``/``pop`` scope declarations and assertions,
  so independent queries live side by side in one file.

Nothing outside the file is trusted: a witness block asserts the witness's
input bits and the violated property, so the solver itself evaluates the
model on them; a proof block asserts the negated property (and, for a lemma
chain, proves each lemma before asserting it).  :func:`recheck` replays the
file command by command and asks a backend each ``check-sat`` it meets.

A file to re-check may come from anywhere, so reading it is bounded: its
text (after decompression) at most :data:`MAX_TEXT_BYTES`, at most
:data:`MAX_COMMANDS` commands and :data:`MAX_CHECKS` checks, ``push``
scopes at most :data:`MAX_SCOPES` deep, terms nested at most
:data:`MAX_NESTING` deep, and at most :data:`MAX_SOLVER_INPUT` bytes sent to
the solver over all its checks; each check runs under a timeout and
:data:`CHECK_MEMORY` bytes of memory.  Past any of these the file is refused
with one line (:class:`CertificateError`) before a solver sees it.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

from ..errors import InputError
from ..proof_kernel.blocks import EXPECT as _EXPECT, Block, chain_block, pin_block, strip_logic

__all__ = [
    "CertificateError",
    "Block",
    "statement_form",
    "Certificate",
    "CheckAnswer",
    "chain_block",
    "pin_block",
    "parse_certificate",
    "recheck",
    "solver_version",
    "split_commands",
    "MAX_TEXT_BYTES",
    "MAX_COMMANDS",
    "MAX_CHECKS",
    "MAX_SCOPES",
    "MAX_NESTING",
    "MAX_SOLVER_INPUT",
    "CHECK_MEMORY",
    "byte_size",
]

from .check_certificate import MAGIC  # the format the independent checker reads: one definition

# Bounds on a certificate read from a file (the shipped ones, 2026-11: at most 2.2 MB of text, 43k commands,
# 1020 checks, scopes 2 deep, terms 282 deep, each check well under 1 GiB of solver memory).
#: Bytes of text (after decompression) a certificate may hold.
MAX_TEXT_BYTES = 32 * 2**20
#: Top-level SMT-LIB2 commands a certificate may hold.
MAX_COMMANDS = 1_000_000
#: ``check-sat`` commands a certificate may hold (each is one solver call).
MAX_CHECKS = 20_000
#: How deep ``push`` scopes may nest.
MAX_SCOPES = 1_000
#: How deep parentheses may nest within one command (solvers' parsers recurse: cvc5 crashes at 10^6).
MAX_NESTING = 10_000
#: Bytes of assertions sent to the solver over all the checks of one certificate.
MAX_SOLVER_INPUT = 2**30
#: Bytes of memory each check's solver process may allocate (beyond what it starts with).
CHECK_MEMORY = 4 * 2**30


def byte_size(n: int) -> str:
    """``n`` bytes for messages: "32 MiB", "4 GiB", "1.5 MiB" (three significant digits), "1,000 bytes"."""
    if n >= 2**30:
        return f"{n / 2**30:.3g} GiB"
    return f"{n / 2**20:.3g} MiB" if n >= 2**20 else f"{n:,} bytes"


class CertificateError(InputError):
    """A certificate file that is not one (no header, bad meta line, unbalanced parentheses, no expectations)."""


@dataclass
class Certificate:
    """A claim's certificate: metadata and the blocks its verdict rests on."""

    meta: dict[str, Any]
    blocks: list[Block] = field(default_factory=list)
    body: str = ""  # when parsed from a file: the text after the header
    #: when parsed from a file: the body's commands with their comments (see :func:`split_commands`)
    commands: list[tuple[str, str]] = field(default_factory=list, repr=False, compare=False)

    def text(self) -> str:
        """The ``.smt2`` file: header, ``set-logic``, each block in a ``push``/``pop`` scope with its expectation."""
        head = [MAGIC, "; meta: " + json.dumps(self.meta, sort_keys=True, separators=(",", ":"))]
        for key in ("claim", "source", "verdict", "solver"):
            if key in self.meta:
                head.append(f"; {key}: {self.meta[key]}")
        if self.body:
            return "\n".join(head) + "\n" + self.body
        lines = ["(set-logic QF_BV)"]
        for i, b in enumerate(self.blocks, 1):
            body = statement_form(strip_logic(b.text)) if b.expect == "unsat" else strip_logic(b.text).rstrip("\n")
            lines += [f"; block {i}: {b.label}", "(push 1)", body, f"; expect: {b.expect}", "(check-sat)", "(pop 1)"]
        lines.append("(exit)")
        return "\n".join(head) + "\n" + "\n".join(lines) + "\n"

    @property
    def checks(self) -> int:
        """Number of ``check-sat`` commands in the file."""
        return sum(1 for cmd, _ in self._commands() if cmd == "(check-sat)")

    def _commands(self) -> list[tuple[str, str]] | Iterator[tuple[str, str]]:
        return self.commands if self.body and self.commands else split_commands(self.text())


# -- reading -----------------------------------------------------------------------------------------


# Inside a command: a quoted symbol, a string ("" escapes a quote), a comment, a parenthesis, or an unterminated quote.
_TOKEN = re.compile(r'\|[^|]*\||"[^"]*"|;[^\n]*|[()]|[|"]')
_NONSPACE = re.compile(r"\S")


def split_commands(text: str, *, max_depth: Optional[int] = None) -> Iterator[tuple[str, str]]:
    """Top-level SMT-LIB2 commands of ``text`` with the comments since the previous command.

    Yields ``(command text, comments)``; strings (``"..."``) and quoted
    symbols (``|...|``) may hold parentheses and semicolons.  Raises
    :class:`CertificateError` on unbalanced parentheses or parentheses
    nested deeper than ``max_depth`` (default :data:`MAX_NESTING`).  Linear
    time, no recursion.
    """
    if max_depth is None:
        max_depth = MAX_NESTING
    i, n = 0, len(text)
    comments: list[str] = []
    while True:
        m = _NONSPACE.search(text, i)
        if m is None:
            return
        i = m.start()
        ch = text[i]
        if ch == ";":
            j = text.find("\n", i)
            j = n if j < 0 else j
            comments.append(text[i + 1 : j].strip())
            i = j
        elif ch == "(":
            depth, end = 0, -1
            for tok in _TOKEN.finditer(text, i):
                c = tok.group()
                if c == "(":
                    depth += 1
                    if depth > max_depth:
                        raise CertificateError(f"parentheses nested deeper than {max_depth} in the command at offset {i}")
                elif c == ")":
                    depth -= 1
                    if depth == 0:
                        end = tok.end()
                        break
                elif len(c) == 1 and c in '|"':
                    raise CertificateError(f"unterminated {c} at offset {tok.start()}")
            if end < 0:
                raise CertificateError(f"unbalanced parentheses in the command at offset {i}")
            yield text[i:end], "\n".join(comments)
            comments = []
            i = end
        else:
            raise CertificateError(f"unexpected {text[i:i + 20]!r} at offset {i} (not an SMT-LIB2 command)")


_SCOPE = re.compile(r"\(\s*(push|pop)\s*(\d*)\s*\)")


def _scopes(cmd: str) -> int:
    """How many scopes a ``push``/``pop`` command opens or closes (at most :data:`MAX_SCOPES`); CertificateError if malformed."""
    m = _SCOPE.fullmatch(cmd)
    if m is None:
        raise CertificateError(f"malformed {cmd[:40]!r} (expected (push N) or (pop N))")
    digits = m.group(2)
    if len(digits) > 9 or int(digits or 1) > MAX_SCOPES:
        raise CertificateError(f"({m.group(1)} {digits[:20]}{'...' if len(digits) > 20 else ''}): "
                               f"more than {MAX_SCOPES} scopes")
    return int(digits or 1)


def parse_certificate(text: str, where: str = "certificate") -> Certificate:
    """A :class:`Certificate` from file text; :class:`CertificateError` (one line) when it is not one or exceeds a bound.

    Checks the header, that every ``check-sat`` has its expectation, that
    ``push``/``pop`` match, and the bounds of the module's docstring.
    """
    if len(text) > MAX_TEXT_BYTES:
        raise CertificateError(f"{where}: over {byte_size(MAX_TEXT_BYTES)} of text")
    lines = text.splitlines()
    if lines and lines[0].strip() == "; smtmma-certificate 1":
        raise CertificateError(f"{where}: a format-1 certificate (before lemmas were functions the checker can "
                               "follow): make it again with `smtmma prove NAME --save DIR`")
    if not lines or lines[0].strip() != MAGIC:
        raise CertificateError(f"{where}: not an smtmma certificate (the first line must be {MAGIC!r})")
    meta_lines = [line for line in lines[1:20] if line.startswith("; meta: ")]
    if not meta_lines:
        raise CertificateError(f"{where}: no '; meta:' line in the header")
    try:
        meta = json.loads(meta_lines[0][len("; meta: "):])
    except json.JSONDecodeError as e:
        raise CertificateError(f"{where}: the meta line is not JSON ({e.msg} at column {e.colno})") from None
    except RecursionError:
        raise CertificateError(f"{where}: the meta line's JSON nests too deeply") from None
    except ValueError as e:  # e.g. a number of more than 4300 digits
        raise CertificateError(f"{where}: the meta line is not usable JSON ({str(e)[:100]})") from None
    if not isinstance(meta, dict):
        raise CertificateError(f"{where}: the meta line must be a JSON object")
    body = "\n".join(line for line in lines if not (line.startswith("; meta: ") or line.strip() == MAGIC)) + "\n"
    del lines
    try:
        commands = _check_commands(body)
    except CertificateError as e:
        raise CertificateError(f"{where}: {e}") from None
    return Certificate(meta, body=body, commands=commands)


def _check_commands(body: str) -> list[tuple[str, str]]:
    """The body's commands; CertificateError for no check, a check without its expectation, unmatched scopes, or
    past a bound."""
    sizes = [0]  # bytes of the commands in each open scope
    commands = checks = sent = 0
    found: list[tuple[str, str]] = []
    for cmd, comments in split_commands(body):
        found.append((cmd, comments))
        commands += 1
        if commands > MAX_COMMANDS:
            raise CertificateError(f"more than {MAX_COMMANDS:,} commands")
        head = _head(cmd)
        if head == "check-sat":
            checks += 1
            if checks > MAX_CHECKS:
                raise CertificateError(f"more than {MAX_CHECKS:,} (check-sat) commands")
            if not _EXPECT.search(comments):
                raise CertificateError("a (check-sat) without an 'expect: sat|unsat' comment before it")
            sent += sum(sizes)
            if sent > MAX_SOLVER_INPUT:
                raise CertificateError(f"its checks would send the solver over {byte_size(MAX_SOLVER_INPUT)} of assertions in all")
        elif head == "push":
            sizes += [0] * _scopes(cmd)
            if len(sizes) - 1 > MAX_SCOPES:
                raise CertificateError(f"push scopes nested deeper than {MAX_SCOPES}")
        elif head == "pop":
            k = _scopes(cmd)
            if k > len(sizes) - 1:
                raise CertificateError(f"{cmd} without as many (push) before it")
            del sizes[len(sizes) - k:]
        elif head == "reset":
            sizes = [0]
        elif head not in _NOT_SENT:
            sizes[-1] += len(cmd) + 1
    if not checks:
        raise CertificateError("no (check-sat) in the file")
    return found


def statement_form(text: str) -> str:
    """A plain query's assertions as its one statement: ``(assert (and a1 ... an))``, last.

    What the independent checker (``proofs/check_certificate.py``) asks of a
    check expecting unsat: one assertion that is not a proved lemma's
    application (premises and the negated property together), so what the
    check proves is read off one line.  An incremental text (``push``,
    ``pop``, ``check-sat`` of a lemma chain) is returned as it is.
    """
    cmds = list(split_commands(text))
    heads = [_head(c) for c, _ in cmds]
    if any(h in ("push", "pop", "check-sat") for h in heads) or heads.count("assert") <= 1:
        return text
    out: list[str] = []
    terms: list[str] = []
    for cmd, comments in cmds:
        out += [f"; {line}" for line in comments.splitlines() if line]
        if _head(cmd) == "assert":
            terms.append(cmd[len("(assert"):-1].strip())
        else:
            out.append(cmd)
    return "\n".join(out + [f"(assert (and {' '.join(terms)}))"])


# -- checking ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckAnswer:
    """One ``check-sat`` of a certificate re-run: what it expects, what the backend said, seconds."""

    index: int
    label: str
    expected: str
    got: str
    solver: str
    seconds: float
    reason: str = ""

    @property
    def agrees(self) -> bool:
        """Whether the backend gave the expected answer."""
        return self.got == self.expected


#: Commands :func:`recheck` does not send to the solver (set-logic is sent once, at the top of each query).
_NOT_SENT = frozenset({"set-logic", "exit", "set-info", "set-option", "get-model", "get-value", "echo"})


_HEAD = re.compile(r"\(\s*([^\s()]+)")


def _head(cmd: str) -> str:
    m = _HEAD.match(cmd)
    return m.group(1) if m else ""


def recheck(cert: Certificate, *, solver: Optional[str] = None, timeout: float = 60.0,
            stop_on_failure: bool = True, memory: Optional[int] = CHECK_MEMORY,
            progress: Optional[Callable[[CheckAnswer], None]] = None) -> list[CheckAnswer]:
    """Run every ``check-sat`` of ``cert`` with ``solver`` (a backend name or None for the default).

    The file is replayed command by command: ``push``/``pop`` open and close
    scopes, ``reset`` empties the stack, and each ``check-sat`` sends the
    assertions in scope to the backend, under ``timeout`` seconds and
    ``memory`` bytes (None: no cap; past either the answer is unknown).
    Returns one :class:`CheckAnswer` per check (stopping after the first
    that disagrees, unless ``stop_on_failure`` is False); ``progress(answer)``
    is called after each.
    """
    from ..queries.backends import solve

    stack: list[list[str]] = [[]]
    logic = "QF_BV"
    answers: list[CheckAnswer] = []
    label = ""
    for cmd, comments in cert._commands():
        head = _head(cmd)
        for line in comments.splitlines():
            if line.startswith("block ") or line.startswith("lemma ") or line.startswith("the property"):
                label = line
        if head == "set-logic":
            logic = cmd[len("(set-logic"):-1].strip()
        elif head == "push":
            stack += [[] for _ in range(_scopes(cmd))]
            if len(stack) - 1 > MAX_SCOPES:
                raise CertificateError(f"push scopes nested deeper than {MAX_SCOPES}")
        elif head == "pop":
            k = _scopes(cmd)
            if k > len(stack) - 1:
                raise CertificateError("(pop) without a matching (push)")
            del stack[len(stack) - k:]
        elif head == "reset":
            stack = [[]]
        elif head == "check-sat":
            found = _EXPECT.findall(comments)
            expected = found[-1] if found else ""
            script = "\n".join([f"(set-logic {logic})", *(c for level in stack for c in level)]) + "\n"
            t0 = time.perf_counter()
            r = solve(script, (), solver=solver, timeout=timeout, memory=memory)
            answers.append(CheckAnswer(len(answers) + 1, label, expected, r.verdict, r.solver,
                                       time.perf_counter() - t0, r.reason))
            if progress:
                progress(answers[-1])
            if stop_on_failure and r.verdict != expected:
                break
        elif head in _NOT_SENT:
            continue
        else:
            stack[-1].append(cmd)
    return answers


def solver_version(name: str) -> str:
    """``"bitwuzla 0.8.2"``: the backend's name and version ("" parts when unknown)."""
    base = name.split(":")[-1]
    try:
        if base == "z3":
            import z3

            return f"z3 {z3.get_version_string()}"
        if base == "cvc5":
            import cvc5

            return f"cvc5 {cvc5.Solver().getVersion()}"
        if base == "bitwuzla":
            from importlib.metadata import version

            return f"bitwuzla {version('bitwuzla')}"
    except Exception:  # pragma: no cover - a broken install still gets a certificate
        pass
    return base
