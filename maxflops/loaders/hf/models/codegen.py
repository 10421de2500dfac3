"""CodeGen: CodeGenConfig, modeling_codegen; multi-head attention of n_embd // n_head per head (one fused q/k/v
matrix, out_proj), a plain MLP (fc_in, act, fc_out) of n_inner (null: 4 * n_embd) beside it (a parallel residual),
global attention; partial rotary positions."""

from __future__ import annotations

from ....reader import Reader
from ..house import HFType, get, read_decoder

# CodeGenConfig, under the readers' names (attribute_map); n_inner: null, the model uses 4 * n_embd
DEFAULTS = {
    "vocab_size": 50400, "hidden_size": 4096, "num_hidden_layers": 28, "num_attention_heads": 16,
    "activation_function": "gelu_new",
}


def _mha(r: Reader, d, o: dict) -> None:
    """CodeGenAttention: n_embd // n_head per head, every head its own keys and values."""
    o["head_dim"] = o["emb_dim"] // o["num_query_heads"]
    o["num_kv_heads"] = o["num_query_heads"]
    r.ignore("head_dim", "not read by CodeGenAttention (n_embd // n_head per head)")
    r.ignore("num_key_value_heads", "not read: every head has its own keys and values (multi-head attention)")


def _read(r: Reader, d) -> dict:
    """The pipeline, n_inner null or absent read as 4 * n_embd (CodeGenBlock)."""
    hidden = r.int("hidden_size", d("hidden_size"), minimum=1)
    return read_decoder(r, get(r.model_type), lambda key: 4 * hidden if key == "n_inner" else d(key))


TYPE = HFType(
    defaults=DEFAULTS, read=_read, activation="activation_function", gated=False, attention=_mha,
    dense_key="n_inner",
    attribute_map={"hidden_size": "n_embd", "num_attention_heads": "n_head", "num_hidden_layers": "n_layer"},
    no_effect={"n_positions": "the rotary table's length (no matmul)", "n_ctx": "a context length (no matmul)",
               "resid_pdrop": "dropout", "embd_pdrop": "dropout", "attn_pdrop": "dropout"},
)
