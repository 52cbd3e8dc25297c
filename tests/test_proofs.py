"""The claims framework: certificates (format, re-check, tampering), the registry, ``smtmma prove``."""

from __future__ import annotations

import json
import re
import os
from pathlib import Path

import pytest

from smtmma.cli import main
from smtmma.proofs import Context, get_claim, load_claims
from smtmma.proofs.certificate import Block, Certificate, CertificateError, parse_certificate, recheck, split_commands
from smtmma.queries.backends import available

ROOT = Path(__file__).resolve().parent.parent


def _two_blocks() -> Certificate:
    sat = Block("x + 1 = 3 has a solution", "(declare-const x (_ BitVec 4))\n(assert (= (bvadd x #x1) #x3))", "sat")
    unsat = Block("x + 1 = x has none", "(declare-const x (_ BitVec 4))\n(assert (= (bvadd x #x1) x))", "unsat")
    return Certificate({"claim": "toy"}, [sat, unsat])


def test_certificate_text_round_trips_and_rechecks() -> None:
    cert = _two_blocks()
    text = cert.text()
    assert text.startswith("; smtmma-certificate 2\n; meta: ")
    assert text.count("(check-sat)") == 2 and text.count("(push 1)") == 2
    again = parse_certificate(text)
    assert again.meta == {"claim": "toy"}
    answers = recheck(again)
    assert [(a.expected, a.got) for a in answers] == [("sat", "sat"), ("unsat", "unsat")]


@pytest.mark.parametrize("solver", available())
def test_every_backend_reads_the_scoped_blocks(solver: str) -> None:
    # the second block re-declares x: only right if push/pop scoped the first declaration away
    assert all(a.agrees for a in recheck(_two_blocks(), solver=solver))


def test_a_plain_query_is_written_as_one_statement() -> None:
    two = Block("premise and goal", "(declare-const x (_ BitVec 4))\n(assert (bvult x #x3))\n(assert (= (bvadd x #x1) x))",
                "unsat")
    text = Certificate({"claim": "toy"}, [two]).text()
    assert "(assert (and (bvult x #x3) (= (bvadd x #x1) x)))" in text and text.count("(assert") == 1
    assert all(a.agrees for a in recheck(parse_certificate(text)))


def test_a_wrong_expectation_is_a_mismatch() -> None:
    text = _two_blocks().text().replace("; expect: unsat", "; expect: sat")
    answers = recheck(parse_certificate(text))
    assert [a.agrees for a in answers] == [True, False]


@pytest.mark.parametrize("text, message", [
    ("(check-sat)\n", "not an smtmma certificate"),
    ("; smtmma-certificate 2\n(check-sat)\n", "no '; meta:' line"),
    ("; smtmma-certificate 2\n; meta: {oops\n(check-sat)\n", "the meta line is not JSON"),
    ("; smtmma-certificate 2\n; meta: {}\n(assert true)\n", "no (check-sat)"),
    ("; smtmma-certificate 2\n; meta: {}\n(assert (and true)\n; expect: sat\n(check-sat)\n", "unbalanced"),
    ("; smtmma-certificate 2\n; meta: {}\n(check-sat)\n", "without an 'expect"),
    ("; smtmma-certificate 1\n; meta: {}\n; expect: sat\n(check-sat)\n", "a format-1 certificate"),
])
def test_malformed_certificates_are_refused(text: str, message: str) -> None:
    with pytest.raises(CertificateError, match=re.escape(message)):
        parse_certificate(text)


def test_split_commands_keeps_quoted_parentheses() -> None:
    cmds = list(split_commands('; c1\n(declare-const |a)b| Bool) ; tail\n(assert |a)b|)\n; expect: sat\n(check-sat)'))
    assert [c for c, _ in cmds] == ["(declare-const |a)b| Bool)", "(assert |a)b|)", "(check-sat)"]
    assert cmds[0][1] == "c1" and cmds[2][1] == "expect: sat"


def test_unknown_claim_names_the_close_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove", "volta-cary-bits"]) == 2
    err = capsys.readouterr().err
    assert "unknown claim 'volta-cary-bits'" in err and "volta-carry-bits" in err and "Traceback" not in err


