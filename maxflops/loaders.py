"""Loaders: a MaxText model YAML or a Hugging Face ``config.json`` -> maxflops schema overrides.

    import maxflops
    from maxflops import loaders

    loaded = loaders.detect_and_load("config.json")          # or a MaxText configs/models/*.yml
    cfg = maxflops.model_config(**loaded.overrides, model_name="mine", max_target_length=8192)
    loaded.ignored                                           # {file key: why it was not used}

Every key of the file is either used (it sets or checks a schema key) or reported in ``Loaded.ignored`` with a
reason, never silently dropped. Reasons start with one of:

- ``"no FLOPs effect"``: the key changes no matmul (RoPE, norms, dtypes, dropout, token ids, routing
  restrictions that keep the top-k count, tied embeddings, ...);
- ``"unused"``: the key has a FLOPs meaning, but not in this model (a dense width when every layer is MoE, a window
  size with no sliding layers, ...);
- ``"superseded"``: the file says the same thing twice and the other key wins (as it does in the model's code);
- ``"not counted"``: the key belongs to a part maxflops does not count (the vision encoder of a multimodal model);
- ``"not modelled"``: the key has a FLOPs effect maxflops has no knob for;
- ``"not understood"``: the loader does not know the key.

One used key is reported too, because the schema expresses it another way: a Qwen shared expert wider than
``moe_intermediate_size`` (``"used as k shared experts ..."``).

Keys absent from the file that the loader needed take the default of the code that reads such files
(MaxText's ``base.yml``, or the ``transformers`` config class of the model type) and are listed in
``Loaded.defaults`` as {key: value used}.

Per-layer lists (HF ``layer_types``, ``mlp_layer_types``, ``moe_layers``, ``no_rope_layers``, ``indexer_types``, ...)
are first expanded with the rules of the model's own code, then fitted to the schema's cyclic knobs
(``attention_layer_pattern``, ``first_num_dense_layers`` + ``interleave_moe_layer_step``, ``index_topk_freq`` +
``index_skip_offset``) so that the schema reproduces the list exactly; a list that cannot be reproduced is a
ValueError naming its key.

Bad input (a missing file, invalid YAML or JSON, an unsupported model type or decoder block, a value of the wrong
type, a missing required key) raises ValueError naming the file, the key and the value.

Plain Python: PyYAML and json are imported inside the functions; jax and numpy are never imported.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any, Callable, Mapping

from . import config as _config

__all__ = ["Loaded", "load_maxtext_yaml", "load_hf_config", "detect_and_load", "NO_EFFECT", "NOT_UNDERSTOOD",
           "MAXTEXT_BASE_DEFAULTS", "MAXTEXT_DECODER_BLOCKS", "HF_MODEL_TYPES"]

NO_EFFECT = "no FLOPs effect"
NOT_UNDERSTOOD = "not understood"
_VISION = "not counted: vision/multimodal part (maxflops counts the text decoder only)"
_MISSING = object()


@dataclasses.dataclass(frozen=True)
class Loaded:
    """What a loader read from one file."""

    overrides: dict  # schema key -> value, ready for maxflops.model_config(**overrides)
    source: str  # "maxtext-yaml" or "hf-config"
    ignored: dict  # file key (nested keys as "text_config.key") -> reason it was not used
    defaults: dict = dataclasses.field(default_factory=dict)  # absent file key -> the default value used


# ------------------------------------------------------------------------------------------------------------
# shared plumbing
# ------------------------------------------------------------------------------------------------------------


def _fail(path, key, value, msg) -> ValueError:
    if key is None:
        return ValueError(f"{path}: {msg}")
    shown = "<absent>" if value is _MISSING else repr(value)
    return ValueError(f"{path}: key {key!r} = {shown}: {msg}")


def _read(path, kind: str) -> dict:
    """Parse a YAML or JSON file into a dict; every failure is a ValueError naming the file."""
    p = pathlib.Path(path)
    if not p.is_file():
        raise ValueError(f"{p}: no such file" if not p.exists() else f"{p}: not a file")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{p}: cannot read: {e}") from None
    if kind == "yaml":
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise ValueError(f"{p}: invalid YAML: {e}") from None
    else:
        import json

        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"{p}: invalid JSON: {e}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{p}: expected a mapping of keys at the top level, got {type(data).__name__}")
    for k in data:
        if not isinstance(k, str):
            raise _fail(p, k, data[k], "keys must be strings")
    return data


class _Reader:
    """Typed access to one mapping of a config file, remembering which keys were read or reported."""

    def __init__(self, data: Mapping[str, Any], path, prefix: str = ""):
        self.data = data
        self.path = path
        self.prefix = prefix
        self.used: set[str] = set()
        self.ignored: dict[str, str] = {}
        self.defaults: dict[str, Any] = {}

    def name(self, key: str) -> str:
        return self.prefix + key

    def has(self, key: str) -> bool:
        return key in self.data

    def fail(self, key, msg, value=_MISSING) -> ValueError:
        if value is _MISSING and key is not None and key in self.data:
            value = self.data[key]
        return _fail(self.path, None if key is None else self.name(key), value, msg)

    def raw(self, key: str, default=_MISSING, *, none_ok: bool = False, record: bool = True):
        """The value of ``key`` (marked used); ``default`` if absent (recorded in ``defaults``)."""
        if key in self.data:
            self.used.add(key)
            value = self.data[key]
            if value is None and not none_ok:
                if default is _MISSING:
                    raise self.fail(key, "must not be null")
                if record:
                    self.defaults[self.name(key)] = default
                return default
            return value
        if default is _MISSING:
            raise self.fail(key, "required key is missing")
        if isinstance(default, list):
            default = list(default)  # never hand out the module's constants
        if record:
            self.defaults[self.name(key)] = default
        return default

    def int(self, key: str, default=_MISSING, *, minimum: int | None = 0, none_ok: bool = False,
            record: bool = True):
        value = self.raw(key, default, none_ok=none_ok, record=record)
        if value is None and none_ok:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(key, f"expected an integer, got {type(value).__name__}", value)
        if isinstance(value, float):
            if not value.is_integer():
                raise self.fail(key, "expected an integer", value)
            value = int(value)
        if minimum is not None and value < minimum:
            raise self.fail(key, f"must be >= {minimum}", value)
        return value

    def float(self, key: str, default=_MISSING, *, record: bool = True):
        value = self.raw(key, default, record=record)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(key, f"expected a number, got {type(value).__name__}", value)
        return float(value)

    def bool(self, key: str, default=_MISSING, *, record: bool = True):
        value = self.raw(key, default, record=record)
        if not isinstance(value, bool):
            raise self.fail(key, f"expected true or false, got {type(value).__name__}", value)
        return value

    def str(self, key: str, default=_MISSING, *, record: bool = True):
        value = self.raw(key, default, record=record)
        if not isinstance(value, str):
            raise self.fail(key, f"expected a string, got {type(value).__name__}", value)
        return value

    def list(self, key: str, item: type, default=_MISSING, *, none_ok: bool = False, record: bool = True):
        value = self.raw(key, default, none_ok=none_ok, record=record)
        if value is None and none_ok:
            return None
        if not isinstance(value, (list, tuple)):
            raise self.fail(key, f"expected a list, got {type(value).__name__}", value)
        for v in value:
            ok = isinstance(v, item) and not (item is int and isinstance(v, bool))
            if not ok:
                raise self.fail(key, f"expected a list of {item.__name__}, found {v!r}", value)
        return list(value)

    def mapping(self, key: str):
        value = self.raw(key)
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a mapping, got {type(value).__name__}", value)
        return value

    def ignore(self, key: str, reason: str) -> None:
        """Report ``key`` (if present) as not used, with a reason."""
        if key in self.data:
            self.used.discard(key)
            self.ignored[self.name(key)] = reason

    def finish(self, classify: Callable[[str], str]) -> None:
        """Report every key that was neither used nor reported, with ``classify(key)`` as its reason."""
        for key in self.data:
            if key not in self.used and self.name(key) not in self.ignored:
                self.ignored[self.name(key)] = classify(key)


def _period(seq) -> int:
    n = len(seq)
    for p in range(1, n + 1):
        if all(seq[i] == seq[i % p] for i in range(p, n)):
            return p
    return max(n, 1)


def _fit_pattern(letters: list, reader: _Reader, key: str) -> str:
    """The shortest cyclic pattern that reproduces ``letters`` (one per layer) exactly."""
    p = _period(letters)
    if p == len(letters) and len(set(letters)) > 1:
        raise reader.fail(key, f"the per-layer attention kinds {''.join(letters)!r} are not periodic (no "
                               "period shorter than the layer count), so no cyclic attention_layer_pattern "
                               "reproduces them")
    return "".join(letters[:p])


def _fit_ffn(is_moe: list, reader: _Reader, key: str) -> tuple[int, int]:
    """(first_num_dense_layers k, interleave_moe_layer_step s) with layer l MoE iff l >= k and (l+1) % s == 0."""
    n = len(is_moe)
    if not any(is_moe):
        return n, 1
    for s in range(1, n + 1):
        for k in range(0, n + 1):
            if all(is_moe[l] == (l >= k and (l + 1) % s == 0) for l in range(n)):
                return k, s
    layers = [l for l in range(n) if is_moe[l]]
    raise reader.fail(key, f"MoE layers {layers} cannot be expressed as a dense prefix followed by every s-th "
                           "layer ((l+1) % s == 0), which is all the schema (first_num_dense_layers, "
                           "interleave_moe_layer_step) can express")


def _index_rule(i: int, freq: int, offset: int) -> bool:
    """maxflops' index-reuse rule for 0-based decoder layer i: True if it computes its own top-k."""
    return max(i + 1 - max(offset, 1), 0) % freq == 0


