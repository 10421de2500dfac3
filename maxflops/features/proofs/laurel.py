"""LAuReL's part of the Flax model (Gemma 3n): its low-rank branch beside the mixer (run inside AltUp's layer)."""

from __future__ import annotations

import jax

from ...proofkit.kernels import dense, rms


def reduce(c, out):
    if not c["altup_num_inputs"]:  # (only AltUp's layer runs the branch: a plain one would leave it out)
        raise ValueError("laurel_rank: LAuReL without AltUp's streams is not modelled in the Flax model")
    return {"laurel_rank": min(c["laurel_rank"], 5)}


def beside_mixer(c, p, h, normed):
    """h plus the branch D -> r -> D on the mixer's normed input, its output normed."""
    D, r = normed.shape[-1], c["laurel_rank"]
    with jax.named_scope("laurel"):
        return h + rms(dense(dense(normed, p("laurel_left", (D, r))), p("laurel_right", (r, D))))
