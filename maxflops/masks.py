"""Exact counts of attended (query, key) pairs, per mask kind.

Every function takes a length ``L`` that is a Python int or a numpy integer array (one entry per document) and
returns the same shape; sums over documents are taken by the caller. Query ``i`` is 0-based.

    causal          query i sees keys 0..i                        sum = L(L+1)/2
    capped(cap)     query i sees min(i+1, cap) keys               sliding window W, DSA top-k K
                      = m(m+1)/2 + (L-m)*cap with m = min(L, cap)
    chunked(C)      query i sees keys of its chunk up to i;       n = L // C full chunks, r = L % C
                    a final partial chunk is its own length         = n*C(C+1)/2 + r(r+1)/2
    bidirectional   every query sees every key                     = L^2

Decode: the new token sits at position ``kv`` (``kv`` keys already cached) and sees ``new_token_keys``.

The ``*_half_square`` / ``*_maxtext`` / ``*_megatron`` functions are other projects' approximations, kept so a
convention can reproduce their numbers; they may return a Fraction. ``tests/test_masks.py`` proves every exact
form against brute-force enumeration.
"""

from __future__ import annotations

from fractions import Fraction


def _minimum(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a if a < b else b
    import numpy as np

    return np.minimum(a, b)


def causal(L):
    return L * (L + 1) // 2


def capped(L, cap):
    m = _minimum(L, cap)
    return m * (m + 1) // 2 + (L - m) * cap


def chunked(L, C):
    n, r = L // C, L % C
    return n * (C * (C + 1) // 2) + r * (r + 1) // 2


def bidirectional(L):
    return L * L


def new_token_keys(mixer: str, span: int, kv):
    """Keys the token at position ``kv`` attends in decode (itself included)."""
    if mixer in ("window", "dsa"):
        return _minimum(kv + 1, span)
    if mixer == "chunk":
        return kv % span + 1
    return kv + 1  # global


def pairs(mixer: str, span: int, L):
    """Exact attended pairs of one sequence (or an array of documents) for a plan mixer kind."""
    if mixer == "global":
        return causal(L)
    if mixer in ("window", "dsa"):
        return capped(L, span)
    if mixer == "chunk":
        return chunked(L, span)
    if mixer == "bidirectional":
        return bidirectional(L)
    raise ValueError(f"mixer {mixer!r} has no attention pairs")


# --- other projects' approximations (conventions) -----------------------------------------------------------
# Each takes the step's sequences (an object with ``sum(f)`` over sequence lengths) and returns a pair count,
# a Fraction where the approximation is not whole.

def half_square(seqs):
    """'Causal = half the square': sum L^2/2 (MaxText, Megatron)."""
    return Fraction(seqs.sum(lambda L: L * L), 2)


def band_maxtext(seqs, span):
    """MaxText's sliding window and DSA top-k: L*m - m^2/2 with m = min(L, span) (the dense L^2/2 when
    L <= span): a right triangle of side m, then m keys per query; the diagonal's m/2 is dropped."""
    return Fraction(seqs.sum(lambda L: 2 * L * _minimum(L, span) - _minimum(L, span) ** 2), 2)


def chunk_maxtext(seqs, span):
    """MaxText's chunked attention: half the sum of squared chunk lengths."""
    return Fraction(seqs.sum(lambda L: (L // span) * span * span + (L % span) ** 2), 2)


def window_megatron(seqs, span):
    """Megatron's sliding window and chunk (effective length min(L, span), halved): L*min(L, span)/2."""
    return Fraction(seqs.sum(lambda L: L * _minimum(L, span)), 2)
