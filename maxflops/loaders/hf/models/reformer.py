"""Reformer: ReformerConfig, modeling_reformer (ReformerModelWithLMHead); reversible layers, each an LSH ('E') or a
chunked local ('O') attention and a plain FFN, over two streams of D; the head reads both (2D)."""

from __future__ import annotations

from typing import Any

from ...reader import NO_EFFECT, Reader
from ..house import HFType

# ReformerConfig (transformers 5.24)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 320, "hidden_size": 256, "num_attention_heads": 12, "attention_head_size": 64,
    "attn_layers": ["local", "lsh", "local", "lsh", "local", "lsh"], "feed_forward_size": 512, "hidden_act": "relu",
    "is_decoder": False, "lsh_attn_chunk_length": 64, "lsh_num_chunks_before": 1, "lsh_num_chunks_after": 0,
    "num_hashes": 1, "num_buckets": None, "max_position_embeddings": 4096, "local_attn_chunk_length": 64,
    "local_num_chunks_before": 1, "local_num_chunks_after": 0, "axial_pos_embds": True,
    "axial_pos_embds_dim": [64, 192],
}
LETTER = {"lsh": "E", "local": "O"}


def _hash_width(r: Reader, d) -> int:
    """num_buckets as the hash reads it: an even int n (n / 2 rotation columns), a list of even factors (their sum
    / 2), or null (0: transformers sets it from the first sequence's length)."""
    value = r.raw("num_buckets", d("num_buckets"), none_ok=True)
    if value is None:
        return 0
    factors = [value] if isinstance(value, int) and not isinstance(value, bool) else \
        r.list("num_buckets", int, record=False)
    if not factors or any(f < 2 or f % 2 for f in factors):
        raise r.fail("num_buckets", "every bucket count (or factor) must be an even number of at least 2 (the hash "
                                    "splits its rotations in halves)")
    return sum(factors) // 2


def _read(r: Reader, d) -> dict:
    """ReformerConfig as ReformerModelWithLMHead builds it: one layer per attn_layers entry ('lsh': LSH attention,
    'local': chunked local attention), each reversible with a plain FFN of feed_forward_size; num_attention_heads
    heads of attention_head_size; the head over both streams (2 x hidden_size). The language model asserts
    is_decoder and no chunks after (a causal mask)."""
    o: dict[str, Any] = {"remat_policy": "reversible"}
    kinds = r.list("attn_layers", str, d("attn_layers"))
    bad = [k for k in kinds if k not in LETTER]
    if not kinds or bad:
        raise r.fail("attn_layers", f"{bad[0]!r} is not a Reformer attention ('lsh' or 'local')" if bad else
                     "no layers")
    o["attention_layer_pattern"] = "".join(LETTER[k] for k in kinds)
    o["num_decoder_layers"] = len(kinds)
    r.ignore("num_hidden_layers", "superseded: ReformerConfig sets it to len(attn_layers)")
    D = o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["head_input_dim"] = 2 * D
    H = o["num_query_heads"] = o["num_kv_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
    o["head_dim"] = r.int("attention_head_size", d("attention_head_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    o["mlp_dim"] = r.int("feed_forward_size", d("feed_forward_size"), minimum=1)
    o["mlp_activations"] = (r.activation("hidden_act", d("hidden_act")),)
    if not r.bool("is_decoder", d("is_decoder")):
        raise r.fail("is_decoder", "ReformerModelWithLMHead asserts is_decoder=True (a Reformer with is_decoder "
                                   "false is ReformerForMaskedLM's bidirectional encoder)", False)
    for kind, prefix, target in (("lsh", "lsh", "lsh"), ("local", "local", "local")):
        keys = (f"{prefix}_attn_chunk_length", f"{prefix}_num_chunks_before", f"{prefix}_num_chunks_after")
        if kind not in kinds:
            for key in keys:
                r.ignore(key, f"unused: no {kind!r} layers")
            continue
        o[f"{target}_chunk_length"] = r.int(keys[0], d(keys[0]), minimum=1)
        o[f"{target}_chunks_before"] = r.int(keys[1], d(keys[1]))
        if r.int(keys[2], d(keys[2])):
            raise r.fail(keys[2], f"ReformerModelWithLMHead asserts {keys[2]}=0 (a causal mask)")
    if "lsh" in kinds:
        o["lsh_num_hashes"] = r.int("num_hashes", d("num_hashes"), minimum=1)
        width = _hash_width(r, d)
        if width:
            o["lsh_hash_width"] = width
            r.ignore("max_position_embeddings", NO_EFFECT + " (its only FLOPs use: the rule for an unset "
                                                            "num_buckets)")
        else:
            o["lsh_max_positions"] = r.int("max_position_embeddings", d("max_position_embeddings"), minimum=1)
    else:
        for key in ("num_hashes", "num_buckets", "hash_seed", "max_position_embeddings"):
            r.ignore(key, "unused: no 'lsh' layers")
    if r.bool("axial_pos_embds", d("axial_pos_embds")):
        dims = r.list("axial_pos_embds_dim", int, d("axial_pos_embds_dim"))
        if sum(dims) != D:
            raise r.fail("axial_pos_embds_dim", f"sums to {sum(dims)}, not hidden_size={D} (transformers' "
                                                "AxialPositionEmbeddings refuses it)")
    return o


TYPE = HFType(
    defaults=DEFAULTS, read=_read,
    no_effect={
        "axial_pos_shape": "the axial position embeddings' factors (a table, no matmul)",
        "axial_pos_embds_dim": "the axial position embeddings' widths (a table, no matmul)",
        "axial_norm_std": "an initializer", "hash_seed": "the random rotations' seed",
        "chunk_size_lm_head": "the head run in chunks: the same FLOPs",
        "lsh_attention_probs_dropout_prob": "a dropout", "local_attention_probs_dropout_prob": "a dropout",
        "hidden_dropout_prob": "a dropout", "classifier_dropout": "a classification head's dropout (not the LM's)"},
)
