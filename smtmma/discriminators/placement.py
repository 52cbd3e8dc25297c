"""A dot product placed into instruction-shaped matrices: what one launch of an MMA instruction consumes.

A test vector is one dot product ``d = c + sum_k a_k b_k``.  A device runs
matrices: A (m x K), B (K x n), C (m x n) for an instruction of shape
(m, n, k), chained over ceil(K / k) issues when K > k (Alg. 5: the
accumulator D of one issue is the C of the next).  :func:`place` builds
those matrices:

* ``replicate=False``: the vector in row 0 of A, column 0 of B and C[0, 0];
  every other element is +0, so D[0, 0] is the answer.
* ``replicate=True`` (the default): every row of A holds the vector's a
  under one of a few lane permutations, every column of B its b under one
  of the same permutations, and every element of C is c.  Row i uses
  permutation ``row_perm[i]``, column j ``col_perm[j]``; permutation 0 is
  the identity and rows/columns 0 use it, so D[0, 0] is the vector itself.
  Cells whose row and column use the same permutations compute the same
  dot product, so they must agree bit for bit whatever the unit's
  arithmetic (the independence check of §3.1.1 of the MMA-Sim paper); a
  wrong fragment layout moves values between rows or columns and breaks
  that agreement.  Every cell is also a dot product of its own that a
  model predicts (:func:`cell_inputs`).

Lane permutations move lanes only within blocks of ``block`` lanes for
block-scaled instructions (the scale of a lane stays its block's) and
never touch the zero padding after lane K - 1.

Padding lanes hold +0 in A and ``b_pad`` in B: give B's -0
(:func:`padding_zero`), so each padded product is -0, which changes no
model's result -- an IEEE sum keeps -0 + -0 = -0 and x + -0 = x, a fused
sum ignores zero terms -- whereas +0 x +0 would turn a -0 result into +0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np

from ..errors import InputError
from ..formats import Format
from ..isa import InstrShape

__all__ = ["Tile", "place", "cell_inputs", "disagreeing_cells", "permutations", "padding_zero", "N_PERMUTATIONS"]

#: Distinct lane permutations used by a replicated tile (identity included).
N_PERMUTATIONS = 4


@dataclass(frozen=True)
class Tile:
    """Instruction-shaped operands of one test vector (bit patterns, uint64).

    ``A`` (m, Kp), ``B`` (Kp, n), ``C`` (m, n) with Kp = ``issues`` x k (the
    vector's K lanes, then zeros); ``scale_a`` (m, Kp / block) and
    ``scale_b`` (Kp / block, n) for block-scaled instructions.
    ``perms[p]`` is a permutation of range(Kp): lane k of the permuted
    vector is lane ``perms[p][k]`` of the original.  ``row_perm[i]`` and
    ``col_perm[j]`` name the permutation of row i of A and column j of B.
    """

    shape: InstrShape
    K: int
    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    scale_a: Optional[np.ndarray]
    scale_b: Optional[np.ndarray]
    perms: tuple[tuple[int, ...], ...]
    row_perm: tuple[int, ...]
    col_perm: tuple[int, ...]
    replicated: bool

    @property
    def issues(self) -> int:
        """Instructions chained over K (each one's D is the next one's C)."""
        return self.A.shape[1] // self.shape.k


def permutations(K: int, padded: int, block: Optional[int], count: int = N_PERMUTATIONS) -> tuple[tuple[int, ...], ...]:
    """``count`` lane permutations of range(padded) that fix lanes >= K (padding); the first is the identity.

    The others reverse the lanes, swap the two halves and rotate by a
    quarter, within each block of ``block`` lanes when given (else across
    all K lanes); duplicates (K = 1) are dropped.
    """
    spans = [(s, min(s + block, K)) for s in range(0, K, block)] if block else [(0, K)]

    def build(f: Callable[[int, int], int]) -> tuple[int, ...]:
        out = list(range(padded))
        for lo, hi in spans:
            for i in range(hi - lo):
                out[lo + i] = lo + f(i, hi - lo)
        return tuple(out)

    cands = [
        build(lambda i, n: i),
        build(lambda i, n: n - 1 - i),
        build(lambda i, n: (i + n // 2) % n),
        build(lambda i, n: (i + max(1, n // 4)) % n),
    ]
    seen: list[tuple[int, ...]] = []
    for p in cands:
        if p not in seen:
            seen.append(p)
    return tuple(seen[:count])


def padding_zero(fmt: Format) -> int:
    """The pattern padding lanes of B hold: -0 where ``fmt`` has one, else +0 (bits)."""
    has_neg_zero = fmt.signed and not fmt.sign_ignored and fmt.nan != "neg_zero"
    return fmt.sign_mask if has_neg_zero else 0


def place(
    shape: InstrShape,
    a: Sequence[int],
    b: Sequence[int],
    c: int,
    *,
    scale_a: Optional[Sequence[int]] = None,
    scale_b: Optional[Sequence[int]] = None,
    block: Optional[int] = None,
    replicate: bool = True,
    b_pad: int = 0,
) -> Tile:
    """The matrices one launch of ``shape`` needs for the dot product (a, b, c); see the module docstring.

    ``a``, ``b``: K patterns of the A/B formats; ``c`` a C pattern; scales
    one per ``block`` lanes.  K lanes are padded to a multiple of the
    instruction's k (and of ``block``): +0 in A, ``b_pad`` in B
    (:func:`padding_zero` of B's format).
    """
    K = len(a)
    if K == 0 or len(b) != K:
        raise InputError(f"a dot product needs K >= 1 values in a and in b (got {len(a)} and {len(b)})")
    scaled = scale_a is not None or scale_b is not None
    if scaled and (scale_a is None or scale_b is None or not block):
        raise InputError("block-scaled placement needs scale_a, scale_b and the block size")
    k = shape.k
    if scaled and block and (k % block and block % k):
        raise InputError(f"block size {block} does not fit the instruction's k={k}")
    unit = max(k, block or 1) if scaled else k
    padded = -(-K // unit) * unit
    m, n = shape.m, shape.n
    perms = permutations(K, padded, block if scaled else None) if replicate else (tuple(range(padded)),)
    va = np.zeros(padded, dtype=np.uint64)
    vb = np.full(padded, b_pad, dtype=np.uint64)
    va[:K] = np.asarray(a, dtype=np.uint64)
    vb[:K] = np.asarray(b, dtype=np.uint64)
    A = np.zeros((m, padded), dtype=np.uint64)
    B = np.zeros((padded, n), dtype=np.uint64)
    C = np.zeros((m, n), dtype=np.uint64)
    if replicate:
        row_perm = tuple(i % len(perms) for i in range(m))
        col_perm = tuple(j % len(perms) for j in range(n))
        for i in range(m):
            A[i] = va[list(perms[row_perm[i]])]
        for j in range(n):
            B[:, j] = vb[list(perms[col_perm[j]])]
        C[:, :] = c
    else:
        row_perm, col_perm = (0,) * m, (0,) * n
        A[0], B[:, 0], C[0, 0] = va, vb, c
    SA = SB = None
    if scaled and block:
        nb = padded // block
        sa = np.zeros(nb, dtype=np.uint64)
        sb = np.zeros(nb, dtype=np.uint64)
        sa[: len(scale_a)] = np.asarray(scale_a, dtype=np.uint64)  # type: ignore[arg-type]
        sb[: len(scale_b)] = np.asarray(scale_b, dtype=np.uint64)  # type: ignore[arg-type]
        # padding blocks (all-zero lanes) take the last real block's scale: any finite scale of a zero is zero
        sa[len(scale_a):] = sa[len(scale_a) - 1]  # type: ignore[arg-type]
        sb[len(scale_b):] = sb[len(scale_b) - 1]  # type: ignore[arg-type]
        SA, SB = np.tile(sa, (m, 1)), np.tile(sb[:, None], (1, n))  # a zero lane times any finite scale is zero
    return Tile(shape, K, A, B, C, SA, SB, perms, row_perm, col_perm, replicate)


def cell_inputs(tile: Tile, i: int, j: int) -> tuple[np.ndarray, np.ndarray, int, Optional[np.ndarray], Optional[np.ndarray]]:
    """The dot product cell (i, j) of D computes: (a, b, c, scale_a, scale_b), padded to the tile's K."""
    sa = tile.scale_a[i] if tile.scale_a is not None else None
    sb = tile.scale_b[:, j] if tile.scale_b is not None else None
    return tile.A[i], tile.B[:, j], int(tile.C[i, j]), sa, sb


def disagreeing_cells(tile: Tile, D: np.ndarray) -> list[tuple[int, int]]:
    """Cells of ``D`` (m, n) that differ from the first cell computing the same dot product.

    Only replicated tiles are checked: cells whose row and column use the
    same permutations have identical inputs and must give identical bits.
    Returns the (i, j) of every cell that disagrees (empty when all agree).
    """
    D = np.asarray(D)
    if D.shape != (tile.shape.m, tile.shape.n):
        raise InputError(f"D has shape {D.shape}, the tile is {tile.shape.m} x {tile.shape.n}")
    if not tile.replicated:
        return []
    rows = np.asarray(tile.row_perm, dtype=np.int64)
    cols = np.asarray(tile.col_perm, dtype=np.int64)
    key = rows[:, None] * (int(cols.max()) + 1) + cols[None, :]  # the dot product each cell computes
    flat_key, flat_d = key.ravel(), D.ravel()  # row-major: the first cell of a key is its first in (i, j) order
    _, first = np.unique(flat_key, return_index=True)
    ref = np.empty(int(flat_key.max()) + 1, dtype=np.int64)
    ref[flat_key[first]] = first
    bad = np.nonzero(flat_d != flat_d[ref[flat_key]])[0]
    n = tile.shape.n
    return [(int(x) // n, int(x) % n) for x in bad]
