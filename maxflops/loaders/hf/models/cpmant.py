"""CPM-Ant: CpmAntConfig, modeling_cpmant; prompt_length prompt tokens run ahead of every sequence by the layers
(the schema's prompt_tokens; the head reads the sequence's own tokens), every token attending every other (its
context mask is all ones: bidirectional, causal=False; decode is not modelled then), multi-head attention of
num_attention_heads heads of dim_head, a GELU-gated FFN of dim_ff. Its relative position bias and segment
embeddings are lookups added to the scores and the input: no matmul."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader
from ..house import HFType

# CpmAntConfig
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 30720, "hidden_size": 4096, "num_attention_heads": 32, "dim_head": 128, "dim_ff": 10240,
    "num_hidden_layers": 48, "prompt_length": 32,
}


def _read(r: Reader, d) -> dict:
    heads = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
    o = {"num_decoder_layers": r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1),
         "emb_dim": r.int("hidden_size", d("hidden_size"), minimum=1),
         "vocab_size": r.int("vocab_size", d("vocab_size"), minimum=1),
         "num_query_heads": heads, "num_kv_heads": heads,
         "head_dim": r.int("dim_head", d("dim_head"), minimum=1),
         "mlp_dim": r.int("dim_ff", d("dim_ff"), minimum=1),
         "mlp_activations": ("gelu", "linear"),  # CpmAntDenseGatedACT: GELU(w_0 x) * w_1 x
         "attention_layer_pattern": "G", "causal": False}
    prompt = r.int("prompt_length", d("prompt_length"), minimum=0)
    if prompt:
        o["prompt_tokens"] = prompt
    for key, why in (("prompt_types", "the prompt embedding's rows (a lookup)"),
                     ("segment_types", "the segment embedding's rows (a lookup)"),
                     ("position_bias_num_buckets", "the relative position bias's buckets (a lookup added to the "
                                                   "scores)"),
                     ("position_bias_max_distance", "the relative position bias's range (a lookup)"),
                     ("init_std", "an initialization scale"), ("dropout_p", "dropout"), ("eps", "the norms' epsilon")):
        r.ignore(key, f"{NO_EFFECT} ({why})")
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read, ties=False)  # (CpmAntForCausalLM: _tied_weights_keys = {})
