"""The suites shipped in suites/: what suites/generate.py writes, every expectation reproduced, every class told apart."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

import smtmma
from smtmma.check import check_files
from smtmma.discriminators.provisional import PROVISIONAL_SUITES, provisional_space, suite_file
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


# ---------------------------------------------------------------- provisional architectures (suites/provisional/)

PROVISIONAL_FILES = [(a, i) for a, instrs in PROVISIONAL_SUITES.items() for i in instrs]


def test_every_provisional_suite_is_shipped_and_no_other() -> None:
    want = {suite_file(SUITES, a, i).name for a, i in PROVISIONAL_FILES}
    assert {p.name for p in (SUITES / "provisional").glob("*.jsonl")} == want


#: One suite per provisional architecture in CI (its first type); every suite under -m slow.
FIRST_FILES = [(a, instrs[0]) for a, instrs in PROVISIONAL_SUITES.items()]


@pytest.mark.parametrize("files", [pytest.param(FIRST_FILES, id="first-of-each-arch"),
                                   pytest.param(PROVISIONAL_FILES, id="all", marks=pytest.mark.slow)])
def test_provisional_suites_hold_their_space_and_the_models_outputs(files: list[tuple[str, str]]) -> None:
    """Every line's expect names exactly the candidates of the row's space and is each candidate's output (simulated
    again by check); the vectors split the classes they show within ceil(log2 M) + 1 vectors."""
    report = check_files([suite_file(SUITES, a, i) for a, i in files])
    assert report.errors == 0 and report.expect_disagree == 0
    for (arch, instr), f in zip(files, report.files):
        assert f.expect_lines == f.lines > 0 and f.expect_checked > 0 and f.provisional == [arch]
        vs = read_vectors(suite_file(SUITES, arch, instr))
        names = provisional_space(arch, instr).names
        assert all(list(v.expect) == names and v.arch == arch for v in vs), (arch, instr)
        classes = len({tuple(v.expect[n] for v in vs) for n in names})
        assert len(vs) <= math.ceil(math.log2(classes)) + 1, (arch, instr, len(vs), classes)


@pytest.mark.slow
@pytest.mark.parametrize("arch,instr", PROVISIONAL_FILES)
def test_shipped_provisional_suite_is_what_the_generator_writes(arch: str, instr: str) -> None:
    shipped = suite_file(SUITES, arch, instr).read_text().splitlines()
    assert shipped == GEN.provisional_lines(arch, instr), f"{arch}-{instr} is stale: run python suites/generate.py --provisional"


def test_a_recorded_run_of_a_provisional_suite_names_the_grid_point() -> None:
    """A B300 that rounds its FP16 sums to nearest instead of toward zero (a grid neighbour, played by the simulator)
    is named by that spec alone on the shipped sm103 f16f32 suite."""
    space = provisional_space("sm103", "f16f32")
    truth = space.by_name("t-fdpa:L=16,F=25,rho=rne-fp32")
    vs = read_vectors(suite_file(SUITES, "sm103", "f16f32"))
    got = [int(smtmma.simulate_dot(truth.model, None, [v.a], [v.b], [v.c])[0]) for v in vs]
    fits = [n for n in space.names if all(v.expect[n] == d for v, d in zip(vs, got))]
    assert fits == ["t-fdpa:L=16,F=25,rho=rne-fp32"]
