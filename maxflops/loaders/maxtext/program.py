"""The program's MaxText keys -> maxflops' hardware knobs: how the step is run rather than what the model is (the
norms' placement, the attention kernel and its tiles, the MoE dispatch, remat and scanning, the device mesh and its
sharding rules, pipeline stages, the DSA warm-up's loops, stored sizes), read by ``read_program``, the last step
of ``map_keys`` (``mapping``). What maxflops cannot price yet is noted in ``not_priced`` (the count goes on without
it). The model's keys are ``model``'s.
"""

from __future__ import annotations

from ...schema import SCHEMA
from ..reader import NO_EFFECT, Reader
from . import keys as K
from .model import Block

SCHEMA_REMAT = frozenset(SCHEMA["remat_policy"].choices) - {"reversible"}  # (no MaxText policy: Reformer's)

# MaxText remat policies (its 'none' in a scanned decoder is jax.checkpoint with no policy: full remat). Those
# that save names are priced for GQA, MLA, DSA and gated-delta-net layers with a dense or MoE FFN (experts carry
# the MLP's names; MLA's latents, the gated delta net's projections and a shared expert's gate carry none; q and k
# normed after their projection are recomputed); compressed layers are not yet checked against MaxText's program.
REMAT_SIMPLE = {"full": "full", "none": "full"}


def read_program(r: Reader, o: dict, not_priced: list, spec: Block) -> None:
    """Implementation keys -> hardware knobs, in the order MaxText's program is built: the norms, the attention
    kernel, the MoE dispatch, remat, the mesh, the compiled step's constants, the gated delta net's kernel, the DSA
    indexer's stage, and the storage MaxText quantizes. What maxflops cannot price yet goes to ``not_priced``."""
    _norms(r, o, spec)
    _attention_kernel(r, o, not_priced)
    _moe_kernel(r, o, not_priced)
    remat, scanned = _scanned_blocks(r, o, spec)
    if spec.router_on_input:  # moe.py: the sigmoid router scores scale the tokens entering the experts
        o["moe_router_scale"] = "input"
    _remat_policy(o, not_priced, remat, scanned)
    _mesh(r, o, not_priced, spec)
    o["remat_mtp"] = False  # MaxText's MTP modules are not rematerialized
    o["outer_product_grads"] = "elementwise"  # its compiled (optimized) step has no contraction-free dots
    o["packed_kernel"] = "row"  # packed rows go through every layer whole; segment ids only mask attention
    if r.str("hardware", K.BASE["hardware"], record=False) == "cpu":
        o["conv_weight_grad"] = "dense"  # XLA on CPU rewrites the depthwise conv's batch-grouped weight gradient
    _gdn_kernel(r, o)
    _indexer_stage(r, o, scanned, not_priced)
    for key in ("megablox", "sa_block_q", "sa_block_kv", "use_mla_absorbed_mqa"):
        if key not in r.used:
            r.ignore(key, NO_EFFECT + " on the counted program")
    _storage(r, o, not_priced)


def _norms(r: Reader, o: dict, spec: Block) -> None:
    """The norms on the projected q, k (v) and on the FFN's output, as the block's code places them."""
    base = K.BASE
    if spec.qkv_norms in ("key", "key_rope"):
        normed = r.bool("use_qk_norm", base["use_qk_norm"], record=False)
        o["qkv_norms"] = ("qk" if spec.qkv_norms == "key" else "qk_rope") if normed else "none"
    elif spec.qkv_norms:
        o["qkv_norms"] = spec.qkv_norms
    if spec.post_ffn_norm == "always":
        o["post_ffn_norm"] = True
    elif spec.post_ffn_norm == "key":
        o["post_ffn_norm"] = r.bool("use_post_ffw_norm", base["use_post_ffw_norm"], record=False)


