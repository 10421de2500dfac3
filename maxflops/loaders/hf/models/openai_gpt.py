"""GPT (OpenAI GPT-1): OpenAIGPTConfig, modeling_openai; as GPT-2 (multi-head attention of n_embd // n_head per head,
one fused q/k/v matrix, global attention), a plain MLP of 4 * n_embd always, the activation read from afn."""

from __future__ import annotations

from ...reader import Reader
from .. import parts
from ..house import HFType, get, read_decoder
from .gpt2 import SUMMARY

# OpenAIGPTConfig, under the readers' names (attribute_map)
DEFAULTS = {
    "n_positions": 512,
    "tie_word_embeddings": True,
    "vocab_size": 40478, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "afn": "gelu",
}


def _read(r: Reader, d) -> dict:
    """The pipeline; the MLP is 4 * n_embd wide (Block: MLP(4 * nx, config)), no key sets it."""
    o = read_decoder(r, get(r.model_type), d)
    o["mlp_dim"] = 4 * o["emb_dim"]
    return o


TYPE = HFType(
    defaults=DEFAULTS, positions=("n_positions", 0),  # the learned position table
    read=_read, activation="afn", gated=False, attention=parts.mha, dense_key="hidden_size",
    attribute_map={"hidden_size": "n_embd", "num_attention_heads": "n_head", "num_hidden_layers": "n_layer"},
    no_effect={
        "resid_pdrop": "dropout", "embd_pdrop": "dropout", "attn_pdrop": "dropout",
        "summary_type": SUMMARY, "summary_use_proj": SUMMARY, "summary_activation": SUMMARY,
        "summary_proj_to_labels": SUMMARY, "summary_first_dropout": SUMMARY,
    }, name="openai-gpt")
