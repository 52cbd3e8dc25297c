"""The symbolic interpretation against the simulator: one definition per op, two interpretations, same bits.

Every catalogue model's SMT formula is evaluated by a solver on random bit
streams (subnormals, infinities and NaNs included) and must give the
simulator's bits.  CI runs 24 inputs per distinct model with the default backend;
``-m slow`` runs 200 per catalogue entry, and a z3/cvc5 pass on a few models.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import smtmma
from catalogue_rows import rows_param
from smtmma.catalogue import CATALOGUE, Entry
from smtmma.formats import get_format
from smtmma.queries.backends import available
from smtmma.queries.evaluate import evaluate_formula

pytestmark = pytest.mark.skipif(not available(), reason="no SMT backend installed")


def _inputs(e: Entry, n: int, seed: int) -> tuple:
    m = e.model
    rng = np.random.default_rng(seed)
    K = {"gst-fdpa": 32, "ftz-addmul": 2 * (m.P or 2), "fma": 2}.get(m.kind, min(m.L or 4, 16) + 1)
    fa, fb, fc = (get_format(x) for x in (m.a_fmt, m.b_fmt, m.c_fmt))
    a = rng.integers(0, 1 << fa.bits, (n, K), dtype=np.uint64)
    b = rng.integers(0, 1 << fb.bits, (n, K), dtype=np.uint64)
    c = rng.integers(0, 1 << fc.bits, n, dtype=np.uint64)
    # a third of the rows: small exponents so the finite datapath, not only specials, is exercised
    if fa.bits > 4 and fa.bias > 2:
        half = (fa.bias - 2) << fa.man_bits
        a[: n // 3] = (a[: n // 3] & ((1 << fa.man_bits) - 1)) | half | (a[: n // 3] & (1 << (fa.bits - 1)))
    sa = sb = None
    if m.scale_fmt:
        sf = get_format(m.scale_fmt)
        nb = -(-K // m.block)
        sa = rng.integers(0, 1 << sf.bits, (n, nb), dtype=np.uint64)
        sb = rng.integers(0, 1 << sf.bits, (n, nb), dtype=np.uint64)
    return a, b, c, sa, sb


def _ids(e: Entry) -> str:
    return f"{e.arch}-{e.instr}-{e.op}"


def _compare(e: Entry, n: int, seed: int, solver: str | None = None) -> None:
    a, b, c, sa, sb = _inputs(e, n, seed)
    want = smtmma.simulate_dot(e.model, None, a, b, c, scale_a=sa, scale_b=sb).tolist()
    got = evaluate_formula(e.model, a, b, c, sa, sb, solver=solver)
    bad = [(i, hex(g), hex(w)) for i, (g, w) in enumerate(zip(got, want)) if g != w]
    assert not bad, f"{e.model.describe()}: formula vs simulator (row, formula, simulator): {bad[:5]}"


#: one entry per distinct model: entries sharing a model (mma and wgmma rows, aliases) build the same formula
DISTINCT = list({e.model: e for e in reversed(CATALOGUE)}.values())[::-1]


@pytest.mark.parametrize("entry", rows_param(DISTINCT))
def test_formula_matches_simulator(entry: Entry) -> None:
    _compare(entry, 24, seed=zlib.crc32(_ids(entry).encode()) % 1000)


@pytest.mark.slow
@pytest.mark.parametrize("entry", CATALOGUE, ids=_ids)
def test_formula_matches_simulator_200(entry: Entry) -> None:
    _compare(entry, 200, seed=1 + zlib.crc32(_ids(entry).encode()) % 1000)


@pytest.mark.parametrize("solver", ["z3", "cvc5"])
def test_other_backends_read_the_formula_the_same(solver: str) -> None:
    if solver not in available():
        pytest.skip(f"{solver} not installed")
    for arch, instr, op in (("sm80", "f16f32", None), ("gfx942", "fp8fp8f32", None)):
        e = smtmma.lookup(arch, instr, op)
        _compare(e, 6, seed=5, solver=solver)


@pytest.mark.parametrize("arch, instr, flags", [
    ("sm80", "f16f32", {"zero_emax": True}),
    ("sm80", "bf16f32", {"zero_emax": True, "ieee_zero": True}),
    ("sm90", "f16f16", {"ieee_zero": True}),
    ("sm100", "mxe4m3f32", {"zero_emax": True, "ieee_zero": True}),
])
def test_hypothesis_flags_read_the_same_in_the_formula(arch: str, instr: str, flags: dict) -> None:
    """zero_emax / ieee_zero (suites/open-questions.jsonl): formula and simulator agree, zeros of both signs included."""
    e = smtmma.lookup(arch, instr)
    variant = Entry(e.arch, e.instr, e.op, e.model.replace(**flags), e.source)
    a, b, c, sa, sb = _inputs(variant, 24, seed=11)
    fa, fb, fc = (get_format(x) for x in (variant.model.a_fmt, variant.model.b_fmt, variant.model.c_fmt))
    a[:6], b[:6], c[:6] = 0, fb.sign_mask, fc.sign_mask  # sums of -0s: the ieee_zero case
    a[6:10, 1:] = 0  # one live product among zeros: the zero_emax case
    want = smtmma.simulate_dot(variant.model, None, a, b, c, scale_a=sa, scale_b=sb).tolist()
    got = evaluate_formula(variant.model, a, b, c, sa, sb)
    assert got == want
