"""Helium: HeliumConfig, modeling_helium; as Llama (GQA, a gated MLP, global attention), the output projection
hidden_size -> hidden_size (so heads x head_dim must be hidden_size)."""

from __future__ import annotations

from ...reader import Reader
from ..house import HFType

# HeliumConfig
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 48000, "hidden_size": 2560, "intermediate_size": 7040, "num_hidden_layers": 24,
    "num_attention_heads": 20, "num_key_value_heads": 20, "head_dim": 128, "hidden_act": "silu",
}


def _o_proj(r: Reader, d, o: dict, pattern: str) -> None:
    # HeliumAttention: o_proj = nn.Linear(config.hidden_size, config.hidden_size)
    if o["num_query_heads"] * o["head_dim"] != o["emb_dim"]:
        raise r.fail("head_dim", f"num_attention_heads x head_dim = {o['num_query_heads'] * o['head_dim']} is not "
                                 f"hidden_size={o['emb_dim']}: Helium's o_proj is hidden_size -> hidden_size, so "
                                 "transformers' model cannot run", o["head_dim"])


TYPE = HFType(defaults=DEFAULTS, extras=(_o_proj,))
