"""The incremental solver session: scoped checks on a formula sent once give the answers separate scripts give."""

from __future__ import annotations

import gc
import multiprocessing as mp

import pytest

from smtmma.catalogue import model_of
from smtmma.queries import query_algebra
from smtmma.queries.backends import available
from smtmma.queries.properties import check_property
from smtmma.queries.session import open_session

pytestmark = pytest.mark.skipif("bitwuzla" not in available(), reason="bitwuzla has the only session")

PRELUDE = ["(declare-const x (_ BitVec 8))", "(declare-const y (_ BitVec 8))",
           "(define-fun s () (_ BitVec 9) (bvadd ((_ zero_extend 1) x) ((_ zero_extend 1) y)))"]


def test_scoped_checks_answer_as_scripts_and_leave_nothing_behind() -> None:
    s = open_session("bitwuzla")
    assert s is not None and s.add(PRELUDE)
    assert s.check(["(assert (bvult s ((_ zero_extend 1) x)))"], 10).verdict == "unsat"  # x + y never wraps at 9 bits
    assert s.check(["(assert (= s (_ bv300 9)))"], 10).verdict == "sat"
    assert s.check(["(assert (= x (_ bv1 8)))", "(assert (= x (_ bv2 8)))"], 10).verdict == "unsat"
    assert s.check(["(assert (= x (_ bv2 8)))"], 10).verdict == "sat"  # the scope above was popped
    assert s.add(["(assert (= y (_ bv0 8)))"])  # top level: in every later check
    assert s.check(["(assert (distinct s ((_ zero_extend 1) x)))"], 10).verdict == "unsat"
    s.close()
    assert not s.alive and s.check(["(assert true)"], 10).verdict == "unknown" and not s.add(PRELUDE)


def test_a_parse_error_is_an_unknown_and_a_bad_definition_ends_nothing_silently() -> None:
    s = open_session("bitwuzla")
    assert s is not None and s.add(PRELUDE)
    r = s.check(["(assert (bvult s undeclared))"], 10)
    assert r.verdict == "unknown" and r.reason
    assert not s.add(["(define-fun broken () Bool (bvadd x))"])  # refused: the caller falls back to scripts
    assert not s.alive and s.check(["(assert true)"], 10).verdict == "unknown"  # a half-parsed session is not reused


def test_only_bitwuzla_has_a_session() -> None:
    assert open_session("z3") is None and open_session("cvc5") is None and open_session("portfolio") is None


def test_a_check_past_its_limit_is_unknown() -> None:
    s = open_session("bitwuzla")
    assert s is not None
    hard = ["(declare-const p (_ BitVec 40))", "(declare-const a (_ BitVec 40))", "(declare-const k (_ BitVec 9))",
            "(define-fun w () (_ BitVec 9) k)"]
    assert s.add(hard)
    big = lambda v: f"((_ sign_extend 280) {v})"  # noqa: E731
    sh = "((_ zero_extend 311) k)"
    goal = (f"(assert (bvule k (_ bv270 9)))\n(assert (not (= (bvshl (bvadd {big('p')} {big('a')}) {sh}) "
            f"(bvadd (bvshl {big('p')} {sh}) (bvshl {big('a')} {sh})))))")
    r = s.check([goal], 0.2)  # distributivity of a 320-bit shift: about 15 s
    assert r.verdict == "unknown" and "timeout" in r.reason
    s.close()


def test_a_chain_makes_the_same_certificate_with_and_without_a_session(monkeypatch: pytest.MonkeyPatch) -> None:
    model = model_of("sm75", "f16f32")
    with_session = check_property("symmetry", model, solver="bitwuzla", timeout=60)
    monkeypatch.setattr(query_algebra.Runner, "session", lambda self: None)
    without = check_property("symmetry", model, solver="bitwuzla", timeout=60)
    assert with_session.verdict == without.verdict == "holds"
    assert with_session.smt2 == without.smt2 and with_session.extra["lemmas"] == without.extra["lemmas"] > 10
    gc.collect()
    assert not [p for p in mp.active_children() if p.is_alive()]  # the chain's session ended with it


def test_a_check_past_the_session_budget_is_asked_as_a_script(monkeypatch: pytest.MonkeyPatch) -> None:
    from smtmma.proof_kernel import chain

    model = model_of("sm70", "f16f32")
    scripts: list[str] = []
    check = query_algebra.Runner.check

    def counted(self: query_algebra.Runner, script: str, *args: object, **kw: object) -> object:
        scripts.append(script)
        return check(self, script, *args, **kw)

    monkeypatch.setattr(query_algebra.Runner, "check", counted)
    quick = check_property("symmetry", model, solver="bitwuzla", timeout=60)
    in_session = len(scripts)
    monkeypatch.setattr(chain, "SESSION_BUDGET", 1e-6)  # the scoped checks run out: facts fall back to scripts
    slow = check_property("symmetry", model, solver="bitwuzla", timeout=60)
    assert quick.verdict == slow.verdict == "holds" and quick.smt2 == slow.smt2
    assert len(scripts) - in_session > in_session + 5  # facts asked as scripts, not in the session
