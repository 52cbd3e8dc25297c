"""Lemma chains: facts about a formula's own terms, each proved by a solver before later checks use it.

:class:`LemmaChain` proves facts while a query runs; its certificate
(:func:`chain_text`) writes every fact as a zero-argument lemma, ``(define-fun
fact<i> () Bool (=> premise X))`` over the run's terms (``premise``: the
query's own assumptions, its domain), proved in its own scope under the facts
it uses, and every instance of a :class:`~smtmma.proof_kernel.lemma.Lemma` as
its application; the property is the one statement ``(and premise ...)``
last.  Nothing is asserted that is neither a proved lemma's application nor
that statement, which the independent checker verifies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional, Sequence, Union

from ..encodings.algebra import Bool
from .lemma import Arg, Lemma, lemma

if TYPE_CHECKING:  # the queries build on the kernel, not the other way round
    from ..queries.backends import SolverResult
    from ..queries.query_algebra import QueryAlgebra, Runner
    from ..queries.session import Session

__all__ = ["LemmaChain", "SESSION_BUDGET", "chain_text", "assertion_term"]

#: seconds a check may take in a chain's solver session before it is asked as one script instead: the session
#: reuses the terms it encoded, but the solver preprocesses only top-level assertions, not a scope's negated goal
#: (sm80 f64f64 symmetry, an FMA's output fact: 21 s as a script, 77 s in the session)
SESSION_BUDGET = 5.0


def assertion_term(line: str) -> str:
    """``X`` of the line ``(assert X)`` (comment lines before it dropped)."""
    body = "\n".join(x for x in line.splitlines() if not x.lstrip().startswith(";")).strip()
    if not (body.startswith("(assert") and body.endswith(")")):
        raise ValueError(f"not an assertion: {body[:60]!r}")
    return body[len("(assert"):-1].strip()


def chain_text(prelude: Sequence[str], context: Sequence[str], steps: Sequence[tuple], final: str, *,
               lemmas: Sequence[Lemma] = ()) -> str:
    """An incremental certificate script ending with the property's ``check-sat`` (expect unsat).

    ``prelude``: declarations and term definitions; ``context``: the query's
    own assertions (``(assert X)`` lines: domain, output definitions), the
    premise of every fact and of the statement; ``steps`` in order: ``("fact",
    label, X, uses)`` (a fact proved under the earlier facts ``uses``, indices
    into the facts, or under every earlier fact and application when None) or
    ``("apply", text)`` (a lemma of ``lemmas`` applied, asserted from there on);
    a fact ``("fact", label, X, uses, apps)`` instead names the applications
    its check rests on (texts), asserted in its scope only: a chain of hundreds
    of applications then does not carry them all into every later check;
    ``final``: the property's assertion ``(assert Y)``, Y unsatisfiable with
    the premise.
    """
    terms = [assertion_term(c) for c in context]
    premise = "true" if not terms else terms[0] if len(terms) == 1 else f"(and {' '.join(terms)})"
    lines = ["(set-logic QF_BV)", *prelude]
    for lem in lemmas:
        lines += [lem.definition, lem.proof()]
    lines.append(f"(define-fun premise () Bool {premise})")
    facts: list[str] = []
    for step in steps:
        if step[0] == "apply":
            lines.append(f"(assert {step[1]})")  # active from here on, in every later check
            continue
        _, label, raw, uses, *scoped = step
        name = f"fact{len(facts) + 1}"
        used = [f"(assert fact{j + 1})" for j in (range(len(facts)) if uses is None else uses)]
        used += [f"(assert {a})" for a in (scoped[0] if scoped else ())]
        names = "every earlier fact" if uses is None else (", ".join(str(j + 1) for j in uses) or "none")
        lines += [f"; lemma {len(facts) + 1}: {label} (uses: {names})",
                  f"(define-fun {name} () Bool (=> premise {raw}))",
                  "(push 1)", *used, f"(assert (not {name}))", "; expect: unsat", "(check-sat)", "(pop 1)"]
        facts.append(name)
    lines += ["; every fact, proved above", *(f"(assert {f})" for f in facts)]
    lines += ["; statement: the property under the premise", f"(assert (and premise {assertion_term(final)}))",
              "; expect: unsat", "(check-sat)"]
    return "\n".join(lines) + "\n"


@dataclass
class LemmaChain:
    """Facts about internal terms, each proved by a solver before it is used; lemmas applied to the run's terms.

    ``prove(label, goal)`` asks whether ``goal`` can be false under the
    assertions so far (domain, earlier facts, applications); on unsat it is
    asserted, which can only help later queries.  With ``uses`` (indices of
    earlier facts, :attr:`last` after each proof) the fact is checked under
    those only: the solver then bit-blasts only their terms (a running-sum
    fact of an L = 32 sum: 0.13 s instead of 4 s).  Where the runner's solver
    has an incremental session (:meth:`Runner.session`, bitwuzla), every check
    is asked there: the formula is sent once, each fact joins it when proved
    (it holds wherever the query's assertions do), and each check is a scope
    of its own; one it has not answered in :data:`SESSION_BUDGET` seconds is
    asked as a script.  ``apply(lemma, args)``
    asserts a :class:`Lemma` (proved on its own, see :meth:`Lemma.proof`) at
    the run's terms.  With ``scoped`` each fact's certificate check asserts
    the applications its proof used and no other (in the certificate as in
    the solver session), and the final check rests on the facts alone.  On
    sat or unknown the chain stops.
    """

    alg: "QueryAlgebra"
    runner: "Runner"
    proven: list[tuple[str, str, Optional[tuple[int, ...]]]] = field(default_factory=list)  # (label, raw goal, uses)
    stopped: str = ""
    last: Optional[int] = None  # index in ``proven`` of the last fact proved (None when it was trivially true)
    lemmas: list[Lemma] = field(default_factory=list)
    #: the order facts and applications came in: ("fact", index into ``proven``) or ("apply", application text)
    order: list[tuple[str, object]] = field(default_factory=list)
    #: an incremental solver session (the runner's, opened at the first check; None: separate scripts), and how many
    #: of the formula's declarations, definitions and assertions it holds
    session: Optional["Session"] = None
    _sent: tuple[int, int, int] = (0, 0, 0)
    _no_session: bool = False
    #: False: every check is a script of its own, no session (where the session's top level, every fact so far,
    #: keeps the solver from answering what a script of the named facts answers at once)
    sessions: bool = True
    #: applications asserted only in the checks that use them (see :func:`chain_text`); False keeps every one asserted
    #: from where it came on, the form of the certificates made before it
    scoped: bool = False
    #: per fact in ``proven``, the texts of the applications its check asserted
    fact_apps: list[tuple[str, ...]] = field(default_factory=list)

    @property
    def applied_last(self) -> str:
        """The text of the last lemma application ("" before any)."""
        return next((str(x) for kind, x in reversed(self.order) if kind == "apply"), "")

    def _applied(self) -> list[str]:
        """The ``(assert ...)`` lines of the lemma applications so far, in order."""
        return [f"(assert {x})" for kind, x in self.order if kind == "apply"]

    def _chain_lines(self) -> set[str]:
        """The ``(assert ...)`` lines of the facts and applications so far."""
        return {f"(assert {raw})" for _, raw, _ in self.proven} | set(self._applied())

    def _context(self) -> list[str]:
        """The assertions that are not facts or applications (domain, output definitions)."""
        lines = self._chain_lines()
        return [a for a in self.alg.asserts if a not in lines]

    def apply(self, lemma: Lemma, args: Sequence[Arg]) -> None:
        """Assert ``lemma`` at the terms ``args`` (its definition joins the formula; the certificate proves it)."""
        self._join(lemma)
        text = lemma.apply(self.alg, args)
        self.alg.asserts.append(f"(assert {text})")
        self.order.append(("apply", text))

    def _join(self, lemma: Lemma) -> None:
        """``lemma`` and the lemmas its proof applies (theirs first) join the chain's lemmas, each once."""
        for x in [*lemma.helpers(), lemma]:
            if not self.holds(x):
                self.lemmas.append(x)
                self.alg.decls.append(x.definition)

    def holds(self, lemma: Lemma) -> bool:
        """Whether the chain holds ``lemma`` already: one of the same definition (its name is their hash), whatever
        its label (the same statement made at another step)."""
        return any(x.name == lemma.name for x in self.lemmas)

    def establish(self, lemma: Lemma, args: Sequence[Arg]) -> bool:
        """Prove ``lemma`` on fresh constants (once per chain; the certificate proves it again), then apply it at
        ``args``; False (and the chain stops) when the solver does not prove it."""
        if self.stopped:
            return False
        for x in [*lemma.helpers(), lemma]:
            if not self.holds(x):
                r = self.runner.check(x.script(), proof=True)
                if r.verdict != "unsat":
                    self.stopped = f"lemma {x.label}: {r.verdict}" + (f" ({r.reason})" if r.reason else "")
                    return False
        self.apply(lemma, args)
        return True

    def use(self, label: str, statement: Callable[..., Bool], args: Sequence[Arg], *,
            span: Optional[tuple[int, int]] = None) -> Optional[str]:
        """The lemma "``statement`` holds" (:func:`~smtmma.proof_kernel.lemma.lemma`, ``span`` as there) established and
        applied at ``args``: the application's text, or None when the solver did not prove it (the chain stops)."""
        return self.applied_last if self.establish(lemma(label, statement, args, span=span), args) else None

    def record(self, label: str, raw: str, uses: Optional[tuple[int, ...]] = None, apps: Sequence[str] = ()) -> None:
        """A fact proved (unsat of its negation under every assertion so far, or under the facts ``uses`` and the
        applications ``apps``, their texts), asserted now."""
        self.alg.asserts.append(f"(assert {raw})")
        self.order.append(("fact", len(self.proven)))
        self.proven.append((label, raw, uses))
        self.fact_apps.append(tuple(apps))

    def prove(self, label: str, goal: Bool, uses: Optional[Sequence[Optional[int]]] = None, *,
              applied: Union[bool, Sequence[str]] = False) -> bool:
        """True when ``goal`` is proved (and now asserted); ``uses``: the earlier facts it needs (None entries skipped);
        ``applied``: the lemma applications so far join the check even with ``uses``, or only those of a list (their
        texts, :attr:`applied_last`; in the certificate every application holds from where it is asserted on)."""
        self.last = None
        if self.stopped:
            return False
        if goal.const is True:
            return True
        if goal.const is False:
            self.stopped = f"lemma {label} is false"
            return False
        raw = self.alg.raw_bool(goal)
        deps = None if uses is None else tuple(sorted({i for i in uses if i is not None}))
        apps = self._applied() if applied is True or deps is None else [f"(assert {x})" for x in applied or ()]
        negated = f"(assert (not {raw}))"
        r = self._check_in_session(negated, apps=apps)
        if r is None:  # no session: the same question as one script
            if deps is None:
                lines = self._chain_lines_in_order()
            else:
                lines = [f"(assert {self.proven[i][1]})" for i in deps] + apps
            r = self.runner.check(self._script(lines, negated), proof=True)
        if r.verdict != "unsat":
            self.stopped = f"lemma {label}: {r.verdict}" + (f" ({r.reason})" if r.reason else "")
            return False
        self.record(label, raw, deps, [assertion_term(a) for a in apps])
        self.last = len(self.proven) - 1
        return True

    def _script(self, lines: Sequence[str], last: str) -> str:
        """One script: the formula's declarations, definitions and own assertions, then ``lines`` (facts,
        applications) and ``last`` (``(assert ...)`` lines)."""
        alg = self.alg
        return "\n".join(["(set-logic QF_BV)", *alg.decls, *alg.defs, *self._context(), *lines, last]) + "\n"

    def _chain_lines_in_order(self) -> list[str]:
        """The facts and applications asserted so far, in the order they came (``(assert ...)`` lines)."""
        return [f"(assert {self.proven[x][1]})" if kind == "fact" else f"(assert {x})"  # type: ignore[index]
                for kind, x in self.order]

    def _check_in_session(self, goal: str, *, apps: Sequence[str]) -> Optional["SolverResult"]:
        """The answer on the formula so far plus ``goal`` (an ``(assert ...)`` line) in a scope of its own, with the
        lemma applications ``apps`` (``(assert ...)`` lines); None where the runner has no session (or it ended, or the check ran past
        :data:`SESSION_BUDGET`: the caller asks a script, whose every assertion the solver preprocesses).

        What the formula gained since the last check joins the session's top level: declarations, definitions, the
        query's own assertions, and the proved facts -- each holds wherever the query's assertions do (the solver
        proved it), so a check's answer is the one its certificate scope has (the facts it names are hints, not
        hypotheses), and the solver's preprocessing, which reads only the top level, may use them.  Applications
        stay in the scopes that assert them, as in the certificate's scripts."""
        if self._no_session or not self.sessions:
            return None
        if self.session is None:
            self.session = self.runner.session()
            if self.session is None:
                self._no_session = True
                return None
        alg, (nd, nf, na) = self.alg, self._sent
        every = set(self._applied())
        top = [a for a in alg.asserts[na:] if a not in every]
        if not self.session.add([*alg.decls[nd:], *alg.defs[nf:], *top]):
            self._no_session = True
            return None
        self._sent = (len(alg.decls), len(alg.defs), len(alg.asserts))
        r = self.runner.check_scoped(self.session, [*apps, goal], budget=SESSION_BUDGET)
        if r.verdict == "unknown":
            self._no_session = not self.session.alive  # it ended: scripts from here on
            return None
        return r

    def check_final(self, final: str, want: Sequence[str] = ()) -> "SolverResult":
        """The property's check: the formula with every fact and application asserted and ``final`` (an ``(assert
        ...)`` line), the certificate's last check; in the session when the chain has one, else (or past the
        session's budget, or sat: its ``want`` values are read there) as one script."""
        if self.proven or self.order:
            r = self._check_in_session(final, apps=() if self.scoped else self._applied())
            if r is not None and r.verdict == "unsat":
                return r
        if not self.scoped:
            return self.runner.check(self.alg.script(final), want)
        return self.runner.check(self._script([f"(assert {raw})" for _, raw, _ in self.proven], final), want)

    def certificate(self, final: str) -> str:
        """The certificate script (:func:`chain_text`): every lemma and fact proved, then the property ``final``
        (an ``(assert ...)`` line); every assertion that is not a fact or an application is the premise."""
        alg = self.alg
        defs = set(lem.definition for lem in self.lemmas)
        prelude = [d for d in alg.decls if d not in defs] + list(alg.defs)
        if self.scoped:
            steps = [("fact", *fact, apps) for fact, apps in zip(self.proven, self.fact_apps)]
        else:
            steps = [("apply", x) if kind == "apply" else ("fact", *self.proven[x]) for kind, x in self.order]  # type: ignore[index]
        return chain_text(prelude, self._context(), steps, final, lemmas=self.lemmas)
