"""smtmma.matmul: whole GEMMs equal the instruction chained per output through simulate_dot, for every instruction type."""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pytest

import smtmma
from smtmma.catalogue import CATALOGUE
from smtmma.cli import main
from smtmma.errors import InputError, NotRepresentableError
from smtmma.formats import carried_in, get_format
from smtmma.gemm import instruction_k
from smtmma.native.build import compiler
from smtmma.sampling import draw, draw_scales
from smtmma.simulate import simulate_dot

#: One catalogue row per instruction type (its first row).
ROWS = {e.instr: e for e in reversed(CATALOGUE)}
#: One row per model kind runs in CI's fast pass (each compiles its kernel); -m slow runs every instruction type.
FAST = {e.model.kind: e for e in reversed(CATALOGUE)}
PARAMS = ([pytest.param(e, id=f"{e.arch}-{e.instr}") for e in FAST.values()]
          + [pytest.param(ROWS[i], id=i, marks=pytest.mark.slow) for i in sorted(ROWS)])


@pytest.fixture(scope="module", autouse=True)
def _fast_builds() -> Iterator[None]:
    mp = pytest.MonkeyPatch()
    mp.setenv("SMTMMA_CC_OPT", "-O0")  # same bits, 4x faster builds
    yield
    mp.undo()


def _pat(x: np.ndarray) -> np.ndarray:
    """Patterns as simulate_dot takes them: int64, or uint64 for 64-bit formats."""
    return x if x.dtype == np.uint64 else x.astype(np.int64)