def test_prove_needs_a_claim(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove"]) == 2
    assert "--all" in capsys.readouterr().err


@pytest.mark.parametrize("option, message", [
    (["--timeout", "nan"], "expected a positive number of seconds"),
    (["--timeout", "inf"], "expected a positive number of seconds"),
    (["--seed", "-1"], "expected a seed in 0..4294967295"),
    (["--jobs", "0"], "expected a positive integer"),
])
def test_bad_numbers_fail_before_any_claim_runs(capsys: pytest.CaptureFixture[str], option: list[str], message: str) -> None:
    assert main(["prove", "exact-products", *option]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_prove_list_json_names_every_claim(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove", "--list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["claims"]
    assert [c["name"] for c in listed] == list(load_claims())
    assert all(c["source"] and c["expected"] for c in listed)


# -- the carry-bit claims (001 §4): fast, exact -------------------------------------------------------------


@pytest.mark.parametrize("name, bits, agrees", [
    ("volta-carry-bits", 3, True),  # 001 §4: 3 bits for the 5-term sum
    ("turing-carry-bits", 3, True),
    ("ampere-carry-bits", 4, True),  # 001 §4: "should likewise require 4" (timed out after 6 h)
    ("hopper-carry-bits", 5, True),
    ("blackwell-fp8-carry-bits", 5, False),  # 33 terms, but FP8 products stay below 1.875^2: 5, not ceil(log2 33) = 6
])
def test_carry_bit_claims(name: str, bits: int, agrees: bool) -> None:
    out = get_claim(name).check(Context())
    assert (out.extra["carry_bits"], out.agrees) == (bits, agrees)
    assert out.verdict == f"{bits} (above 2; {bits + 1} above 1)"
    assert out.certificate is not None and out.certificate.checks == 3  # the lemma, the proof, the pinned witness


def test_cdna3_asymmetry_witnesses_have_nonzero_values() -> None:
    out = get_claim("cdna3-asymmetry").check(Context())
    assert (out.verdict, out.agrees) == ("fails", True)
    assert out.certificate is not None
    other = "z3" if "z3" in available() else available()[0]
    assert all(a.agrees for a in recheck(out.certificate, solver=other))  # lemmas unsat, each pinned witness sat
    cases = out.witness["cases"]  # type: ignore[index]
    assert set(cases) == {"gfx942 f16f32 mfma", "gfx942 fp8fp8f32 mfma"}
    for case in cases.values():
        d, dn = case["outputs"]["d"], case["outputs"]["d_neg"]
        assert not d.endswith("(0)") and not dn.endswith("(0)")
        # asymmetric: -D(A, B, C) is not D(-A, B, -C)
        assert d.split()[0] != dn.split()[0] and float(d.split("(")[1].rstrip(")")) != -float(dn.split("(")[1].rstrip(")"))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["nvidia-symmetry", "nvidia-symmetry-fp8"])
def test_nvidia_symmetry_holds_for_every_group(name: str) -> None:
    out = get_claim(name).check(Context())
    assert (out.verdict, out.agrees) == ("holds", True)


# -- saving and re-checking through the CLI ------------------------------------------------------------------


def test_save_then_check_with_a_second_backend(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if len(available()) < 2:
        pytest.skip("needs two backends")
    assert main(["prove", "volta-carry-bits", "--save", str(tmp_path), "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)["claims"][0]
    assert rec["certificate"] == os.path.join(str(tmp_path), "volta-carry-bits.smt2")
    other = [s for s in available() if s != rec["solver"]][0]
    assert main(["prove", "--check", str(tmp_path), "--solver", other, "--json"]) == 0
    res = json.loads(capsys.readouterr().out)["certificates"]
    assert [(r["claim"], r["status"], r["checks"]) for r in res] == [("volta-carry-bits", "ok", 3)]


def _tampered(tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str) -> Path:
    """volta-carry-bits' certificate saved in ``tmp_path`` with every ``old`` replaced by ``new``."""
    assert main(["prove", "volta-carry-bits", "--save", str(tmp_path)]) == 0
    path = tmp_path / "volta-carry-bits.smt2"
    path.write_text(path.read_text().replace(old, new))
    capsys.readouterr()
    return path


def test_check_refuses_a_certificate_whose_model_changed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _tampered(tmp_path, capsys, "rz-fp32", "rne-fp32")
    assert main(["prove", "--check", str(path)]) == 2
    out, err = capsys.readouterr()
    assert "make it again" in out
    assert err.startswith("smtmma: error: 1 of 1 certificates could not be re-checked") and err.count("\n") == 1


def test_check_reports_a_tampered_answer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _tampered(tmp_path, capsys, "; expect: unsat", "; expect: sat")
    assert main(["prove", "--check", str(path)]) == 1
    assert "mismatch" in capsys.readouterr().out


def test_check_refuses_a_witness_turned_into_a_proof(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A witness block (its pins beside the property) relabelled "expect: unsat" rests on assertions that are no
    statement: the discipline refuses it before any solver runs, naming the block."""
    path = _tampered(tmp_path, capsys, "; expect: sat", "; expect: unsat")
    assert main(["prove", "--check", str(path)]) == 2
    assert "block 2" in capsys.readouterr().out


def test_check_of_a_missing_folder(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove", "--check", "/nonexistent/proofs"]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_jobs_run_claims_in_processes_and_keep_the_order(tmp_path: Path) -> None:
    from smtmma.proofs.runner import prove, select

    claims = select(["turing-carry-bits", "volta-carry-bits"])
    one = prove(claims, Context())
    two = prove(claims, Context(), jobs=2, save=str(tmp_path))
    assert [r["name"] for r in two] == ["turing-carry-bits", "volta-carry-bits"]
    assert [(r["verdict"], r["witness"]) for r in two] == [(r["verdict"], r["witness"]) for r in one]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["turing-carry-bits.smt2", "volta-carry-bits.smt2"]


def test_large_certificates_are_saved_gzipped_and_recheck(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from smtmma.proofs import runner

    monkeypatch.setattr(runner, "COMPRESS_OVER", 0)
    assert main(["prove", "volta-carry-bits", "--save", str(tmp_path), "--compress", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)["claims"][0]
    assert rec["certificate"].endswith("volta-carry-bits.smt2.gz") and os.path.isfile(rec["certificate"])
    assert not (tmp_path / "volta-carry-bits.smt2").exists()
    assert main(["prove", "--check", str(tmp_path), "--json"]) == 0
    assert [r["status"] for r in json.loads(capsys.readouterr().out)["certificates"]] == ["ok"]


def test_query_emit_smt2_writes_a_standalone_order_certificate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # issue 8: the canonical formula wrote d and d_permuted as one term; the emitted file now builds each run itself
    path = tmp_path / "order.smt2"
    assert main(["query", "order-independence", "--arch", "sm70", "--instr", "f16f32", "--k", "2", "--emit-smt2", str(path)]) == 0
    assert "certificate: 1 blocks" in capsys.readouterr().out
    text = path.read_text()
    defs = dict(re.findall(r"\(= (d|d_permuted) (\(\(_ extract \d+ 0\) \w+\))\)", text))  # in the chain's premise
    assert set(defs) == {"d", "d_permuted"} and defs["d"] != defs["d_permuted"]  # two terms, not one
    cert = parse_certificate(text)
    assert cert.meta["property"] == "order-independence" and cert.meta["verdict"] == "holds"
    answers = recheck(cert)
    assert len(answers) > 1 and all(a.agrees for a in answers) and answers[-1].expected == "unsat"


def test_a_claim_that_hits_a_bug_is_recorded_and_the_batch_goes_on(monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """prove --all once stopped after 12 min at one claim's bug; now that claim's record says "error", the others
    run, and the exit status is 70 (a bug), with a one-line message naming the claim."""
    from dataclasses import replace as dc_replace

    from smtmma.proofs.claim import CLAIMS

    load_claims()

    def broken(ctx: Context) -> object:
        raise TypeError("cannot unpack non-iterable Block object")

    monkeypatch.setitem(CLAIMS, "turing-carry-bits", dc_replace(CLAIMS["turing-carry-bits"], run=broken))
    assert main(["prove", "turing-carry-bits", "volta-carry-bits", "--json"]) == 70
    cap = capsys.readouterr()
    recs = json.loads(cap.out)["claims"]
    assert [(r["name"], r["verdict"], r["agrees"]) for r in recs] == [("turing-carry-bits", "error", None),
                                                                        ("volta-carry-bits", "3 (above 2; 4 above 1)", True)]
    assert "TypeError: cannot unpack non-iterable Block object" in recs[0]["detail"]
    assert cap.err.strip().splitlines()[-1].startswith("smtmma: error: turing-carry-bits: internal error")
    assert "Traceback" not in cap.err


def test_save_does_not_replace_a_certificate_without_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # issue 33: the README's tour ran 'prove ... --save proofs/' from the repository root, over the shipped files
    shipped = ROOT / "proofs" / "volta-carry-bits.smt2"
    before = shipped.read_bytes()
    assert main(["prove", "volta-carry-bits", "cdna3-asymmetry", "--save", str(ROOT / "proofs")]) == 2
    err = capsys.readouterr().err
    assert err == (f"smtmma: error: {shipped} exists (and 1 more); --save would replace it: add --force to replace "
                   "certificates, or save to another folder\n")
    assert shipped.read_bytes() == before
    old = tmp_path / "volta-carry-bits.smt2.gz"  # either form of the claim's file counts
    old.write_bytes(b"an earlier certificate")
    assert main(["prove", "volta-carry-bits", "--save", str(tmp_path)]) == 2
    assert str(old) in capsys.readouterr().err and old.read_bytes() == b"an earlier certificate"
    assert main(["prove", "volta-carry-bits", "--save", str(tmp_path), "--force"]) == 0
    assert not old.exists() and (tmp_path / "volta-carry-bits.smt2").read_text().startswith("; smtmma-certificate 2")
    capsys.readouterr()
    assert main(["prove", "volta-carry-bits", "--force"]) == 2
    assert "--force applies to the certificates --save DIR writes" in capsys.readouterr().err
