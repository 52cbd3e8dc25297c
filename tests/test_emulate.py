"""smtmma.emulate: torch's matrix products routed through smtmma.matmul, bit for bit."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

torch = pytest.importorskip("torch")

import smtmma  # noqa: E402
from smtmma.torch_emulation import NativeWarning, Product  # noqa: E402
from smtmma.scheme import Scheme  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

ROUTED = {"mm", "bmm", "dot", "mv", "addmm", "baddbmm", "addmv", "_scaled_mm"}


class Recorder(TorchDispatchMode):
    """Entered inside emulate: records each routed op's arguments and the result emulate returned."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, tuple, dict, object]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = func.overloadpacket.__name__.rstrip("_") if func.overloadpacket.__name__ != "_scaled_mm" else "_scaled_mm"
        if name in ROUTED:
            self.calls.append((name, args, kwargs, out))
        return out


def bits(t: "torch.Tensor") -> "torch.Tensor":
    """The tensor's bit patterns (signed ints of its width)."""
    return t.contiguous().view({2: torch.int16, 4: torch.int32, 8: torch.int64, 1: torch.int8}[t.element_size()])


def assert_same_bits(got: "torch.Tensor", want: "torch.Tensor") -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    assert torch.equal(bits(got), bits(want)), (got, want)


def expected(arch: str, name: str, args: tuple, kwargs: dict, instr: str) -> "torch.Tensor":
    """What emulate's rule gives for one recorded op, computed with smtmma.matmul directly."""
    if name in ("mm", "bmm", "dot", "mv"):
        A, B = args[:2]
        D = smtmma.matmul(arch, instr, A, B)
    else:
        C, A, B = args[:3]
        alpha, beta = kwargs.get("alpha", 1), kwargs.get("beta", 1)
        D = smtmma.matmul(arch, instr, A, B, None if beta == 0 else C,
                          scheme=Scheme(c_in="epilogue", alpha=alpha, beta=beta))
    shape = () if A.ndim == 1 and B.ndim == 1 else None
    return (D.reshape(shape) if shape is not None else D).to(A.dtype)


def test_mlp_forward_and_backward_reproduce_matmul():
    """An unchanged bf16 MLP's forward and backward under emulate("h100"): each routed product is smtmma.matmul's."""
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(24, 40), torch.nn.ReLU(), torch.nn.Linear(40, 8)).to(torch.bfloat16)
    x = torch.randn(6, 24, dtype=torch.bfloat16)
    with smtmma.emulate("h100") as em, Recorder() as rec:
        loss = net(x).float().square().sum()
        loss.backward()
    assert all(p.grad is not None and p.grad.dtype == torch.bfloat16 for p in net.parameters())
    names = [c[0] for c in rec.calls]
    assert names.count("addmm") == 2 and names.count("mm") >= 3  # forward's two linears; backward's weight/input grads
    assert [(p.op, p.instr, p.routed) for p in em.log] == [(n, "bf16f32", True) for n in names]
    for name, args, kwargs, out in rec.calls:
        assert_same_bits(out, expected("sm90", name, args, kwargs, "bf16f32"))


def test_every_routed_op_matches_matmul():
    torch.manual_seed(1)
    x = torch.randn(4, 16, dtype=torch.bfloat16)
    y = torch.randn(16, 4, dtype=torch.bfloat16)
    b3 = torch.randn(2, 3, 8, dtype=torch.bfloat16)
    c3 = torch.randn(2, 8, 5, dtype=torch.bfloat16)
    with smtmma.emulate("a100") as em, Recorder() as rec:
        torch.matmul(x[0], y[:, 0])                                           # dot
        torch.mv(x, y[:, 1])                                                  # mv
        torch.addmv(y[0], x, y[:, 2], beta=0.5, alpha=2.0)                   # addmv
        torch.matmul(b3, c3)                                                  # bmm
        torch.baddbmm(torch.randn(2, 3, 5, dtype=torch.bfloat16), b3, c3, beta=0.0, alpha=3.0)
        torch.addmm(torch.randn(4, dtype=torch.bfloat16), x, y, alpha=-1.5)
        o = torch.empty(0, dtype=torch.bfloat16)
        torch.mm(x, y, out=o)
        z = torch.randn(4, 4, dtype=torch.bfloat16)
        z0 = z.clone()
        z.addmm_(x, y)
    assert [c[0] for c in rec.calls] == ["dot", "mv", "addmv", "bmm", "baddbmm", "addmm", "mm", "addmm"]
    assert all(p.routed and p.instr == "bf16f32" for p in em.log) and len(em.log) == 8
    for name, args, kwargs, out in rec.calls[:6]:
        assert_same_bits(out, expected("sm80", name, args, kwargs, "bf16f32"))
    assert rec.calls[0][3].shape == ()
    assert_same_bits(o, expected("sm80", "mm", (x, y), {}, "bf16f32"))
    assert_same_bits(z, expected("sm80", "addmm", (z0, x, y), {}, "bf16f32"))


