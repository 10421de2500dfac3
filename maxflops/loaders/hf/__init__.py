"""A Hugging Face ``config.json`` -> schema overrides: the loader as a house, one module per model type.

    from maxflops.loaders import load_hf_config
    loaded = load_hf_config("config.json")        # Loaded(overrides, source='hf-config', ignored, defaults)

The house:

- ``models/<model_type>.py``: one module per transformers model type (as transformers keeps ``models/<type>/``),
  holding ``TYPE = HFType(...)``: its class defaults for the keys it reads, its attention, FFN and layer rules (shared
  readers from ``parts``, or its own functions beside them), the keys its files carry that its model never reads,
  and for a multimodal wrapper the model type of its ``text_config``. A type FLOP-equal to another is a few lines of
  data.
- ``house.py``: ``HFType``, the registry (``names()``, ``get(name)``: a type's module is imported when a file of
  that type is read) and the decoder pipeline most types run.
- ``parts.py``: readers the types share; ``ssm.py``: those of the state-space types; ``keys.py``: the keys every
  type shares (no FLOPs effect, a tower's).

Nothing outside a type's module branches on its name.

Adding a model type: write ``models/<model_type>.py`` with its ``TYPE`` (copy the closest type's module), record its
class defaults with ``tests/fixtures/hf_transformers/generate.py``, and add it to the zoo's proof
(``tests/fixtures/hf_zoo``): ``tests/loaders/test_hf_zoo.py`` requires its counts to equal torch's on transformers' own model.
"""

from __future__ import annotations

import functools
import pathlib

from ..reader import (
    MISSING,
    NO_EFFECT,
    NOT_UNDERSTOOD,
    VISION,
    Loaded,
    Reader,
    read_file,
    refuse_unknown,
    validate_overrides,
)
from ..quantization import weight_rules
from . import keys, unread, unread_keys
from .house import HFType, TypeReader, get, model_types, names, read_decoder

__all__ = ["load_hf_config", "HF_MODEL_TYPES", "HFType", "get", "names", "model_types"]


def __getattr__(attr):
    if attr == "HF_MODEL_TYPES":  # every type the house reads
        return model_types()
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


def _no_effect(reader: Reader, table) -> None:
    """Report each key of ``table`` ({key: why}) the mapping has as having no FLOPs effect (any value, null too)."""
    for key, why in table.items():
        if reader.has(key):
            reader.raw(key, none_ok=True, record=False)
            reader.ignore(key, NO_EFFECT + ": " + why)


@functools.lru_cache(maxsize=1)
def _known_keys() -> frozenset:
    """Every key some type reads or knows (for the 'did you mean' of a key not understood)."""
    known = set(keys.NO_EFFECT_KEYS) | set(keys.VISION_KEYS)
    for name in model_types():
        t = get(name)
        known |= set(t.defaults) | set(t.no_effect)
    return frozenset(known)


class _Known:
    """The known keys, computed only when a file has a key not understood."""

    def __iter__(self):
        return iter(_known_keys())


def _classifier(model_types: tuple):
    """The reason for a key no reader took (``keys.classify``), a key no code of ``model_types`` reads told apart
    from one that is read and not understood."""
    def classify(key: str) -> str:
        why = keys.classify(key)
        if why == NOT_UNDERSTOOD and unread_keys.unread(key, model_types):
            return unread_keys.UNREAD
        return why
    return classify


