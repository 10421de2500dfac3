"""A Flax decoder built from any maxflops config, layer by layer from the engine's own plan.

The model never re-derives layer patterns: ``maxflops.plan.build_plan`` says what each layer is (mixer, span,
projection, whether it computes its DSA index, dense or MoE FFN, MTP), and runs of consecutive identical layers
are stacked under ``nn.scan`` as MaxText scans its layers. Every matmul goes through ``kernels``; norms,
activations, gates, softmax, top-k and gathers are not matmuls.

``reduce_config`` shrinks a config so that it compiles in seconds while keeping every feature present. Each mixer
family reduces its own keys (its proof module's ``reduce``: head dims 8, MLA ranks, the indexer 2 x 4, the gated
delta net's heads of 4, windows <= 5, chunks <= 6, top-k <= 5, ...); the trunk's reduction:

- widths: emb_dim 32, FFN 48, experts 16 wide, vocabulary 64;
- experts: at most 8, top-k at most half of them, shared experts and gates kept;
- layer pattern: each run of equal letters shortened to at most 2 (Gemma 3's LLLLLG -> LLG), two cycles of it
  after a dense prefix of at most 1 layer (at least 4 layers); MoE interleave step kept; with ffn_layer_pattern
  (hybrid layer shapes) each distinct (mixer, FFN) pair of layers kept at most twice, in order of first appearance;
- sequences: batch 2 x 13 tokens (13 = 6 + 6 + 1: a partial chunk), attention tiles <= 4 x 3; MTP at most 1 module;
- KV sharing: the last layers of the reduced depth, at most one pattern's worth; LAuReL's rank at most 5.

Stand-ins where a model's dataflow is no matmul's business: a KV-shared layer attends its own input tiled to the
keys' and values' shape (the model's are an earlier layer's: no projection either way), Doge's dynamic mask scales
the values elementwise, Inkling's relative logits scale each head's output.
"""

from __future__ import annotations

import itertools
from typing import Any

import flax.linen as nn
import jax
import numpy as np
import jax.numpy as jnp
import optax

from .. import terms
from ..resolve import hardware_view
from ..config import resolve, validate
from ..families import FAMILIES
from ..families.base import NO_FFN, NO_MIXER
from ..features.attn_res import attn_res_queries
from ..features.layer_loops import layer_order, parse_loop_rule
from ..plan import FFN_LETTER, build_plan
from ..proofkit import kernels as K
from .registry import proof_of, proof_of_kind

REDUCED_BATCH, REDUCED_LENGTH = 2, 13


def _short_pattern(pattern: str) -> str:
    return "".join(ch * min(len(list(run)), 2) for ch, run in itertools.groupby(pattern))


