"""A few real jitted train steps of a tiny model on CPU, each logged with TFLOP/s and MFU by maxflops.

    python examples/train_loop.py --model=glm5 --steps=5

The model is maxflops.xla.model's Flax decoder for the reduced config (batch 2 x 64 tokens). Each step packs
random documents into the batch, MaxText style (segment ids, 0 = padding): model FLOPs (the MFU numerator) count
those documents exactly; this model has no segment masking and runs every row whole, padding included, so the
hardware figures are set to what it executes (packed_kernel='row'). The peak is a measured matmul rate on this
machine (pass --peak_tflops on real hardware).
"""

from __future__ import annotations

import time

import jax
import numpy as np
from absl import app, flags, logging

import maxflops
from maxflops.bench import measured_matmul_rate
from maxflops.xla import model as M

_MODEL = flags.DEFINE_string("model", "llama3.1-8b", "a built-in model name")
_STEPS = flags.DEFINE_integer("steps", 5, "train steps")
_PEAK = flags.DEFINE_float("peak_tflops", 0.0, "device peak TFLOP/s (0: measure a matmul)")


def packed_segment_ids(rng, batch: int, length: int) -> np.ndarray:
    ids = np.zeros((batch, length), np.int32)
    for row in range(batch):
        pos, doc = 0, 1
        while pos < length:
            n = int(rng.integers(1, length // 2))
            if pos + n > length - int(rng.integers(0, 4)):  # leave some padding at the end sometimes
                break
            ids[row, pos:pos + n] = doc
            pos, doc = pos + n, doc + 1
    return ids


def main(argv) -> None:
    del argv
    c, model, params, tokens = M.build(maxflops.load_config(_MODEL.value), mode="train", max_target_length=64,
                                       per_device_batch_size=2)
    step, opt = M.train_step_fn(model)
    step = jax.jit(step)
    state = opt.init(params)
    peak = _PEAK.value or measured_matmul_rate(jax.numpy.float32, 1024) / 1e12
    reporter = maxflops.StepReporter(c, peak_tflops=peak, packed_kernel="row")  # whole rows run: see the docstring
    logging.info("model %s reduced to %d layers; peak %.3f TFLOP/s", _MODEL.value, c["num_decoder_layers"], peak)
    rng = np.random.default_rng(0)
    params, state, loss = step(params, state, tokens)  # compile
    jax.block_until_ready(loss)
    for i in range(_STEPS.value):
        segment_ids = packed_segment_ids(rng, *tokens.shape)
        t = time.perf_counter()
        params, state, loss = step(params, state, tokens)
        jax.block_until_ready(loss)
        stats = reporter.step(time.perf_counter() - t, segment_ids=segment_ids)
        reporter.log(i, stats, emit=logging.info)
        logging.info("  loss %.4f", float(loss))


if __name__ == "__main__":
    app.run(main)
