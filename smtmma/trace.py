"""Intermediate values of one dot product through a model, and the first step where two models part ways.

The op definitions mark their stages with ``alg.note`` (a no-op for the
simulator and the formulas); :func:`trace_dot` runs a model on one input
with an algebra that records them as exact values.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NamedTuple, Optional, Sequence, Union

import numpy as np

from .encodings.algebra import BoolLike, Int, IntLike
from .encodings.concrete import NumpyAlgebra
from .errors import InputTypeError
from .formats import Format, Special, get_format, named_pattern, patterns, to_fraction
from .models import Model
from .simulate import checked_inputs, run_model

__all__ = ["Step", "Trace", "Divergence", "trace_dot", "divergence", "first_divergence"]

Value = Union[Fraction, str]  # an exact value, or "nan", "inf", "-inf"


@dataclass(frozen=True)
class Step:
    """One recorded intermediate value: ``what`` it is, in ``stage`` ("" before any), and its exact ``value``."""

    stage: str
    what: str
    value: Value

    @property
    def label(self) -> str:
        """``stage: what`` (or ``what`` outside a stage)."""
        return f"{self.stage}: {self.what}" if self.stage else self.what


class Trace(NamedTuple):
    """A model's stages (in order) and the steps recorded in them."""

    stages: list[str]
    steps: list[Step]

    def stage_results(self) -> list[tuple[str, Value]]:
        """Each stage after the first (the inputs) with the value of its last step."""
        last = {st.stage: st.value for st in self.steps}
        return [(name, last[name]) for name in self.stages[1:] if name in last]


@dataclass(frozen=True)
class Divergence:
    """Where two models' traces part: ``label`` and each model's value there (``None``: no shared step differs).

    ``structure`` is set when the models run different stages (e.g. one FDPA
    of 16 lanes against two of 8): for each model, its stages after the
    inputs in order, each with the value it ends on.
    """

    label: Optional[str]
    values: tuple[Value, Value]
    structure: Optional[tuple[list[tuple[str, Value]], list[tuple[str, Value]]]] = None


class _TracingAlgebra(NumpyAlgebra):
    """The simulator's algebra on one input, recording every ``note`` as an exact value."""

    def __init__(self) -> None:
        super().__init__()
        self.steps: list[Step] = []
        self.stages: list[str] = []
        self._stage = ""

    def _int(self, x: IntLike) -> int:
        return int(x) if isinstance(x, int) else int(self.value(x, 1)[0])

    def note(self, label: str, x: Optional[Int] = None, *, exp: IntLike = 0, shift: int = 0, neg: Optional[BoolLike] = None,
             fmt: Any = None, fields: Any = None) -> None:
        if x is None and fields is None:
            self._stage = label
            self.stages.append(label)
            return
        if fields is not None:
            value: Value = _field_value(self, fields)
        elif fmt is not None:
            value = _pattern_value(fmt, self._int(x))  # type: ignore[arg-type]
        else:
            value = Fraction(self._int(x)) * Fraction(2) ** (self._int(exp) + shift)  # type: ignore[arg-type]
            if neg is not None and self._bool_value(neg):
                value = -value
        self.steps.append(Step(self._stage, label, value))

    def _bool_value(self, b: BoolLike) -> bool:
        return bool(b) if isinstance(b, bool) else bool(np.asarray(self.value(b, 1))[0])


def _pattern_value(fmt: Format, bits: int) -> Value:
    v = to_fraction(fmt, bits)
    if v == Special.NAN:
        return "nan"
    if v in (Special.INF, Special.NINF):
        return "inf" if v == Special.INF else "-inf"
    return v  # type: ignore[return-value]


def _field_value(alg: _TracingAlgebra, u: Any) -> Value:
    if alg._bool_value(u.is_nan):
        return "nan"
    neg = alg._bool_value(u.neg)
    if alg._bool_value(u.is_inf):
        return "-inf" if neg else "inf"
    v = Fraction(alg._int(u.sig)) * Fraction(2) ** (alg._int(u.exp) - u.frac)
    return -v if neg else v


def trace_dot(model: Model, a: Sequence[int], b: Sequence[int], c: int,
              scale_a: Optional[Sequence[int]] = None, scale_b: Optional[Sequence[int]] = None) -> Trace:
    """The stages and steps of ``model`` on one dot product given as bit patterns; values exact."""
    if not isinstance(model, Model):
        raise InputTypeError(f"model must be a Model (e.g. lookup('sm90', 'f16f32').model), got {type(model).__name__}")

    def row(x: Optional[Sequence[int]], fmt_name: Optional[str], name: str) -> Optional[np.ndarray]:
        # every value checked as an int first: a list of large fp64 patterns never becomes float64
        return None if x is None else np.array([patterns(get_format(fmt_name or "ue8m0"), x, name)], dtype=np.uint64)

    A, B, C, SA, SB = checked_inputs(model, row(a, model.a_fmt, "a"), row(b, model.b_fmt, "b"),
                                     np.array([named_pattern(get_format(model.c_fmt), c, "c")], dtype=np.uint64),
                                     row(scale_a, model.scale_fmt, "scale_a"), row(scale_b, model.scale_fmt, "scale_b"))
    alg = _TracingAlgebra()

    def lane(fmt_name: Optional[str], x: int) -> Int:
        top = (1 << get_format(fmt_name or "ue8m0").bits) - 1
        return alg.input(np.array([int(x)], dtype=np.int64 if top < (1 << 63) else object), 0, top)

    sa = [lane(model.scale_fmt, x) for x in SA[0]] if SA is not None else None
    sb = [lane(model.scale_fmt, x) for x in SB[0]] if SB is not None else None
    run_model(alg, model, [lane(model.a_fmt, x) for x in A[0]], [lane(model.b_fmt, x) for x in B[0]],
              lane(model.c_fmt, C[0]), sa, sb)
    return Trace(alg.stages, alg.steps)


def divergence(first: Trace, second: Trace) -> Divergence:
    """The first step, among those both traces record under the same label, whose values differ."""
    structure = (first.stage_results(), second.stage_results()) if first.stages != second.stages else None
    other = {s.label: s.value for s in second.steps}
    for s in first.steps:
        if s.label in other and other[s.label] != s.value:
            return Divergence(s.label, (s.value, other[s.label]), structure)
    last1 = first.steps[-1].value if first.steps else "nan"
    last2 = second.steps[-1].value if second.steps else "nan"
    return Divergence(None, (last1, last2), structure)


def first_divergence(first: Model, second: Model, a: Sequence[int], b: Sequence[int], c: int,
                     scale_a: Optional[Sequence[int]] = None, scale_b: Optional[Sequence[int]] = None) -> Divergence:
    """:func:`divergence` of the two models' traces on one dot product given as bit patterns."""
    return divergence(trace_dot(first, a, b, c, scale_a, scale_b), trace_dot(second, a, b, c, scale_a, scale_b))
