"""Megatron-LM's FLOPs function as later revisions compute it, against ``convention='megatron_main'``,
``'megatron_pr6148'`` and ``'megatron_pr6753'``.

The reference below transcribes ``num_floating_point_operations`` (megatron/training/training.py, GPT path) as
math, from main at d98e8a6 (2026-08-22) and from the heads of pull requests #6148 and #6753 (both on dev): every
term is 3 (forward + backward) x 2 (multiply-add) per multiply-add; token-linear terms times T (real tokens), core
attention times S2 (sum of squared document lengths). Main has no window, DSA or indexer term (a DSA layer is dense
MLA); #6148 and #6753 scale the dense core by rho = e(1 - e/(2s)) / (s/2), e = min(topk, floor(s)), s = S2/T, and
add the indexer with its own multipliers (1x without its loss; projections 2x and scoring 3x with it) on the layers
that compute their own top-k; #6753 prices the DSA core in the absorbed (latent) form.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

import maxflops
from maxflops.config import validate


def megatron(c, lengths, revision):
    """Megatron-LM's training FLOPs for documents ``lengths`` (Fractions, exact)."""
    T = sum(lengths)
    S2 = sum(L * L for L in lengths)
    h, n, V = c["emb_dim"], c["num_query_heads"], c["vocab_size"]
    n_main, M = c["num_decoder_layers"], c["mtp_num_layers"]
    layers = n_main + M
    gated = len(c["mlp_activations"]) == 2
    cf = 3 if gated else 2
    # MoE layers (moe_layer_freq as a list): the MTP layers copy the last main layer's type
    moe = [c["num_experts"] > 1 and i >= c["first_num_dense_layers"] and (i + 1) % c["interleave_moe_layer_step"] == 0
           for i in range(n_main)]
    moe += [moe[-1]] * M
    f, fe, k = c["mlp_dim"], c["moe_mlp_dim"], c["num_experts_per_tok"]
    fs = c["shared_experts"] * c["moe_mlp_dim"]
    ffn = sum(6 * h * (fe * k * cf + fs * cf) if m else 6 * h * cf * f for m in moe)
    # attention: linear (gated delta net) layers by the pattern over all layers, MTP included
    pattern = c["attention_layer_pattern"]
    linear = [pattern[i % len(pattern)] == "D" for i in range(layers)]
    n_std = layers - sum(linear)
    rho = 1
    dsa = c["use_sparse_indexer"] and revision != "main"
    if dsa:
        s = Fraction(S2, T)
        e = min(c["index_topk"], s.numerator // s.denominator)
        rho = e * (1 - e / (2 * s)) / (s / 2)
    if c["attention_type"] == "mla":
        rq, rkv, dqk, dr, dv = (c["q_lora_rank"], c["kv_lora_rank"], c["qk_nope_head_dim"], c["qk_rope_head_dim"],
                                c["v_head_dim"])
        q_term = rq * (h + n * (dqk + dr) + 1) if rq else h * n * (dqk + dr)
        lin = 6 * (q_term + rkv * (h + n * (dqk + dv) + 1) + h * dr + n * dv * h)
        if dsa and revision == "pr6753":
            core = 6 * (Fraction(n * (rkv + dr), 2) + Fraction(n * rkv, 2)) * rho
        else:
            core = 3 * n * (dqk + dr + dv) * rho
    else:
        d, g = c["head_dim"], c["num_kv_heads"]
        gate = n * d if c["attention_output_gate"] else 0
        lin = 6 * (h * (n * d + 2 * g * d + gate) + n * d * h)
        core = 6 * n * d
    gdn = 0
    if any(linear):
        Dqk = c["gdn_key_head_dim"] * c["gdn_num_key_heads"]
        Dv = c["gdn_value_head_dim"] * c["gdn_num_value_heads"]
        Hv, dvh, K = c["gdn_num_value_heads"], c["gdn_value_head_dim"], c["gdn_conv_kernel_dim"]
        gdn = 6 * (h * (2 * Dqk + 2 * Dv + 2 * Hv) + K * (2 * Dqk + Dv) + 4 * Hv * dvh * dvh + h * Dv)
    attn_lin = lin * n_std + gdn * sum(linear)
    mtp = 6 * M * (3 * h + 2 * h * h)
    vpad = -(-V // 128) * 128
    logits = 6 * h * vpad * (M + 1)
    total = T * (ffn + attn_lin + mtp + logits) + S2 * core * n_std
    if dsa:  # the indexer on the layers that compute their own top-k (MTP layers numbered after the decoder)
        freq, off = c["index_topk_freq"], c["index_skip_offset"]  # Megatron's is_dsa_skip_topk_layer, negated
        n_idx = sum(max(l - max(off, 1), 0) % freq == 0 for l in range(1, layers + 1))
        loss = c["indexer_loss_scaling_factor"] > 0
        ni, di = c["index_n_heads"], c["index_head_dim"]
        token_linear = n_idx * ((c["q_lora_rank"] or h) * ni * di + h * di + h * ni)
        total += T * (2 if loss else 1) * 2 * token_linear + S2 * (3 if loss else 1) * 2 * n_idx * Fraction(ni * di, 2)
    return total


CASES = [("glm5", 4096), ("glm5", 131072), ("deepseek3.2-671b", 32768), ("deepseek3.2-671b", 1000),
         ("deepseek2-16b", 8192), ("llama3.1-8b", 8192), ("gpt-oss-120b", 131072), ("gemma3-27b", 32768),
         ("qwen3-next-80b-a3b", 65536), ("mixtral-8x7b", 4096)]
REVISIONS = {"main": "megatron_main", "pr6148": "megatron_pr6148", "pr6753": "megatron_pr6753"}


def close(ours: int, theirs: Fraction, rows: int) -> bool:
    """Our count rounds each layer kind's priced components to integers once and multiplies them by the number of
    rows of that kind: a non-integer figure (rho at a token-weighted mean length) is off by at most half a FLOP per
    row, so ``rows`` bounds the difference."""
    return abs(ours - theirs) <= Fraction(rows, 2)


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("name,length", CASES)
def test_later_revisions_reproduce_megatrons_function(name, length, revision):
    cfg = maxflops.load_config(name, max_target_length=length, per_device_batch_size=2,
                               convention=REVISIONS[revision])
    c = validate(cfg)
    assert maxflops.count(cfg).total == megatron(c, [length, length], revision)  # whole numbers on equal rows


@pytest.mark.parametrize("revision", REVISIONS)
def test_packed_documents_and_the_indexer_loss(revision):
    """Packed documents (T and S2 from the real lengths: rho at the token-weighted mean length) and, for the pull
    requests, the indexer's multipliers with its KL loss on."""
    docs = [4000, 100, 9000, 2500, 384]
    for loss in (0.0, 0.1):
        cfg = maxflops.load_config("glm5", max_target_length=16384, convention=REVISIONS[revision],
                                   indexer_loss_scaling_factor=loss)
        b = maxflops.count(cfg, segment_lengths=docs)
        assert close(b.total, megatron(validate(cfg), docs, revision), len(b.layers))


def test_what_each_revision_changes_on_glm5_at_128k():
    """GFLOPs/token at 128K: main counts DSA as dense MLA without the indexer (the seed's 'before' figure); #6148's
    head sits near exact (indexer 1x, no head reduction); #6753's absorbed core is wider per pair."""
    per_token = {conv: round(maxflops.count(maxflops.load_config("glm5", max_target_length=131072,
                                                                 convention=conv)).per_token / 1e9, 1)
                 for conv in ("exact", "megatron", "megatron_main", "megatron_pr6148", "megatron_pr6753")}
    assert per_token == {"exact": 293.7, "megatron": 317.3, "megatron_main": 1267.0, "megatron_pr6148": 292.9,
                         "megatron_pr6753": 328.4}


def test_main_has_no_window_term():
    """gpt-oss at 128K: the seed's window rule gives 30.82 GFLOPs/token; main counts every layer dense causal."""
    cfg = maxflops.load_config("gpt-oss-120b", max_target_length=131072)
    seed = maxflops.count(cfg, convention="megatron").per_token / 1e9
    main = maxflops.count(cfg, convention="megatron_main").per_token / 1e9
    assert round(seed, 2) == 30.82 and main > 2 * seed
