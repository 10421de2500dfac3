"""Config -> plan: the one place that knows layer patterns.

A plan is a tuple of rows ``(name, LayerKind)``, one per decoder layer and (in train mode) one per MTP module.
``LayerKind`` says what a layer is made of; identical kinds are priced once by the account.

Patterns handled here and nowhere else:
- mixers: ``attention_layer_pattern`` is cyclic, of any length (a per-layer list is a pattern of num_decoder_layers
  letters; letters past the last layer are not used);
  'G' layers become DSA sparse layers when ``use_sparse_indexer`` is on with MLA, and a DSA layer computes its own
  top-k index iff the GLM-5 reuse rule says so; 'S' and 'H' are DeepSeek-V4's compressed layers (ratio
  ``csa_compress_ratio`` / ``hca_compress_ratio``), an 'S' layer with the indexer always computing its own;
- FFNs: the dense prefix (``first_num_dense_layers``) and MoE interleaving (``interleave_moe_layer_step``), or
  each layer's own (``ffn_layer_pattern``: dense, MoE or none);
- a second mixer beside the first in a layer (``parallel_layer_pattern``: Falcon-H1's attention and Mamba-2);
- layer shapes: a '-' mixer letter is a layer without a mixer (``NO_MIXER``), a '-' FFN letter one without an FFN
  (Nemotron-H's separate Mamba, attention, MLP and MoE layers); a letter whose family says its layers idle under
  the config (``Family.idle``: cross-attention without image tokens) is a layer with neither;
- per-layer widths: ``layer_widths`` rules give layers their own heads, head width, FFN widths, hidden width or
  window (``LayerKind.widths``, read through ``layer_view``; a windowed layer's span is its own window);
- the trunk features' marks (``maxflops.features``: each feature's ``mark`` and ``flags``): a layer's kind carries
  those not at their default in ``LayerKind.features`` and reads each as an attribute (``kind.engram``,
  ``kind.attn_res``, ``kind.kv_shared``, ``kind.messages``, ``kind.patches``, ``kind.patcher_head``);
- looped depth: ``layer_loops`` rules run a block of layers several passes in a row (rows 'layer l.p', each pass
  priced as the layer: its weights are shared, its work is not; ``maxflops.features.layer_loops`` orders them); a
  rule 'a-b*k/g' runs k - g of the passes without a gradient (HRM's L_bp_cycles), forward only in training, as
  ``frozen_layers`` run (a frozen patcher);
- the layers' own handling: the first ``remat_skip_layers`` layers run outside rematerialization, the others in
  units of ``remat_block_layers``; in the DSA warm-up, ``warmup_cse_layers`` and ``warmup_dead_last_layer`` mark the
  layers XLA compiles outside a loop; ``pipeline_layers`` (all, by default) run in a pipeline of
  ``pipeline_stages``;
- MTP: module k (1-based) copies the last decoder layer's mixer and FFN kind and numbers itself from 1 for the
  index-reuse rule (``mtp_layer_numbering='after_decoder'``: it is layer num_decoder_layers + k for both);
  ``mtp_layer_pattern`` gives the modules their own mixers (a cycle over k); with ``mtp_ffn_layer_pattern`` (a
  hybrid model) every module runs the layers the two patterns give, its eh projection and head on its first.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

# Mixer kinds, each defined by its family (maxflops.families); re-exported here for the plan's readers.
from .families import idle, mixer_of, projection_of  # noqa: E402
from .families.attention import BIDIRECTIONAL, CHUNK, GLOBAL, WINDOW  # noqa: E402,F401
from .families.compressed import COMPRESSED, CSA, HCA  # noqa: E402,F401
from .families.dsa import DSA, computes_index  # noqa: E402,F401
from .families.base import NO_FFN, NO_MIXER  # noqa: E402
from .families.gdn import GDN  # noqa: E402,F401
from .features import FLAGS, marks  # noqa: E402
from .features.layer_loops import execution_order  # noqa: E402
from .widths import WIDTH_KEYS, layer_widths, parse_width_rule, width_rules  # noqa: E402,F401


_UNSET = object()
_FFN = {"F": "dense", "E": "moe", "-": NO_FFN}
FFN_LETTER = {kind: letter for letter, kind in _FFN.items()}  # a layer's FFN kind -> its ffn_layer_pattern letter


@dataclasses.dataclass(frozen=True)
class LayerKind:
    mixer: str  # its family's mixer (GLOBAL, WINDOW, CHUNK, BIDIRECTIONAL, DSA, CSA, HCA, GDN, ...), or NO_MIXER
    span: int  # window W, chunk C or top-k K (CSA: its top-k blocks, 0 = every visible block); 0 for the others
    projection: str  # "gqa", "mla", "compressed" or "gdn"
    computes_index: bool  # DSA and CSA: this layer runs the indexer (else it reuses an earlier top-k)
    ffn: str  # "dense", "moe" or NO_FFN
    mtp: bool  # an MTP module's layer (its first adds the module's eh projection and its own output head)
    ratio: int = 0  # CSA and HCA: tokens per compressed block (their window is sliding_window_size)
    no_remat: bool = False  # outside rematerialization (remat_skip_layers)
    inner: bool = False  # not the last layer of its rematerialized unit (remat_block_layers): no tail
    dead: bool = False  # DSA warm-up: the unrolled last layer, whose output nothing reads (warmup_dead_last_layer)
    cse: bool = False  # DSA warm-up: a layer scanned alone, its recompute merged with the forward (warmup_cse_layers)
    pipelined: bool = False  # in a pipeline of pipeline_stages > 1 (pipeline_layers): runs its bubble iterations too
    parallel: Any = None  # a second mixer beside the first (parallel_layer_pattern): its LayerKind (no FFN), or None
    mtp_inner: bool = False  # an MTP module's layer after its first (mtp_ffn_layer_pattern): no eh projection or head
    widths: tuple = ()  # ((key, value), ...) sorted: the widths layer_widths gives this layer
    idle: str = ""  # why the layer is skipped whole (its family's idle rule: no mixer, no FFN), or ""
    no_grad: bool = False  # training: a looped pass run without a gradient (layer_loops 'a-b*k/g'): forward only
    features: tuple = ()  # ((flag, value), ...) sorted: the trunk features' marks on this layer not at their default
    #                       (maxflops.features: kv_shared, engram, attn_res, messages, patches, patcher_head...)

    def __getattr__(self, name):
        """A trunk feature's flag on this layer (its record's ``flags``): the value marked, else its default."""
        default = FLAGS.get(name, _UNSET)
        if default is _UNSET:
            raise AttributeError(f"LayerKind has no attribute {name!r}")
        for flag, value in self.features:
            if flag == name:
                return value
        return default

@dataclasses.dataclass(frozen=True)
class Plan:
    kinds: tuple  # the distinct LayerKinds, in order of first appearance
    multiplicity: tuple  # how many rows have each kind
    rows: tuple  # ((name, index into kinds), ...) in execution order
    passes: tuple = ()  # per row, its pass of a looped block (layer_loops): 1 for every other row; () without loops

    def kind_rows(self):
        """(name, LayerKind) per row."""
        return tuple((name, self.kinds[i]) for name, i in self.rows)


def layer_view(c, kind: "LayerKind"):
    """The config as one layer of this kind reads it: its own widths over the config's."""
    return {**c, **dict(kind.widths)} if kind.widths else c