def load_hf_config(path, *, unknown: str = "error") -> Loaded:
    """A Hugging Face ``config.json`` -> schema overrides.

    Model types: ``HF_MODEL_TYPES`` (a multimodal wrapper reads its ``text_config``; its towers are named in
    ``not_priced`` and their keys listed in ``Loaded.ignored``, not priced). Keys absent from the file that the model
    type's transformers config class gives a default for take that default (listed in ``Loaded.defaults``); other
    absent keys the loader needs are a ValueError. A key the loader does not know is a ValueError naming it
    (``unknown='report'`` lists it in ``Loaded.ignored`` instead).
    """
    path = pathlib.Path(path)
    data = read_file(path, "json")
    model_type = Reader(data, path).str("model_type")
    t = get(model_type)
    if t is None:
        raise Reader(data, path).fail("model_type", unread.why_not(model_type) or "unsupported model type; "
                                      "supported: " + ", ".join(model_types()))
    flat = t.wrapper and t.flat_text and "text_config" not in data  # the text model's keys at the top level
    attribute_map = get(t.wrapper).attribute_map if flat else None if t.wrapper else t.attribute_map
    top = TypeReader(data, path, attribute_map=attribute_map)
    top.str("model_type")
    if flat:
        r, text_type = top, get(t.wrapper)
    elif t.wrapper:
        text = top.mapping("text_config")
        inner = Reader(text, path, "text_config.").raw("model_type", t.wrapper, record=False)
        inner = t.wrapper if t.any_text_type else inner
        allowed = inner == t.wrapper or inner in t.text_types or ("*" in t.text_types and get(inner) is not None
                                                                  and not get(inner).wrapper)
        if not allowed:
            raise Reader(text, path, "text_config.").fail(
                "model_type", f"expected {' or '.join(map(repr, (t.wrapper,) + t.text_types))} inside a "
                              f"{model_type!r} config" if "*" not in t.text_types else
                              f"not a text model type maxflops reads (inside a {model_type!r} config)", inner)
        text_type = get(inner)
        r = TypeReader(text, path, "text_config.", text_type.attribute_map)
        r.raw("model_type", t.wrapper, record=False)
        r.ignore("tie_word_embeddings", "the wrapper's own tie_word_embeddings decides (transformers ties the head "
                                        "by the top-level config)")
    else:
        r, text_type = top, t
    if t.wrapper:  # the wrapper's own keys: its towers' and those its class keeps and never reads
        top.ignore("vision_config", VISION)
        _no_effect(top, t.no_effect)

    r.model_type = text_type.name  # (named in the readers' errors)
    defaults = {**text_type.defaults, **t.text_defaults} if t.wrapper else text_type.defaults

    def d(key):
        return defaults.get(key, MISSING)

    _no_effect(r, text_type.no_effect)  # keys a type's published files carry
    for reader in {id(top): top, id(r): r}.values():  # keys of no effect at one value, checked on both levels
        for key, value in keys.AT_VALUE.items():
            if reader.has(key):
                if reader.raw(key, none_ok=True, record=False) not in (value, None):
                    raise reader.fail(key, f"not modelled: a decoder-only LM is counted with {key}={value}")
                reader.ignore(key, f"{NO_EFFECT} ({value})")
    read = t.text_read if t.wrapper and t.text_read else text_type.read
    o = read(r, d) if read else read_decoder(r, text_type, d)

    # the output head is the token table where the governing config's tie_word_embeddings says so: a wrapper's own
    # (transformers ties by the top-level config), at its config class's default; a model class that never ties
    # keeps its own head whatever the file says
    tied = top.bool("tie_word_embeddings", t.defaults.get("tie_word_embeddings", False))
    if "logits_via_embedding" not in o:
        o["logits_via_embedding"] = tied and text_type.ties
    if text_type.positions:  # a learned absolute position table
        key, offset = text_type.positions
        o["position_table_rows"] = r.int(key, d(key), minimum=1) + offset

    if r is not top:  # a wrapper's top-level copy of a text key (vocab_size): the text model is built from text_config
        for key, value in top.data.items():
            if key in top.used or top.name(key) in top.ignored or key in keys.TOWERS:
                continue
            text_value = r.data[key] if key in r.data else defaults.get(key, MISSING)
            if text_value is not MISSING and value == text_value:
                top.ignore(key, f"{NO_EFFECT}: the text_config's own value (transformers builds the text model "
                                "from text_config)")
    # a key no reader took: shared no-effect, a tower's, unread by the type's transformers code, else not understood
    top_types = (t.name, t.wrapper) if flat else (t.name,)
    if r is not top:
        top.absorb(r, _classifier((text_type.name,)))
    top.finish(_classifier(top_types))
    refuse_unknown(path, top.original, top.ignored, _Known(), unknown, real=unread_keys.every_read_key)
    never_read = [k for k, why in top.ignored.items() if why == unread_keys.UNREAD]
    if never_read:
        named = [k + unread_keys.hint(k.rpartition(".")[2], top_types if k == k.rpartition(".")[2]
                                      else (text_type.name,)) for k in never_read]
        o["not_priced"] = tuple(o.get("not_priced", ())) + (
            f"ignored: the file's {', '.join(named)} (no transformers {text_type.name} code reads "
            f"{'them' if len(never_read) > 1 else 'it'})",)
    quant = next((x.get("quantization_config") for x in (top.data, r.data) if x.get("quantization_config")), None)
    if quant:  # FLOPs are the same; decode bytes read each weight as the file stores it
        expert_dtype = next((x["expert_dtype"] for x in (top.data, r.data) if x.get("expert_dtype")), None)
        rules = weight_rules(quant, o["num_decoder_layers"], expert_dtype) if isinstance(quant, dict) else None
        if rules:
            o["weight_bytes_rules"] = rules
        elif rules is None:
            method = (quant.get("quant_method") or quant.get("quant_algo") or "?") if isinstance(quant, dict) else "?"
            o["not_priced"] = tuple(o.get("not_priced", ())) + (
                f"traffic: the file's quantized weights (quantization_config: {method}, a method maxflops does not "
                f"read); decode weight bytes are priced at weight_bytes={o.get('weight_bytes', 2)} per element for "
                "every weight",)
    # a partial count never looks whole: the report's NOT COUNTED line names the towers the model also runs (a
    # wrapper's config class builds its class_towers when the file has no sub-config for them; a null one is none)
    towers = {**keys.TOWERS, **t.towers}
    present = [k for k in towers if isinstance(top.data.get(k), dict) or (t.wrapper and k in t.class_towers)]
    if present:
        o["not_priced"] = tuple(o.get("not_priced", ())) + tuple(
            f"model: the {towers[k]} ({k}{'' if top.has(k) else ': the class default'}); maxflops counts the "
            "text decoder only" for k in present)
    validate_overrides(path, o, keys.SOURCES)
    return Loaded(overrides=o, source="hf-config", ignored=top.ignored, defaults=top.defaults)
