"""Brute-force enumerations that prove the closed forms of maxflops.masks, shared by the tests that need them: each
mask as a boolean matrix, and the blocked kernels' tiles counted pair by pair."""

import numpy as np


def mask_matrix(kind, L, span):
    i = np.arange(L)[:, None]
    j = np.arange(L)[None, :]
    if kind == "bidirectional":
        return np.ones((L, L), bool)
    m = j <= i
    if kind == "window":
        m &= j > i - span
    if kind == "chunk":
        m &= j // span == i // span
    return m


def brute_tiles(kind, L, span, bq, bkv):
    """Sum of the sizes of the tiles that hold at least one visible pair."""
    m = mask_matrix(kind, L, span)
    total = 0
    for a in range(0, L, bq):
        for b in range(0, L, bkv):
            tile = m[a:a + bq, b:b + bkv]
            if tile.any():
                total += tile.size
    return total


def brute_compressed_tiles(L, m, bq, bkv):
    """Compressed keys of every (row tile, block tile) holding at least one visible (query, block) pair."""
    C = L // m
    total = 0
    for a0 in range(0, L, bq):
        a1 = min(a0 + bq, L)
        for c0 in range(0, C, bkv):
            c1 = min(c0 + bkv, C)
            if any((b + 1) * m - 1 <= t for t in range(a0, a1) for b in range(c0, c1)):
                total += (a1 - a0) * (c1 - c0)
    return total