def _fit_index(full: list, reader: _Reader, key: str, prefer: tuple[int, int] | None) -> tuple[int, int]:
    """(index_topk_freq, index_skip_offset) reproducing ``full`` (True: the layer runs its own indexer)."""
    n = len(full)
    candidates = [prefer] if prefer else []
    candidates += [(f, o) for f in range(1, n + 1) for o in range(0, n + 1)]
    for f, o in candidates:
        if f >= 1 and o >= 0 and all(full[i] == _index_rule(i, f, o) for i in range(n)):
            return f, o
    shown = "".join("F" if x else "S" for x in full)
    raise reader.fail(key, f"the per-layer indexer schedule {shown!r} (F computes, S reuses) cannot be expressed "
                           "by the schema's rule (layer l, 1-based, computes iff max(l - max(offset, 1), 0) % "
                           "freq == 0)")


_ACTIVATIONS = {
    "silu": "silu", "swish": "silu", "swiglu": "silu",
    "gelu": "gelu", "gelu_new": "gelu", "gelu_pytorch_tanh": "gelu", "gelu_fast": "gelu", "gelu_python": "gelu",
    "gelu_tanh": "gelu", "gelu_accurate": "gelu", "geglu": "gelu",
    "relu": "relu", "sigmoid": "sigmoid", "tanh": "tanh",
}


def _validate(path, overrides: Mapping[str, Any]) -> None:
    """The overrides must make a valid maxflops config on their own (schema defaults for the rest)."""
    try:
        _config.resolve(overrides)
    except ValueError as e:
        raise ValueError(f"{path}: the file gives an invalid maxflops config: {e}") from None


# ------------------------------------------------------------------------------------------------------------
# MaxText model YAML
# ------------------------------------------------------------------------------------------------------------

# MaxText's src/maxtext/configs/base.yml (snapshot e591f30c) for the keys this loader reads: a key a model YAML
# does not set takes this value, as in MaxText.
MAXTEXT_BASE_DEFAULTS: dict[str, Any] = {
    "decoder_block": "llama2",
    "global_parameter_scale": 1,
    "base_emb_dim": 2048,
    "base_num_query_heads": 16,
    "base_num_kv_heads": 16,
    "base_mlp_dim": 7168,
    "base_moe_mlp_dim": -1,
    "base_num_decoder_layers": 16,
    "head_dim": 128,
    "mlp_activations": ["silu", "linear"],
    "vocab_size": 32000,
    "num_experts": 1,
    "num_experts_per_tok": 1,
    "shared_experts": 0,
    "first_num_dense_layers": 0,
    "interleave_moe_layer_step": 1,
    "attention_type": "global",
    "q_lora_rank": 0,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "sliding_window_size": 0,
    "chunk_attn_window_size": 0,
    "nope_layer_interval": -1,
    "inhomogeneous_layer_cycle_interval": 1,
    "use_indexer": False,
    "indexer_n_heads": 64,
    "indexer_head_dim": 128,
    "indexer_topk": 2048,
    "indexer_loss_scaling_factor": 0.0,
    "mtp_num_layers": 0,
    "gdn_num_key_heads": 16,
    "gdn_num_value_heads": 32,
    "gdn_key_head_dim": 128,
    "gdn_value_head_dim": 128,
    "gdn_conv_kernel_dim": 4,
}