def _chained(model: smtmma.Model, k: int, A: np.ndarray, B: np.ndarray, C: np.ndarray, i: int, j: int,
             SA: np.ndarray | None, SB: np.ndarray | None) -> int:
    """D[i, j] by the definition: simulate_dot (NumPy) of each instruction's k values, D fed back as C."""
    K = A.shape[1]
    nk = -(-K // k)
    a = np.zeros(nk * k, A.dtype)
    b = np.zeros(nk * k, B.dtype)
    a[:K], b[:K] = A[i], B[:, j]
    d = int(C[i, j])
    for s in range(nk):
        kw = {}
        if SA is not None and SB is not None:
            blk = model.block or k
            per = k // blk
            idx = [min(s * per + t, SA.shape[1] - 1) for t in range(per)]
            kw = {"scale_a": SA[i, idx][None].astype(np.int64), "scale_b": SB[idx, j][None].astype(np.int64)}
        d = int(simulate_dot(model, None, a[None, s * k:(s + 1) * k], b[None, s * k:(s + 1) * k], np.array([d], C.dtype),
                             backend="numpy", **kw)[0])
    return d


@pytest.mark.skipif(compiler() is None, reason="no C compiler")
@pytest.mark.parametrize("e", PARAMS)
def test_matmul_equals_chained_dot_products(e: object) -> None:
    instr = e.instr  # type: ignore[attr-defined]
    model = e.model  # type: ignore[attr-defined]
    if get_format(model.c_fmt).name != carried_in(model.d_fmt).name:
        with pytest.raises(InputError, match="feeds D back as C"):
            smtmma.matmul(e.arch, instr, np.zeros((1, 1)), np.zeros((1, 1)), op=e.op)
        return
    k = instruction_k(e.arch, instr, e.op)
    rng = np.random.default_rng(7)
    M, N, K = 3, 4, 2 * k + 1
    kinds = ["normal", "bits"]
    A = _pat(np.concatenate([draw(kind, model.a_fmt, (M, K), rng) for kind in kinds]))
    B = _pat(draw("normal", model.b_fmt, (K, N), rng))
    C = _pat(draw("dnn", model.c_fmt, (2 * M, N), rng))
    SA = SB = None
    kw = {}
    if model.scale_fmt:
        nb = -(-K // (model.block or k))
        SA, SB = draw_scales("normal", model.scale_fmt, (2 * M, nb), rng), draw_scales("normal", model.scale_fmt, (nb, N), rng)
        kw = {"scale_a": SA, "scale_b": SB}
    D = smtmma.matmul(e.arch, instr, A, B, C, op=e.op, bits=True, backend="native", **kw)
    assert D.shape == (2 * M, N)
    for i in range(2 * M):
        for j in range(N):
            assert int(D[i, j]) == _chained(model, k, A, B, C, i, j, SA, SB), (instr, i, j)


def test_real_valued_arrays_and_the_numpy_backend_agree() -> None:
    rng = np.random.default_rng(3)
    A = rng.standard_normal((37, 70)).astype(np.float16)
    B = rng.standard_normal((70, 29)).astype(np.float16)
    C = rng.standard_normal((37, 29)).astype(np.float32)
    D = smtmma.matmul("sm90", "f16f32", A, B, C, jobs=2)
    assert D.dtype == np.float32 and D.shape == (37, 29)
    Dn = smtmma.matmul("sm90", "f16f32", A, B, C, backend="numpy", jobs=1)
    assert np.array_equal(D.view(np.uint32), Dn.view(np.uint32))
    bits = smtmma.matmul("sm90", "f16f32", A.view(np.uint16), B.view(np.uint16), C.view(np.uint32), bits=True)
    assert np.array_equal(bits, D.view(np.uint32))
    # the GEMM is not float64 arithmetic: truncation makes some outputs differ from the exact product
    exact = A.astype(np.float64) @ B.astype(np.float64) + C
    assert np.abs(D - exact).max() < 1e-4 * np.abs(exact).max()
    out = np.empty((37, 29), np.float32)
    assert smtmma.matmul("sm90", "f16f32", A, B, C, out=out) is out and np.array_equal(out.view(np.uint32), D.view(np.uint32))


def test_fp16_output_and_zero_c() -> None:
    A = np.array([[1.0, 2.0 ** -11]], np.float64)
    B = np.array([[1.0], [1.0]], np.float64)
    D = smtmma.matmul("sm80", "f16f16", A, B)
    assert D.dtype == np.float16 and D.view(np.uint16)[0, 0] == 0x3C00  # 1 + 2^-11 truncated in fp16


def test_bad_inputs() -> None:
    with pytest.raises(NotRepresentableError, match=r"A\[0, 1\] = 0.1 is not representable in fp16"):
        smtmma.matmul("sm90", "f16f32", [[1.0, 0.1]], [[1.0], [1.0]])
    D = smtmma.matmul("sm90", "f16f32", [[1.0, 0.1]], [[1.0], [1.0]], round="rne")
    assert D[0, 0] == np.float32(1.0) + np.float32(np.float16(0.1))
    with pytest.raises(InputError, match="A is 1x2 but B is 3x1"):
        smtmma.matmul("sm90", "f16f32", [[1.0, 2.0]], [[1.0], [1.0], [1.0]])
    with pytest.raises(InputError, match=r"C of shape \(2, 2\) does not broadcast to D's shape \(1, 1\)"):
        smtmma.matmul("sm90", "f16f32", [[1.0]], [[1.0]], np.zeros((2, 2), np.float32))
    with pytest.raises(InputError, match="A is a scalar"):
        smtmma.matmul("sm90", "f16f32", 1.0, [[1.0], [1.0]])
    with pytest.raises(InputError, match="backend"):
        smtmma.matmul("sm90", "f16f32", [[1.0]], [[1.0]], backend="gpu")
    with pytest.raises(InputError, match="scale"):
        smtmma.matmul("sm100", "mxe4m3f32", np.ones((1, 32)), np.ones((32, 1)), scale_a=np.full((1, 2), 127), scale_b=np.full((1, 1), 127))


def test_cli_matmul(tmp_path, capsys) -> None:
    rng = np.random.default_rng(5)
    A = rng.standard_normal((20, 33)).astype(np.float16)
    B = rng.standard_normal((33, 9)).astype(np.float16)
    np.save(tmp_path / "A.npy", A)
    np.save(tmp_path / "B.npy", B)
    out = tmp_path / "D.npy"
    assert main(["matmul", "--arch", "h100", "--instr", "f16f32", str(tmp_path / "A.npy"), str(tmp_path / "B.npy"),
                 "-o", str(out), "--json"]) == 0
    rec = __import__("json").loads(capsys.readouterr().out)
    assert (rec["M"], rec["N"], rec["K"], rec["k"], rec["arch"]) == (20, 9, 33, 16, "sm90")
    assert np.array_equal(np.load(out).view(np.uint32), smtmma.matmul("sm90", "f16f32", A, B).view(np.uint32))
    np.save(tmp_path / "bad.npy", np.array([[0.1]]))
    assert main(["matmul", "--arch", "sm90", "--instr", "f16f32", str(tmp_path / "bad.npy"), str(tmp_path / "bad.npy"),
                 "-o", str(out)]) == 2
    assert "A[0, 0] = 0.1 is not representable in fp16" in capsys.readouterr().err
    assert main(["matmul", "--arch", "sm90", "--instr", "f16f32", str(tmp_path / "missing.npy"), str(tmp_path / "B.npy"),
                 "-o", str(out)]) == 2
    assert "no such file" in capsys.readouterr().err


def test_cli_matmul_writes_the_file_named_and_refuses_others(tmp_path, capsys) -> None:
    np.save(tmp_path / "A.npy", np.ones((2, 16), dtype=np.float16))
    np.save(tmp_path / "B.npy", np.ones((16, 3), dtype=np.float16))
    args = ["matmul", "--arch", "sm90", "--instr", "f16f32", str(tmp_path / "A.npy"), str(tmp_path / "B.npy"), "-o"]
    assert main([*args, str(tmp_path / "D.txt")]) == 0  # np.save(path) would have written D.txt.npy
    capsys.readouterr()
    assert np.array_equal(np.load(tmp_path / "D.txt"), np.full((2, 3), 16, dtype=np.float32))
    assert not (tmp_path / "D.txt.npy").exists()
    for bad, message in [("", "-o is empty"), (str(tmp_path), "is a directory"),
                         (str(tmp_path / "nodir" / "D.npy"), "no such directory")]:
        assert main([*args, bad]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1
