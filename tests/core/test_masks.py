"""Every closed-form pair count of maxflops.masks (the counts two or more families share) against brute-force
enumeration of the mask; a family's own closed forms are proved in its test file (tests/families/)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from maxflops import masks


# --- brute force: enumerate (query, key) pairs with the mask's own definition ------------------------------

def brute(kind, L, span=0):
    n = 0
    for i in range(L):
        if kind == "dsa":  # top-K over the whole row with invisible keys at -inf; count the selected visible ones
            scores = np.where(np.arange(L) <= i, np.random.default_rng(i).random(L), -np.inf)
            chosen = np.argsort(-scores, kind="stable")[:span]
            n += int(np.isfinite(scores[chosen]).sum())
            continue
        for j in range(L):
            if kind == "global":
                n += j <= i
            elif kind == "window":
                n += i - span < j <= i
            elif kind == "chunk":
                n += j <= i and j // span == i // span
            elif kind == "bidirectional":
                n += 1
    return n


KINDS = ["global", "window", "chunk", "dsa", "bidirectional"]


@pytest.mark.parametrize("kind", KINDS)
def test_closed_forms_match_enumeration(kind):
    spans = [0] if kind in ("global", "bidirectional") else [1, 2, 3, 5, 8, 13, 40]
    for span in spans:
        for L in range(1, 34):
            assert masks.pairs(kind, span, L) == brute(kind, L, span), (kind, span, L)


@pytest.mark.parametrize("kind", KINDS)
def test_vectorized_documents_match_enumeration(kind):
    rng = np.random.default_rng(0)
    span = 0 if kind in ("global", "bidirectional") else 7
    docs = rng.integers(1, 30, size=25)
    got = int(masks.pairs(kind, span, docs.astype(np.int64)).sum())
    assert got == sum(brute(kind, int(L), span) for L in docs)


def test_seed3_sliding_window_example():
    # Seed 3: a window of 512 over 2048 tokens. Rows 0..511 see 1..512 keys (512*513/2 = 131,328), the other
    # 1,536 rows see 512 each (786,432): 917,760 pairs per head and sequence, not 2048*512/2 = 524,288.
    assert masks.pairs("window", 512, 2048) == 917_760
    assert masks.capped(2048, 512) == 512 * 513 // 2 + 1536 * 512


def test_partial_last_chunk_is_its_own_length():
    # 10 tokens in chunks of 4: chunks of 4, 4 and 2 -> 10 + 10 + 3 pairs.
    assert masks.chunked(10, 4) == 23


@pytest.mark.parametrize("kind,span", [("global", 0), ("window", 5), ("chunk", 4), ("dsa", 6)])
def test_decode_keys_are_the_last_row_of_the_mask(kind, span):
    # The token at position kv attends exactly the keys of row kv of the prefill mask of length kv + 1.
    for kv in range(0, 30):
        assert masks.new_token_keys(kind, span, kv) == brute(kind, kv + 1, span) - brute(kind, kv, span)


def test_conventions_are_other_projects_rules():
    class One:  # a single sequence
        def __init__(self, L):
            self.L = L

        def sum(self, f):
            return f(self.L)

    # MaxText DSA at T=4096, K=2048: T*K - K^2/2 = 8,388,608 - 2,097,152.
    assert masks.band_maxtext(One(4096), 2048) == 6_291_456
    assert masks.band_maxtext(One(1000), 2048) == 500_000  # T <= K: the dense T^2/2
    assert masks.half_square(One(7)) == masks.Fraction(49, 2)


# --- properties -----------------------------------------------------------------------------------------

lengths = st.integers(1, 5000)
spans = st.integers(1, 6000)


@settings(max_examples=300, deadline=None)
@given(lengths, spans)
def test_monotone_in_length(L, span):
    for kind in KINDS:
        assert masks.pairs(kind, span, L + 1) > masks.pairs(kind, span, L)


@settings(max_examples=300, deadline=None)
@given(lengths, spans)
def test_sparse_never_exceeds_dense_and_equals_it_when_span_covers(L, span):
    dense = masks.causal(L)
    for kind in ("window", "chunk", "dsa"):
        p = masks.pairs(kind, span, L)
        assert p <= dense
        if span >= L:
            assert p == dense
    assert dense <= masks.bidirectional(L)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 300), min_size=1, max_size=40), spans)
def test_packed_documents_never_exceed_the_padded_sequence(docs, span):
    # Documents packed into one row of length sum(docs): masks restart at each document, so the packed
    # count is at most the count of one sequence of the same total length.
    total = sum(docs)
    arr = np.array(docs, dtype=np.int64)
    for kind in KINDS:
        assert int(masks.pairs(kind, span, arr).sum()) <= masks.pairs(kind, span, total)
