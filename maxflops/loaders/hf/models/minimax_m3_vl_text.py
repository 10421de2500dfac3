"""MiniMax-M3's text model: MiniMaxM3VLTextConfig, modeling_minimax_m3_vl; GQA layers, dense ('full_attention') or
MiniMax sparse attention ('minimax_m3_sparse': a Lightning indexer picks whole key blocks, maxflops' 'B' layers); a
dense MLP (dense_intermediate_size) or a MoE (num_local_experts of intermediate_size, top num_experts_per_tok, one
shared expert of shared_intermediate_size) per layer. Read as the class reads MiniMax's own checkpoint too: its
legacy sparse_attention_config and moe_layer_freq become the per-layer types, its sparse_* names the index_* fields;
the checkpoint's keys the class does not read are accepted where the model they describe is the one transformers
builds, and refused by name where it is not."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader
from .. import parts
from ..house import HFType

# MiniMaxM3VLTextConfig
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 200064, "hidden_size": 6144, "intermediate_size": 3072, "num_hidden_layers": 60,
    "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "num_experts_per_tok": 4,
    "num_local_experts": 128, "dense_intermediate_size": 12288, "shared_intermediate_size": 3072,
    "index_n_heads": 4, "index_head_dim": 128, "index_block_size": 128, "index_topk_blocks": 16,
    "index_local_blocks": 1,
}

# the class's field <- the checkpoint's sparse_attention_config key (the dict wins) -> maxflops' key
INDEX_FIELDS = (("index_n_heads", "sparse_num_index_heads", "index_n_heads"),
                ("index_head_dim", "sparse_index_dim", "index_head_dim"),
                ("index_block_size", "sparse_block_size", "msa_block_size"),
                ("index_topk_blocks", "sparse_topk_blocks", "msa_topk_blocks"),
                ("index_local_blocks", "sparse_local_block", "msa_local_blocks"))
# keys of the dict the class does not read, each checked below (the rest are refused)
_CHECKED = ("sparse_attention_freq", "use_sparse_attention", "sparse_init_block", "sparse_score_type",
            "sparse_disable_index_value")


def sparse_config(r: Reader) -> dict:
    """The checkpoint's sparse_attention_config ({} when absent or null), its keys checked by name."""
    if not parts.given(r, "sparse_attention_config"):
        return {}
    sac = dict(r.mapping("sparse_attention_config"))
    legacy = {key for _, key, _ in INDEX_FIELDS}
    for key in sac:
        if key not in legacy and key not in _CHECKED:
            raise r.fail("sparse_attention_config", f"key {key!r} ({sac[key]!r}) is not read by transformers' "
                                                    "MiniMaxM3VLTextConfig and not modelled here")
    return sac


def _flags(r: Reader, sac: dict, key: str, n: int) -> list:
    flags = sac[key]
    if not isinstance(flags, list) or len(flags) != n or any(type(f) not in (int, bool) for f in flags):
        raise r.fail("sparse_attention_config", f"{key} must list 0 or 1 for each of the {n} layers, got {flags!r}")
    return [bool(f) for f in flags]


def layers(r: Reader, d, n: int):
    """layer_types, else the checkpoint's sparse_attention_freq (1: a sparse layer), else every layer full attention.
    Where sparse layers exist, use_sparse_attention false is refused (transformers builds them, MiniMax's serving code
    does not), and so is an index-value branch on one (sparse_disable_index_value 0: transformers builds none)."""
    sac = sparse_config(r)
    if parts.given(r, "layer_types"):
        letters, key = parts.layer_types(r, n, {"full_attention": "G", "minimax_m3_sparse": "B"}), "layer_types"
    elif "sparse_attention_freq" in sac:
        letters, key = ["B" if f else "G" for f in _flags(r, sac, "sparse_attention_freq", n)], \
            "sparse_attention_config"
    else:
        letters, key = ["G"] * n, "num_hidden_layers"
    if "B" in letters:
        if sac.get("use_sparse_attention", True) is not True:
            raise r.fail("sparse_attention_config", f"use_sparse_attention={sac['use_sparse_attention']!r} with "
                                                    "sparse layers: transformers builds them, MiniMax's serving code "
                                                    "runs them dense; drop the key or the sparse layers")
        if "sparse_disable_index_value" in sac:
            disabled = _flags(r, sac, "sparse_disable_index_value", n)
            on = [i for i, (x, off) in enumerate(zip(letters, disabled)) if x == "B" and not off]
            if on:
                raise r.fail("sparse_attention_config", f"sparse_disable_index_value is 0 on sparse layer(s) {on}: "
                                                        "an index-value branch, which transformers does not build "
                                                        "and maxflops does not model")
    return letters, key


