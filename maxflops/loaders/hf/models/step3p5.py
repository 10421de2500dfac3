"""Step 3.7 Flash's text model (StepFun): Step3p7TextConfig (model_type step3p5), modeling_step3p7. GQA layers, full
or sliding-window (layer_types; absent: all full), the sliding ones with their own query-head count
(num_sliding_attention_heads, else the checkpoint's attention_other_setting, else num_attention_heads; a saved
per_layer_config as given), each with a sigmoid output gate per head (g_proj D -> heads: the schema's
attention_head_gate; gating true or 'per-head', the only values its model runs); each FFN a SiLU-gated MLP of
intermediate_size or an MoE (mlp_layer_types, else the checkpoint's moe_layers_enum, else dense before layer 3) of
n_routed_experts of moe_intermediate_size, top num_experts_per_tok, beside one shared MLP of share_expert_dim.

The checkpoint's per-layer lists may run past the decoder over its MTP layers (num_nextn_predict_layers); the class
splits that tail off as the MTP layers' types, and so does this reader. transformers builds no MTP layer in the model;
maxflops counts them in training, each of the type its tail (or the class's derivation) gives it, with the model's
widths (the class's MTP config carries no per-layer overrides). Keys of other readers of the same checkpoint that the
class does not read (num_experts, first_k_dense_replace, n_shared_experts, moe_layer_freq) are accepted where they
describe the model transformers builds and refused by name where they do not."""

from __future__ import annotations

from ....plan import width_rules
from ...reader import NO_EFFECT, Reader
from .. import parts
from ..house import HFType

# Step3p7TextConfig (sliding_window: null; num_nextn_predict_layers: the kwarg's default 0)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 128815, "hidden_size": 4096, "intermediate_size": 11264, "num_hidden_layers": 45,
    "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128, "hidden_act": "silu",
    "num_experts_per_tok": 8, "n_routed_experts": 288, "moe_intermediate_size": 1280, "share_expert_dim": 1280,
    "sliding_window": None, "num_nextn_predict_layers": 0,
}
GATING = True  # Step3p7TextConfig.gating: a class attribute (no field), overridden by a file's value
_ATTENTION = {"full_attention": "G", "sliding_attention": "L"}
_MLP = {"dense": False, "sparse": True}
_FIRST_MOE = 3  # Step3p7TextConfig.__post_init__: absent mlp_layer_types and moe_layers_enum, MoE from layer 3 on


def _mtp(r: Reader) -> int:
    """The MTP layers the per-layer lists may carry past the decoder (a file's num_mtp_layers is read under this name:
    the type's attribute_map)."""
    return r.int("num_nextn_predict_layers", 0, minimum=0, record=False)


def _split(r: Reader, key: str, n: int, kinds: dict, tail_key: str):
    """A per-layer list of ``kinds``' names as the class reads it: n entries, or n + the MTP layers' (the tail split
    off as ``tail_key``, which a saved file gives itself) -> (the decoder's values, the MTP layers' or None)."""
    m = _mtp(r)
    names = r.list(key, str)
    if m and len(names) == n + m:
        names, tail = names[:n], names[n:]
    else:
        tail = None
    if len(names) != n or any(x not in kinds for x in names + (tail or [])):
        raise r.fail(key, f"expected {n} entries (or {n + m} with the MTP layers'), each "
                          + " or ".join(map(repr, kinds)))
    if parts.given(r, tail_key):
        given = r.list(tail_key, str)
        if tail is not None and given != tail:
            raise r.fail(tail_key, f"disagrees with the MTP entries of {key} ({tail!r})")
        if len(given) != m or any(x not in kinds for x in given):
            raise r.fail(tail_key, f"expected {m} entries (num_nextn_predict_layers), each "
                                   + " or ".join(map(repr, kinds)))
        tail = given
    return [kinds[x] for x in names], None if tail is None else [kinds[x] for x in tail]


def layers(r: Reader, d, n: int):
    """layer_types (full_attention or sliding_attention; absent or null: every layer full attention)."""
    if parts.given(r, "layer_types"):
        letters, _ = _split(r, "layer_types", n, _ATTENTION, "mtp_layer_types")
        return letters, "layer_types"
    return ["G"] * n, "num_hidden_layers"


def _moe_layers(r: Reader, n: int):
    """(decoder is-MoE list, MTP layers' list or None, the key that decided): mlp_layer_types, else moe_layers_enum
    (indices, a comma-separated string or a list) over the decoder and its MTP layers, else MoE from layer 3 on (the
    MTP layers then dense), as the class derives them."""
    m = _mtp(r)
    if parts.given(r, "mlp_layer_types"):
        is_moe, tail = _split(r, "mlp_layer_types", n, _MLP, "mtp_mlp_layer_types")
        r.ignore("moe_layers_enum", "superseded by mlp_layer_types")
        return is_moe, tail, "mlp_layer_types"
    if parts.given(r, "moe_layers_enum"):
        raw = r.raw("moe_layers_enum")
        items = raw.split(",") if isinstance(raw, str) else raw if isinstance(raw, list) else None
        try:
            moe = {int(i) for i in items if str(i).strip()}
        except (TypeError, ValueError):
            moe = None
        if moe is None:
            raise r.fail("moe_layers_enum", "expected the MoE layers' indices, a comma-separated string or a list")
        every, key = [i in moe for i in range(n + m)], "moe_layers_enum"
    else:
        every, key = [i >= _FIRST_MOE for i in range(n)] + [False] * m, "num_hidden_layers"
    return every[:n], (every[n:] if m else None), key


