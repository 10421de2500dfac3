"""HRM-Text: HrmTextConfig, modeling_hrm_text; two stacks of num_layers_per_stack layers, L and H, iterated: each of
H_cycles cycles runs the L stack L_cycles times (on its state plus the H state), then the H stack once (on the H
state plus the L state). Read as maxflops' looped depth: decoder layers 0 .. n-1 are the L stack, run
H_cycles x L_cycles passes, of which only the trailing L_bp_cycles of each cycle carry a gradient (the others run
under torch.no_grad: forward only in training), and layers n .. 2n-1 the H stack, run H_cycles passes; the order of
the passes changes no count. Every layer MHA with a sigmoid output gate of its own projection (gate_proj D -> heads x
head_dim: the FLOPs of attention_output_gate) and a SiLU-gated MLP."""

from __future__ import annotations

from ...reader import NO_EFFECT, Reader
from ..house import HFType

# HrmTextConfig
DEFAULTS = {
    "tie_word_embeddings": False,
    "vocab_size": 151808, "hidden_size": 1536, "intermediate_size": 4096, "num_hidden_layers": 16,
    "num_attention_heads": 12, "hidden_act": "silu", "head_dim": 128, "H_cycles": 2, "L_cycles": 3,
}


def grad_passes(bp: list, H: int, L: int) -> int:
    """The L-stack passes that carry a gradient, as HrmTextModel runs them: L_bp_cycles left-padded with 1s to
    H_cycles entries; in cycle h (0-based) the trailing min(entry, L_cycles) of its L_cycles passes (an entry past
    the list: 1)."""
    padded = [1] * max(0, H - len(bp)) + list(bp)
    return sum(max(0, min(padded[h] if h < len(padded) else 1, L)) for h in range(H))


def _read(r: Reader, d) -> dict:
    heads = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
    o = {"emb_dim": r.int("hidden_size", d("hidden_size"), minimum=1),
         "vocab_size": r.int("vocab_size", d("vocab_size"), minimum=1),
         "num_query_heads": heads, "num_kv_heads": heads,  # HrmTextAttention: MHA (k and v have every head)
         "head_dim": r.int("head_dim", d("head_dim"), minimum=1),
         "mlp_dim": r.int("intermediate_size", d("intermediate_size"), minimum=1),
         "mlp_activations": (r.activation("hidden_act", d("hidden_act")), "linear"),
         "attention_output_gate": True}  # HrmTextAttention's gate_proj
    H = r.int("H_cycles", d("H_cycles"), minimum=1)
    L = r.int("L_cycles", d("L_cycles"), minimum=1)
    # a file transformers saved carries the per-stack count and num_hidden_layers rewritten to one slot per attention
    # call; an older one carries the per-stack count as num_hidden_layers (HrmTextConfig.__post_init__)
    if r.has("num_layers_per_stack") and r.raw("num_layers_per_stack", none_ok=True, record=False) is not None:
        n = r.int("num_layers_per_stack", minimum=1)
        r.ignore("num_hidden_layers", "the cache's slots (HrmTextConfig derives num_layers_per_stack x H_cycles x "
                                      "(L_cycles + 1)); the stacks are num_layers_per_stack deep")
    else:
        n = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    bp = r.list("L_bp_cycles", int, None, none_ok=True, record=False)
    if bp is None:  # absent or null: HrmTextConfig.__post_init__'s
        r.defaults[r.name("L_bp_cycles")] = [2]
        bp = [2]
    o["num_decoder_layers"] = 2 * n
    o["attention_layer_pattern"] = "G"
    g = grad_passes(bp, H, L)
    low = f"0-{n - 1}*{H * L}" + (f"/{g}" if g != H * L else "")
    high = f"{n}-{2 * n - 1}*{H}"
    o["layer_loops"] = tuple(rule for rule in (low, high) if not rule.endswith("*1"))
    r.ignore("prefix_lm", NO_EFFECT + " here: the count is causal; with token_type_ids an instruction prefix attends "
                                      "bidirectionally (data maxflops is not given)")
    r.ignore("embedding_scale", NO_EFFECT + " (the embeddings' multiplier: elementwise)")
    for key in ("attention_bias", "mlp_bias"):
        r.ignore(key, NO_EFFECT + " (biases add no matmul)")
    return o


TYPE = HFType(defaults=DEFAULTS, read=_read)
