"""DeepSeek sparse attention (DSA): MLA attention where query i attends its top-k keys, min(i+1, K), picked by an
indexer that scores every earlier key; 'G' layers of an MLA model with ``use_sparse_indexer``. With GLM-5's index
reuse a layer computes its own top-k iff the reuse rule says so (``computes_index``); the others reuse it.

Model FLOPs: MLA's projections (``maxflops.families.attention``), 2 * heads * (d_qk + d_v) per attended pair
under the convention's DSA rule (``pairs``), and on index-computing layers the indexer: its projections
(q from the q latent, k and the head weights from the input) per token and 2 * heads * (head_dim + 1) per scored
pair (``indexer_score``, ``indexer_head_reduction``). Hardware FLOPs: the pairs ``dsa_impl`` computes, the indexer's
pairs under ``indexer_impl`` and ``indexer_skip_short``, and the KL loss's detached target (``indexer_kl``).

The indexer is shared with the compressed family's CSA layers (``indexer_score``).
Its closed forms are here: the indexer's projections and its cost per scored pair, the keys a gather kernel
reads, and the peers' DSA pair rules (Megatron's, Megatron-LM #6148's, Megatron-Bridge's).
"""

from __future__ import annotations

from ... import masks, terms
from ...sequences import priced_tokens
from ...components import ATTENTION_KIND, WEIGHT, Component
from ...fields import field_of
from .. import attention
from ..attention import GLOBAL
from ..base import Family, Priced

DSA = "dsa"

COMPONENTS = (
    Component("indexer_proj", WEIGHT, 100, "the indexer's projections (q, k, head weights)"),
    Component("indexer_proj_attn", ATTENTION_KIND, 110, "the compressed indexer's projections, counted as attention "
                                                        "(indexer_proj_split='attention', MaxText's DeepSeek-V4)"),
    Component("indexer_score", ATTENTION_KIND, 120, "the indexer's scoring: q.k per head and the weighted sum"),
    Component("indexer_kl", ATTENTION_KIND, 130, "the main scores over the indexer's pairs (its KL loss's detached "
                                                 "target): hardware, and model FLOPs with indexer_kl_flops"),
)


# --- closed forms: the indexer's terms, the keys a gather kernel reads, the peers' DSA pair rules -------------

def indexer_proj(d: int, q_lora: int, n_heads: int, head_dim: int) -> int:
    """DSA indexer projections per token: q from the q latent (or from D without q LoRA) to
    n_heads*head_dim, k D -> head_dim (one shared key head), head weights D -> n_heads."""
    q_in = q_lora if q_lora else d
    return 2 * q_in * n_heads * head_dim + 2 * d * head_dim + 2 * d * n_heads


def indexer_per_pair(n_heads: int, head_dim: int, head_reduction: bool = True) -> int:
    """DSA indexer scoring per scored pair: q.k over every head (2*n*hd) and the weighted head
    reduction sum_h w_h * relu(q_h.k) (2*n; Megatron leaves it out)."""
    return 2 * n_heads * head_dim + (2 * n_heads if head_reduction else 0)


def gathered(L, K):
    """Keys a gather-K sparse kernel reads for a sequence of length L: min(L, K) for every query."""
    return L * masks._minimum(L, K)


def dsa_megatron(seqs, K):
    """Megatron's DSA: the dense s^2/2 pairs scaled by rho = (K*s - K^2/2) / (s^2/2), clamped to 1, where s is
    the token-weighted mean length Q/T (Q = sum L^2, T = sum L) -- one rho for the whole batch."""
    return seqs.whole(_dsa_megatron, K)


def _dsa_megatron(seqs, K):
    # s^2/2 * rho = (Q/2) (K s - K^2/2) / (s^2/2) with s = Q/T is K T (2Q - K T) / (2Q): one Fraction, not five
    Q = seqs.sum(lambda L: L * L)
    T = seqs.sum(lambda L: L)
    return masks._ratio(Q, 2) if Q <= K * T else masks._ratio(K * T * (2 * Q - K * T), 2 * Q)


