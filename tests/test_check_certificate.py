"""The independent certificate checker (proofs/check_certificate.py): it accepts every shipped certificate and
rejects each kind of corrupted copy, naming the block and the assertion."""

from __future__ import annotations

import gzip
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from smtmma.proof_kernel import Lemma, LemmaChain, lemma
from smtmma.proofs.check_certificate import check_text
from smtmma.queries.query_algebra import QueryAlgebra

ROOT = Path(__file__).resolve().parents[1]
CHECKER = ROOT / "proofs" / "check_certificate.py"
SHIPPED = sorted(p for p in (ROOT / "proofs").iterdir() if p.name.endswith((".smt2", ".smt2.gz")))
ORDER = ROOT / "proofs" / "accumulation-order-model.smt2"


def _text(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()


def _solver() -> str:
    for name in ("bitwuzla", "z3"):
        try:
            __import__(name)
            return name
        except ImportError:
            continue
    pytest.skip("no solver package")


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_certificate_follows_the_discipline(path: Path) -> None:
    ok, why = check_text(_text(path), structure_only=True)
    assert ok, why


def test_the_checker_imports_nothing_of_smtmma_and_is_small() -> None:
    text = CHECKER.read_text()
    assert not re.search(r"^\s*(from|import)\s+smtmma", text, re.M)
    assert len(text.splitlines()) <= 300


def test_accumulation_order_passes_with_a_solver() -> None:
    ok, why = check_text(ORDER.read_text(), _solver(), 60)
    assert ok, why
    assert re.search(r"ok: (\d+) lemmas proved", why) and int(re.search(r"ok: (\d+)", why).group(1)) >= 18


def _first_application(text: str, name_prefix: str = "lemma_") -> re.Match[str]:
    m = re.search(r"^\(assert \((lemma_\w+) ([^()]+)\)\)$", text, re.M)
    assert m, "no lemma application in the certificate"
    return m


def test_altered_model_term_under_an_unchanged_instance_is_rejected() -> None:
    """One summand of the swapped run changed, its instance left as it was: the statement no longer follows."""
    text = ORDER.read_text()
    m = re.search(r"^\(assert \((lemma_\w+) ((?:t\d+ ){7}t\d+)\)\)$", text, re.M)  # the running-sum lemma: 4 + 4 terms
    assert m
    term = m.group(2).split()[5]  # a summand of the swapped run
    d = re.search(rf"^\(define-fun {term} \(\) \(_ BitVec (\d+)\) (.*)\)$", text, re.M)
    assert d
    w = int(d.group(1))
    bad = text.replace(d.group(0), f"(define-fun {term} () (_ BitVec {w}) (bvadd {d.group(2)} (_ bv1 {w})))", 1)
    ok, why = check_text(bad, _solver(), 60)
    assert not ok and "expected unsat" in why and "says sat" in why, why


def test_instance_with_swapped_arguments_is_rejected() -> None:
    """The rounding lemma applied with a sum and an exponent swapped: not an application the solver accepts."""
    text = ORDER.read_text()
    sorts = re.findall(r"^\(define-fun (lemma_\w+) \(\(a0 \(_ BitVec (\d+)\)\) \(a1 \(_ BitVec (\d+)\)\)", text, re.M)
    name = next(n for n, w0, w1 in sorts if w0 != w1)
    m = re.search(rf"^\(assert \({name} (t\d+) (t\d+) ", text, re.M)
    assert m
    bad = text.replace(m.group(0), f"(assert ({name} {m.group(2)} {m.group(1)} ")
    ok, why = check_text(bad, _solver(), 60)
    assert not ok and "expected unsat" in why, why


def test_lemma_whose_proof_was_removed_is_rejected() -> None:
    text = ORDER.read_text()
    m = _first_application(text)
    name = m.group(1)
    proof = re.search(rf"; lemma {name}:[^\n]*\n\(push 1\)\n.*?\(pop 1\)\n", text, re.S)
    assert proof
    bad = text.replace(proof.group(0), "")
    ok, why = check_text(bad, structure_only=True)
    assert not ok and name in why and "neither the check's statement" in why, why


def test_lemma_proved_under_a_stronger_premise_is_rejected() -> None:
    text = ORDER.read_text()
    name = _first_application(text).group(1)
    head = f"(assert (not ({name} {name}.a0"
    at = text.index(head)
    bad = text[:at] + f"(assert (= {name}.a3 {name}.a4))\n" + text[at:]
    ok, why = check_text(bad, structure_only=True)
    assert not ok and f"(= {name}.a3 {name}.a4)" in why, why


def test_raw_fact_beside_the_statement_is_rejected() -> None:
    text = ORDER.read_text()
    at = text.index("; statement: the property")
    bad = text[:at] + "(assert (= d d_swapped))\n" + text[at:]
    ok, why = check_text(bad, structure_only=True)
    assert not ok and "(assert (= d d_swapped))" in why and why.startswith("block 1: swapping lanes 0 and 1"), why


def test_format_1_and_foreign_commands_are_refused() -> None:
    text = ORDER.read_text()
    ok, why = check_text(text.replace("; smtmma-certificate 2", "; smtmma-certificate 1", 1), structure_only=True)
    assert not ok and "format-2" in why
    ok, why = check_text(text.replace("(push 1)", "(set-option :global-declarations true)\n(push 1)", 1),
                         structure_only=True)
    assert not ok and "global-declarations" in why


def test_command_line_names_the_block(tmp_path: Path) -> None:
    text = ORDER.read_text()
    at = text.index("; statement: the property")
    bad = tmp_path / "bad.smt2"
    bad.write_text(text[:at] + "(assert (= d d_swapped))\n" + text[at:])
    good = tmp_path / "good.smt2"
    good.write_text(text)
    r = subprocess.run([sys.executable, str(CHECKER), str(good), str(bad), "--structure-only"],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert f"{good}: ok:" in r.stdout and f"{bad}: REJECTED: block 1: " in r.stdout
    cli = subprocess.run([sys.executable, "-m", "smtmma", "prove", "--check", str(bad)], capture_output=True, text=True)
    assert cli.returncode != 0 and "neither the check's statement" in cli.stdout + cli.stderr


def test_kernel_lemma_is_a_function_applied_to_terms() -> None:
    alg = QueryAlgebra()
    x, y = alg.var("x", 4), alg.var("y", 4)

    def commute(A, v):  # type: ignore[no-untyped-def]
        return A.eq(A.add(v[0], v[1]), A.add(v[1], v[0]))

    lem = lemma("x + y = y + x", commute, [x, y])
    assert isinstance(lem, Lemma) and lem.definition.startswith(f"(define-fun {lem.name} ((a0 (_ BitVec 5)) (a1 (_ BitVec 5))) Bool")
    assert lem.apply(alg, [y, x]) == f"({lem.name} {alg.term_text(y, 5)} {alg.term_text(x, 5)})"
    with pytest.raises(ValueError, match="spans"):
        lem.apply(alg, [alg.var("z", 6), x])
    chain = LemmaChain(alg, runner=None)  # type: ignore[arg-type]
    chain.apply(lem, [x, y])
    text = chain.certificate(f"(assert (not (= {alg.term_text(alg.add(x, y))} {alg.term_text(alg.add(y, x))})))")
    ok, why = check_text("; smtmma-certificate 2\n" + text.replace("; statement", "; block 1\n; statement"),
                         _solver(), 30)
    assert ok and "1 lemmas proved, 1 statements" in why, why


def test_range_premise_is_the_applied_lemmas_premise_word_for_word() -> None:
    """A lemma applied to a term narrower than its width asserts the term's range; ``range_premise`` states exactly
    those atoms (so one fact answers them for every application), and nothing for a term of full range."""
    from smtmma.proof_kernel.lemma import range_premise

    alg = QueryAlgebra()
    e = alg.add(alg.var("x", 4), 3)  # x in [0, 15]: e in [3, 18], 6 bits, narrower than the width's [-32, 31]
    lem = lemma("e >= 4", lambda A, v: A.le(4, v[0]), [e])
    premise = alg.raw_bool(range_premise(alg, e))
    atoms = re.findall(r"\(bvsle [^()]*(?:\([^()]*\)[^()]*)*\)", premise)
    assert len(atoms) == 2 and all(a.replace(alg.term_text(e, 6), "a0") in lem.definition for a in atoms), (premise, lem.definition)
    assert range_premise(alg, alg.sub(alg.var("y", 4), 8)).const is True  # [-8, 7]: every 4-bit value


@pytest.mark.parametrize("scoped", [False, True])
def test_scoped_chain_asserts_an_application_only_where_a_fact_uses_it(scoped: bool) -> None:
    """A scoped chain's certificate asserts each lemma application inside the check of the fact that used it (the
    final check rests on the facts alone); an unscoped one asserts it from where it came on.  The checker accepts
    both forms."""
    from smtmma.queries.query_algebra import Runner

    alg = QueryAlgebra()
    x, y = alg.var("x", 4), alg.var("y", 4)
    lem = lemma("x + y = y + x", lambda A, v: A.eq(A.add(v[0], v[1]), A.add(v[1], v[0])), [x, y])
    chain = LemmaChain(alg, Runner(_solver(), 30.0, 0), scoped=scoped)
    assert chain.establish(lem, [x, y])
    goal = alg.eq(alg.add(x, y), alg.add(y, x))
    assert chain.prove("x + y = y + x at the run's terms", goal, uses=[], applied=[chain.applied_last])
    final = f"(assert (not {alg.raw_bool(goal)}))"
    assert chain.check_final(final).verdict == "unsat"
    text = chain.certificate(final)
    app = f"(assert {chain.applied_last})"
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("; lemma 1:"))  # the fact's check
    inside = lines[at:lines.index("(pop 1)", at)]
    assert (app in inside, lines.count(app)) == ((True, 1) if scoped else (False, 1))
    ok, why = check_text("; smtmma-certificate 2\n" + text.replace("; statement", "; block 1\n; statement"), _solver(), 30)
    assert ok and "2 lemmas proved, 1 statements" in why, why  # the lemma, the fact; the property


def test_a_lemma_proof_may_rest_on_a_helper_lemma_applied_to_its_fresh_constants() -> None:
    """The ring step "s' = s + 1 gives s' t = s t + t" at the model's widths is proved given its wide form (every
    value of 2p + 1 bits) applied to its own fresh constants: the helper is proved first, its application stands
    in the step's proof block, z3 re-checks the file, and without the helper's proof the checker refuses it."""
    from smtmma.op_proofs.fma import apply_step_facts
    from smtmma.queries.query_algebra import Runner

    alg = QueryAlgebra()
    s, s2, t = alg.var("s", 4), alg.var("s2", 4), alg.var("t", 4)  # 4-bit significands: products at 9 bits
    chain = LemmaChain(alg, Runner(_solver(), 30.0, 0))
    apps = apply_step_facts(chain, 4, s, s2, t)
    assert len(apps) == 6, chain.stopped
    step = next(x for x in chain.lemmas if x.label.endswith("the step s + 1"))
    (helper, given), = step.given
    assert chain.lemmas.index(helper) < chain.lemmas.index(step) and "every value" in helper.label
    goal = alg.raw_bool(alg.or_(alg.ne(s2, alg.add(s, 1)), alg.eq(alg.mul(s2, t), alg.add(alg.mul(s, t), t))))
    text = "; smtmma-certificate 2\n" + chain.certificate(f"(assert (not {goal}))").replace("; statement", "; block 1\n; statement")
    assert f"(assert ({helper.name} ((_ sign_extend 4) {step.name}.a0)" in text
    solver = "z3" if importlib.util.find_spec("z3") else _solver()
    ok, why = check_text(text, solver, 30)
    assert ok and "7 lemmas proved, 1 statements" in why, why
    start = text.index(f"; lemma {helper.name}:")
    cut = text[:start] + text[text.index("(pop 1)", start) + len("(pop 1)"):]
    ok, why = check_text(cut, structure_only=True)
    assert not ok and helper.name in why, why


def test_a_composed_lemma_applies_its_helpers_to_terms_of_its_own_parameters() -> None:
    """``composed``: "x < 12 gives (x + 3) * 2 < 30" proved in a scope where the helper "y < 15 gives 2 y < 30" is
    applied to the term x + 3 of its own parameter, written as one closed expression (``closed_term``); the helper
    is proved first, the checker accepts the file, and refuses it without the helper's proof."""
    from smtmma.proof_kernel.lemma import closed_term, composed
    from smtmma.queries.query_algebra import Runner

    alg = QueryAlgebra()
    x = alg.var("x", 4)

    def helpers(g, v):  # type: ignore[no-untyped-def]
        return [("y < 15 gives 2 y < 30", lambda A, u: A.or_(A.le(15, u[0]), A.lt(A.mul(u[0], 2), 30)), [g.add(v[0], 3)])]

    lem = composed("x < 12 gives (x + 3) * 2 < 30", lambda A, v: A.or_(A.le(12, v[0]), A.lt(A.mul(A.add(v[0], 3), 2), 30)),
                   [x], helpers)
    (helper, text), = lem.given
    assert text.startswith(f"({helper.name} (let ((") and "a0" in text and not re.search(r"(?<![\w.])t\d+", text)
    with pytest.raises(ValueError, match="v<k>"):
        closed_term(alg, alg.add(x, 1))  # a query's terms are t<k>: not the lemma's own
    chain = LemmaChain(alg, Runner(_solver(), 30.0, 0))
    assert chain.establish(lem, [x]) and [y.name for y in chain.lemmas] == [helper.name, lem.name]
    goal = alg.raw_bool(alg.or_(alg.le(12, x), alg.lt(alg.mul(alg.add(x, 3), 2), 30)))
    cert = "; smtmma-certificate 2\n" + chain.certificate(f"(assert (not {goal}))").replace("; statement", "; block 1\n; statement")
    ok, why = check_text(cert, _solver(), 30)
    assert ok and "2 lemmas proved, 1 statements" in why, why
    start = cert.index(f"; lemma {helper.name}:")
    cut = cert[:start] + cert[cert.index("(pop 1)", start) + len("(pop 1)"):]
    ok, why = check_text(cut, structure_only=True)
    assert not ok and helper.name in why, why
