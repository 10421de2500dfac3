"""cuDNN's fused attention (``__cudnn$fmha*`` custom calls) priced from its backend config.

jax's ``jax.nn.dot_product_attention(implementation="cudnn")`` (and anything built on
``jax._src.cudnn.fused_attention_stablehlo``) lowers to one custom call for the forward and one for the backward,
whose ``cudnn_fmha_backend_config`` says all a price needs: the score shape ``[B, N, T, S]``
(``intermediate_tensor_shape``), the dot dimension numbers of each matmul (so the head widths are read from the
operands), the mask (``mask_type``: NO_MASK, PADDING, CAUSAL, PADDING_CAUSAL) and ``sliding_window_length`` (a key
``k`` is seen by query ``q`` when ``q - W < k <= q``).

What runs: cuDNN's flash kernel walks the score matrix in tiles and skips a tile the mask empties; the forward issues
QK^T and PV per tile visited, the backward recomputes QK^T and issues dO V^T, P^T dO, dS K and dS^T Q (five). The
tile is cuDNN's choice at run time (its heuristics per GPU and shape), not in the program: this prices
:data:`TILE` x :data:`TILE` tiles, the engine's ``attention_impl='blocked'`` with that block, and says so in the
note; a GPU run is what can confirm it. Run-time data is priced as the static mask and said: the padding lengths
(``q_seqlen`` / ``kv_seqlen`` operands), packed segments (``max_seg_per_batch`` > 1).
"""

from __future__ import annotations

import json
import math

TILE = 128          # the tile this prices cuDNN's flash kernel with (assumed; cuDNN picks its own at run time)

FORWARD_MATMULS = ("qk", "pv")                       # per tile visited: QK^T (width qH), PV (width vH)
BACKWARD_MATMULS = ("qk", "dov", "pdo", "dsk", "dsq")   # recomputed QK^T, dO V^T, P^T dO, dS K, dS^T Q


def config_of(backend_config: str) -> dict | None:
    """The ``cudnn_fmha_backend_config`` of a custom call's backend_config (JSON), or None."""
    try:
        cfg = json.loads(backend_config)
        if isinstance(cfg, str):
            cfg = json.loads(cfg)
        return cfg.get("cudnn_fmha_backend_config")
    except (ValueError, AttributeError):
        return None


def visited_elements(T: int, S: int, mask_type: str, window: int = 0, tile: int = TILE) -> int:
    """Score elements in the tiles a flash kernel visits for one (batch, head): every tile holding a visible pair
    (causal: ``k <= q``; with a window ``W``: ``q - W < k <= q``), each tile's full extent (edge tiles clipped)."""
    causal = "CAUSAL" in mask_type or window > 0          # a window is left only (jax sets it with no right side)
    total = 0
    for q0 in range(0, T, tile):
        q1 = min(q0 + tile, T)
        hi = S if not causal else min(S, q1)                  # keys past the tile's last query are masked
        lo = max(0, q0 - window + 1) if window else 0         # keys before the first query's window
        if hi <= lo:
            continue
        first, last = lo // tile, (hi - 1) // tile            # the key tiles overlapping [lo, hi)
        for k0 in range(first * tile, last * tile + 1, tile):
            total += (q1 - q0) * (min(k0 + tile, S) - k0)
    return total


def _width(dims, numbers: dict, side: str, free: bool) -> int:
    """The product of an operand's contracting dims (``free`` False) or of the dims that are neither batch nor
    contracting (``free`` True), by a ``*_dot_dimension_numbers`` entry of the config."""
    contracting = {int(d) for d in numbers[f"{side}_contracting_dimensions"]}
    if not free:
        return math.prod(dims[d] for d in contracting)
    batch = {int(d) for d in numbers[f"{side}_batch_dimensions"]}
    return math.prod(n for i, n in enumerate(dims) if i not in batch | contracting)


def price(target: str, cfg: dict, operand_dims: list) -> tuple[int, str]:
    """(FLOPs of one call, a note) for a ``__cudnn$fmha*`` call from its config and operand dims (Q, K, V first)."""
    B, N, T, S = (int(x) for x in cfg["intermediate_tensor_shape"]["dimensions"])
    mask = cfg.get("mask_type", "NO_MASK")
    window = int(cfg.get("sliding_window_length") or 0)
    q_dims, v_dims = operand_dims[0], operand_dims[2]
    backward = "Backward" in target
    # the head widths from the matmuls' own dimension numbers: Q's (qH) and V's (vH), in any layout
    if backward:       # dO V^T contracts V's head dim; dP^T Q -> dK keeps Q's head dim free
        vh = _width(v_dims, cfg["bmm2_grad_gemm2_dot_dimension_numbers"], "rhs", free=False)
        qh = _width(q_dims, cfg["bmm1_grad_gemm1_dot_dimension_numbers"], "rhs", free=True)
    else:              # QK^T contracts Q's head dim; PV keeps V's head dim free
        qh = _width(q_dims, cfg["bmm1_dot_dimension_numbers"], "lhs", free=False)
        vh = _width(v_dims, cfg["bmm2_dot_dimension_numbers"], "rhs", free=True)
    widths = {"qk": qh, "pv": vh, "dov": vh, "pdo": vh, "dsk": qh, "dsq": qh}
    per_element = 2 * sum(widths[m] for m in (BACKWARD_MATMULS if backward else FORWARD_MATMULS))
    elems = visited_elements(T, S, mask, window)
    flops = B * N * elems * per_element
    said = [f"cuDNN flash attention {'backward' if backward else 'forward'}: B={B} heads={N} T={T} S={S} "
            f"qH={qh} vH={vh}, mask {mask}" + (f", window {window}" if window else "")
            + f"; {TILE} x {TILE} tiles assumed (cuDNN picks its own at run time), {elems:,} of {T * S:,} scores "
              "visited per head"]
    if "PADDING" in mask:
        said.append("padding lengths are run-time data: priced as full rows")
    if int(cfg.get("max_seg_per_batch") or 1) > 1:
        said.append("packed segments are run-time data: priced over whole rows")
    return flops, "; ".join(said)


def assume_cudnn(version: int = 91000, capability: str = "9.0"):
    """A context manager that lets a CPU machine lower jax's cuDNN attention for a GPU (``count_program(...,
    platform="cuda")``): jax asks the local machine for cuDNN's version and the GPU's compute capability while it
    traces; inside this block it is answered ``version`` (91000: cuDNN 9.10) and ``capability`` (9.0: Hopper).
    The program is then the one jax lowers for such a GPU, custom calls and backend configs as jax writes them;
    nothing runs."""
    import contextlib
    from unittest import mock

    import jax._src.cudnn.fused_attention_stablehlo as fa

    want = tuple(int(x) for x in capability.split("."))
    stack = contextlib.ExitStack()
    stack.enter_context(mock.patch.object(fa, "check_cudnn_version", lambda: version))
    stack.enter_context(mock.patch.object(
        fa, "check_compute_capability", lambda c: want >= tuple(int(x) for x in c.split("."))))
    stack.enter_context(mock.patch.object(
        fa, "is_cuda_compute_capability_equal", lambda c: want == tuple(int(x) for x in c.split("."))))
    return stack
