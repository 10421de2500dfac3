"""Llama-Nemotron (NAS): NVIDIA's nemotron-nas files (architectures DeciLMForCausalLM, trust_remote_code: the repo's
own configuration_decilm.DeciLMConfig and modeling_decilm, a Llama whose layers a neural architecture search made
unlike): block_configs gives each layer its attention (no_op: none; else GQA with num_attention_heads //
n_heads_in_group KV heads) and its FFN (no_op: none; else a SiLU-gated MLP of width ffn_mult -> the multiple of 256 at
or above int(2 * ffn_mult * hidden_size / 3), or its own intermediate_size). The widths that differ from the most
common ones are the schema's layer_widths; layers without attention or an FFN are '-' in the patterns. transformers
5.24 has no nemotron-nas config class: no class defaults, so every key read is required (the top-level
intermediate_size and num_key_value_heads are not read: each block gives its own)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ....plan import width_rules
from ...reader import NO_EFFECT, Reader
from ..house import HFType

# no transformers config class: nothing is defaulted (a file lacking a key read is refused, naming it)
DEFAULTS: dict = {}

# block_configs' keys that change nothing at the values the published files give, and the value (anything else is
# a form maxflops does not model, refused naming it)
_INERT = {"attention": {"replace_with_linear": False, "sparsify": None, "num_sink_tokens": None, "unshifted_sink": False,
                        "use_prefill_window_in_sink_attention": False, "window_length": None},
          "ffn": {"replace_with_linear": False, "sparsify": None}}


def ffn_width(ffn_mult: float, hidden: int) -> int:
    """DeciLM's FFN width: int(2 * ffn_mult * hidden / 3) raised to a multiple of 256."""
    width = int(2 * ffn_mult * hidden / 3)
    return width if width % 256 == 0 else width + 256 - width % 256


def _blocks(r: Reader, n: int, heads: int, hidden: int, act: str) -> list:
    """Per layer: (KV heads or 0 without attention, FFN width or 0 without an FFN)."""
    blocks = r.list("block_configs", dict)
    if len(blocks) != n:
        raise r.fail("block_configs", f"has {len(blocks)} entries for num_hidden_layers={n}")
    out = []
    for i, block in enumerate(blocks):
        def bad(msg):
            return r.fail("block_configs", f"layer {i}: {msg}")
        attn, ffn = block.get("attention"), block.get("ffn")
        if not isinstance(attn, dict) or not isinstance(ffn, dict):
            raise bad(f"{block!r} needs an 'attention' and an 'ffn' entry")
        for part, entry in (("attention", attn), ("ffn", ffn)):
            for key, value in entry.items():
                if key in _INERT[part] and value != _INERT[part][key]:
                    raise bad(f"{part}.{key}={value!r} is not modelled (only {_INERT[part][key]!r})")
        kv = 0
        if not attn.get("no_op", False):
            group = attn.get("n_heads_in_group")
            if type(group) is not int or group < 1 or heads % group:
                raise bad(f"attention.n_heads_in_group={group!r} does not divide num_attention_heads={heads}")
            kv = heads // group
        width = 0
        if not ffn.get("no_op", False):
            if ffn.get("hidden_act", act) != act:
                raise bad(f"ffn.hidden_act={ffn['hidden_act']!r}: an FFN activation of its own is not modelled")
            if "ffn_mult" in ffn:
                mult = ffn["ffn_mult"]
                if isinstance(mult, bool) or not isinstance(mult, (int, float)) or mult <= 0:
                    raise bad(f"ffn.ffn_mult={mult!r} is not a positive number")
                width = ffn_width(mult, hidden)
            else:
                width = ffn.get("intermediate_size")
                if type(width) is not int or width < 1:
                    raise bad(f"ffn needs ffn_mult or a positive intermediate_size, got {ffn!r}")
        if not kv and not width:
            raise bad("neither attention nor an FFN (both no_op)")
        out.append((kv, width))
    return out


def _read(r: Reader, d) -> dict:
    o: dict[str, Any] = {}
    n = o["num_decoder_layers"] = r.int("num_hidden_layers", minimum=1)
    hidden = o["emb_dim"] = r.int("hidden_size", minimum=1)
    o["vocab_size"] = r.int("vocab_size", minimum=1)
    heads = o["num_query_heads"] = r.int("num_attention_heads", minimum=1)
    head_dim = r.int("head_dim", None, minimum=1, none_ok=True) if r.has("head_dim") else None
    o["head_dim"] = head_dim or hidden // heads  # (DeciLMConfig, as LlamaConfig: hidden_size // heads when absent)
    act = r.activation("hidden_act")
    o["mlp_activations"] = (act, "linear")
    blocks = _blocks(r, n, heads, hidden, r.str("hidden_act"))
    for key in ("intermediate_size", "num_key_value_heads"):
        r.raw(key, None, none_ok=True, record=False)
        r.ignore(key, "not read: each layer's block_configs entry gives its own")
    kvs = Counter(kv for kv, _ in blocks if kv)
    widths = Counter(w for _, w in blocks if w)
    o["num_kv_heads"] = kvs.most_common(1)[0][0] if kvs else heads
    o["mlp_dim"] = widths.most_common(1)[0][0] if widths else 4 * hidden
    o["attention_layer_pattern"] = "".join("G" if kv else "-" for kv, _ in blocks)
    if any(not w for _, w in blocks):
        o["ffn_layer_pattern"] = "".join("F" if w else "-" for _, w in blocks)
    rules = width_rules("num_kv_heads", {i: kv for i, (kv, _) in enumerate(blocks) if kv and kv != o["num_kv_heads"]})
    rules += width_rules("mlp_dim", {i: w for i, (_, w) in enumerate(blocks) if w and w != o["mlp_dim"]})
    if rules:
        o["layer_widths"] = tuple(rules)
    for key in ("attention_bias", "mlp_bias"):
        if r.raw(key, False, none_ok=True, record=False):
            r.ignore(key, NO_EFFECT + " (biases add no matmul)")
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read, name="nemotron-nas")
