"""Differential tests: the simulator (smtmma.simulate_dot) against the exact reference.

For every distinct catalogue model (every catalogue entry under ``-m slow``), dot products are drawn

* by Hypothesis: K below, at, above and not a multiple of L; elements from
  uniformly random patterns, from a table of special patterns of each format
  (zeros, extremes, subnormals, inf, NaN), or from the samplers of
  :mod:`smtmma.sampling` with a drawn seed;
* in batches: every sampling kind of §3.1.4 through one ``simulate_dot``
  call per K, compared with :func:`reference.reference_dot` line by line.

Every comparison is bit for bit.  Hypothesis runs ~50 examples per model by
default; ``SMTMMA_HYPOTHESIS_PROFILE=thorough`` runs 1000.  The light batch
(unmarked) draws 200 dot products per model; the heavy one (``slow``) 2000
per entry and sampling kind.
"""

from __future__ import annotations

import os
import zlib
from collections import Counter
from fractions import Fraction
from typing import Iterator, Optional

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from smtmma import sampling
from catalogue_rows import rows_param
from smtmma.catalogue import CATALOGUE, Entry
from smtmma.formats import Format, get_format
from smtmma.models import Model

from reference import reference_dot, round_fraction

simulate_dot = pytest.importorskip("smtmma").simulate_dot

