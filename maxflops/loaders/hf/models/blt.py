"""BLT (the byte latent transformer): BltConfig, modeling_blt (BltForCausalLM). Per sequence of L bytes and P patches:
the patcher (a small byte LM, frozen and in eval: its layers and its head, forward only in training; run when
patch_in_forward with patching_mode 'entropy'), the local encoder's byte layers, its cross-attention of each patch's
k queries over its bytes ('Y': after its last layer, or after every layer with cross_attn_all_layers, where only the
last one's output is read), the global transformer over the patches (the trunk's patch_layers), the local decoder's
cross-attention of the bytes over their patch's keys ('U': before its first layer, or before every layer) and its
byte layers, the head over the bytes. The patches are the patcher's, from the data: a stated input
(``patches_per_sequence``; 0, the default, one a byte and one more, as transformers patches without its patcher).

Each stack is a sub-config read as its config class reads it (defaults inline below); attention heads are
hidden_size // num_attention_heads wide in every stack (BltSelfAttention and BltCrossAttention compute it; a head_dim
in the file is not read). The encoder's and decoder's byte layers share the window local_attention_window_len
(BltConfig sets the encoder's sliding_window from it and the decoder reads the encoder's mask); the global
transformer is causal over the patches.
"""

from __future__ import annotations

from typing import Any

from ...reader import NO_EFFECT, Reader
from .. import keys
from ..house import HFType

# BltConfig (transformers 5.24)
DEFAULTS = {"tie_word_embeddings": False,
            "vocab_size": 260, "patch_in_forward": True, "patching_mode": "entropy", "local_attention_window_len": 512,
            "cross_attn_k": 2}
# its sub-configs' classes: BltPatcherConfig, BltLocalEncoderConfig, BltLocalDecoderConfig, BltGlobalTransformerConfig
_SUB = {
    "patcher_config": {"vocab_size": 260, "hidden_size": 768, "num_hidden_layers": 14, "num_attention_heads": 12,
                       "num_key_value_heads": None, "intermediate_size": 2048, "sliding_window": 512},
    "encoder_config": {"vocab_size": 260, "cross_attn_all_layers": False, "cross_attn_k": 2, "hidden_size": 1024,
                       "num_attention_heads": 16, "num_key_value_heads": None, "num_hidden_layers": 1,
                       "hidden_act": "silu", "intermediate_size": None},
    "decoder_config": {"vocab_size": 260, "cross_attn_all_layers": True, "cross_attn_k": 2, "hidden_size_global": 2048,
                       "hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": None,
                       "num_hidden_layers": 9, "hidden_act": "silu", "intermediate_size": 2816},
    "global_config": {"hidden_size": 2048, "num_attention_heads": 16, "num_key_value_heads": None,
                      "num_hidden_layers": 25, "hidden_act": "silu", "intermediate_size": 5632},
}
_SUB_NO_EFFECT = {
    "head_dim": "BltSelfAttention and BltCrossAttention use hidden_size // num_attention_heads",
    "model_type": NO_EFFECT, "dropout": "a dropout",
    "encoder_cross_output_size": "recomputed by BltConfig from the encoder's width and cross_attn_k",
    "sliding_window": "set by BltConfig from local_attention_window_len",
}
_NO_EFFECT = {
    "patch_size": "the patcher's rule (data): state patches_per_sequence",  # (a null is refused)
    "patching_threshold": "the patcher's rule (data): state patches_per_sequence",
    "patching_batch_size": "the patcher's batching (the same FLOPs)",
    "max_patch_length": "splits long patches (data): state patches_per_sequence",
    "encoder_hash_byte_group_size": "hash n-gram embeddings (table lookups, no matmul)",
    "encoder_hash_byte_group_vocab": "hash n-gram embeddings (table lookups, no matmul)",
    "encoder_hash_byte_group_nb_functions": "hash n-gram embeddings (table lookups, no matmul)",
}


