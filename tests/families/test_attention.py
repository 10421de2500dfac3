"""The attention family's own closed forms (maxflops.families.attention): the peers' pair rules for windows and chunks,
worked by hand. The exact counts it shares (causal, window, chunk) are proved in tests/core/test_masks.py; its whole
layers in tests/core (test_models.py, test_formula_mutants.py)."""

from fractions import Fraction

import pytest

from maxflops.families.attention import chunk_maxtext, window_bridge


class One:  # a single sequence
    def __init__(self, L):
        self.L = L

    def sum(self, f):
        return f(self.L)


def test_maxtext_chunks_are_half_the_squared_chunk_lengths():
    # MaxText chunked: (2 * 8^2 + 3^2) / 2 for T=19, C=8.
    assert chunk_maxtext(One(19), 8) == Fraction(137, 2)


@pytest.mark.parametrize("W,rows", [(128, 1), (128, 3), (7, 2)])
def test_the_bridge_window_at_a_row_exactly_one_window_long_is_the_half_square(W, rows):
    """Megatron-Bridge prices a window as a global layer unless it is shorter than the mean row (W < s): at s == W
    exactly the half square L^2 / 2 per row, one token more and W x tokens - rows x W(W-1)/2."""
    from maxflops.sequences import Uniform

    at = Uniform(W, rows)
    assert window_bridge(at, W, W * rows, rows) == rows * W * W / 2
    past = Uniform(W + 1, rows)
    assert window_bridge(past, W, (W + 1) * rows, rows) == (W + 1) * rows * W - rows * W * (W - 1) // 2
