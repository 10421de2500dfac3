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
- sequences: batch 2 x 13 tokens (13 = 6 + 6 + 1: a partial chunk), attention tiles <= 4 x 3.

Each trunk feature reduces its own keys too (its proof module's ``reduce``): MTP at most 1 module; KV sharing the
last layers of the reduced depth, at most one pattern's worth; LAuReL's rank at most 5; mHC's streams at most 3;
attention residuals' block at most 2.

Trunk features run through their proof modules (``maxflops.features.proofs``, the hooks listed in
``maxflops.xla.registry``): a residual scheme (AltUp, attention residuals, mHC) owns the state the layers carry and
runs each layer's branches; without one a layer is x + branch(norm(x)) per branch. The others wrap a branch's input
norm (gated norms) or output (residual convs), add beside the mixer (LAuReL) or after the layer (per-layer
embeddings).

Stand-ins where a model's dataflow is no matmul's business: a KV-shared layer attends its own input tiled to the
keys' and values' shape (the model's are an earlier layer's: no projection either way), Doge's dynamic mask scales
the values elementwise, Inkling's relative logits scale each head's output.
"""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

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
from ..plan import FFN_LETTER, build_plan
from ..proofkit import kernels as K
from .registry import feature_proofs, proof_of, proof_of_kind

REDUCED_BATCH, REDUCED_LENGTH = 2, 13


def _short_pattern(pattern: str) -> str:
    return "".join(ch * min(len(list(run)), 2) for ch, run in itertools.groupby(pattern))


def reduce_config(config, **overrides) -> dict[str, Any]:
    """The documented reduction of a config (see the module docstring), resolved and validated."""
    c = validate(config)
    out = dict(c)
    out.update(emb_dim=32, vocab_size=64, mlp_dim=48, moe_mlp_dim=16, moe_latent_size=12 if c["moe_latent_size"] else 0,
               per_device_batch_size=float(REDUCED_BATCH), max_target_length=REDUCED_LENGTH,
               gradient_accumulation_steps=1,
               attention_block_q=min(c["attention_block_q"], 4), attention_block_kv=min(c["attention_block_kv"], 3))
    # each family's own keys, from the most general family to the most specific (the registry's order reversed):
    # where two reduce one key (the top-k), the more specific one's value stands
    for fam in reversed(FAMILIES):
        out.update(proof_of(fam).reduce(c))
    if c["num_experts"] > 1:
        e = min(c["num_experts"], 8)
        out.update(num_experts=e, num_experts_per_tok=max(1, min(c["num_experts_per_tok"], e // 2)))
    if c["layer_loops"]:  # looped depth: the layers kept as they are (their rules name them), the widths reduced
        if c["num_decoder_layers"] > 16:
            raise ValueError(f"layer_loops: a looped model of {c['num_decoder_layers']} layers is not reduced here; "
                             "give a shallower one")
        if c["layer_widths"]:
            raise ValueError("layer_loops: a looped model with layer_widths is not reduced here")
        _reduce_features(c, out)
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
    out.update(attention_layer_pattern=pattern, first_num_dense_layers=dense_prefix, num_decoder_layers=layers)
    _reduce_features(c, out)
    if c["layer_widths"]:
        out.update(_reduce_layer_widths(c, out))
    out.update(overrides)
    return resolve(out)


def _reduce_features(c, out) -> None:
    """The features' own keys (their proof modules' ``reduce``), after the trunk's depth."""
    for _, proof in feature_proofs(c):
        if hasattr(proof, "reduce"):
            out.update(proof.reduce(c, out))


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
    def __call__(self, carry, inputs=None, messages=None):
        """``inputs``: {feature: this layer's slice of its per-layer input} (Gemma 4's, Gemma 3n's per-layer
        embedding), or None; ``messages``: a looped pass's previous pass (its snapshots after its first, its output),
        or None. x is the residual scheme's state (the residual [B, L, D] without one)."""
        x, top_idx, aux = carry
        c = dict(self.cfg)
        c.update(self.kind.widths)  # a layer of its own widths (layer_widths)
        # the longest sequence of the step (packed documents run one by one: the longest of them), for a layer whose
        # work is read only when some sequence is long enough (a compressor that forms no block)
        lead = jax.tree_util.tree_leaves(x)[0]  # (a scheme's state: its first array is [B, L, ..., D])
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

        segments = self.segments
        on = feature_proofs(c)
        got = inputs or {}

        def wrapped(branch, tag):  # a branch's output through the features' wraps (a residual conv)
            def run(h):
                y = branch(h)
                for _, proof in on:
                    if hasattr(proof, "branch_output"):
                        y = proof.branch_output(c, p, y, tag, segments)
                return y
            return run

        def norm(h, tag):  # a branch's input: a feature's norm (a gated norm), else RMS
            for _, proof in on:
                if hasattr(proof, "branch_input"):
                    y = proof.branch_input(c, kind, p, h, tag)
                    if y is not None:
                        return y
            return _rms(h)

        run = Run(wrapped(mixer, "attn") if kind.mixer != NO_MIXER else None,
                  wrapped(ffn, "ffn") if kind.ffn != NO_FFN else None, norm,
                  tuple(lambda h, normed, proof=proof: proof.beside_mixer(c, p, h, normed)
                        for _, proof in on if hasattr(proof, "beside_mixer")),
                  tuple(lambda y, proof=proof, rows=got.get(name): proof.after_layer(c, p, y, rows)
                        for name, proof in on if hasattr(proof, "after_layer")
                        and (name in got or not hasattr(proof, "per_layer"))))
        x_in = x
        x = _scheme(on).layer(c, kind, p, x, run, messages)
        if kind.no_grad and not isinstance(x, tuple):  # a pass run without a gradient (torch.no_grad: HRM's early L
            # cycles): its work is not differentiated, and the next pass's input still carries one (HRM injects the
            # H state into every L pass's input): the value is the pass's output, the gradient flows past it
            # unchanged (no matmul). A state of one array (the residual, mHC's or AltUp's streams); attention
            # residuals' residual and growing bank: not applied.
            x = jax.lax.stop_gradient(x) + (x_in - jax.lax.stop_gradient(x_in))
        return (x, state["top_idx"], state["aux"]), None


