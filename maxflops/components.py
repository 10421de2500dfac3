"""Every component a count can hold, declared once: its name, whether it is attention (sequence mixing) or a matmul
against a learned weight, and its place in reports. The trunk's components are declared here; each mixer family
declares its own in its module (``maxflops.families``). A component no one declared is an error, never silently
a learnable-weight matmul.
"""

from __future__ import annotations

import dataclasses

__all__ = ["Component", "register", "kind_of", "is_attention", "ATTENTION", "KNOWN", "ordered"]

WEIGHT, ATTENTION_KIND, MIXED = "weight", "attention", "mixed"


@dataclasses.dataclass(frozen=True)
class Component:
    name: str
    kind: str  # "weight" (a matmul against a learned matrix), "attention" (sequence mixing) or "mixed" (mtp)
    rank: int  # display order in reports (lower first)
    what: str  # one line for documentation


_REGISTRY: dict[str, Component] = {}
ATTENTION: set[str] = set()  # names of the attention components (read by the breakdown's sums)
KNOWN: set[str] = set()


def register(*components: Component) -> None:
    """Declare components; a name declared twice must be declared the same way."""
    for comp in components:
        if comp.kind not in (WEIGHT, ATTENTION_KIND, MIXED):
            raise ValueError(f"component {comp.name!r}: kind {comp.kind!r} is not weight, attention or mixed")
        old = _REGISTRY.get(comp.name)
        if old is not None and old != comp:
            raise ValueError(f"component {comp.name!r} declared twice, differently: {old} and {comp}")
        _REGISTRY[comp.name] = comp
        KNOWN.add(comp.name)
        if comp.kind == ATTENTION_KIND:
            ATTENTION.add(comp.name)


def kind_of(name: str) -> str:
    comp = _REGISTRY.get(name)
    if comp is None:
        raise ValueError(f"component {name!r} is not declared (maxflops.components.register): a new component "
                         "must say whether it is attention or a learnable-weight matmul")
    return comp.kind


def is_attention(name: str) -> bool:
    return kind_of(name) == ATTENTION_KIND


def ordered(components):
    """The components in report order (every name must be declared)."""
    names = tuple(components)
    order = _ORDERS.get(names)
    if order is None:
        for name in components:
            if name not in KNOWN:
                kind_of(name)  # raises, naming it
        order = sorted(components, key=lambda k: (_REGISTRY[k].rank, k))
        if len(_ORDERS) >= 1024:
            _ORDERS.clear()
        _ORDERS[names] = order
    return {k: components[k] for k in order}


_ORDERS: dict = {}  # the report order of each set of names, as given (a count's components repeat call to call)


def all_components() -> tuple:
    return tuple(sorted(_REGISTRY.values(), key=lambda c: (c.rank, c.name)))


def _trunk(name, rank, what, kind=WEIGHT):
    return Component(name, kind, rank, what)


# The trunk: what every decoder layer and the head may hold. Families declare their own (maxflops.families: gdn_conv,
# compressor, indexer_*) and trunk features theirs (maxflops.features: engram_*, mhc, attn_res...), with ranks
# between these.
register(
    _trunk("qkv_proj", 50, "the mixer's input projections (q, k, v; MLA's latents; a gated delta net's)"),
    _trunk("rel_logits", 55, "relative-position logits: each head's vector against the bank of bias profiles over "
                             "the extent (Inkling)"),
    _trunk("cca_conv", 56, "compressed convolutional attention's convs over the q and k channels: depthwise, then "
                           "one group per head (ZAYA)"),
    _trunk("kv_conv", 57, "the causal depthwise convs over an attention layer's keys and values (Inkling)"),
    _trunk("out_proj", 60, "the mixer's output projection"),
    _trunk("core_attention", 70, "the mixer's core: QK^T and PV over attended pairs, or a linear recurrence",
           ATTENTION_KIND),
    _trunk("mlp", 140, "the dense FFN"),
    _trunk("moe_router", 150, "the MoE router D -> E"),
    _trunk("moe_routed", 160, "the routed experts"),
    _trunk("moe_latent_proj", 165, "latent MoE: the routed experts' projections D -> latent and back, once per token"),
    _trunk("moe_weighted_sum", 170, "the dense MoE path's router-weighted sum over experts"),
    _trunk("moe_dispatch", 180, "the one-hot MoE dispatch (capacity, einsum)"),
    _trunk("moe_combine", 190, "the one-hot MoE combine (capacity, einsum)"),
    _trunk("moe_down_grad_replicated", 195, "the routed experts' down-projection input gradient run again on each "
                                            "device that repeats it (moe_down_grad_replicas)"),
    _trunk("moe_routing_replicated", 197, "the MoE router, dispatch, combine and weighted sum run again on each "
                                          "device that repeats them (moe_routing_replicas)"),
    _trunk("moe_shared", 200, "the shared experts (and their gate)"),
    _trunk("layer_up_proj", 210, "a latent FFN's up-projection back to D"),
    _trunk("logits", 260, "the output head"),
    _trunk("embedding_table", 265, "the token embedding table priced as a matmul (embedding_flops: 6N conventions)"),
    _trunk("vision_encoder", 280, "the vision encoder's weights"),
    _trunk("vision_attention", 290, "the vision encoder's attention", ATTENTION_KIND),
    _trunk("vision_projector", 300, "the vision projector"),
    Component("pipeline_bubble", MIXED, 320, "hardware: a pipelined layer's work in the pipeline's bubble iterations "
                                             "(pipeline_stages)"),
)
