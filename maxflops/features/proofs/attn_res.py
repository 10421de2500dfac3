"""Attention residuals' part of the Flax model (Kimi K3's AttnRes, Inkling 2's): a residual scheme whose state is
(the running residual [B, L, D], the bank of snapshots [B, L, R, D])."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...proofkit.kernels import dense, rms
from ..attn_res import attn_res_queries
from ..layer_loops import layer_order, parse_loop_rule


def reduce(c, out):
    """Snapshots every 2 layers (several over the reduced depth; a looped model keeps its depth, and its block)."""
    return {} if c["layer_loops"] else {"attn_res_block_size": min(c["attn_res_block_size"], 2)}


def enter(c, x, param):
    """The running residual and an empty bank of snapshots."""
    B, L, D = x.shape
    return x, jnp.zeros((B, L, 0, D), x.dtype)


def layer(c, kind, p, x, run, messages):
    return _attn_res_layer(p, x, kind.attn_res, run.mixer, run.ffn, c["weighted_sum_impl"] == "einsum",
                           attn_res_queries(kind, c), messages, c["loop_message_rank"])


def leave(c, x, param):
    """The output: one more aggregate (no norm of its own)."""
    return _aggregate(*x, param("res_out", (x[0].shape[-1],)), c["weighted_sum_impl"] == "einsum")


def rows(plan, c, carry, make):
    """The decoder rows of a looped model (Inkling 2 Loop), row by row: each pass of a looped block restarts from the
    residual and snapshots the block began with; a pass after the first gets the previous pass's snapshots after its
    first and its output as messages where its kind reads them. None where the model is not looped (the trunk runs
    its rows)."""
    if not c["layer_loops"]:
        return None
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


def _aggregate(prefix, bank, w, einsum=True):
    """The aggregate (Kimi K3): over the rows [bank..., prefix] [B, L, R, D], a score per row (its RMS-normed row
    against w, D -> 1), softmax over the rows, the weighted sum of the rows. ``einsum``: both contractions as dots;
    else a multiply and a sum (Megatron-Bridge's)."""
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
        g = dense(jnp.concatenate([rms(h), rms(message)], -1), p(f"msg_down{j}", (2 * D, r)))
        forget, keep = (jnp.tanh(dense(g, p(f"msg_{w}{j}", (r, D)))) for w in ("forget", "keep"))
    return (1 - forget) * h + keep * message


def _attn_res_layer(p, x, rows, mixer, ffn, einsum, queries=1, messages=None, rank=0):
    """One layer, as Megatron-Bridge's KimiK3TransformerLayer runs it: the mixer's input aggregates the bank and the
    running residual (layer 0's is the embedding itself); a block-write layer (its FFN input aggregates one row more)
    keeps the running residual as a snapshot, and its mixer's output restarts it; the FFN's input aggregates again.
    ``queries`` 3: the mixer's queries, keys and values each read an aggregate of its own (Inkling 2's full layers).
    ``messages`` (a looped pass after the first, Inkling 2 Loop): the previous pass's snapshots after its first and
    its output, aggregated by four queries, gate the query, key, value and FFN inputs (``rank``). The mixer's
    separate inputs are summed into its one input here (elementwise: the same matmuls)."""
    prefix, bank = x
    D = prefix.shape[-1]
    inputs = [prefix]
    if rows[0]:
        inputs = [_aggregate(prefix, bank, p("res_attn" + (f"{i}" if i else ""), (D,)), einsum)
                  for i in range(queries)]
    sent = None
    if messages is not None:
        sent = [_aggregate(messages[1], messages[0], p(f"msg_query{j}", (D,)), einsum) for j in range(4)]
        inputs = [_message_gate(p, inputs[min(j, len(inputs) - 1)], sent[j], j, rank) for j in range(3)]
    h = sum(inputs[1:], inputs[0])
    write = rows[1] != rows[0]
    if write:
        bank = jnp.concatenate([bank, prefix[:, :, None, :]], axis=2)
    out = mixer(rms(h))
    prefix = out if write else prefix + out
    h = _aggregate(prefix, bank, p("res_mlp", (D,)), einsum)
    if sent is not None:
        h = _message_gate(p, h, sent[3], 3, rank)
    return prefix + ffn(rms(h)), bank
