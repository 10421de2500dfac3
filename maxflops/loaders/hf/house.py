"""The house's frame: what a model type is (``HFType``), where the types live (the registry: one module per type in
``maxflops/loaders/hf/models/``, named as transformers names the type), and the decoder pipeline most types run
(``read_decoder``: the widths every llama-like has, then the type's own attention, FFN and layer rules).

Nothing here branches on a type's name: what differs between types is a field of its ``HFType``."""

from __future__ import annotations

import dataclasses
import functools
import importlib
import pkgutil
from typing import Any, Callable, Mapping

from ..reader import MISSING, NO_EFFECT, Reader, fit_ffn, fit_pattern
from .nulls import REFUSED
from . import parts

__all__ = ["HFType", "TypeReader", "get", "names", "model_types", "read_decoder", "read_decoder_4x"]

@dataclasses.dataclass(frozen=True)
class HFType:
    """One Hugging Face ``model_type``: how a ``config.json`` of it becomes schema overrides.

    Either ``read`` reads the whole file (types with a layer of their own: DeepSeek-V4, the state-space models,
    Gemma 4, LongCat-Flash), or the decoder pipeline (``read_decoder``) runs with the fields below; a type that is
    FLOP-equal to another is the same fields with its own key names and defaults."""

    # the config class's defaults (transformers 5.24) for the keys read (a wrapper's: its own top-level keys, the
    # tie_word_embeddings that ties its text model's head)
    defaults: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    read: Callable[[Reader, Callable], dict] | None = None  # (reader, default-of) -> overrides; None: the pipeline
    activation: str = "hidden_act"  # the key the config class reads the FFN activation from
    fixed_activation: str = ""  # the activation the config class sets whatever its file says (MiniMax-M3: silu)
    gated: bool = True  # act(gate) * up, down; False: up, act, down
    attention: Callable = parts.gqa  # (r, d, o) -> None: the attention widths (head_dim rule, MLA, ...)
    ffn: Callable = parts.dense_ffn  # (r, d, o, n) -> (per-layer is-MoE list, the key that decided it)
    dense_key: str | None = "intermediate_size"  # the dense layers' FFN width (None: the type has no dense FFN)
    layers: Callable = parts.global_layers  # (r, d, n) -> (per-layer mixer letters, the key that decided them)
    extras: tuple = ()  # (r, d, o, pattern) -> None, each after the layer pattern is known
    # keys its files carry that its class keeps and its model never reads -> why
    no_effect: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # the config class's attribute_map for the keys the pipeline reads: {the name read: the class's field}, as
    # GPT-2's {"hidden_size": "n_embd"}; a file may give either name (not both, unless equal)
    attribute_map: Mapping[str, str] = dataclasses.field(default_factory=dict)
    wrapper: str | None = None  # a multimodal wrapper: the model_type of its text_config (its class's default)
    # other text model types its class accepts (LLaVA-style wrappers take any decoder: ("*",) for any type of the
    # house the text_config names)
    text_types: tuple = ()
    # a file with no text_config is read from its top-level keys, the text model's beside the towers': its class
    # pops them into its text config (Qwen2VLConfig), or its publishers write the type so (aiconfigurator's
    # Step-3.7-Flash files; the type's module says which)
    flat_text: bool = False
    # the class drops the model_type its text_config names and builds its own text class (Step3p7Config): any name
    # there is read as ``wrapper``
    any_text_type: bool = False
    # the wrapper's own defaults for its text model, over the text type's class defaults (VoxtralConfig lays its
    # init_kwargs under a given text_config)
    text_defaults: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    # a wrapper's sub-configs run beside the text decoder -> what they are (beside keys.TOWERS)
    towers: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # the towers a wrapper's config class builds when the file has no sub-config for them (its class default)
    class_towers: tuple = ("vision_config",)
    # a wrapper whose own code reads its text_config (Kimi K3's remote code extends kimi_linear's config class): its
    # reader of the text model, in place of the text type's (None: the text type's)
    text_read: Callable[[Reader, Callable], dict] | None = None
    # the model class ties its output head to the token table when tie_word_embeddings says so (CpmAnt's never does)
    ties: bool = True
    # (key, offset): a learned absolute position table of that key's value + offset rows (OPT's and BioGPT's start at
    # 2): a lookup, no FLOPs, in the parameters
    positions: tuple = ()
    name: str = ""  # the model_type (set by the registry from the module's name)


class TypeReader(Reader):
    """A ``Reader`` of one model type's mapping that reads the class's field names (``HFType.attribute_map``) under
    the names the readers use, and names the file's own key in every message and report."""

    def __init__(self, data, path, prefix: str = "", attribute_map: Mapping[str, str] | None = None):
        fields = dict(attribute_map or {})
        renamed = dict(data)
        self.file_key: dict[str, str] = {}
        for name, field in fields.items():
            if field not in data:
                continue
            if name in data and data[name] != data[field]:
                raise Reader(data, path, prefix).fail(name, f"disagrees with {field}={data[field]!r} (the config "
                                                            f"class reads {name} as {field})")
            renamed[name] = renamed.pop(field)
            self.file_key[name] = field
            if name in data:  # both given, equal: the alias is reported, the field read
                self.file_key["=" + name] = name
        super().__init__(renamed, path, prefix)
        self.original = data
        self.model_type = ""

    def raw(self, key: str, default=MISSING, *, none_ok: bool = False, record: bool = True):
        """A null where the type's config class refuses one, or keeps it for a model that then fails
        (``nulls.REFUSED``, recorded from transformers), is refused, whatever default or meaning the reader would give
        it; any other null is the reader's to read (tests/loaders/test_hf_nulls.py holds those to transformers)."""
        if key in self.data and self.data[key] is None and self.file_key.get(key, key) in REFUSED.get(self.model_type,
                                                                                                      ()):
            raise self.fail(key, f"null: transformers builds no {self.model_type} model with it (the config class or "
                                 "the model refuses a null here); give a value, or leave the key out for the class "
                                 "default")
        return super().raw(key, default, none_ok=none_ok, record=record)

    def name(self, key: str) -> str:
        return self.prefix + self.file_key.get(key, key)

    def finish(self, classify) -> None:
        super().finish(classify)
        for name, field in self.file_key.items():
            if name.startswith("="):
                self.ignored[self.prefix + field] = f"superseded: the same value as {self.file_key[field]}"


