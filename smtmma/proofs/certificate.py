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
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from ..errors import InputError

__all__ = [
    "CertificateError",
    "Block",
    "Certificate",
    "CheckAnswer",
    "chain_block",
    "pin_block",
    "parse_certificate",
    "recheck",
    "solver_version",
    "split_commands",
]

MAGIC = "; smtmma-certificate 1"
_EXPECT = re.compile(r"expect(?:ed)?:\s*(sat|unsat)\b")


class CertificateError(InputError):
    """A certificate file that is not one (no header, bad meta line, unbalanced parentheses, no expectations)."""


@dataclass(frozen=True)
class Block:
    """One self-contained query: SMT-LIB2 text (declarations, definitions, assertions; ``set-logic`` allowed)
    ending without ``check-sat``, the answer it must give, and a one-line label.

    ``text`` may itself be an incremental script (``push``/``pop`` and its own
    ``check-sat`` lines, each after an ``expect:`` comment); ``expect`` is then
    the answer of the final check (appended unless the text ends with one).
    """

    label: str
    text: str
    expect: str  # "sat" | "unsat"


def _strip_logic(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("(set-logic"))


def pin_block(label: str, script: str, values: dict[str, tuple[int, int]], expect: str = "sat") -> Block:
    """``script`` with the named constants pinned to ``values`` (name -> (value, width in bits)).

    A witness certificate: the solver evaluates the formula on the witness
    itself, so a re-check takes milliseconds and trusts nothing else.
    """
    pins = "\n".join(f"(assert (= {n} (_ bv{v % (1 << w)} {w})))" for n, (v, w) in values.items())
    return Block(label, script.rstrip("\n") + "\n; the witness\n" + pins, expect)


def chain_block(label: str, text: str) -> Block:
    """An incremental script (a lemma chain) whose every ``check-sat`` carries its own expectation."""
    body = text.rstrip("\n")
    if not body.endswith("(check-sat)"):
        raise InputError(f"{label}: a lemma-chain block must end with (check-sat)")
    return Block(label, body[: -len("(check-sat)")].rstrip("\n"), _last_expect(body))


def _last_expect(text: str) -> str:
    found = _EXPECT.findall(text)
    if not found:
        raise InputError("a lemma-chain block has no 'expect:' comment")
    return found[-1]


@dataclass
class Certificate:
    """A claim's certificate: metadata and the blocks its verdict rests on."""

    meta: dict[str, Any]
    blocks: list[Block] = field(default_factory=list)
    body: str = ""  # when parsed from a file: the text after the header

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
            body = _strip_logic(b.text).rstrip("\n")
            lines += [f"; block {i}: {b.label}", "(push 1)", body, f"; expect: {b.expect}", "(check-sat)", "(pop 1)"]
        lines.append("(exit)")
        return "\n".join(head) + "\n" + "\n".join(lines) + "\n"

    @property
    def checks(self) -> int:
        """Number of ``check-sat`` commands in the file."""
        return sum(1 for cmd, _ in split_commands(self.text()) if cmd == "(check-sat)")


# -- reading -----------------------------------------------------------------------------------------


def split_commands(text: str) -> Iterator[tuple[str, str]]:
    """Top-level SMT-LIB2 commands of ``text`` with the comments since the previous command.

    Yields ``(command text, comments)``; strings (``"..."``) and quoted
    symbols (``|...|``) may hold parentheses and semicolons.  Raises
    :class:`CertificateError` on unbalanced parentheses.
    """
    i, n = 0, len(text)
    comments: list[str] = []
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch == ";":
            j = text.find("\n", i)
            j = n if j < 0 else j
            comments.append(text[i + 1 : j].strip())
            i = j
        elif ch == "(":
            depth, j = 0, i
            while j < n:
                c = text[j]
                if c == ";":
                    k = text.find("\n", j)
                    j = n if k < 0 else k
                    continue
                if c in "|\"":
                    k = text.find(c, j + 1)
                    if k < 0:
                        raise CertificateError(f"unterminated {c} at offset {j}")
                    j = k + 1
                    continue
                if c == "(":
                    depth += 1
                elif c == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            if depth:
                raise CertificateError(f"unbalanced parentheses in the command at offset {i}")
            yield text[i : j + 1], "\n".join(comments)
            comments = []
            i = j + 1
        else:
            raise CertificateError(f"unexpected {text[i:i + 20]!r} at offset {i} (not an SMT-LIB2 command)")


