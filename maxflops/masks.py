"""Exact counts of attended (query, key) pairs, per mask kind.

Every function takes a length ``L`` that is a Python int or a numpy integer array (one entry per document) and
returns the same shape; sums over documents are taken by the caller. Query ``i`` is 0-based.

    causal          query i sees keys 0..i                        sum = L(L+1)/2
    capped(cap)     query i sees min(i+1, cap) keys               sliding window W, DSA top-k K
                      = m(m+1)/2 + (L-m)*cap with m = min(L, cap)
    chunked(C)      query i sees keys of its chunk up to i;       n = L // C full chunks, r = L % C
                    a final partial chunk is its own length         = n*C(C+1)/2 + r(r+1)/2
    bidirectional   every query sees every key                     = L^2

Compressed attention (DeepSeek-V4): block b of ratio m holds tokens up to (b+1)m-1 and is visible to query i
iff (b+1)m-1 <= i; a partial last block is never formed.

    compressed_visible(m)     query i sees floor((i+1)/m) blocks   L = qm + r: m*q(q-1)/2 + q(r+1)
    compressed_topk(m, K)     query i attends min(floor((i+1)/m), K) blocks

Decode: the new token sits at position ``kv`` (``kv`` keys already cached) and sees ``new_token_keys``
(compressed layers: ``new_token_blocks``).

``half_square`` and ``band_maxtext`` are other projects' approximations (the attention and DSA families both use
them), kept so a convention can reproduce their numbers; they may return a Fraction. ``blocked`` and
``blocked_decode`` count the pairs a tiled kernel computes. ``tests/core/test_masks.py`` and
``tests/core/test_hardware.py`` prove every exact form here against brute-force enumeration.

Here are the counts two or more callers share (the trunk's plan and step form, or two families). A mask that serves
one mixer family lives in that family's package with its brute-force test: MiniMax's block-sparse top-k
(``maxflops.families.msa``), QSA's tail and blocks (``maxflops.families.qsa``), Reformer's look-back
(``maxflops.families.reformer``), DeepSeek-V4's formed blocks and their tiles (``maxflops.families.compressed``), the
peers' rules for DSA (``maxflops.families.dsa``) and for windows and chunks (``maxflops.families.attention``).
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


def dilated_taps(L, kernel, dilation):
    """Non-padding taps of a causal conv of ``kernel`` taps spaced ``dilation`` apart over a length-L sequence:
    token i reads positions i, i-d, ..., i-(kernel-1)d that exist, min(kernel, i // d + 1) of them.
    With m = min(L, d(kernel-1)), q, r = divmod(m, d): d*q(q+1)/2 + r(q+1) + kernel*(L - m)."""
    m = _minimum(L, dilation * (kernel - 1))
    q, r = m // dilation, m % dilation
    return dilation * q * (q + 1) // 2 + r * (q + 1) + kernel * (L - m)


def bidirectional(L):
    return L * L


def compressed_visible(L, m):
    """(query, block) pairs when every completed block is visible: sum_{i<L} floor((i+1)/m)."""
    q, r = L // m, L % m
    return m * q * (q - 1) // 2 + q * (r + 1)


def compressed_topk(L, m, K):
    """(query, block) pairs when each query attends at most K of its visible blocks: queries i < Km - 1 see
    fewer than K blocks (all attended), every later query exactly K."""
    longest = L if isinstance(L, int) else int(L.max())
    K = min(K, longest // m + 1)  # a top-k above every block changes nothing (and K*m stays small)
    head = _minimum(L, K * m - 1)
    return compressed_visible(head, m) + K * (L - head)


def new_token_blocks(kv, m, K=0):
    """Compressed blocks the token at position ``kv`` attends (K=0: every visible one)."""
    visible = (kv + 1) // m
    return _minimum(visible, K) if K else visible


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

def _ratio(n: int, d: int):
    """n / d exactly: an int when d divides n (int arithmetic is many times faster than Fraction's), else a
    Fraction."""
    if not isinstance(n, (int, Fraction)):  # a step form's symbol (maxflops.stepform): n/d as a linear form
        return n * Fraction(1, d)
    q, r = divmod(n, d)
    return q if not r else Fraction(n, d)


def half_square(seqs):
    """'Causal = half the square': sum L^2/2 (MaxText, Megatron)."""
    return _ratio(seqs.sum(lambda L: L * L), 2)


def band_maxtext(seqs, span):
    """MaxText's sliding window and DSA top-k: L*m - m^2/2 with m = min(L, span) (the dense L^2/2 when
    L <= span): a right triangle of side m, then m keys per query; the diagonal's m/2 is dropped."""
    return _ratio(seqs.sum(lambda L: 2 * L * _minimum(L, span) - _minimum(L, span) ** 2), 2)


# --- hardware: what kernels execute ------------------------------------------------------------------------

def _visible_from(mixer: str, span: int, a0):
    """First key visible to query row a0 (and, for these masks, the smallest over rows a0..a1-1)."""
    if mixer == "window":
        return _maximum(a0 - span + 1, 0)
    if mixer == "chunk":
        return (a0 // span) * span
    return a0 * 0  # global causal, bidirectional


def _maximum(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a if a > b else b
    import numpy as np

    return np.maximum(a, b)


# Row blocks up to which the tiled counts enumerate every row block (vectorized); above, one length at a time is
# folded by the period of its tile pattern (``_fold``), so memory and time no longer grow with L / block_q.
ENUMERATE_ROWS = 1 << 20


def blocked(mixer: str, span: int, L, block_q: int, block_kv: int):
    """Pairs a tiled (flash/splash) kernel computes for a sequence of length L (an int, or an int64 array of
    document lengths, one result each): every (block_q x block_kv) tile that holds at least one visible pair,
    counted whole (the last tiles of a row or column are partial).

    Row block [a0, a1) sees keys from ``_visible_from(a0)`` to a1-1 (to L-1 when bidirectional) as one
    contiguous range for every mask here, so its touched key blocks run from lo // bkv to hi // bkv: its width
    is ``min((hi // bkv + 1) * bkv, L) - (lo // bkv) * bkv``.
    """
    def cols(a0, a1, Lr):
        hi = Lr - 1 if mixer == "bidirectional" else a1 - 1
        lo = _visible_from(mixer, span, a0)
        return _minimum((hi // block_kv + 1) * block_kv, Lr) - (lo // block_kv) * block_kv

    def moves(a0, a1, L):  # (left edge moves with a0, right edge below L) for a full-height row block
        left = mixer == "chunk" or mixer == "window" and a0 >= span - 1  # the window's left edge, past 0
        right = mixer != "bidirectional" and ((a1 - 1) // block_kv + 1) * block_kv < L
        return left, right

    return _tiled(L, block_q, block_kv * (span if mixer == "chunk" else 1), 1, cols, moves)


def _tiled(L, block_q, period, scale, cols, moves):
    """sum over the row blocks [a0, a1) of each length of (a1 - a0) * cols(a0, a1, L)."""
    import numpy as np

    lengths = np.atleast_1d(np.asarray(L)).astype(np.int64)
    blocks = -(-lengths // block_q)  # row blocks per sequence
    if int(blocks.sum()) > ENUMERATE_ROWS:
        values, inverse = np.unique(lengths, return_inverse=True)
        one = [_fold(int(v), block_q, period, scale, cols, moves) for v in values]
        per_seq = np.array(one, dtype=object)[inverse]
        return int(per_seq[0]) if np.ndim(L) == 0 else per_seq
    start = np.cumsum(blocks) - blocks
    seq = np.repeat(np.arange(len(lengths)), blocks)
    Lr = lengths[seq]
    a0 = (np.arange(int(blocks.sum()), dtype=np.int64) - start[seq]) * block_q
    a1 = np.minimum(a0 + block_q, Lr)
    tiles = (a1 - a0) * cols(a0, a1, Lr)  # each at most block_q * L: fits int64; their sum may not
    if int(lengths.max()) ** 2 * len(lengths) >= 1 << 62:
        tiles = tiles.astype(object)  # exact Python ints for the sums
    per_seq = np.add.reduceat(tiles, start)
    return int(per_seq[0]) if np.ndim(L) == 0 else per_seq


def _fold(L: int, block_q: int, period: int, scale: int, cols, moves) -> int:
    """The tiled sum of one length L in O(P) row blocks, P = lcm(block_q, period) / block_q.

    Every row block but the last is block_q high. Its width is a right tile edge minus a left one; moving the row
    by P moves the rows' start by P * block_q, a multiple of ``period`` (the tile, and the chunk, or the
    compressed ratio times the tile), so each edge moves by exactly P * block_q / scale, unless it is pinned:
    the right edge at the last key once it reaches it, the left edge at 0 (always for global and bidirectional
    masks, before the first slide for a window). ``moves(a0, a1, L)`` says which edges move at a row; each flips
    once at most, so the rows split into at most three runs at breakpoints found by bisection. On a run [a, b)
    the width steps by delta = P * block_q / scale * (right moves - left moves) per period, and the run sums
    residue by residue: sum_j n_j * w(a + j) + delta * n_j (n_j - 1) / 2. Checked against enumeration
    (tests/core/test_hardware.py, tests/families/test_compressed.py)."""
    import math

    R = -(-L // block_q)
    P = math.lcm(block_q, period) // block_q
    shift = P * block_q // scale

    def width(r):
        a0 = r * block_q
        return int(cols(a0, min(a0 + block_q, L), L))

    def regime(r):
        a0 = r * block_q
        return moves(a0, a0 + block_q, L)

    n = R - 1  # full-height rows 0 .. R-2; the last row may be partial
    total = (L - n * block_q) * width(n)
    cuts = {0, n}
    for part in (0, 1):  # each edge's flip point: the first row whose regime differs from row 0's
        first = regime(0)[part]
        lo, hi = 0, n
        while lo < hi:
            mid = (lo + hi) // 2
            if regime(mid)[part] == first:
                lo = mid + 1
            else:
                hi = mid
        cuts.add(lo)
    bounds = sorted(c for c in cuts if 0 <= c <= n)
    for a, b in zip(bounds, bounds[1:]):
        left, right = regime(a)
        delta = shift * (int(right) - int(left))
        run = 0
        for j in range(min(P, b - a)):
            k = -(-(b - a - j) // P)  # rows a + j, a + j + P, ... below b
            run += k * width(a + j) + delta * (k * (k - 1) // 2)
        total += block_q * run
    return total


def blocked_decode(mixer: str, span: int, kv: int, block_kv: int) -> int:
    """Keys a tiled kernel reads for the new token at position kv: its visible range rounded out to KV blocks."""
    L = kv + 1
    lo = _visible_from(mixer, span, kv)
    return min((kv // block_kv + 1) * block_kv, L) - (lo // block_kv) * block_kv
