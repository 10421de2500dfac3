"""Any JAX trainer (Flax + optax here, nothing of MaxText): the compiled step counted once, MFU every step.

    python examples/jax_trainer.py --steps=3

A small GQA decoder written in Flax, trained with optax on packed batches (documents side by side in each row,
segment ids, 0 = padding; attention masked to each document). When the step compiles, maxflops counts the program
that runs (``maxflops.xla.count_program``: every matmul, loop-aware, custom kernels priced) and reconciles it, per
component, with the analytic count of the config that describes the model (the model's named scopes carry the
component names). Every step then reports model FLOPs (the documents of that batch: the MFU numerator) and the
program's FLOPs (what ran) as TFLOP/s and MFU. XLA's own ``cost_analysis()`` figure is printed beside it once.
The peak is a measured matmul rate on this machine (pass --peak_tflops on real hardware).
"""

from __future__ import annotations

import time

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from absl import app, flags, logging

import maxflops
from maxflops.bench import measured_matmul_rate
from maxflops.xla import count_program, reconcile

_STEPS = flags.DEFINE_integer("steps", 3, "train steps")
_PEAK = flags.DEFINE_float("peak_tflops", 0.0, "device peak TFLOP/s (0: measure a matmul)")

# The model below, in maxflops' keys: dense attention (the masked L x L square: what this model computes)
CONFIG = dict(num_decoder_layers=2, emb_dim=64, num_query_heads=4, num_kv_heads=2, head_dim=16, mlp_dim=128,
              vocab_size=256, max_target_length=64, per_device_batch_size=2, mlp_activations=("silu", "linear"),
              attention_impl="dense")


class RMSNorm(nn.Module):
    @nn.compact
    def __call__(self, x):
        scale = self.param("scale", nn.initializers.ones, (x.shape[-1],))
        return x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-6) * scale


class Block(nn.Module):
    d: int
    heads: int
    kv_heads: int
    head_dim: int
    mlp: int

    @nn.compact
    def __call__(self, x, segment_ids):
        B, L, _ = x.shape
        g = self.heads // self.kv_heads
        h = RMSNorm()(x)
        with jax.named_scope("qkv_proj"):
            q = nn.Dense(self.heads * self.head_dim, use_bias=False)(h).reshape(B, L, self.kv_heads, g, self.head_dim)
            k = nn.Dense(self.kv_heads * self.head_dim, use_bias=False)(h).reshape(B, L, self.kv_heads, self.head_dim)
            v = nn.Dense(self.kv_heads * self.head_dim, use_bias=False)(h).reshape(B, L, self.kv_heads, self.head_dim)
        with jax.named_scope("core_attention"):
            s = jnp.einsum("bqkgd,bmkd->bkgqm", q, k) / np.sqrt(self.head_dim)
            causal = jnp.arange(L)[:, None] >= jnp.arange(L)[None, :]
            same = segment_ids[:, :, None] == segment_ids[:, None, :]
            mask = causal[None] & same & (segment_ids[:, :, None] > 0)
            s = jnp.where(mask[:, None, None], s, -1e9)
            o = jnp.einsum("bkgqm,bmkd->bqkgd", jax.nn.softmax(s, axis=-1), v).reshape(B, L, -1)
        with jax.named_scope("out_proj"):
            x = x + nn.Dense(self.d, use_bias=False)(o)
        h = RMSNorm()(x)
        with jax.named_scope("mlp"):
            a = nn.silu(nn.Dense(self.mlp, use_bias=False)(h)) * nn.Dense(self.mlp, use_bias=False)(h)
            return x + nn.Dense(self.d, use_bias=False)(a)


class Decoder(nn.Module):
    c: dict

    @nn.compact
    def __call__(self, tokens, segment_ids):
        c = self.c
        x = nn.Embed(c["vocab_size"], c["emb_dim"])(tokens)
        for _ in range(c["num_decoder_layers"]):
            x = Block(c["emb_dim"], c["num_query_heads"], c["num_kv_heads"], c["head_dim"], c["mlp_dim"])(
                x, segment_ids)
        x = RMSNorm()(x)
        with jax.named_scope("logits"):
            return nn.Dense(c["vocab_size"], use_bias=False)(x)


def packed_batch(rng, batch: int, length: int, vocab: int):
    """Random documents packed into rows (segment ids from 1, 0 = padding), MaxText style."""
    ids = np.zeros((batch, length), np.int32)
    for row in range(batch):
        pos, doc = 0, 1
        while pos < length - 4:
            n = int(rng.integers(4, length // 2))
            ids[row, pos:pos + n] = doc
            pos, doc = pos + n, doc + 1
    tokens = rng.integers(0, vocab, (batch, length)).astype(np.int32)
    return {"tokens": tokens, "segment_ids": ids}


def make_step(model, opt):
    def loss_fn(params, batch):
        logits = model.apply(params, batch["tokens"], batch["segment_ids"])
        targets = jnp.roll(batch["tokens"], -1, axis=1)
        keep = (batch["segment_ids"] > 0) & (jnp.roll(batch["segment_ids"], -1, axis=1) == batch["segment_ids"])
        nll = optax.softmax_cross_entropy_with_integer_labels(logits, targets)
        return (nll * keep).sum() / jnp.maximum(keep.sum(), 1)

    def step(params, opt_state, batch):
        loss, grads = jax.value_and_grad(loss_fn)(params, batch)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return jax.jit(step)


def setup(seed: int = 0):
    """The model, its optimizer state, the jitted step, one batch, and the maxflops config that describes it."""
    config = maxflops.model_config(**CONFIG, mode="train")
    model = Decoder(CONFIG)
    rng = np.random.default_rng(seed)
    batch = packed_batch(rng, CONFIG["per_device_batch_size"], CONFIG["max_target_length"], CONFIG["vocab_size"])
    params = model.init(jax.random.PRNGKey(seed), batch["tokens"], batch["segment_ids"])
    opt = optax.adam(1e-3)
    return config, params, opt.init(params), make_step(model, opt), batch, rng


def main(argv) -> None:
    del argv
    config, params, opt_state, step, batch, rng = setup()
    compiled = step.lower(params, opt_state, batch).compile()
    program = count_program(compiled)                      # once, when the step compiles
    analytic = maxflops.count(config)
    logging.info("compiled step: %s", program.summary().replace("\n", "\n  "))
    for name, want, got in reconcile(analytic, program):
        logging.info("  %-16s analytic %12s  program %12s%s", name, f"{want:,}", f"{got:,}",
                     "" if want == got else "  <-- differs")
    peak = _PEAK.value or measured_matmul_rate(jnp.float32, 1024) / 1e12
    reporter = maxflops.StepReporter(config, peak_tflops=peak, program_flops=program.flops)
    for i in range(_STEPS.value):
        batch = packed_batch(rng, CONFIG["per_device_batch_size"], CONFIG["max_target_length"], CONFIG["vocab_size"])
        t = time.perf_counter()
        params, opt_state, loss = compiled(params, opt_state, batch)
        jax.block_until_ready(loss)
        stats = reporter.step(time.perf_counter() - t, segment_ids=batch["segment_ids"])
        reporter.log(i, stats, emit=logging.info)


if __name__ == "__main__":
    app.run(main)