def is_moe_layer(layer: int, c: Mapping[str, Any]) -> bool:
    """Layer ``layer`` (0-based) is MoE iff there are experts, it is past the dense prefix, and the
    interleave step selects it ((layer+1) % step == 0); with ``ffn_all_moe`` (a reporting convention) every layer."""
    if c["num_experts"] > 1 and c["ffn_all_moe"]:
        return True
    return (c["num_experts"] > 1 and layer >= c["first_num_dense_layers"]
            and (layer + 1) % c["interleave_moe_layer_step"] == 0)


def ffn_kind(layer: int, c: Mapping[str, Any]) -> str:
    """Decoder layer ``layer``'s FFN: its ffn_layer_pattern letter (a dense one counted as MoE under ffn_all_moe, a
    reporting convention), else the dense prefix and the MoE interleaving."""
    pattern = c["ffn_layer_pattern"]
    if pattern:
        ffn = _FFN[pattern[layer % len(pattern)]]
        return "moe" if ffn == "dense" and c["ffn_all_moe"] and c["num_experts"] > 1 else ffn
    return "moe" if is_moe_layer(layer, c) else "dense"


def _mixer(letter: str, layer_number: int, c) -> tuple:
    """(mixer, span, computes_index, ratio, projection) of a pattern letter ('-': no mixer) at a 1-based layer."""
    if letter == "-":
        return NO_MIXER, 0, False, 0, ""
    mixer, span, index, ratio = mixer_of(letter, layer_number, c)
    return mixer, span, index, ratio, projection_of(mixer, c)


