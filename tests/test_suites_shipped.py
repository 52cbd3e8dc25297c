"""The suites shipped in suites/: what suites/generate.py writes, every expectation reproduced, every class told apart."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from smtmma.check import check_files
from smtmma.discriminators.candidates import catalogue_space
from smtmma.discriminators.questions import QUESTIONS
from smtmma.discriminators.suite import build_suite
from smtmma.hw.device import open_device
from smtmma.hw.record import record_file
from smtmma.vectors import read_vectors

SUITES = Path(__file__).resolve().parents[1] / "suites"


def _generator():
    spec = importlib.util.spec_from_file_location("suites_generate", SUITES / "generate.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


GEN = _generator()


@pytest.mark.parametrize("instr", GEN.SUITE_INSTRS)
def test_shipped_catalogue_suite_is_what_the_generator_writes(instr: str) -> None:
    shipped = (SUITES / f"{instr}.jsonl").read_text().splitlines()
    assert shipped == GEN.catalogue_lines(instr), f"suites/{instr}.jsonl is stale: run python suites/generate.py"


def test_every_shipped_expectation_is_the_models_output() -> None:
    files = sorted(SUITES.glob("*.jsonl"))
    assert len(files) == len(GEN.SUITE_INSTRS) + 1
    report = check_files(files)
    assert report.errors == 0 and report.expect_disagree == 0
    for f in report.files:
        assert f.expect_lines == f.lines > 0 and f.expect_checked > 0


@pytest.mark.parametrize("instr", GEN.SUITE_INSTRS)
def test_a_recorded_run_of_a_suite_names_the_class_of_the_gpu(instr: str, tmp_path: Path) -> None:
    """A user's GPU, played by the simulator of each catalogue class: check reads off exactly that class."""
    suite = build_suite(catalogue_space(instr))
    for cls in suite.classes:
        out = tmp_path / "run.jsonl"
        rep = record_file(open_device(f"sim:{cls.names[0]}"), SUITES / f"{instr}.jsonl", out)
        assert rep.error is None and rep.written == len(suite.vectors)
        (f,) = check_files([out]).files
        assert f.mismatched == 0 and sorted(f.consistent) == sorted(cls.names)


def test_open_questions_split_their_hypotheses() -> None:
    vectors = read_vectors(SUITES / "open-questions.jsonl")
    asked = {(json.loads(json.dumps(v.raw))["question"], v.arch, v.instr) for v in vectors}
    assert len(asked) == len(QUESTIONS)
    for v in vectors:
        assert len(v.expect) >= 2 and len(set(v.expect.values())) == len(v.expect), v.raw
        assert set(v.raw["hypotheses"]) == set(v.expect)
    names = {q.name for q in QUESTIONS}
    assert names == {"zero-products-in-emax", "zero-c-in-emax", "sign-of-zero-sum", "alignment-floor-133", "amd-nan-pattern"}
