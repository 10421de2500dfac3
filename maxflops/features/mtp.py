"""Multi-token prediction (DeepSeek-V3's MTP, Megatron's, NemotronH's): in training, ``mtp_num_layers`` modules after
the decoder, module k predicting token k + 1 ahead: an eh projection 2D -> D of the previous module's output and the
shifted token's embedding, its layers (``maxflops.plan`` builds them: the last decoder layer's kind, or
``mtp_layer_pattern`` and ``mtp_ffn_layer_pattern``'s), and its own output head."""

from __future__ import annotations

from .. import terms
from ..components import MIXED, Component, WEIGHT
from ..fields import field_of
from .base import Feature, register
from .mhc import hyper_head

SCHEMA = {
    "mtp_num_layers": field_of(0, int, "MTP modules (train mode only): eh projection 2D -> D, one layer like the "
                                       "last decoder layer, and the output head.", minimum=0),
    "mtp_layer_pattern": field_of("", str, "Mixers of the MTP modules, cyclic: module k (1-based) uses "
                                           "pattern[(k-1) % len], letters as attention_layer_pattern. '' (default): "
                                           "each module copies the last decoder layer's mixer (after_decoder "
                                           "numbering: it continues attention_layer_pattern's cycle). DeepSeek-V4's "
                                           "MTP module is window-only: 'L'. With mtp_ffn_layer_pattern: the mixers of "
                                           "every module's layers, in order, '-' for none."),
    "mtp_ffn_layer_pattern": field_of("", str, "MTP modules of a model with hybrid layer shapes (ffn_layer_pattern): "
                                               "each module runs len(mtp_layer_pattern) layers, whose mixers are "
                                               "mtp_layer_pattern and whose FFNs are this pattern (letters as "
                                               "ffn_layer_pattern, the same length): Megatron-LM's hybrid pattern "
                                               "after '/', NemotronH's mtp_layers_block_type. The eh projection opens "
                                               "each module and its output head closes it."),
}


def price(p, kind, c, seqs, decode, tokens, hardware) -> None:
    if not kind.mtp or kind.mtp_inner:  # the module's eh projection and head, once (on its first layer)
        return
    d = c["emb_dim"]
    p.out.update(hyper_head(c, tokens, hardware))
    if c["mtp_eh_proj"]:
        p.out["mtp_eh_proj"] = terms.mtp_eh(d) * tokens
    if c["mtp_norm_flops"]:
        p.out["mtp_norm"] = 2 * 3 * d * tokens
    if c["mtp_logits"]:
        p.out["logits"] = terms.logits(d, terms.head_vocab(c, hardware), c["head_dense"]) * tokens


FEATURE = register(Feature(
    "mtp", "multi-token prediction modules after the decoder, in training (DeepSeek-V3, Megatron, NemotronH)", SCHEMA,
    # (its pattern keys are never said inert: a config may describe its modules with mtp_num_layers 0, for a user to
    # turn them on, as deepseek4-284b's mtp_layer_pattern does)
    switches=tuple(SCHEMA), on=lambda c: bool(c["mtp_num_layers"]), off="", order=120,
    components=(Component("mtp_eh_proj", WEIGHT, 230, "an MTP module's eh projection 2D -> D"),
                Component("mtp_norm", WEIGHT, 240, "Megatron's MTP norm terms"),
                Component("mtp", MIXED, 310, "everything the MTP modules execute (their rows hold the parts)")),
    price=price, proof="maxflops.features.proofs.mtp"))
