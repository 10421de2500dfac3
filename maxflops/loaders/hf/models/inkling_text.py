"""Inkling's text model: InklingTextConfig, modeling_inkling; GQA layers, full ('hybrid') or sliding
('hybrid_sliding', with their own heads and width: swa_*), each with Inkling's relative-position logits (r_proj
D -> heads x d_rel, and the heads' vectors against a bank of profiles over rel_extent, or the window on a sliding
layer), causal depthwise convs over its keys and values, and a causal depthwise conv over the attention's output and
over the FFN's (conv_kernel_size taps, which the checkpoints call sconv_kernel_size); a MoE whose router scores the
shared experts too, or a dense MLP (mlp_layer_types). The MTP modules (num_mtp_layers; transformers builds none) are
counted in training."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader, fit_ffn, fit_pattern
from .. import parts
from ..house import HFType

# InklingTextConfig (attribute map: num_local_experts, sliding_window, sconv_kernel_size name its fields)
DEFAULTS = {
    "vocab_size": 201024, "hidden_size": 6144, "num_hidden_layers": 66, "num_attention_heads": 64,
    "num_key_value_heads": 8, "head_dim": 128, "swa_num_attention_heads": 64, "swa_num_key_value_heads": 16,
    "swa_head_dim": 128, "sliding_window_size": 512, "d_rel": 16, "rel_extent": 1024, "conv_kernel_size": 4,
    "intermediate_size": 24576, "hidden_act": "silu", "moe_intermediate_size": 3072, "n_routed_experts": 256,
    "num_experts_per_tok": 6, "n_shared_experts": 2,
}


def spans(layers: list) -> str:
    """0-based layers as a layer_widths span: '0-4+6-10'."""
    out, start = [], None
    for i, l in enumerate(layers):
        if start is None:
            start = l
        if i + 1 == len(layers) or layers[i + 1] != l + 1:
            out.append(f"{start}-{l}" if l != start else f"{l}")
            start = None
    return "+".join(out)


def read_attention(r: Reader, d, o: dict, n: int) -> list:
    """The attention layers both Inkling generations share: full ('hybrid') and sliding ('hybrid_sliding') GQA layers
    with the sliding ones' own heads and width, the relative-position logits and the convs' taps (into ``o``); the
    layers' letters."""
    # the layers: layer_types, else local_layer_ids (sliding), else sliding unless (i + 1) % 6 == 0
    if parts.given(r, "layer_types"):
        letters = parts.layer_types(r, n, {"hybrid": "G", "hybrid_sliding": "L"})
        key = "layer_types"
        r.ignore("local_layer_ids", "superseded by layer_types")
    elif parts.given(r, "local_layer_ids"):
        local = set(r.list("local_layer_ids", int))
        letters, key = ["L" if i in local else "G" for i in range(n)], "local_layer_ids"
    else:
        letters, key = ["L" if (i + 1) % 6 else "G" for i in range(n)], "num_hidden_layers"
    o["attention_layer_pattern"] = fit_pattern(letters, r, key)
    sliding = [i for i, x in enumerate(letters) if x == "L"]
    if sliding:
        o["sliding_window_size"] = parts.alias(r, "sliding_window_size", "sliding_window", d("sliding_window_size"),
                                               minimum=1)
        rules = []
        for own, base in (("swa_num_attention_heads", "num_query_heads"), ("swa_num_key_value_heads", "num_kv_heads"),
                          ("swa_head_dim", "head_dim")):
            value = r.int(own, d(own), minimum=1)
            if value != o[base]:  # the sliding layers' own widths
                rules.append(f"{base}@{spans(sliding)}={value}")
        if rules:
            o["layer_widths"] = tuple(rules)
    else:
        for key in ("sliding_window_size", "sliding_window", "swa_num_attention_heads", "swa_num_key_value_heads",
                    "swa_head_dim"):
            r.ignore(key, "unused: no sliding layers")
    o["relative_logits_dim"] = r.int("d_rel", d("d_rel"), minimum=1)
    if "G" in letters:
        o["relative_logits_extent"] = r.int("rel_extent", d("rel_extent"), minimum=1)
    else:
        r.ignore("rel_extent", "unused: no full layers (a sliding layer's logits cover its window)")
    o["kv_conv_kernel"] = o["residual_conv_kernel"] = parts.alias(r, "conv_kernel_size", "sconv_kernel_size",
                                                                 d("conv_kernel_size"), minimum=1)
    return letters


