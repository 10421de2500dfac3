"""The result of a count: an immutable breakdown of per-device per-step FLOPs."""

from __future__ import annotations

import dataclasses
import functools
import types
from typing import Mapping

from .components import ATTENTION as ATTENTION_COMPONENTS, KNOWN, kind_of, ordered


@dataclasses.dataclass(frozen=True)
class LayerRow:
    """One decoder layer, MTP module, or the output head ("head")."""

    name: str
    group: str  # "decoder", "mtp" or "head"
    mixer: str  # global / window / chunk / dsa / bidirectional / linear, or "" for the head
    ffn: str  # dense / moe, or "" for the head
    computes_index: bool
    components: Mapping[str, int]
    hardware_components: Mapping[str, int] = dataclasses.field(default_factory=dict)
    parallel: str = ""  # the mixer beside the first one (parallel_layer_pattern), or ""
    widths: Mapping[str, int] = dataclasses.field(default_factory=dict)  # its own widths (layer_widths), if any
    idle: str = ""  # why it is skipped whole (no mixer, no FFN: cross-attention without image tokens), or ""
    patches: bool = False  # runs over the patch stream (patch_layers: BLT's global transformer)
    forward_only: bool = False  # no gradient in training (frozen_layers, a looped pass without one): its forward

    @property
    def hardware_flops(self) -> int:
        return sum(self.hardware_components.values())

    @property
    def total(self) -> int:
        return sum(self.components.values())

    @property
    def attention(self) -> int:
        return sum(v for k, v in self.components.items() if k in ATTENTION_COMPONENTS)

    @property
    def learnable_weight(self) -> int:
        return self.total - self.attention

    def to_dict(self) -> dict:
        """The row as plain JSON types: its name and kind (mixer, FFN, widths), its totals and its components."""
        return {"name": self.name, "group": self.group, "mixer": self.mixer, "parallel": self.parallel, "ffn": self.ffn,
                "computes_index": self.computes_index, "widths": dict(self.widths), "patches": self.patches,
                "forward_only": self.forward_only,
                "total": self.total, "learnable_weight": self.learnable_weight, "attention": self.attention,
                "components": dict(self.components), "hardware_flops": self.hardware_flops,
                "hardware_components": dict(self.hardware_components)}


@dataclasses.dataclass(frozen=True)
class Breakdown:
    """Per-device, per-step FLOPs (Python ints) of one config, mode and batch.

    ``components`` sums each kind of matmul over the decoder layers and the head; everything the MTP modules
    execute (eh projection, their layer, their logits) is the single component ``mtp``. ``layers`` has one
    row per decoder layer, per MTP module and for the head, each with its own components. Invariants:
    ``total == learnable_weight + attention == sum(components.values()) == sum(row.total for row in layers)``.
    """

    model_name: str
    mode: str
    convention: str
    tokens: int  # tokens processed per device per step (decode: new tokens)
    learnable_weight: int
    attention: int
    components: Mapping[str, int]
    _source: tuple = dataclasses.field(repr=False, compare=False, default=None)  # (plan, priced, head, hw, params)
    not_priced: tuple = ()  # parts of the model or program these figures leave out (config key not_priced)

    @property
    def total(self) -> int:
        return self.learnable_weight + self.attention

    @property
    def per_token(self) -> float:
        """FLOPs per processed token."""
        return self.total / self.tokens if self.tokens else 0.0

    @property
    def tflops(self) -> float:
        return self.total / 1e12

    @property
    def mtp(self) -> int:
        return self.components.get("mtp", 0)

    @functools.cached_property
    def layers(self) -> tuple:
        """LayerRow per decoder layer, per MTP module, and the head, in execution order (built on first use)."""
        plan, priced, head, *_ = self._source
        hw_plan, hw_priced, hw_head = self._hardware
        frozen = [types.MappingProxyType(p) for p in priced]
        hw_frozen = [types.MappingProxyType(p) for p in hw_priced]
        rows = [LayerRow(name, "mtp" if plan.kinds[i].mtp else "decoder", plan.kinds[i].mixer, plan.kinds[i].ffn,
                         plan.kinds[i].computes_index, frozen[i], hw_frozen[j],
                         plan.kinds[i].parallel.mixer if plan.kinds[i].parallel is not None else "",
                         types.MappingProxyType(dict(plan.kinds[i].widths)), plan.kinds[i].idle,
                         plan.kinds[i].patches, plan.kinds[i].no_grad)
                for (name, i), (_, j) in zip(plan.rows, hw_plan.rows)]
        rows.append(LayerRow("head", "head", "", "", False, types.MappingProxyType(head),
                             types.MappingProxyType(hw_head)))
        return tuple(rows)

    @functools.cached_property
    def _hardware(self):
        return self._source[3]()

    @functools.cached_property
    def parameters(self):
        """The model's parameters (``maxflops.parameters`` of the same config, counted on first use): total and active
        per token, by component and by layer. They do not depend on the step: the same for train, prefill and
        decode, and under every convention."""
        return self._source[4]()

    @functools.cached_property
    def hardware_components(self) -> Mapping[str, int]:
        """What the kernels execute, by component (see the implementation knobs); MTP rows sum into 'mtp'."""
        hw_plan, hw_priced, hw_head = self._hardware
        return types.MappingProxyType(ordered(_sum_rows(hw_plan, hw_priced, hw_head)[0]))

    @property
    def hardware_flops(self) -> int:
        """Hardware FLOPs per device per step: the numerator of hardware MFU (>= total for the exact convention,
        unless a capacity factor below 1 drops tokens)."""
        return sum(self.hardware_components.values())

    def by_kind(self, hardware: bool = False) -> dict[str, int]:
        """Each kind of matmul summed over every row, MTP rows included (not lumped into 'mtp')."""
        out: dict[str, int] = {}
        for row in self.layers:
            for k, v in (row.hardware_components if hardware else row.components).items():
                out[k] = out.get(k, 0) + v
        return out

    def to_dict(self) -> dict:
        """The breakdown as plain JSON types (what ``--json`` prints): totals, per-token figure, components, hardware
        FLOPs and their components, the layer rows, what is not priced and the model's parameters."""
        return {"model_name": self.model_name, "mode": self.mode, "convention": self.convention,
                "not_priced": list(self.not_priced), "tokens": self.tokens, "total": self.total,
                "learnable_weight": self.learnable_weight, "attention": self.attention, "per_token": self.per_token,
                "components": dict(self.components), "hardware_flops": self.hardware_flops,
                "hardware_components": dict(self.hardware_components), "layers": [row.to_dict() for row in self.layers],
                "parameters": self.parameters.to_dict()}


