"""Recorded GPU outputs (../shared/hw-samples): every line must be reproduced bit for bit."""

from __future__ import annotations

from pathlib import Path

import pytest

from smtmma.check import check_files

HW_SAMPLES = Path(__file__).resolve().parents[1].parent / "shared" / "hw-samples"
FILES = sorted(HW_SAMPLES.glob("*.jsonl")) if HW_SAMPLES.is_dir() else []

pytestmark = pytest.mark.skipif(
    not FILES, reason=f"no recorded hardware data: {HW_SAMPLES} is absent or holds no *.jsonl files"
)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_hw_sample_file_matches(path):
    report = check_files([path])
    (f,) = report.files
    first = [m.to_dict() for m in f.mismatches[:3]]
    errors = [e.message for e in f.error_list[:3]]
    assert (f.lines, f.matched, f.mismatched, f.errors, f.no_expectation) == (300, 300, 0, 0, 0), (first, errors)


def test_all_hw_samples_at_once():
    report = check_files(FILES)
    assert report.lines == report.matched == 300 * len(FILES)
    assert report.mismatched == report.errors == 0