# A row whose exact dot product, 2 - 1 + 2^-11 + 2^-23 = 1 + 2^-11 + 2^-23, lies just above the fp16 tie between
# 1 and 1 + 2^-10.  Volta's FDPA aligns to the largest product (2 = 2^1) and keeps F = 23 bits below it, down to
# 2^-22: the 2^-23 term is truncated, the FP32 result is the tie itself and RNE to fp16 gives 1.0.  Hopper keeps
# F = 25 bits (down to 2^-24), as does an FP32 sum in this order: 1 + 2^-10.
A_TIE = [[2.0, -1.0, 2.0**-11, 2.0**-12]]
B_TIE = [[1.0], [1.0], [1.0], [2.0**-11]]


def test_fp16_sm70_truncation_differs_from_native():
    A = torch.tensor(A_TIE, dtype=torch.float16)
    B = torch.tensor(B_TIE, dtype=torch.float16)
    with smtmma.emulate("v100") as em:
        volta = torch.mm(A, B)
    with smtmma.emulate("h100"):
        hopper = A @ B
    native = torch.mm(A, B)
    assert em.log == [Product("mm", "float16", "f16f32", ((1, 4), (4, 1)), True)]
    assert bits(volta).item() == 0x3C00  # 1.0
    assert bits(hopper).item() == 0x3C01  # 1 + 2^-10
    assert bits(native).item() == 0x3C01


def test_bias_enters_in_the_fp32_epilogue():
    """addmm's C is added to the finished product (RNE), not fed into the instruction chain (here an FMA chain)."""
    A = torch.tensor([[2.0**-53, 2.0**-53]], dtype=torch.float64)
    B = torch.tensor([[1.0], [1.0]], dtype=torch.float64)
    C = torch.tensor([1.0], dtype=torch.float64)
    with smtmma.emulate("h100") as em:
        d = torch.nn.functional.linear(A, B.t(), C)
    assert [(p.op, p.instr) for p in em.log] == [("addmm", "f64f64")]
    assert d.item() == 1.0 + 2.0**-52  # X = 2^-52 exactly, then X + 1
    chained = smtmma.matmul("h100", "f64f64", A, B, C)  # C in the accumulator: 1 + 2^-53 rounds to 1, twice
    assert chained.item() == 1.0


def test_tf32_follows_torch_setting_and_scheme_round():
    A = torch.tensor([[1.0 + 2.0**-11]], dtype=torch.float32)  # halfway between two TF32 values
    B = torch.tensor([[1.0]], dtype=torch.float32)
    old = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("high")
        with smtmma.emulate("h100") as em:
            rne = torch.mm(A, B)
        with smtmma.emulate("h100", scheme="cublas-tf32"):
            rna = torch.mm(A, B)
        assert em.log[0].instr == "tf32f32"
        assert rne.item() == 1.0 and rna.item() == 1.0 + 2.0**-10
        torch.set_float32_matmul_precision("highest")
        with pytest.warns(NativeWarning, match=r"float32 runs natively: TF32 is off") as record:
            with smtmma.emulate("h100") as em:
                n1, n2 = torch.mm(A, B), torch.mm(B, A)
        assert len([w for w in record if w.category is NativeWarning]) == 1  # once per (dtype, reason)
        assert n1.item() == n2.item() == 1.0 + 2.0**-11 and [p.routed for p in em.log] == [False, False]
        with smtmma.emulate("mi300x") as em:  # CDNA runs FP32 GEMMs on its MFMA F32 instruction
            torch.mm(A, B)
        assert em.arch == "gfx942" and em.log[0].instr == "f32f32"
    finally:
        torch.set_float32_matmul_precision(old)


def test_fp16_accumulation_setting_picks_f16f16():
    old = torch.backends.cuda.matmul.allow_fp16_accumulation
    A = torch.tensor(A_TIE, dtype=torch.float16)
    B = torch.tensor(B_TIE, dtype=torch.float16)
    try:
        torch.backends.cuda.matmul.allow_fp16_accumulation = True
        with smtmma.emulate("sm70") as em:
            d = torch.mm(A, B)
    finally:
        torch.backends.cuda.matmul.allow_fp16_accumulation = old
    assert em.log[0].instr == "f16f16"
    assert_same_bits(d, smtmma.matmul("sm70", "f16f16", A, B))