class Run(NamedTuple):
    """What a residual scheme's ``layer`` runs in one layer (``maxflops.xla.registry``)."""

    mixer: Any  # h -> the mixer's output (the features' wraps on it), or None: the layer has no mixer
    ffn: Any  # h -> the FFN's output, likewise
    norm: Any  # (x, tag) -> a branch's input ("attn", "ffn"): a feature's norm, else RMS
    beside: tuple  # ((h, normed) -> h plus a feature's branch beside the mixer on its normed input, ...)
    after: tuple  # (y -> what a feature adds to the layer's output y, ...)

    @property
    def branches(self) -> list:
        return [(tag, b) for tag, b in (("attn", self.mixer), ("ffn", self.ffn)) if b is not None]


class _Plain:
    """The residual without a scheme: x + branch(norm(x)) per branch, then what features add after the layer."""

    @staticmethod
    def layer(c, kind, p, x, run, messages):
        for tag, branch in run.branches:
            x = x + branch(run.norm(x, tag))
        for add in run.after:
            x = x + add(x)
        return x


def _scheme(on):
    """The residual scheme of the features on (a proof module with ``layer``; their checks refuse two), or the plain
    residual."""
    schemes = [proof for _, proof in on if hasattr(proof, "layer")]
    assert len(schemes) <= 1, schemes
    return schemes[0] if schemes else _Plain


def _mlp_params(p, prefix, D, F, gated):
    out = {prefix + "up": p(prefix + "up", (D, F)), prefix + "down": p(prefix + "down", (F, D))}
    if gated:
        out[prefix + "gate"] = p(prefix + "gate", (D, F))
    return out


_rms = K.rms


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
        on = feature_proofs(c)
        scheme = _scheme(on)

        def param(name, shape):
            return self.param(name, _init(), shape)

        # the features' per-layer inputs [B, L, layers, ...] (per-layer embeddings), sliced per layer below
        inputs = {name: proof.per_layer(c, x, param) for name, proof in on if hasattr(proof, "per_layer")}
        if scheme is not _Plain:  # a residual scheme's state from the embedding (its streams, its bank)
            x = scheme.enter(c, x, param)
        top = jnp.zeros((B, L, min(c["index_topk"], L)), jnp.int32)
        carry = (x, top, jnp.zeros((), emb.dtype))
        layer_cls = nn.remat(Layer) if c["remat_policy"] == "full" else Layer
        ran = None
        if hasattr(scheme, "rows"):  # a scheme that runs the rows itself (looped passes over attention residuals)
            ran = scheme.rows(plan, c, carry, lambda r, kind: layer_cls(kind, self.cfg, self.segments, name=f"row{r}"))
        start = 0
        for r, (kind, n) in enumerate(_runs(plan) if ran is None else ()):
            rows = {name: jnp.moveaxis(a[:, :, start:start + n], 2, 0) for name, a in inputs.items()}  # [n, B, L, ..]
            if n == 1:
                carry, _ = layer_cls(kind, self.cfg, self.segments, name=f"run{r}")(
                    carry, {name: a[0] for name, a in rows.items()} or None)
            else:
                scanned = nn.scan(layer_cls, variable_axes={"params": 0}, split_rngs={"params": True}, length=n)
                carry, _ = scanned(kind, self.cfg, self.segments, name=f"run{r}")(carry, rows or None)
            start += n
        x, top, aux = carry if ran is None else ran
        if P:
            x, L = x[:, P:], L - P
        if scheme is not _Plain:  # the scheme's state back to [B, L, D]
            x = scheme.leave(c, x, param)
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
