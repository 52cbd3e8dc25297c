"""What every property query shares: the result type, input checks, replay and exact values of witnesses."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional, Union

from ...errors import InputError
from ...formats import Format, Special, format_hex, get_format, to_fraction
from ...models import Model
from ..query_algebra import Runner, neg_pattern
from ..distinguish import EmptyDomainError, ReplayError, Witness, domain_is_empty, replay
from ..formula import Domain

__all__ = ["FDPA_KINDS", "QUICK_TIMEOUT", "QueryResult", "approx_ratio", "check_nonempty", "expect_same", "hex_witness", "make_result",
           "negated_witness", "pattern_text", "py_same_value", "py_value", "replay_one", "setup_query", "show_value",
           "unknown_result"]

#: Seconds of a first, short solver call that looks for a witness before lemmas are proved.
QUICK_TIMEOUT = 5.0

FDPA_KINDS = ("e-fdpa", "t-fdpa", "st-fdpa", "gst-fdpa", "tr-fdpa", "gtr-fdpa")

@dataclass
class QueryResult:
    """The answer to a property query (see the module docstring for the verdicts)."""

    property: str  # "symmetry", "monotonicity", "carry-bits", "error-bound", "order-independence", "custom"
    verdict: str  # "holds" | "fails" | "unknown"
    name: str  # the model's name as given (e.g. "sm80" or a spec)
    model: Model
    K: int
    domain: Domain
    solver: str
    seconds: float
    witness: Optional[Witness] = None  # when it fails (replayed through the simulator first)
    outputs: dict[str, int] = field(default_factory=dict)  # bits of the outputs involved, e.g. {"d": .., "d_neg": ..}
    reason: str = ""
    extra: dict[str, object] = field(default_factory=dict)  # carry-bits: {"carry_bits": N}; error-bound: {"bound": .., "tight": ..}
    smt2: str = ""  # the main script (for --emit-smt2)
    # The certificate: every check-sat the verdict rests on, each self-contained
    # (smtmma.proofs.certificate.Block); empty when only ``smt2`` is known.
    blocks: list[Any] = field(default_factory=list)

# -- shared helpers --------------------------------------------------------------------------------


def _default_K(model: Model, prop: str) -> int:
    """One FDPA (K = L) for fused models; two pairwise groups for FTZ-AddMul order questions; one FMA for error bounds."""
    if model.L is not None and model.kind in FDPA_KINDS:
        return model.L
    if model.kind == "ftz-addmul":
        assert model.P is not None
        return 2 * model.P if prop == "order-independence" else model.P
    return 1 if prop == "error-bound" else 4


def setup_query(model: Model, name: Optional[str], K: Optional[int], domain: Optional[Domain], prop: str) -> tuple[str, int, Domain]:
    if not isinstance(model, Model):
        raise InputError(f"{prop}: expected a Model, got {type(model).__name__}")
    K = _default_K(model, prop) if K is None else int(K)
    if K < 1:
        raise InputError(f"{prop}: K must be at least 1, got {K}")
    return (name or model.describe()), K, (domain or Domain())


def make_result(prop: str, verdict: str, name: str, model: Model, K: int, domain: Domain, run: Runner, **kw: Any) -> QueryResult:
    return QueryResult(prop, verdict, name, model, K, domain, run.name, run.seconds, **kw)


def unknown_result(prop: str, name: str, model: Model, K: int, domain: Domain, run: Runner, what: str, reason: str, **kw: Any) -> QueryResult:
    return make_result(prop, "unknown", name, model, K, domain, run, reason=f"{what}: the solver gave up ({reason or 'no reason given'})", **kw)


def check_nonempty(model: Model, K: int, domain: Domain, run: Runner, prop: str) -> None:
    """A proof over an empty domain proves nothing: raise EmptyDomainError when no input satisfies it."""
    if domain == Domain():
        return  # finite inputs always exist
    empty = domain_is_empty([model], K, domain, solver=run.solver, timeout=run.timeout, seed=run.seed)
    if empty:
        raise EmptyDomainError(f"{prop}: no input satisfies the domain ({domain.describe()}, K={K}); a proof over it would be vacuous")


def replay_one(model: Model, w: Witness) -> int:
    return replay([model], w)[0]


def expect_same(label: str, claimed: int, got: int, w: Witness) -> None:
    if claimed != got:
        raise ReplayError(f"{label}: the solver's output {claimed:#x} disagrees with the simulator's {got:#x} on {w}")


def py_value(fmt: Format, bits: int) -> Union[Fraction, float, None]:
    """Exact value of a pattern (Fraction), +-inf as floats, None for NaN."""
    v = to_fraction(fmt, bits)
    if v == Special.NAN:
        return None
    if v == Special.INF:
        return float("inf")
    if v == Special.NINF:
        return float("-inf")
    assert isinstance(v, Fraction)
    return v


def py_same_value(fmt: Format, x: int, y: int) -> bool:
    vx, vy = py_value(fmt, x), py_value(fmt, y)
    return vx == vy  # None == None: both NaN


def negated_witness(model: Model, w: Witness) -> Witness:
    fa, fc = get_format(model.a_fmt), get_format(model.c_fmt)
    return Witness(tuple(neg_pattern(fa, x) for x in w.a), w.b, neg_pattern(fc, w.c), w.scale_a, w.scale_b)


def hex_witness(model: Model, w: Witness) -> dict[str, object]:
    """A witness as hex strings in each operand's format (for ``extra``: JSON-friendly)."""
    out: dict[str, object] = {
        "a": [format_hex(model.a_fmt, x) for x in w.a],
        "b": [format_hex(model.b_fmt, x) for x in w.b],
        "c": format_hex(model.c_fmt, w.c),
    }
    if w.scale_a is not None and w.scale_b is not None and model.scale_fmt:
        out["scale_a"] = [format_hex(model.scale_fmt, x) for x in w.scale_a]
        out["scale_b"] = [format_hex(model.scale_fmt, x) for x in w.scale_b]
    return out

def pattern_text(fmt: Format, bits: int) -> str:
    """A pattern's exact value as text: decimal (``1``, ``0.0048828125``), ``inf``/``-inf`` or ``nan``."""
    v = py_value(fmt, bits)
    return "nan" if v is None else (str(v) if isinstance(v, float) else _dec(v))


def show_value(fmt: Format, bits: int) -> str:
    """A pattern as hex and its exact value (``0x3c00 (1)``)."""
    return f"{format_hex(fmt, bits)} ({pattern_text(fmt, bits)})"


def approx_ratio(text: str) -> Optional[str]:
    """An exact ratio ``p/q`` too long to read (over 24 characters) as a decimal of 4 significant digits; None when
    it is short enough to show as it is."""
    return f"{float(Fraction(text)):.4g}" if "/" in text and len(text) > 24 else None


def _dec(v: Fraction) -> str:
    """A dyadic value in decimal (up to 9 significant digits); other fractions as p/q."""
    if v == 0:
        return "0"
    if v.denominator == 1 or v.denominator & (v.denominator - 1) == 0:
        return f"{float(v):.9g}" if abs(float(v)) not in (0.0, float("inf")) else str(v)
    return str(v)
