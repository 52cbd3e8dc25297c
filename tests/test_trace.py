"""Traces of one dot product through a model, and where two models first differ (smtmma.trace)."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

import smtmma
from catalogue_rows import rows_param
from smtmma.catalogue import CATALOGUE
from smtmma.cli import main
from smtmma.formats import Special, carried_in, get_format, to_fraction
from smtmma.models import parse_model_spec
from smtmma.trace import first_divergence, trace_dot


def M(arch: str, instr: str = "f16f32", op: str | None = None) -> smtmma.Model:
    return smtmma.lookup(arch, instr, op).model


ONE16, ONE32 = 0x3C00, 0x3F800000


@pytest.mark.parametrize("entry", rows_param(CATALOGUE))
def test_every_trace_ends_on_the_simulators_output(entry) -> None:
    """The last recorded step is D itself, for every model kind (stages, chunks, C added last)."""
    m = entry.model
    rng = np.random.default_rng(7)
    K = 2 * (m.L or 4) if m.kind != "fma" else 3
    fa, fb, fc = (get_format(f) for f in (m.a_fmt, m.b_fmt, m.c_fmt))
    a = [int(x) for x in rng.integers(0, 1 << fa.bits, K, dtype=np.uint64)]
    b = [int(x) for x in rng.integers(0, 1 << fb.bits, K, dtype=np.uint64)]
    c = int(rng.integers(0, 1 << min(fc.bits, 63), dtype=np.uint64))
    sa = sb = None
    if m.scale_fmt:
        n = -(-K // m.block)
        sa, sb = [127] * n if m.scale_fmt == "ue8m0" else [0x38] * n, [127] * n if m.scale_fmt == "ue8m0" else [0x38] * n
    d = int(smtmma.simulate_dot(m, None, np.array([a], dtype=np.uint64), np.array([b], dtype=np.uint64),
                                np.array([c], dtype=np.uint64), scale_a=None if sa is None else np.array([sa], dtype=np.uint64),
                                scale_b=None if sb is None else np.array([sb], dtype=np.uint64))[0])
    stages, steps = trace_dot(m, a, b, c, sa, sb)
    out = carried_in(m.d_fmt)
    want = to_fraction(out, d)
    names = {Special.NAN: "nan", Special.INF: "inf", Special.NINF: "-inf"}
    assert stages[0] == "inputs as the unit reads them" and len(stages) >= 2
    assert steps[-1].value == (want if isinstance(want, Fraction) else names[want])


def test_flushed_input_is_the_first_difference() -> None:
    ftz = parse_model_spec("t-fdpa:ftz_inputs", like=M("sm70"))
    div = first_divergence(M("sm70"), ftz, [0x0001], [ONE16], 0)
    assert div.label == "inputs as the unit reads them: a[0]"
    assert div.values == (Fraction(1, 2**24), Fraction(0)) and div.structure is None


def test_rounding_mode_differs_only_in_the_result() -> None:
    """1 + 3 * 2^-24 = 1 + 1.5 ulp: the fused sums agree (F = 24 keeps it); RZ gives 1 + 1 ulp, RNE 1 + 2 ulps."""
    a = [ONE16, 0x0001, 0x0001, 0x0001]  # 1, 2^-24, 2^-24, 2^-24
    b = [ONE16, 0x3C00, 0x3C00, 0x3C00]
    div = first_divergence(M("sm80"), M("sm80").replace(rho="rne-fp32"), a, b, 0)
    assert div.label == "FDPA 1 of 1 (lanes 0-3): FDPA result"
    assert div.values == (1 + Fraction(1, 2**23), 1 + Fraction(1, 2**22))


def test_a_wider_accumulator_differs_in_the_fused_sum() -> None:
    """2^-25 survives F = 25 but not F = 24 (alignment at e_max = 0)."""
    a, b = [ONE16, 0x0001], [ONE16, 0x3800]  # 1*1 + 2^-24 * 0.5
    div = first_divergence(M("sm80"), M("sm80").replace(F=25), a, b, 0)
    assert div.label == "FDPA 1 of 1 (lanes 0-1): truncated fused sum, before rounding"
    assert div.values == (Fraction(1), 1 + Fraction(1, 2**25))


def test_different_chunking_shows_each_models_stages() -> None:
    a = [ONE16] * 16
    div = first_divergence(M("sm80"), M("sm90"), a, [ONE16] * 16, ONE32)
    assert div.structure is not None
    s80, s90 = div.structure
    assert s80 == [("FDPA 1 of 2 (lanes 0-7)", 9), ("FDPA 2 of 2 (lanes 8-15)", 17)]
    assert s90 == [("FDPA 1 of 1 (lanes 0-15)", 17)]
    assert div.label is None  # no step both record differs: the outputs agree here


def test_distinguish_json_names_the_diverging_step(capsys) -> None:
    assert main(["distinguish", "sm80", "t-fdpa:F=25", "--instr", "f16f32", "--json"]) == 0
    dif = json.loads(capsys.readouterr().out)["differences"][0]
    assert dif["step"] == "FDPA 1 of 1 (lanes 0-7): truncated fused sum, before rounding"
    assert len(dif["step_values"]) == 2 and dif["step_values"][0] != dif["step_values"][1]
    assert "stages" not in dif


def test_simulate_trace_prints_each_stage_exactly(capsys) -> None:
    assert main(["simulate", "--arch", "sm90", "--instr", "e4m3f32", "--a", "1,2^-9,2^-9", "--b", "1,1,1", "--c", "0", "--trace"]) == 0
    out = capsys.readouterr().out
    assert "  FDPA 1 of 1 (lanes 0-2)\n    alignment exponent e_max: 0\n" in out
    assert "    truncated fused sum, before rounding: 1.00390625\n    FDPA result: 1.00390625\n" in out


def test_simulate_trace_json_ends_on_d(capsys) -> None:
    assert main(["simulate", "--arch", "gfx90a", "--instr", "bf16f32", "--a", "1,2", "--b", "1,1", "--c", "0.5", "--trace", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["trace"][-1] == {"step": "FTZ-AddMul of lanes 0-1: accumulator", "value": "3.5"}
    assert rec["d"] == "40600000"
