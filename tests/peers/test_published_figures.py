"""Figures other projects published, each reproduced by the convention that made it, to its printed rounding.

- MaxText's documentation logs deepseek2-16b (per-device batch 24, 2,048 tokens) at 764.67 TFLOP per device per
  step, 94.54% of it learnable-weight FLOPs: MaxText 0.2.5's function, ``convention='maxtext'``.
- MaxText PR #1988 ("causal attention counts half the square") tabulates, per device at batch 4 and 8,192 tokens,
  each model before and after its change: llama2-7b 1,721.22 -> 1,510.11 TFLOP, deepseek2-16b 704.60 -> 593.27.
  After: ``'maxtext'``; before: ``'maxtext_pr1988_before'`` (the whole square), which MFU tables published before
  it still use.
- PaLM (Chowdhery et al. 2022, table 3 and appendix B): 540B trained at 46.2% MFU, 238.3K tokens/s on 6,144 TPU v4
  chips (275 TFLOP/s each), 2,048 tokens, counted as 6N + 12 L H Q T per token: ``convention='palm'``; its N is
  the count's learnable weights (540.35B, as published).
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


PALM_540B = dict(num_decoder_layers=118, emb_dim=18432, num_query_heads=48, num_kv_heads=1, head_dim=256,
                 mlp_dim=73728, mlp_activations=["silu", "linear"], vocab_size=256000, max_target_length=2048,
                 per_device_batch_size=1)   # multi-query, SwiGLU, a tied 256K vocabulary (the head is its table)


def test_palm_540b_mfu():
    b = maxflops.count(maxflops.model_config(**PALM_540B, convention="palm"))
    per_token = b.total / b.tokens
    assert f"{b.learnable_weight / b.tokens / 6 / 1e9:.2f}" == "540.35"            # N
    assert per_token == b.learnable_weight // b.tokens + 12 * 118 * 48 * 256 * 2048            # 6N + 12LHQT
    assert f"{100 * 238.3e3 * per_token / (6144 * 275e12):.1f}" == "46.2"
    exact = maxflops.count(maxflops.model_config(**PALM_540B))
    assert f"{100 * 238.3e3 * exact.total / exact.tokens / (6144 * 275e12):.1f}" == "46.0"   # causal pairs: not it
