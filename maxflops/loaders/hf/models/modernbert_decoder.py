"""ModernBERT-decoder: ModernBertDecoderConfig, modeling_modernbert_decoder. GQA-free attention (q, k, v, Wo over all
heads), global ('full_attention') or sliding ('sliding_attention', a window of local_attention // 2 keys: the class
derives sliding_window from it), a GLU MLP (Wi D -> 2 x intermediate_size: act(input) * gate, then Wo), and before the
head ModernBertDecoderPredictionHead, a D -> D projection with its activation and norm (head_dense)."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader, fit_pattern
from .. import parts
from ..house import HFType

# ModernBertDecoderConfig (layer_types and sliding_window: post-init rules)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 50368, "hidden_size": 768, "intermediate_size": 1152, "num_hidden_layers": 22,
    "num_attention_heads": 12, "hidden_activation": "gelu", "local_attention": 128,
}


def _read(r: Reader, d) -> dict:
    o: dict = {}
    n = o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    D = o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    heads = o["num_query_heads"] = o["num_kv_heads"] = r.int("num_attention_heads", d("num_attention_heads"),
                                                             minimum=1)
    o["head_dim"] = D // heads  # ModernBertDecoderAttention: hidden_size // num_attention_heads per head
    o["mlp_activations"] = (r.activation("hidden_activation", d("hidden_activation")), "linear")
    o["mlp_dim"] = r.int("intermediate_size", d("intermediate_size"), minimum=1)
    if parts.given(r, "layer_types"):
        r.ignore("global_attn_every_n_layers", "superseded by layer_types")
        letters, key = parts.layer_types(r, n, {"G", "L"}), "layer_types"
    else:  # the class's rule: global on every global_attn_every_n_layers-th layer from the first
        every = r.int("global_attn_every_n_layers", 3, minimum=1)
        letters, key = ["G" if i % every == 0 else "L" for i in range(n)], "global_attn_every_n_layers"
    pattern = o["attention_layer_pattern"] = fit_pattern(letters, r, key)
    local = r.int("local_attention", d("local_attention"), minimum=0, none_ok=True)
    if "L" in pattern:
        if not local or local // 2 < 1:
            raise r.fail("local_attention", "the layers include sliding attention, whose window (local_attention "
                                            "// 2) must be at least 1", local)
        o["sliding_window_size"] = local // 2
    r.ignore("sliding_window", "derived: ModernBertDecoderConfig sets it to local_attention // 2")
    o["head_dense"] = True  # ModernBertDecoderPredictionHead: dense D -> D, its activation and norm
    for key in ("classifier_activation", "classifier_bias", "decoder_bias", "attention_bias", "mlp_bias",
                "norm_bias", "classifier_dropout", "embedding_dropout", "mlp_dropout", "initializer_cutoff_factor",
                "cls_token_id", "sep_token_id"):
        r.ignore(key, NO_EFFECT)
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read, name="modernbert-decoder")