def parse_certificate(text: str, where: str = "certificate") -> Certificate:
    """A :class:`Certificate` from file text; :class:`CertificateError` (one line) when it is not one."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != MAGIC:
        raise CertificateError(f"{where}: not an smtmma certificate (the first line must be {MAGIC!r})")
    meta_lines = [line for line in lines[1:20] if line.startswith("; meta: ")]
    if not meta_lines:
        raise CertificateError(f"{where}: no '; meta:' line in the header")
    try:
        meta = json.loads(meta_lines[0][len("; meta: "):])
    except json.JSONDecodeError as e:
        raise CertificateError(f"{where}: the meta line is not JSON ({e.msg} at column {e.colno})") from None
    if not isinstance(meta, dict):
        raise CertificateError(f"{where}: the meta line must be a JSON object")
    body = "\n".join(line for line in lines if not (line.startswith("; meta: ") or line.strip() == MAGIC)) + "\n"
    try:
        cmds = list(split_commands(body))
    except CertificateError as e:
        raise CertificateError(f"{where}: {e}") from None
    checks = [c for c, _ in cmds if c == "(check-sat)"]
    if not checks:
        raise CertificateError(f"{where}: no (check-sat) in the file")
    cert = Certificate(meta, body=body)
    for cmd, comments in cmds:
        if cmd == "(check-sat)" and not _EXPECT.search(comments):
            raise CertificateError(f"{where}: a (check-sat) without an 'expect: sat|unsat' comment before it")
    return cert


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


def _head(cmd: str) -> str:
    m = re.match(r"\(\s*([^\s()]+)", cmd)
    return m.group(1) if m else ""


def recheck(cert: Certificate, *, solver: Optional[str] = None, timeout: float = 60.0,
            stop_on_failure: bool = True) -> list[CheckAnswer]:
    """Run every ``check-sat`` of ``cert`` with ``solver`` (a backend name or None for the default).

    The file is replayed command by command: ``push``/``pop`` open and close
    scopes, ``reset`` empties the stack, and each ``check-sat`` sends the
    assertions in scope to the backend.  Returns one :class:`CheckAnswer`
    per check (stopping after the first that disagrees, unless
    ``stop_on_failure`` is False).
    """
    from ..queries.backends import solve

    text = cert.text()
    stack: list[list[str]] = [[]]
    logic = "QF_BV"
    answers: list[CheckAnswer] = []
    label = ""
    for cmd, comments in split_commands(text):
        head = _head(cmd)
        for line in comments.splitlines():
            if line.startswith("block ") or line.startswith("lemma ") or line.startswith("the property"):
                label = line
        if head == "set-logic":
            logic = cmd[len("(set-logic"):-1].strip()
        elif head == "push":
            m = re.match(r"\(\s*push\s*(\d*)\s*\)", cmd)
            for _ in range(int(m.group(1) or 1) if m else 1):
                stack.append([])
        elif head == "pop":
            m = re.match(r"\(\s*pop\s*(\d*)\s*\)", cmd)
            for _ in range(int(m.group(1) or 1) if m else 1):
                if len(stack) == 1:
                    raise CertificateError("(pop) without a matching (push)")
                stack.pop()
        elif head == "reset":
            stack = [[]]
        elif head == "check-sat":
            found = _EXPECT.findall(comments)
            expected = found[-1] if found else ""
            script = "\n".join([f"(set-logic {logic})", *(c for level in stack for c in level)]) + "\n"
            t0 = time.perf_counter()
            r = solve(script, (), solver=solver, timeout=timeout)
            answers.append(CheckAnswer(len(answers) + 1, label, expected, r.verdict, r.solver,
                                       time.perf_counter() - t0, r.reason))
            if stop_on_failure and r.verdict != expected:
                break
        elif head in ("exit", "set-info", "set-option", "get-model", "get-value", "echo"):
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
