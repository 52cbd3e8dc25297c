"""Certificate blocks: one self-contained query each, with the answer it must give.

A block expecting unsat that is one plain query (declarations, definitions,
assertions) is written with its assertions as one statement
(:func:`~smtmma.proofs.certificate.statement_form`); an incremental block (a
lemma chain, :mod:`smtmma.proof_kernel.chain`) carries its own checks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import InputError

__all__ = ["EXPECT", "Block", "pin_block", "chain_block", "strip_logic", "last_expect"]

#: The comment before each ``check-sat``: ``; expect: sat`` or ``; expect: unsat``.
EXPECT = re.compile(r"expect(?:ed)?:\s*(sat|unsat)\b")


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


def strip_logic(text: str) -> str:
    """``text`` without its ``(set-logic ...)`` lines."""
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
    return Block(label, body[: -len("(check-sat)")].rstrip("\n"), last_expect(body))


def last_expect(text: str) -> str:
    """The answer the last ``expect:`` comment of ``text`` names."""
    found = EXPECT.findall(text)
    if not found:
        raise InputError("a lemma-chain block has no 'expect:' comment")
    return found[-1]
