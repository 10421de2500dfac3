"""Plan + terms + masks -> a Breakdown: each layer kind's forward (``maxflops.pricing``) made a step's model and
hardware FLOPs, the mode, gradient accumulation, conventions. The train multipliers are ``maxflops.training``'s;
resolution is ``maxflops.resolve``'s.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

from . import stepform, terms
from .sequences import Packed, Uniform, as_lengths, batch, priced_tokens, program_batch, uses_patches
from .breakdown import Breakdown, make_breakdown
from .components import ATTENTION
from .features import FEATURES
from .plan import LayerKind
from .parameters import parameters
from .pricing import price_forward
from .resolve import call_key, from_source, hardware_view, plan_of, resolve_call, resolve_key
from .training import (INDEXER_COMPONENTS, REMAT_SAVES, WARMUP_CSE, WARMUP_REMAT, hardware_train_flops, head_passes,
                       recomputed, train_factor, warmup)


HEADS = tuple(f for f in FEATURES if f.head is not None)

# Components of an MTP row outside its transformer layer (not recomputed by layer remat).
_OUTSIDE_LAYER = frozenset({"mtp_eh_proj", "mtp_norm", "logits", "mhc_head"})


def price_hardware(kind: LayerKind, c, seqs, decode: bool, steps: int) -> dict[str, int]:
    """Hardware FLOPs of one row of this kind for the whole step (``c``: the exact view of the config), each
    component rounded to an integer (see ``hardware_raw``)."""
    return {k: _to_int(v) for k, v in hardware_raw(kind, c, seqs, decode, steps).items()}


# The MoE's token routing: matmuls over the tokens and the model width only (no expert hidden width), which a mesh
# whose residual stream is whole over an axis cannot split over it (moe_routing_replicas).
MOE_ROUTING = ("moe_router", "moe_dispatch", "moe_combine", "moe_weighted_sum")


def hardware_raw(kind: LayerKind, c, seqs, decode: bool, steps: int) -> dict:
    """Hardware FLOPs of one row of this kind for the whole step, unrounded (see ``_hardware_step``), with the MoE
    routing's replicas on a mesh that repeats it (``moe_routing_replicas``) and a pipelined layer's bubble."""
    out = _hardware_step(kind, c, seqs, decode, steps)
    if c["moe_routing_replicas"] > 1:
        routing = sum(out[k] for k in MOE_ROUTING if k in out)
        if routing:
            out["moe_routing_replicated"] = (c["moe_routing_replicas"] - 1) * routing
    if kind.pipelined:  # each stage also runs its layers in the stages - 1 bubble iterations
        S, R = c["pipeline_stages"], c["pipeline_repeats"]
        M = c["pipeline_microbatches"] or S
        out["pipeline_bubble"] = sum(out.values()) * Fraction((S - 1) * (2 if c["pipeline_delay"] else 1), R * M)
    return out


def _hardware_step(kind: LayerKind, c, seqs, decode: bool, steps: int) -> dict:
    """Hardware FLOPs of one row of this kind for the whole step (``c``: the exact view of the config), unrounded.

    Train: each component's model multiplier, plus under a remat policy one more forward of every layer matmul
    the policy does not save, except the tail (see ``price_forward``), plus one QK^T forward under
    ``flash_backward_recompute``.
    """
    p = price_forward(kind, c, seqs, decode, hardware=True)
    fwd, qk, tail, single, unnamed = p.out, p.qk, p.tail, p.single, p.unnamed
    if kind.inner:  # its output feeds the next layer of its rematerialized unit: nothing is a tail
        tail = {}
    if c["remat_policy"] == "reversible":  # a reversible layer runs its whole forward again, but for what its
        tail = {k: v for k, v in tail.items() if k in p.forward_only}  # forward kept and no gradient reads
    if c["mode"] != "train" or kind.no_grad:  # (a pass without a gradient: its forward, nothing recomputed)
        return {k: v * steps for k, v in fwd.items()}
    saved = REMAT_SAVES.get(c["remat_policy"])
    wi_share = Fraction(2, 3) if len(c["mlp_activations"]) == 2 else Fraction(1, 2)
    if kind.mtp and not c["remat_mtp"] or kind.no_remat:
        saved = None
    # Warm-up: the backward pass recomputes only what the indexer's gradient needs (see WARMUP_REMAT).
    # Warm-up, a layer outside a loop: the last one's unread work is dropped; a layer scanned alone has part of its
    # recompute merged with its forward.
    recompute, dead, merged = (WARMUP_REMAT, kind.dead, WARMUP_CSE if kind.cse else frozenset()) if warmup(c) \
        else (None, False, frozenset())
    if recompute is not None:
        unnamed = {**unnamed, **p.warmup_unnamed}  # of the unnamed parts, only what the indexer's loss reads
        if not kind.computes_index or c["indexer_loss_scaling_factor"] == 0:
            saved = None
    out = {}
    for k, v in fwd.items():
        if dead and k not in WARMUP_REMAT:
            continue
        # forward only: once, unless nothing of the step runs it at all (the DSA warm-up with no loss: 0x)
        total = (v if train_factor(k, c) else 0) if k in p.forward_only else \
            hardware_train_flops(k, v, single.get(k, 0), c)
        if k in p.grad_extra and train_factor(k, c) == 3 and k not in p.forward_only:
            total += p.grad_extra[k]
        if saved is not None and not (kind.mtp and k in _OUTSIDE_LAYER) and (recompute is None or k in recompute) \
                and k not in merged:
            total += recomputed(k, v, qk, tail.get(k, 0), saved, wi_share, unnamed.get(k, 0))
        if k == "core_attention" and c["flash_backward_recompute"] and train_factor(k, c) == 3:
            total += qk + (v if c["flash_backward_split"] else 0)  # split: the dq kernel's QK^T and dO V^T
        out[k] = total * steps
    for k in p.grad_extra.keys() - fwd.keys():  # backward-only work (its own component)
        out[k] = p.grad_extra[k] * steps
    return out


# --- the count --------------------------------------------------------------------------------------------

def _to_int(x) -> int:
    return x if isinstance(x, int) else round(x)


def _rounded(raw: dict) -> dict:
    """Each component to the FLOP (half to even): a convention's Fractions, once per component and step."""
    if set(map(type, raw.values())) <= _INT:
        return raw
    return {k: v if type(v) is int else round(v) for k, v in raw.items()}