def moe(r: Reader, d, o: dict, n: int):
    """The experts (n_routed_experts, also saved as num_local_experts / moe_num_experts), one shared MLP of
    share_expert_dim on every MoE layer, and which layers are MoE."""
    o["num_experts"] = parts.aliased(r, d, "n_routed_experts", ("num_local_experts", "moe_num_experts"), minimum=1)
    o["num_experts_per_tok"] = parts.aliased(r, d, "num_experts_per_tok", ("moe_top_k",), minimum=1)
    o["moe_mlp_dim"] = r.int("moe_intermediate_size", d("moe_intermediate_size"), minimum=1)
    o["shared_experts"] = 1  # Step3p7SparseMoeBlock's shared_experts: one MLP, always built
    o["shared_expert_mlp_dim"] = parts.aliased(r, d, "share_expert_dim", ("share_expert_dims",), minimum=1)
    is_moe, tail, key = _moe_layers(r, n)
    rule = key if key != "num_hidden_layers" else "the class's rule (MoE from layer 3 on)"
    # other readers' names for what the class reads under its own: accepted when they agree with what it builds
    if r.has("num_experts"):
        if r.int("num_experts", record=False) != o["num_experts"]:
            raise r.fail("num_experts", f"transformers' Step3p7 reads the experts' count from n_routed_experts "
                                        f"(num_local_experts), {o['num_experts']}; num_experts is not read")
        r.ignore("num_experts", "superseded: the same count as n_routed_experts, which the class reads")
    if r.has("n_shared_experts"):
        if r.int("n_shared_experts", record=False) != 1:
            raise r.fail("n_shared_experts", "transformers' Step3p7 builds one shared expert (share_expert_dim wide)")
        r.ignore("n_shared_experts", NO_EFFECT + " (1: the one shared expert transformers builds)")
    if r.has("first_k_dense_replace"):
        k = r.int("first_k_dense_replace", record=False)
        if is_moe != [i >= k for i in range(n)]:
            raise r.fail("first_k_dense_replace", f"disagrees with the MoE layers transformers' Step3p7 builds "
                                                  f"(from {rule})")
        r.ignore("first_k_dense_replace", f"superseded: agrees with {rule}")
    if r.has("moe_layer_freq"):  # popped by the class after mlp_layer_types is set: never read
        freq = r.raw("moe_layer_freq", record=False)
        if not isinstance(freq, list) or [bool(f) for f in freq[:n]] != is_moe:
            raise r.fail("moe_layer_freq", f"disagrees with the MoE layers transformers' Step3p7 builds (from {rule})")
        r.ignore("moe_layer_freq", f"superseded: agrees with {rule}")
    o["_mtp_moe"] = (is_moe, tail)  # for mtp(), which pops it
    return is_moe, key