# decoder_block -> (fixed attention pattern or None, note). Patterns hard-coded in MaxText's model files
# (snapshot e591f30c): gemma3.py GEMMA3_ATTENTION_PATTERN (5 local sliding : 1 global), gpt_oss.py
# GPT_OSS_ATTENTION_PATTERN (layer 0 sliding), olmo3.py OLMO3_ATTENTION_PATTERN (3 sliding : 1 global),
# gemma2.py (each MaxText layer is a local then a global attention+MLP block). llama4 and qwen3_next derive
# theirs from the YAML (see _maxtext_pattern). The other blocks run global causal attention on every layer.
MAXTEXT_DECODER_BLOCKS: dict[str, str | None] = {
    "llama2": "G", "mistral": "G", "mixtral": "G", "deepseek": "G", "gemma": "G", "qwen2": "G", "qwen3": "G",
    "qwen3_moe": "G", "gemma2": "LG", "gemma3": "LLLLLG", "gpt_oss": "LG", "olmo3": "LLLG",
    "llama4": None, "qwen3_next": None,
}

# DeepSeek sparse attention: (MaxText name, the earlier name also accepted, schema key).
_MAXTEXT_INDEXER = (("use_indexer", "use_sparse_indexer", "use_sparse_indexer"),
                    ("indexer_n_heads", "index_n_heads", "index_n_heads"),
                    ("indexer_head_dim", "index_head_dim", "index_head_dim"),
                    ("indexer_topk", "index_topk", "index_topk"))

# Keys of MaxText YAMLs that change no matmul.
_MAXTEXT_NO_EFFECT = frozenset("""
    model_name enable_dropout dropout_rate logits_via_embedding normalize_embedding_logits
    normalization_layer_epsilon use_qk_norm qk_norm_with_scale use_post_attn_norm use_post_ffw_norm
    attention_bias attention_sink mlp_bias routed_bias routed_scaling_factor routed_score_func norm_topk_prob
    n_routing_groups topk_routing_group load_balance_loss_weight mlp_activations_limit
    rope_type rope_max_timescale rope_min_timescale local_rope_max_timescale rope_linear_scaling_factor
    rope_use_scale rope_factor rope_interleave rope_truncate rope_attention_scaling beta_fast beta_slow mscale
    max_position_embeddings original_max_position_embeddings partial_rotary_factor temperature_tuning
    final_logits_soft_cap attn_logits_soft_cap float32_logits float32_qk_product float32_weight_sum
    float32_gate_logits dtype weight_dtype matmul_precision activations_in_float32 quantization
    tokenizer_type tokenizer_path logical_axis_rules mtp_loss_scaling_factor mtp_eval_target_module
    gdn_chunk_size use_qk_norm_in_gdn indexer_use_approx_top_k indexer_approx_top_k_recall
    indexer_mask_exact_topk megablox sparse_matmul scan_layers param_scan_axis
""".split())

_MAXTEXT_HARDWARE = frozenset("attention capacity_factor remat_policy".split())


def _maxtext_classify(key: str) -> str:
    if key in _MAXTEXT_NO_EFFECT:
        return NO_EFFECT
    if key in _MAXTEXT_HARDWARE:
        return ("not modelled: a MaxText implementation choice; set maxflops' hardware knobs (attention_impl, "
                "moe_impl, capacity_factor, remat_policy) yourself")
    if key.endswith("_for_vit") or key.startswith(("vision_", "image_")) or key in ("use_multimodal",):
        return _VISION
    return NOT_UNDERSTOOD


def _scales(r: _Reader) -> tuple[int, int, int, int]:
    """MaxText's get_individual_scales(global_parameter_scale): (emb, heads, mlp, layers) powers of two."""
    scale = r.int("global_parameter_scale", MAXTEXT_BASE_DEFAULTS["global_parameter_scale"], minimum=1,
                  record=False)
    if scale & (scale - 1):
        raise r.fail("global_parameter_scale", "must be a power of two (MaxText's rule)")
    log2 = scale.bit_length() - 1
    base, rem = divmod(log2, 3)
    heads = base + int(rem > 0)
    return base + int(rem > 1), heads, heads, base