_INT = {int}


def count(config, segment_lengths: Sequence[int] | Any = None, **overrides) -> Breakdown:
    """Exact per-device per-step FLOPs of ``config``.

    ``segment_lengths``: the real document lengths of one micro-batch on this device (packed THD); every
    mask restarts at a document start and padding is not counted. Without it the batch is
    ``per_device_batch_size`` full sequences of ``max_target_length``. In decode mode it gives each sequence's
    KV-cache length instead of ``decode_kv_length``. ``overrides`` replace config keys for this count only
    (validated; e.g. ``count(cfg, max_target_length=L)`` in a sweep).
    """
    key = call_key(config, overrides)
    if segment_lengths is None:  # a Breakdown is immutable: the same call returns the same one
        hit = _COUNTS.get(key)
        if hit is None and key[1]:
            hit = stepform.step_count(key, _price_step, _hardware_parts)
        if hit is not None:
            _store(key, hit)
            return hit
    c, plan = resolve_key(key)
    mode = c["mode"]
    decode = mode == "decode"
    prompt = c["prompt_tokens"]  # run ahead of every sequence by the layers, not the head
    if segment_lengths is not None and c["patches_per_sequence"] and uses_patches(c):
        raise ValueError(f"config key 'patches_per_sequence': {c['patches_per_sequence']} with segment_lengths: a "
                         "stated patch count is a sequence's; packed documents are priced with 0 (L + 1 patches "
                         "each)")
    if segment_lengths is not None and prompt:
        raise ValueError(f"config key 'prompt_tokens': {prompt} with segment_lengths: packed documents with prompt "
                         "tokens ahead of each sequence are not modelled")
    if segment_lengths is not None:
        seqs = Packed(as_lengths(segment_lengths, c))
    elif decode:
        seqs = Uniform(c["decode_kv_length"], batch(c))
    else:
        seqs = Uniform(c["max_target_length"], batch(c))
    steps = c["gradient_accumulation_steps"] if mode == "train" else 1
    train = mode == "train"
    run = Uniform(seqs.length + prompt, seqs.count) if prompt else seqs  # what the layers run

    priced = [_rounded(model_raw(kind, c, run, decode, steps)) for kind in plan.kinds]
    tokens = seqs.count if decode else seqs.tokens
    head = _head(c, (tokens if decode else priced_tokens(seqs, c)[0]) * head_passes(c, steps))
    if c["vision_layers"]:
        head.update(_vision(c, mode, steps))

    def hardware():  # evaluated on first use of Breakdown.hardware_*: its own view, plan and head
        return _hardware_parts(c, seqs, tokens, segment_lengths is not None, steps)

    b = make_breakdown(c["model_name"], mode, c["convention"], _to_int(tokens * steps), plan, priced, head,
                       hardware, lambda: parameters(c), c["not_priced"])
    if segment_lengths is None:
        _store(key, b)
    return b


