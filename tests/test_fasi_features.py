"""Hardware feature tests of the literature, replayed on the simulator.

Sources (../shared/seeds/):

* ``002_a50989aa4bd5ee13.txt`` -- Fasi, Higham, Mikaitis, Pranesh, "Numerical
  behavior of NVIDIA tensor cores" (PeerJ CS 2021).  GPUs: V100 (sm70), T4
  (sm75), A100 (sm80).  §3.1 (V100) gives concrete inputs and outputs; §3.2
  says the T4 differs only by "an additional extra bit of precision at the
  bottom of the significand of the internal accumulator" and that the V100
  results are replicated on T4 by replacing the constant 2^-24 with 2^-25;
  §3.3 says the A100 binary16/binary32 mode gives the same results as the T4,
  bfloat16/binary32 and TensorFloat-32/binary32 "the same numerical behavior
  as the binary16/binary32 configuration in the T4", binary64 behaves like
  IEEE 754 arithmetic (RNE, normalised after each addition).
* ``001_8b79efe9cf5c7623.txt`` -- "An SMT Formalization of Mixed-Precision
  Matrix Multiplication".  GPUs: Titan V (sm70), RTX 2080 Ti (sm75), RTX A6000
  (sm86).  Hardware witnesses: Table 1 (exact products), Table 3 (truncation,
  not RZ), FP16 final rounding is RN, 3 carry bits (Volta, Turing), no -0
  outputs, one canonical NaN.

How a matrix experiment becomes a dot product: every experiment of both papers
reads one element d11 = a11*b11 + a12*b21 + a13*b31 + a14*b41 + c11 (Fasi Eq. 2);
``a`` below is the first row of A, ``b`` the first column of B, ``c`` = c11.
Fasi ran ``wmma::mma_sync`` 16x16x16 with everything outside the top-left 4x4
block zero, so each case is checked with K=4 and with K=16 (zero padded): both
must give the reported d11.  "Set the first row of A to 1" (Fasi Eq. 3) means
a = (1, 1, 1, 1).  "binary32 mode" = instr ``f16f32`` (C, D in fp32),
"binary16 mode" = ``f16f16``.

Every case has a ``kind`` (see :class:`literature_helpers.Case`): ``reported``
(the paper prints this output for this GPU), ``inferred`` (the paper says the
behaviour carries over to this GPU; the comment derives the value from what it
states), ``constructed`` (the paper only describes the test; inputs are ours).

Not turned into tests (with reasons):

* SMT paper Table 5 / §6 walkthrough (Markidis vs Ootomo-Yokota): these are
  outputs of the SMT *model* of two error-correction algorithms, not hardware
  measurements, and the printed inputs do not reproduce the walkthrough's
  intermediate values (a1*b1 is about 2^-14, not near 1).
* SMT paper property 3 (order independence) and property 4 (no normalisation):
  the SMT witnesses are not printed; Fasi's concrete witnesses for the same
  properties are below.
* Fasi §3.3 binary64 "normalisation after each addition" / order: the paper
  also says the binary64 order is not fixed ("not always performed starting
  from the largest addend"), so any witness of normalisation depends on an
  unknown order; only order-independent binary64 tests are constructed.

Agreement with the MMA-Sim model (000_..., Table 4: Volta F=23, Turing and
Ampere F=24, truncation, RZ-FP32 / RNE-FP16): every reported value below
agrees with it, so no case is marked xfail.  (A disagreement would be kept with
``xfail=<reason>`` and ``strict=True``, never dropped.)
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterable, Optional

import pytest

from literature_helpers import Case, Raw, bits_of, check_case, describe, instr_formats, pow2, run_dot
from smtmma.errors import NotRepresentableError
from smtmma.formats import get_format

F = Fraction
ONE = F(1)

#: Fasi et al.'s GPUs.
V100, T4, A100 = "sm70", "sm75", "sm80"
#: The SMT paper's GPUs: Titan V, RTX 2080 Ti, RTX A6000.
TITAN_V, RTX2080TI, RTXA6000 = "sm70", "sm75", "sm86"

#: Instructions of Fasi's "binary32 mode" per GPU.  On the A100 the bfloat16 and
#: TensorFloat-32 modes are included because §3.3 reports they show "the same
#: numerical behavior as the binary16/binary32 configuration in the T4"; the
#: fp16 inputs are used where they are exactly representable in bf16/tf32
#: (TF32: "the rest of the test suite was run with the same input used for the
#: binary16/binary32 configuration ... and produced the same results").
FP32_MODES = {V100: ("f16f32",), T4: ("f16f32",), A100: ("f16f32", "tf32f32", "bf16f32")}
#: Instructions where a non-representable paper input is a hard error (not a skip).
_STRICT = {"f16f32", "f16f16", "f64f64"}

CASES: list[Case] = []


def _representable(instr: str, a: Iterable, b: Iterable, c) -> bool:
    fa, fb, fc, _ = instr_formats(instr)
    try:
        for v in a:
            bits_of(fa, v)
        for v in b:
            bits_of(fb, v)
        bits_of(fc, c)
    except NotRepresentableError:
        if instr in _STRICT:
            raise
        return False
    return True


def add(name: str, arch: str, instrs: Iterable[str], a, b, c, expected, kind: str, source: str,
        *, Ks: Optional[tuple[int, ...]] = None, xfail: Optional[str] = None) -> None:
    """Register one case per instruction (skipping optional modes whose format cannot hold the inputs)."""
    for instr in instrs:
        if not _representable(instr, a, b, c):
            continue
        kw = {} if Ks is None else {"Ks": Ks}
        CASES.append(Case(f"{name}-{arch}-{instr}", arch, instr, tuple(a), tuple(b), c, expected,
                          kind, source, xfail=xfail, **kw))


# ============================================================================
# Fasi et al. §3.1.1 -- Support for subnormal numbers
# ============================================================================
# (§3.1.1 tests are subnormal-specific for binary16; on the A100 the paper ran
# its own bf16 subnormal test, below in §3.3, so only fp16 modes here.)

_S311_T4 = ("§3.2: 'all the conclusions we drew about the tensor cores in V100 GPUs remain valid for "
            "the second version of tensor cores in the T4 GPUs'; §3.3: 'In binary16/binary32 mode, we "
            "found no differences between the Ampere and Turing tensor cores'. Exact result, so the "
            "extra bottom bit cannot change it.")

for arch in (V100, T4, A100):
    kind = "reported" if arch == V100 else "inferred"
    extra = "" if arch == V100 else " " + _S311_T4
    # "setting a11 = 2^-24, b11 = 2^2 (arbitrarily chosen), and the remaining elements to zero. The
    #  tensor cores return the subnormal result a11 b11 = 2^-22 in both binary16 and binary32 mode"
    add("fasi-3.1.1-subnormal-input", arch, ("f16f32", "f16f16"),
        (pow2(-24), 0, 0, 0), (4, 0, 0, 0), 0, pow2(-22), kind,
        "§3.1.1: a11=2^-24, b11=2^2 -> 'subnormal result a11b11 = 2^-22 in both binary16 and "
        "binary32 mode'." + extra)
    # "setting c11 to the smallest positive binary32 subnormal 2^-149 and all the elements of A and B
    #  to zero yields d11 = 2^-149"
    add("fasi-3.1.1-subnormal-c", arch, ("f16f32",),
        (0, 0, 0, 0), (0, 0, 0, 0), pow2(-149), pow2(-149), kind,
        "§3.1.1: c11=2^-149, A=B=0 -> 'yields d11 = 2^-149'." + extra)
    # "we can set a11 to 2^-14 ... and b11 to 2^-1, and confirm that tensor cores return the binary16
    #  subnormal 2^-15 in both binary16 and binary32 modes"
    add("fasi-3.1.1-subnormal-output", arch, ("f16f32", "f16f16"),
        (pow2(-14), 0, 0, 0), (pow2(-1), 0, 0, 0), 0, pow2(-15), kind,
        "§3.1.1: a11=2^-14, b11=2^-1 -> 'return the binary16 subnormal 2^-15 in both binary16 and "
        "binary32 modes'." + extra)
    # "Another possibility is to set a11 = 2^-14, b11 = 1, and c11 = -2^-15, which produces the
    #  subnormal binary16 number d11 = 2^-15."  Reported for binary16 mode; the same inputs in
    #  binary32 mode (c11 = -2^-15 as binary32) are checked too -- the result is exact in both.
    add("fasi-3.1.1-subnormal-output-cancel", arch, ("f16f16",),
        (pow2(-14), 0, 0, 0), (1, 0, 0, 0), -pow2(-15), pow2(-15), kind,
        "§3.1.1: a11=2^-14, b11=1, c11=-2^-15 -> 'produces the subnormal binary16 number d11 = "
        "2^-15'." + extra)
    add("fasi-3.1.1-subnormal-output-cancel", arch, ("f16f32",),
        (pow2(-14), 0, 0, 0), (1, 0, 0, 0), -pow2(-15), pow2(-15), "inferred",
        "§3.1.1 (same inputs as the binary16-mode experiment, binary32 mode; the exact result "
        "2^-15 is a binary32 number, so d11 = 2^-15)." + extra)
    # "we set a11 and a12 to 1, b11 to the binary16 subnormal 2^-23 + 2^-24, b21 to 2 ... This
    #  computation returned the value 2, meaning that b11 was rounded down"
    add("fasi-3.1.1-subnormal-rounded-in-tc", arch, ("f16f32",),
        (1, 1, 0, 0), (pow2(-23) + pow2(-24), 2, 0, 0), 0, 2, kind,
        "§3.1.1: a11=a12=1, b11=2^-23+2^-24 (subnormal), b21=2 -> 'This computation returned the "
        "value 2'." + ("" if arch == V100 else
                       " T4/A100: with the one extra bottom bit the fused sum is 2+2^-23, which the "
                       "round-towards-zero conversion to binary32 (§3.1.3, 'remain valid' §3.2) "
                       "still returns as 2."))


# ============================================================================
# Fasi et al. §3.1.2 -- Accuracy of the dot products
# ============================================================================

_q = ONE - pow2(-11)  # 1 - 2^-11, a binary16 number
for arch in (V100, T4, A100):
    kind = "reported" if arch == V100 else "inferred"
    extra = "" if arch == V100 else " " + _S311_T4
    # "we set the first row of A and the first column of B to 1 - 2^-11 and c11 to 0 ... tensor cores
    #  produce the exact binary32 answer d11 = 4 * (1 - 2^-10 + 2^-22)"
    add("fasi-3.1.2-exact-products", arch, FP32_MODES[arch],
        (_q,) * 4, (_q,) * 4, 0, 4 * (ONE - pow2(-10) + pow2(-22)), kind,
        "§3.1.2: a(1,:)=b(:,1)=1-2^-11, c11=0 -> 'tensor cores produce the exact binary32 answer "
        "d11 = 4*(1-2^-10+2^-22)'." + extra)
    # "set a11 = b11 = a12 = 1 - 2^-11, b21 = 2^-11, and the remaining elements to 0 ... The sum of
    #  these two products is 1 - 2^-10 + 2^-11 ... Indeed we found that tensor cores output the exact
    #  value" (binary16 C and D).
    add("fasi-3.1.2-exact-products-fp16-mode", arch, ("f16f16",),
        (_q, _q, 0, 0), (_q, pow2(-11), 0, 0), 0, ONE - pow2(-10) + pow2(-11), kind,
        "§3.1.2: a11=b11=a12=1-2^-11, b21=2^-11, binary16 C/D -> 'tensor cores output the exact "
        "value' 1-2^-10+2^-11." + extra)

# "set the first row of A to 1 ... run 5 different cases with one of the addends in (3) set to 1 and
#  the rest set to 2^-24 ... All permutations return d11 = 1" (V100).
# T4: "the operation 1 + 2^-24 + 2^-24, for example, can now be performed exactly because of the
#  presence of the extra bit" -> the same five cases give the exact 1 + 4*2^-24 = 1 + 2^-22 ("an exact
#  addition would return 1 + 2^-22", §3.1.2).  And "in the test for the order of operations in Section
#  3.1.2, the constant 2^-24 should be replaced by 2^-25" to replicate the V100 result d11 = 1.
#  2^-25 is not a binary16 number, so the 2^-25 addends are formed as a1k*bk1 = 2^-1 * 2^-24 (the
#  B entry stays the paper's 2^-24; the A entry is halved); c11 = 2^-25 is a binary32 number.
for pos in range(5):
    names = ("b11", "b21", "b31", "b41", "c11")
    for arch in (V100, T4, A100):
        a = (1, 1, 1, 1)
        b = tuple(1 if k == pos else pow2(-24) for k in range(4))
        c = 1 if pos == 4 else pow2(-24)
        if arch == V100:
            add(f"fasi-3.1.2-order-one-at-{names[pos]}", arch, FP32_MODES[arch], a, b, c, 1, "reported",
                f"§3.1.2: addend {names[pos]}=1, the rest 2^-24 -> 'All permutations return d11 = 1'.")
            continue
        add(f"fasi-3.1.2-order-one-at-{names[pos]}", arch, FP32_MODES[arch], a, b, c, 1 + pow2(-22),
            "inferred",
            f"§3.2 (T4; A100 same per §3.3): addend {names[pos]}=1, the rest 2^-24: '1 + 2^-24 + 2^-24 "
            "... can now be performed exactly because of the presence of the extra bit' -> the exact "
            "1+2^-22.")
        a25 = tuple(1 if k == pos else pow2(-1) for k in range(4))
        c25 = 1 if pos == 4 else pow2(-25)
        add(f"fasi-3.1.2-order-one-at-{names[pos]}-2^-25", arch, FP32_MODES[arch], a25, b, c25, 1,
            "reported",
            f"§3.2: 'the constant 2^-24 should be replaced by 2^-25' replicates the V100 result d11 = 1 "
            f"(addend {names[pos]}=1, the rest 2^-25 formed as 2^-1*2^-24).")

# §3.2 verbatim: "the operation 1 + 2^-24 + 2^-24, for example, can now be performed exactly because
# of the presence of the extra bit" (T4; A100 same per §3.3).  On the V100 it is not exact: §3.1.2
# shows 2^-24 addends are lost next to 1, so d11 = 1.
for arch in (V100, T4, A100):
    exact = arch != V100
    add("fasi-3.2-one-plus-two-2^-24", arch, FP32_MODES[arch],
        (1, 1, 1, 0), (1, pow2(-24), pow2(-24), 0), 0, 1 + pow2(-23) if exact else 1,
        "reported" if exact else "inferred",
        "§3.2: '1 + 2^-24 + 2^-24 ... can now be performed exactly because of the presence of the extra "
        "bit'" + ("" if exact else " (V100: 'can now' -- the V100 drops 2^-24 next to 1, §3.1.2: d11=1)."))


# ============================================================================
# Fasi et al. §3.1.3 -- Rounding modes
# ============================================================================

_R3 = "§3.2/§3.3: conclusions remain valid on T4/A100; the extra bottom bit gives the fused sum {s}, " \
      "which round-towards-zero to binary32 still returns as {r}."
for arch in (V100, T4, A100):
    kind = "reported" if arch == V100 else "inferred"
    # "set in (3) b11 = 2, b21 = 2^-23 + 2^-24, and the remaining entries in the first column of B to
    #  0 ... Running this experiment on tensor cores returns c11 = 2" (i.e. d11 = 2).
    add("fasi-3.1.3-rounding-positive", arch, FP32_MODES[arch],
        (1, 1, 1, 1), (2, pow2(-23) + pow2(-24), 0, 0), 0, 2, kind,
        "§3.1.3: b11=2, b21=2^-23+2^-24 -> 'returns c11 = 2' (RZ or RD)."
        + ("" if arch == V100 else " " + _R3.format(s="2+2^-23", r="2")))
    # "repeating the same experiment on the negative semiaxis ... This experiment produces c11 = -2"
    add("fasi-3.1.3-rounding-negative", arch, FP32_MODES[arch],
        (1, 1, 1, 1), (-2, -(pow2(-23) + pow2(-24)), 0, 0), 0, -2, kind,
        "§3.1.3: b11=-2, b21=-(2^-23+2^-24) -> 'produces c11 = -2' (so RZ, not RD)."
        + ("" if arch == V100 else " " + _R3.format(s="-(2+2^-23)", r="-2")))
    # "we set a11 = a12 = 2^-24, b11 = 2^-1, b21 = 2^-2, and the rest of elements of A and B as well as
    #  c11 to 0 ... The fact that tensor cores return 2^-24 confirms that round-towards-zero is not used"
    add("fasi-3.1.3-fp16-output-rounding", arch, ("f16f16",),
        (pow2(-24), pow2(-24), 0, 0), (pow2(-1), pow2(-2), 0, 0), 0, pow2(-24), kind,
        "§3.1.3: a11=a12=2^-24, b11=2^-1, b21=2^-2, binary16 mode -> 'tensor cores return 2^-24'."
        + ("" if arch == V100 else " " + _S311_T4))
    # §3.1.4, last paragraph of the carry-bit tests: "In the test case above, by replacing one of the
    # 2^-23 by 1 we can also confirm ... that the rounding mode in the final normalization step
    # (internal accumulator conversion to binary32 answer) is round-towards-zero."  No numbers are
    # printed: we take the 2-carry-bit test (c11 = 1+2^-22+2^-23, B = (1,1,1,2^-23)) with its B entry
    # 2^-23 replaced by 1: exact 5 + 3*2^-23 = 5 + 0.75 ulp(5); RN -> 5+2^-21, RZ -> 5.
    add("fasi-3.1.4-final-rounding-rz", arch, FP32_MODES[arch],
        (1, 1, 1, 1), (1, 1, 1, 1), 1 + pow2(-22) + pow2(-23), 5, "constructed",
        "§3.1.4: 'by replacing one of the 2^-23 by 1 we can also confirm ... the rounding mode in the "
        "final normalization step ... is round-towards-zero' (inputs constructed: exact 5+3*2^-23, RZ "
        "gives 5).")


# ============================================================================
# Fasi et al. §3.1.4 -- Features of the accumulator
# ============================================================================

for arch in (V100, T4, A100):
    modes = FP32_MODES[arch]
    if arch == V100:
        # "If in (3) we set b11 = 1 and c11 = -1 + 2^-24, the tensor cores return d11 = 2^-23, which
        #  represents a relative error of ... 1."
        add("fasi-3.1.4-no-guard-digit", arch, modes,
            (1, 1, 1, 1), (1, 0, 0, 0), -1 + pow2(-24), pow2(-23), "reported",
            "§3.1.4: b11=1, c11=-1+2^-24 -> 'the tensor cores return d11 = 2^-23'.")
    else:
        # T4/A100 with the paper's constants: the one extra bottom bit holds the last bit of c11
        # aligned at 2^0 (its weight is 2^-24), so the sum is exact: 2^-24.
        add("fasi-3.1.4-no-guard-digit", arch, modes,
            (1, 1, 1, 1), (1, 0, 0, 0), -1 + pow2(-24), pow2(-24), "inferred",
            "§3.1.4 inputs on T4/A100: §3.2 'an additional extra bit of precision at the bottom of the "
            "significand of the internal accumulator' ({3.24}) holds c11 = -1+2^-24 exactly -> 2^-24.")
        # The V100 experiment moved one bit to the right (§3.2's recipe; -1+2^-25 is not a binary32
        # number, so the lost bit is put into c11 = -(1/2 - 2^-25), with b21 = -1/2 to cancel):
        # exact 2^-25; the {3.24} accumulator drops c11's last bit -> 2^-24 (relative error 1 again).
        add("fasi-3.1.4-no-guard-digit-2^-25", arch, modes,
            (1, 1, 1, 1), (1, -pow2(-1), 0, 0), -(pow2(-1) - pow2(-25)), pow2(-24), "constructed",
            "§3.1.4 'they do not implement guard digits at all' + §3.2 (one extra bottom bit, constants "
            "moved to 2^-25): b=(1,-1/2), c11=-(1/2-2^-25), exact 2^-25 -> 2^-24.")

# Normalisation in addition and non-monotonicity (same experiment):
# "set all the elements in the first column of B to 2^-24 and then c11 to 1 - 2^-24 and 1 in turn ...
#  d11 = c11 + 2^-24 + 2^-24 + 2^-24 + 2^-24 = 1 + 2^-23 when c11 = 1 - 2^-24,
#  d11 = c11 + 2^-24 + 2^-24 + 2^-24 + 2^-24 = 1        when c11 = 1."
for arch in (V100, T4, A100):
    modes = FP32_MODES[arch]
    if arch == V100:
        add("fasi-3.1.4-monotonicity-c=1-2^-24", arch, modes,
            (1, 1, 1, 1), (pow2(-24),) * 4, 1 - pow2(-24), 1 + pow2(-23), "reported",
            "§3.1.4 (normalization in addition / monotonicity): c11=1-2^-24, B=2^-24 -> 'd11 = 1 + "
            "2^-23'.")
        add("fasi-3.1.4-monotonicity-c=1", arch, modes,
            (1, 1, 1, 1), (pow2(-24),) * 4, 1, 1, "reported",
            "§3.1.4 (monotonicity): c11=1, B=2^-24 -> 'd11 = 1'.")
        continue
    # T4/A100 with the paper's constants: relative to c11 = 1-2^-24 (exponent -1) the 2^-24 addends are
    # in reach of the {3.24} accumulator as on the V100 -> 1+2^-23 after RZ; next to c11 = 1 the extra
    # bit now keeps them: 1 + 4*2^-24 exactly ('1 + 2^-24 + 2^-24 ... performed exactly', §3.2).
    add("fasi-3.1.4-monotonicity-c=1-2^-24", arch, modes,
        (1, 1, 1, 1), (pow2(-24),) * 4, 1 - pow2(-24), 1 + pow2(-23), "inferred",
        "§3.1.4 inputs on T4/A100 (§3.2: one extra bottom bit): exact 1+3*2^-24, RZ -> 1+2^-23.")
    add("fasi-3.1.4-monotonicity-c=1", arch, modes,
        (1, 1, 1, 1), (pow2(-24),) * 4, 1, 1 + pow2(-22), "inferred",
        "§3.1.4 inputs on T4/A100: §3.2 '1 + 2^-24 + 2^-24 ... can now be performed exactly' -> "
        "1+2^-22.")
    # Non-monotonicity on T4/A100 (§3.2: conclusions, including item 6 of §4, remain valid), moved one
    # bit right: eight addends 2^-25 (= 2^-12 * 2^-13; the T4/A100 FP16 unit sums 8 products at once,
    # MMA-Sim Table 4 L=8 -- so only the L=8 modes, not TF32 whose L=4 would round in between).
    #   c11 = 1-2^-24: exponent -1, all 2^-25 kept: 1 - 2^-24 + 8*2^-25 = 1 + 3*2^-24 -> RZ 1+2^-23;
    #   c11 = 1:       exponent  0, the 2^-25 addends are below the extra bit and are lost -> 1.
    a8, b8 = (pow2(-12),) * 8, (pow2(-13),) * 8
    l8 = tuple(i for i in modes if i != "tf32f32")
    add("fasi-3.1.4-monotonicity-8x2^-25-c=1-2^-24", arch, l8, a8, b8, 1 - pow2(-24), 1 + pow2(-23),
        "constructed",
        "§3.1.4 non-monotonicity + §3.2 (constants moved to 2^-25), 8 addends 2^-25: d11 = 1+2^-23.",
        Ks=(8, 16))
    add("fasi-3.1.4-monotonicity-8x2^-25-c=1", arch, l8, a8, b8, 1, 1, "constructed",
        "§3.1.4 non-monotonicity + §3.2: same addends with the larger c11 = 1 give the smaller d11 = 1.",
        Ks=(8, 16))

# Normalisation in subtraction: "If in (3) we set c11 = -1 + 2^-24, and two of the elements of the
# first column of B to 1 and -2^-24, ... running this experiment on tensor cores yields d11 = 2^-23".
# "two of the elements": every ordered pair of positions is checked (the result must not depend on it).
for i in range(4):
    for j in range(4):
        if i == j:
            continue
        b = [0, 0, 0, 0]
        b[i], b[j] = 1, -pow2(-24)
        for arch in (V100, T4, A100):
            if arch == V100:
                add(f"fasi-3.1.4-normalization-subtraction-b{i + 1}1=1-b{j + 1}1=-2^-24", arch,
                    FP32_MODES[arch], (1, 1, 1, 1), tuple(b), -1 + pow2(-24), pow2(-23), "reported",
                    "§3.1.4 (normalization in subtraction): c11=-1+2^-24, B has 1 and -2^-24 -> "
                    "'yields d11 = 2^-23'.")
            else:
                # {3.24} accumulator: 1, -(1-2^-24) and -2^-24 are all held exactly -> exact 0 (+0).
                add(f"fasi-3.1.4-normalization-subtraction-b{i + 1}1=1-b{j + 1}1=-2^-24", arch,
                    FP32_MODES[arch], (1, 1, 1, 1), tuple(b), -1 + pow2(-24), 0, "inferred",
                    "§3.1.4 inputs on T4/A100: with §3.2's extra bottom bit every addend is held "
                    "exactly -> 0.")
for arch in (T4, A100):
    # The subtraction experiment moved one bit right (§3.2): products 1, -1/2, -2^-25 (= 2^-1*-2^-24)
    # and c11 = -(1/2 - 2^-25); exact sum 0.  Without normalisation, aligned at 2^0 with one extra
    # bit, c11 loses its last bit and -2^-25 is lost: 1 - 1/2 - (1/2 - 2^-24) = 2^-24.
    add("fasi-3.1.4-normalization-subtraction-2^-25", arch, FP32_MODES[arch],
        (1, 1, pow2(-1), 1), (1, -pow2(-1), -pow2(-24), 0), -(pow2(-1) - pow2(-25)), pow2(-24),
        "constructed",
        "§3.1.4 'the result of the subtraction is not normalized' + §3.2 (constants moved to 2^-25): "
        "exact 0 -> 2^-24.")

# Extra bits for carry-out.
for arch in (V100, T4, A100):
    kind = "reported" if arch == V100 else "inferred"
    extra = ("" if arch == V100 else
             " T4/A100: §3.2 'all the conclusions ... remain valid' and '{3.24} (or {4.24})'; no addend has "
             "bits below 2^-23, so the extra bottom bit cannot matter.")
    # "we take c11 = 1 + 2^-22 + 2^-23 ... and assign to the first column of B a permutation of the
    #  values 1, 1, 1, and 2^-23 ... all four combinations returned the exact result 4 + 2^-21"
    for pos in range(4):
        b = tuple(pow2(-23) if k == pos else 1 for k in range(4))
        add(f"fasi-3.1.4-two-carry-bits-2^-23-at-b{pos + 1}1", arch, FP32_MODES[arch],
            (1, 1, 1, 1), b, 1 + pow2(-22) + pow2(-23), 4 + pow2(-21), kind,
            "§3.1.4 (extra bits for carry out): c11=1+2^-22+2^-23, B=perm(1,1,1,2^-23) -> 'all four "
            "combinations returned the exact result 4 + 2^-21'." + extra)
    # "We can set, for example, c11 = 1 + 2^-1 + 2^-2 + 2^-3, b11 = 1, b21 = 1 + 2^-1,
    #  b31 = 1 + 2^-1 + 2^-2, and b41 = 1 + 2^-1 + 2^-2 + 2^-3 and observe that the tensor core returns
    #  d11 = 8."  (T4/A100: "28 bits wide in Turing and Ampere cards", i.e. {4.24}, 3 carry bits.)
    add("fasi-3.1.4-three-carry-bits", arch, FP32_MODES[arch],
        (1, 1, 1, 1), (1, F(3, 2), F(7, 4), F(15, 8)), F(15, 8), 8, kind,
        "§3.1.4: c11=1.875, B=(1,1.5,1.75,1.875) -> 'observe that the tensor core returns d11 = 8'."
        + ("" if arch == V100 else " T4/A100: 'most likely ... 28 bits wide in Turing and Ampere cards'."))


# ============================================================================
# Fasi et al. §3.3 -- Ampere (A100): bfloat16 subnormals, binary64
# ============================================================================

# "If in (2) we set a11 = 2^-126, b11 = 2^-1 (normalized bfloat16 values), and the remaining
#  coefficients to zero, the tensor cores correctly produce the subnormal binary32 result d11 = 2^-127."
add("fasi-3.3-bf16-subnormal-output", A100, ("bf16f32",),
    (pow2(-126), 0, 0, 0), (pow2(-1), 0, 0, 0), 0, pow2(-127), "reported",
    "§3.3: bf16 a11=2^-126, b11=2^-1 -> 'correctly produce the subnormal binary32 result d11 = 2^-127'.")

# binary64: "we observed that round-to-nearest with ties to even is used, and that the normalization is
# performed after each addition ... the Ampere tensor cores have the same numerical features that a
# matrix multiply-accumulate operation implemented using IEEE 754-compliant arithmetic operations would
# have."  No numbers are printed; the §3.1.3/§3.1.4 experiments with binary64 constants (ulp(2) = 2^-51):
_F64 = "§3.3 binary64/binary64: 'round-to-nearest with ties to even is used' / IEEE 754-compliant " \
       "(inputs constructed from the §3.1.3/§3.1.4 experiments with binary64 constants)."
add("fasi-3.3-fp64-rounding-positive", A100, ("f64f64",),
    (1, 1, 0, 0), (2, F(3, 4) * pow2(-51), 0, 0), 0, 2 + pow2(-51), "constructed", _F64)
add("fasi-3.3-fp64-rounding-negative", A100, ("f64f64",),
    (1, 1, 0, 0), (-2, -F(3, 4) * pow2(-51), 0, 0), 0, -(2 + pow2(-51)), "constructed", _F64)
add("fasi-3.3-fp64-tie-to-even-down", A100, ("f64f64",),
    (1, 1, 0, 0), (2, pow2(-52), 0, 0), 0, 2, "constructed", _F64)
add("fasi-3.3-fp64-tie-to-even-up", A100, ("f64f64",),
    (1, 1, 0, 0), (2 + pow2(-51), pow2(-52), 0, 0), 0, 2 + pow2(-50), "constructed", _F64)
add("fasi-3.3-fp64-guard-digit", A100, ("f64f64",),
    (1, 0, 0, 0), (1, 0, 0, 0), -1 + pow2(-53), pow2(-53), "constructed",
    _F64 + " (§3.1.4 no-guard-digit experiment: IEEE subtraction is exact here.)")


# ============================================================================
# SMT paper (001) -- hardware witnesses
# ============================================================================

_SMT_GPUS = (TITAN_V, RTX2080TI, RTXA6000)

# Table 1 "Values showing the multiplications are performed with full precision":
#   a = 1.2587890625 * 2^-15, b = 1.3681640625 * 2^-1,
#   Exact Result = Hardware Result = 1.4162635803222656 * 2^-17.
# a is printed in the solver's notation for a *subnormal* binary16 number: 1.2587890625 * 2^-15 is not
# a binary16 value (it is 644.5 * 2^-24), while the subnormal with fraction field 0b0100001001 = 265,
# i.e. 0.2587890625 * 2^-14 = 265 * 2^-24, reproduces the printed exact result:
#   265 * 2^-24 * 1401 * 2^-11 = 371265 * 2^-35 = (371265/2^18) * 2^-17 = 1.41626358032226562... * 2^-17.
_SMT_T1_A = F(265) * pow2(-24)
_SMT_T1_B = F(1401) * pow2(-11)  # 1.3681640625 * 2^-1
_SMT_T1_D = F(371265) * pow2(-35)
assert _SMT_T1_B == F("1.3681640625") * pow2(-1)
assert abs(_SMT_T1_D - F("1.4162635803222656") * pow2(-17)) < pow2(-17 - 52)
for arch in _SMT_GPUS:
    add("smt-4.1-table1-exact-product", arch, ("f16f32",),
        (_SMT_T1_A, 0, 0, 0), (_SMT_T1_B, 0, 0, 0), 0, _SMT_T1_D, "reported",
        "SMT §4.1 Table 1: a=1.2587890625*2^-15 (subnormal, = 265*2^-24), b=1.3681640625*2^-1 -> "
        "'Hardware Result 1.4162635803222656*2^-17'.")

# Table 3 "Round-to-zero demonstration": a = 2^1, c = -2^-40 (b = 1): properly rounded RTZ would be
# 2 - 2^-23, "Tensor Core Result 2^1"; "On the Volta tensor cores, adding the aforementioned example,
# 2^1 and -2^-40, results in 2^1".  Turing/Ampere: "tensor cores ... truncate, ignoring all of the
# lower bits" (stated for all three generations).
for arch in _SMT_GPUS:
    add("smt-4.2-table3-truncation-not-rz", arch, ("f16f32",),
        (2, 0, 0, 0), (1, 0, 0, 0), -pow2(-40), 2, "reported" if arch == TITAN_V else "inferred",
        "SMT §4.2 Table 3: a=2, b=1, c=-2^-40 -> 'Tensor Core Result 2^1' (RZ would give 2-2^-23)."
        + ("" if arch == TITAN_V else " Turing/Ampere: 'they truncate, ignoring all of the lower bits'."))

# Property 2: "we find a pair of values in FP16 whose product, when rounded to FP16, differs for
# different rounding modes ... we conclude that the final rounding is performed in round-to-nearest."
# The solver's pair is not printed.  Constructed pair: (1 + 2^-10) * 1.75 = 1.75 + 1.75*2^-10, i.e.
# 0.75 ulp above 1.75 + 2^-10: RN -> 1.75 + 2^-9, RZ = RD -> 1.75 + 2^-10; the negated product
# separates RN from RU.
for arch in _SMT_GPUS:
    for sign in (1, -1):
        add(f"smt-4.2-fp16-output-rn-{'pos' if sign > 0 else 'neg'}", arch, ("f16f16",),
            (1 + pow2(-10), 0, 0, 0), (sign * F(7, 4), 0, 0, 0), 0, sign * (F(7, 4) + pow2(-9)),
            "constructed",
            "SMT §4.2 property 2: 'the final rounding is performed in round-to-nearest' (pair "
            "constructed: (1+2^-10)*(+-1.75), RN differs from RZ/RD/RU).")

# "It takes cvc5 just over a minute to find inputs proving that Volta and Turing require 3 bits for
# carry-out, which we confirm by finding the hardware computes the correct result."  The witness is not
# printed.  Constructed: products in [0, 4) have 2 integer bits; five addends near their maximum need
# 2 + 3 integer bits: a = b = (2-2^-10)*4, c11 = 2-2^-10 -> exact
# 4*(4 - 2^-8 + 2^-20) + 2 - 2^-10 = 18 - 2^-6 - 2^-10 + 2^-18, a binary32 number (ulp 2^-19).
_m = 2 - pow2(-10)
for arch in (TITAN_V, RTX2080TI):
    add("smt-4.3-three-carry-bits", arch, ("f16f32",),
        (_m,) * 4, (_m,) * 4, _m, 18 - pow2(-6) - pow2(-10) + pow2(-18), "constructed",
        "SMT §4.3: 'Volta and Turing require 3 bits for carry-out ... the hardware computes the "
        "correct result' (witness constructed: sum of five near-maximal addends, about 18).")

# "We also determined that tensor cores do not output -0: all 0 outputs will be positive."
# Constructed: every addend a negative zero (IEEE 754 would return -0).
for arch in _SMT_GPUS:
    add("smt-4.4-no-negative-zero", arch, ("f16f32", "f16f16"),
        ("-0", "-0", "-0", "-0"), (1, 1, 1, 1), "-0", 0, "constructed",
        "SMT §4.4: 'tensor cores do not output -0: all 0 outputs will be positive' (inputs "
        "constructed: all addends -0).")


@pytest.mark.parametrize(
    "case",
    [pytest.param(c, id=c.id, marks=[pytest.mark.xfail(strict=True, reason=c.xfail)] if c.xfail else [])
     for c in CASES],
)
def test_literature_case(case: Case) -> None:
    check_case(case)


# ---------------------------------------------------------------------------- NaN outputs
# SMT §4.4: "we exhaustively tested multiplying each NaN pattern with 1.0 and multiplying infinities of
# different signs ... In every case, all NaN outputs yield a canonical NaN with the same bit pattern: a
# sign bit of 0, all exponent bits set, and the most significant bit of the mantissa set."
# Only these properties are printed (not the other fraction bits), so the test checks exactly them,
# plus "the same bit pattern" for every NaN output of one instruction.  ("Multiplying infinities of
# different signs" is realised as the products +inf and -inf in one dot product, and inf*0.)

def _fp16_nan_patterns() -> list[int]:
    return [s | (0x1F << 10) | m for s in (0, 0x8000) for m in range(1, 1 << 10)]


@pytest.mark.parametrize("arch", _SMT_GPUS)
@pytest.mark.parametrize("instr", ("f16f32", "f16f16"))
def test_smt_canonical_nan(arch: str, instr: str) -> None:
    inf = "inf"
    rows_a: list[tuple] = [(Raw(p), 0, 0, 0) for p in _fp16_nan_patterns()]
    rows_b: list[tuple] = [(1, 0, 0, 0)] * len(rows_a)
    rows_a += [(inf, inf, 0, 0), (inf, 0, 0, 0)]
    rows_b += [(1, -1, 0, 0), (0, 0, 0, 0)]
    c = [0] * len(rows_a)
    _, _, _, fd = instr_formats(instr)
    f = get_format(fd)
    for K in (4, 16):
        got = run_dot(arch, instr, rows_a, rows_b, c, K=K)
        bad = [(i, describe(fd, g)) for i, g in enumerate(got)
               if not (f.is_nan_bits(g) and not g & f.sign_mask and (g >> (f.man_bits - 1)) & 1)]
        assert not bad, f"{arch} {instr} K={K}: not a sign-0 quiet NaN: {bad[:5]} ... ({len(bad)} rows)"
        assert len(set(got)) == 1, (
            f"{arch} {instr} K={K}: NaN outputs differ, SMT §4.4 reports one canonical pattern: "
            f"{sorted({describe(fd, g) for g in got})}")


# ---------------------------------------------------------------------------- bookkeeping

def test_every_case_is_encodable() -> None:
    """Every expected value is exactly representable in the instruction's D format."""
    for case in CASES:
        _, _, _, fd = instr_formats(case.instr)
        bits_of(fd, case.expected)