def _attention_kernel(r: Reader, o: dict, not_priced: list) -> None:
    """``attention``: dot-product (dense) or flash (the splash kernel, its tiles and its backward kernels)."""
    base = K.BASE
    attention = r.str("attention", base["attention"], record=False)
    if attention == "dot_product":
        o["attention_impl"] = "dense"
        if o.get("use_sparse_indexer"):
            o["dsa_impl"] = "dense"
    elif attention == "flash":
        o["attention_impl"] = "blocked"
        o["attention_block_q"] = r.int("sa_block_q", base["sa_block_q"], minimum=1, record=False)
        o["attention_block_kv"] = r.int("sa_block_kv", base["sa_block_kv"], minimum=1, record=False)
        o["flash_backward_recompute"] = True
        # jax's splash runs the backward as a dq kernel and a dkv kernel unless fused; tokamax's splash always fuses
        tokamax_splash = r.bool("use_tokamax_splash", base["use_tokamax_splash"], record=False)
        fused = tokamax_splash or r.bool("sa_use_fused_bwd_kernel", base["sa_use_fused_bwd_kernel"], record=False)
        o["flash_backward_split"] = not fused
        bwd_tiles = {k: r.int(k, base[k], minimum=1, record=False)
                     for k in ("sa_block_q_dkv", "sa_block_kv_dkv") + (() if fused else ("sa_block_q_dq",
                                                                                       "sa_block_kv_dq"))}
        differ = {k: v for k, v in bwd_tiles.items()
                  if v != o["attention_block_q" if "_q_" in k else "attention_block_kv"]}
        if differ:
            not_priced.append("hardware: the splash backward's own tiles (" + ", ".join(
                f"{k}={v}" for k, v in differ.items()) + ") are priced as the forward's "
                f"{o['attention_block_q']}x{o['attention_block_kv']}")
        if o.get("use_sparse_indexer") and o["attention_type"] == "mla":
            # tokamax's dynamic-mask splash over the top-k mask: the tiles holding a selected key
            o["dsa_impl"] = "blocked"
            not_priced.append("hardware: the DSA top-k mask's splash tiles are priced as every causally visible tile "
                              "(an upper bound on the attention: the kernel skips tiles where no query of the tile "
                              "selected a key; the program counter's splash_mask='causal' assumes the same)")
        elif o.get("use_sparse_indexer"):
            not_priced.append("hardware: attention='flash' with compressed attention's top-k mask (priced as the "
                              "ideal attended blocks)")
    else:
        not_priced.append(f"hardware: attention={attention!r} picks its kernel on the device (priced as the ideal "
                          "attended pairs)")


def _moe_kernel(r: Reader, o: dict, not_priced: list) -> None:
    """The MoE dispatch: grouped matmuls (``sparse_matmul``), capacity-bounded, or every expert on every token."""
    base = K.BASE
    if o["num_experts"] > 1:
        cf = r.float("capacity_factor", base["capacity_factor"], record=False)
        sparse = r.bool("sparse_matmul", base["sparse_matmul"], record=False)
        if sparse:  # grouped (ragged) matmuls over the routed tokens, their outputs summed by an einsum
            o["moe_dispatch"] = "einsum"
            if cf > 0:
                not_priced.append(f"hardware: capacity_factor={cf} with sparse_matmul (priced dropless)")
        elif cf > 0:
            o.update(moe_impl="capacity", capacity_factor=cf, capacity_rule="maxtext", moe_dispatch="einsum")
        else:
            o["moe_impl"], o["moe_dispatch"] = "dense", "einsum"
    else:
        for key in ("capacity_factor", "sparse_matmul", "megablox"):
            r.ignore(key, "unused: no MoE layers")


def _scanned_blocks(r: Reader, o: dict, spec: Block) -> tuple[str, bool]:
    """``remat_policy`` and ``scan_layers``, and the remat unit of a block scanned as a layer cycle (its layers'
    kinds then set by their place in the block)."""
    base = K.BASE
    remat = r.str("remat_policy", base["remat_policy"], record=False)
    scanned = r.bool("scan_layers", base["scan_layers"], record=False)
    if spec.cycle_remat:  # llama4.py: a scanned block holds a layer cycle and is rematerialized whole
        cycle = r.int("inhomogeneous_layer_cycle_interval", base["inhomogeneous_layer_cycle_interval"], minimum=1,
                      record=False)
        if scanned:
            o["remat_block_layers"] = cycle
            if spec.block_pattern:  # the scannable block builds layer i of the block as the pattern's letter i
                o["attention_layer_pattern"] = "".join(spec.pattern[i % len(spec.pattern)] for i in range(cycle))
            steps = [("interleave_moe_layer_step", o.get("interleave_moe_layer_step", 1))]
            if spec.pattern_from == "nope_layer_interval":
                steps.append(("nope_layer_interval", max(len(o["attention_layer_pattern"]), 1)))
            for key, step in steps:
                if cycle % step:
                    raise r.fail("inhomogeneous_layer_cycle_interval", "MaxText's scanned decoder picks each "
                                 "layer's kind by its place in a block of this many layers, so "
                                 f"{key}={step} must divide it (else its layers are not the ones the keys describe); "
                                 "set a multiple, or scan_layers=False", cycle)
    return remat, scanned


