"""HRM-Text (hrm_text): its two stacks read as looped depth, the L stack's passes under torch.no_grad forward only in
training. The rule for which L passes carry a gradient held against HrmTextModel's loop enumerated pass by pass; the
files transformers saves (num_layers_per_stack, num_hidden_layers the cache slots) and older ones (num_hidden_layers
the per-stack count) read alike. Exact against torch forward and training in the zoo (tests/loaders/test_hf_zoo.py)."""

from __future__ import annotations

import json

import pytest

import maxflops
from maxflops.loaders import load_hf_config
from maxflops.loaders.hf.models.hrm_text import grad_passes


def enumerated(bp, H, L):
    """HrmTextModel.forward's loop: in cycle h, pass l runs with a gradient iff l >= L - k_h, k_h the entry of
    L_bp_cycles left-padded with 1s to H entries (1 past the list)."""
    padded = [1] * max(0, H - len(bp)) + list(bp)
    return sum(1 for h in range(H) for l in range(L) if l >= L - (padded[h] if h < len(padded) else 1))


@pytest.mark.parametrize("bp", [[2], [1], [0], [3], [5], [1, 2], [2, 1, 3], [0, 0, 0, 0]])
@pytest.mark.parametrize("H,L", [(1, 1), (2, 3), (3, 2), (1, 4)])
def test_the_passes_with_a_gradient_are_the_models(bp, H, L):
    assert grad_passes(bp, H, L) == enumerated(bp, H, L)


BASE = {"model_type": "hrm_text", "hidden_size": 40, "num_attention_heads": 4, "head_dim": 14, "intermediate_size": 26,
        "vocab_size": 70, "H_cycles": 2, "L_cycles": 3, "L_bp_cycles": [2]}


def _load(tmp_path, data):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return load_hf_config(path).overrides


def test_saved_and_older_files_read_alike(tmp_path):
    saved = _load(tmp_path, {**BASE, "num_layers_per_stack": 2, "num_hidden_layers": 16})
    older = _load(tmp_path, {**BASE, "num_hidden_layers": 2})
    assert saved == older
    assert saved["num_decoder_layers"] == 4 and saved["layer_loops"] == ("0-1*6/3", "2-3*2")
    assert saved["num_kv_heads"] == 4 and saved["attention_output_gate"]


def test_the_passes_without_a_gradient_cost_their_forward(tmp_path):
    o = _load(tmp_path, {**BASE, "num_layers_per_stack": 2, "num_hidden_layers": 16})
    kw = dict(o, max_target_length=31, per_device_batch_size=2)
    train = maxflops.count(maxflops.model_config(**kw))
    every = maxflops.count(maxflops.model_config(**{**kw, "layer_loops": ("0-1*6", "2-3*2")}))
    fwd = maxflops.count(maxflops.model_config(**kw, mode="prefill"))
    layer = {r.name: r.total for r in fwd.layers}
    # three of the six L passes without a gradient: 2 x their forward less than every pass at 3x
    assert every.total - train.total == 2 * sum(layer[f"layer {l}.{p}"] for l in (0, 1) for p in (1, 2, 3))
