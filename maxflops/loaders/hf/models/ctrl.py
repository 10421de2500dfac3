"""CTRL: CTRLConfig, modeling_ctrl; multi-head attention of n_embd // n_head per head (Wq, Wk, Wv, dense), a plain
ReLU MLP of dff, global attention; sinusoidal positions."""

from __future__ import annotations

from ...reader import Reader
from ..house import HFType

# CTRLConfig, under the readers' names (attribute_map)
DEFAULTS = {
    "tie_word_embeddings": True,
    "vocab_size": 246534, "hidden_size": 1280, "dff": 8192, "num_hidden_layers": 48, "num_attention_heads": 16,
}


def _read(r: Reader, d) -> dict:
    """CTRL's blocks: multi-head attention (every head its own keys and values, n_embd // n_head wide), then
    point_wise_feed_forward_network: Linear(n_embd, dff), ReLU, Linear(dff, n_embd); every layer global."""
    o = {"num_decoder_layers": r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1),
         "emb_dim": r.int("hidden_size", d("hidden_size"), minimum=1),
         "vocab_size": r.int("vocab_size", d("vocab_size"), minimum=1)}
    heads = o["num_query_heads"] = o["num_kv_heads"] = r.int("num_attention_heads", d("num_attention_heads"),
                                                              minimum=1)
    o["head_dim"] = o["emb_dim"] // heads
    o["mlp_activations"] = ("relu",)  # nn.ReLU, whatever the file says
    o["mlp_dim"] = r.int("dff", d("dff"), minimum=1)
    o["attention_layer_pattern"] = "G"
    return o


TYPE = HFType(
    defaults=DEFAULTS, read=_read,
    attribute_map={"hidden_size": "n_embd", "num_attention_heads": "n_head", "num_hidden_layers": "n_layer"},
    no_effect={"n_positions": "the sinusoidal position table's length (a gather)", "resid_pdrop": "dropout",
               "embd_pdrop": "dropout"},
)
