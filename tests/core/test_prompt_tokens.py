"""Prompt tokens ahead of every sequence (``prompt_tokens``: CPM-Ant's prompt_length): the layers run L + P tokens per
sequence, the output head L. Held to the same model without prompt tokens counted at L + P (its layer rows) and at L
(its head), model and hardware, train and prefill; the grid equals count point by point; the Flax model equals XLA
(tests/xla); CPM-Ant equals torch on transformers' eager model (the zoo)."""

from __future__ import annotations

import pytest

import maxflops

BASE = dict(num_decoder_layers=2, emb_dim=40, num_query_heads=4, num_kv_heads=4, head_dim=10, mlp_dim=26,
            vocab_size=70, mlp_activations=("gelu", "linear"), causal=False, per_device_batch_size=2)


def _rows(b, hardware=False):
    return [dict(r.hardware_components if hardware else r.components) for r in b.layers]


@pytest.mark.parametrize("mode", ["train", "prefill"])
@pytest.mark.parametrize("L,P", [(31, 32), (7, 1), (100, 9)])
def test_the_layers_run_the_prompt_and_the_head_does_not(mode, L, P):
    b = maxflops.count(maxflops.model_config(**BASE, prompt_tokens=P, max_target_length=L, mode=mode))
    longer = maxflops.count(maxflops.model_config(**BASE, max_target_length=L + P, mode=mode))
    plain = maxflops.count(maxflops.model_config(**BASE, max_target_length=L, mode=mode))
    for hardware in (False, True):
        assert _rows(b, hardware)[:-1] == _rows(longer, hardware)[:-1]  # the decoder layers: L + P tokens
        assert _rows(b, hardware)[-1] == _rows(plain, hardware)[-1]  # the head: L tokens
    assert b.tokens == plain.tokens


def test_a_grid_with_prompt_tokens_is_count_at_each_point():
    cfg = maxflops.model_config(**BASE, prompt_tokens=5)
    grid = maxflops.sweep_grid(cfg, [8, 20], [1, 3])
    for i, L in enumerate([8, 20]):
        for j, B in enumerate([1, 3]):
            want = maxflops.count(cfg, max_target_length=L, per_device_batch_size=B)
            assert grid.total[i][j] == want.total and grid.hardware[i][j] == want.hardware_flops


def test_forms_it_is_not_modelled_with_are_refused():
    cfg = maxflops.model_config(**BASE, prompt_tokens=5, max_target_length=8)
    with pytest.raises(ValueError, match=r"config key 'prompt_tokens': 5 with segment_lengths"):
        maxflops.count(cfg, segment_lengths=[3, 5])
    with pytest.raises(ValueError, match=r"config key 'convention': 'maxtext' has no rule for prompt tokens ahead of every sequence \(prompt_tokens=5\)"):
        maxflops.model_config(**BASE, prompt_tokens=5, convention="maxtext")
    with pytest.raises(ValueError, match=r"config key 'mtp_num_layers': 1 with prompt_tokens=5"):
        maxflops.model_config(**BASE, prompt_tokens=5, mtp_num_layers=1)


@pytest.mark.parametrize("kv,P", [(20, 5), (3, 12)])
def test_decode_reads_the_prompt_tokens_cache(kv, P):
    """A decode step attends the prompt tokens' cache entries too: its bytes are the same model's without prompt
    tokens at a KV length of kv + P (weights, K and V read and written, each entry as the model stores it)."""
    kw = dict(BASE, causal=True, mode="decode", kv_cache_bytes=2)
    with_prompt = maxflops.decode_traffic(maxflops.model_config(**kw, prompt_tokens=P, decode_kv_length=kv))
    longer = maxflops.decode_traffic(maxflops.model_config(**kw, decode_kv_length=kv + P))
    assert with_prompt.to_dict()["components"] == longer.to_dict()["components"]
    # B x layers x (K, V) x heads x head_dim x 2 bytes, over the prompt, the cached tokens and the new one
    assert with_prompt.components["kv_read"] == 2 * 2 * 2 * 4 * 10 * 2 * (kv + P + 1)
