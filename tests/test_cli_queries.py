"""The solver commands of the CLI: distinguish and query; --json contracts, exit codes 0/2/3, one-line errors.

In-process ``main([...])`` with capsys.  Solver calls use z3 when it is
installed (the fastest backend on these small queries), else the default
backend; the whole file skips when no backend is installed.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import smtmma.queries.backends as backends
import smtmma.queries.distinguish as dist
from smtmma.cli import main, solver_options
from smtmma.queries import records
from smtmma.queries.backends import SolverResult, available

pytestmark = pytest.mark.skipif(not available(), reason="no SMT backend installed")

FAST = ["--solver", "z3"] if "z3" in available() else []
# Witnesses are found quickly on a few lanes; the full sm80-vs-sm90 query is the one the issue names.
F16F32 = ["--instr", "f16f32"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any], str]:
    code, out, err = run(capsys, *argv, "--json")
    assert out.count("\n") == 1, out  # one object on one line
    return code, json.loads(out), err


def assert_one_line_error(err: str, *parts: str) -> None:
    assert err.startswith("smtmma: error: "), err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err
    for p in parts:
        assert p in err, (p, err)


def write_line(tmp_path: Path, name: str, rec: dict[str, Any]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(rec) + "\n")
    return str(path)


# ---------------------------------------------------------------- distinguish: sat

def test_sm80_and_sm90_differ_and_the_vector_checks_against_both(capsys, tmp_path) -> None:
    code, rec, err = run_json(capsys, "distinguish", "sm80", "sm90", *F16F32, *FAST)
    assert code == 0, err
    assert rec["verdict"] == "sat"
    assert rec["models"] == ["sm80", "sm90"]
    for key in ("witness", "outputs", "solver", "seconds", "reason", "k", "domain", "vector"):
        assert key in rec
    assert rec["k"] == 16  # largest L: sm90's 16-term FDPA
    w = rec["witness"]
    assert len(w["a"]) == len(w["b"]) == 16 and all(len(x) == 4 for x in w["a"] + w["b"]) and len(w["c"]) == 8
    out = rec["outputs"]
    assert set(out) == {"sm80", "sm90"} and out["sm80"] != out["sm90"]
    assert isinstance(rec["seconds"], float) and rec["solver"]
    assert rec["differences"][0]["models"] == ["sm80", "sm90"]

    vec = rec["vector"]
    assert (vec["arch"], vec["instr"]) == ("sm80", "f16f32")
    assert vec["a"] == w["a"] and vec["b"] == w["b"] and vec["c"] == w["c"]
    assert vec["d"] == out["sm80"] and vec["expect"] == out
    # The line checks against sm80 as written, and against sm90 with sm90's expected d.
    assert main(["check", write_line(tmp_path, "sm80.jsonl", vec)]) == 0
    as_sm90 = dict(vec, arch="sm90", d=vec["expect"]["sm90"])
    assert main(["check", write_line(tmp_path, "sm90.jsonl", as_sm90)]) == 0
    swapped = dict(vec, d=vec["expect"]["sm90"])  # sm90's answer is wrong for sm80
    assert main(["check", write_line(tmp_path, "swapped.jsonl", swapped)]) == 1
    capsys.readouterr()


def test_text_output_shows_witness_outputs_difference_and_a_vector_line(capsys) -> None:
    code, out, err = run(capsys, "distinguish", "t-fdpa:F=24", "t-fdpa:F=25", "--like", "sm80", *F16F32,
                         "--domain", "lanes=4", *FAST)
    assert code == 0, err
    assert err == ""  # no progress on a non-terminal stderr
    lines = out.splitlines()
    assert lines[0].startswith("sat: t-fdpa:F=24 and t-fdpa:F=25 differ (f16f32, K=8, finite inputs, only lanes 0..3 non-zero)")
    assert "  t-fdpa:F=25  t-fdpa:L=8,F=25,rho=rz-fp32" in lines
    wline = next(x for x in lines if x.startswith("witness: K=8"))
    assert "zero product not shown" in wline  # lanes 4..7 are zero
    assert any(x.startswith("  c ") and "0x" in x for x in lines)
    assert "outputs (d)" in lines and "difference" in lines
    assert any("t-fdpa:F=24 vs t-fdpa:F=25: " in x and "ulp" in x for x in lines)
    assert any(x.startswith("solver: ") for x in lines)
    vec = json.loads(lines[-1])
    assert vec["arch"] == "sm80" and "d" not in vec  # --like: sm80 is not among the models
    assert set(vec["expect"]) == {"t-fdpa:F=24", "t-fdpa:F=25"}
    assert all(int(x, 16) & 0x7FFF == 0 for x in vec["a"][4:])


def test_spec_next_to_an_architecture_takes_its_formats_and_parameters(capsys) -> None:
    code, rec, err = run_json(capsys, "distinguish", "sm80", "t-fdpa:F=25", *F16F32, "--domain", "exp=-8:8,lanes=4", *FAST)
    assert code == 0, err
    assert rec["specs"] == {"sm80": "t-fdpa:L=8,F=24,rho=rz-fp32", "t-fdpa:F=25": "t-fdpa:L=8,F=25,rho=rz-fp32"}
    assert rec["verdict"] == "sat" and rec["vector"]["d"] == rec["outputs"]["sm80"]
    assert rec["domain"] == "finite inputs, exponents of a,b in [-8, 8], only lanes 0..3 non-zero"


def test_fp8_outputs_differ_in_e8m13_ulps(capsys) -> None:
    code, out, err = run(capsys, "distinguish", "sm90", "t-fdpa:F=12", "--instr", "e4m3f32", "--domain", "lanes=3", "--k", "4", *FAST)
    assert code == 0, err
    assert re.search(r"sm90 vs t-fdpa:F=12: \d+ ulps? \(e8m13\)", out), out
    assert dist.ulp_distance("e8m13", 0x3F800000, 0x3F800400) == 1  # one E8M13 step is 1024 FP32 steps
    assert dist.ulp_distance("fp32", 0x3F800000, 0x3F800400) == 1024


def test_three_models_report_their_equivalence_classes(capsys) -> None:
    code, rec, err = run_json(capsys, "distinguish", "sm70", "sm75", "sm80", *F16F32, "--domain", "lanes=4", *FAST)
    assert code == 0, err
    assert rec["classes"] == [["sm70"], ["sm75", "sm80"]]
    assert rec["verdict"] == "sat"
    assert rec["outputs"]["sm75"] == rec["outputs"]["sm80"] != rec["outputs"]["sm70"]


# ---------------------------------------------------------------- distinguish: unsat, confirm, smt2

def test_sm80_and_sm86_are_equivalent(capsys) -> None:
    code, rec, err = run_json(capsys, "distinguish", "sm80", "a40", *F16F32, *FAST)
    assert code == 0, err
    assert rec["verdict"] == "unsat" and rec["models"] == ["sm80", "a40"]
    assert "witness" not in rec and "outputs" not in rec
    assert "equivalent on this domain (finite inputs, K=8)" in rec["reason"]
    code, out, err = run(capsys, "distinguish", "sm80", "sm86", *F16F32, *FAST)
    assert code == 0 and out.startswith("unsat: sm80 and sm86 are equivalent on this domain (f16f32, K=8, finite inputs)")


@pytest.mark.skipif(len(available()) < 2, reason="needs two SMT backends")
def test_confirm_rechecks_unsat_with_a_second_backend(capsys) -> None:
    code, rec, err = run_json(capsys, "distinguish", "sm80", "sm86", *F16F32, *FAST, "--confirm")
    assert code == 0, err
    assert rec["verdict"] == "unsat"
    assert rec["confirmed_by"] in available() and rec["confirmed_by"] != rec["solver"]
    assert rec["confirmation"].startswith(f"{rec['confirmed_by']}: unsat")
    code, out, _ = run(capsys, "distinguish", "sm80", "sm86", *F16F32, *FAST, "--confirm")
    assert f"confirmed by {rec['confirmed_by']}: unsat" in out


def test_confirm_with_one_backend_says_so(capsys, monkeypatch) -> None:
    only = available()[:1]
    monkeypatch.setattr(dist, "available", lambda: only)
    code, rec, err = run_json(capsys, "distinguish", "sm80", "sm86", *F16F32, "--solver", only[0], "--confirm")
    assert code == 0, err
    assert rec["verdict"] == "unsat" and rec["confirmed_by"] is None
    assert "no second backend installed" in rec["confirmation"]


def test_backends_that_disagree_give_unknown_not_a_proof(capsys, monkeypatch) -> None:
    answers = iter([
        SolverResult("unsat", "bitwuzla", 0.1),  # the query
        SolverResult("sat", "bitwuzla", 0.1),  # the domain alone: not empty
        SolverResult("sat", "z3", 0.1, values=dict.fromkeys(["c", "out0", "out1", *(f"{x}{k}" for x in "ab" for k in range(16))], 0)),
    ])
    monkeypatch.setattr(dist, "solve", lambda *a, **kw: next(answers))
    monkeypatch.setattr(dist, "available", lambda: ["bitwuzla", "z3"])
    code, rec, err = run_json(capsys, "distinguish", "sm80", "sm90", *F16F32, "--confirm")
    assert code == 3  # z3's "witness" (all zeros) does not replay: neither answer is trusted
    assert rec["verdict"] == "unknown" and "backends disagree" in rec["reason"] and rec["confirmed_by"] is None


def test_emit_smt2_writes_a_self_contained_script(capsys, tmp_path) -> None:
    path = tmp_path / "q.smt2"
    code, out, err = run(capsys, "distinguish", "sm80", "sm86", *F16F32, *FAST, "--emit-smt2", str(path))
    assert code == 0, err
    text = path.read_text()
    assert text.startswith("; smtmma distinguish sm80 sm86 --instr f16f32\n")
    assert "(set-logic QF_BV)" in text and "(declare-const a0 (_ BitVec 16))" in text
    assert text.count("(check-sat)") == 1 and text.endswith("(check-sat)\n(exit)\n")
    assert f"smt2: {path}" in out
    # What the backends parse has no check-sat: re-check the file's body through the backend interface.
    body = text[: text.index("(check-sat)")]
    assert backends.solve(body, (), solver=FAST[1] if FAST else None, timeout=60).verdict == "unsat"


@pytest.mark.parametrize("solver", available())
def test_the_proof_hint_never_changes_a_verdict(solver: str) -> None:
    """``proof=True`` (unsat expected) still answers sat, with the witness, on a satisfiable script; unsat stays unsat."""
    decl = "(set-logic QF_BV)\n(declare-const x (_ BitVec 8))\n(declare-const y (_ BitVec 8))\n"
    sat = decl + "(assert (= (bvmul x y) #x8f))\n(assert (bvugt x #x01))\n(assert (bvugt y #x01))\n"
    unsat = decl + "(assert (not (= (bvadd x y) (bvadd y x))))\n"
    for hint in (False, True):
        r = backends.solve(sat, ["x", "y"], solver=solver, timeout=30, proof=hint)
        assert r.verdict == "sat" and (r.values["x"] * r.values["y"]) % 256 == 0x8F and r.values["x"] > 1
        assert backends.solve(unsat, (), solver=solver, timeout=30, proof=hint).verdict == "unsat"


@pytest.mark.skipif(len(available()) < 2, reason="portfolio needs two SMT backends to race")
def test_portfolio_races_the_installed_backends(capsys) -> None:
    code, rec, err = run_json(capsys, "distinguish", "sm80", "sm86", *F16F32, "--solver", "portfolio")
    assert code == 0, err
    assert rec["verdict"] == "unsat" and rec["solver"].startswith("portfolio:")


@pytest.mark.slow
@pytest.mark.parametrize("solver", backends.BACKENDS)
def test_sm80_sm90_with_each_backend(capsys, solver) -> None:
    if solver not in available():
        pytest.skip(f"{solver} not installed")
    code, rec, err = run_json(capsys, "distinguish", "sm80", "sm90", *F16F32, "--solver", solver, "--timeout", "300")
    assert code == 0, err
    assert rec["verdict"] == "sat" and rec["solver"] == solver


# ---------------------------------------------------------------- distinguish: bad input and timeouts

BAD = [
    (["sm80", "t-fdpa:Q=3"], ["bad parameter 'Q=3' for t-fdpa", "L (1..128)", "F (0..64)", "carry_bits (0..16)"]),
    (["sm80", "t-fdpa:F=99"], ["F=99 out of range 0..64"]),
    (["sm80", "q-fdpa:F=2"], ["unknown model kind 'q-fdpa'", "t-fdpa"]),
    (["sm80", "nosuch"], ["unknown architecture 'nosuch'", "sm90", "model spec"]),
    (["t-fdpa:F=24", "t-fdpa:F=25"], ["--like ARCH"]),
    (["sm80"], ["at least two models"]),
    (["sm80", "sm80"], ["'sm80' is given twice"]),
]


@pytest.mark.parametrize("models,parts", BAD, ids=[" ".join(m) for m, _ in BAD])
def test_bad_models_are_one_line_errors(capsys, models, parts) -> None:
    code, out, err = run(capsys, "distinguish", *models, *F16F32)
    assert code == 2 and out == ""
    assert_one_line_error(err, *parts)


def test_an_instruction_the_architectures_do_not_share_lists_the_shared_ones(capsys) -> None:
    code, out, err = run(capsys, "distinguish", "volta", "sm90", "--instr", "bf16f32")
    assert code == 2
    assert_one_line_error(err, "sm70 has no instruction bf16f32", "instructions shared by sm70, sm90: f16f32, f16f16")


@pytest.mark.parametrize("argv,parts", [
    (["--domain", "exp=1"], ["domain: bad item 'exp=1'", "exp=LO:HI"]),
    (["--domain", "exp=3:1"], ["empty exponent range"]),
    (["--domain", "a99=0x3c00"], ["a99 is not an input"]),
    (["--instr", "f99"], ["unknown instruction 'f99'"]),
    (["--op", "tcgen05"], ["no op 'tcgen05'"]),
    (["--solver", "yices"], ["invalid choice: 'yices'"]),
    (["--k", "0"], ["expected a dot-product length in 1..65536"]),
    (["--k", "99999999"], ["expected a dot-product length in 1..65536"]),
    (["--seed", "4294967296"], ["expected a seed in 0..4294967295"]),
    (["--timeout", "3e6"], ["expected a positive number of seconds up to 1e+06"]),
    (["--timeout", "nan"], ["expected a positive number of seconds"]),
    (["--timeout", "inf"], ["expected a positive number of seconds"]),
    (["--domain", "a0=0x123456"], ["a0=0x123456 is not a fp16 pattern (16 bits"]),
    (["--domain", "c=-1"], ["needs a hex bit pattern"]),
    (["--timeout", "-1"], ["expected a positive number of seconds"]),
])
def test_bad_options_are_one_line_errors(capsys, argv, parts) -> None:
    code, out, err = run(capsys, "distinguish", "sm80", "sm90", *F16F32, *argv)
    assert code == 2 and out == ""
    assert_one_line_error(err, *parts)


def test_an_empty_domain_is_refused_not_proved(capsys) -> None:
    # a0 = 1.0 has exponent 0, outside exp=5:6: no input satisfies the domain, so "unsat" would prove nothing.
    code, out, err = run(capsys, "distinguish", "sm80", "sm90", *F16F32, "--domain", "exp=5:6,a0=0x3c00", *FAST)
    assert code == 2 and out == ""
    assert_one_line_error(err, "empty domain", "exponents of a,b in [5, 6], a0=0x3c00")


def test_no_backend_installed(capsys, monkeypatch) -> None:
    monkeypatch.setattr(backends, "available", lambda: [])
    monkeypatch.setattr(solver_options, "available", lambda: [])
    code, out, err = run(capsys, "distinguish", "sm80", "sm90", *F16F32)
    assert code == 2
    assert_one_line_error(err, "no SMT backend is installed", "pip install")
    code, out, err = run(capsys, "distinguish", "sm80", "sm90", *F16F32, "--solver", "z3")
    assert code == 2
    assert_one_line_error(err, "z3 is not installed")


def test_a_solver_that_gives_up_exits_3_with_the_reason(capsys, monkeypatch) -> None:
    def gives_up(script: str, want: Any = (), **kw: Any) -> SolverResult:
        return SolverResult("unknown", "z3", 0.5, reason="timeout after 0.5 s")

    monkeypatch.setattr(dist, "solve", gives_up)
    code, rec, err = run_json(capsys, "distinguish", "sm80", "sm90", *F16F32)
    assert code == 3
    assert rec["verdict"] == "unknown" and rec["reason"] == "timeout after 0.5 s" and "witness" not in rec
    assert_one_line_error(err, "no answer: timeout after 0.5 s", "--timeout")
    code, out, err = run(capsys, "distinguish", "sm80", "sm90", *F16F32)
    assert code == 3 and out.startswith("unknown: no answer for sm80 and sm90") and "timeout after 0.5 s" in out


def test_a_tiny_timeout_on_a_hard_query_exits_3(capsys) -> None:
    code, rec, err = run_json(capsys, "distinguish", "sm80", "sm90", *F16F32, *FAST, "--timeout", "0.001")
    assert code == 3 and rec["verdict"] == "unknown" and rec["reason"]
    assert "Traceback" not in err


def test_progress_goes_to_a_terminal_stderr_only(capsys, monkeypatch) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, rec, err = run_json(capsys, "distinguish", "sm80", "sm86", *F16F32, *FAST)
    assert code == 0 and rec["verdict"] == "unsat"  # stdout is the JSON object alone
    assert "solving with" in err or "racing" in err


def test_help_teaches_with_examples(capsys) -> None:
    code, out, _ = run(capsys, "distinguish", "--help")
    assert code == 0
    for text in ("smtmma distinguish sm80 sm90 --instr f16f32", "--domain exp=-8:8", "--like ARCH", "exit status",
                 "portfolio", "--emit-smt2"):
        assert text in out
    code, out, _ = run(capsys, "query", "--help")
    assert code == 0
    assert "smtmma query carry-bits --arch volta --instr f16f32" in out and "carry_bits" in out
    code, out, _ = run(capsys, "--help")
    assert "distinguish" in out and "query" in out


# ---------------------------------------------------------------- query (contract of smtmma.queries.properties)

class FakeProperties:
    """Stands in for smtmma.queries.properties: records the call, answers as told."""

    PROPERTIES = ("symmetry", "monotonicity", "carry-bits", "error-bound", "order-independence", "custom")

    def __init__(self, verdict: str = "holds", **fields: Any) -> None:
        self.verdict, self.fields, self.calls = verdict, fields, []

    def check_property(self, prop: str, model: Any, **kw: Any) -> Any:
        self.calls.append((prop, model, kw))
        base = dict(property=prop, verdict=self.verdict, name=kw.get("name"), model=model, K=kw.get("K") or 4,
                    domain=kw.get("domain"), solver="z3", seconds=0.25, witness=None, outputs={}, reason="",
                    extra={}, smt2="(set-logic QF_BV)\n")
        base.update(self.fields)
        return SimpleNamespace(**base)


def fake(monkeypatch, verdict: str = "holds", **fields: Any) -> FakeProperties:
    f = FakeProperties(verdict, **fields)
    monkeypatch.setattr(records, "_load_properties", lambda: f)
    return f


def test_query_carry_bits_holds(capsys, monkeypatch) -> None:
    f = fake(monkeypatch, extra={"carry_bits": 3})
    code, rec, err = run_json(capsys, "query", "carry-bits", "--arch", "volta", "--instr", "f16f32")
    assert code == 0, err
    assert rec["property"] == "carry-bits" and rec["verdict"] == "holds" and rec["carry_bits"] == 3
    for key in ("outputs", "solver", "seconds"):
        assert key in rec
    prop, model, kw = f.calls[0]
    assert prop == "carry-bits" and model.L == 4 and kw["name"] == "volta" and kw["timeout"] == 60.0
    code, out, _ = run(capsys, "query", "carry-bits", "--arch", "volta", "--instr", "f16f32")
    assert out.startswith("carry-bits holds for volta (sm70 f16f32, t-fdpa:L=4,F=23,rho=rz-fp32, K=4, finite inputs)")
    assert "  carry_bits: 3" in out


def test_query_fails_with_a_witness_and_a_vector(capsys, monkeypatch, tmp_path) -> None:
    w = dist.Witness((0x3C00, 0x3C00, 0, 0), (0x3C00, 0xBC00, 0, 0), 0x3F800000)
    fake(monkeypatch, "fails", witness=w, outputs={"d(a,b,c)": 0x3F800000, "-d(-a,b,-c)": 0xBF800000})
    code, rec, err = run_json(capsys, "query", "symmetry", "--arch", "sm80", "--instr", "f16f32")
    assert code == 0, err
    assert rec["verdict"] == "fails"
    assert rec["witness"] == {"a": ["3c00", "3c00", "0000", "0000"], "b": ["3c00", "bc00", "0000", "0000"], "c": "3f800000"}
    assert rec["outputs"] == {"d(a,b,c)": "3f800000", "-d(-a,b,-c)": "bf800000"}
    assert main(["check", write_line(tmp_path, "w.jsonl", rec["vector"])]) == 0  # d: sm80's output on the witness
    capsys.readouterr()


def test_query_options_reach_the_property(capsys, monkeypatch, tmp_path) -> None:
    f = fake(monkeypatch, extra={"bound": "2^-22", "tight": True})
    code, rec, err = run_json(capsys, "query", "error-bound", "--arch", "sm90", "--instr", "f16f32", "--tight",
                              "--model", "t-fdpa:F=26", "--k", "8", "--timeout", "5", "--domain", "exp=-4:4")
    assert code == 0, err
    _, model, kw = f.calls[0]
    assert model.F == 26 and model.L == 16 and kw["tight"] is True and kw["K"] == 8 and kw["timeout"] == 5.0
    assert kw["domain"].exp == (-4, 4) and kw["name"] == "t-fdpa:F=26"
    assert rec["bound"] == "2^-22" and rec["tight"] is True
    pred = tmp_path / "pred.py"
    pred.write_text("def predicate(a, b, c, d):\n    return True\n")
    code, rec, err = run_json(capsys, "query", "custom", "--arch", "sm90", "--instr", "f16f32", "--predicate", str(pred))
    assert code == 0 and f.calls[-1][2]["predicate"] == str(pred)


@pytest.mark.parametrize("argv,parts", [
    (["nosuch"], ["unknown property 'nosuch'", "carry-bits"]),
    (["symmetry", "--tight"], ["--tight applies to error-bound only"]),
    (["custom"], ["custom needs --predicate FILE"]),
    (["custom", "--predicate", "/nonexistent/p.py"], ["no such file"]),
    (["symmetry", "--model", "t-fdpa:Z=1"], ["bad parameter 'Z=1'", "F (0..64)"]),
    (["symmetry", "--domain", "lanes=x"], ["bad item 'lanes=x'"]),
])
def test_query_bad_input(capsys, monkeypatch, argv, parts) -> None:
    fake(monkeypatch)
    code, out, err = run(capsys, "query", *argv, "--arch", "sm80", "--instr", "f16f32")
    assert code == 2 and out == ""
    assert_one_line_error(err, *parts)


def test_query_unknown_exits_3(capsys, monkeypatch) -> None:
    fake(monkeypatch, "unknown", reason="timeout after 1 s")
    code, rec, err = run_json(capsys, "query", "monotonicity", "--arch", "sm70", "--instr", "f16f32")
    assert code == 3 and rec["verdict"] == "unknown" and rec["reason"] == "timeout after 1 s"
    assert_one_line_error(err, "timeout after 1 s")


def test_query_empty_domain_from_the_property_is_worded_as_such(capsys, monkeypatch) -> None:
    f = FakeProperties()

    def refuses(prop: str, model: Any, **kw: Any) -> Any:
        raise dist.EmptyDomainError(f"{prop}: no input satisfies the domain")

    f.check_property = refuses  # type: ignore[method-assign]
    monkeypatch.setattr(records, "_load_properties", lambda: f)
    code, out, err = run(capsys, "query", "symmetry", "--arch", "sm80", "--instr", "f16f32")
    assert code == 2
    assert_one_line_error(err, "empty domain: symmetry: no input satisfies the domain")


# ---------------------------------------------------------------- query with smtmma.queries.properties

needs_properties = pytest.mark.skipif(
    __import__("importlib").util.find_spec("smtmma.queries.properties") is None, reason="smtmma.queries.properties missing")


@needs_properties
def test_volta_needs_three_carry_bits(capsys) -> None:
    code, rec, err = run_json(capsys, "query", "carry-bits", "--arch", "volta", "--instr", "f16f32")
    assert code == 0, err
    assert rec["property"] == "carry-bits" and rec["verdict"] == "holds" and rec["carry_bits"] == 3
    assert rec["k"] == 4 and rec["model"] == "t-fdpa:L=4,F=23,rho=rz-fp32"
    assert len(rec["outputs"]) == 2 and len(set(rec["outputs"].values())) == 2  # 2 carry bits vs unbounded
    code, out, err = run(capsys, "query", "carry-bits", "--arch", "volta", "--instr", "f16f32")
    assert out.startswith("carry-bits holds for volta (sm70 f16f32, t-fdpa:L=4,F=23,rho=rz-fp32, K=4, finite inputs)")
    assert "  carry_bits: 3" in out.splitlines()


@needs_properties
def test_cdna3_symmetry_fails_with_a_witness_that_checks(capsys, tmp_path) -> None:
    code, rec, err = run_json(capsys, "query", "symmetry", "--arch", "mi300x", "--instr", "f16f32", "--domain", "lanes=3")
    assert code == 0, err
    assert rec["verdict"] == "fails"
    assert len(rec["witness"]["a"]) == 8 and all(x in ("0000", "8000") for x in rec["witness"]["a"][3:])
    assert len(set(rec["outputs"].values())) == 2
    vec = rec["vector"]
    assert vec["arch"] == "gfx942" and vec["d"] in rec["outputs"].values()
    assert main(["check", write_line(tmp_path, "sym.jsonl", vec)]) == 0
    capsys.readouterr()


@needs_properties
def test_query_refuses_an_empty_domain(capsys) -> None:
    code, out, err = run(capsys, "query", "symmetry", "--arch", "sm80", "--instr", "f16f32", "--domain", "exp=5:6,a0=0x3c00")
    assert code == 2 and out == ""
    assert_one_line_error(err, "empty domain", "a0=0x3c00")


@needs_properties
def test_query_lists_the_properties_of_the_module(capsys) -> None:
    code, out, err = run(capsys, "query", "nosuch", "--arch", "sm80", "--instr", "f16f32")
    assert code == 2
    assert_one_line_error(err, "unknown property 'nosuch'", "symmetry", "carry-bits", "error-bound", "custom")


@pytest.mark.slow
@needs_properties
def test_volta_monotonicity_fails(capsys) -> None:
    code, rec, err = run_json(capsys, "query", "monotonicity", "--arch", "sm70", "--instr", "f16f32", "--timeout", "600")
    assert code == 0, err
    assert rec["verdict"] == "fails" and "vector" in rec
