"""The causal depthwise conv that linear and state-space mixers run over their input channels (the gated delta net's
q, k, v; Mamba's x, B, C), priced once for every family that has one. Not a family: a part the families share.

Model FLOPs: 2 per channel and tap, the taps by ``gdn_conv_taps`` (the non-padding ones, or the whole kernel).
Hardware FLOPs: the taps a conv implementation reads (``impl``: 'valid', 'padded', 'pre_padded'; see the
families' ``*_conv_impl`` keys), and in training its two gradients beyond two per forward (``grads``).
"""

from __future__ import annotations

from .. import masks
from .base import Priced

WINDOW = "window"  # the mask kind of a causal window (maxflops.families.attention.WINDOW): K taps back

IMPLS = ("valid", "padded", "pre_padded")
IMPL_DOC = ("'valid' the non-padding taps (XLA's count of a padded conv), forward and both gradients; 'padded' "
            "every tap of the L + K - 1 outputs of a conv padded by K - 1 on both sides before the causal slice "
            "(torch's conv1d in transformers); 'pre_padded' the sequence padded by K - 1 zeros before an unpadded "
            "conv (MaxText): the forward and the weight gradient read the valid taps (XLA folds the zeros into the "
            "conv's padding), the input gradient every tap (K per token).")


def model_taps(c, seqs, decode: bool, tokens, K: int):
    """Taps per channel: every one (``gdn_conv_taps='full'``) or the non-padding ones, a causal window of K."""
    if c["gdn_conv_taps"] == "full":
        return K * tokens
    if decode:
        return seqs.sum(lambda kv: masks.new_token_keys(WINDOW, K, kv))
    return seqs.exact_pairs(WINDOW, K)


def hardware_taps(impl: str, c, seqs, decode: bool, tokens, K: int):
    """Taps per channel a conv implementation reads in the forward pass."""
    if impl == "padded" and not decode:  # K taps at each of L + K - 1 outputs
        return seqs.sum(lambda L: K * (L + K - 1))
    return model_taps(c, seqs, decode, tokens, K)


def price(p: Priced, component: str, channels: int, K: int, c, seqs, decode: bool, tokens) -> None:
    """The conv's model FLOPs under ``component``."""
    p.out[component] = 2 * channels * model_taps(c, seqs, decode, tokens, K)


def price_hardware(p: Priced, component: str, impl: str, channels: int, K: int, c, seqs, decode: bool,
                   tokens) -> None:
    """The conv's hardware FLOPs under ``component``; training adds its gradients' extra (``grads``)."""
    p.out[component] = 2 * channels * hardware_taps(impl, c, seqs, decode, tokens, K)
    if c["mode"] == "train":
        grads(p, component, impl, c, channels, K * tokens)


def grads(p: Priced, component: str, impl: str, c, channels: int, all_taps) -> None:
    """The causal conv's two gradients beyond the forward's cost each: the input gradient over every tap
    (``impl='pre_padded'``), the weight gradient over every pair of channels (``conv_weight_grad='dense'``)."""
    fwd, extra = p.out[component], 0
    if impl == "pre_padded":
        extra += 2 * channels * all_taps - fwd
    if c["conv_weight_grad"] == "dense":
        extra += fwd * (channels - 1)
    if extra:
        p.grad_extra[component] = extra
