"""smtmma.distinguish and smtmma.query: the Python entry points return the records the --json output prints."""

from __future__ import annotations

import json

import pytest

import smtmma
from smtmma.cli import main
from smtmma.errors import InputError, SmtmmaError, UnknownNameError
from smtmma.queries.backends import available
from smtmma.queries.formula import parse_domain

pytestmark = pytest.mark.skipif(not available(), reason="no SMT backend installed")


def cli_json(capsys, *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def without_time(rec: dict) -> dict:
    return {k: v for k, v in rec.items() if k != "seconds"}


def test_distinguish_returns_what_the_cli_prints(capsys) -> None:
    rec = smtmma.distinguish("sm80", "sm90", instr="f16f32", domain="lanes=4")
    assert without_time(rec) == without_time(cli_json(capsys, "distinguish", "sm80", "sm90", "--instr", "f16f32",
                                                       "--domain", "lanes=4"))
    assert rec["verdict"] == "sat" and rec["outputs"]["sm80"] != rec["outputs"]["sm90"]
    assert rec["vector"]["expect"] == rec["outputs"]


def test_query_returns_what_the_cli_prints(capsys) -> None:
    rec = smtmma.query("carry-bits", "volta", "f16f32")
    assert without_time(rec) == without_time(cli_json(capsys, "query", "carry-bits", "--arch", "volta", "--instr", "f16f32"))
    assert rec["verdict"] == "holds" and rec["carry_bits"] == 3


def test_models_domains_and_lists_are_accepted() -> None:
    m80 = smtmma.lookup("sm80", "f16f32").model
    r = smtmma.distinguish([m80, m80.replace(F=25)], instr="f16f32", domain=parse_domain("lanes=3"))
    assert r["verdict"] == "sat" and r["models"] == [m80.describe(), m80.replace(F=25).describe()]
    assert "vector" not in r  # no architecture named: no test-vector line to write
    r = smtmma.distinguish("sm80", m80.replace(F=23), instr="f16f32", domain="lanes=3")
    assert r["verdict"] == "sat" and r["vector"]["arch"] == "sm80"
    q = smtmma.query("symmetry", "sm80", "f16f32", model=m80.replace(F=26), domain="lanes=4")
    assert q["verdict"] == "holds" and q["model"] == m80.replace(F=26).describe()


@pytest.mark.parametrize("call, error, text", [
    (lambda: smtmma.distinguish("sm80", instr="f16f32"), InputError, "at least two models"),
    (lambda: smtmma.distinguish("sm80", 90, instr="f16f32"), InputError, "not int"),
    (lambda: smtmma.distinguish("sm80", "sm99", instr="f16f32"), UnknownNameError, "unknown architecture"),
    (lambda: smtmma.distinguish("sm80", smtmma.lookup("sm80", "bf16f32").model, instr="f16f32"), InputError,
     "give a model of that instruction"),
    (lambda: smtmma.distinguish("sm80", "sm90", instr="f16f32", domain=5), InputError, "domain must be"),
    (lambda: smtmma.query("symetry", "sm80", "f16f32"), UnknownNameError, "unknown property"),
    (lambda: smtmma.query(None, "sm80", "f16f32"), InputError, "property must be a name"),
    (lambda: smtmma.query("symmetry", "sm80", "f16f32", model=smtmma.lookup("sm80", "bf16f32").model), InputError,
     "give a model of that instruction"),
])
def test_bad_calls_raise_the_projects_errors(call, error, text) -> None:
    with pytest.raises(error) as info:
        call()
    assert isinstance(info.value, SmtmmaError) and text in str(info.value)
    assert "\n" not in str(info.value)
