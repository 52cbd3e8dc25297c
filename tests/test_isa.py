"""Instruction shapes (smtmma.isa) against the catalogue rows."""

from __future__ import annotations

import re

import pytest

from smtmma.catalogue import ARCHS, CATALOGUE, INSTRS
from smtmma.isa import SHAPES, InstrShape

FAMILIES = {"nvidia": {"mma", "wgmma", "tcgen05", "wmma"}, "amd": {"mfma", "mfma_1k", "wmma"}}

# (arch, instr, family) in SHAPES with no catalogue row yet: PTX mma.sync on
# sm_90/sm_100 for FP8 (rows to be added to the catalogue later).
_FP8 = tuple(f"{a}{b}{cd}" for a in ("e4m3", "e5m2") for b in ("e4m3", "e5m2") for cd in ("f32", "f16"))
PENDING = {(arch, instr, "mma") for arch in ("sm90", "sm100") for instr in _FP8}

# k of one issue that is neither a multiple of the model's L nor below it:
# none known.  An entry here is an (arch, instr, op, shape name) reported as
# an exception instead of being forced to fit.
FDPA_K_EXCEPTIONS: set[tuple[str, str, str, str]] = set()


def _all_shapes():
    for arch, by_instr in SHAPES.items():
        for instr, by_family in by_instr.items():
            for family, shapes in by_family.items():
                for s in shapes:
                    yield arch, instr, family, s


def test_every_catalogue_row_has_shapes():
    missing = [(e.arch, e.instr, e.op) for e in CATALOGUE if not e.shapes]
    assert not missing, missing


def test_catalogue_rows_carry_isa_shapes():
    for e in CATALOGUE:
        assert e.shapes == SHAPES[e.arch][e.instr][e.op]


def test_shapes_keys_are_known():
    rows = {(e.arch, e.instr, e.op) for e in CATALOGUE}
    for arch, by_instr in SHAPES.items():
        assert arch in ARCHS
        for instr, by_family in by_instr.items():
            assert instr in INSTRS, instr
            for family, shapes in by_family.items():
                assert family in FAMILIES[ARCHS[arch].vendor], (arch, family)
                assert isinstance(shapes, tuple) and shapes, (arch, instr, family)
                assert (arch, instr, family) in rows | PENDING, (arch, instr, family)


def test_pending_mma_fp8_shapes():
    for arch, instr, family in PENDING:
        names = {s.name for s in SHAPES[arch][instr][family]}
        assert "mma.sync.aligned.m16n8k32" in names


def test_dimensions_positive_and_names_unique():
    for arch, instr, family, s in _all_shapes():
        assert isinstance(s, InstrShape)
        assert s.m > 0 and s.n > 0 and s.k > 0, (arch, instr, family, s)
    for arch, by_instr in SHAPES.items():
        for instr, by_family in by_instr.items():
            for family, shapes in by_family.items():
                names = [s.name for s in shapes]
                assert len(names) == len(set(names)), (arch, instr, family, names)


_AMD = re.compile(r"^v_(?:mfma|mfma_scale|wmma)_(f32|f64|f16)_(\d+)x(\d+)x(\d+)(_\d+b)?"
                  r"(_?(f32|f64|f16|bf16|xf32|fp8_fp8|fp8_bf8|bf8_fp8|bf8_bf8|f8f6f4))(_1k)?$")
#: the OCP fp8 types of gfx950 and gfx12 keep the CDNA3 mnemonics' fp8/bf8 tags (llvm/llvm-project PR 106160)
_OCP_TAG = {"e4m3": "fp8", "e5m2": "bf8"}
_F8F6F4_OCP = ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1")


def test_amd_names_parse_back():
    for arch, instr, family, s in _all_shapes():
        if ARCHS[arch].vendor != "amd":
            continue
        mt = _AMD.match(s.name)
        assert mt, s.name
        assert tuple(int(x) for x in mt.group(2, 3, 4)) == (s.m, s.n, s.k), s
        assert (mt.group(8) == "_1k") == (family == "mfma_1k"), s
        if arch in ("gfx942", "gfx950", "gfx11", "gfx12"):  # CDNA3 on spell the type after an underscore, no _1k
            assert mt.group(6).startswith("_") and mt.group(8) is None, s
        else:
            assert not mt.group(6).startswith("_") and mt.group(5) is None, s