def heads(r: Reader, d, o: dict, pattern: str) -> None:
    """The sliding layers' query heads as layer_widths rules, and the output gate per head."""
    n, h = o["num_decoder_layers"], o["num_query_heads"]
    other = r.mapping("attention_other_setting") if parts.given(r, "attention_other_setting") else {}
    widths = {"num_attention_groups": o["num_kv_heads"], "num_key_value_heads": o["num_kv_heads"],
              "head_dim": o["head_dim"]}
    for key, value in other.items():  # the class reads num_attention_heads of it, and drops the rest
        main = widths.get(key)
        if key in widths and value != main:  # (a width it drops: the file describes layers transformers does not
            # build; a key of no width, a rope setting, is dropped as transformers drops it)
            raise r.fail("attention_other_setting", f"{key}={value!r}: transformers' Step3p7 reads only "
                                                    "num_attention_heads of it and builds the sliding layers with "
                                                    f"the model's {key} ({main!r})")
    if parts.given(r, "per_layer_config"):  # a saved file's (the class's setdefault keeps it whole)
        per = {}
        for idx, entry in r.mapping("per_layer_config").items():
            if not str(idx).isdigit() or int(idx) >= n or not isinstance(entry, dict) or \
                    set(entry) - {"num_attention_heads"}:
                raise r.fail("per_layer_config", f"entry {idx!r}: {entry!r} is not a layer's num_attention_heads")
            per[int(idx)] = entry.get("num_attention_heads", h)
        for key in ("num_sliding_attention_heads", "attention_other_setting"):
            r.ignore(key, "superseded by per_layer_config")
        source = "per_layer_config"
    else:
        if parts.given(r, "num_sliding_attention_heads"):
            sliding, source = r.int("num_sliding_attention_heads", minimum=1), "num_sliding_attention_heads"
            r.ignore("attention_other_setting", "superseded by num_sliding_attention_heads")
        else:
            sliding, source = other.get("num_attention_heads", h), "attention_other_setting"
            if type(sliding) is not int or sliding < 1:
                raise r.fail("attention_other_setting", f"num_attention_heads={sliding!r} is not a head count")
        per = {i: sliding for i in range(n) if pattern[i % len(pattern)] == "L"}
        r.defaults[r.name("per_layer_config")] = {str(i): {"num_attention_heads": x} for i, x in per.items()}
    for i, value in per.items():
        if type(value) is not int or value < 1 or value % o["num_kv_heads"]:
            raise r.fail(source if r.has(source) else "num_attention_heads",
                         f"layer {i}: {value!r} query heads is not a multiple of num_key_value_heads="
                         f"{o['num_kv_heads']}")
    rules = width_rules("num_query_heads", {i: x for i, x in per.items() if x != h})
    if rules:
        o["layer_widths"] = tuple(rules)
    gating = r.raw("gating", GATING)
    if gating is not True and gating != "per-head":  # g_proj is then heads * head_dim wide, and its model multiplies
        # the gate as one per head: the shapes do not broadcast (a RuntimeError in every forward)
        raise r.fail("gating", "transformers' Step3p7 runs only a gate per head (true or 'per-head'); any other "
                               "value builds a per-channel g_proj its attention cannot apply")
    o["attention_head_gate"] = True  # Step3p7Attention's g_proj: D -> one sigmoid gate per head


def mtp(r: Reader, d, o: dict, pattern: str) -> None:
    """The MTP layers (counted in training): each of its type (the lists' tail, else the last decoder layer's
    mixer) and its FFN (the tail, else the class's derivation: dense without moe_layers_enum)."""
    parts.mtp_layers(r, d, o, pattern)
    m, (is_moe, tail) = o["mtp_num_layers"], o.pop("_mtp_moe")
    if not m:
        return
    n = o["num_decoder_layers"]
    mixers = None
    if parts.given(r, "layer_types"):
        mixers = _split(r, "layer_types", n, _ATTENTION, "mtp_layer_types")[1]
    else:
        r.ignore("mtp_layer_types", "overwritten: without layer_types the class makes every MTP layer full attention")
    if not parts.given(r, "mlp_layer_types"):
        r.ignore("mtp_mlp_layer_types", "overwritten: without mlp_layer_types the class derives the MTP layers' "
                                        "FFNs with the decoder's")
    mixers = mixers or [pattern[(n - 1) % len(pattern)]] * m
    ffns = tail if tail is not None else [is_moe[-1]] * m
    if all(f == is_moe[-1] for f in ffns):  # maxflops' MTP module: the last decoder layer's FFN
        o["mtp_layer_pattern"] = "".join(mixers)
        return
    if len(set(zip(mixers, ffns))) > 1:
        raise r.fail("num_nextn_predict_layers", f"MTP layers of different shapes ({list(zip(mixers, ffns))}) with an "
                                                 "FFN other than the last decoder layer's are not modelled")
    # an MTP FFN other than the last layer's: each layer's FFN said (ffn_layer_pattern) and the modules' own shape
    o["ffn_layer_pattern"] = "".join("E" if x else "F" for x in is_moe)
    o.pop("first_num_dense_layers", None)
    o.pop("interleave_moe_layer_step", None)
    o["mtp_layer_pattern"] = mixers[0]
    o["mtp_ffn_layer_pattern"] = "E" if ffns[0] else "F"

TYPE = HFType(
    defaults=DEFAULTS, fixed_activation="silu", attention=parts.gqa, ffn=moe, layers=layers, extras=(heads, mtp),
    attribute_map={"num_key_value_heads": "num_attention_groups",
                   "num_nextn_predict_layers": "num_mtp_layers"},
    no_effect={"moe_router_scaling_factor": "a scalar on the routed experts' output",
               "use_moe_router_bias": "the router's score bias",
               "swiglu_limits": "a clamp on the routed experts' gate and up",
               "swiglu_limits_shared": "a clamp on the shared expert's gate and up",
               "partial_rotary_factors": "the rotary fraction per layer",
               "sparse_attention_config": "transformers' Step3p7 reads its sparse_* names into index_* "
                                                      "fields that no layer it builds uses",
               "index_n_heads": "no layer Step3p7 builds has an indexer",
               "index_head_dim": "no layer Step3p7 builds has an indexer",
               "index_block_size": "no layer Step3p7 builds has an indexer",
               "index_topk_blocks": "no layer Step3p7 builds has an indexer",
               "index_local_blocks": "no layer Step3p7 builds has an indexer"},
)