def _remat_policy(o: dict, not_priced: list, remat: str, scanned: bool) -> None:
    """MaxText's remat policy -> the schema's (one it has no price for is noted)."""
    # named policies are checked against MaxText's programs for GQA, MLA and DSA layers with a dense or MoE FFN
    plain = o["attention_type"] in ("global", "mla")
    if remat == "none" and not scanned:
        o["remat_policy"] = "none"  # the unscanned decoder applies no checkpoint at all
    elif remat in REMAT_SIMPLE:
        o["remat_policy"] = REMAT_SIMPLE[remat]
    elif remat in SCHEMA_REMAT and plain:
        o["remat_policy"] = remat
    else:
        not_priced.append(f"hardware: remat_policy={remat!r} (priced without rematerialization)")


def _gdn_kernel(r: Reader, o: dict) -> None:
    """The gated delta net's chunked kernel and its padded convolution, where the pattern has such layers."""
    base = K.BASE
    if "D" in o["attention_layer_pattern"]:
        o["gdn_impl"], o["gdn_chunk_size"] = "chunked", r.int("gdn_chunk_size", base["gdn_chunk_size"], minimum=1,
                                                              record=False)
        o["gdn_conv_impl"] = "pre_padded"  # qwen3.py pads the sequence, then convolves without padding
    else:
        r.ignore("gdn_chunk_size", "unused: no gated-delta-net layers")


def _indexer_stage(r: Reader, o: dict, scanned: bool, not_priced: list) -> None:
    """The DSA indexer's kernel and its training stage (sparse, or the dense warm-up)."""
    base = K.BASE
    if o.get("use_sparse_indexer"):
        if o["attention_type"] == "mla":
            o["indexer_skip_short"] = True  # attention_mla: no indexer when the keys fit in the top-k
            o["indexer_impl"] = "dense"  # its scores and the KL loss's target: einsums over the full square
        if not r.bool("indexer_sparse_training", base["indexer_sparse_training"], record=False):
            # train.py: the dense warm-up stage drops the LM loss and the output head and trains only the indexer
            # through its KL loss. base.yml's default (no KL loss) trains nothing: the compiled step has no matmul.
            # That is a run nobody means, so a model's YAML keeps the training FLOPs a user asks for, and says so.
            if not o.get("indexer_loss_scaling_factor"):
                not_priced.append("hardware: indexer_sparse_training=False with no indexer KL loss (MaxText's "
                                  "default): its train step trains nothing and runs no matmul; priced as the "
                                  "sparse training stage (set indexer_stage='warmup' for the step as it runs)")
            else:
                o["indexer_stage"] = "warmup"
            if o.get("indexer_stage") == "warmup" and o.get("mtp_num_layers"):
                not_priced.append("hardware: MTP modules in the DSA warm-up stage (MaxText still adds their loss, so "
                                  "the whole model gets gradients; priced as the warm-up's frozen model)")
            if o.get("indexer_stage") == "warmup":
                _warmup_loops(o, scanned, not_priced)
    else:
        r.ignore("indexer_sparse_training", "unused: the indexer is off")


def _storage(r: Reader, o: dict, not_priced: list) -> None:
    """The storage MaxText quantizes (AQT / Transformer Engine): FLOPs do not move, decode bytes would (noted)."""
    quant, kv_quant = r.data.get("quantization"), r.data.get("quantize_kvcache")
    if quant:
        not_priced.append(f"traffic: MaxText's quantization={quant!r}; decode weight bytes are priced at "
                          f"weight_bytes={o.get('weight_bytes', 2)} (set weight_bytes_rules for the stored sizes)")
    if kv_quant:
        dtype = r.data.get("kv_quant_dtype", "int8")
        not_priced.append(f"traffic: MaxText's quantize_kvcache (kv_quant_dtype={dtype!r}); the KV cache is priced "
                          f"at kv_cache_bytes={o.get('kv_cache_bytes', 2)}")


# The rule set priced besides the defaults: the residual stream whole over every mesh axis (Megatron's tensor
# parallelism), as a list of rules per logical name. (MaxText merges a config's rules into base.yml's by name.)
RESIDUAL_WHOLE = {name: [()] for name in ("activation_embed", "activation_embed_attn", "activation_embed_moe")}
# ... and K/V heads whole over every axis (Megatron's GQA with fewer KV heads than tensor ranks), with either.
KV_WHOLE = {name: [()] for name in ("kv_heads", "activation_kv_heads")}


