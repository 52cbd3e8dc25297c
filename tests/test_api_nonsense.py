"""Nonsense passed to the Python API: each call raises a one-line SmtmmaError before any work, never a bare
TypeError/IndexError from deep inside, and never returns a result (found by an audit of 823 bad calls)."""

from __future__ import annotations

from typing import Any, Callable

import pytest

import smtmma
from smtmma.discriminators.candidates import explicit_space
from smtmma.discriminators.identify import identify
from smtmma.discriminators.suite import build_suite
from smtmma.errors import SmtmmaError
from smtmma.formats import decode, encode, format_hex, to_fraction
from smtmma.hw.device import open_device
from smtmma.models import Model
from smtmma.queries.formula import Domain, parse_domain
from smtmma.report import check_output, load_records
from smtmma.trace import trace_dot
from smtmma.vectors import dump_vector, parse_line, read_vectors

M = smtmma.lookup("sm90", "f16f32").model
PAIR = dict(instr="f16f32", domain="lanes=2", timeout=5)


def _distinguish(**kw: Any) -> Callable[[], object]:
    return lambda: smtmma.distinguish("sm80", "sm90", **{**PAIR, **kw})


CALLS: list[tuple[str, Callable[[], object], str]] = [
    # models the encodings cannot run: refused when made
    ("model without parameters", lambda: Model("t-fdpa", "fp16", "fp16", "fp32", "fp32"), "t-fdpa needs L=N"),
    ("model without rho", lambda: M.replace(rho=None), "t-fdpa needs rho"),
    ("another kind's parameters", lambda: M.replace(kind="ftz-addmul"), "ftz-addmul takes no L, F, rho"),
    ("st-fdpa without scales", lambda: Model("st-fdpa", "e2m1", "e2m1", "fp32", "fp32", L=32, F=25, rho="rz-fp32", block=32),
     "st-fdpa multiplies block scales"),
    ("rho as a list", lambda: M.replace(rho=["rz-fp32"]), "model rho must be a name"),
    ("flag as a string", lambda: M.replace(c_after="no"), "model flag c_after must be True or False"),
    ("via too narrow", lambda: M.replace(via="e2m1"), "via=e2m1 cannot hold every fp16 value exactly"),
    ("scale format as D", lambda: Model("fma", "fp16", "fp16", "fp32", "ue8m0"), "model d_fmt=ue8m0 is a scale format"),
    # domains that would make a vacuous proof
    ("lanes=-1", lambda: Domain(lanes=-1), "Domain.lanes must be a positive int"),
    ("empty exponent range", lambda: Domain(exp=(5, 1)), "empty exponent range exp=5:1"),
    ("bad sign", lambda: Domain(signs=(("a", "x"),)), "Domain.signs holds (operand, sign) pairs"),
    ("bad fixed input", lambda: Domain(fixed=(("", 1),)), "Domain.fixed holds (input, pattern) pairs"),
    ("domain of another type", lambda: parse_domain(5), "a domain is a string"),  # type: ignore[arg-type]
    # solver arguments: refused, not answered 'unknown'
    ("k as a string", _distinguish(k="4"), "k must be an int in 1..65536"),
    ("k far too long", _distinguish(k=1 << 40), "k must be an int in 1..65536"),
    ("timeout nan", _distinguish(timeout=float("nan")), "timeout must be a positive number of seconds"),
    ("timeout None", _distinguish(timeout=None), "timeout must be a number of seconds"),
    ("negative seed", _distinguish(seed=-1), "seed must be an int in 0..4294967295"),
    ("solver as a list", _distinguish(solver=["z3"]), "solver must be a backend name"),
    ("query model of another type", lambda: smtmma.query("symmetry", "sm90", "f16f32", model=5, timeout=5),
     "model must be a spec"),
    # bit patterns: a float, a bool or a string is not truncated to an int
    ("float pattern", lambda: to_fraction("fp16", 1.5), "a fp16 bit pattern must be an int"),
    ("negative pattern", lambda: format_hex("fp16", -1), "-1 is negative"),
    ("too wide pattern", lambda: format_hex("e2m1", 255), "0xff has more bits than e2m1"),
    ("float array", lambda: decode("fp16", [1.5]), "fp16 bit patterns must be ints"),
    ("huge pattern", lambda: decode("fp16", 1 << 70), "has more bits than fp16"),
    ("negative ue8m0", lambda: encode("ue8m0", 1, 0, 1), "ue8m0 has no negative values"),
    ("shapes that do not broadcast", lambda: encode("fp16", [0, 1], [0], [1, 1, 1]), "do not broadcast together"),
    # test vectors
    ("vector without lanes", lambda: dump_vector("sm90", "f16f32", [], [], 0), "a and b are empty"),
    ("vector without its scales", lambda: dump_vector("sm100", "mxf4f32", [1], [1], 0), "would not read back: scale_a"),
    ("vector with a float lane", lambda: dump_vector("sm90", "f16f32", [1.5], [1], 0), "a[0]: a fp16 bit pattern"),
    ("line of another type", lambda: parse_line(None), "a test-vector line is a str"),  # type: ignore[arg-type]
    ("file descriptor as a path", lambda: read_vectors(0), "a test-vector file is a path"),  # type: ignore[arg-type]
    # whole computations
    ("matmul jobs", lambda: smtmma.matmul("sm90", "f16f32", [[1.0]], [[1.0]], jobs=-5), "jobs must be an int in 1..4096"),
    ("trace of a model name", lambda: trace_dot("sm90", [1], [1], 0), "model must be a Model"),  # type: ignore[arg-type]
    ("trace of a too wide lane", lambda: trace_dot(M, [1 << 20], [1], 0), "has more bits than fp16"),
    ("suite of 2^40 lanes", lambda: build_suite(explicit_space(["sm80", "sm90"], "f16f32"), K=1 << 40), "K must be an int"),
    ("identify with no vectors", lambda: identify(open_device("sim:sm90"), explicit_space(["sm80", "sm90"], "f16f32"),
                                                  max_vectors=-1), "max_vectors must be a positive int"),
    ("report path of another type", lambda: check_output(None), "the report's path is a file name"),  # type: ignore[arg-type]
    ("claims path of another type", lambda: load_records(None), "the claims file is a path"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("what, call, message", CALLS, ids=[c[0] for c in CALLS])
def test_refused_with_a_one_line_smtmma_error(what: str, call: Callable[[], object], message: str) -> None:
    with pytest.raises(SmtmmaError) as e:
        call()
    assert message in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_a_megabyte_name_is_not_echoed_whole() -> None:
    with pytest.raises(SmtmmaError) as e:
        smtmma.lookup("x" * 10**6, "f16f32")
    assert len(str(e.value)) < 400 and "(1000000 characters)" in str(e.value)
