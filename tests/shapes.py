"""Weight shapes and brute-force masks, another route to a model's FLOPs than the library's terms: each layer's
weight matrices one token multiplies (name -> shape), each mask enumerated as a boolean matrix, a train step rebuilt
from them, and a parameter count. tests/core/test_models.py holds every shipped config to them; other tests reuse
them (published files, decode traffic)."""

import math

import numpy as np

import maxflops

T = 3000  # odd-sized, above every window and top-k of the shipped configs, below Llama 4's chunk
MODELS = maxflops.available_models()


def mask_pairs(letter, c, L=T):
    """Attended pairs of one layer by enumerating its boolean mask."""
    i = np.arange(L)[:, None]
    j = np.arange(L)[None, :]
    causal = j <= i
    if letter == "L":
        return int((causal & (j > i - c["sliding_window_size"])).sum())
    if letter == "C":
        C = c["chunk_attn_window_size"]
        return int((causal & (j // C == i // C)).sum())
    if letter in "SH":  # the window, plus compressed blocks: block b is visible iff its last token (b+1)m-1 <= i
        window = int((causal & (j > i - c["sliding_window_size"])).sum())
        m = c["csa_compress_ratio"] if letter == "S" else c["hca_compress_ratio"]
        b = np.arange(L // m)[None, :]
        visible = ((b + 1) * m - 1 <= i).sum(axis=1)
        if letter == "S" and c["use_sparse_indexer"]:
            visible = np.minimum(visible, c["index_topk"])
        return window + int(visible.sum())
    if letter == "B":  # whole blocks of B keys: the query's own (up to itself) and up to K - 1 earlier ones, all kept
        B, K = c["msa_block_size"], c["msa_topk_blocks"]  # while they number at most K
        blocks = j // B
        kept = (blocks == i // B) | (blocks >= i // B - (K - 1))  # (which earlier ones: any, the count is the same)
        return int((causal & kept).sum())
    if letter == "G" and c["use_sparse_indexer"]:  # each query keeps its K best visible keys
        return int(np.minimum(causal.sum(axis=1), c["index_topk"]).sum())
    return int(causal.sum())


def compressed_scored(c, L=T):
    """Blocks an 'S' layer's indexer scores: every visible one."""
    m = c["csa_compress_ratio"]
    i, b = np.arange(L)[:, None], np.arange(L // m)[None, :]
    return int(((b + 1) * m - 1 <= i).sum())


def ffn_of(c, l):
    """'dense', 'moe' or None (no FFN) for 0-based layer l."""
    if c["ffn_layer_pattern"]:
        return {"F": "dense", "E": "moe", "-": None}[c["ffn_layer_pattern"][l % len(c["ffn_layer_pattern"])]]
    moe = c["num_experts"] > 1 and l >= c["first_num_dense_layers"] and (l + 1) % c["interleave_moe_layer_step"] == 0
    return "moe" if moe else "dense"


def layer_weights(c, letter, moe, computes_index, active=True, ffn=True):
    """(name, shape) of every matmul weight a token goes through in one layer (``ffn=False``: a layer without an
    FFN; letter '-': without a mixer)."""
    D = c["emb_dim"]
    w = []
    if letter == "-":
        pass
    elif letter == "M":  # Mamba-2: in_proj to z, x, B, C, dt; out_proj (the conv's kernel is no matmul)
        H, P, N, G = c["mamba_num_heads"], c["mamba_head_dim"], c["mamba_state_dim"], c["mamba_n_groups"]
        w += [("in_proj", (D, 2 * H * P + 2 * G * N + H)), ("out_proj", (H * P, D))]
    elif letter == "A":  # Mamba-1: in_proj to x and z, x_proj to dt, B, C, dt_proj, out_proj
        E, N, R = c["mamba1_inner_dim"], c["mamba1_state_dim"], c["mamba1_dt_rank"]
        w += [("in_proj", (D, 2 * E)), ("x_proj", (E, R + 2 * N)), ("dt_proj", (R, E)), ("out_proj", (E, D))]
    elif letter == "D":
        nk, nv, dk, dv = (c["gdn_num_key_heads"], c["gdn_num_value_heads"], c["gdn_key_head_dim"],
                          c["gdn_value_head_dim"])
        w += [("in_proj_qkvz", (D, 2 * nk * dk + 2 * nv * dv)), ("in_proj_ba", (D, 2 * nv)),
              ("out_proj", (nv * dv, D))]
    elif letter == "N":  # lightning attention: q/k/v in one projection, the output gate, out_proj
        H, d = c["lightning_num_heads"] or c["num_query_heads"], c["lightning_head_dim"] or c["head_dim"]
        w += [("qkv_proj", (D, 3 * H * d)), ("output_gate", (D, H * d)), ("out_proj", (H * d, D))]
    elif letter == "K":  # Kimi delta attention: q, k, v, the low-rank forget and output gates, beta, o_proj
        H, d = c["kda_num_heads"], c["kda_head_dim"]
        r = c["kda_gate_rank"] or d
        w += [("q_proj", (D, H * d)), ("k_proj", (D, H * d)), ("v_proj", (D, H * d)), ("b_proj", (D, H)),
              ("o_proj", (H * d, D))]
        if c["kda_full_rank_forget_gate"]:  # Ling's f_proj
            w += [("f_proj", (D, H * d))]
        else:
            w += [("f_a_proj", (D, r)), ("f_b_proj", (r, H * d))]
        if c["kda_full_rank_gate"]:  # Kimi K3's output gate
            w += [("g_proj", (D, H * d))]
        else:
            w += [("g_a_proj", (D, r)), ("g_b_proj", (r, H * d))]
    elif c["attention_type"] == "compressed":  # DeepSeek-V4 (state-dict names of the checkpoint)
        H, hd, G, ro = c["num_query_heads"], c["head_dim"], c["o_groups"], c["o_lora_rank"]
        w += [("wq_a", (D, c["q_lora_rank"])), ("wq_b", (c["q_lora_rank"], H * hd)), ("wkv", (D, c["num_kv_heads"] * hd))]
        w += [(f"wo_a.{g}", (H * hd // G, ro)) for g in range(G)] + [("wo_b", (G * ro, D))]
        if letter in "SH":
            width = 2 * hd if letter == "S" else hd  # overlapping blocks: two halves
            w += [("compressor.wkv", (D, width)), ("compressor.wgate", (D, width))]
        G_hc = c["mhc_expansion_rate"]
        if G_hc > 1:
            w += [(f"hc_{x}_fn", (G_hc * D, 2 * G_hc + G_hc * G_hc)) for x in ("attn", "ffn")]
    elif c["attention_type"] == "mla":
        H, qk = c["num_query_heads"], c["qk_nope_head_dim"] + c["qk_rope_head_dim"]
        concat = 2 if c["mla_q_latent_concat"] else 1  # A.X K2's q_gate_proj reads the latent normed and raw
        if c["q_lora_rank"]:
            w += [("wq_a", (D, c["q_lora_rank"])), ("wq_b", (concat * c["q_lora_rank"], H * qk))]
        else:
            w += [("wq", (D, H * qk))]
        w += [("wkv_a", (D, c["kv_lora_rank"] + c["qk_rope_head_dim"])),
              ("wkv_b", (c["kv_lora_rank"], H * (c["qk_nope_head_dim"] + c["v_head_dim"]))),
              ("wo", (H * c["v_head_dim"], D))]
        if c["attention_output_gate"]:  # Kimi K3's gate per value channel (A.X K2's: from the q up-projection's input)
            w += [("g_proj", (concat * c["q_lora_rank"] if concat == 2 else D, H * c["v_head_dim"]))]
    else:
        H, Hkv, hd = c["num_query_heads"], c["num_kv_heads"], c["head_dim"]
        if letter == "G":  # global layers' own KV heads and width (MiMo-V2-Flash, Gemma 4)
            Hkv, hd = c["global_num_kv_heads"] or Hkv, c["global_head_dim"] or hd
        hv = c["value_head_dim"] or hd
        gate = 2 if c["attention_output_gate"] else 1
        w += [("wq", (D, gate * H * hd)), ("wk", (D, Hkv * hd)), ("wo", (H * hv, D))]
        if not (letter == "G" and c["share_kv_projections"]):  # (Gemma 4's global layers: K is V)
            w += [("wv", (D, Hkv * hv))]
    gated = len(c["mlp_activations"]) == 2
    r = c["gated_norm_rank"]  # A.X K2's gated norms: the input norm's, and the FFN's on a MoE layer
    for norm in (["input"] if letter != "-" else []) + (["ffn"] if ffn and moe else []):
        if r:
            w += [(f"{norm}_norm_gate.fc1", (D, r)), (f"{norm}_norm_gate.fc2", (r, D))]
    if not ffn:
        pass
    elif moe:
        E, k, S, F = c["num_experts"], c["num_experts_per_tok"], c["shared_experts"], c["moe_mlp_dim"]
        FS = c["shared_expert_mlp_dim"] or F
        w += [("router", (D, E))]
        X = c["moe_latent_size"] or D  # a latent MoE's experts take and give latent vectors (NemotronHMoE)
        if c["moe_latent_size"]:
            w += [("fc1_latent_proj", (D, X)), ("fc2_latent_proj", (X, D))]
        for e in range(k if active else E):
            w += [(f"expert{e}.up", (X, F)), (f"expert{e}.down", (F, X))] + ([(f"expert{e}.gate", (X, F))] if gated else [])
        for s in range(S):
            w += [(f"shared{s}.up", (D, FS)), (f"shared{s}.down", (FS, D))] + ([(f"shared{s}.gate", (D, FS))] if gated else [])
        if c["shared_expert_gate"]:
            w += [("shared_gate", (D, 1))]
    else:
        F = c["mlp_dim"]
        w += [("up", (D, F)), ("down", (F, D))] + ([("gate", (D, F))] if gated else [])
    return w


def indexer_weights(c):
    D, n, hd = c["emb_dim"], c["index_n_heads"], c["index_head_dim"]
    if c["attention_type"] == "compressed":  # its keys come from its own overlapping compressor
        return [("idx_wq_b", (c["q_lora_rank"], n * hd)), ("idx_weights_proj", (D, n)),
                ("idx_compressor.wkv", (D, 2 * hd)), ("idx_compressor.wgate", (D, 2 * hd))]
    return [("idx_wq", (c["q_lora_rank"] or D, n * hd)), ("idx_wk", (D, hd)), ("idx_w", (D, n))]


def flops(weights):
    return sum(2 * math.prod(shape) for _, shape in weights)


def golden_train(c, tokens=T):
    """Train-step FLOPs of one sequence of T tokens: 3x forward for everything but the indexer, which gets no
    gradient with indexer_loss_scaling_factor == 0 (1x)."""
    from maxflops.features.layer_loops import layer_order
    from maxflops.plan import layer_widths

    pattern, N = c["attention_layer_pattern"], c["num_decoder_layers"]
    learn = attn = 0
    layers = []
    side_pattern = c["parallel_layer_pattern"]
    own = layer_widths(c) if c["layer_widths"] else [{}] * N
    views = []  # each entry's config: a decoder layer's own widths (layer_widths); MTP modules the config's
    config = c
    # each pass of a looped block runs its layers again (layer_loops)
    for l, _ in (layer_order(c) if c["layer_loops"] else [(l, 1) for l in range(N)]):
        views.append({**config, **own[l]})
        letter = pattern[l % len(pattern)]
        moe = ffn_of(c, l)
        # GLM-5.2 index reuse written out as its published schedule: layers 1, 2, 3, then every 4th.
        own_index = c["index_topk_freq"] == 1 or (l + 1) <= c["index_skip_offset"] or \
            (l + 1 - c["index_skip_offset"]) % c["index_topk_freq"] == 0
        layers.append((letter, moe, own_index))
        if side_pattern and side_pattern[l % len(side_pattern)] != "-":  # a mixer beside it: its own weights
            layers.insert(len(layers) - 1, (side_pattern[l % len(side_pattern)], None, True))
            views.append(views[-1])
    if c["mtp_ffn_layer_pattern"]:  # a hybrid's MTP modules: each its own layers (Megatron's pattern after '/')
        shapes = {"E": "moe", "F": "dense", "-": None}
        for _ in range(c["mtp_num_layers"]):
            layers += [(m, shapes[f], True) + (("mtp",) if i == 0 else ())
                       for i, (m, f) in enumerate(zip(c["mtp_layer_pattern"], c["mtp_ffn_layer_pattern"]))]
    else:  # each module a copy of the last layer
        layers += [(layers[-1][0], layers[-1][1], True, "mtp")] * c["mtp_num_layers"]
    views += [config] * (len(layers) - len(views))
    for entry, c in zip(layers, views):
        letter, ffn, own_index = entry[:3]
        learn += 3 * flops(layer_weights(c, letter, ffn == "moe", own_index, ffn=ffn is not None)) * tokens
        if len(entry) == 4:  # an MTP module: its eh projection and its own head
            learn += 3 * flops([("eh", (2 * c["emb_dim"], c["emb_dim"])), ("head", (c["emb_dim"], c["vocab_size"]))]) * tokens
        if letter == "-":
            continue
        if letter == "M":
            H, P, N, G, K = (c["mamba_num_heads"], c["mamba_head_dim"], c["mamba_state_dim"], c["mamba_n_groups"],
                             c["mamba_conv_kernel"])
            taps = int(np.minimum(np.arange(1, tokens + 1), K).sum())  # non-padding taps of a causal conv
            learn += 3 * 2 * (H * P + 2 * G * N) * taps
            attn += 3 * 2 * H * P * N * tokens  # the state read y = h C per head, channel and state element
        elif letter == "A":
            E, N, K = c["mamba1_inner_dim"], c["mamba1_state_dim"], c["mamba1_conv_kernel"]
            taps = int(np.minimum(np.arange(1, tokens + 1), K).sum())  # non-padding taps of a causal conv
            learn += 3 * 2 * E * taps
            attn += 3 * 2 * E * N * tokens  # the state read y = h C per channel and state element
        elif letter == "N":
            H, d = c["lightning_num_heads"] or c["num_query_heads"], c["lightning_head_dim"] or c["head_dim"]
            attn += 3 * 2 * d * d * H * tokens  # the state read q S per head
        elif letter == "K":
            H, d, K = c["kda_num_heads"], c["kda_head_dim"], c["kda_conv_kernel"]
            taps = int(np.minimum(np.arange(1, tokens + 1), K).sum())  # non-padding taps of a causal conv
            learn += 3 * 2 * 3 * H * d * taps
            attn += 3 * (2 * 2 * d * d) * H * tokens  # the state reads S^T k and S^T q per head
        elif letter == "D":
            nk, nv, dk, dv, K = (c["gdn_num_key_heads"], c["gdn_num_value_heads"], c["gdn_key_head_dim"],
                                 c["gdn_value_head_dim"], c["gdn_conv_kernel_dim"])
            taps = int(np.minimum(np.arange(1, tokens + 1), K).sum())  # non-padding taps of a causal conv
            learn += 3 * 2 * (2 * nk * dk + nv * dv) * taps
            attn += 3 * (2 * 2 * dk * dv) * nv * tokens  # the state reads S^T k and S^T q per value head
        else:
            if c["attention_type"] == "mla":
                dqk, dv = c["qk_nope_head_dim"] + c["qk_rope_head_dim"], c["v_head_dim"]
            else:
                dqk = c["global_head_dim"] or c["head_dim"] if letter == "G" else c["head_dim"]
                dv = c["value_head_dim"] or dqk
            if c["attention_type"] == "compressed":
                dqk = dv = c["head_dim"]
            attn += 3 * 2 * c["num_query_heads"] * (dqk + dv) * mask_pairs(letter, c, tokens)
            if c["mhc_expansion_rate"] > 1:  # the mHC contractions (the projections are weights above): pre, residual
                G_hc, D = c["mhc_expansion_rate"], c["emb_dim"]
                learn += 3 * 2 * (2 * G_hc * D + 2 * G_hc * G_hc * D) * tokens
            if c["attention_type"] == "compressed" and letter == "S" and c["use_sparse_indexer"]:
                learn += 1 * flops(indexer_weights(c)) * tokens
                n, hd = c["index_n_heads"], c["index_head_dim"]
                attn += 1 * (2 * n * hd + 2 * n) * compressed_scored(c, tokens)
            elif letter == "B":  # MiniMax's indexer: q (n heads) and one key per token, every causal pair, 1x
                n, hd = c["index_n_heads"], c["index_head_dim"]
                learn += 1 * flops([("idx_wq", (c["emb_dim"], n * hd)), ("idx_wk", (c["emb_dim"], hd))]) * tokens
                attn += 1 * 2 * n * hd * (tokens * (tokens + 1) // 2)
            elif c["use_sparse_indexer"] and letter == "G" and own_index:
                learn += 1 * flops(indexer_weights(c)) * tokens
                n, hd = c["index_n_heads"], c["index_head_dim"]
                attn += 1 * (2 * n * hd + 2 * n) * (tokens * (tokens + 1) // 2)
    c = config
    if c["attn_res_block_size"]:  # the bank of snapshots layer by layer (Megatron-Bridge's Kimi K3 loop): per row
        S, bank, rows = c["attn_res_block_size"], 0, 0  # a D -> 1 score and its share of the weighted sum
        for l in range(N):
            rows += bank + 1 if bank else 0  # the mixer's input (layer 0's: the embedding itself)
            bank += l % S == 0
            rows += bank + 1  # the FFN's input
        rows += bank + 1  # the output
        learn += 3 * 4 * c["emb_dim"] * rows * tokens
    learn += 3 * flops([("head", (c["emb_dim"], c["vocab_size"]))]) * tokens
    if c["mhc_hyper_head"]:  # hc_head_fn [G, G*D] (the weighted sum of the streams is elementwise)
        G_hc, D = c["mhc_expansion_rate"], c["emb_dim"]
        learn += 3 * flops([("hc_head_fn", (G_hc * D, G_hc))]) * tokens
    return learn, attn


def parameter_count(c, tied: bool, indexer: bool = True, state: bool = True) -> int:
    """Every weight of a validated config's decoder layers and head (no MTP modules), from the weight shapes: the
    matrices one token multiplies, the conv kernels and the state-space parameters no matmul counts (unless
    ``state`` is False); embeddings once more unless ``tied``; the indexers' weights unless ``indexer`` is False."""
    from maxflops.plan import layer_widths

    pattern = c["attention_layer_pattern"]
    total = 0
    own = layer_widths(c) if c["layer_widths"] else [{}] * c["num_decoder_layers"]
    config = c
    for l in range(c["num_decoder_layers"]):
        c = {**config, **own[l]}  # the layer's own widths (layer_widths)
        ffn = ffn_of(c, l)
        letter = pattern[l % len(pattern)]
        total += sum(math.prod(s) for _, s in layer_weights(c, letter, ffn == "moe", True, active=False,
                                                             ffn=ffn is not None))
        side = c["parallel_layer_pattern"][l % len(c["parallel_layer_pattern"])] if c["parallel_layer_pattern"] else "-"
        total += sum(math.prod(s) for _, s in layer_weights(c, side, False, True, ffn=False))
        if side == "M" and state:
            total += (c["mamba_num_heads"] * c["mamba_head_dim"] + 2 * c["mamba_n_groups"] * c["mamba_state_dim"]) \
                * c["mamba_conv_kernel"]
        if letter == "A" and state:  # the conv kernel over x, A_log (inner x state) and D (inner): weights, no matmul
            E = c["mamba1_inner_dim"]
            total += E * c["mamba1_conv_kernel"] + E * c["mamba1_state_dim"] + E
        if letter == "K" and state:  # the conv kernel over q, k, v, and per head A_log; per channel dt_bias
            total += 3 * c["kda_num_heads"] * c["kda_head_dim"] * c["kda_conv_kernel"]
        if letter == "M" and state:  # the conv kernel (d_in + 2GN channels x K taps), no matmul but weights
            total += (c["mamba_num_heads"] * c["mamba_head_dim"] + 2 * c["mamba_n_groups"] * c["mamba_state_dim"]) \
                * c["mamba_conv_kernel"]
        if c["use_sparse_indexer"] and letter in "GS" and indexer:
            total += sum(math.prod(s) for _, s in indexer_weights(c))
        if letter == "B" and indexer:  # MiniMax's indexer: q and one key
            total += c["emb_dim"] * (c["index_n_heads"] + 1) * c["index_head_dim"]
    c = config
    total += c["vocab_size"] * c["emb_dim"] * (1 if tied else 2)
    if c["mhc_hyper_head"]:
        total += c["mhc_expansion_rate"] ** 2 * c["emb_dim"]  # hc_head_fn
    return total
