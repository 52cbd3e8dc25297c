"""The compiled interpretation against the NumPy one: same bits for every catalogue model.

Each distinct catalogue model is compiled at its instruction's k and run on
the §3.1.4 distributions (``smtmma.sampling``: normal, uniform, dnn, random
bit streams with subnormals/inf/NaN, ill-conditioned sums) plus
combinations of each format's edge patterns; ``-m slow`` runs 10**6 dot
products per model.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Iterator, Optional

import numpy as np
import pytest

from catalogue_rows import is_fast, repeats_formats
from smtmma.catalogue import CATALOGUE
from smtmma.formats import get_format
from smtmma.models import Model
from smtmma.native.build import compiler
from smtmma.native.kernels import kernel
from smtmma.sampling import KINDS, draw_dot, draw_scales
from smtmma.simulate import simulate_dot

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")


def _models() -> dict[Model, str]:
    out: dict[Model, str] = {}
    for e in CATALOGUE:
        out.setdefault(e.model, f"{e.arch}-{e.instr}-{e.op}")
    return out


MODELS = _models()

#: Whether a model runs in the default test run: its first row is fast and brings a format its algorithm has not
#: compiled yet (catalogue_rows.repeats_formats); ``-m slow`` compiles and compares every model.
_FIRST_ROWS = [next(e for e in CATALOGUE if e.model == m) for m in MODELS]
_REPEATS = repeats_formats(_FIRST_ROWS)
FAST = {e.model: is_fast(e) and id(e) not in _REPEATS for e in _FIRST_ROWS}
K_OF = {m: max([s.k for e in CATALOGUE if e.model == m for s in e.shapes] or [m.L or 4]) for m in MODELS}


@pytest.fixture(scope="module", autouse=True)
def _build_all() -> Iterator[None]:
    """Compile every fast model's kernel up front, two at a time, at -O0 (the compiler is the cost; the bits are the same)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("SMTMMA_CC_OPT", "-O0")

    def build(m: Model) -> None:
        kernel(m, K_OF[m])  # every catalogue model compiles (NotCompilable here is a failure)
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(build, [m for m in MODELS if FAST[m]]))  # the slow ones build when their test runs
    yield
    mp.undo()


def edge_patterns(fmt_name: str) -> np.ndarray:
    """Zero, subnormal limits, smallest normal, one, largest finite, inf/NaN patterns of a format (both signs)."""
    fmt = get_format(fmt_name)
    m, e = fmt.man_bits, fmt.exp_bits
    top, full = (1 << e) - 1, (1 << m) - 1
    fields = [(0, 0), (0, 1), (0, full), (1, 0), (1, full), (fmt.bias, 0), (top - 1, full), (top, 0), (top, 1), (top, full)]
    pats = {(ef << m | mf) & ((1 << fmt.bits) - 1) for ef, mf in fields if ef <= top}
    if fmt.signed:
        pats |= {p | (1 << (fmt.bits - 1)) for p in pats}
    return np.array(sorted(pats), dtype=np.uint64)


def _inputs(model: Model, K: int, n: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    parts = [draw_dot(kind, model.a_fmt, model.b_fmt, model.c_fmt, n, K, rng) for kind in KINDS]
    ea, eb, ec = (edge_patterns(getattr(model, f)) for f in ("a_fmt", "b_fmt", "c_fmt"))
    parts.append((rng.choice(ea, (n, K)), rng.choice(eb, (n, K)), rng.choice(ec, n)))
    A, B, C = (np.concatenate([p[i].astype(np.uint64) for p in parts]) for i in range(3))
    return A.astype(np.int64) if get_format(model.a_fmt).bits < 64 else A, B if get_format(model.b_fmt).bits == 64 else B.astype(np.int64), C


def _scales(model: Model, rows: int, K: int, rng: np.random.Generator) -> dict[str, Optional[np.ndarray]]:
    if model.scale_fmt is None:
        return {}
    shape = (rows, -(-K // (model.block or K)))
    return {"scale_a": draw_scales("normal", model.scale_fmt, shape, rng), "scale_b": draw_scales("bits", model.scale_fmt, shape, rng)}


def _compare(model: Model, K: int, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    A, B, C = _inputs(model, K, n, rng)
    scales = _scales(model, len(A), K, rng)
    native = simulate_dot(model, None, A, B, C, backend="native", **scales)
    ref = simulate_dot(model, None, A, B, C, backend="numpy", **scales)
    bad = np.nonzero(native != ref)[0]
    assert not len(bad), (f"{len(bad)} of {len(ref)} differ; first row {bad[0]}: a={A[bad[0]].tolist()} "
                          f"b={B[bad[0]].tolist()} c={int(C[bad[0]])} native={int(native[bad[0]]):#x} numpy={int(ref[bad[0]]):#x}")


@pytest.mark.parametrize("model", [pytest.param(m, id=i, marks=() if FAST[m] else pytest.mark.slow) for m, i in MODELS.items()])
def test_compiled_equals_numpy(model: Model) -> None:
    _compare(model, K_OF[model], 300, seed=1)


@pytest.mark.slow
@pytest.mark.parametrize("model", list(MODELS), ids=list(MODELS.values()))
def test_compiled_equals_numpy_million(model: Model) -> None:
    for seed in range(6):
        _compare(model, K_OF[model], 1_000_000 // 42, seed=100 + seed)
