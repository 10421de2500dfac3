"""Per-layer embeddings (Gemma 3n, Gemma 4 E2B/E4B): a second embedding of width P per layer, looked up per token (a
gather) and mixed with a projection of the embedding, D -> layers x P (once per token, at the head's side); in every
layer a gate D -> P of the layer's output times its P-wide embedding, projected back P -> D and added."""

from __future__ import annotations

from .. import terms
from ..components import Component, WEIGHT
from ..families.base import read_branch_ends
from ..fields import field_of
from .base import Feature, register

SCHEMA = {
    "per_layer_input_dim": field_of(0, int, "Per-layer embeddings of width P (Gemma 4 E2B/E4B): one projection "
                                            "D -> layers*P per token, and in every layer a gate D -> P and a "
                                            "projection P -> D; the table lookup is a gather.", minimum=0),
    "per_layer_vocab_size": field_of(0, int, "Rows of the per-layer embedding table (Gemma 3n's and Gemma 4's "
                                             "vocab_size_per_layer_input), each layers x P wide; 0: vocab_size. A "
                                             "lookup: no FLOPs, counted in the parameters.", minimum=0),
}


def price(p, kind, c, seqs, decode, tokens, hardware) -> None:
    if c["per_layer_input_dim"]:  # gate D -> P, projection P -> D
        p.out["per_layer_emb"] = terms.ple_layer(c["emb_dim"], c["per_layer_input_dim"]) * tokens
        # its gate reads the layer's output: a rematerialized layer recomputes the branches' last matmuls too
        read_branch_ends(p)


def head(c, tokens, hardware) -> dict:
    if not c["per_layer_input_dim"]:
        return {}
    return {"per_layer_emb_proj": terms.ple_global(c["emb_dim"], c["num_decoder_layers"], c["per_layer_input_dim"])
            * tokens}


def decode_head(c) -> dict:
    if not c["per_layer_input_dim"]:
        return {}
    return {"per_layer_global": terms.ple_global(c["emb_dim"], c["num_decoder_layers"], c["per_layer_input_dim"])
            // 2}

def tables(c) -> dict:
    P = c["per_layer_input_dim"]
    return {"per_layer_embeddings": (c["per_layer_vocab_size"] or c["vocab_size"]) * c["num_decoder_layers"] * P} \
        if P else {}


FEATURE = register(Feature(
    "per_layer_embeddings", "an embedding of its own per layer, gated into the layer's output (Gemma 3n, Gemma 4)",
    SCHEMA, switches=("per_layer_input_dim",), on=lambda c: bool(c["per_layer_input_dim"]),
    off="no per-layer embeddings (per_layer_input_dim is 0)", order=10,
    components=(Component("per_layer_emb", WEIGHT, 220, "per-layer embeddings: gate and projection in each layer"),
                Component("per_layer_emb_proj", WEIGHT, 270, "per-layer embeddings: the projection D -> layers x "
                                                              "P")),
    weight_components=("per_layer_emb",), price=price, head=head, decode_head=decode_head, tables=tables,
    proof="maxflops.features.proofs.per_layer_embeddings"))