def msa(r: Reader, d, o: dict, pattern: str) -> None:
    """The indexer's widths and the blocks: sparse_attention_config's sparse_* keys, else the class's index_*
    fields. sparse_init_block (blocks from the start always kept) and sparse_score_type (the block pooling) change
    which blocks are picked, not how many keys each query attends."""
    sac = sparse_config(r)
    used = "B" in pattern
    for field, legacy, target in INDEX_FIELDS:
        if legacy in sac:
            value = sac[legacy]
            if type(value) is not int or value < 1:
                raise r.fail("sparse_attention_config", f"{legacy} must be a positive integer, got {value!r}")
            if r.has(field):
                r.raw(field, record=False)
                r.ignore(field, f"superseded by sparse_attention_config.{legacy}")
        elif used:
            value = r.int(field, d(field), minimum=1)
        else:
            r.ignore(field, "unused: no sparse (minimax_m3_sparse) layers")
            continue
        if used:
            o[target] = value
    if used and not o["msa_local_blocks"] <= o["msa_topk_blocks"]:
        key = "sparse_attention_config" if "sparse_local_block" in sac else "index_local_blocks"
        raise r.fail(key, f"{o['msa_local_blocks']} local blocks forced among {o['msa_topk_blocks']} picked: the "
                          "query's own block may be left out, and the keys attended then depend on the scores")
    init = sac.get("sparse_init_block", 0)
    if type(init) is not int or init < 0 or used and init + o["msa_local_blocks"] > o["msa_topk_blocks"]:
        raise r.fail("sparse_attention_config", f"sparse_init_block must be a whole number of blocks that, with the "
                                                f"local ones, fit among the picked ones, got {init!r}")


def moe(r: Reader, d, o: dict, n: int):
    """num_local_experts (its attribute-map alias num_experts) of intermediate_size, top num_experts_per_tok, and one
    shared expert of shared_intermediate_size (built on every MoE layer); MoE on the layers mlp_layer_types calls
    sparse, else where the checkpoint's moe_layer_freq is 1, else on every layer."""
    o["num_experts"] = parts.alias(r, "num_local_experts", "num_experts", d("num_local_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    width = o["moe_mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
    shared = r.int("shared_intermediate_size", d("shared_intermediate_size"), minimum=1)
    o["shared_experts"] = 1
    if shared != width:
        o["shared_expert_mlp_dim"] = shared
    if r.has("n_shared_experts"):  # MiniMax's checkpoint key; the class builds exactly one shared expert
        if r.int("n_shared_experts", record=False) != 1:
            raise r.fail("n_shared_experts", "transformers' MiniMax-M3 builds one shared expert "
                                             "(shared_intermediate_size wide)")
        r.ignore("n_shared_experts", NO_EFFECT + " (1: the one shared expert transformers builds)")
    if r.has("moe_intermediate_size"):  # the checkpoint's; the class reads intermediate_size for the experts
        if r.int("moe_intermediate_size", record=False) != width:
            raise r.fail("moe_intermediate_size", f"disagrees with intermediate_size={width}, the experts' width "
                                                  "transformers' MiniMax-M3 reads")
        r.ignore("moe_intermediate_size", "superseded: same as intermediate_size (the experts' width)")
    if parts.given(r, "mlp_layer_types"):
        is_moe, key = parts.per_layer(r, "mlp_layer_types", n, {"dense": False, "sparse": True}), "mlp_layer_types"
        r.ignore("moe_layer_freq", "superseded by mlp_layer_types")
    elif parts.given(r, "moe_layer_freq"):
        freq = r.list("moe_layer_freq", int)
        if len(freq) != n:
            raise r.fail("moe_layer_freq", f"has {len(freq)} entries for num_hidden_layers={n}")
        is_moe, key = [bool(f) for f in freq], "moe_layer_freq"
    else:
        is_moe, key = [True] * n, "num_hidden_layers"
    if r.has("first_k_dense_replace"):  # the checkpoint's; the class reads the per-layer list
        k = r.int("first_k_dense_replace", record=False)
        if is_moe != [l >= k for l in range(n)]:
            raise r.fail("first_k_dense_replace", f"disagrees with {key}, which transformers' MiniMax-M3 reads")
        r.ignore("first_k_dense_replace", f"superseded: agrees with {key}")
    return is_moe, key


def checkpoint(r: Reader, d, o: dict, pattern: str) -> None:
    """MiniMax's checkpoint keys the class keeps but does not read: an output gate (refused if set: transformers
    builds none), the MTP modules (num_mtp_modules, each one transformer layer; transformers builds none, maxflops
    counts them in training as MiniMax-M2's reader does), and the norm and routing kinds (no FLOPs effect)."""
    if r.has("attention_output_gate"):
        if r.bool("attention_output_gate", record=False):
            raise r.fail("attention_output_gate", "an attention output gate is not built by transformers' MiniMax-M3")
        r.ignore("attention_output_gate", NO_EFFECT + " (false: no gate)")
    for key in ("qk_norm_type", "use_gemma_norm", "use_routing_bias"):
        if r.has(key):
            r.ignore(key, NO_EFFECT + " (the q/k norm's kind, the norms' weight offset, the router's bias)")
    if r.has("use_mtp") and not r.bool("use_mtp"):
        for key in ("num_mtp_modules", "mtp_transformer_layers", "num_nextn_predict_layers"):
            r.ignore(key, "unused: use_mtp is false")
        return
    if r.has("num_mtp_modules"):
        if r.int("mtp_transformer_layers", 1, minimum=1, record=False) != 1:
            raise r.fail("mtp_transformer_layers", "MTP modules of more than one transformer layer are not modelled")
        o["mtp_num_layers"] = r.int("num_mtp_modules", minimum=0)
        r.ignore("num_nextn_predict_layers", "a serving key (the MTP modules a speculative decoder loads); the "
                                             "checkpoint's modules, counted in training, are num_mtp_modules")
    elif r.has("num_nextn_predict_layers"):
        o["mtp_num_layers"] = r.int("num_nextn_predict_layers", minimum=0)


TYPE = HFType(defaults=DEFAULTS, fixed_activation="silu", ffn=moe, dense_key="dense_intermediate_size",
              layers=layers, extras=(msa, checkpoint))
