"""xLSTM: xLSTMConfig, modeling_xlstm (xLSTM-7B's architecture); every block an mLSTM layer ('T') and a gated FFN."""

from __future__ import annotations

from typing import Any

from ...reader import Reader
from ..house import HFType

# xLSTMConfig (transformers 5.24; embedding_dim and num_blocks: aliases the class fills from each other)
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 50304, "hidden_size": 4096, "num_hidden_layers": 32, "num_heads": 8, "qk_dim_factor": 0.5,
    "v_dim_factor": 1.0, "ffn_proj_factor": 2.667, "ffn_round_up_to_multiple_of": 64, "chunk_size": 64,
}


def _filled(r: Reader, key: str, other: str, default: int) -> int:
    """xLSTMConfig's rule: ``key`` (its class default when absent), ``other`` only where ``key`` is null; ``other``
    beside a value of ``key`` must agree with it (the model builds ``key``)."""
    value = r.int(key, default, minimum=1, none_ok=True)
    if value is None:
        return r.int(other, minimum=1)
    if r.has(other) and r.raw(other, none_ok=True, record=False) is not None:
        if r.int(other, record=False) != value:
            raise r.fail(other, f"disagrees with {key}={value}{'' if r.has(key) else ' (its class default)'}: "
                                f"xLSTMConfig builds {key} and fills {other} only where {key} is null")
    r.ignore(other, f"superseded: the model builds {key}")
    return value


def _read(r: Reader, d) -> dict:
    """xLSTMConfig as modeling_xlstm's native code builds the model: hidden_size (or embedding_dim) and
    num_hidden_layers (or num_blocks); per block an mLSTM layer of num_heads heads, q and k int(hidden_size x
    qk_dim_factor) wide, v and the output gate int(hidden_size x v_dim_factor) (the layer's own rule: the config's
    qk_dim / v_dim properties round to 64 and are not what it builds), and a gated SiLU FFN of hidden_size x
    ffn_proj_factor rounded up to ffn_round_up_to_multiple_of. The kernels (mode, chunkwise_kernel, ...) are how it
    runs: chunk_size sets mlstm_chunk_size; say mlstm_impl ('chunked_then_recurrent' is transformers' 'inference'
    mode, 'chunked' its 'train_with_padding')."""
    o: dict[str, Any] = {}
    D = o["emb_dim"] = _filled(r, "hidden_size", "embedding_dim", d("hidden_size"))
    o["num_decoder_layers"] = _filled(r, "num_hidden_layers", "num_blocks", d("num_hidden_layers"))
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    H = o["mlstm_num_heads"] = r.int("num_heads", d("num_heads"), minimum=1)
    for key, target in (("qk_dim_factor", "mlstm_qk_dim"), ("v_dim_factor", "mlstm_v_dim")):
        factor = r.float(key, d(key))
        width = int(D * factor)
        if width < H or width % H:
            raise r.fail(key, f"gives a width of int({D} x {factor}) = {width}, not a whole number of widths for "
                              f"num_heads={H}")
        if width != (D // 2 if key == "qk_dim_factor" else D):
            o[target] = width
    o["attention_layer_pattern"] = "T"
    factor, multiple = r.float("ffn_proj_factor", d("ffn_proj_factor")), \
        r.int("ffn_round_up_to_multiple_of", d("ffn_round_up_to_multiple_of"), minimum=1)
    o["mlp_dim"] = int(((D * factor + multiple - 1) // multiple) * multiple)  # (the class's rounding, in floats)
    if o["mlp_dim"] < 1:
        raise r.fail("ffn_proj_factor", f"gives an FFN width of {o['mlp_dim']}")
    o["mlp_activations"] = ("silu", "linear")
    o["mlstm_chunk_size"] = r.int("chunk_size", d("chunk_size"), minimum=1)
    return o


TYPE = HFType(
    defaults=DEFAULTS, read=_read,
    no_effect={key: "how the mLSTM runs (hardware: mlstm_impl, mlstm_chunk_size)" for key in (
        "mode", "chunkwise_kernel", "sequence_kernel", "step_kernel", "return_last_states", "autocast_kernel_dtype",
        "inference_state_dtype", "max_inference_chunksize")} | {
        "weight_mode": "q, k, v and the gates as separate or fused matmuls: the same FLOPs",
        "use_bias": "biases (no matmul)", "add_out_norm": "a norm before the head", "gate_soft_cap": "a tanh cap on "
        "the gates (elementwise)", "output_logit_soft_cap": "a tanh cap on the logits (elementwise)",
        "norm_reduction_force_float32": "a dtype switch", "eps": "the mLSTM's denominator's epsilon"},
)