settings.register_profile(
    "smtmma-default", max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.register_profile(
    "thorough", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
_PROFILE = os.environ.get("SMTMMA_HYPOTHESIS_PROFILE", "smtmma-default")
_SETTINGS = settings(settings.get_profile(_PROFILE if _PROFILE in ("smtmma-default", "thorough") else "smtmma-default"))


def entry_id(e: Entry) -> str:
    """Readable id of a catalogue row: ``sm90-f16f32-mma``."""
    return f"{e.arch}-{e.instr}-{e.op}"


ENTRIES = list(CATALOGUE)
IDS = [entry_id(e) for e in ENTRIES]
#: One catalogue row per distinct model: rows with equal models run the same code on the same inputs, so the fast
#: tests take each model once, less the format pairs whose formats their algorithm already had
#: (catalogue_rows.repeats_formats), and ``-m slow`` takes every row.
_FIRST: dict = {}
for _e in ENTRIES:
    _FIRST.setdefault(_e.model, _e)
MODEL_ENTRIES = list(_FIRST.values())
MODEL_IDS = [entry_id(e) for e in MODEL_ENTRIES]

#: Passing comparisons per model kind and input source (printed at module teardown, see -s).
COUNTS: Counter = Counter()


@pytest.fixture(scope="module", autouse=True)
def _report_counts() -> Iterator[None]:
    yield
    if COUNTS:
        lines = [f"  {kind:<11} {src:<16} {n:>8}" for (kind, src), n in sorted(COUNTS.items())]
        print("\ndifferential comparisons passed (model kind, source, count):\n" + "\n".join(lines))


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def chunk_length(model: Model) -> int:
    """The natural chunk of the model: L for FDPAs, P for FTZ-AddMul, 4 for FMA chains."""
    return model.L or model.P or 4


def k_values(model: Model) -> list[int]:
    """K below, at, above and not a multiple of the chunk length."""
    L = chunk_length(model)
    ks = {1, max(1, L - 1), L, L + 1, 2 * L, 2 * L + 3}
    if model.kind == "fma":
        ks |= {7, 13}
    return sorted(ks)


def n_scales(model: Model, K: int) -> int:
    return -(-K // model.block) if model.block else 0


def hex_list(xs: object) -> str:
    return "[" + ", ".join(f"{int(x):#x}" for x in np.asarray(xs).ravel()) + "]"


def describe(model: Model, a: object, b: object, c: int, sa: object = None, sb: object = None) -> str:
    s = f"{model.describe()} a={hex_list(a)} b={hex_list(b)} c={int(c):#x}"
    if sa is not None:
        s += f" scale_a={hex_list(sa)} scale_b={hex_list(sb)}"
    return s


def run_sim(model: Model, a: np.ndarray, b: np.ndarray, c: np.ndarray,
            sa: Optional[np.ndarray] = None, sb: Optional[np.ndarray] = None) -> np.ndarray:
    kw = {}
    if model.scale_fmt is not None:
        kw = dict(scale_a=sa, scale_b=sb)
    return np.asarray(simulate_dot(model, None, a, b, c, **kw))


def run_ref(model: Model, a: np.ndarray, b: np.ndarray, c: int,
            sa: Optional[np.ndarray] = None, sb: Optional[np.ndarray] = None) -> int:
    if model.scale_fmt is not None:
        return reference_dot(model, list(a), list(b), int(c), list(sa), list(sb))
    return reference_dot(model, list(a), list(b), int(c))


def special_patterns(fmt: Format) -> list[int]:
    """Edge patterns of a format: ±0, ±1, extremes, subnormals, ±inf, NaNs."""
    out = {0, fmt.sign_mask}
    top_finite = (fmt.max_exp_field << fmt.man_bits) | (fmt.max_sig & ((1 << fmt.man_bits) - 1))
    for mag in (
        round_fraction(Fraction(1), fmt, "rne"),
        top_finite,
        top_finite - 1,
        1 << fmt.man_bits,  # smallest normal
        1,  # smallest subnormal
        (1 << fmt.man_bits) - 1,  # largest subnormal
        round_fraction(Fraction(3, 2), fmt, "rne"),
        round_fraction(Fraction(1, 2), fmt, "rne"),
    ):
        out |= {mag, mag | fmt.sign_mask}
    if fmt.has_inf:
        out |= {fmt.inf_bits(), fmt.inf_bits(negative=True)}
    if fmt.nan != "none":
        out.add(fmt.nan_bits())
        if fmt.nan == "ieee":
            out |= {fmt.nan_bits() | fmt.sign_mask, fmt.inf_bits() | 1}
        if fmt.nan == "all_ones":
            out.add(fmt.nan_bits() | fmt.sign_mask)
    return sorted(x for x in out if 0 <= x < (1 << fmt.bits))


def element(fmt: Format) -> st.SearchStrategy[int]:
    return st.one_of(st.integers(0, (1 << fmt.bits) - 1), st.sampled_from(special_patterns(fmt)))


def scale_element(fmt: Format) -> st.SearchStrategy[int]:
    if fmt.name == "ue8m0":
        return st.one_of(st.integers(127 - 30, 127 + 30), st.integers(0, 255))
    return st.one_of(st.integers(0x30, 0x48), st.integers(0, 255))


@st.composite
def near(draw: st.DrawFn, fmt: Format, center: int, spread: int) -> int:
    """A pattern with random sign and fraction and an unbiased exponent within ``spread`` of ``center``."""
    top = fmt.max_exp_field
    efield = min(max(fmt.bias + center + draw(st.integers(-spread, spread)), 0), top)
    man = draw(st.integers(0, (1 << fmt.man_bits) - 1))
    pattern = (efield << fmt.man_bits) | man
    if efield == top and fmt.nan == "all_ones":
        pattern = min(pattern, fmt.nan_bits() - 1)
    if fmt.signed and not fmt.sign_ignored and draw(st.booleans()) and not (fmt.nan == "neg_zero" and pattern == 0):
        pattern |= fmt.sign_mask
    return pattern


@st.composite
def dot_inputs(draw: st.DrawFn, model: Model) -> tuple[np.ndarray, np.ndarray, np.ndarray, Optional[np.ndarray], Optional[np.ndarray]]:
    """One dot product (a, b of shape (1, K); c of shape (1,); scales (1, ceil(K/block)) or None)."""
    fa, fb, fc = get_format(model.a_fmt), get_format(model.b_fmt), get_format(model.c_fmt)
    L = chunk_length(model)
    K = draw(st.one_of(st.sampled_from(k_values(model)), st.integers(1, 3 * L + 2)))
    source = draw(st.sampled_from(["patterns", "sampler", "window", "zeros"]))
    if source == "zeros":
        # signed zeros, ones and subnormals: zero signs, padding, FTZ, e_max without zero terms
        def pick(f: Format) -> st.SearchStrategy[int]:
            one = round_fraction(Fraction(1), f, "rne")
            pool = sorted({0, f.sign_mask, one, one | f.sign_mask, 1, 1 | f.sign_mask} - ({f.sign_mask} if f.nan == "neg_zero" else set()))
            return st.sampled_from(pool)

        a = np.array([draw(st.lists(pick(fa), min_size=K, max_size=K))], dtype=sampling.dtype_for(fa))
        b = np.array([draw(st.lists(pick(fb), min_size=K, max_size=K))], dtype=sampling.dtype_for(fb))
        c = np.array([draw(pick(fc))], dtype=sampling.dtype_for(fc))
    elif source == "window":
        # products and c within a few binades of each other: alignment and truncation boundaries
        spread = draw(st.integers(0, 3))
        a = np.array([draw(st.lists(near(fa, 0, spread), min_size=K, max_size=K))], dtype=sampling.dtype_for(fa))
        b = np.array([draw(st.lists(near(fb, 0, spread), min_size=K, max_size=K))], dtype=sampling.dtype_for(fb))
        c = np.array([draw(near(fc, draw(st.integers(-40, 8)), 0))], dtype=sampling.dtype_for(fc))
    elif source == "sampler":
        kind = draw(st.sampled_from(sampling.KINDS))
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        a, b, c = sampling.draw_dot(kind, fa, fb, fc, 1, K, rng)
    else:
        a = np.array([draw(st.lists(element(fa), min_size=K, max_size=K))], dtype=sampling.dtype_for(fa))
        b = np.array([draw(st.lists(element(fb), min_size=K, max_size=K))], dtype=sampling.dtype_for(fb))
        c = np.array([draw(element(fc))], dtype=sampling.dtype_for(fc))
    sa = sb = None
    if model.scale_fmt is not None:
        sf = get_format(model.scale_fmt)
        ns = n_scales(model, K)
        sa = np.array([draw(st.lists(scale_element(sf), min_size=ns, max_size=ns))], dtype=sampling.dtype_for(sf))
        sb = np.array([draw(st.lists(scale_element(sf), min_size=ns, max_size=ns))], dtype=sampling.dtype_for(sf))
    return a, b, c, sa, sb


# ---------------------------------------------------------------------------
# Hypothesis: every catalogue entry
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("entry", rows_param(MODEL_ENTRIES, thin=True))
def test_simulator_matches_reference(entry: Entry) -> None:
    model = entry.model

    @_SETTINGS
    @given(dot_inputs(model))
    def check(inputs: tuple) -> None:
        a, b, c, sa, sb = inputs
        got = int(run_sim(model, a, b, c, sa, sb)[0])
        want = run_ref(model, a[0], b[0], int(c[0]), None if sa is None else sa[0], None if sb is None else sb[0])
        assert got == want, f"{describe(model, a, b, c[0], sa, sb)}: reference {want:#x}, simulator {got:#x}"
        COUNTS[(model.kind, "hypothesis")] += 1

    check()


# ---------------------------------------------------------------------------
# Batches from every sampling kind
# ---------------------------------------------------------------------------


def _batch(entry: Entry, kind: str, n: int, seed_salt: str) -> tuple[int, list[str]]:
    """Compare n dot products of ``kind`` (spread over the K values); return (passed, mismatches)."""
    model = entry.model
    fa, fb, fc = model.a_fmt, model.b_fmt, model.c_fmt
    rng = np.random.default_rng(zlib.crc32(f"{entry_id(entry)}/{kind}/{seed_salt}".encode()))
    ks = k_values(model)
    passed, bad = 0, []
    for i, K in enumerate(ks):
        rows = n // len(ks) + (1 if i < n % len(ks) else 0)
        if rows == 0:
            continue
        a, b, c = sampling.draw_dot(kind, fa, fb, fc, rows, K, rng)
        sa = sb = None
        if model.scale_fmt is not None:
            ns = n_scales(model, K)
            sa = sampling.draw_scales(kind, model.scale_fmt, (rows, ns), rng)
            sb = sampling.draw_scales(kind, model.scale_fmt, (rows, ns), rng)
        got = run_sim(model, a, b, c, sa, sb)
        for r in range(rows):
            want = run_ref(model, a[r], b[r], int(c[r]), None if sa is None else sa[r], None if sb is None else sb[r])
            if int(got[r]) == want:
                passed += 1
            else:
                bad.append(
                    f"{describe(model, a[r], b[r], c[r], None if sa is None else sa[r], None if sb is None else sb[r])}:"
                    f" reference {want:#x}, simulator {int(got[r]):#x}"
                )
    return passed, bad


@pytest.mark.parametrize("entry", rows_param(MODEL_ENTRIES, thin=True))
def test_batched_light(entry: Entry) -> None:
    """200 dot products per entry, spread over the sampling kinds."""
    kinds = sampling.KINDS
    total_bad: list[str] = []
    for j, kind in enumerate(kinds):
        n = 200 // len(kinds) + (1 if j < 200 % len(kinds) else 0)
        passed, bad = _batch(entry, kind, n, "light")
        COUNTS[(entry.model.kind, kind)] += passed
        total_bad += bad
    assert not total_bad, f"{len(total_bad)} mismatches, first: " + "\n".join(total_bad[:5])


@pytest.mark.slow
@pytest.mark.parametrize("kind", sampling.KINDS)
@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_batched_heavy(entry: Entry, kind: str) -> None:
    """2000 dot products per entry and sampling kind, one simulate_dot call per K."""
    passed, bad = _batch(entry, kind, 2000, "heavy")
    COUNTS[(entry.model.kind, kind)] += passed
    assert not bad, f"{len(bad)} of 2000 mismatch, first: " + "\n".join(bad[:5])


# ---------------------------------------------------------------------------
# Hypothesis: parameterizations beyond the catalogue (candidate hypotheses)
# ---------------------------------------------------------------------------

_T_INPUTS = ["fp16", "bf16", "tf32", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1"]
_T_OUTPUTS = [("fp32", "rz-fp32"), ("fp32", "rne-fp32"), ("fp32", "rz-e8m13"), ("fp16", "rne-fp16")]


@st.composite
def random_models(draw: st.DrawFn) -> Model:
    """A model of any kind with parameters drawn around the catalogued ones (carry bits included)."""
    kind = draw(st.sampled_from(["fma", "ftz-addmul", "e-fdpa", "t-fdpa", "st-fdpa", "gst-fdpa", "tr-fdpa", "gtr-fdpa"]))
    nan = draw(st.sampled_from(["nvidia", "ieee"]))
    carry = draw(st.one_of(st.none(), st.integers(0, 4)))
    if kind == "fma":
        f = draw(st.sampled_from(["fp32", "fp64"]))
        return Model("fma", f, f, f, f, ftz_inputs=draw(st.booleans()))
    if kind == "ftz-addmul":
        f = draw(st.sampled_from(["fp16", "bf16"]))
        return Model(kind, f, f, "fp32", "fp32", P=draw(st.sampled_from([2, 4])), ftz_inputs=draw(st.booleans()))
    if kind == "e-fdpa":
        f = draw(st.sampled_from(["fp16", "bf16"]))
        return Model(kind, f, f, "fp32", "fp32", L=draw(st.integers(1, 8)), ftz_inputs=draw(st.booleans()))
    floor = draw(st.one_of(st.none(), st.sampled_from([-133, -15]), st.integers(-160, 0)))
    if kind == "t-fdpa":
        cd, rho = draw(st.sampled_from(_T_OUTPUTS))
        fa, fb = draw(st.sampled_from(_T_INPUTS)), draw(st.sampled_from(_T_INPUTS))
        small = {"e4m3", "e5m2", "e2m3", "e3m2", "e2m1"}
        via = draw(st.sampled_from([None, "fp16"])) if fa in small and fb in small else None
        L = draw(st.integers(1, 16))
        interleave = draw(st.sampled_from([None] + [i for i in (1, 2, 4) if L % i == 0]))  # lanes per register divide L
        return Model(kind, fa, fb, cd, cd, L=L, F=draw(st.integers(0, 40)), rho=rho,
                     carry_bits=carry, nan=nan, emax_floor=floor, via=via,
                     interleave=interleave, c_after=draw(st.booleans()), ftz_inputs=draw(st.booleans()),
                     zero_emax=draw(st.booleans()), ieee_zero=draw(st.booleans()))
    if kind == "st-fdpa":
        f8 = ["e4m3", "e5m2", "e2m3", "e3m2", "e2m1"]
        block = draw(st.sampled_from([8, 16, 32]))
        return Model(kind, draw(st.sampled_from(f8)), draw(st.sampled_from(f8)), "fp32", "fp32",
                     L=block * draw(st.sampled_from([1, 2])), F=draw(st.integers(10, 35)), rho="rz-fp32",
                     block=block, scale_fmt="ue8m0", carry_bits=carry, nan=nan, emax_floor=floor,
                     zero_emax=draw(st.booleans()), ieee_zero=draw(st.booleans()))
    if kind == "gst-fdpa":
        G = draw(st.sampled_from([4, 8, 16]))
        block = G * draw(st.sampled_from([1, 2]))
        return Model(kind, "e2m1", "e2m1", "fp32", "fp32", L=block * draw(st.sampled_from([1, 2])), G=G,
                     F=draw(st.integers(20, 40)), rho="rz-fp32", block=block,
                     scale_fmt=draw(st.sampled_from(["ue8m0", "ue4m3"])), carry_bits=carry, nan=nan, emax_floor=floor)
    F = draw(st.integers(10, 30))
    F2 = draw(st.integers(F, 40))
    if kind == "tr-fdpa":
        f = draw(st.sampled_from(["fp16", "bf16", "tf32"]))
        return Model(kind, f, f, "fp32", "fp32", L=draw(st.integers(1, 8)), F=F, F2=F2, rho="rne-fp32",
                     ftz_inputs=draw(st.booleans()))
    fa, fb = draw(st.sampled_from(["e4m3fnuz", "e5m2fnuz"])), draw(st.sampled_from(["e4m3fnuz", "e5m2fnuz"]))
    return Model(kind, fa, fb, "fp32", "fp32", L=2 * draw(st.integers(1, 8)), F=F, F2=F2, rho="rne-fp32")


@st.composite
def model_and_inputs(draw: st.DrawFn) -> tuple:
    model = draw(random_models())
    return (model,) + draw(dot_inputs(model))


@settings(_SETTINGS, max_examples=_SETTINGS.max_examples * 20)
@given(model_and_inputs())
def test_model_variants_match_reference(inputs: tuple) -> None:
    model, a, b, c, sa, sb = inputs
    got = int(run_sim(model, a, b, c, sa, sb)[0])
    want = run_ref(model, a[0], b[0], int(c[0]), None if sa is None else sa[0], None if sb is None else sb[0])
    assert got == want, f"{describe(model, a, b, c[0], sa, sb)}: reference {want:#x}, simulator {got:#x}"
    COUNTS[(model.kind, "variants")] += 1


# ---------------------------------------------------------------------------
# Known cases: Table 8 through the catalogue, and minimal inputs of past disagreements
# ---------------------------------------------------------------------------

#: Table 8 of the MMA-Sim paper: d for Eq. 10 by (architecture, input type).
TABLE8: dict[tuple[str, str], Fraction] = {
    ("sm70", "fp16"): Fraction(0), ("sm75", "fp16"): Fraction(-1, 2),
    ("sm80", "tf32"): Fraction(-1, 2), ("sm80", "bf16"): Fraction(-1, 2), ("sm80", "fp16"): Fraction(-1, 2),
    ("sm86", "tf32"): Fraction(-1, 2), ("sm86", "bf16"): Fraction(-1, 2), ("sm86", "fp16"): Fraction(-1, 2),
    ("sm89", "tf32"): Fraction(-1, 2), ("sm89", "bf16"): Fraction(-1, 2), ("sm89", "fp16"): Fraction(-1, 2),
    ("sm89", "fp8"): Fraction(0), ("sm90", "fp8"): Fraction(0),
    **{(arch, t): Fraction(-3, 4) for arch in ("sm90", "sm100", "sm120") for t in ("tf32", "bf16", "fp16")},
    ("sm100", "fp8"): Fraction(-3, 4), ("sm120", "fp8"): Fraction(-3, 4),
    ("gfx908", "bf16"): Fraction(-7, 8), ("gfx908", "fp16"): Fraction(-7, 8),
    ("gfx90a", "fp16"): Fraction(0),
    ("gfx942", "tf32"): Fraction(-1, 2), ("gfx942", "bf16"): Fraction(-1, 2), ("gfx942", "fp16"): Fraction(-1, 2),
    ("gfx942", "fp8"): Fraction(-1),
}
_TYPE = {"fp16": "fp16", "bf16": "bf16", "tf32": "tf32", "e5m2": "fp8", "e5m2fnuz": "fp8", "fp32": "fp32", "fp64": "fp64"}


def _table8_rows() -> list[tuple[Entry, Fraction]]:
    rows = []
    for e in ENTRIES:
        m = e.model
        t = _TYPE.get(m.a_fmt)
        if t is None or m.a_fmt != m.b_fmt or m.c_fmt not in ("fp32", "fp64") or m.scale_fmt is not None:
            continue  # e4m3 cannot hold 2^13; an fp16 C cannot hold 2^23
        if t in ("fp32", "fp64"):
            want = Fraction(-7, 8)  # "all FP64/FP32 instructions produce -0.875"
        elif e.arch == "gfx90a" and t == "bf16":
            want = Fraction(0) if e.op == "mfma_1k" else Fraction(-3, 8)
        elif (e.arch, t) in TABLE8 and not (t == "fp8" and m.via):
            want = TABLE8[(e.arch, t)]
        else:
            continue
        rows.append((e, want))
    return rows


@pytest.mark.parametrize("entry, want", _table8_rows(), ids=[entry_id(e) for e, _ in _table8_rows()])
def test_table8_through_catalogue(entry: Entry, want: Fraction) -> None:
    """Eq. 10 on every catalogued instruction that can hold its values gives Table 8's d."""
    from smtmma.formats import from_fraction, to_fraction

    m = entry.model
    av = (-(2**13), Fraction(-1, 2), Fraction(-1, 4), Fraction(-1, 8))
    bv = (2**10, 1, 1, 1)
    a = np.array([[from_fraction(m.a_fmt, Fraction(v)) for v in av]], dtype=sampling.dtype_for(m.a_fmt))
    b = np.array([[from_fraction(m.b_fmt, Fraction(v)) for v in bv]], dtype=sampling.dtype_for(m.b_fmt))
    c = np.array([from_fraction(m.c_fmt, Fraction(2**23))], dtype=sampling.dtype_for(m.c_fmt))
    want_bits = run_ref(m, a[0], b[0], int(c[0]))
    assert to_fraction(m.d_fmt, want_bits) == want
    assert int(run_sim(m, a, b, c)[0]) == want_bits


def _known() -> list[tuple[str, Model, list[int], list[int], int, int]]:
    from smtmma.catalogue import lookup

    fp8_via = lookup("sm90", "e4m3e5m2f32", "mma").model
    return [
        # via=fp16: an e4m3 subnormal (0x01 = 2^-9) is a normal fp16 (Exp -9, not -6), so
        # 2^6 - 2^6 + 2^-18 keeps 2^-18 at e_max = 6 (the f16f32 row gives the same)
        ("via-fp16-subnormal-exponent", fp8_via, [0x01, 0x81, 0x28], [0x78, 0x78, 0x01], 0, 0x36800000),
        # Alg. 5 line 1, L = min(K, L_max): a single -0 product plus c = -0 is -0 (no +0 padding)
        ("efdpa-short-negative-zero", Model("e-fdpa", "fp16", "fp16", "fp32", "fp32", L=4), [0x8000], [0x3CAD],
         0x80000000, 0x80000000),
    ]


@pytest.mark.parametrize("name, model, a, b, c, want", _known(), ids=[k[0] for k in _known()])
def test_known_cases(name: str, model: Model, a: list[int], b: list[int], c: int, want: int) -> None:
    assert run_ref(model, np.array(a), np.array(b), c) == want
    fa, fb, fc = (sampling.dtype_for(f) for f in (model.a_fmt, model.b_fmt, model.c_fmt))
    got = int(run_sim(model, np.array([a], dtype=fa), np.array([b], dtype=fb), np.array([c], dtype=fc))[0])
    assert got == want, f"{describe(model, a, b, c)}: expected {want:#x}, simulator {got:#x}"