def dsa_megatron_floor(seqs, K):
    """Megatron-LM #6148's head and #6753: the dense s^2/2 pairs scaled by rho = a / (s/2), a = e*(1 - e/(2s)),
    e = min(K, floor(s)), s = Q/T the token-weighted mean length (one rho for the batch)."""
    return seqs.whole(_dsa_megatron_floor, K)


def _dsa_megatron_floor(seqs, K):
    # (Q/2) e (1 - e/(2s)) / (s/2) with s = Q/T is e T (2Q - e T) / (2Q)
    Q = seqs.sum(lambda L: L * L)
    T = seqs.sum(lambda L: L)
    e = min(K, Q // T)
    return masks._ratio(e * T * (2 * Q - e * T), 2 * Q)


def dsa_bridge(seqs, K, tokens):
    """Megatron-Bridge's DSA over ``tokens`` priced (a packed batch's padded slots with packed_tokens='padded'): each
    token sees the mean sparse context at c = Q/tokens (Q = sum L^2), K - K(K-1)/(2c) keys when c > K, else the
    causal (c + 1)/2; times the tokens. For full rows, exactly sum_i min(i+1, K)."""
    return seqs.whole(_dsa_bridge, K, tokens)


def _dsa_bridge(seqs, K, tokens):
    Q = seqs.sum(lambda L: L * L)
    if Q <= K * tokens:  # c <= K
        return masks._ratio(Q + tokens, 2)
    return tokens * K - masks._ratio(K * (K - 1) * tokens * tokens, 2 * Q)


def causal_bridge(seqs, tokens):
    """Megatron-Bridge's causal context over ``tokens`` priced: (c + 1)/2 keys per token at c = Q/tokens, i.e.
    (Q + tokens)/2 (the exact L(L+1)/2 for full rows and unpadded documents)."""
    return masks._ratio(seqs.sum(lambda L: L * L) + tokens, 2)


# --- pairs, the indexer, pricing ------------------------------------------------------------------------------

def computes_index(layer_number: int, freq: int, offset: int) -> bool:
    """GLM-5 index reuse: layer ``layer_number`` (1-based) computes its own top-k iff
    max(layer_number - max(offset, 1), 0) % freq == 0. With freq 1 every layer does."""
    return max(layer_number - max(offset, 1), 0) % freq == 0


# --- pairs ----------------------------------------------------------------------------------------------------

def pairs(span: int, seqs, c, decode: bool):
    """Attended (query, key) pairs of a top-``span`` layer under the config's conventions."""
    if decode:
        return seqs.sum(lambda kv: masks.new_token_keys(DSA, span, kv))
    if c["dsa_pairs"] == "global":
        return attention.pairs(GLOBAL, 0, seqs, c, decode)
    if c["dsa_pairs"] == "maxtext":
        return masks.band_maxtext(seqs, span)
    if c["dsa_pairs"] == "megatron":
        return dsa_megatron(seqs, span)
    if c["dsa_pairs"] == "megatron_floor":
        return dsa_megatron_floor(seqs, span)
    if c["dsa_pairs"] == "bridge":
        return dsa_bridge(seqs, span, priced_tokens(seqs, c)[0])
    return seqs.exact_pairs(DSA, span)


def hardware_pairs(span: int, seqs, c, decode: bool):
    """Pairs the kernels compute under ``dsa_impl``."""
    if c["dsa_impl"] == "dense":  # the full square with the top-k mask
        return attention.dense_pairs(seqs, decode)
    if c["dsa_impl"] == "blocked":  # a dynamic-mask tile kernel: every causally visible tile (an upper bound)
        bq, bkv = c["attention_block_q"], c["attention_block_kv"]
        if decode:
            return seqs.sum_scalar(lambda kv: masks.blocked_decode(GLOBAL, 0, kv, bkv))
        return seqs.sum(lambda L: masks.blocked(GLOBAL, 0, L, bq, bkv))
    if c["dsa_impl"] == "gather_k":  # exactly K keys gathered per query (all visible ones when fewer)
        if decode:
            return seqs.sum(lambda kv: masks.new_token_keys(DSA, span, kv))
        return seqs.sum(lambda L: gathered(L, span))
    return seqs.sum(lambda kv: masks.new_token_keys(DSA, span, kv)) if decode else seqs.exact_pairs(DSA, span)


# --- the indexer ----------------------------------------------------------------------------------------------

def indexer_run(kind, seqs, c, decode: bool):
    """Model FLOPs: (tokens that run the indexer, scored pairs) under the conventions."""
    if decode:  # the new token scores every cached key and itself
        return seqs.count, seqs.sum(lambda kv: kv + 1)
    if c["indexer_skip_within_topk"]:  # only sequences longer than K run the indexer
        seqs = seqs.longer_than(kind.span)
        if seqs is None:
            return 0, 0
    if c["indexer_pairs"] == "half_square":
        return seqs.tokens, masks.half_square(seqs)
    if c["indexer_pairs"] == "bridge":
        tokens = priced_tokens(seqs, c)[0]
        return tokens, causal_bridge(seqs, tokens)
    return seqs.tokens, seqs.exact_pairs(GLOBAL, 0)


def hardware_indexer_run(p: Priced, kind, c, seqs, decode, kl_per_pair):
    """(tokens that run the indexer, pairs it scores) as a program runs it: the pairs its kernel computes, none
    for a sequence that fits in the top-k when the program skips those; with a KL loss in training, the main
    attention's scores over the same pairs (the loss's detached target) as ``indexer_kl``."""
    run = seqs.longer_than(kind.span) if c["indexer_skip_short"] and not decode else seqs
    idx_tokens = 0 if run is None else (run.count if decode else run.tokens)
    if run is None:
        scored = 0
    elif c["indexer_impl"] == "dense":  # plain einsums over the full square, whatever kernel runs the attention
        scored = attention.dense_pairs(run, decode)
    else:
        scored = attention.impl_pairs(GLOBAL, 0, run, c, decode, masked=False)
    if c["mode"] == "train" and c["indexer_loss_scaling_factor"] > 0:
        if c["indexer_loss_pairs"] == "selected":  # the sparse loss's target: the selected pairs' keys, gathered
            p.out["indexer_kl"] = kl_per_pair * (0 if run is None else run.exact_pairs(DSA, kind.span))
        else:
            p.out["indexer_kl"] = kl_per_pair * scored
    return idx_tokens, scored


def indexer_score(p: Priced, c, n: int, hd: int, scored, hardware: bool) -> int:
    """The indexer's scoring over ``scored`` pairs: q.k per head, and the weighted sum over heads where it is counted
    (model FLOPs: indexer_head_reduction; hardware: weighted_sum_impl='einsum'). The head weighting's gradient
    with respect to the scores is an outer product (the 'single' part). Returns the FLOPs per scored pair."""
    reduction = c["indexer_head_reduction"] and not (hardware and c["weighted_sum_impl"] == "elementwise")
    per_pair = indexer_per_pair(n, hd, reduction)
    p.out["indexer_score"] = per_pair * scored
    if reduction:
        p.single["indexer_score"] = 2 * n * scored
    return per_pair


def _indexer(p: Priced, c, idx_tokens, scored, hardware: bool) -> int:
    """The indexer's projections and scoring; returns the scoring's FLOPs per pair."""
    n, hd_i = c["index_n_heads"], c["index_head_dim"]
    p.out["indexer_proj"] = indexer_proj(c["emb_dim"], c["q_lora_rank"], n, hd_i) * idx_tokens
    return indexer_score(p, c, n, hd_i, scored, hardware)


# --- a layer ----------------------------------------------------------------------------------------------------

def price(p: Priced, kind, c, seqs, decode, tokens) -> None:
    h, d_qk, d_v = attention.project(p, kind, c, tokens, hardware=False)
    if c["dsa_core_form"] == "absorbed":  # a convention: the latent's widths per pair
        d_qk, d_v = c["kv_lora_rank"] + c["qk_rope_head_dim"], c["kv_lora_rank"]
    attention.core(p, h, d_qk, d_v, pairs(kind.span, seqs, c, decode))
    if kind.computes_index and c["indexer_flops"]:
        idx_tokens, scored = indexer_run(kind, seqs, c, decode)
        per_pair = _indexer(p, c, idx_tokens, scored, hardware=False)
        loss = c["mode"] == "train" and c["indexer_loss_scaling_factor"] > 0
        target = scored  # the pairs the loss reads: every scored pair, or the selected top-k
        if loss and c["indexer_loss_pairs"] == "selected" and c["indexer_train_factor"] in (0, 3):
            # Megatron's sparse indexer loss: the scores' backward (two per forward, in the 3x rule) over the
            # selected pairs only: the rest of it is taken back
            target = pairs(kind.span, seqs, c, decode)
            p.grad_extra["indexer_score"] = 2 * per_pair * (target - scored)
        if c["indexer_kl_flops"] and loss:
            p.out["indexer_kl"] = terms.attention_per_pair(h, d_qk, 0) * target  # the loss's target, forward only


def price_hardware(p: Priced, kind, c, seqs, decode, tokens) -> None:
    h, d_qk, d_v = attention.project(p, kind, c, tokens, hardware=True)
    if c["dsa_core_form"] == "absorbed" and not c["mla_absorbed"]:
        d_qk, d_v = c["kv_lora_rank"] + c["qk_rope_head_dim"], c["kv_lora_rank"]
    attention.core(p, h, d_qk, d_v, hardware_pairs(kind.span, seqs, c, decode))
    if kind.computes_index:
        run = hardware_indexer_run(p, kind, c, seqs, decode, terms.attention_per_pair(h, d_qk, 0))
        _indexer(p, c, *run, hardware=True)


def decode_cache(kind, c, seqs) -> dict:
    """MLA's latent cache over the attended top-k entries; an index-computing layer also reads every cached index
    key (the new one too) and writes the new one."""
    out = attention.decode_cache(kind, c, seqs)
    if kind.computes_index:
        hd_i, ib = c["index_head_dim"], c["index_cache_bytes"]
        out["index_read"] = seqs.sum(lambda kv: kv + 1) * hd_i * ib
        out["index_write"] = seqs.count * hd_i * ib
    return out


def mixer_of(letter: str, layer_number: int, c):
    if letter != "G" or not c["causal"] or not (c["use_sparse_indexer"] and c["attention_type"] == "mla"):
        return None
    if c["indexer_every_layer"]:
        return DSA, c["index_topk"], True, 0
    return DSA, c["index_topk"], computes_index(layer_number, c["index_topk_freq"], c["index_skip_offset"]), 0


def label(mixer_label: str, row) -> str:
    return mixer_label + (" + indexer" if row.computes_index else " (reuses index)")


def check(c, letters: str, err) -> None:
    if c["use_sparse_indexer"] and c["attention_type"] == "global":
        err("use_sparse_indexer", "DSA sparse attention needs attention_type='mla' (or 'compressed', whose 'S' "
                                  "layers pick blocks with the indexer)")
    if c["indexer_stage"] == "warmup" and not c["use_sparse_indexer"]:
        err("indexer_stage", "'warmup' trains the DSA indexer alone; it needs use_sparse_indexer=True")
    if c["use_sparse_indexer"] and not c["causal"]:
        err("causal", "False: DSA sparse attention (use_sparse_indexer=True) is causal")


# --- its config keys (its section of maxflops.schema.SCHEMA) -------------------------------------------------

SCHEMA = {
    "use_sparse_indexer": field_of(False, bool, "DSA: 'G' layers attend only the index_topk keys the indexer "
                                          "picks (with attention_type='compressed': the 'S' layers' "
                                          "compressed blocks)."),
    "index_n_heads": field_of(64, int, "DSA indexer heads.", minimum=1),
    "index_head_dim": field_of(128, int, "DSA indexer head width.", minimum=1),
    "index_topk": field_of(2048, int, "DSA: keys attended per query (K).", minimum=1),
    "index_topk_freq": field_of(1, int, "GLM-5 index reuse: see index_skip_offset.", minimum=1),
    "index_skip_offset": field_of(0, int, "GLM-5 index reuse: layer l (1-based) computes its own top-k iff "
                                    "max(l - max(offset, 1), 0) % freq == 0; other layers reuse it.",
                            minimum=0),
    "indexer_loss_scaling_factor": field_of(0.0, float, "Weight of the indexer's KL loss; 0 means the indexer "
                                                  "gets no gradient (counted forward only). The pairs the loss is "
                                                  "taken over: indexer_loss_pairs.", minimum=0),
    "indexer_loss_pairs": field_of("all", str, "Model FLOPs, training with the indexer's KL loss: the pairs it is "
                                                "taken over. 'all' (the dense loss): every pair the indexer scores. "
                                                "'selected' (Megatron's dsa_indexer_use_sparse_loss, which "
                                                "Megatron-Bridge's GLM-5 recipe sets): the selected top-k pairs only: "
                                                "the scores' backward and the loss's target cover those (the scores' "
                                                "forward still covers every pair, to select them). Hardware FLOPs: "
                                                "the target over the selected pairs (their keys gathered); the "
                                                "scores' backward stays dense (the loss gathers the scores, and a "
                                                "gather's gradient is a scatter into all of them).",
                                    choices=("all", "selected")),
    "indexer_kl_flops": field_of(False, bool, "Model FLOPs, training with the indexer's KL loss: count the loss's target, "
                                        "the main attention's scores over the indexer's pairs, forward only "
                                        "(Megatron-Bridge's teacher term; hardware FLOPs always count it as "
                                        "indexer_kl)."),
    "indexer_stage": field_of("sparse", str, "DSA training stage (train mode; prefill and decode ignore it). 'sparse': "
                                        "the whole model trains, attending its top-k keys (the indexer through its "
                                        "KL loss when indexer_loss_scaling_factor > 0). 'warmup': DeepSeek-V3.2's "
                                        "dense warm-up (MaxText's indexer_sparse_training=False): the main model is "
                                        "frozen, so every layer runs forward only, the output head is skipped, and "
                                        "only the indexer trains, through its KL loss; with no KL loss nothing "
                                        "trains and the step costs nothing. The main attention keeps its mask as "
                                        "configured (MaxText applies the top-k mask in this stage too).",
                        choices=("sparse", "warmup")),
    "dsa_impl": field_of("ideal", str, "Hardware DSA attention: 'ideal' min(i+1, K) keys per query; 'gather_k' "
                                 "min(L, K) gathered keys for every query of a length-L sequence, early "
                                 "queries too (the extra keys masked); 'dense' the full L x L square with the "
                                 "top-k mask (MaxText's dot_product path, eager Hugging Face models); 'blocked' "
                                 "splash attention with the top-k as a dynamic mask (MaxText's flash path on TPU): "
                                 "the attention_block_q x attention_block_kv tiles holding a selected key, taken "
                                 "as every causally visible tile, which assumes a tile's queries together select "
                                 "keys in every key tile they see (an upper bound; exact once top-k covers the "
                                 "visible keys, and likely when block_q x K keys spread over L / block_kv tiles).",
                   choices=("ideal", "gather_k", "dense", "blocked")),
    "indexer_impl": field_of("attention", str, "Hardware: the (query, key) pairs the DSA indexer scores, and the indexer "
                                         "KL loss's target covers: as attention_impl runs them ('attention'), or the "
                                         "full L x L square ('dense': MaxText computes both as plain einsums, "
                                         "whatever kernel runs the attention); a QSA layer's (query, block) "
                                         "pairs: each query's complete visible blocks, or every complete block "
                                         "of the sequence ('dense').", choices=("attention", "dense")),
    "indexer_skip_short": field_of(False, bool, "Hardware: the program skips the DSA indexer for a sequence of at most "
                                          "index_topk tokens, where it would keep every key (MaxText does); a CSA "
                                          "layer's for a sequence of at most index_topk blocks (L < (K+1)m); a "
                                          "MiniMax sparse ('B') layer's for one of at most msa_topk_blocks blocks "
                                          "(L <= K B); a QSA ('Q') layer's for one of fewer than (K + 1) r tokens "
                                          "(K = qsa_budget / r)."),
    "dsa_pairs": field_of("exact", str, "DSA attended pairs: 'exact' sum_i min(i+1, K); 'maxtext' T*K - K^2/2 "
                                  "(T^2/2 when T <= K); 'megatron' dense pairs scaled by "
                                  "min(1, attended/dense); 'megatron_floor' the same with attended = e*s - e^2/2, "
                                  "e = min(K, floor(s)) (Megatron-LM #6148's head, #6753); 'global' every query "
                                  "sees all earlier keys, counted by causal_pairs (Megatron-LM main: DSA as dense "
                                  "MLA); 'bridge' (Megatron-Bridge) K - K(K-1)/(2c) keys per priced token at c = "
                                  "sum L^2 / tokens, the causal (c+1)/2 when c <= K.",
                    choices=("exact", "maxtext", "megatron", "megatron_floor", "global", "bridge")),
    "dsa_core_form": field_of("mla", str, "Per-pair widths of DSA's core attention in model FLOPs: 'mla' the non-absorbed "
                                    "heads (qk_nope + qk_rope, v_head_dim), 'absorbed' the latent (kv_lora_rank + "
                                    "qk_rope, kv_lora_rank: Megatron-LM #6753).", choices=("mla", "absorbed")),
    "indexer_flops": field_of(True, bool, "Count the DSA indexer at all (Megatron-LM main has no indexer term)."),
    "indexer_pairs": field_of("exact", str, "DSA indexer scored pairs: 'exact' causal L(L+1)/2, or "
                                      "'half_square' L^2/2 (a compressed layer's indexer: its exact visible "
                                      "blocks, or L^2/(2m)), or 'bridge' (Megatron-Bridge: (c+1)/2 keys per priced "
                                      "token, c = sum L^2 / tokens).", choices=("exact", "half_square", "bridge")),
    "indexer_head_reduction": field_of(True, bool, "Count the indexer's weighted head reduction (2*index_n_heads "
                                             "per scored pair; Megatron does not)."),
    "indexer_skip_within_topk": field_of(False, bool, "MaxText: no indexer FLOPs at all when T <= index_topk."),
    "indexer_every_layer": field_of(False, bool, "Charge the indexer on every DSA layer, ignoring index reuse "
                                           "(MaxText)."),
    "index_cache_bytes": field_of(2, int, "Bytes per cached DSA/CSA indexer key element (DeepSeek-V3.2 keeps them in "
                                    "fp8: 1).", minimum=1),
}


FAMILY = Family(
    name="dsa",
    letters={},  # 'G' layers of an MLA model with use_sparse_indexer (the attention family's letter)
    mixers={DSA: "DSA top-k"},
    components=COMPONENTS,
    schema=SCHEMA,
    mixer_of=mixer_of,
    plan_keys=("attention_type", "causal", "use_sparse_indexer", "index_topk", "index_topk_freq", "index_skip_offset", "indexer_every_layer"),
    price=price,
    price_hardware=price_hardware,
    decode_cache=decode_cache,
    label=label,
    check=check,
    hf_layer_types={"deepseek_sparse_attention": "G", "indexed_attention": "G"},  # DSA on 'G' layers,
    claims=20,
)
