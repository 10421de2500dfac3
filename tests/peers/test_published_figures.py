"""Figures other projects published, each reproduced by the convention that made it, to its printed rounding.

- MaxText's documentation logs deepseek2-16b (per-device batch 24, 2,048 tokens) at 764.67 TFLOP per device per
  step, 94.54% of it learnable-weight FLOPs: MaxText 0.2.5's function, ``convention='maxtext'``.
- MaxText PR #1988 ("causal attention counts half the square") tabulates, per device at batch 4 and 8,192 tokens,
  each model before and after its change: llama2-7b 1,721.22 -> 1,510.11 TFLOP, deepseek2-16b 704.60 -> 593.27.
  After: ``'maxtext'``; before: ``'maxtext_pr1988_before'`` (the whole square), which MFU tables published before
  it still use.
"""

import pytest

import maxflops


def tflop(model, convention, **keys):
    return maxflops.count(maxflops.load_config(model, convention=convention, **keys))


@pytest.mark.parametrize("model,before,after", [("llama2-7b", "1721.22", "1510.11"),
                                                ("deepseek2-16b", "704.60", "593.27")])
def test_maxtext_pr1988_table_before_and_after(model, before, after):
    keys = dict(max_target_length=8192, per_device_batch_size=4)
    assert f"{tflop(model, 'maxtext_pr1988_before', **keys).total / 1e12:.2f}" == before
    assert f"{tflop(model, 'maxtext', **keys).total / 1e12:.2f}" == after


def test_maxtext_docs_deepseek2_16b_line():
    b = tflop("deepseek2-16b", "maxtext", max_target_length=2048, per_device_batch_size=24)
    assert f"{b.total / 1e12:.2f}" == "764.67"
    assert f"{100 * b.learnable_weight / b.total:.2f}" == "94.54"


def test_the_whole_square_is_twice_the_half_square():
    """Only the causal pairs differ between the two: attention doubles, the weights stay."""
    keys = dict(max_target_length=4096, per_device_batch_size=1)
    a, b = tflop("llama3.1-8b", "maxtext", **keys), tflop("llama3.1-8b", "maxtext_pr1988_before", **keys)
    assert b.attention == 2 * a.attention and b.learnable_weight == a.learnable_weight
    assert b.hardware_flops == a.hardware_flops          # a reporting convention: what runs is the same
