"""Choosing few inputs whose outputs tell every class apart.

A vector splits a set of classes into as many groups as it has distinct
outputs, so V vectors can tell at most (outputs per vector)^V classes apart
and never fewer than ceil(log2 M) vectors suffice for M classes when each
vector splits in two.  :func:`select` picks greedily, at each step the pool
row that separates the most pairs of classes still together (ties: the one
that splits into more groups), then drops rows the others make redundant;
when that takes more than a given ``target`` number of rows, a beam search
(the best few partial choices kept at each step) looks for ``target`` rows.
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


def select(outputs: np.ndarray, *, required: Optional[Sequence[int]] = None, target: Optional[int] = None,
           width: int = 8) -> list[int]:
    """Columns of ``outputs`` (classes x pool rows) that give every pair of classes different outputs somewhere.

    Greedy by pairs separated, then redundant columns removed (latest first).
    ``required`` columns are taken first.  Pairs no column separates stay
    together (the caller checks :func:`unseparated`).  When the greedy choice
    has more than ``target`` columns, a beam search of ``width`` partial
    choices per step looks for at most ``target`` that separate as much; the
    greedy choice stands when it finds none.
    """
    chosen = _greedy(outputs, required)
    if target is not None and len(chosen) > target and not required:
        found = _beam(outputs, _pairs(_labels(outputs, chosen)), target, width)
        if found is not None:
            return found
    return chosen


def _labels(outputs: np.ndarray, chosen: Sequence[int]) -> np.ndarray:
    labels = np.zeros(outputs.shape[0], dtype=np.int64)
    for j in chosen:
        labels = refine(labels, outputs[:, j])
    return labels


def _beam(outputs: np.ndarray, goal: int, limit: int, width: int) -> Optional[list[int]]:
    """At most ``limit`` columns leaving ``goal`` pairs together, keeping the ``width`` best partial choices per step
    (fewest pairs together, then most groups); None when the beam finds none."""
    M, n = outputs.shape
    states: list[tuple[np.ndarray, list[int]]] = [(np.zeros(M, dtype=np.int64), [])]
    for _ in range(limit):
        scored: dict[bytes, tuple[tuple[int, int], np.ndarray, list[int]]] = {}
        for labels, chosen in states:
            for j in range(n):
                new = refine(labels, outputs[:, j])
                key = new.tobytes()  # one partition, however reached
                score = (_pairs(new), -(int(new.max()) + 1))
                if key not in scored or score < scored[key][0]:
                    scored[key] = (score, new, chosen + [j])
        best = sorted(scored.values(), key=lambda t: t[0])[:width]
        for (pairs, _), labels, chosen in best:
            if pairs <= goal:
                return chosen
        states = [(labels, chosen) for _, labels, chosen in best]
    return None


def _greedy(outputs: np.ndarray, required: Optional[Sequence[int]]) -> list[int]:
    """The greedy choice of :func:`select`, redundant columns removed."""
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