def reduce_config(config, **overrides) -> dict[str, Any]:
    """The documented reduction of a config (see the module docstring), resolved and validated."""
    c = validate(config)
    out = dict(c)
    out.update(emb_dim=32, vocab_size=64, mlp_dim=48, moe_mlp_dim=16, moe_latent_size=12 if c["moe_latent_size"] else 0,
               per_device_batch_size=float(REDUCED_BATCH), max_target_length=REDUCED_LENGTH,
               gradient_accumulation_steps=1, mtp_num_layers=min(c["mtp_num_layers"], 1),
               attention_block_q=min(c["attention_block_q"], 4), attention_block_kv=min(c["attention_block_kv"], 3))
    # each family's own keys, from the most general family to the most specific (the registry's order reversed):
    # where two reduce one key (the top-k), the more specific one's value stands
    for fam in reversed(FAMILIES):
        out.update(proof_of(fam).reduce(c))
    if c["mhc_expansion_rate"] > 1:
        out["mhc_expansion_rate"] = min(c["mhc_expansion_rate"], 3)
    if c["laurel_rank"]:
        out["laurel_rank"] = min(c["laurel_rank"], 5)
    if c["num_experts"] > 1:
        e = min(c["num_experts"], 8)
        out.update(num_experts=e, num_experts_per_tok=max(1, min(c["num_experts_per_tok"], e // 2)))
    if c["layer_loops"]:  # looped depth: the layers kept as they are (their rules name them), the widths reduced
        if c["num_decoder_layers"] > 16:
            raise ValueError(f"layer_loops: a looped model of {c['num_decoder_layers']} layers is not reduced here; "
                             "give a shallower one")
        if c["layer_widths"]:
            raise ValueError("layer_loops: a looped model with layer_widths is not reduced here")
        out.update(overrides)
        return resolve(out)
    pattern = c["attention_layer_pattern"]
    n = c["num_decoder_layers"]
    ffn, parallel = c["ffn_layer_pattern"], c["parallel_layer_pattern"]
    if ffn or parallel:  # hybrid layer shapes: a layer is its (mixer, FFN, parallel mixer), reduced as letters below
        shapes = [(pattern[l % len(pattern)], ffn[l % len(ffn)] if ffn else "",
                   parallel[l % len(parallel)] if parallel else "") for l in range(n)]
        kept = [shape for shape in dict.fromkeys(shapes) for _ in range(min(shapes.count(shape), 2))]
        pattern = "".join(m for m, _, _ in kept)
        out["ffn_layer_pattern"] = "".join(f for _, f, _ in kept)
        out["parallel_layer_pattern"] = "".join(q for _, _, q in kept)
        ffn = ffn or parallel
    elif len(pattern) >= n:  # a per-layer list: each kind of layer once, in order of first appearance (runs up to 2)
        pattern = "".join(ch * min(pattern[:n].count(ch), 2) for ch in dict.fromkeys(pattern[:n]))
    if not ffn:
        pattern = _short_pattern(pattern)
    dense_prefix = min(c["first_num_dense_layers"], 1)
    layers = max(dense_prefix + 2 * max(len(pattern), c["interleave_moe_layer_step"]), 4)
    if ffn and layers % len(pattern):  # whole cycles of the pairs
        layers += len(pattern) - layers % len(pattern)
    if c["mtp_num_layers"] and not c["mtp_layer_pattern"] and c["mtp_layer_numbering"] == "own":
        out["mtp_layer_pattern"] = c["attention_layer_pattern"][(n - 1) % len(c["attention_layer_pattern"])]
    out.update(attention_layer_pattern=pattern, first_num_dense_layers=dense_prefix, num_decoder_layers=layers)
    if c["num_kv_shared_layers"]:  # the last layers of the reduced depth reuse keys and values: one pattern's worth
        out["num_kv_shared_layers"] = min(c["num_kv_shared_layers"], len(pattern), layers - 1)
    if c["attn_res_block_size"]:  # attention residuals: snapshots every 2 layers (several over the reduced depth)
        out["attn_res_block_size"] = min(c["attn_res_block_size"], 2)
    if c["layer_widths"]:
        out.update(_reduce_layer_widths(c, out))
    out.update(overrides)
    return resolve(out)


def _reduce_layer_widths(c, out) -> dict:
    """Layers of their own widths, reduced: each distinct layer (its mixer letter, FFN, parallel mixer and widths) kept
    up to twice, in order, as per-layer patterns; each width reduced as the config's are (heads by the attention
    family's rule, applied to the layer's own heads), FFN widths to distinct small ones in the order of their
    values."""
    from ..families.attention.proof import reduce as reduce_heads

    plan = build_plan(c)
    pattern, parallel = c["attention_layer_pattern"], c["parallel_layer_pattern"]
    shapes = [(pattern[i % len(pattern)], FFN_LETTER[kind.ffn], parallel[i % len(parallel)] if parallel else "",
               kind.widths) for i, (_, kind) in enumerate(k for k in plan.kind_rows() if not k[1].mtp)]
    kept = [shape for shape in dict.fromkeys(shapes) for _ in range(min(shapes.count(shape), 2))]
    base = {"mlp_dim": (out["mlp_dim"], 24, 8), "moe_mlp_dim": (out["moe_mlp_dim"], 8, 4),
            "head_dim": (out["head_dim"], 10, 2), "q_lora_rank": (out["q_lora_rank"], 18, 2),
            "kv_lora_rank": (out["kv_lora_rank"], 14, 2), "qk_nope_head_dim": (out["qk_nope_head_dim"], 8, 2),
            "qk_rope_head_dim": (out["qk_rope_head_dim"], 6, 2), "v_head_dim": (out["v_head_dim"], 8, 2)}
    ranks = {key: sorted({dict(w)[key] for *_, w in kept if key in dict(w)}) for key in base}
    rules = []
    for i, (*_, widths) in enumerate(kept):
        own = dict(widths)
        if "num_query_heads" in own or "num_kv_heads" in own:
            heads = reduce_heads({**c, **own})
            own.update(num_query_heads=heads["num_query_heads"], num_kv_heads=heads["num_kv_heads"])
        for key, (same, first, step) in base.items():
            if key in own:
                own[key] = same if own[key] == c[key] else first + step * ranks[key].index(own[key])
        rules += [f"{key}@{i}={value}" for key, value in sorted(own.items()) if value != out[key]]
    return dict(num_decoder_layers=len(kept), attention_layer_pattern="".join(m for m, *_ in kept),
                ffn_layer_pattern="".join(f for _, f, *_ in kept),
                parallel_layer_pattern="".join(q for _, _, q, _ in kept) if parallel else "",
                first_num_dense_layers=0, interleave_moe_layer_step=1, layer_widths=tuple(rules))


# --- parameters --------------------------------------------------------------------------------------------------

def _init(scale=0.2):
    return nn.initializers.normal(stddev=scale)


class Layer(nn.Module):
    """One decoder layer (or an MTP module's layer) of a given plan kind. Carry: (x, top_idx, aux_loss)."""

    kind: Any
    cfg: tuple  # sorted config items (hashable)
    segments: tuple = ()  # packed (THD) documents of the one row, lengths summing to its length; () = one sequence

    @nn.compact
    def __call__(self, carry, ple=None, messages=None):
        """``ple``: this layer's per-layer embedding [B, L, P] (Gemma 4's, Gemma 3n's), or None; ``messages``: a
        looped pass's previous pass (its snapshots after its first, its output), or None."""
        x, top_idx, aux = carry
        c = dict(self.cfg)
        c.update(self.kind.widths)  # a layer of its own widths (layer_widths)
        # the longest sequence of the step (packed documents run one by one: the longest of them), for a layer whose
        # work is read only when some sequence is long enough (a compressor that forms no block)
        lead = x[0] if isinstance(x, tuple) else x  # (attention residuals: the running residual and the bank)
        c["step_longest_sequence"] = max(self.segments) if self.segments else lead.shape[1]
        kind = self.kind
        D = lead.shape[-1]
        made = {}

        def p(name, shape):  # each parameter is made once, however many documents use it
            if name not in made:
                made[name] = self.param(name, _init(), shape)
            return made[name]

        if self.segments and c["moe_impl"] == "capacity":
            raise ValueError("segments: packed documents are modelled with ideal or dense MoE only (capacity groups "
                             "are rows of max_target_length slots)")
        state = {"top_idx": top_idx, "aux": aux}

        def mixer(h):
            if not self.segments:
                return one_sequence(h)
            # packed documents: each through the mixer on its own (a varlen kernel); a DSA layer's top-k indices
            # are document-local, kept in the document's rows
            bounds = np.cumsum((0,) + self.segments)
            outs, tops, full = [], [], state["top_idx"]
            for a, b in zip(bounds[:-1], bounds[1:]):
                state["top_idx"] = full[:, a:b, :min(full.shape[-1], b - a)]
                outs.append(one_sequence(h[:, a:b]))
                t = state["top_idx"]
                tops.append(jnp.pad(t, ((0, 0), (0, 0), (0, full.shape[-1] - t.shape[-1]))))
            state["top_idx"] = jnp.concatenate(tops, axis=1).astype(full.dtype)
            return jnp.concatenate(outs, axis=1)

        def one_sequence(h):  # the mixer's Flax layer: its family's slot (maxflops.xla.registry)
            out, state["top_idx"], state["aux"] = proof_of_kind(kind).layer(c, kind, p, h, state["top_idx"],
                                                                             state["aux"])
            if kind.parallel is not None:  # the second mixer, on the same input, its parameters apart
                side, state["top_idx"], state["aux"] = proof_of_kind(kind.parallel).layer(
                    c, kind.parallel, lambda name, shape: p("parallel_" + name, shape), h, state["top_idx"],
                    state["aux"])
                out = out + side
            return out

        def ffn(h):
            gated = len(c["mlp_activations"]) == 2
            if kind.ffn == "moe":
                E, F = c["num_experts"], c["moe_mlp_dim"]
                X = c["moe_latent_size"] or D  # a latent MoE's experts work on the latent
                scored = E + (c["shared_experts"] if c["moe_router_shared"] else 0)  # (Inkling's: shared scored)
                R = c["moe_router_mlp_dim"]  # (ZAYA's MLP router: D -> R -> R -> R -> the experts)
                if c["moe_router_product_keys"]:  # (Doge's: D -> two half keys of floor(sqrt(E)))
                    scored = 2 * terms.product_keys(E)[0]
                params = {"router": p("router", (R or D, scored)), "experts_up": p("experts_up", (E, X, F)),
                          "experts_down": p("experts_down", (E, F, X))}
                if R:
                    params |= {"router_down": p("router_down", (D, R)), "router_fc1": p("router_fc1", (R, R)),
                               "router_fc2": p("router_fc2", (R, R))}
                experts_gated = gated and not c["moe_experts_ungated"]
                if experts_gated:
                    params["experts_gate"] = p("experts_gate", (E, X, F))
                if c["moe_latent_size"]:
                    params |= {"latent_in": p("latent_in", (D, X)), "latent_out": p("latent_out", (X, D))}
                for i in range(c["shared_experts"]):
                    params |= _mlp_params(p, f"shared{i}_", D, c["shared_expert_mlp_dim"] or F, gated)
                if c["shared_experts"] and c["shared_expert_gate"]:
                    params["shared_gate"] = p("shared_gate", (D, 1))
                return K.moe(params, h, E, c["num_experts_per_tok"], gated, c["moe_impl"], c["capacity_factor"],
                             c["shared_experts"], c["shared_experts"] > 0 and c["shared_expert_gate"],
                             experts_gated, c["moe_router_product_keys"])
            width = c["mlp_dim"] * (2 if kind.kv_shared and c["double_wide_kv_shared_mlp"] else 1)  # (Gemma 4 E2B)
            with jax.named_scope("mlp"):
                return K.mlp(_mlp_params(p, "", D, width, gated), h, gated)

        if c["altup_num_inputs"]:  # AltUp: x is the streams [B, L, n, D]
            x = _altup_layer(p, x, kind, mixer, ffn, c["laurel_rank"])
            if ple is not None:  # the per-layer embedding from the corrected active stream into the others
                x = x.at[:, :, 1:].add(_per_layer(p, x[:, :, 0], ple)[:, :, None, :])
            return (x, state["top_idx"], state["aux"]), None
        def branch_conv(y, tag):
            """Inkling: a causal depthwise conv over a branch's output, each document's its own."""
            Kc = c["residual_conv_kernel"]
            if not Kc:
                return y
            w = p(f"res_conv_{tag}", (Kc, 1, D))
            bounds = np.cumsum((0,) + (self.segments or (y.shape[1],)))
            with jax.named_scope("residual_conv"):
                return y + jnp.concatenate([K.causal_conv(y[:, a:b], w, Kc) for a, b in zip(bounds[:-1], bounds[1:])],
                                           axis=1)

        if kind.attn_res:  # attention residuals: x is (the running residual, the bank of snapshots)
            x = _attn_res_layer(p, x, kind.attn_res, lambda h: branch_conv(mixer(h), "attn"),
                                lambda h: branch_conv(ffn(h), "ffn"), c["weighted_sum_impl"] == "einsum",
                                attn_res_queries(kind, c), messages, c["loop_message_rank"])
            return (x, state["top_idx"], state["aux"]), None
        branches = [("attn", mixer)] if kind.mixer != NO_MIXER else []
        branches += [("ffn", ffn)] if kind.ffn != NO_FFN else []
        x_in = x
        for tag, branch in branches:
            if c["mhc_expansion_rate"] > 1:
                x = _mhc(p, x, branch, tag, c["weighted_sum_impl"] == "einsum",
                         not c["mhc_plain_residual"], c["mhc_lowrank"])
                continue
            if c["gated_norm_rank"] and (tag == "attn" or kind.ffn == "moe"):  # A.X K2's GatedRMSNorm
                y = branch(_gated_norm(p, x, tag, c["gated_norm_rank"]))
            else:
                y = branch(_rms(x))
            x = x + branch_conv(y, tag)
        if ple is not None:  # the per-layer embedding, gated by the layer's output, added to it
            x = x + _per_layer(p, x, ple)
        if kind.no_grad:  # a pass run without a gradient (torch.no_grad: HRM's early L cycles): its work is not
            # differentiated, and the next pass's input still carries one (HRM injects the H state into every L
            # pass's input): the value is the pass's output, the gradient flows past it unchanged (no matmul)
            x = jax.lax.stop_gradient(x) + (x_in - jax.lax.stop_gradient(x_in))
        return (x, state["top_idx"], state["aux"]), None


def _per_layer(p, x, ple):
    """Per-layer embeddings in a layer (Gemma 4's, Gemma 3n's): a gate D -> P of the layer's output times the layer's
    slice of the embedding's projection, then P -> D, normed."""
    D, P = x.shape[-1], ple.shape[-1]
    with jax.named_scope("per_layer_emb"):
        g = jax.nn.gelu(K.dense(x, p("ple_gate", (D, P)))) * ple
        return _rms(K.dense(g, p("ple_out", (P, D))))


def _altup_layer(p, x, kind, mixer, ffn, laurel_rank):
    """One layer under AltUp (Gemma 3n's Gemma3nTextDecoderLayer, without its per-layer embedding): the streams x
    [B, L, n, D] predicted (a router D -> n on the normed active stream, tanh, coefficients n -> n^2, the streams
    mixed n x n over D, plus themselves); the layer on the active prediction (its mixer on the normed input, beside it
    LAuReL's D -> r -> D normed, then the FFN); the correction (the router on the layer's output, coefficients n -> n
    plus one, each stream's innovation scaled by its coefficient: elementwise)."""
    B, L, n, D = x.shape
    router = p("altup_router", (D, n))
    with jax.named_scope("altup"):
        mod = jnp.tanh(K.dense(_rms(x[:, :, 0]), router))
        coefs = K.dense(mod, p("altup_predict", (n, n * n))).reshape(B, L, n, n)
        pred = jnp.einsum("blnd,blnm->blmd", x, coefs) + x
    active = pred[:, :, 0]
    h = active
    if kind.mixer != NO_MIXER:
        normed = _rms(active)
        h = h + mixer(normed)
        if laurel_rank:
            with jax.named_scope("laurel"):
                h = h + _rms(K.dense(K.dense(normed, p("laurel_left", (D, laurel_rank))),
                                     p("laurel_right", (laurel_rank, D))))
    if kind.ffn != NO_FFN:
        h = h + ffn(_rms(h))
    with jax.named_scope("altup"):
        correct = K.dense(jnp.tanh(K.dense(_rms(h), router)), p("altup_correct", (n, n))) + 1.0
    return pred + (h - active)[:, :, None, :] * correct[..., None]


def _gated_norm(p, x, tag, r):
    """A.X K2's GatedRMSNorm: the norm's output y scaled by sigmoid(fc2(silu(fc1(y)))), fc1 D -> r, fc2 r -> D."""
    D = x.shape[-1]
    y = _rms(x)
    with jax.named_scope("norm_gate"):
        g = K.dense(jax.nn.silu(K.dense(y, p(f"gate_fc1_{tag}", (D, r)))), p(f"gate_fc2_{tag}", (r, D)))
    return y * jax.nn.sigmoid(g)


def _attn_res_aggregate(prefix, bank, w, einsum=True):
    """Attention residuals' aggregate (Kimi K3): over the rows [bank..., prefix] [B, L, R, D], a score per row (its
    RMS-normed row against w, D -> 1), softmax over the rows, the weighted sum of the rows. ``einsum``: both
    contractions as dots; else a multiply and a sum (Megatron-Bridge's)."""
    rows = jnp.concatenate([bank, prefix[:, :, None, :]], axis=2)
    normed = rows * jax.lax.rsqrt(jnp.mean(rows * rows, -1, keepdims=True) + 1e-5)
    with jax.named_scope("attn_res"):
        scores = jnp.einsum("blrd,d->blr", normed, w) if einsum else (normed * w).sum(-1)
        probs = jax.nn.softmax(scores, -1)
        return jnp.einsum("blr,blrd->bld", probs, rows) if einsum else (probs[..., None] * rows).sum(2)


def _message_gate(p, h, message, j, r):
    """Inkling 2 Loop's message gate: from the normed input and message side by side (2D -> r), a forget gate and a
    message gate (r -> D each, tanh): (1 - forget) h + gate message."""
    D = h.shape[-1]
    with jax.named_scope("message_gate"):
        g = K.dense(jnp.concatenate([_rms(h), _rms(message)], -1), p(f"msg_down{j}", (2 * D, r)))
        forget, keep = (jnp.tanh(K.dense(g, p(f"msg_{w}{j}", (r, D)))) for w in ("forget", "keep"))
    return (1 - forget) * h + keep * message


def _attn_res_layer(p, x, rows, mixer, ffn, einsum, queries=1, messages=None, rank=0):
    """One layer under attention residuals, as Megatron-Bridge's KimiK3TransformerLayer runs it: the mixer's input
    aggregates the bank and the running residual (layer 0's is the embedding itself); a block-write layer (its FFN
    input aggregates one row more) keeps the running residual as a snapshot, and its mixer's output restarts it; the
    FFN's input aggregates again. ``queries`` 3: the mixer's queries, keys and values each read an aggregate of its
    own (Inkling 2's full layers). ``messages`` (a looped pass after the first, Inkling 2 Loop): the previous pass's
    snapshots after its first and its output, aggregated by four queries, gate the query, key, value and FFN inputs
    (``rank``). The mixer's separate inputs are summed into its one input here (elementwise: the same matmuls)."""
    prefix, bank = x
    D = prefix.shape[-1]
    inputs = [prefix]
    if rows[0]:
        inputs = [_attn_res_aggregate(prefix, bank, p("res_attn" + (f"{i}" if i else ""), (D,)), einsum)
                  for i in range(queries)]
    sent = None
    if messages is not None:
        sent = [_attn_res_aggregate(messages[1], messages[0], p(f"msg_query{j}", (D,)), einsum) for j in range(4)]
        inputs = [_message_gate(p, inputs[min(j, len(inputs) - 1)], sent[j], j, rank) for j in range(3)]
    h = sum(inputs[1:], inputs[0])
    write = rows[1] != rows[0]
    if write:
        bank = jnp.concatenate([bank, prefix[:, :, None, :]], axis=2)
    out = mixer(_rms(h))
    prefix = out if write else prefix + out
    h = _attn_res_aggregate(prefix, bank, p("res_mlp", (D,)), einsum)
    if sent is not None:
        h = _message_gate(p, h, sent[3], 3, rank)
    return prefix + ffn(_rms(h)), bank


def _mlp_params(p, prefix, D, F, gated):
    out = {prefix + "up": p(prefix + "up", (D, F)), prefix + "down": p(prefix + "down", (F, D))}
    if gated:
        out[prefix + "gate"] = p(prefix + "gate", (D, F))
    return out


def _rms(x):
    return x * jax.lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6)


def _gated_weights(p, scope, prefix, x, r):
    """Gated hyper-connections' input weights (Qwen4-Exp's): the normed streams x [B, L, G, D] through G*D -> r ->
    G*D, a sigmoid weight per stream and channel; the streams' weighted mean (elementwise), and the normed streams."""
    B, L, G, D = x.shape
    xn = _rms(x)
    with jax.named_scope(scope):
        w = K.dense(jax.nn.silu(K.dense(xn.reshape(B, L, G * D), p(f"{prefix}_down", (G * D, r))) / G),
                    p(f"{prefix}_up", (r, G * D)))
    return (jax.nn.sigmoid(w).reshape(B, L, G, D) * xn).mean(2), xn


def _mhc(p, x, branch, tag, einsum_sum=True, mix=True, lowrank=0):
    """One mHC mixing around ``branch`` over the streams x [B, L, G, D]: a projection of the normed streams to the
    pre (G), post (G) and residual (G x G) weights, the branch on the pre-weighted sum of the streams (a contraction
    over G; a multiply and a sum without ``einsum_sum``), and the streams mixed by the residual weights (G x G over
    D) plus the branch output spread by the post weights (elementwise). ``lowrank`` (Qwen4-Exp's gated
    hyper-connections, the streams kept): per-channel input weights through G*D -> r -> G*D and the post weights
    G*D -> G."""
    B, L, G, D = x.shape
    if lowrank:
        h, xn = _gated_weights(p, "mhc", f"hc_{tag}", x, lowrank)
        with jax.named_scope("mhc"):
            post = 2 * jax.nn.sigmoid(K.dense(xn.reshape(B, L, G * D), p(f"hc_{tag}_inject", (G * D, G))) / G)
        return x + post[..., None] * branch(h)[:, :, None, :]
    with jax.named_scope("mhc"):
        proj = K.dense(_rms(x.reshape(B, L, G * D)), p(f"hc_{tag}", (G * D, 2 * G + (G * G if mix else 0))))
    pre, post = jax.nn.sigmoid(proj[..., :G]), 2 * jax.nn.sigmoid(proj[..., G:2 * G])
    with jax.named_scope("mhc"):
        h = jnp.einsum("blg,blgd->bld", pre, x) if einsum_sum else (pre[..., None] * x).sum(2)
    y = branch(_rms(h))
    if not mix:  # HY-V4: the streams kept, the branch's output added by the post weights
        return x + post[..., None] * y[:, :, None, :]
    res = jax.nn.softmax(proj[..., 2 * G:].reshape(B, L, G, G), -1)
    with jax.named_scope("mhc"):
        mixed = jnp.einsum("blgh,blgd->blhd", res, x)
    return mixed + post[..., None] * y[:, :, None, :]


def _looped_attn_res(plan, c, carry, make):
    """The decoder rows of a looped model under attention residuals (Inkling 2 Loop): each pass of a looped block
    restarts from the residual and snapshots the block began with; a pass after the first gets the previous pass's
    snapshots after its first and its output as messages where its kind reads them."""
    starts = {parse_loop_rule(rule)[0] for rule in c["layer_loops"]}
    before = previous = None
    # (the decoder rows come first, in layer_order's order; the MTP modules' after them)
    for r, ((_, i), (layer, p)) in enumerate(zip(plan.rows, layer_order(c))):
        kind = plan.kinds[i]
        x, top, aux = carry
        if layer in starts and p == 1:
            before = x
        elif layer in starts:  # a later pass: from the loop's start, the previous pass as its messages
            previous = (x[1][:, :, before[1].shape[2] + 1:], x[0])
            carry = (before, top, aux)
        carry, _ = make(r, kind)(carry, None, previous if kind.messages else None)
    return carry


def _runs(plan):
    """Consecutive decoder rows of the same kind: [(kind, count)]."""
    rows = [plan.kinds[i] for name, i in plan.rows if not plan.kinds[i].mtp]
    return [(kind, len(list(group))) for kind, group in itertools.groupby(rows)]


class Decoder(nn.Module):
    """Embedding, the plan's decoder layers (runs under nn.scan), MTP modules, and the output head."""

    cfg: tuple
    segments: tuple = ()  # see Layer

    @nn.compact
    def __call__(self, tokens):
        c = dict(self.cfg)
        plan = build_plan(c)  # cfg is the hardware view: the layers the kernels run
        D, V = c["emb_dim"], c["vocab_size"]
        emb = self.param("embedding", _init(1.0), (V, D))
        head = self.param("head", _init(), (D, V))
        if c["head_dense"]:  # ModernBERT's prediction head: D -> D, its activation and norm, before the head
            head = (self.param("head_dense", _init(), (D, D)), head)
        B, L = tokens.shape
        x = jnp.take(emb, tokens, axis=0)
        P = c["prompt_tokens"]
        if P:  # prompt tokens ahead of every sequence (CPM-Ant): the layers run them, the head does not
            x = jnp.concatenate([jnp.broadcast_to(self.param("prompt", _init(1.0), (P, D)), (B, P, D)), x], axis=1)
            L += P
        G = c["mhc_expansion_rate"]
        if G > 1:
            if c["mtp_num_layers"] and c["mode"] == "train":
                raise ValueError("mtp_num_layers: MTP modules with mHC streams are not modelled in the Flax model")
            x = jnp.broadcast_to(x[:, :, None, :], (B, L, G, D))  # the embedding in every stream
        ple_dim, ple = c["per_layer_input_dim"], None
        if ple_dim:  # per-layer embeddings: the embedding projected D -> layers x P, one slice per decoder layer
            for key in ("layer_loops", "mtp_num_layers", "prompt_tokens"):
                if c[key]:
                    raise ValueError(f"{key}: per-layer embeddings with it are not modelled in the Flax model")
            with jax.named_scope("per_layer_emb_proj"):
                ple = K.dense(x, self.param("ple_proj", _init(), (D, c["num_decoder_layers"] * ple_dim)))
            ple = _rms(ple.reshape(B, L, c["num_decoder_layers"], ple_dim))
        A = c["altup_num_inputs"]
        if A:  # AltUp: the embedding and its projections D -> D, one per other stream
            if c["mtp_num_layers"] and c["mode"] == "train":
                raise ValueError("mtp_num_layers: MTP modules with AltUp streams are not modelled in the Flax model")
            with jax.named_scope("altup_proj"):
                x = jnp.stack([x] + [K.dense(x, self.param(f"altup_in{i}", _init(), (D, D))) for i in range(1, A)], 2)
        top = jnp.zeros((B, L, min(c["index_topk"], L)), jnp.int32)
        if c["attn_res_block_size"]:  # attention residuals: the running residual and an empty bank of snapshots
            x = (x, jnp.zeros((B, L, 0, D), x.dtype))
        carry = (x, top, jnp.zeros((), emb.dtype))
        layer_cls = nn.remat(Layer) if c["remat_policy"] == "full" else Layer
        start = 0
        if c["attn_res_block_size"] and c["layer_loops"]:  # looped passes over attention residuals: row by row
            carry = _looped_attn_res(plan, c, carry, lambda r, kind: layer_cls(kind, self.cfg, self.segments,
                                                                                name=f"row{r}"))
        for r, (kind, n) in enumerate(_runs(plan) if not (c["attn_res_block_size"] and c["layer_loops"]) else ()):
            rows = None if ple is None else jnp.moveaxis(ple[:, :, start:start + n], 2, 0)  # [n, B, L, P]
            if n == 1:
                carry, _ = layer_cls(kind, self.cfg, self.segments, name=f"run{r}")(
                    carry, None if rows is None else rows[0])
            else:
                scanned = nn.scan(layer_cls, variable_axes={"params": 0}, split_rngs={"params": True}, length=n)
                carry, _ = scanned(kind, self.cfg, self.segments, name=f"run{r}")(carry, rows)
            start += n
        x, top, aux = carry
        if c["attn_res_block_size"]:  # the output: one more aggregate (no norm of its own)
            x = _attn_res_aggregate(*x, self.param("res_out", _init(), (D,)), c["weighted_sum_impl"] == "einsum")
        if P:
            x, L = x[:, P:], L - P
        if G > 1:  # collapse the streams: the hyper head's weights (a projection), or a plain sum
            if c["mhc_hyper_head"] and c["mhc_lowrank"]:  # (gated: a weight per stream and channel)
                x = _gated_weights(lambda name, shape: self.param(name, _init(), shape), "mhc_head", "hc_head", x,
                                   c["mhc_lowrank"])[0]
            elif c["mhc_hyper_head"]:
                with jax.named_scope("mhc_head"):
                    w = K.dense(_rms(x.reshape(B, L, G * D)), self.param("hc_head", _init(), (G * D, G)))
                x = (jax.nn.sigmoid(w)[..., None] * x).sum(2)
            else:
                x = x.sum(2)
        if A:  # AltUp's streams out: the active one as it is, the others through D -> D, averaged
            with jax.named_scope("altup_proj"):
                x = jnp.mean(jnp.stack([x[:, :, 0]] + [K.dense(x[:, :, i], self.param(f"altup_out{i}", _init(),
                                                                                         (D, D))) for i in range(1, A)],
                                       2), 2)
        logits = [_head(head, x)]
        mtp_kinds = [plan.kinds[i] for _, i in plan.rows if plan.kinds[i].mtp]
        k = 0
        for j, kind in enumerate(mtp_kinds):
            if not kind.mtp_inner:  # a module opens: the shifted tokens' embedding joins through the eh projection
                k += 1
                shifted = jnp.take(emb, jnp.roll(tokens, -k, axis=1), axis=0)
                with jax.named_scope("mtp_eh_proj"):
                    eh = self.param(f"mtp{k}_eh", _init(), (2 * D, D))
                    x = K.dense(jnp.concatenate([_rms(shifted), _rms(x)], -1), eh)
            name = f"mtp{k}_{j}" if kind.mtp_inner else f"mtp{k}"
            (x, top, aux), _ = layer_cls(kind, self.cfg, self.segments, name=name)((x, top, aux))
            if j + 1 == len(mtp_kinds) or not mtp_kinds[j + 1].mtp_inner:  # the module closes: its head
                logits.append(_head(head, x))
        return logits, aux


def _head(w, x):
    with jax.named_scope("logits"):
        if isinstance(w, tuple):  # (the prediction head's D -> D, the head)
            x, w = _rms(jax.nn.gelu(K.dense(_rms(x), w[0]))), w[1]
        return K.dense(_rms(x), w)


def _ce(logits, targets):
    logp = jax.nn.log_softmax(logits, -1)
    return -jnp.take_along_axis(logp, targets[..., None], -1).mean()


# What the Flax model does not build, and where each is proved instead: a config that has one is refused, naming the
# key (a model built without it would be compared with a count that has it).
NOT_BUILT = {
    "remat_policy": (lambda c: c["remat_policy"] != "reversible",
                     "Reformer's reversible layers (held to transformers' torch model: tests/loaders)"),
    "head_input_dim": (lambda c: not c["head_input_dim"],
                       "Reformer's head over two streams (held to transformers' torch model)"),
    "engram_layers": (lambda c: not c["engram_layers"],
                      "Engram's n-gram block (held to MaxText's compiled programs, tests/fixtures/maxtext_programs)"),
    "vision_layers": (lambda c: not c["vision_layers"], "a vision encoder (priced from its stated widths)"),
    "zero_experts": (lambda c: not c["zero_experts"],
                     "zero-computation experts (their share of the routed slots is a stated input)"),
    "patch_layers": (lambda c: not c["patch_layers"],
                     "BLT's patch stream (held to transformers' torch model: tests/loaders; the patch family's layers "
                     "are built, over the byte stream's own patches)"),
    "patcher_head_layer": (lambda c: c["patcher_head_layer"] < 0,
                           "BLT's patcher head (held to transformers' torch model)"),
    "layer_widths": (lambda c: not any(r.partition("@")[0].strip() == "emb_dim" for r in c["layer_widths"]),
                     "layers of their own hidden width (BLT's patcher; held to transformers' torch model)"),
}


def build(config, abstract=False, segment_lengths=(), **overrides):
    """(reduced config, module, params, tokens); deterministic. ``abstract``: params and tokens as
    ShapeDtypeStructs (enough to lower and count; no initialization runs). ``segment_lengths``: packed documents
    run as one THD row of their total length, each attended on its own (count the engine with the same
    ``segment_lengths``)."""
    c = reduce_config(config, **overrides)
    for key, (built, what) in NOT_BUILT.items():
        if not built(c):
            raise ValueError(f"config key {key!r}: {c[key]!r}: the Flax model does not build {what}; count it "
                             "without, or see where it is proved")
    segments = tuple(int(n) for n in segment_lengths)
    model = Decoder(tuple(sorted(hardware_view(c).items())), segments)
    shape = (1, sum(segments)) if segments else (int(c["per_device_batch_size"]), c["max_target_length"])
    tokens = jax.random.randint(jax.random.PRNGKey(1), shape, 0, c["vocab_size"])
    if abstract:
        params = jax.eval_shape(model.init, jax.random.PRNGKey(0), tokens)
        return c, model, params, jax.ShapeDtypeStruct(tokens.shape, tokens.dtype)
    params = jax.jit(model.init)(jax.random.PRNGKey(0), tokens)
    return c, model, params, tokens


def loss_fn(model, params, tokens):
    logits, aux = model.apply(params, tokens)
    loss = _ce(logits[0], jnp.roll(tokens, -1, axis=1))
    for k, lg in enumerate(logits[1:], start=2):
        loss = loss + _ce(lg, jnp.roll(tokens, -k, axis=1))
    return loss + aux


def step_program(model, params, tokens, mode: str, abstract: bool = False) -> tuple:
    """(fn, args) of the program a mode runs: the train step (``train_step_fn``; the optimizer state made from
    ``params``, by shape alone when ``abstract``) or the forward."""
    if mode == "train":
        step, opt = train_step_fn(model)
        return step, (params, jax.eval_shape(opt.init, params) if abstract else opt.init(params), tokens)
    return forward_fn(model), (params, tokens)


def forward_fn(model):
    return lambda params, tokens: model.apply(params, tokens)[0]


def train_step_fn(model, learning_rate=1e-2):
    """value_and_grad of the loss and an optax SGD-with-momentum update (elementwise: no matmuls)."""
    opt = optax.sgd(learning_rate, momentum=0.9)

    def step(params, opt_state, tokens):
        loss, grads = jax.value_and_grad(lambda prm: loss_fn(model, prm, tokens))(params)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return step, opt
