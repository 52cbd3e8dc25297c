"""Choosing few inputs whose outputs tell every class apart.

A vector splits a set of classes into as many groups as it has distinct
outputs, so V vectors can tell at most (outputs per vector)^V classes apart
and never fewer than ceil(log2 M) vectors suffice for M classes when each
vector splits in two.  :func:`select` picks greedily, at each step the pool
row that separates the most pairs of classes still together (ties: the one
that splits into more groups), then drops rows the others make redundant.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

__all__ = ["select", "separated_pairs", "refine", "unseparated"]


def refine(labels: np.ndarray, column: np.ndarray) -> np.ndarray:
    """Block labels after splitting the blocks of ``labels`` by the values of ``column`` (labels 0..)."""
    _, rank = np.unique(column, return_inverse=True)
    key = labels.astype(np.int64) * (int(rank.max(initial=0)) + 1) + rank.reshape(-1)
    _, inv = np.unique(key, return_inverse=True)
    return inv.reshape(-1).astype(np.int64)


def _pairs(labels: np.ndarray) -> int:
    """Pairs of items that share a block."""
    counts = np.bincount(labels)
    return int((counts * (counts - 1) // 2).sum())


def separated_pairs(labels: np.ndarray, column: np.ndarray) -> int:
    """Pairs together under ``labels`` that ``column`` tells apart."""
    return _pairs(labels) - _pairs(refine(labels, column))


def unseparated(outputs: np.ndarray, chosen: Sequence[int]) -> list[tuple[int, int]]:
    """Pairs of classes (rows of ``outputs``) that the chosen columns give identical outputs."""
    labels = np.zeros(outputs.shape[0], dtype=np.int64)
    for j in chosen:
        labels = refine(labels, outputs[:, j])
    out = []
    for lab in np.unique(labels):
        idx = np.nonzero(labels == lab)[0]
        out += [(int(x), int(y)) for i, x in enumerate(idx) for y in idx[i + 1:]]
    return out


def _best(outputs: np.ndarray, labels: np.ndarray, candidates: np.ndarray) -> tuple[int, int]:
    """(column, pairs it separates) of the best column among ``candidates`` (ties: more groups, then lower index)."""
    best, best_key = -1, (-1, -1)
    for j in candidates:
        new = refine(labels, outputs[:, j])
        key = (_pairs(labels) - _pairs(new), int(new.max()) + 1)
        if key > best_key:
            best, best_key = int(j), key
    return best, best_key[0]


def select(outputs: np.ndarray, *, required: Optional[Sequence[int]] = None) -> list[int]:
    """Columns of ``outputs`` (classes x pool rows) that give every pair of classes different outputs somewhere.

    Greedy by pairs separated, then redundant columns removed (latest first).
    ``required`` columns are taken first.  Pairs no column separates stay
    together (the caller checks :func:`unseparated`).
    """
    M, n = outputs.shape
    labels = np.zeros(M, dtype=np.int64)
    chosen: list[int] = []
    for j in required or ():
        chosen.append(int(j))
        labels = refine(labels, outputs[:, j])
    while _pairs(labels) > 0:
        # only columns that differ somewhere inside a block can help
        cols = np.arange(n)
        j, gain = _best(outputs, labels, cols)
        if gain <= 0:
            break
        chosen.append(j)
        labels = refine(labels, outputs[:, j])
    # drop columns the others make redundant, latest first
    target = _pairs(labels)
    for j in list(reversed(chosen)):
        rest = [x for x in chosen if x != j]
        lab = np.zeros(M, dtype=np.int64)
        for x in rest:
            lab = refine(lab, outputs[:, x])
        if _pairs(lab) == target:
            chosen = rest
    return chosen