def build_plan(c: Mapping[str, Any]) -> Plan:
    """The plan of a resolved config (see ``maxflops.config.resolve``)."""
    pattern = c["attention_layer_pattern"]
    rows = []
    letter = "G"
    ffn = "dense"
    n = c["num_decoder_layers"]
    skip, block = c["remat_skip_layers"], c["remat_block_layers"]
    cse = frozenset(c["warmup_cse_layers"])
    piped = frozenset(c["pipeline_layers"] or range(n)) if c["pipeline_stages"] > 1 else frozenset()
    widths = layer_widths(c) if c["layer_widths"] else [{}] * n
    order = execution_order(c) if c["layer_loops"] else [(layer, 1, False) for layer in range(n)]
    looped = {layer for layer, p, _ in order if p > 1}
    marked = marks(c)  # the trunk features' marks on each layer (maxflops.features)
    passes = []
    frozen = frozenset(c["frozen_layers"])
    for layer, p, no_grad in order:
        passes.append(p)
        letter = pattern[layer % len(pattern)]
        own = widths[layer]
        mixer, span, index, ratio, projection = _mixer(letter, layer + 1, {**c, **own} if own else c)
        parallel = c["parallel_layer_pattern"]
        side = None
        if parallel and parallel[layer % len(parallel)] != "-":
            p_mixer, p_span, p_index, p_ratio = mixer_of(parallel[layer % len(parallel)], layer + 1, c)
            side = LayerKind(p_mixer, p_span, projection_of(p_mixer, c), p_index, NO_FFN, False, ratio=p_ratio)
        ffn = ffn_kind(layer, c)
        skipped = idle(letter, c)
        if skipped:  # its family skips the layer whole (cross-attention without image tokens)
            mixer, span, index, ratio, projection, ffn = NO_MIXER, 0, False, 0, "", NO_FFN
        rows.append((f"layer {layer}.{p}" if layer in looped else f"layer {layer}",
                     LayerKind(mixer, span, projection, index, ffn, False, ratio=ratio, parallel=side, idle=skipped,
                               widths=tuple(sorted(widths[layer].items())), features=marked(layer, p),
                               no_remat=layer < skip, cse=layer in cse, pipelined=layer in piped,
                               no_grad=(no_grad or layer in frozen) and c["mode"] == "train",
                               dead=layer == n - 1 and c["warmup_dead_last_layer"],
                               inner=skip <= layer < n - 1 and (layer - skip + 1) % block != 0)))
    if c["mode"] == "train":
        after = c["mtp_layer_numbering"] == "after_decoder"
        own = c["mtp_layer_pattern"]
        shapes = c["mtp_ffn_layer_pattern"]
        for k in range(1, c["mtp_num_layers"] + 1):
            if shapes:  # a hybrid model's module: layers of their own shapes, each numbered as the module
                for j, (m, f) in enumerate(zip(own, shapes)):
                    mixer, span, index, ratio, projection = _mixer(m, n + k if after else k, c)
                    rows.append((f"mtp {k}" if len(own) == 1 else f"mtp {k}.{j + 1}",
                                 LayerKind(mixer, span, projection, index, _FFN[f], True, ratio=ratio,
                                           mtp_inner=j > 0)))
                continue
            if own:  # the MTP modules' own mixers
                letter = own[(k - 1) % len(own)]
            elif after:  # Megatron: MTP layer k is layer n + k, for the index-reuse rule and the pattern
                letter = pattern[(n + k - 1) % len(pattern)]
            mixer, span, index, ratio, projection = _mixer(letter, n + k if after else k, c)
            rows.append((f"mtp {k}", LayerKind(mixer, span, projection, index, ffn, True,
                                               ratio=ratio)))
    index: dict[LayerKind, int] = {}
    for _, kind in rows:
        index.setdefault(kind, len(index))
    kinds = tuple(index)
    multiplicity = [0] * len(kinds)
    for _, kind in rows:
        multiplicity[index[kind]] += 1
    passes += [1] * (len(rows) - len(passes))  # (the MTP modules)
    return Plan(kinds, tuple(multiplicity), tuple((name, index[kind]) for name, kind in rows),
                tuple(passes) if looped else ())
