"""Regenerate the suites shipped in suites/: one minimal catalogue suite per instruction type, and the open questions.

    python suites/generate.py            # from the repository root; about a minute

Each suite is what ``smtmma suite --instr INSTR -o suites/INSTR.jsonl`` writes (seed 0);
open-questions.jsonl holds, for each question of smtmma.discriminators.questions, the
vectors on which the catalogue's choice and its alternatives differ.  The tests check that
the shipped files are what this script writes.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from smtmma.discriminators.candidates import catalogue_space
from smtmma.discriminators.questions import QUESTIONS, question_lines, question_suite
from smtmma.discriminators.suite import build_suite

#: Instruction types with a shipped suite (issue 7).
SUITE_INSTRS = ("f16f32", "f16f16", "bf16f32", "tf32f32", "e4m3f32", "e5m2f32", "e4m3f16", "mxe4m3f32", "f64f64")

HERE = Path(__file__).resolve().parent


def catalogue_lines(instr: str) -> list[str]:
    """The lines of suites/INSTR.jsonl."""
    return build_suite(catalogue_space(instr)).lines()


def open_question_lines() -> list[str]:
    """The lines of suites/open-questions.jsonl."""
    return [line for q in QUESTIONS for line in question_lines(q, question_suite(q))]


def main() -> int:
    for instr in SUITE_INSTRS:
        t0 = time.perf_counter()
        lines = catalogue_lines(instr)
        (HERE / f"{instr}.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        print(f"{instr}: {len(lines)} vectors ({time.perf_counter() - t0:.1f} s)")
    t0 = time.perf_counter()
    lines = open_question_lines()
    (HERE / "open-questions.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    print(f"open-questions: {len(lines)} vectors ({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