def _store(key, b: Breakdown) -> None:
    if len(_COUNTS) >= 32:  # the calls a step loop repeats; a bigger store costs every new count more (its
        _COUNTS.clear()     # Breakdowns' memory is not reused while they are held: measured 256 at +30%)
    _COUNTS[key] = b


def _hardware_parts(c, seqs, tokens, packed: bool, steps: int) -> tuple:
    """(plan, priced rows, head) of hardware FLOPs: the config's exact view, its own plan and head."""
    mode = c["mode"]
    decode = mode == "decode"
    hw = hardware_view(c)
    hw_plan = plan_of(hw)
    hw_seqs, hw_tokens = seqs, tokens
    if packed and not decode and hw["packed_kernel"] == "row":
        hw_seqs = Uniform(hw["max_target_length"], program_batch(hw))  # the program runs whole rows, padding too
        hw_tokens = hw_seqs.tokens
    elif not packed and hw["batch_shards"]:  # a batch padded to whole sequences per batch shard (program_batch)
        rows = program_batch(hw)
        if rows != seqs.count:
            hw_seqs = Uniform(seqs.length, rows)
            hw_tokens = rows if decode else hw_seqs.tokens
    hw_head = _head(hw, hw_tokens * head_passes(hw, steps), hardware=True)
    hw_head.update(_vision(hw, mode, steps))
    if hw["prompt_tokens"]:  # the layers run the prompt tokens ahead of every sequence
        hw_seqs = Uniform(hw_seqs.length + hw["prompt_tokens"], hw_seqs.count)
    return hw_plan, [price_hardware(kind, hw, hw_seqs, decode, steps) for kind in hw_plan.kinds], hw_head


def _price_step(c, plan, seqs, decode: bool, steps: int) -> tuple:
    """(rows, head) of model FLOPs, unrounded: what ``count`` prices for full rows (the traced pricing)."""
    rows = [model_raw(kind, c, seqs, decode, steps) for kind in plan.kinds]
    head = head_raw(c, (seqs.count if decode else priced_tokens(seqs, c)[0]) * head_passes(c, steps))
    if c["vision_layers"]:
        head.update(vision_raw(c, c["mode"], steps))
    return rows, head


def model_raw(kind: LayerKind, c, seqs, decode: bool, steps: int) -> dict:
    """Model FLOPs of one row of this kind for the whole step, unrounded (a convention's Fractions kept)."""
    p = price_forward(kind, c, seqs, decode)
    raw = _model_raw(p, kind, c, steps)
    if c["mode"] == "train" and not kind.no_grad and (c["recompute_forwards"] or c["recompute_attention_forwards"]):
        # (a published hardware formula's recomputation: its forwards again, on top of the model count)
        for k, v in p.out.items():
            again = c["recompute_forwards"] + (c["recompute_attention_forwards"] if k in ATTENTION else 0)
            raw[k] = raw.get(k, 0) + v * again * steps
    if not c["attention_flops"]:  # (a 6N convention: the weights alone)
        return {k: v for k, v in raw.items() if k not in ATTENTION}
    return raw


def _model_raw(p, kind: LayerKind, c, steps: int) -> dict:
    """The model count of one row from its priced forward ``p``: the mode's passes, each component's rule."""
    fwd = p.out
    if c["mode"] == "train" and not kind.no_grad:  # (a pass without a gradient: its forward)
        if warmup(c) or not INDEXER_COMPONENTS.isdisjoint(fwd):
            # (model pricing's grad_extra: the DSA indexer's scores under a loss over the selected pairs only)
            # (an output no loss reads runs forward only, when the stage runs it at all)
            return {k: (v * (min(train_factor(k, c), 1) if k in p.forward_only else train_factor(k, c))
                        + p.grad_extra.get(k, 0)) * steps for k, v in fwd.items()}
        if p.forward_only:  # outputs no loss reads (LSH's buckets): their forward only
            return {k: v * (1 if k in p.forward_only else 3) * steps for k, v in fwd.items()}
        steps *= 3  # every other component: forward and two backward matmuls (train_factor)
    return {k: v * steps for k, v in fwd.items()} if steps != 1 else fwd