def load_maxtext_yaml(path) -> Loaded:
    """A MaxText model YAML (``src/maxtext/configs/models/*.yml`` style) -> schema overrides.

    Keys the YAML does not set take MaxText's ``base.yml`` value (``MAXTEXT_BASE_DEFAULTS``). The attention
    pattern comes from ``decoder_block`` (MaxText hard-codes it in the model files) and, for llama4 and
    qwen3_next, from ``nope_layer_interval`` / ``inhomogeneous_layer_cycle_interval``.
    """
    path = pathlib.Path(path)
    r = _Reader(_read(path, "yaml"), path)
    base = MAXTEXT_BASE_DEFAULTS
    o: dict[str, Any] = {}

    block = r.str("decoder_block", base["decoder_block"])
    if block not in MAXTEXT_DECODER_BLOCKS:
        raise r.fail("decoder_block", "unsupported decoder block; supported: "
                                      + ", ".join(sorted(MAXTEXT_DECODER_BLOCKS)), block)

    es, hs, ms, ls = _scales(r)
    o["emb_dim"] = r.int("base_emb_dim", base["base_emb_dim"], minimum=1) << es
    o["num_query_heads"] = r.int("base_num_query_heads", base["base_num_query_heads"], minimum=1) << hs
    o["num_kv_heads"] = r.int("base_num_kv_heads", base["base_num_kv_heads"], minimum=1) << hs
    o["mlp_dim"] = r.int("base_mlp_dim", base["base_mlp_dim"], minimum=1) << ms
    layers = r.int("base_num_decoder_layers", base["base_num_decoder_layers"], minimum=1) << ls
    # gemma2: one MaxText layer is a local and a global attention+MLP block (gemma2.py), i.e. two decoder layers.
    o["num_decoder_layers"] = 2 * layers if block == "gemma2" else layers
    o["vocab_size"] = r.int("vocab_size", base["vocab_size"], minimum=1)
    acts = r.list("mlp_activations", str, base["mlp_activations"])
    if not 1 <= len(acts) <= 2:
        raise r.fail("mlp_activations", "give one activation (plain FFN) or two (gated FFN)", acts)
    o["mlp_activations"] = tuple(acts)

    # --- MoE ----------------------------------------------------------------------------------------------
    o["num_experts"] = r.int("num_experts", base["num_experts"], minimum=1, record=False)
    if o["num_experts"] > 1:
        moe_dim = r.int("base_moe_mlp_dim", base["base_moe_mlp_dim"], minimum=None)
        if moe_dim <= 0:
            raise r.fail("base_moe_mlp_dim", "must be positive for a MoE model (num_experts > 1), as MaxText "
                                             "requires (base.yml default: -1)")
        o["moe_mlp_dim"] = moe_dim << ms
        o["num_experts_per_tok"] = r.int("num_experts_per_tok", base["num_experts_per_tok"], minimum=1)
        for key in ("shared_experts", "first_num_dense_layers", "interleave_moe_layer_step"):
            o[key] = r.int(key, base[key], record=False)  # base.yml's values mean "none" / "every layer"
    else:
        for key in ("base_moe_mlp_dim", "num_experts_per_tok", "shared_experts", "first_num_dense_layers",
                    "interleave_moe_layer_step"):
            r.ignore(key, "unused: num_experts is 1 (no MoE layers)")

    # --- attention ----------------------------------------------------------------------------------------
    attention_type = r.str("attention_type", base["attention_type"], record=False)
    if attention_type not in ("global", "full", "mla"):
        raise r.fail("attention_type", "supported: 'global', 'full' or 'mla' (other MaxText attention types are "
                                       "set per layer by the decoder block, or are not modelled)")
    o["attention_type"] = "mla" if attention_type == "mla" else "global"
    mla_keys = ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
    if o["attention_type"] == "mla":
        for key in mla_keys:
            o[key] = r.int(key, base[key])
        r.ignore("head_dim", "unused: MLA widths come from qk_nope_head_dim, qk_rope_head_dim and v_head_dim")
    else:
        o["head_dim"] = r.int("head_dim", base["head_dim"], minimum=1)
        for key in mla_keys:
            r.ignore(key, "unused: attention_type is not 'mla'")

    # DeepSeek sparse attention, under MaxText's names or the earlier ones.
    def indexer_value(new, old, getter, **kw):
        if r.has(new) and r.has(old):
            a, b = getter(new), getter(old)
            if a != b:
                raise r.fail(old, f"disagrees with {new}={a!r}", b)
            r.ignore(old, f"superseded: same as {new}")
            return a
        return getter(old if r.has(old) else new, base[new], **kw)

    if indexer_value("use_indexer", "use_sparse_indexer", r.bool, record=False):
        o["use_sparse_indexer"] = True
        for new, old, key in _MAXTEXT_INDEXER[1:]:
            o[key] = indexer_value(new, old, lambda k, *a, **kw: r.int(k, *a, minimum=1, **kw))
    else:
        for new, old, _ in _MAXTEXT_INDEXER[1:]:
            for k in (new, old):
                r.ignore(k, "unused: the indexer is off (use_indexer false)")
    if r.has("indexer_sparse_training"):
        r.ignore("indexer_sparse_training",
                 "not modelled: the indexer loss over the top-k keys only (maxflops' hardware indexer_kl is the "
                 "dense warm-up, over every scored pair); no effect on model FLOPs"
                 if r.bool("indexer_sparse_training") else NO_EFFECT + " (false: the dense warm-up)")

    pattern = _maxtext_pattern(r, block)
    o["attention_layer_pattern"] = pattern
    if "L" in pattern:
        o["sliding_window_size"] = r.int("sliding_window_size", base["sliding_window_size"], minimum=1)
    else:
        r.ignore("sliding_window_size", f"unused: decoder_block {block!r} has no sliding-window layers here")
    if "C" in pattern:
        o["chunk_attn_window_size"] = r.int("chunk_attn_window_size", minimum=1)
    else:
        r.ignore("chunk_attn_window_size", f"unused: decoder_block {block!r} has no chunked layers here")

    if block == "qwen3_next":
        for key in ("gdn_num_key_heads", "gdn_num_value_heads", "gdn_key_head_dim", "gdn_value_head_dim",
                    "gdn_conv_kernel_dim"):
            o[key] = r.int(key, base[key], minimum=1)
        # qwen3.py: the q projection also emits a per-head output gate; the shared experts have a sigmoid gate.
        o["attention_output_gate"] = True
        o["shared_expert_gate"] = o.get("shared_experts", 0) > 0
    else:
        for key in ("gdn_num_key_heads", "gdn_num_value_heads", "gdn_key_head_dim", "gdn_value_head_dim",
                    "gdn_conv_kernel_dim"):
            r.ignore(key, f"unused: decoder_block {block!r} has no gated-delta-net layers")

    # --- MTP, indexer loss, the step ---------------------------------------------------------------------------
    if r.has("mtp_num_layers"):
        o["mtp_num_layers"] = r.int("mtp_num_layers")
    if r.has("indexer_loss_scaling_factor"):
        o["indexer_loss_scaling_factor"] = r.float("indexer_loss_scaling_factor")
    if r.has("per_device_batch_size"):
        o["per_device_batch_size"] = r.float("per_device_batch_size")
    for key in ("max_target_length", "gradient_accumulation_steps"):
        if r.has(key):
            o[key] = r.int(key, minimum=1)

    r.finish(_maxtext_classify)
    _validate(path, o)
    return Loaded(overrides=o, source="maxtext-yaml", ignored=r.ignored, defaults=r.defaults)


def _maxtext_pattern(r: _Reader, block: str) -> str:
    fixed = MAXTEXT_DECODER_BLOCKS[block]
    cycle_reason = "no FLOPs effect: scan grouping of the layer cycle"
    if block == "llama4":
        # llama4.py: layer l is NoPE iff nope_layer_interval > 0 and (l+1) % interval == 0; NoPE layers run global
        # attention, RoPE layers chunked attention (chunk_attn_window_size must be set).
        interval = r.int("nope_layer_interval", MAXTEXT_BASE_DEFAULTS["nope_layer_interval"], minimum=None)
        chunk = r.int("chunk_attn_window_size", 0, record=False)
        if chunk < 1:
            raise r.fail("chunk_attn_window_size", "the llama4 decoder block runs chunked attention on its RoPE "
                                                   "layers; set chunk_attn_window_size >= 1")
        r.ignore("inhomogeneous_layer_cycle_interval", cycle_reason)
        return "C" * (interval - 1) + "G" if interval > 0 else "C"
    if block == "qwen3_next":
        # decoders.py / qwen3.py: layer l is full attention iff (l+1) % inhomogeneous_layer_cycle_interval == 0,
        # the others gated-delta-net linear attention.
        interval = r.int("inhomogeneous_layer_cycle_interval",
                         MAXTEXT_BASE_DEFAULTS["inhomogeneous_layer_cycle_interval"], minimum=1)
        r.ignore("nope_layer_interval", "unused: only the llama4 decoder block reads it")
        return "D" * (interval - 1) + "G"
    r.ignore("inhomogeneous_layer_cycle_interval", cycle_reason)
    r.ignore("nope_layer_interval", "unused: only the llama4 decoder block reads it")
    return fixed


