"""mHC, manifold-constrained hyper-connections (DeepSeek-V4; HY-V4's and Qwen4-Exp's variants): the residual state is
G streams of D (``mhc_expansion_rate``). Around each branch of a layer (its mixer, its FFN) a projection of the
streams G*D -> 2G + G^2 gives the pre weights (the G-way contraction into the branch's input), the post weights
(the branch's output spread back over the streams) and the G x G residual mixing; HY-V4's streams are not mixed
(``mhc_plain_residual``: G*D -> 2G); Qwen4-Exp's gated hyper-connections take per-channel input weights through a
low-rank map (``mhc_lowrank``). A hyper head (``mhc_hyper_head``) collapses the streams before each output head."""

from __future__ import annotations

from .. import terms
from ..components import Component, WEIGHT
from ..families.base import read_branch_ends
from ..fields import field_of
from .base import Feature, branches, register

SCHEMA = {
    "mhc_expansion_rate": field_of(1, int, "mHC hyper-connections: G residual streams; above 1 every decoder layer "
                                           "mixes them around attention and around the FFN (a projection "
                                           "G*D -> 2G + G^2 and the G- and G^2-way contractions, per token).",
                                   minimum=1),
    "mhc_plain_residual": field_of(False, bool, "mHC without the residual mixing (HY-V4's hyper-connections): the "
                                                "streams are kept, not mixed by a G x G matrix around each layer "
                                                "branch, and only the pre and post weights are projected, G*D -> "
                                                "2G (DeepSeek-V4's: G*D -> 2G + G^2 and the G x G mixing)."),
    "mhc_lowrank": field_of(0, int, "Gated hyper-connections (Qwen4-Exp's hc_lowrank), with mhc_plain_residual: "
                                    "around each branch the normed streams give per-channel input weights through "
                                    "a low-rank map G*D -> r -> G*D (their weighted mean over the streams is "
                                    "elementwise) and the branch output's weights per stream G*D -> G; the hyper "
                                    "head's weights G*D -> r -> G*D likewise (4 G D r + 2 G^2 D FLOPs per branch "
                                    "and token, 4 G D r for the head). 0: mHC's projections.", minimum=0),
    "mhc_hyper_head": field_of(False, bool, "mHC: the streams are collapsed before the final norm by a learned head "
                                            "(a projection G*D -> G and the G-way weighted sum per token; "
                                            "DeepSeek-V4), in every output head (the MTP modules' too)."),
}


def check(c, err) -> None:
    if c["mhc_lowrank"] and not c["mhc_plain_residual"]:
        err("mhc_lowrank", f"{c['mhc_lowrank']} needs mhc_plain_residual=True (gated hyper-connections keep the "
                           "streams: no G x G mixing)")
    if c["mhc_hyper_head"] and c["mhc_expansion_rate"] < 2:
        err("mhc_hyper_head", "True needs mHC streams (mhc_expansion_rate >= 2), got mhc_expansion_rate="
                              f"{c['mhc_expansion_rate']}")


def has_hyper_head(c, hardware: bool) -> bool:
    """A hyper head is priced: the model has one, and (model FLOPs) the convention counts it (mhc_head_flops)."""
    return c["mhc_expansion_rate"] > 1 and c["mhc_hyper_head"] and (hardware or c["mhc_head_flops"])


def price(p, kind, c, seqs, decode, tokens, hardware) -> None:
    if not (c["mhc_expansion_rate"] > 1 and c["mhc_flops"]):  # one mixing per branch: around the mixer and the FFN
        return
    G, d = c["mhc_expansion_rate"], c["emb_dim"]
    n = branches(kind)
    pre = not (hardware and c["weighted_sum_impl"] != "einsum") and not c["mhc_lowrank"]
    mix = not c["mhc_plain_residual"]
    if c["mhc_lowrank"]:  # gated hyper-connections: low-rank input weights per channel (elementwise mean)
        p.out["mhc"] = n * terms.mhc_lowrank(G, d, c["mhc_lowrank"]) * tokens
    else:
        p.out["mhc"] = n * terms.mhc(G, d, c["mhc_outer_flops"], pre, mix) * tokens
    if pre:  # the pre contraction's stream gradient is each stream's weight times the output's: an outer product
        p.single["mhc"] = n * 2 * G * d * tokens
    # The FFN's output is scaled by the per-token post weights, so remat recomputes its last matmul; the tail is the
    # FFN-side residual mixing (G x G over D), whose output only joins the layer's streams.
    read_branch_ends(p, up_proj=False)
    if mix:
        p.tail["mhc"] = 2 * G * G * d * tokens


def hyper_head(c, tokens, hardware) -> dict:
    if not has_hyper_head(c, hardware):
        return {}
    return {"mhc_head": terms.mhc_head(c["mhc_expansion_rate"], c["emb_dim"], c["mhc_lowrank"]) * tokens}


def decode(kind, c, seqs, elements, cache) -> None:
    if c["mhc_expansion_rate"] > 1 and c["mhc_flops"]:  # each branch's mixing projection G*D -> 2G + G^2
        G, n = c["mhc_expansion_rate"], branches(kind)
        if c["mhc_lowrank"]:  # (gated hyper-connections: G*D -> r -> G*D and G*D -> G)
            elements["mhc_proj"] = n * terms.mhc_lowrank(G, c["emb_dim"], c["mhc_lowrank"]) // 2
        else:
            elements["mhc_proj"] = n * G * c["emb_dim"] * (2 * G + (0 if c["mhc_plain_residual"] else G * G))


def decode_hyper_head(c) -> dict:
    if not (c["mhc_expansion_rate"] > 1 and c["mhc_hyper_head"]):
        return {}
    return {"mhc_head": terms.mhc_head(c["mhc_expansion_rate"], c["emb_dim"], c["mhc_lowrank"]) // 2}

FEATURE = register(Feature(
    "mhc", "hyper-connections: G residual streams mixed around each branch (DeepSeek-V4, HY-V4, Qwen4-Exp)", SCHEMA,
    switches=("mhc_expansion_rate",), on=lambda c: c["mhc_expansion_rate"] > 1,
    off="the model has no mHC streams (mhc_expansion_rate = 1)", order=30,
    components=(Component("mhc", WEIGHT, 40, "mHC: the stream mixings around attention and the FFN"),
                Component("mhc_head", WEIGHT, 250, "mHC's hyper head")),
    check=check, price=price, decode=decode, head=hyper_head, decode_head=decode_hyper_head,
    proof="maxflops.features.proofs.mhc"))
