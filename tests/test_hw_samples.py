"""Recorded GPU outputs (hw-samples/): every line must be reproduced bit for bit."""

from __future__ import annotations

from pathlib import Path

import pytest

from smtmma.check import check_files

HW_SAMPLES = Path(__file__).resolve().parents[1] / "hw-samples"
FILES = sorted(HW_SAMPLES.glob("*.jsonl"))
#: Khattak and Mikaitis's validation data: 300 lines each.
PUBLIC = [p for p in FILES if not p.name.startswith("H200-")]
#: smtmma's own survey of an H200, its probes and its property cases, with the lines each file holds.
SURVEY_LINES = {"H200-probes": 58, "H200-properties": 578, "H200-survey-bf16f32": 248, "H200-survey-e4m3e4m3f16": 244, "H200-survey-e4m3e4m3f32": 244,
                "H200-survey-e4m3e5m2f16": 244, "H200-survey-e4m3e5m2f32": 244, "H200-survey-e5m2e4m3f16": 244, "H200-survey-e5m2e4m3f32": 244,
                "H200-survey-e5m2e5m2f16": 244, "H200-survey-e5m2e5m2f32": 244, "H200-survey-f16f16": 249, "H200-survey-f16f32": 245,
                "H200-survey-f64f64": 263, "H200-survey-tf32f32": 248}


def test_the_samples_ship_with_their_licence_and_provenance():
    assert len(PUBLIC) == 7
    assert "BSD 2-Clause" in (HW_SAMPLES / "LICENSE").read_text()
    readme = (HW_SAMPLES / "README.md").read_text()
    assert "Khattak" in readme and "driver" in readme and "H200-survey.md" in readme
    assert sorted(p.stem for p in FILES if p not in PUBLIC) == sorted(SURVEY_LINES)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_hw_sample_file_matches(path):
    report = check_files([path])
    (f,) = report.files
    first = [m.to_dict() for m in f.mismatches[:3]]
    errors = [e.message for e in f.error_list[:3]]
    n = SURVEY_LINES.get(path.stem, 300)
    assert (f.lines, f.matched, f.mismatched, f.errors, f.no_expectation) == (n, n, 0, 0, 0), (first, errors)


def test_all_hw_samples_at_once():
    report = check_files(FILES)
    assert report.lines == report.matched == 300 * len(PUBLIC) + sum(SURVEY_LINES.values())
    assert report.mismatched == report.errors == 0


def test_the_readme_set_up_command_checks_the_shipped_samples():
    import glob
    import re

    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text()
    cmd = re.search(r"```sh\n(python -m pip install [^\n]*)\n```", readme).group(1)
    check = cmd.split("&&", 1)[1].split()
    assert check[:2] == ["smtmma", "check"]
    paths = [p for pattern in check[2:] for p in sorted(glob.glob(str(root / pattern)))]
    assert [Path(p) for p in paths] == FILES  # a fresh clone has everything the command names
    report = check_files(paths)
    assert report.lines == report.matched == 300 * len(PUBLIC) + sum(SURVEY_LINES.values())
