"""The Python API refuses what the CLI refuses, in one line (issue 33, item 8): read-only ``out=`` arrays,
strings where a bool goes, array types whose values NumPy reads wrongly (masked, sparse, complex); and it
takes what its docs promise (``query("custom", predicate=fn)``)."""

from __future__ import annotations

import os
import warnings
from typing import Any, Callable

import numpy as np
import pytest

import smtmma
from smtmma.arrays import from_patterns, to_patterns
from smtmma.errors import InputError, InputTypeError, user_stacklevel
from smtmma.queries.backends import available


def one_line(call: Callable[[], object], error: type, message: str) -> None:
    with pytest.raises(error) as e:
        call()
    assert message in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_a_read_only_out_is_refused_before_the_work() -> None:
    out = np.zeros((2, 3), np.float32)
    out.flags.writeable = False
    rows: list[int] = []
    one_line(lambda: smtmma.matmul("sm90", "f16f32", np.ones((2, 16)), np.ones((16, 3)), out=out,
                                   progress=lambda done, total: rows.append(done)),
             InputError, "out is read-only")
    assert rows == []  # refused before any row of D was computed
    one_line(lambda: smtmma.matmul("sm90", "f16f32", np.ones((2, 16)), np.ones((16, 3)), out=np.zeros((2, 3))),
             InputTypeError, "out must be a float32 array of shape (2, 3), got a float64 array")
    mine = np.zeros((2, 3), np.float32)
    assert smtmma.matmul("sm90", "f16f32", np.ones((2, 16)), np.ones((16, 3)), out=mine) is mine and (mine == 16).all()


def test_a_d_too_large_for_memory_is_an_input_error() -> None:
    one_line(lambda: smtmma.matmul("sm90", "f16f32", np.ones((2_000_000, 1)), np.ones((1, 2_000_000))),
             InputError, "D (2000000 x 2000000: A's rows x B's columns) needs")


FLAGS: list[tuple[str, Callable[[], object], str]] = [
    ("matmul bits", lambda: smtmma.matmul("sm90", "f16f32", [[1.0]], [[1.0]], bits="False"), "bits must be True or False"),
    ("distinguish confirm", lambda: smtmma.distinguish("sm80", "sm90", instr="f16f32", confirm="False"),
     "confirm must be True or False, got 'False'"),
    ("query tight", lambda: smtmma.query("error-bound", "sm90", "f16f32", tight="no"), "tight must be True or False"),
    ("query tight as 1", lambda: smtmma.query("error-bound", "sm90", "f16f32", tight=1), "tight must be True or False"),
]


@pytest.mark.parametrize("what, call, message", FLAGS, ids=[f[0] for f in FLAGS])
def test_a_string_is_not_a_bool(what: str, call: Callable[[], object], message: str) -> None:
    one_line(call, InputTypeError, message)


class FakeSparseTensor:
    """What a torch sparse tensor looks like to duck typing (torch is not needed for this test)."""

    is_sparse = True
    layout = "torch.sparse_coo"


FakeSparseTensor.__module__ = "torch"

masked = np.ma.masked_array([[1.0, 2.0]], mask=[[False, True]])
ARRAYS: list[tuple[str, Callable[[], object], str]] = [
    ("masked A", lambda: smtmma.matmul("sm90", "f16f32", masked, np.ones((2, 1))), "A is a masked array"),
    ("masked a", lambda: smtmma.simulate_dot("sm90", "f16f32", np.ma.masked_array([[1]], mask=[[True]]), [[1]], [0]),
     "a is a masked array"),
    ("masked patterns", lambda: from_patterns(np.ma.masked_array([1], mask=[True]), "fp16", name="d"), "d is a masked array"),
    ("torch sparse (duck)", lambda: smtmma.matmul("sm90", "f16f32", FakeSparseTensor(), [[1.0]]),
     "A is a torch tensor with layout torch.sparse_coo: pass A.to_dense()"),
    ("complex a", lambda: smtmma.simulate_dot("sm90", "f16f32", np.array([[1 + 1j]]), [[1]], [0]), "a holds complex"),
    ("complex B", lambda: smtmma.matmul("sm90", "f16f32", [[1.0]], np.array([[1 + 0j]])), "B: expected real numbers"),
    ("object A", lambda: smtmma.matmul("sm90", "f16f32", np.array([[1.0]], dtype=object), [[1.0]]),
     "A: expected real numbers"),
]


@pytest.mark.parametrize("what, call, message", ARRAYS, ids=[a[0] for a in ARRAYS])
def test_an_array_type_it_cannot_take(what: str, call: Callable[[], object], message: str) -> None:
    one_line(call, InputError, message)


def test_scipy_sparse_matrices_are_refused() -> None:
    sp = pytest.importorskip("scipy.sparse")
    for x in (sp.csr_matrix(np.eye(2)), sp.coo_array(np.eye(2))):
        one_line(lambda: smtmma.matmul("sm90", "f16f32", x, np.ones((2, 1))), InputError,
                 f"A is a sparse {type(x).__name__}: pass a dense array")
        one_line(lambda: smtmma.simulate_dot("sm90", "f16f32", x.astype(np.uint16), np.ones((2, 2), np.uint16), [0, 0]),
                 InputError, "a is a sparse")
        one_line(lambda: to_patterns(x, "fp16", name="x"), InputError, "x is a sparse")


def test_torch_sparse_tensors_are_refused() -> None:
    torch = pytest.importorskip("torch")
    x = torch.eye(2).to_sparse()
    one_line(lambda: smtmma.matmul("sm90", "f16f32", x, torch.ones(2, 1)), InputError, "A is a torch tensor with layout")


@pytest.mark.skipif(not available(), reason="no SMT backend installed")
def test_query_takes_a_predicate_function() -> None:
    def same(alg: Any, inputs: dict, outputs: dict) -> Any:
        return alg.eq(outputs["sm80"], outputs["sm80"])

    rec = smtmma.query("custom", "sm80", "f16f32", k=2, predicate=same, timeout=30)
    assert rec["verdict"] == "holds"
    rec = smtmma.query("custom", "sm80", "f16f32", k=2, timeout=30,
                       predicate=lambda alg, inputs, outputs: alg.ne(outputs["sm80"], 0x3F800000))
    assert rec["verdict"] == "fails" and rec["outputs"]["sm80"] == "3f800000"  # the witness gives D = 1.0
    one_line(lambda: smtmma.query("custom", "sm80", "f16f32", predicate=5), InputTypeError,
             "predicate must be a function predicate(alg, inputs, outputs) or a Python file")


def test_a_warning_names_the_callers_line() -> None:
    """user_stacklevel() skips every frame inside the smtmma package: the warning points at the user's call."""
    inside = os.path.join(os.path.dirname(smtmma.__file__), "_a_module_that_warns.py")
    code = compile("import warnings\n"
                   "def warn(stacklevel):\n"
                   "    warnings.warn('smtmma: one line', RuntimeWarning, stacklevel=stacklevel())\n"
                   "def deeper(stacklevel):\n"
                   "    warn(stacklevel)\n", inside, "exec")
    ns: dict[str, Any] = {}
    exec(code, ns)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ns["deeper"](user_stacklevel)
    assert [(w.filename, str(w.message)) for w in caught] == [(__file__, "smtmma: one line")]
