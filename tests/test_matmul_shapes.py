"""smtmma.matmul follows np.matmul: batched and broadcast shapes, 1-D operands, C broadcast, the caller's array kind
and D's natural dtype.  Each batch entry must equal the 2-D GEMM of that entry, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import smtmma
from smtmma.errors import InputError, InputTypeError
from smtmma.scheme import Scheme


def _fp16(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float16)


@pytest.mark.parametrize("sa, sb", [((3, 5, 20), (3, 20, 4)), ((2, 1, 5, 20), (3, 20, 4)), ((5, 20), (2, 20, 4)),
                                    ((2, 3, 5, 20), (20, 4))])
def test_batched_and_broadcast_shapes_equal_each_2d_gemm(sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    rng = np.random.default_rng(1)
    A, B = _fp16(rng, sa), _fp16(rng, sb)
    D = smtmma.matmul("sm90", "f16f32", A, B)
    assert D.shape == np.matmul(A, B).shape and D.dtype == np.float32
    Ab, Bb = np.broadcast_to(A, D.shape[:-2] + sa[-2:]), np.broadcast_to(B, D.shape[:-2] + sb[-2:])
    for idx in np.ndindex(*D.shape[:-2]):
        assert np.array_equal(D[idx].view(np.uint32), smtmma.matmul("sm90", "f16f32", Ab[idx], Bb[idx]).view(np.uint32))


def test_one_d_operands_follow_np_matmul() -> None:
    rng = np.random.default_rng(2)
    a, b, Bm, Am = _fp16(rng, (20,)), _fp16(rng, (20,)), _fp16(rng, (20, 3)), _fp16(rng, (4, 20))
    assert smtmma.matmul("sm90", "f16f32", a, b).shape == ()
    vm = smtmma.matmul("sm90", "f16f32", a, Bm)
    mv = smtmma.matmul("sm90", "f16f32", Am, b)
    assert vm.shape == (3,) and mv.shape == (4,)
    assert np.array_equal(vm, smtmma.matmul("sm90", "f16f32", a[None], Bm)[0])
    assert np.array_equal(mv, smtmma.matmul("sm90", "f16f32", Am, b[:, None])[:, 0])


def test_c_broadcasts_to_the_result() -> None:
    rng = np.random.default_rng(3)
    A, B = _fp16(rng, (2, 4, 20)), _fp16(rng, (20, 3))
    c_row = rng.standard_normal(3).astype(np.float32)
    D = smtmma.matmul("sm90", "f16f32", A, B, c_row)
    full = smtmma.matmul("sm90", "f16f32", A, B, np.broadcast_to(c_row, (2, 4, 3)).copy())
    assert np.array_equal(D.view(np.uint32), full.view(np.uint32))
    assert smtmma.matmul("sm90", "f16f32", A, B, np.float32(0.5) * np.ones(())).shape == (2, 4, 3)
    with pytest.raises(InputError, match=r"C of shape \(4,\) does not broadcast to D's shape \(2, 4, 3\)"):
        smtmma.matmul("sm90", "f16f32", A, B, np.ones(4, np.float32))


def test_empty_dimensions_give_empty_results() -> None:
    assert smtmma.matmul("sm90", "f16f32", np.ones((0, 16), np.float16), np.ones((16, 3), np.float16)).shape == (0, 3)
    assert smtmma.matmul("sm90", "f16f32", np.ones((2, 0, 5, 16), np.float16), np.ones((16, 3), np.float16)).shape == (2, 0, 5, 3)


def test_shapes_that_do_not_broadcast_are_refused() -> None:
    A, B = np.ones((2, 3, 4), np.float16), np.ones((3, 4, 5), np.float16)
    with pytest.raises(InputError, match=r"the batch dimensions of A \(2,\) and B \(3,\) do not broadcast"):
        smtmma.matmul("sm90", "f16f32", A, B)
    with pytest.raises(InputError, match="A's last dimension \\(4\\) must equal B's second-to-last dimension \\(5\\)"):
        smtmma.matmul("sm90", "f16f32", A[0], np.ones((5, 2), np.float16))


def test_natural_dtypes_and_bits() -> None:
    A = np.ones((2, 16), np.float16)
    B = np.ones((16, 2), np.float16)
    assert smtmma.matmul("sm90", "f16f16", A, B).dtype == np.float16
    assert smtmma.matmul("sm90", "f16f32", A.view(np.uint16), B.view(np.uint16), bits=True).dtype == np.uint32
    D = smtmma.matmul("sm90", "f16f32", A.view(np.uint16), B.view(np.uint16), bits=True)
    assert D.tolist() == [[0x41800000] * 2] * 2  # 16.0


def test_a_scheme_applies_to_every_batch_entry() -> None:
    rng = np.random.default_rng(4)
    A, B = _fp16(rng, (3, 2, 64)), _fp16(rng, (3, 64, 2))
    sch = Scheme(split_k=2, partial="bf16")
    D = smtmma.matmul("sm90", "f16f32", A, B, scheme=sch)
    for i in range(3):
        assert np.array_equal(D[i].view(np.uint32), smtmma.matmul("sm90", "f16f32", A[i], B[i], scheme=sch).view(np.uint32))


def test_torch_in_torch_out() -> None:
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(0)
    A = torch.randn(2, 3, 32, generator=g).to(torch.bfloat16)
    B = torch.randn(32, 5, generator=g).to(torch.bfloat16)
    D = smtmma.matmul("sm90", "bf16f32", A, B)
    assert isinstance(D, torch.Tensor) and D.dtype == torch.float32 and tuple(D.shape) == (2, 3, 5)
    ref = smtmma.matmul("sm90", "bf16f32", A.float().numpy(), B.float().numpy())
    assert np.array_equal(D.numpy().view(np.uint32), ref.view(np.uint32))
    bits = smtmma.matmul("sm90", "bf16f32", A.view(torch.int16), B.view(torch.int16), bits=True)
    assert bits.dtype == torch.int32 and np.array_equal(bits.numpy().view(np.uint32), ref.view(np.uint32))
    h = smtmma.matmul("sm90", "f16f16", A.to(torch.float16)[0], B.to(torch.float16))
    assert h.dtype == torch.float16
    dot = smtmma.matmul("sm90", "bf16f32", A[0, 0], B[:, 0])
    assert tuple(dot.shape) == () and dot.dtype == torch.float32
    with pytest.raises(InputTypeError, match="out takes a NumPy array"):
        smtmma.matmul("sm90", "bf16f32", A, B, out=np.empty((2, 3, 5), np.float32))