def _stack(s: Reader, d) -> dict:
    """One stack's widths: layers, hidden width, heads (KV heads: null is the query heads), head width hidden //
    heads, FFN width (null: int(8 hidden / 3), each of the four config classes' rule)."""
    D = s.int("hidden_size", d("hidden_size"), minimum=1)
    H = s.int("num_attention_heads", d("num_attention_heads"), minimum=1)
    if D % H:
        raise s.fail("num_attention_heads", f"does not divide hidden_size={D} (the heads are hidden_size // "
                                            "num_attention_heads wide)", H)
    Hkv = s.int("num_key_value_heads", d("num_key_value_heads"), minimum=1, none_ok=True) or H
    if H % Hkv:
        raise s.fail("num_key_value_heads", f"does not divide num_attention_heads={H}", Hkv)
    ffn = s.int("intermediate_size", d("intermediate_size"), minimum=1, none_ok=True)
    if ffn is None:
        ffn = int(8 * D / 3)
    return {"layers": s.int("num_hidden_layers", d("num_hidden_layers"), minimum=1), "emb_dim": D,
            "num_query_heads": H, "num_kv_heads": Hkv, "head_dim": D // H, "mlp_dim": ffn}


def _rules(stack: dict, base: dict, layers: list) -> list:
    """layer_widths rules giving ``layers`` the stack's widths where they differ from the base's."""
    if not layers:
        return []
    span = f"{layers[0]}-{layers[-1]}" if len(layers) > 1 else str(layers[0])
    return [f"{k}@{span}={stack[k]}" for k in ("emb_dim", "num_query_heads", "num_kv_heads", "head_dim", "mlp_dim",
                                               "sliding_window_size") if k in stack and stack[k] != base.get(k)]


def _read(r: Reader, d) -> dict:
    o: dict[str, Any] = {"vocab_size": r.int("vocab_size", d("vocab_size"), minimum=1)}
    k = o["patch_cross_k"] = r.int("cross_attn_k", d("cross_attn_k"), minimum=1)
    window = r.int("local_attention_window_len", d("local_attention_window_len"), minimum=1, none_ok=True)
    subs = {key: (r.sub(key), _SUB[key].get) for key in _SUB}  # each sub-config's reader and its default-of
    (enc, de), (dec, dd), (glob, dg), (pat, dp) = (subs[x] for x in ("encoder_config", "decoder_config",
                                                                    "global_config", "patcher_config"))
    e, g = _stack(enc, de), _stack(glob, dg)
    t = _stack(dec, dd)
    for s, dflt in ((enc, de), (dec, dd)):
        if s.int("cross_attn_k", dflt("cross_attn_k"), minimum=1) != k:
            raise s.fail("cross_attn_k", f"differs from cross_attn_k={k} (BltModel's masks read the top-level one, "
                                         "the stack's projection its own: transformers cannot run it)")
    if t["emb_dim"] != e["emb_dim"]:
        raise dec.fail("hidden_size", f"differs from encoder_config.hidden_size={e['emb_dim']} (the local decoder "
                                      "runs on the encoder's byte states: transformers cannot run it)")
    if dec.int("hidden_size_global", dd("hidden_size_global"), minimum=1) != g["emb_dim"]:
        raise dec.fail("hidden_size_global", f"differs from global_config.hidden_size={g['emb_dim']} (the decoder "
                                             "projects the global transformer's output: transformers cannot run it)")
    enc.ignore("hidden_size_global", NO_EFFECT + " (the encoder does not read it)")
    acts = {s.activation("hidden_act", dflt("hidden_act")) for s, dflt in ((enc, de), (dec, dd), (glob, dg))}
    o["mlp_activations"] = (sorted(acts)[0], "linear")  # (each stack's own: an elementwise choice, no FLOPs)
    for s in (enc, dec, glob):
        s.ignore("vocab_size", NO_EFFECT + " (a table's rows, or none: the head is the model's vocab_size)")
    o["emb_dim"], o["num_query_heads"], o["num_kv_heads"], o["head_dim"], o["mlp_dim"] = (
        e[x] for x in ("emb_dim", "num_query_heads", "num_kv_heads", "head_dim", "mlp_dim"))
    letters, ffns, rules = [], [], []
    # (BltModel runs its patcher when patch_in_forward and patching_mode are 'entropy'; a null is falsy there)
    patcher = bool(r.raw("patch_in_forward", d("patch_in_forward"), none_ok=True)) and \
        r.raw("patching_mode", d("patching_mode"), none_ok=True) == "entropy"
    p_window = patcher and pat.int("sliding_window", dp("sliding_window"), minimum=1, none_ok=True)
    base = dict(e, sliding_window_size=window or p_window or 0)  # (the config's window: the bytes', else the patcher's)
    if patcher:  # the entropy model: frozen, in eval; its head after its last layer
        p = _stack(pat, dp)
        if pat.int("vocab_size", dp("vocab_size"), minimum=1) != o["vocab_size"]:
            raise pat.fail("vocab_size", f"differs from vocab_size={o['vocab_size']}: the patcher's head is priced at "
                                         "the model's vocabulary (it reads the same bytes)")
        if r.raw("patch_size", 4, none_ok=True, record=False) is None:
            raise r.fail("patch_size", "null: transformers' patcher then opens a patch at every byte, L a sequence, "
                                       "where maxflops' patches_per_sequence=0 is transformers' L + 1; give "
                                       "patch_size, and count with patches_per_sequence set to the sequence length")
        if p_window:
            p["sliding_window_size"] = p_window
        first = len(letters)
        letters += ["L" if p_window else "G"] * p["layers"]
        ffns += ["F"] * p["layers"]
        rules += _rules(p, base, list(range(first, len(letters))))
        o["frozen_layers"] = list(range(first, len(letters)))
        o["patcher_head_layer"] = len(letters) - 1
        pat.ignore("hidden_act", "the patcher's activation is silu whatever the file says (BltPatcherConfig)")
    else:
        for key in pat.data:
            pat.ignore(key, "unused: no patcher runs (patch_in_forward false, or patching_mode not 'entropy')")
        r.ignore("patching_mode", NO_EFFECT + " (no patcher runs)")
    byte = "L" if window else "G"
    every = enc.bool("cross_attn_all_layers", de("cross_attn_all_layers"))
    dead = []
    for i in range(e["layers"]):
        letters.append(byte)
        ffns.append("F")
        if every or i == e["layers"] - 1:
            if i < e["layers"] - 1:
                dead.append(len(letters))  # a cross-attention whose output the next one replaces
            letters.append("Y")
            ffns.append("-")
    if dead:
        o["frozen_layers"] = o.get("frozen_layers", []) + dead
    first = len(letters)
    letters += ["G"] * g["layers"]
    ffns += ["F"] * g["layers"]
    o["patch_layers"] = list(range(first, len(letters)))
    rules += _rules(g, base, o["patch_layers"])
    every = dec.bool("cross_attn_all_layers", dd("cross_attn_all_layers"))
    t["sliding_window_size"] = window or base["sliding_window_size"]  # (its 'G' layers: any window is inert)
    decoder = []
    for i in range(t["layers"]):
        if every or i == 0:
            decoder.append(len(letters))
            letters.append("U")
            ffns.append("-")
        decoder.append(len(letters))
        letters.append(byte)
        ffns.append("F")
    rules += _rules(t, base, decoder)  # (the decoder's own heads and FFN, where they differ: its layers in a row)
    o["attention_layer_pattern"], o["ffn_layer_pattern"] = "".join(letters), "".join(ffns)
    o["num_decoder_layers"] = len(letters)
    if base["sliding_window_size"]:
        o["sliding_window_size"] = base["sliding_window_size"]
    if rules:
        o["layer_widths"] = tuple(rules)
    for s in (enc, dec, glob, pat):
        r.absorb(s, lambda key: _SUB_NO_EFFECT.get(key) or keys.classify(key))
    for key, why in _NO_EFFECT.items():
        r.ignore(key, NO_EFFECT + ": " + why)
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read)
