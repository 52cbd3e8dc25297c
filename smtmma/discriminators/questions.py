"""Open questions: semantic choices that no recorded hardware data settles yet, and the vectors that would.

docs/semantics.md fixes every detail the papers leave open; a few of those
decisions have no hardware line behind them.  Each :class:`OpenQuestion`
names the catalogue's choice and its alternatives as models of one
(arch, instr, op); :func:`question_suite` finds vectors on which they
differ (a suite over the hypotheses), each line carrying the output under
every hypothesis in ``expect`` and the question in ``question``.  The first
GPU run of suites/open-questions.jsonl answers them: ``smtmma run`` then
``smtmma check`` prints which hypothesis matches.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable, Optional

from ..catalogue import lookup, model_of
from ..models import Model
from ..queries.formula import parse_domain
from .candidates import Candidate, Space, entry_name, spec_name
from .suite import Suite, build_suite

__all__ = ["OpenQuestion", "QUESTIONS", "question_suite", "question_lines"]


@dataclass(frozen=True)
class OpenQuestion:
    """A decision of docs/semantics.md on (arch, instr, op): the catalogue's model and the alternatives to it."""

    name: str
    question: str
    arch: str
    instr: str
    op: Optional[str]
    alternatives: tuple[tuple[str, Callable[[Model], Model]], ...]  # (what it assumes, catalogue model -> alternative)
    domain: str = ""

    def space(self) -> Space:
        """The catalogue's model (named ARCH or ARCH/OP) and each alternative (named by its spec)."""
        e = lookup(self.arch, self.instr, self.op)
        base = model_of(self.arch, self.instr, self.op)
        cands = [Candidate(entry_name(e), base, e.arch, e.op)]
        for _, alt in self.alternatives:
            m = alt(base)
            cands.append(Candidate(spec_name(m, base), m))
        return Space(e.instr, e.arch, cands)


def _floor(m: Model) -> Model:
    return m.replace(emax_floor=-133)


def _zero_emax(m: Model) -> Model:
    return m.replace(zero_emax=True)


def _ieee_zero(m: Model) -> Model:
    return m.replace(ieee_zero=True)


def _nvidia_nan(m: Model) -> Model:
    return m.replace(nan="nvidia")


_ZERO_EMAX = ("zero terms take part in e_max with their own exponent (a zero input's is its format's emin)", _zero_emax)
_IEEE_ZERO = ("a sum whose terms are all -0 gives -0 (IEEE 754's rule), not +0", _ieee_zero)
_FLOOR = ("the alignment exponent never drops below -133, as measured on H100/B200", _floor)
_NVNAN = ("NaN comes out as 0x7FFFFFFF (the NVIDIA pattern), not the IEEE default 0x7FC00000", _nvidia_nan)

#: The open questions of docs/semantics.md ("Open questions"), one per (decision, architecture, instruction).
#: (The NaN pattern of AMD FMA-based instructions is not among them: the FMA model has no NaN choice to vary.)
QUESTIONS: tuple[OpenQuestion, ...] = (
    OpenQuestion("zero-products-in-emax", "Do zero products take part in the alignment exponent e_max?",
                 "sm80", "f16f32", None, (_ZERO_EMAX,)),
    OpenQuestion("zero-products-in-emax", "Do zero products take part in the alignment exponent e_max?",
                 "sm90", "f16f32", None, (_ZERO_EMAX,)),
    OpenQuestion("zero-c-in-emax", "Does a zero C (exponent -126) set e_max above tiny BF16 products?",
                 "sm80", "bf16f32", None, (_ZERO_EMAX,), "exp=-70:-62,c=0x00000000"),
    OpenQuestion("sign-of-zero-sum", "Is an exact zero sum of negative zeros +0 or -0?", "sm80", "f16f32", None,
                 (_IEEE_ZERO,)),
    OpenQuestion("sign-of-zero-sum", "Is an exact zero sum of negative zeros +0 or -0?", "sm90", "f16f16", None,
                 (_IEEE_ZERO,)),
    OpenQuestion("alignment-floor-133", "Does A100 cap the alignment exponent at -133 as H100 does?",
                 "sm80", "bf16f32", None, (_FLOOR,)),
    OpenQuestion("alignment-floor-133", "Does A100 cap the alignment exponent at -133 as H100 does?",
                 "sm80", "tf32f32", None, (_FLOOR,)),
    OpenQuestion("alignment-floor-133", "Does Ada cap the alignment exponent at -133 as H100 does?",
                 "sm89", "bf16f32", None, (_FLOOR,)),
    OpenQuestion("alignment-floor-133", "Does RTX Blackwell cap the alignment exponent at -133 as B200 does?",
                 "sm120", "bf16f32", None, (_FLOOR,)),
    OpenQuestion("alignment-floor-133", "Does RTX Blackwell cap the alignment exponent at -133 as B200 does?",
                 "sm120", "tf32f32", None, (_FLOOR,)),
    OpenQuestion("amd-nan-pattern", "Which NaN pattern does a CDNA unit return?", "gfx908", "f16f32", None, (_NVNAN,),
                 "specials"),
    OpenQuestion("amd-nan-pattern", "Which NaN pattern does a CDNA unit return?", "gfx90a", "f16f32", None, (_NVNAN,),
                 "specials"),
    OpenQuestion("amd-nan-pattern", "Which NaN pattern does a CDNA unit return?", "gfx942", "f16f32", None, (_NVNAN,),
                 "specials"),
)


def question_suite(q: OpenQuestion, *, seed: int = 0, solver: Optional[str] = None, timeout: float = 120.0) -> Suite:
    """Vectors on which the catalogue's model and the alternatives of ``q`` differ (a suite over the hypotheses)."""
    return build_suite(q.space(), domain=parse_domain(q.domain) if q.domain else None, seed=seed, solver=solver,
                       timeout=timeout)


def question_lines(q: OpenQuestion, suite: Suite) -> list[str]:
    """The suite's lines with ``question`` and ``hypotheses`` (what each expectation assumes) added."""
    space = suite.space
    assumes = {space.candidates[0].name: "the catalogue's choice (docs/semantics.md)"}
    for cand, (text, _) in zip(space.candidates[1:], q.alternatives):
        assumes[cand.name] = text
    out = []
    for line in suite.lines():
        rec = json.loads(line)
        rec["question"] = f"{q.name}: {q.question}"
        rec["hypotheses"] = assumes
        rec["note"] = "the first GPU run answers it: the hypothesis whose expect equals d"
        out.append(json.dumps(rec, separators=(", ", ": ")))
    return out