def make_breakdown(model_name, mode, convention, tokens, plan, priced, head, hardware, parameters,
                   not_priced=()) -> Breakdown:
    """Sum the priced layer kinds (``priced[i]`` for ``plan.kinds[i]``, each as many times as the plan has it)
    and the head into a Breakdown. ``hardware()`` returns the same for hardware FLOPs, ``parameters()`` the model's
    parameters; each runs on first use."""
    components, learnable, attention = _sum_rows(plan, priced, head)
    return assemble(model_name, mode, convention, tokens, ordered(components), learnable, attention,
                    (plan, priced, head, hardware, parameters), not_priced)


def assemble(model_name, mode, convention, tokens, components, learnable, attention, source, not_priced) -> Breakdown:
    """The Breakdown of rows already summed (``components`` in report order; ``source``: (plan, priced, head,
    hardware, parameters), the last two functions that run on first use). The frozen dataclass's own __init__ sets
    each field through object.__setattr__; filling the instance's __dict__ at once makes the same object in less than
    half the time (a step loop makes one per count)."""
    b = _new(Breakdown)
    b.__dict__.update(model_name=model_name, mode=mode, convention=convention, tokens=tokens,
                      learnable_weight=learnable, attention=attention,
                      components=types.MappingProxyType(components), _source=source, not_priced=tuple(not_priced))
    return b


_new = object.__new__


def _sum_rows(plan, priced, head):
    """(components, learnable-weight, attention) summed over the plan's rows (MTP rows into 'mtp') and the head."""
    components: dict[str, int] = {}
    get = components.get
    mtp_attention = 0
    for kind, n, comps in zip(plan.kinds, plan.multiplicity, priced):
        if not comps.keys() <= KNOWN:
            _undeclared(comps)
        if kind.mtp:  # everything an MTP module executes is one component; its attention share is kept apart
            components["mtp"] = get("mtp", 0) + sum(comps.values()) * n
            mtp_attention += sum(v for k, v in comps.items() if k in ATTENTION_COMPONENTS) * n
        else:
            for name, value in comps.items():
                components[name] = get(name, 0) + value * n
    if not head.keys() <= KNOWN:
        _undeclared(head)
    for name, value in head.items():
        components[name] = get(name, 0) + value
    attention = mtp_attention + sum(v for k, v in components.items() if k in ATTENTION_COMPONENTS)
    return components, sum(components.values()) - attention, attention


def _undeclared(comps) -> None:
    for name in comps:
        if name not in KNOWN:
            kind_of(name)  # an undeclared component is an error, not a learnable-weight matmul
