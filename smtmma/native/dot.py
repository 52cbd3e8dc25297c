"""Batches of dot products through the compiled kernels (the fast path of :func:`smtmma.simulate.simulate_dot`)."""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..formats import carried_in, get_format
from ..models import Model
from .kernels import MAX_K, is_built, np_uint, try_kernel

__all__ = ["run_rows", "chunk_plan", "AUTO_MIN_ROWS"]

#: Below this many rows a kernel that is not built yet is not worth a compile: NumPy answers.
AUTO_MIN_ROWS = 4096


def chunk_plan(model: Model, K: int) -> Optional[tuple[int, int]]:
    """(kernel length, number of chained calls) that computes ``model``'s dot product of length K, or None.

    K <= MAX_K: one kernel of length K.  Longer: the model's own chunks of L
    lanes chained through C (Alg. 5), when that is what run_model does:
    an FDPA kind, no interleaving, no C added last, no input flushing, C
    in D's format and scale blocks that do not straddle chunks.
    """
    if K <= MAX_K:
        return K, 1
    L = model.L
    fd = get_format(model.d_fmt)
    chainable = (
        model.kind not in ("fma", "ftz-addmul") and L is not None and not model.interleave and not model.c_after
        and not model.ftz_inputs and model.c_fmt == carried_in(fd).name
        and (model.scale_fmt is None or (model.block is not None and L % model.block == 0))
    )
    return (L, -(-K // L)) if chainable else None


def run_rows(model: Model, A: np.ndarray, B: np.ndarray, C: np.ndarray, SA: Optional[np.ndarray], SB: Optional[np.ndarray],
             *, force: bool = False) -> Optional[np.ndarray]:
    """D patterns of the (N, K) pattern arrays through compiled code, or None where NumPy must answer.

    ``force``: compile the kernel now even for a small batch.  The arrays
    are already validated (simulate_dot's checks); the result has the
    dtype of D's container.
    """
    n, K = A.shape
    plan = chunk_plan(model, K)
    if plan is None:
        return None
    klen, calls = plan
    if not force and n < AUTO_MIN_ROWS and not is_built(model, klen):
        return None
    kern = try_kernel(model, klen)
    if kern is None:
        return None
    src = kern.source
    ta, tb, tc, td = (np_uint(bits) for bits in (src.a_bits, src.b_bits, src.c_bits, src.d_bits))

    def rows_of(x: np.ndarray, t: type, width: int, mode: str = "constant") -> np.ndarray:
        """x as a C-contiguous array of dtype t, padded to ``width`` columns (no copy when it already is one)."""
        x = np.ascontiguousarray(x, dtype=t)
        return x if x.shape[1] == width else np.ascontiguousarray(np.pad(x, ((0, 0), (0, width - x.shape[1])), mode=mode))

    a, b = rows_of(A, ta, klen * calls), rows_of(B, tb, klen * calls)
    sa = sb = None
    if SA is not None and SB is not None:
        ts = np_uint(src.s_bits or 8)
        need = src.scales * calls  # padded lanes are zero and reuse the last scale
        sa, sb = rows_of(SA, ts, need, "edge"), rows_of(SB, ts, need, "edge")
    acc = np.ascontiguousarray(C, dtype=tc)
    d = np.empty(n, td)
    for j in range(calls):
        kern.rows(n, a[:, j * klen:].ctypes.data, a.shape[1], b[:, j * klen:].ctypes.data, b.shape[1],
                  (acc if j == 0 else d).ctypes.data, d.ctypes.data,
                  None if sa is None else sa[:, j * src.scales:].ctypes.data, 0 if sa is None else sa.shape[1],
                  None if sb is None else sb[:, j * src.scales:].ctypes.data, 0 if sb is None else sb.shape[1])
    return d
