"""Intermediate values of one dot product through a model, and the first step where two models part ways.

The op definitions mark their stages with ``alg.note`` (a no-op for the
simulator and the formulas); :func:`trace_dot` runs a model on one input
with an algebra that records them as exact values.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional, Sequence, Union

import numpy as np

from .encodings.algebra import BoolLike, Int, IntLike
from .encodings.concrete import NumpyAlgebra
from .formats import Format, Special, get_format, to_fraction
from .models import Model
from .simulate import run_model

__all__ = ["Step", "Divergence", "trace_dot", "first_divergence"]

Value = Union[Fraction, str]  # an exact value, or "nan", "inf", "-inf"


@dataclass(frozen=True)
class Step:
    """One recorded intermediate value: ``label`` (stage: what) and its exact ``value``."""

    label: str
    value: Value


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
        self.steps.append(Step(f"{self._stage}: {label}" if self._stage else label, value))

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
              scale_a: Optional[Sequence[int]] = None, scale_b: Optional[Sequence[int]] = None) -> tuple[list[str], list[Step]]:
    """(stage names, steps) of ``model`` on one dot product given as bit patterns; values exact."""
    alg = _TracingAlgebra()

    def lane(fmt_name: Optional[str], x: int) -> Int:
        top = (1 << get_format(fmt_name or "ue8m0").bits) - 1
        return alg.input(np.array([int(x)], dtype=np.int64 if top < (1 << 63) else object), 0, top)

    sa = [lane(model.scale_fmt, x) for x in scale_a] if scale_a is not None else None
    sb = [lane(model.scale_fmt, x) for x in scale_b] if scale_b is not None else None
    run_model(alg, model, [lane(model.a_fmt, x) for x in a], [lane(model.b_fmt, x) for x in b], lane(model.c_fmt, c), sa, sb)
    return alg.stages, alg.steps


def first_divergence(first: Model, second: Model, a: Sequence[int], b: Sequence[int], c: int,
                     scale_a: Optional[Sequence[int]] = None, scale_b: Optional[Sequence[int]] = None) -> Divergence:
    """The first step, among those both models record under the same label, whose values differ."""
    stages1, steps1 = trace_dot(first, a, b, c, scale_a, scale_b)
    stages2, steps2 = trace_dot(second, a, b, c, scale_a, scale_b)
    structure = (_stage_results(stages1, steps1), _stage_results(stages2, steps2)) if stages1 != stages2 else None
    other = {s.label: s.value for s in steps2}
    for s in steps1:
        if s.label in other and other[s.label] != s.value:
            return Divergence(s.label, (s.value, other[s.label]), structure)
    last1 = steps1[-1].value if steps1 else "nan"
    last2 = steps2[-1].value if steps2 else "nan"
    return Divergence(None, (last1, last2), structure)


def _stage_results(stages: list[str], steps: list[Step]) -> list[tuple[str, Value]]:
    """Each stage after the inputs with the value of its last step."""
    last: dict[str, Value] = {}
    for st in steps:
        last[st.label.split(": ", 1)[0]] = st.value
    return [(name, last[name]) for name in stages[1:] if name in last]