# ------------------------------------------------------------------------------------------------------------
# Hugging Face config.json
# ------------------------------------------------------------------------------------------------------------

# Transformers config-class defaults (read from the transformers sources) for the keys this loader reads. A key
# absent from the file takes its model type's default from here (the text_config of a multimodal checkpoint is
# saved as a diff against its class defaults, so Gemma 3's lacks vocab_size, for one); a key not listed here is
# required, except the post-init rules every class has: head_dim = hidden_size // num_attention_heads and
# num_key_value_heads = num_attention_heads when absent or null.
_HF_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3_text": {  # Gemma3TextConfig
        "vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
        "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
        "hidden_activation": "gelu_pytorch_tanh", "sliding_window": 4096, "sliding_window_pattern": 6,
    },
    "llama4_text": {  # Llama4TextConfig
        "vocab_size": 202048, "hidden_size": 5120, "intermediate_size": 8192, "intermediate_size_mlp": 16384,
        "num_hidden_layers": 48, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
        "hidden_act": "silu", "num_experts_per_tok": 1, "num_local_experts": 16, "interleave_moe_layer_step": 1,
        "no_rope_layer_interval": 4, "attention_chunk_size": 8192,
    },
    "gpt_oss": {  # GptOssConfig
        "num_hidden_layers": 36, "num_local_experts": 128, "vocab_size": 201088, "hidden_size": 2880,
        "intermediate_size": 2880, "head_dim": 64, "num_attention_heads": 64, "num_key_value_heads": 8,
        "sliding_window": 128, "hidden_act": "silu", "num_experts_per_tok": 4,
    },
    "qwen3_next": {  # Qwen3NextConfig
        "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 48,
        "num_attention_heads": 16, "num_key_value_heads": 2, "hidden_act": "silu", "head_dim": 256,
        "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
        "linear_num_key_heads": 16, "linear_num_value_heads": 32,
        "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512, "num_experts_per_tok": 10,
        "num_experts": 512, "full_attention_interval": 4,
    },
    "mistral": {"sliding_window": 4096},  # MistralConfig: a window on every layer unless null
    "mixtral": {"sliding_window": None},  # MixtralConfig
    "glm_moe_dsa": {  # GlmMoeDsaConfig
        "vocab_size": 154880, "hidden_size": 6144, "intermediate_size": 12288, "moe_intermediate_size": 2048,
        "num_hidden_layers": 78, "num_attention_heads": 64, "num_key_value_heads": 64, "n_shared_experts": 1,
        "n_routed_experts": 256, "kv_lora_rank": 512, "q_lora_rank": 2048, "qk_rope_head_dim": 64,
        "v_head_dim": 256, "qk_nope_head_dim": 192, "num_experts_per_tok": 8, "hidden_act": "silu",
        "index_topk": 2048, "index_head_dim": 128, "index_n_heads": 32, "first_k_dense_replace": 3,
    },
}

_FAMILY = {
    "llama": "dense", "mistral": "dense", "qwen3": "dense", "mixtral": "moe", "qwen3_moe": "moe",
    "gpt_oss": "moe", "qwen3_next": "qwen3_next", "gemma3_text": "dense", "llama4_text": "llama4",
    "deepseek_v2": "deepseek", "deepseek_v3": "deepseek", "deepseek_v32": "deepseek", "glm_moe_dsa": "deepseek",
}
# multimodal wrapper model_type -> the model_type of its text_config
_WRAPPERS = {"gemma3": "gemma3_text", "llama4": "llama4_text"}
HF_MODEL_TYPES = tuple(sorted(set(_FAMILY) | set(_WRAPPERS)))

_HF_NO_EFFECT = frozenset("""
    architectures _name_or_path auto_map transformers_version torch_dtype dtype use_cache initializer_range
    bos_token_id eos_token_id pad_token_id attention_bias mlp_bias attention_dropout hidden_dropout
    max_position_embeddings initial_context_length rms_norm_eps layer_norm_eps rope_theta rope_scaling
    rope_parameters rope_local_base_freq partial_rotary_factor rope_interleave indexer_rope_interleave
    tie_word_embeddings pretraining_tp quantization_config output_router_logits router_aux_loss_coef
    router_jitter_noise norm_topk_prob aux_loss_alpha seq_aux ep_size n_group topk_group topk_method
    scoring_func routed_scaling_factor moe_router_dtype query_pre_attn_scalar final_logit_softcapping
    attn_logit_softcapping cache_implementation swiglu_limit swiglu_alpha attn_temperature_tuning floor_scale
    attn_scale use_qk_norm for_llm_compressor _attn_implementation_autoset
""".split())

_HF_VISION = frozenset("""
    vision_config mm_tokens_per_image boi_token_index eoi_token_index image_token_index image_token_id
    boi_token_id eoi_token_id vision_feature_layer vision_feature_select_strategy projector_hidden_act
    multimodal_projector_bias
""".split())


def _hf_classify(key: str) -> str:
    if key in _HF_NO_EFFECT:
        return NO_EFFECT
    if key in _HF_VISION:
        return _VISION
    return NOT_UNDERSTOOD


_LETTERS = {
    "full_attention": "G", "attention": "G", "full": "G",
    "sliding_attention": "L",
    "chunked_attention": "C",
    "deepseek_sparse_attention": "G", "indexed_attention": "G",  # DSA on 'G' layers (use_sparse_indexer)
}


def _layer_letters(types: list, r: _Reader, key: str, allowed: set) -> list:
    letters = []
    for t in types:
        letter = "D" if t in ("linear_attention", "linear") and "D" in allowed else _LETTERS.get(t)
        if letter is None or letter not in allowed:
            raise r.fail(key, f"layer type {t!r} is not supported for this model type")
        letters.append(letter)
    return letters


def load_hf_config(path) -> Loaded:
    """A Hugging Face ``config.json`` -> schema overrides.

    Model types: see ``HF_MODEL_TYPES`` (gemma3 and llama4 read their ``text_config``). Keys absent from the
    file that the model type's transformers config class gives a default for take that default (listed in
    ``Loaded.defaults``); other absent keys the loader needs are a ValueError.
    """
    path = pathlib.Path(path)
    top = _Reader(_read(path, "json"), path)
    model_type = top.str("model_type")
    if model_type in _WRAPPERS:
        text_type = _WRAPPERS[model_type]
        text = top.mapping("text_config")
        r = _Reader(text, path, prefix="text_config.")
        inner = r.raw("model_type", text_type, record=False)
        if inner != text_type:
            raise r.fail("model_type", f"expected {text_type!r} inside a {model_type!r} config", inner)
        # top-level keys of the wrapper: the vision tower and multimodal plumbing
        top.ignore("vision_config", _VISION)
        if top.has("tie_word_embeddings"):
            top.ignore("tie_word_embeddings", NO_EFFECT)
    elif model_type in _FAMILY:
        text_type, r = model_type, top
    else:
        raise top.fail("model_type", "unsupported model type; supported: " + ", ".join(HF_MODEL_TYPES))

    defaults = _HF_DEFAULTS.get(text_type, {})

    def d(key):
        return defaults.get(key, _MISSING)

    o = _hf_model(r, text_type, d)

    if r is not top:
        r.finish(_hf_classify)
        top.ignored.update(r.ignored)
        top.defaults.update(r.defaults)
    top.finish(_hf_classify)
    _validate(path, o)
    return Loaded(overrides=o, source="hf-config", ignored=top.ignored, defaults=top.defaults)