def test_scaled_mm_fp8_instruction_then_fp32_scales():
    """Hopper's FP8 FDPA keeps 13 bits below the largest product: 1 + 2^-14 becomes 1, then the scales apply."""
    A = torch.zeros(2, 32, dtype=torch.float32)
    A[0, :2] = torch.tensor([1.0, 2.0**-7])
    A[1, :3] = torch.tensor([3.0, -0.5, 0.25])
    B = torch.zeros(32, 3, dtype=torch.float32)
    B[:2, 0] = torch.tensor([1.0, 2.0**-7])
    B[:3, 1:] = 1.0
    A8, B8 = A.to(torch.float8_e4m3fn), B.to(torch.float8_e4m3fn)
    sa, sb = torch.tensor(2.0), torch.tensor(0.5)
    with smtmma.emulate("h100") as em:
        d = torch._scaled_mm(A8, B8, sa, sb, out_dtype=torch.float32)
        rows = torch.tensor([[3.0], [0.1]]), torch.tensor([[1.0, 7.0, 1.0 / 3]])
        bias = torch.tensor([0.5, -1.0, 2.0], dtype=torch.bfloat16)
        d2 = torch._scaled_mm(A8, B8, *rows, bias=bias, out_dtype=torch.bfloat16)
    native = torch._scaled_mm(A8, B8, sa, sb, out_dtype=torch.float32)
    assert [(p.op, p.instr) for p in em.log] == [("_scaled_mm", "e4m3e4m3f32")] * 2
    assert d[0, 0].item() == 1.0 and native[0, 0].item() == 1.0 + 2.0**-14
    X = smtmma.matmul("h100", "e4m3e4m3f32", A8, B8)
    assert_same_bits(d, X * (sa * sb))
    assert_same_bits(d2, (X * (rows[0] * rows[1]) + bias.float()).to(torch.bfloat16))


def test_products_the_arch_lacks_run_natively_or_raise_when_strict():
    A = torch.randn(3, 5, dtype=torch.float64)
    B = torch.randn(5, 2, dtype=torch.float64)
    with pytest.warns(NativeWarning, match=r"sm70 has no instruction for float64 \(it has f16f16, f16f32, f16f32c16\)"):
        with smtmma.emulate("volta") as em:
            d = A @ B
    assert_same_bits(d, torch.mm(A, B))
    assert em.log[0].routed is False and em.log[0].instr is None
    with pytest.raises(smtmma.InputError) as e:
        with smtmma.emulate("sm70", strict=True):
            A @ B
    msg = str(e.value)
    assert "\n" not in msg and "float64" in msg and "sm70" in msg and "f16f32" in msg
    with pytest.warns(NativeWarning, match="e4m3"):  # gfx942's FP8 instructions take the FNUZ formats
        with smtmma.emulate("mi300x"):
            A8 = torch.zeros(2, 16).to(torch.float8_e4m3fn)
            torch._scaled_mm(A8, A8.t(), torch.tensor(1.0), torch.tensor(1.0), out_dtype=torch.float32)


def test_fused_products_warn_once_and_silent_natives():
    x = torch.randn(1, 3, 5, 5, dtype=torch.bfloat16)
    w = torch.randn(4, 3, 3, 3, dtype=torch.bfloat16)
    with pytest.warns(NativeWarning, match="aten.convolution is not a routed product") as record:
        with smtmma.emulate("h100") as em:
            torch.nn.functional.conv2d(x, w)
            torch.nn.functional.conv2d(x, w)
    assert len([r for r in record if r.category is NativeWarning]) == 1
    assert [(p.op, p.routed) for p in em.log] == [("convolution", False)] * 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with smtmma.emulate("h100", strict=True) as em:
            i = torch.mm(torch.ones(2, 3, dtype=torch.int64), torch.ones(3, 2, dtype=torch.int64))
            e = torch.mm(torch.ones(0, 3, dtype=torch.bfloat16), torch.ones(3, 2, dtype=torch.bfloat16))
    assert i.tolist() == [[3, 3], [3, 3]] and e.shape == (0, 2)
    assert [(p.dtype, p.routed) for p in em.log] == [("int64", False), ("bfloat16", False)]


@pytest.mark.parametrize("bad, error, text", [
    (lambda: smtmma.emulate("hoper"), smtmma.UnknownNameError, "did you mean hopper"),
    (lambda: smtmma.emulate("t-fdpa:L=8,F=24,rho=rz-fp32"), smtmma.InputError, "architecture name"),
    (lambda: smtmma.emulate(90), smtmma.InputTypeError, "sm90"),
    (lambda: smtmma.emulate("h100", scheme=3), smtmma.InputTypeError, "scheme must be"),
    (lambda: smtmma.emulate("h100", scheme="promote_every=12x"), smtmma.InputError, "promote_every"),
    (lambda: smtmma.emulate("h100", scheme=Scheme(c_in="epilogue", alpha=2.0)), smtmma.InputError, "alpha, beta"),
    (lambda: smtmma.emulate("h100", strict="yes"), smtmma.InputTypeError, "strict must be True or False"),
], ids=["unknown-arch", "model-spec", "int-arch", "scheme-type", "scheme-field", "scheme-alpha", "strict-type"])
def test_bad_input_is_one_line(bad, error, text):
    with pytest.raises(error, match=text) as e:
        bad()
    assert "\n" not in str(e.value)


def test_torch_stays_optional():
    """``import smtmma`` does not import torch; without torch, emulate says so in one line."""
    code = ("import sys\nimport smtmma\nassert 'torch' not in sys.modules\nsys.modules['torch'] = None\n"
            "try:\n    smtmma.emulate('h100')\nexcept smtmma.InputError as e:\n    print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "torch is not installed: pip install torch\n"
