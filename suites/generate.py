"""Regenerate the suites shipped in suites/: one minimal catalogue suite per instruction type, the open questions,
and one suite per provisional row of smtmma.discriminators.provisional.PROVISIONAL_SUITES (suites/provisional/).

    python suites/generate.py                 # from the repository root; a few minutes
    python suites/generate.py --provisional   # only suites/provisional/

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
from smtmma.discriminators.provisional import PROVISIONAL_SUITES, provisional_space, suite_file
from smtmma.discriminators.questions import QUESTIONS, question_lines, question_suite
from smtmma.discriminators.suite import build_suite

#: Instruction types with a shipped suite (issue 7).
SUITE_INSTRS = ("f16f32", "f16f16", "bf16f32", "tf32f32", "e4m3f32", "e5m2f32", "e4m3f16", "mxe4m3f32", "f64f64")

HERE = Path(__file__).resolve().parent

#: Seconds per solver call for the provisional suites: grid neighbours the pool cannot split and the solver cannot
#: split or prove equal in this time stay one class, listed as unproven (a suite in at most 5 minutes, issue 32).
PROVISIONAL_TIMEOUT = 15.0


def catalogue_lines(instr: str) -> list[str]:
    """The lines of suites/INSTR.jsonl."""
    return build_suite(catalogue_space(instr)).lines()


def provisional_lines(arch: str, instr: str) -> list[str]:
    """The lines of suites/provisional/ARCH-INSTR.jsonl: the structural grid around the row's hypothesis."""
    return build_suite(provisional_space(arch, instr), timeout=PROVISIONAL_TIMEOUT).lines()


def open_question_lines() -> list[str]:
    """The lines of suites/open-questions.jsonl."""
    return [line for q in QUESTIONS for line in question_lines(q, question_suite(q))]


def main() -> int:
    if "--provisional" not in sys.argv[1:]:
        write_catalogue_suites()
    for arch, instrs in PROVISIONAL_SUITES.items():
        for instr in instrs:
            t0 = time.perf_counter()
            suite = build_suite(provisional_space(arch, instr), timeout=PROVISIONAL_TIMEOUT)
            path = suite_file(HERE, arch, instr)
            path.parent.mkdir(exist_ok=True)
            path.write_text("".join(line + "\n" for line in suite.lines()), encoding="utf-8")
            print(f"provisional/{path.name}: {len(suite.separating)} vectors for {len(suite.classes)} classes of "
                  f"{len(suite.space.candidates)} candidates (bound {suite.bound} + 1), "
                  f"{sum(not c.proven for c in suite.classes)} classes unproven ({time.perf_counter() - t0:.1f} s)")
    return 0


def write_catalogue_suites() -> None:
    """suites/INSTR.jsonl and suites/open-questions.jsonl."""
    for instr in SUITE_INSTRS:
        t0 = time.perf_counter()
        lines = catalogue_lines(instr)
        (HERE / f"{instr}.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        print(f"{instr}: {len(lines)} vectors ({time.perf_counter() - t0:.1f} s)")
    t0 = time.perf_counter()
    lines = open_question_lines()
    (HERE / "open-questions.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    print(f"open-questions: {len(lines)} vectors ({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    sys.exit(main())
