"""Per-layer embeddings' part of the Flax model (Gemma 4's, Gemma 3n's)."""

from __future__ import annotations

import jax

from ...proofkit.kernels import dense, rms


def per_layer(c, x, param):
    """The embedding x [B, L, D] projected D -> layers x P, normed: [B, L, layers, P], one slice per decoder layer."""
    # (attention residuals' layers add no per-layer embedding; mHC's streams are no [B, L, D] to project)
    for key in ("layer_loops", "mtp_num_layers", "prompt_tokens", "attn_res_block_size"):
        if c[key]:
            raise ValueError(f"{key}: per-layer embeddings with it are not modelled in the Flax model")
    if c["mhc_expansion_rate"] > 1:
        raise ValueError("mhc_expansion_rate: per-layer embeddings with it are not modelled in the Flax model")
    B, L, D = x.shape
    n, P = c["num_decoder_layers"], c["per_layer_input_dim"]
    with jax.named_scope("per_layer_emb_proj"):
        ple = dense(x, param("ple_proj", (D, n * P)))
    return rms(ple.reshape(B, L, n, P))


def after_layer(c, p, x, ple):
    """What the layer's output x gains: a gate D -> P of it times the layer's slice ple, then P -> D, normed."""
    D, P = x.shape[-1], ple.shape[-1]
    with jax.named_scope("per_layer_emb"):
        g = jax.nn.gelu(dense(x, p("ple_gate", (D, P)))) * ple
        return rms(dense(g, p("ple_out", (P, D))))