def _read(r: Reader, d) -> dict:
    n = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    o = {"num_decoder_layers": n, "emb_dim": r.int("hidden_size", d("hidden_size"), minimum=1),
         "vocab_size": r.int("vocab_size", d("vocab_size"), minimum=1),
         "num_query_heads": r.int("num_attention_heads", d("num_attention_heads"), minimum=1),
         "num_kv_heads": r.int("num_key_value_heads", d("num_key_value_heads"), minimum=1),
         "head_dim": r.int("head_dim", d("head_dim"), minimum=1)}
    act = r.activation("hidden_act", d("hidden_act"))
    o["mlp_activations"] = (act, "linear")
    letters = read_attention(r, d, o, n)
    # the FFN: a checkpoint's dense_intermediate_size makes intermediate_size the experts' width
    if parts.given(r, "mlp_layer_types"):
        is_moe = parts.per_layer(r, "mlp_layer_types", n, {"dense": False, "sparse": True})
        r.ignore("dense_mlp_idx", "superseded by mlp_layer_types")
    else:
        k = r.int("dense_mlp_idx", 0, minimum=0)
        is_moe = [l >= k for l in range(n)]
    if parts.given(r, "dense_intermediate_size"):
        dense, experts = r.int("dense_intermediate_size", minimum=1), r.int("intermediate_size", minimum=1)
        r.ignore("moe_intermediate_size", "superseded: with dense_intermediate_size, intermediate_size is the "
                                          "experts' width")
    else:
        dense = r.int("intermediate_size", d("intermediate_size"), minimum=1)
        experts = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    if any(is_moe):
        o["num_experts"] = parts.alias(r, "n_routed_experts", "num_local_experts", d("n_routed_experts"), minimum=1)
        o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
        o["moe_mlp_dim"] = experts
        o["shared_experts"] = r.int("n_shared_experts", d("n_shared_experts"), minimum=0)
        if o["shared_experts"]:
            o["moe_router_shared"] = True  # InklingTopkRouter: D -> routed + shared experts
        if r.has("shared_expert_sink") and not r.bool("shared_expert_sink"):
            raise r.fail("shared_expert_sink", "false: transformers' InklingTopkRouter always scores the shared "
                                               "experts (a router without them is not the model it builds)")
        r.ignore("shared_expert_sink", NO_EFFECT + " (true: the router scores the shared experts, as built)")
    if not all(is_moe):
        o["mlp_dim"] = dense
    if any(is_moe):
        k_dense, step = fit_ffn(is_moe, r, "mlp_layer_types")
        if k_dense:
            o["first_num_dense_layers"] = k_dense
        if step > 1:
            o["interleave_moe_layer_step"] = step
    mtp = r.int("num_mtp_layers", None, minimum=0, none_ok=True) if r.has("num_mtp_layers") else None
    if mtp:
        o["mtp_num_layers"] = mtp
        local = set(r.list("mtp_local_layer_ids", int, [], none_ok=True) or [])
        if local:
            o["mtp_layer_pattern"] = "".join("L" if k in local else "G" for k in range(mtp))
    else:
        for key in ("mtp_local_layer_ids", "chain_hidden_post_norm", "mtp_hidden_states_first"):
            r.ignore(key, "unused: no MTP layers")
    for key in ("log_scaling_n_floor", "log_scaling_alpha", "route_scale", "logits_mup_width_multiplier",
                "embedding_multiplier", "rms_norm_eps_moe_gate", "number_of_conv_states", "chain_hidden_post_norm",
                "mtp_hidden_states_first"):
        r.ignore(key, NO_EFFECT + " (scales, norms' epsilons, the cache's conv-state count: no matmul)")
    r.ignore("unpadded_vocab_size", NO_EFFECT + " (the head projects to vocab_size; the logits past it are dropped)")
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read)