_MODELS = __package__ + ".models"


@functools.lru_cache(maxsize=None)
def names() -> tuple[str, ...]:
    """The modules of ``models/``, one per model type (a type whose name has a '-', as openai-gpt, is the module with
    '_' for it, its ``TYPE.name`` giving the type's own spelling)."""
    from . import models

    return tuple(sorted(m.name for m in pkgutil.iter_modules(models.__path__) if not m.name.startswith("_")))


@functools.lru_cache(maxsize=None)
def get(name: str) -> HFType | None:
    """The model type ``name``, or None when the house has no module for it (only its own module is imported)."""
    if not isinstance(name, str) or name.startswith("_"):
        return None
    stem = name.replace("-", "_")
    if not stem.isidentifier() or stem not in names():
        return None
    t = importlib.import_module(f"{_MODELS}.{stem}").TYPE
    if (t.name or stem) != name:
        return None
    return dataclasses.replace(t, name=name)


@functools.lru_cache(maxsize=None)
def model_types() -> tuple[str, ...]:
    """Every model type the house reads, spelled as transformers spells it (imports every module)."""
    return tuple(sorted(get_module_type(stem) for stem in names()))


def get_module_type(stem: str) -> str:
    """The model type the module ``stem`` reads."""
    return importlib.import_module(f"{_MODELS}.{stem}").TYPE.name or stem


def read_decoder(r: Reader, t: HFType, d) -> dict:
    """The decoder pipeline: layers, widths, heads, the activation; then the type's attention widths, FFN rule and
    layer rule; windows and chunks where the layers have them; then the type's extras."""
    o: dict[str, Any] = {}
    n = o["num_decoder_layers"] = r.int("num_hidden_layers", d("num_hidden_layers"), minimum=1)
    o["emb_dim"] = r.int("hidden_size", d("hidden_size"), minimum=1)
    o["vocab_size"] = r.int("vocab_size", d("vocab_size"), minimum=1)
    heads = o["num_query_heads"] = r.int("num_attention_heads", d("num_attention_heads"), minimum=1)
    kv = r.int("num_key_value_heads", d("num_key_value_heads") if d("num_key_value_heads") is not MISSING
               else heads, minimum=1, none_ok=True)
    o["num_kv_heads"] = heads if kv is None else kv
    if t.fixed_activation:
        act = t.fixed_activation
        r.ignore(t.activation, f"overwritten by {t.name}'s config class: its FFN's activation is {act}")
    else:
        act = r.activation(t.activation, d(t.activation))
    if t.activation != "hidden_act":
        r.ignore("hidden_act", f"not read by {t.name}'s config class ({t.activation} is what the model uses)")
    o["mlp_activations"] = (act, "linear") if t.gated else (act,)
    t.attention(r, d, o)

    is_moe, ffn_key = t.ffn(r, d, o, n)
    if o.get("num_experts", 1) > 1:
        k, s = fit_ffn(is_moe, r, ffn_key)
        if k:
            o["first_num_dense_layers"] = k
        if s > 1:
            o["interleave_moe_layer_step"] = s
    dense_key = t.dense_key
    if o.get("num_experts", 1) == 1 or not all(is_moe):
        if dense_key is None:
            raise r.fail(ffn_key, f"{t.name} models have no dense FFN width for the dense layers")
        o["mlp_dim"] = r.int(dense_key, d(dense_key), minimum=1)
    elif dense_key and dense_key not in r.used:  # (a key the experts' width was read from stays used)
        r.ignore(dense_key, "unused: every layer is MoE (no dense FFN layer)")

    letters, key = t.layers(r, d, n)
    pattern = o["attention_layer_pattern"] = fit_pattern(letters, r, key)
    for letter, key, target, what in (("L", "sliding_window", "sliding_window_size", "sliding-window"),
                                      ("C", "attention_chunk_size", "chunk_attn_window_size", "chunked-attention")):
        if letter in pattern:
            span = r.int(key, d(key), minimum=1, none_ok=True)
            if span is None:
                raise r.fail(key, f"the layers include {what} attention, so {key} is needed")
            o[target] = span
        else:
            r.ignore(key, f"unused: no {what} layers")
    for extra in t.extras:
        extra(r, d, o, pattern)
    if r.has("use_bidirectional_attention"):
        if r.raw("use_bidirectional_attention", None, none_ok=True, record=False) not in (None, False):
            raise r.fail("use_bidirectional_attention", "bidirectional attention is not modelled")
        r.ignore("use_bidirectional_attention", NO_EFFECT + " (false or null: causal)")
    return o


def read_decoder_4x(r: Reader, d) -> dict:
    """The pipeline of a GPT-style type, its dense FFN width (the type's dense_key: n_inner, intermediate_size,
    ffn_hidden_size) null or absent read as 4 * hidden_size, as the GPT-style blocks build it."""
    t = get(r.model_type)
    hidden = r.int("hidden_size", d("hidden_size"), minimum=1)
    return read_decoder(r, t, lambda key: 4 * hidden if key == t.dense_key else d(key))