def _changed_rules(rules, default) -> dict:
    """The logical names whose rules differ from ``default``, with their rules (each a sorted tuple of mesh axes):
    flax resolves each logical name by its own rules, in order, so the order of different names does not matter, and
    a rule shards a dimension over the product of its axes, whatever their order (MaxText itself moves 'stage' to
    the front of activation_embed_and_logits_batch when it pipelines)."""
    def by_name(table):
        out: dict = {}
        for name, axes in table:
            out.setdefault(name, []).append((axes,) if isinstance(axes, str) else tuple(sorted(axes)))
        return out
    mine, base = by_name(rules), by_name(default)
    return {n: mine.get(n, []) for n in mine.keys() | base.keys() if mine.get(n) != base.get(n)}


def _mesh(r: Reader, o: dict, not_priced: list, spec: Block) -> None:
    """The device mesh -> num_devices and batch_shards: the product of the mesh axes MaxText's activation_batch rule
    shards the batch over (each axis ici x dcn; a -1 filled so that the axes multiply to the devices of a slice,
    or to the slices), so that a batch that does not fill them is padded as the program pads it."""
    base = K.BASE
    devices = r.int("num_target_devices", base["num_target_devices"], minimum=1, record=False)
    keys = ("mesh_axes", "ici_parallelism", "dcn_parallelism", "num_slices", "logical_axis_rules",
            "moe_dispatch_no_expert_sharding") + PIPELINE_KEYS
    if devices == 1:
        for key in keys:
            r.ignore(key, "unused: one device")
        return
    axes = r.list("mesh_axes", str, base["mesh_axes"], record=False)
    slices = r.int("num_slices", base["num_slices"], minimum=1, record=False)
    sizes = dict(zip(axes, [1] * len(axes)))
    for key, total in (("ici_parallelism", devices // slices), ("dcn_parallelism", slices)):
        dims = r.list(key, int, base[key], record=False)
        if len(dims) != len(axes):
            raise r.fail(key, f"{len(dims)} entries for the {len(axes)} mesh_axes {axes}")
        known = 1
        for d in dims:
            known *= d if d != -1 else 1
        if dims.count(-1) > 1 or total % known:
            raise r.fail(key, f"does not multiply to {total} (num_target_devices={devices}, num_slices={slices})")
        for a, d in zip(axes, dims):
            sizes[a] *= total // known if d == -1 else d
    rules = r.raw("logical_axis_rules", base["logical_axis_rules"], record=False)
    changed = _changed_rules(rules, base["logical_axis_rules"])
    if changed.items() >= KV_WHOLE.items() and o["num_experts"] <= 1:
        # K/V heads whole over `tensor`: measured on dense models, XLA still splits the K/V projections (with MoE,
        # the one program measured splits the router's backward otherwise: not priced)
        rest = {n: v for n, v in changed.items() if n not in KV_WHOLE}
        changed = rest if rest in ({}, RESIDUAL_WHOLE) else changed
    if changed == RESIDUAL_WHOLE:
        # Megatron-style: the residual stream whole over `tensor`. Measured (tests/fixtures/maxtext_sharded): every
        # matmul still splits over a tensor-sharded dimension (heads, MLP, experts' hidden, vocabulary; MLA's down
        # projections too), but the MoE router, the capacity dispatch and combine and the dense path's weighted
        # sum have none, and run whole on every tensor rank.
        o["moe_routing_replicas"] = sizes.get("tensor", 1)
    elif changed:
        not_priced.append(f"hardware: logical_axis_rules other than MaxText 0.2.5's defaults for {sorted(changed)} "
                          "(priced as the default rules shard it: a matmul a rule leaves replicated over a mesh axis "
                          "runs on every device of the axis)")
    batch_axes = next((names for name, names in rules if name == "activation_batch"), None)
    if batch_axes is None:
        raise r.fail("logical_axis_rules", "no activation_batch rule (the mesh axes the batch is sharded over)")
    batch_axes = [batch_axes] if isinstance(batch_axes, str) else batch_axes
    shards = 1
    for a in batch_axes:
        shards *= sizes.get(a, 1)
    o["num_devices"], o["batch_shards"] = devices, shards
    _pipeline(r, o, sizes.get("stage", 1), spec)
    peeled = r.bool("moe_dispatch_no_expert_sharding", base["moe_dispatch_no_expert_sharding"], record=False)
    if peeled and sizes.get("expert", 1) > 1 and o.get("moe_impl") == "capacity":
        # Measured (tests/fixtures/maxtext_sharded): the forward is the ideal share, but the partitioned backward
        # computes the experts' down-projection input gradient whole on every batch shard of an expert shard, for
        # every mesh tried (data, fsdp, tensor with expert; remat full and minimal; other E, k, capacity, length).
        replicas = 1
        for a in batch_axes:
            replicas *= sizes.get(a, 1) if a != "expert" else 1
        o["moe_down_grad_replicas"] = replicas


PIPELINE_KEYS = ("num_layers_per_pipeline_stage", "num_pipeline_microbatches", "num_pipeline_repeats",
                 "pipeline_parallel_layers", "pipeline_delay_activation_forwarding")


def _pipeline(r: Reader, o: dict, stages: int, spec: Block) -> None:
    """The mesh's stage axis -> the pipeline knobs, MaxText's -1 defaults filled as its config does: every decoder
    layer pipelined (deepseek: its MoE layers, the last ones), repeats = pipelined layers / (stages x layers per
    stage), microbatches = stages (twice that with pipeline_delay_activation_forwarding)."""
    if stages == 1:
        for key in PIPELINE_KEYS:
            r.ignore(key, "unused: no pipeline stages")
        return
    base, n = K.BASE, o["num_decoder_layers"]
    first = o.get("first_num_dense_layers", 0) if spec.dense_prefix else 0
    # (base.yml's -1; MaxText's resolved config holds the number it stands for)
    piped = r.int("pipeline_parallel_layers", -1, minimum=-1, record=False)
    piped = n - first if piped == -1 else piped
    if not 0 < piped <= n - first:
        raise r.fail("pipeline_parallel_layers", f"pipelines {piped} of the {n - first} decoder layers it can")
    per_stage = r.int("num_layers_per_pipeline_stage", base["num_layers_per_pipeline_stage"], minimum=1, record=False)
    repeats = r.int("num_pipeline_repeats", base["num_pipeline_repeats"], minimum=-1, record=False)
    if repeats == -1:
        repeats = piped // (stages * per_stage)
    if repeats < 1 or stages * per_stage * repeats != piped:
        raise r.fail("num_pipeline_repeats", f"{repeats}: stages ({stages}) x layers per stage ({per_stage}) x "
                     f"repeats must be the {piped} pipelined layers")
    delay = r.bool("pipeline_delay_activation_forwarding", base["pipeline_delay_activation_forwarding"],
                   record=False)
    micro = r.int("num_pipeline_microbatches", base["num_pipeline_microbatches"], minimum=-1, record=False)
    if micro == 0:
        raise r.fail("num_pipeline_microbatches", "0 microbatches (MaxText: -1 for one per stage, or a positive number)")
    o["pipeline_stages"], o["pipeline_repeats"], o["pipeline_delay"] = stages, repeats, delay
    o["pipeline_microbatches"] = (2 if delay else 1) * stages if micro == -1 else micro
    if piped != n:  # deepseek pipelines its last MoE layers; the others their first layers
        o["pipeline_layers"] = tuple(range(n - piped, n)) if spec.dense_prefix else tuple(range(piped))


def _warmup_loops(o: dict, scanned: bool, not_priced: list) -> None:
    """The DSA warm-up's layers outside a loop. MaxText's deepseek decoder scans its dense prefix and its MoE layers
    as two groups; XLA unrolls a group of one layer. Measured (tests/fixtures/maxtext_programs): a layer scanned
    alone has its recompute merged with its forward (warmup_cse_layers), and an unrolled last layer loses the work
    no loss reads (warmup_dead_last_layer); an unscanned program keeps each layer's recompute."""
    n, first = o["num_decoder_layers"], o.get("first_num_dense_layers", 0)
    if o["attention_type"] != "mla":
        if not scanned or 1 in (first, n - first):
            not_priced.append("hardware: the DSA warm-up stage of compressed attention without scanned groups of "
                              "two or more layers (XLA then drops the last layer's unread work and merges its "
                              "recompute; priced as a scanned program)")
        return
    if not scanned:
        o["warmup_dead_last_layer"] = True
        return
    alone = [start for start, size in ((0, first), (first, n - first)) if size == 1]
    o["warmup_cse_layers"] = tuple(alone)
    o["warmup_dead_last_layer"] = n - 1 in alone