# Breakdowns of calls without documents, by call key (maxflops.resolve.call_key): a config counted again, unchanged,
# is a lookup (the per-step path of a trainer)
_COUNTS: dict = {}


def _head(c, tokens, hardware: bool = False) -> dict:
    """The rows outside the decoder layers: the output head, and the per-layer-embedding projection."""
    return _rounded(head_raw(c, tokens, hardware))


def head_raw(c, tokens, hardware: bool = False) -> dict:
    """The output head for ``tokens`` tokens, unrounded: the logits (and an mHC hyper-head's projection)."""
    width = c["head_input_dim"] or c["emb_dim"]
    head = {"logits": terms.logits(width, terms.head_vocab(c, hardware), c["head_dense"]) * tokens} \
        if c["logits_flops"] else {}
    if c["embedding_flops"] and not (c["logits_via_embedding"] and c["logits_flops"] and width == c["emb_dim"]):
        # (a 6N convention's embedding in N, once: a tied table is the head's weights already)
        head["embedding_table"] = 2 * terms.head_vocab(c, hardware) * c["emb_dim"] * tokens
    for f in HEADS:  # the features' parts of the head (an mHC hyper head, the output's attention residuals...)
        head.update(f.head(c, tokens, hardware))
    return head


def _vision(c, mode: str, steps: int) -> dict:
    """The vision encoder, per step, rounded (see ``vision_raw``)."""
    return {k: _to_int(v) for k, v in vision_raw(c, mode, steps).items()}


def vision_raw(c, mode: str, steps: int) -> dict:
    """The vision encoder, per step: every sequence row encodes ``vision_images`` images in train and prefill
    (decode reuses the encoded images). Train: a frozen encoder runs forward only; the projector trains (3x)."""
    if not c["vision_layers"] or mode == "decode":
        return {}
    h, layers = c["vision_hidden_dim"], c["vision_layers"]
    seq = c["vision_patches"] + c["vision_extra_tokens"]
    weight, attention = terms.vit_layer(seq, h, c["vision_mlp_dim"])
    stages = lambda key: sum(2 * t * i * o for t, i, o in (map(int, x.split(":")) for x in c[key]))
    encoder = 2 * c["vision_patches"] * c["vision_patch_dim"] * h + layers * weight + stages("vision_encoder_stages")
    projector = stages("vision_projector")
    encoder_passes = 3 if mode == "train" and not c["vision_frozen"] else 1
    projector_passes = 3 if mode == "train" else 1
    if warmup(c):  # the warm-up stage trains the indexer alone: the rest runs forward, or not at all
        encoder_passes = projector_passes = train_factor("vision_encoder", c)
    images = Fraction(c["per_device_batch_size"]).limit_denominator(1 << 20) * c["vision_images"] * steps
    return {"vision_encoder": encoder * encoder_passes * images,
            "vision_attention": layers * attention * encoder_passes * images,
            "vision_projector": projector * projector_passes * images}


def sweep(config, key: str, values, segment_lengths=None, **overrides) -> list[Breakdown]:
    """``count`` at each value of one config key (e.g. ``sweep(cfg, "max_target_length", lengths)``). In decode
    mode the length is ``decode_kv_length`` (the tokens already cached): sweeping ``max_target_length`` there is
    an error, since decode does not read it."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ValueError(f"sweep: values of {key!r}: expected a list of values, got {values!r}"
                         f" ({type(values).__name__}); for one value, pass [{values!r}] or count(config, {key}=...)")
    config = from_source(config)
    if key == "max_target_length" and resolve_call(config, overrides)[0]["mode"] == "decode":
        raise ValueError("config key 'max_target_length': a decode step does not read it (it counts one new token "
                         "after decode_kv_length cached ones): sweep 'decode_kv_length' instead")
    return [count(config, segment_lengths, **{**overrides, key: v}) for v in values]
