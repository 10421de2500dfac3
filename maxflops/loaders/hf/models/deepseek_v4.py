"""DeepSeek-V4: DeepseekV4Config, modeling_deepseek_v4; sliding, compressed sparse (CSA) and heavily compressed (HCA)
attention layers, mHC streams, every layer MoE with one shared expert."""

from __future__ import annotations

from typing import Any

from ...maxtext.model import maxtext_quirks
from ...reader import NO_EFFECT, Reader
from .. import parts
from ..house import HFType

# DeepseekV4Config (DeepSeek-V4-Flash's values)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 129280, "hidden_size": 4096, "moe_intermediate_size": 2048, "num_hidden_layers": 43,
    "num_attention_heads": 64, "head_dim": 512, "q_lora_rank": 1024, "num_experts_per_tok": 6,
    "n_routed_experts": 256, "hidden_act": "silu", "hc_mult": 4, "sliding_window": 128, "o_groups": 8,
    "o_lora_rank": 1024, "index_n_heads": 64, "index_head_dim": 128, "index_topk": 512,
    "num_nextn_predict_layers": 1,
}

# DeepseekV4Config: per-layer attention types, and the legacy per-layer compress ratios of a checkpoint's file.
_V4_TYPES = {"sliding_attention": "L", "compressed_sparse_attention": "S", "heavily_compressed_attention": "H"}
_V4_RATIOS = {0: "L", 4: "S", 128: "H"}


def _read(r: Reader, d) -> dict:
    """DeepseekV4Config -> schema overrides, as modeling_deepseek_v4 builds the model: one key/value head (the
    attention hard-codes it), one shared expert (n_shared_experts is not read), every layer MoE (hash-routed layers
    still run the router matmul), mHC streams collapsed by the hyper head. Layer types come from layer_types, else
    from the checkpoint's compress_ratios (0 sliding, 4 CSA, 128 HCA; its entries past num_hidden_layers are the MTP
    modules). The MTP modules (num_nextn_predict_layers; transformers does not build them) are window-only layers,
    as the checkpoint's mtp weights have no compressor."""
    # the experts' storage type (DeepseekV4Config moves it into quantization_config): decode bytes, not FLOPs
    r.ignore("expert_dtype", NO_EFFECT + ": the experts' storage type (DeepseekV4Config moves it into "
                             "quantization_config; decode bytes read it with that)")
    o: dict[str, Any] = {"attention_type": "compressed"}
    n = o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    o["num_query_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
    o["num_kv_heads"] = 1
    r.ignore("num_key_value_heads", "unused: DeepseekV4Attention has one key/value head whatever this says")
    o["mlp_activations"] = (r.activation("hidden_act", d("hidden_act")), "linear")
    for key in ("head_dim", "q_lora_rank", "o_groups", "o_lora_rank"):
        o[key] = r.int(key, d(key), minimum=1)
    for key in ("qk_rope_head_dim", "partial_rotary_factor"):
        r.ignore(key, NO_EFFECT + ": the RoPE share of head_dim")
    o["num_experts"] = r.int("n_routed_experts", d("n_routed_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    o["shared_experts"] = 1
    r.ignore("n_shared_experts", "unused: DeepseekV4SparseMoeBlock always has one shared expert")
    if parts.given(r, "mlp_layer_types"):
        types = r.list("mlp_layer_types", str)
        if len(types) != n or any(t not in ("moe", "hash_moe") for t in types):
            raise r.fail("mlp_layer_types", f"expected {n} entries, each 'moe' or 'hash_moe'")
        r.ignored[r.name("mlp_layer_types")] = (NO_EFFECT + ": hash-routed layers ('hash_moe') still run the router "
                                                "matmul (its scores weigh the experts)")
    r.ignore("num_hash_layers", NO_EFFECT + ": hash-routed layers still run the router matmul")
    rates = {"S": 4, "H": 128}
    if parts.given(r, "compress_rates"):
        given = r.mapping("compress_rates")
        for name, letter in (("compressed_sparse_attention", "S"), ("heavily_compressed_attention", "H")):
            value = given.get(name, rates[letter])
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise r.fail("compress_rates", f"{name}: expected a positive integer", value)
            rates[letter] = value
    for key, letter in (("compress_rate_csa", "S"), ("compress_rate_hca", "H")):  # the legacy names
        if r.has(key):
            rates[letter] = r.int(key, minimum=1)
    mtp = r.int("num_nextn_predict_layers", d("num_nextn_predict_layers"), minimum=0)
    mtp_letters = ""
    if r.has("layer_types") and r.data["layer_types"] is not None:
        types = r.list("layer_types", str)
        if len(types) != n:
            raise r.fail("layer_types", f"has {len(types)} entries for num_hidden_layers={n}")
        bad = [t for t in types if t not in _V4_TYPES]
        if bad:
            raise r.fail("layer_types", f"layer type {bad[0]!r} is not one of {', '.join(_V4_TYPES)}")
        letters = "".join(_V4_TYPES[t] for t in types)
        if r.has("compress_ratios"):
            r.ignore("compress_ratios", "superseded by layer_types")
    elif r.has("compress_ratios"):
        ratios = r.list("compress_ratios", int)
        if len(ratios) < n:
            raise r.fail("compress_ratios", f"has {len(ratios)} entries for num_hidden_layers={n}")
        bad = [m for m in ratios if m not in _V4_RATIOS]
        if bad:  # DeepseekV4Config maps the legacy list by these three values (the rates come from compress_rates)
            raise r.fail("compress_ratios", f"ratio {bad[0]} is none of 0 (sliding window), 4 (CSA), 128 (HCA)",
                         ratios)
        letters = "".join(_V4_RATIOS[m] for m in ratios[:n])
        mtp_letters = "".join(_V4_RATIOS[m] for m in ratios[n:])  # the checkpoint's MTP modules
    else:
        raise r.fail("layer_types", "DeepSeek-V4 needs its per-layer attention types (layer_types or "
                                    "compress_ratios); DeepseekV4Config's own default matches no published model")
    if mtp:
        o["mtp_num_layers"] = mtp
    # the MTP modules' mixers: window-only unless the checkpoint's ratios say (kept when the count is overridden)
    o["mtp_layer_pattern"] = mtp_letters or "L"
    o["attention_layer_pattern"] = letters
    letters += mtp_letters
    if "S" in letters:
        o["csa_compress_ratio"] = rates["S"]
    if "H" in letters:
        o["hca_compress_ratio"] = rates["H"]
    o["sliding_window_size"] = r.int("sliding_window", d("sliding_window"), minimum=1)
    if "S" in letters:
        o["use_sparse_indexer"] = True
        for key in ("index_n_heads", "index_head_dim", "index_topk"):
            o[key] = r.int(key, d(key), minimum=1)
    else:
        for key in ("index_n_heads", "index_head_dim", "index_topk"):
            r.ignore(key, "unused: no compressed sparse attention layers")
    o["mhc_expansion_rate"] = r.int("hc_mult", d("hc_mult"), minimum=1)
    o["mhc_hyper_head"] = o["mhc_expansion_rate"] > 1
    o["convention_quirks"] = maxtext_quirks("deepseek4")  # how MaxText's function counts DeepSeek-V4
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read)