def _hf_activation(r: _Reader, text_type: str, d) -> tuple:
    if text_type == "gemma3_text":  # Gemma 3 reads hidden_activation; hidden_act is the legacy name
        if r.has("hidden_activation") or not r.has("hidden_act"):
            act = r.str("hidden_activation", d("hidden_activation"))
            r.ignore("hidden_act", "superseded by hidden_activation (what Gemma 3 reads)")
        else:
            act = r.str("hidden_act")
    else:
        act = r.str("hidden_act", d("hidden_act"))
    # Every supported model type has a gated (GLU) FFN: act(gate) * up.
    return _ACTIVATIONS.get(act, act), "linear"


def _hf_model(r: _Reader, text_type: str, d) -> dict:
    family = _FAMILY[text_type]
    o: dict[str, Any] = {}
    n = o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    heads = o["num_query_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
    kv = r.int("num_key_value_heads", d("num_key_value_heads") if d("num_key_value_heads") is not _MISSING
               else heads, minimum=1, none_ok=True)
    o["num_kv_heads"] = heads if kv is None else kv
    o["mlp_activations"] = _hf_activation(r, text_type, d)

    if family == "deepseek":
        _hf_mla(r, text_type, d, o)
    else:
        hd = r.int("head_dim", d("head_dim") if d("head_dim") is not _MISSING else o["emb_dim"] // heads,
                   minimum=1, none_ok=True)
        o["head_dim"] = o["emb_dim"] // heads if hd is None else hd

    # --- FFN: per-layer MoE list (the model's own rule), then fitted --------------------------------------
    is_moe, ffn_key = _hf_ffn(r, text_type, family, d, o, n)
    if o.get("num_experts", 1) > 1:
        k, s = _fit_ffn(is_moe, r, ffn_key)
        if k:
            o["first_num_dense_layers"] = k
        if s > 1:
            o["interleave_moe_layer_step"] = s
    # The dense FFN width. Mixtral and gpt-oss have no dense layer: their intermediate_size is the expert width.
    dense_key = {"llama4": "intermediate_size_mlp"}.get(family, "intermediate_size")
    if text_type in ("mixtral", "gpt_oss"):
        dense_key = None
    if o.get("num_experts", 1) == 1 or not all(is_moe):
        if dense_key is None:
            raise r.fail("num_local_experts", f"{text_type} models have no dense FFN width for the dense layers")
        o["mlp_dim"] = r.int(dense_key, d(dense_key), minimum=1)
    elif dense_key:
        r.ignore(dense_key, "unused: every layer is MoE (no dense FFN layer)")

    # --- mixers ---------------------------------------------------------------------------------------------
    letters, key = _hf_layers(r, text_type, family, d, n)
    pattern = o["attention_layer_pattern"] = _fit_pattern(letters, r, key)
    if "L" in pattern:
        w = r.int("sliding_window", d("sliding_window"), minimum=1, none_ok=True)
        if w is None:
            raise r.fail("sliding_window", "the layers include sliding-window attention, so a window is needed")
        o["sliding_window_size"] = w
    else:
        r.ignore("sliding_window", "unused: no sliding-window layers")
    if "C" in pattern:
        c = r.int("attention_chunk_size", d("attention_chunk_size"), minimum=1, none_ok=True)
        if c is None:
            raise r.fail("attention_chunk_size", "the layers include chunked attention, so a chunk size is needed")
        o["chunk_attn_window_size"] = c
    else:
        r.ignore("attention_chunk_size", "unused: no chunked-attention layers")

    if family == "qwen3_next":
        for src, dst in (("linear_num_key_heads", "gdn_num_key_heads"),
                         ("linear_num_value_heads", "gdn_num_value_heads"),
                         ("linear_key_head_dim", "gdn_key_head_dim"),
                         ("linear_value_head_dim", "gdn_value_head_dim"),
                         ("linear_conv_kernel_dim", "gdn_conv_kernel_dim")):
            o[dst] = r.int(src, d(src), minimum=1)
        # Qwen3NextAttention's q projection also emits a per-head sigmoid output gate (always on).
        o["attention_output_gate"] = r.bool("attn_output_gate", True, record=False)
    if r.has("use_bidirectional_attention"):
        if r.bool("use_bidirectional_attention"):
            raise r.fail("use_bidirectional_attention", "bidirectional sliding-window attention is not modelled")
        r.ignore("use_bidirectional_attention", NO_EFFECT + " (false)")
    return o


def _hf_mla(r: _Reader, text_type: str, d, o: dict) -> None:
    o["attention_type"] = "mla"
    q = r.int("q_lora_rank", d("q_lora_rank"), none_ok=True)
    o["q_lora_rank"] = 0 if q is None else q  # null: q projected directly from D (DeepSeek-V2-Lite)
    for key in ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
        o[key] = r.int(key, d(key), minimum=1 if key in ("kv_lora_rank", "v_head_dim") else 0)
    r.ignore("head_dim", "unused: MLA widths come from qk_nope_head_dim, qk_rope_head_dim and v_head_dim")
    if r.has("qk_head_dim"):
        qk = r.int("qk_head_dim")
        if qk != o["qk_nope_head_dim"] + o["qk_rope_head_dim"]:
            raise r.fail("qk_head_dim", f"is not qk_nope_head_dim + qk_rope_head_dim = "
                                        f"{o['qk_nope_head_dim'] + o['qk_rope_head_dim']}")
        r.ignore("qk_head_dim", "superseded: derived (qk_nope_head_dim + qk_rope_head_dim), checked")
    if r.has("num_nextn_predict_layers") or d("num_nextn_predict_layers") is not _MISSING:
        o["mtp_num_layers"] = r.int("num_nextn_predict_layers", d("num_nextn_predict_layers"))

    # DeepSeek sparse attention: the index_* keys (DeepSeek-V3.2, GLM-5).
    if text_type in ("deepseek_v32", "glm_moe_dsa") or r.has("index_topk"):
        o["use_sparse_indexer"] = True
        o["index_n_heads"] = r.int("index_n_heads", d("index_n_heads"), minimum=1)
        o["index_head_dim"] = r.int("index_head_dim", d("index_head_dim"), minimum=1)
        o["index_topk"] = r.int("index_topk", d("index_topk"), minimum=1)
        full, key, prefer = _hf_index_schedule(r, o["num_decoder_layers"])
        freq, offset = _fit_index(full, r, key, prefer)
        if freq != 1:  # with freq 1 every layer computes its own top-k, whatever the offset
            o["index_topk_freq"] = freq
            o["index_skip_offset"] = offset
    else:
        for key in ("index_n_heads", "index_head_dim", "index_topk_freq", "index_skip_topk_offset",
                    "indexer_types", "index_topk_pattern"):
            r.ignore(key, "unused: no index_topk, so no DSA indexer")
    if r.has("index_share_for_mtp_iteration"):
        r.raw("index_share_for_mtp_iteration")
        r.ignore("index_share_for_mtp_iteration",
                 "not modelled: index sharing across MTP iterations (maxflops applies its reuse rule to MTP "
                 "modules numbered from 1)")


def _hf_index_schedule(r: _Reader, n: int):
    """Per-layer 'runs its own indexer' list, as GlmMoeDsaConfig builds it: indexer_types, else
    index_topk_pattern ('F'/'S'), else full iff max(i - offset + 1, 0) % freq == 0 (offset default 2)."""
    if r.has("indexer_types") and r.data["indexer_types"] is not None:
        types = r.list("indexer_types", str)
        if len(types) != n or any(t not in ("full", "shared") for t in types):
            raise r.fail("indexer_types", f"expected {n} entries, each 'full' or 'shared'")
        for k in ("index_topk_freq", "index_skip_topk_offset", "index_topk_pattern"):
            r.ignore(k, "superseded by indexer_types")
        return [t == "full" for t in types], "indexer_types", None
    if r.has("index_topk_pattern") and r.data["index_topk_pattern"] is not None:
        pat = r.str("index_topk_pattern")
        if len(pat) != n or set(pat) - set("FS"):
            raise r.fail("index_topk_pattern", f"expected {n} letters, each F (full) or S (shared)")
        for k in ("index_topk_freq", "index_skip_topk_offset"):
            r.ignore(k, "superseded by index_topk_pattern")
        return [c == "F" for c in pat], "index_topk_pattern", None
    # absent: freq 1 (every layer computes) and GlmMoeDsaConfig's offset 2 (which matters only with freq > 1)
    freq = r.int("index_topk_freq", 1, minimum=1, record=False)
    offset = r.int("index_skip_topk_offset", 2, record=False)
    key = "index_skip_topk_offset" if r.has("index_skip_topk_offset") else "index_topk_freq"
    full = [max(i - offset + 1, 0) % freq == 0 for i in range(n)]
    return full, key, (freq, offset)


def _shared_count(r: _Reader, key: str, width: int, moe_width: int) -> int:
    """A shared expert of width k * moe_width costs as k shared experts of moe_width (the schema's unit: the schema
    uses moe_mlp_dim for the shared experts too)."""
    if width % moe_width:
        raise r.fail(key, f"a shared expert of width {width} is not a whole number of experts of "
                          f"moe_intermediate_size={moe_width}; the schema sizes shared experts by moe_mlp_dim, so "
                          "it cannot express this width", width)
    k = width // moe_width
    if k != 1:  # used, but say how
        r.ignored[r.name(key)] = (f"used as {k} shared experts of moe_intermediate_size={moe_width}: the same "
                                  "FLOPs as one shared expert of this width (the schema sizes shared experts by "
                                  "moe_mlp_dim)")
    return k


def _hf_ffn(r: _Reader, text_type: str, family: str, d, o: dict, n: int):
    """Set the MoE keys of ``o``; return (per-layer is-MoE list, the key that decided it)."""
    if family == "dense":
        return [False] * n, "num_hidden_layers"

    if family == "moe":  # mixtral, gpt_oss (intermediate_size is the expert width), qwen3_moe
        if text_type == "qwen3_moe":
            o["num_experts"] = r.int("num_experts", d("num_experts"), minimum=1)
            o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
        else:
            o["num_experts"] = r.int("num_local_experts", d("num_local_experts"), minimum=1)
            o["moe_mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
        o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
        if text_type == "gpt_oss" and r.has("experts_per_token"):
            alias = r.int("experts_per_token")
            if alias != o["num_experts_per_tok"]:
                raise r.fail("experts_per_token", f"disagrees with num_experts_per_tok={o['num_experts_per_tok']}")
            r.ignore("experts_per_token", "superseded: same as num_experts_per_tok")
        if text_type == "qwen3_moe":
            return _qwen_moe_layers(r, n)
        return [True] * n, "num_local_experts"

    if family == "qwen3_next":
        o["num_experts"] = r.int("num_experts", d("num_experts"), minimum=1)
        o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
        moe = o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
        shared = r.int("shared_expert_intermediate_size", d("shared_expert_intermediate_size"))
        if shared:
            o["shared_experts"] = _shared_count(r, "shared_expert_intermediate_size", shared, moe)
            o["shared_expert_gate"] = True  # Qwen3NextSparseMoeBlock.shared_expert_gate: Linear(hidden, 1), sigmoid
        return _qwen_moe_layers(r, n)

    if family == "llama4":
        o["num_experts"] = r.int("num_local_experts", d("num_local_experts"), minimum=1)
        o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
        o["moe_mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
        o["shared_experts"] = 1  # Llama4TextMoe always has one shared expert of intermediate_size
        step = r.int("interleave_moe_layer_step", d("interleave_moe_layer_step"), minimum=1)
        moe_layers = r.list("moe_layers", int, None, none_ok=True, record=False)
        if moe_layers is None:  # Llama4TextConfig: range(step - 1, n, step)
            return [(l + 1) % step == 0 for l in range(n)], "interleave_moe_layer_step"
        if any(not 0 <= l < n for l in moe_layers):
            raise r.fail("moe_layers", f"layer indices must be in 0..{n - 1}")
        r.ignore("interleave_moe_layer_step", "superseded by moe_layers")
        return [l in set(moe_layers) for l in range(n)], "moe_layers"

    # deepseek family: n_routed_experts, n_shared_experts, first_k_dense_replace, moe_layer_freq
    o["num_experts"] = r.int("n_routed_experts", d("n_routed_experts"), minimum=1)
    o["num_experts_per_tok"] = r.int("num_experts_per_tok", d("num_experts_per_tok"), minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    o["shared_experts"] = r.int("n_shared_experts", d("n_shared_experts") if d("n_shared_experts") is not _MISSING
                                else 0, none_ok=True) or 0
    if r.has("mlp_layer_types") and r.data["mlp_layer_types"] is not None:
        types = r.list("mlp_layer_types", str)
        if len(types) != n or any(t not in ("dense", "sparse") for t in types):
            raise r.fail("mlp_layer_types", f"expected {n} entries, each 'dense' or 'sparse'")
        for key in ("first_k_dense_replace", "moe_layer_freq"):
            r.ignore(key, "superseded by mlp_layer_types")
        return [t == "sparse" for t in types], "mlp_layer_types"
    k = r.int("first_k_dense_replace", d("first_k_dense_replace"))
    freq = r.int("moe_layer_freq", 1, minimum=1, record=False)
    # DeepSeek's modeling code: MoE iff layer_idx >= first_k_dense_replace and layer_idx % moe_layer_freq == 0
    key = "moe_layer_freq" if freq != 1 else "first_k_dense_replace"
    return [l >= k and l % freq == 0 for l in range(n)], key


def _qwen_moe_layers(r: _Reader, n: int):
    """Qwen3-MoE / Qwen3-Next: MoE iff layer not in mlp_only_layers and (layer + 1) % decoder_sparse_step == 0."""
    # absent: every layer is MoE (the Qwen3MoeConfig / Qwen3NextConfig defaults 1 and [])
    step = r.int("decoder_sparse_step", 1, minimum=1, record=False)
    only = r.list("mlp_only_layers", int, [], none_ok=True, record=False) or []
    key = "mlp_only_layers" if only else "decoder_sparse_step"
    return [l not in set(only) and (l + 1) % step == 0 for l in range(n)], key


def _hf_layers(r: _Reader, text_type: str, family: str, d, n: int):
    """Per-layer attention letters by the model type's rule; returns (letters, key that decided them)."""
    def given(key):
        return r.has(key) and r.data[key] is not None

    def from_types(allowed):
        types = r.list("layer_types", str)
        if len(types) != n:
            raise r.fail("layer_types", f"has {len(types)} entries for num_hidden_layers={n}")
        return _layer_letters(types, r, "layer_types", allowed)

    if family == "deepseek":
        if given("layer_types"):
            return from_types({"G"}), "layer_types"
        return ["G"] * n, "num_hidden_layers"

    if text_type == "gemma3_text":
        if given("layer_types"):
            r.ignore("sliding_window_pattern", "superseded by layer_types")
            return from_types({"G", "L"}), "layer_types"
        p = r.int("sliding_window_pattern", d("sliding_window_pattern"), minimum=1)
        return ["L" if (i + 1) % p else "G" for i in range(n)], "sliding_window_pattern"

    if text_type == "gpt_oss":
        if given("layer_types"):
            return from_types({"G", "L"}), "layer_types"
        r.defaults[r.name("layer_types")] = "sliding/full alternating from layer 0 (GptOssConfig)"
        return ["L" if (i + 1) % 2 else "G" for i in range(n)], "num_hidden_layers"

    if family == "llama4":
        if given("layer_types"):
            for k in ("no_rope_layers", "no_rope_layer_interval"):
                r.ignore(k, NO_EFFECT + ": RoPE only (layer_types sets the attention kind)")
            return from_types({"G", "C"}), "layer_types"
        # Llama4TextConfig: no_rope_layers[i] == 1 means layer i USES RoPE (-> chunked attention),
        # 0 means a NoPE layer (-> full attention); default: NoPE every no_rope_layer_interval-th layer.
        nope = r.list("no_rope_layers", int, None, none_ok=True, record=False)
        if nope:
            if len(nope) < n or any(v not in (0, 1) for v in nope):
                raise r.fail("no_rope_layers", f"expected at least {n} entries, each 0 (NoPE) or 1 (RoPE)")
            r.ignore("no_rope_layer_interval", "superseded by no_rope_layers")
            return ["C" if v else "G" for v in nope[:n]], "no_rope_layers"
        interval = r.int("no_rope_layer_interval", d("no_rope_layer_interval"), minimum=1)
        return ["C" if (i + 1) % interval else "G" for i in range(n)], "no_rope_layer_interval"

    if family == "qwen3_next":
        if given("layer_types"):
            r.ignore("full_attention_interval", "superseded by layer_types")
            return from_types({"G", "D"}), "layer_types"
        interval = r.int("full_attention_interval", d("full_attention_interval"), minimum=1)
        return ["D" if (i + 1) % interval else "G" for i in range(n)], "full_attention_interval"

    if text_type in ("mistral", "mixtral"):
        # MistralConfig / MixtralConfig: a non-null sliding_window applies to every layer (layer_types is not
        # read: transformers warns and points to the Ministral classes).
        r.ignore("layer_types", "not modelled: Mistral/Mixtral ignore layer_types (the window applies to every "
                                "layer)")
        window = r.raw("sliding_window", d("sliding_window"), none_ok=True)
        return ["L" if window is not None else "G"] * n, "sliding_window"

    if text_type in ("qwen3", "qwen3_moe"):
        if given("layer_types"):
            for k in ("use_sliding_window", "max_window_layers"):
                r.ignore(k, "superseded by layer_types")
            return from_types({"G", "L"}), "layer_types"
        if r.has("use_sliding_window") and r.bool("use_sliding_window"):
            # Qwen3Config: sliding iff sliding_window is set and layer >= max_window_layers
            start = r.int("max_window_layers")
            return ["L" if i >= start else "G" for i in range(n)], "max_window_layers"
        r.ignore("use_sliding_window", NO_EFFECT + " (false)")
        r.ignore("max_window_layers", "unused: use_sliding_window is false")
        return ["G"] * n, "num_hidden_layers"

    # llama
    if given("layer_types"):
        return from_types({"G"}), "layer_types"
    return ["G"] * n, "num_hidden_layers"


# ------------------------------------------------------------------------------------------------------------


def detect_and_load(path) -> Loaded:
    """By extension: ``.yml`` / ``.yaml`` -> load_maxtext_yaml, ``.json`` -> load_hf_config."""
    suffix = pathlib.Path(path).suffix.lower()
    if suffix in (".yml", ".yaml"):
        return load_maxtext_yaml(path)
    if suffix == ".json":
        return load_hf_config(path)
    raise ValueError(f"{path}: cannot tell the format from the extension {suffix or '(none)'!r}: use .yml or "
                     ".yaml for a MaxText model YAML, .json for a Hugging Face config.json")
