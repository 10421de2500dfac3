"""Kimi-Linear: KimiLinearConfig, modeling_kimi_linear; Kimi delta attention and MLA layers, DeepSeek-style MoE."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType

# KimiLinearConfig (saved names: num_experts, num_experts_per_token, num_shared_experts)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 163840, "hidden_size": 2304, "intermediate_size": 9216, "moe_intermediate_size": 1024,
    "num_hidden_layers": 27, "num_attention_heads": 32, "num_key_value_heads": 32, "num_shared_experts": 1,
    "kv_lora_rank": 512, "q_lora_rank": None, "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128,
    "num_experts_per_token": 8, "hidden_act": "silu", "num_experts": 256, "linear_head_dim": 128,
    "linear_num_heads": 32, "linear_conv_kernel_dim": 4,
}

# KimiLinearConfig reads these of the checkpoint's linear_attn_config (they win over its linear_* fields); a key of
# the dict it does not read is refused when it would change the FLOPs of the real model (e.g. a full-rank gate)
_KDA_KEYS = {"head_dim": "linear_head_dim", "num_heads": "linear_num_heads",
             "short_conv_kernel_size": "linear_conv_kernel_dim"}
_KDA_NO_EFFECT = {"gate_lower_bound"}  # a clamp of the forget gate: elementwise


def _linear_attn_config(r: Reader, own: tuple = ()) -> dict:
    """The checkpoint's linear_attn_config dict ({} when absent or null), its unread keys refused by name (``own``:
    keys a model type's own config class reads beside KimiLinearConfig's, Kimi K3's use_full_rank_gate)."""
    if not parts.given(r, "linear_attn_config"):
        if not r.has("linear_attn_config"):
            r.defaults[r.name("linear_attn_config")] = {}  # KimiLinearConfig's: the linear_* fields decide
        return {}
    lac = dict(r.mapping("linear_attn_config"))
    for key in lac:
        if key not in _KDA_KEYS and key not in ("full_attn_layers", "kda_layers") and key not in _KDA_NO_EFFECT \
                and key not in own:
            raise r.fail("linear_attn_config", f"key {key!r} ({lac[key]!r}) is not read by transformers' "
                                               "KimiLinearConfig and not modelled here")
    return lac


def layers(r: Reader, d, n: int, own: tuple = ()):
    """KimiLinearConfig's layer types: layer_types, else the checkpoint's 1-based full_attn_layers / kda_layers,
    else full attention at every 0-based layer i > 0 with i % 4 == 0 (Kimi delta attention elsewhere)."""
    kinds = {"full_attention": "G", "linear_attention": "K"}
    lac = _linear_attn_config(r, own)
    if parts.given(r, "layer_types"):
        types = r.list("layer_types", str)
        if len(types) != n or any(t not in kinds for t in types):
            raise r.fail("layer_types", f"expected {n} entries, each 'full_attention' or 'linear_attention'")
        return [kinds[t] for t in types], "layer_types"
    if "full_attn_layers" in lac and "kda_layers" in lac:
        full, kda = lac["full_attn_layers"], lac["kda_layers"]
        numbers = list(full) + list(kda)
        if any(type(x) is not int or not 1 <= x <= n for x in numbers) or sorted(numbers) != list(range(1, n + 1)):
            raise r.fail("linear_attn_config", f"full_attn_layers and kda_layers must number the layers 1..{n} once "
                                               "each between them")
        return ["G" if i + 1 in set(full) else "K" for i in range(n)], "linear_attn_config"
    return ["G" if i and i % 4 == 0 else "K" for i in range(n)], "num_hidden_layers"


def kda(r: Reader, d, o: dict, pattern: str, own: tuple = ()) -> dict:
    """The Kimi delta attention widths: linear_attn_config's, else the linear_* fields (both read by
    KimiLinearConfig, the dict winning). Its gates are low rank with rank head_dim (KimiLinearForgetGate, g_a_proj)."""
    used = "K" in pattern
    lac = _linear_attn_config(r, own)
    for sub, field in _KDA_KEYS.items():
        if sub in lac:
            value = lac[sub]
            if type(value) is not int or value < 1:
                raise r.fail("linear_attn_config", f"{sub} must be a positive integer, got {value!r}")
            if r.has(field):
                r.raw(field, record=False)
                r.ignore(field, f"superseded by linear_attn_config.{sub}")
        elif used:
            value = r.int(field, d(field), minimum=1)
        else:
            r.ignore(field, "unused: no Kimi delta attention layers")
            continue
        if used:
            o[{"head_dim": "kda_head_dim", "num_heads": "kda_num_heads",
               "short_conv_kernel_size": "kda_conv_kernel"}[sub]] = value
    return lac


def _moe(r: Reader, d, o: dict, n: int):
    """KimiLinearMoE: a sigmoid router over num_experts gated experts of moe_intermediate_size, top
    num_experts_per_token, plus one gated shared MLP of moe_intermediate_size x num_shared_experts; MoE on the
    layers mlp_layer_types calls sparse, else on every layer from first_k_dense_replace (absent: 1)."""
    o["num_experts"] = parts.alias(r, "num_experts", "num_local_experts", d("num_experts"), minimum=1)
    o["num_experts_per_tok"] = parts.alias(r, "num_experts_per_token", "num_experts_per_tok",
                                           d("num_experts_per_token"), minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    o["shared_experts"] = parts.alias(r, "num_shared_experts", "n_shared_experts", d("num_shared_experts"))
    r.ignore("moe_layer_freq", "not read by KimiLinearConfig (mlp_layer_types, else first_k_dense_replace)")
    if parts.given(r, "mlp_layer_types"):
        types = r.list("mlp_layer_types", str)
        if len(types) != n or any(t not in ("dense", "sparse") for t in types):
            raise r.fail("mlp_layer_types", f"expected {n} entries, each 'dense' or 'sparse'")
        r.ignore("first_k_dense_replace", "superseded by mlp_layer_types")
        return [t == "sparse" for t in types], "mlp_layer_types"
    k = r.int("first_k_dense_replace", 1)
    return [l >= k for l in range(n)], "first_k_dense_replace"


TYPE = HFType(defaults=DEFAULTS, attention=parts.mla(), ffn=_moe, layers=layers, extras=(kda,))