def test_amd_operand_type_in_name():
    want = {"f32f32": "f32", "f64f64": "f64", "tf32f32": "xf32", "f16f32": "f16", "bf16f32": "bf16"}
    for arch, instr, family, s in _all_shapes():
        if ARCHS[arch].vendor != "amd":
            continue
        mt = _AMD.match(s.name)
        ty = mt.group(7)  # type: ignore[union-attr]
        i = INSTRS[instr]
        assert mt.group(1) == {"fp32": "f32", "fp64": "f64", "fp16": "f16"}[i.d_fmt], s  # type: ignore[union-attr]
        if instr in want or instr == "f16f16":
            assert ty == want.get(instr, "f16"), s
        elif ty == "f8f6f4":  # gfx950: A's and B's types are operands (CBSZ, BLGP); scale forms for the MX types
            assert arch == "gfx950" and {i.a_fmt, i.b_fmt} <= set(_F8F6F4_OCP), s
            assert s.name.startswith("v_mfma_scale_") == (i.scale_fmt == "ue8m0"), s
        elif arch == "gfx942":  # fp8fp8f32 -> fp8_fp8
            assert ty == f"{instr[:3]}_{instr[3:6]}", s
        else:  # OCP e4m3e5m2f32 -> fp8_bf8
            assert ty == f"{_OCP_TAG[i.a_fmt]}_{_OCP_TAG[i.b_fmt]}", s


_NV = re.compile(r"^(mma\.sync\.aligned|wgmma\.mma_async\.sync\.aligned)\.m(\d+)n(\d+)k(\d+)")
_TC05_K = {"tf32": 8, "f16": 16, "f8f6f4": 32, "mxf8f6f4": 32, "mxf4": 64, "mxf4nvf4": 64}


def test_nvidia_names_match_shape():
    for arch, instr, family, s in _all_shapes():
        if ARCHS[arch].vendor != "nvidia":
            continue
        if family == "tcgen05":
            mt = re.fullmatch(r"tcgen05\.mma\.cta_group::1\.kind::(\w+)(\.block_scale)?", s.name)
            assert mt, s.name
            assert s.k == _TC05_K[mt.group(1)], s
            assert s.m in (64, 128) and s.n % 8 == 0 and 8 <= s.n <= 256, s
            assert bool(mt.group(2)) == instr.startswith(("mx", "nv")), s
            continue
        mt = _NV.match(s.name)
        assert mt, s.name
        assert tuple(int(x) for x in mt.group(2, 3, 4)) == (s.m, s.n, s.k), s
        assert (family == "wgmma") == mt.group(1).startswith("wgmma"), s
        if family == "wgmma":
            assert arch == "sm90" and s.m == 64 and s.n % 8 == 0 and 8 <= s.n <= 256, s
        if ".kind::" in s.name:
            assert arch in ("sm120", "sm121"), s


@pytest.mark.parametrize(
    "arch,instr,k",
    [
        ("sm70", "f16f32", 4),
        ("sm75", "f16f16", 8),
        ("sm80", "f16f32", 16),
        ("sm80", "tf32f32", 8),
        ("sm89", "e4m3e5m2f32", 32),
        ("sm90", "f64f64", 16),
        ("sm120", "mxf4f32", 64),
        ("gfx908", "f16f32", 16),
        ("gfx942", "fp8bf8f32", 32),
    ],
)
def test_largest_k(arch, instr, k):
    fam = "mfma" if arch.startswith("gfx") else "mma"
    assert max(s.k for s in SHAPES[arch][instr][fam]) == k


def test_fdpa_k_fits_vector_length():
    """Each issue's k is a whole number of L-term dot products, or fits in one."""
    bad = []
    for e in CATALOGUE:
        if not e.model.kind.endswith("fdpa") or e.model.L is None:
            continue
        for s in e.shapes:
            if (e.arch, e.instr, e.op, s.name) in FDPA_K_EXCEPTIONS:
                continue
            if not (s.k % e.model.L == 0 or s.k < e.model.L):
                bad.append((e.arch, e.instr, e.op, s.name, s.k, e.model.L))
    assert not bad, bad
