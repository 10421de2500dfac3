"""The interface every loader shares (the MaxText mapping, the MaxText YAML and Hugging Face loaders): reading a
file (``read_file``), typed access to its keys that remembers what was used (``Reader``; a nested sub-config's
reader, ``Reader.sub``, folded back by ``Reader.absorb``), fitting per-layer lists to the schema's cyclic knobs
(``fit_pattern``, ``fit_ffn``, ``fit_index``), and the loader contract
(``refuse_unknown``: a key not understood is an error; ``validate_overrides``: the result is a valid model, its
errors naming the file's keys). A new loader reads through a ``Reader`` and returns a ``Loaded``.

Where to look: ``maxflops.load.load_config`` is the entry point (a name, a .py, a YAML or a JSON file);
``discovery`` finds a model by its name or path; ``maxtext/`` and ``hf/`` read the file formats; this module is
what they have in common."""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any, Callable, Mapping

from .. import config as _config
from ..families.dsa import computes_index  # the DSA family's index-reuse rule, one place
from ..schema import closest as _closest

__all__ = ["Loaded", "Reader", "read_file", "fail", "fit_pattern", "fit_ffn", "fit_index", "refuse_unknown",
           "validate_overrides", "NO_EFFECT", "NOT_UNDERSTOOD", "VISION", "MISSING", "ACTIVATIONS"]

NO_EFFECT = "no FLOPs effect"
NOT_UNDERSTOOD = "not understood"
VISION = "not counted: vision/multimodal part (maxflops counts the text decoder only)"
MISSING = object()


@dataclasses.dataclass(frozen=True)
class Loaded:
    """What a loader read from one file."""

    overrides: dict  # schema key -> value, ready for maxflops.model_config(**overrides)
    source: str  # "maxtext-yaml" or "hf-config"
    ignored: dict  # file key (nested keys as "text_config.key") -> reason it was not used
    defaults: dict = dataclasses.field(default_factory=dict)  # absent file key -> the default value used


# ------------------------------------------------------------------------------------------------------------
# shared plumbing
# ------------------------------------------------------------------------------------------------------------


def fail(path, key, value, msg) -> ValueError:
    if key is None:
        return ValueError(f"{path}: {msg}")
    shown = "<absent>" if value is MISSING else repr(value)
    return ValueError(f"{path}: key {key!r} = {shown}: {msg}")


def read_file(path, kind: str) -> dict:
    """Parse a YAML or JSON file into a dict; every failure is a ValueError naming the file."""
    p = pathlib.Path(path)
    if not p.is_file():
        raise ValueError(f"{p}: no such file" if not p.exists() else f"{p}: not a file")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{p}: cannot read: {e}") from None
    if kind == "yaml":
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise ValueError(f"{p}: invalid YAML: {e}") from None
    else:
        import json

        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"{p}: invalid JSON: {e}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{p}: expected a mapping of keys at the top level, got {type(data).__name__}")
    for k in data:
        if not isinstance(k, str):
            raise fail(p, k, data[k], "keys must be strings")
    return data


class Reader:
    """Typed access to one mapping of a config file, remembering which keys were read or reported."""

    def __init__(self, data: Mapping[str, Any], path, prefix: str = ""):
        self.data = data
        self.path = path
        self.prefix = prefix
        self.used: set[str] = set()
        self.ignored: dict[str, str] = {}
        self.defaults: dict[str, Any] = {}

    def name(self, key: str) -> str:
        return self.prefix + key

    def has(self, key: str) -> bool:
        return key in self.data

    def fail(self, key, msg, value=MISSING) -> ValueError:
        if value is MISSING and key is not None and key in self.data:
            value = self.data[key]
        return fail(self.path, None if key is None else self.name(key), value, msg)

    def raw(self, key: str, default=MISSING, *, none_ok: bool = False, record: bool = True):
        """The value of ``key`` (marked used); ``default`` if absent (recorded in ``defaults``)."""
        if key in self.data:
            self.used.add(key)
            value = self.data[key]
            if value is None and not none_ok:
                if default is MISSING:
                    raise self.fail(key, "must not be null")
                if record:
                    self.defaults[self.name(key)] = default
                return default
            return value
        if default is MISSING:
            raise self.fail(key, "required key is missing")
        if isinstance(default, list):
            default = list(default)  # never hand out the module's constants
        if record:
            self.defaults[self.name(key)] = default
        return default

    def int(self, key: str, default=MISSING, *, minimum: int | None = 0, none_ok: bool = False,
            record: bool = True):
        value = self.raw(key, default, none_ok=none_ok, record=record)
        if value is None and none_ok:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(key, f"expected an integer, got {type(value).__name__}", value)
        if isinstance(value, float):
            if not value.is_integer():
                raise self.fail(key, "expected an integer", value)
            value = int(value)
        if minimum is not None and value < minimum:
            raise self.fail(key, f"must be >= {minimum}", value)
        return value

    def float(self, key: str, default=MISSING, *, record: bool = True):
        value = self.raw(key, default, record=record)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(key, f"expected a number, got {type(value).__name__}", value)
        return float(value)

    def bool(self, key: str, default=MISSING, *, record: bool = True):
        value = self.raw(key, default, record=record)
        if not isinstance(value, bool):
            raise self.fail(key, f"expected true or false, got {type(value).__name__}", value)
        return value

    def str(self, key: str, default=MISSING, *, record: bool = True):
        value = self.raw(key, default, record=record)
        if not isinstance(value, str):
            raise self.fail(key, f"expected a string, got {type(value).__name__}", value)
        return value

    def list(self, key: str, item: type, default=MISSING, *, none_ok: bool = False, record: bool = True):
        value = self.raw(key, default, none_ok=none_ok, record=record)
        if value is None and none_ok:
            return None
        if not isinstance(value, (list, tuple)):
            raise self.fail(key, f"expected a list, got {type(value).__name__}", value)
        for v in value:
            ok = isinstance(v, item) and not (item is int and isinstance(v, bool))
            if not ok:
                raise self.fail(key, f"expected a list of {item.__name__}, found {v!r}", value)
        return list(value)

    def activation(self, key: str, default=MISSING) -> str:
        """An activation name (``ACTIVATIONS``), as the schema names it."""
        name = self.str(key, default)
        if name not in ACTIVATIONS:
            raise self.fail(key, "not an activation transformers 5.24 builds (its ACT2CLS)"
                            + _closest(name, ACTIVATIONS, cutoff=0.6), name)
        return ACTIVATIONS[name]

    def mapping(self, key: str):
        value = self.raw(key)
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a mapping, got {type(value).__name__}", value)
        return value

    def sub(self, key: str) -> Reader:
        """The reader of the nested sub-config under ``key`` (absent or null: an empty one, so that its class's
        defaults apply), its keys reported as ``key.<name>``; ``absorb`` takes its reports back once read."""
        value = self.raw(key, {}, none_ok=True, record=False) or {}
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a mapping, got {type(value).__name__}", value)
        return Reader(value, self.path, prefix=self.name(key) + ".")

    def absorb(self, sub: Reader, classify: Callable[[str], str]) -> None:
        """Finish a nested reader (``sub.finish(classify)``) and take its reports and defaults as this reader's."""
        sub.finish(classify)
        self.ignored.update(sub.ignored)
        self.defaults.update(sub.defaults)

    def ignore(self, key: str, reason: str) -> None:
        """Report ``key`` (if present) as not used, with a reason."""
        if key in self.data:
            self.used.discard(key)
            self.ignored[self.name(key)] = reason

    def finish(self, classify: Callable[[str], str]) -> None:
        """Report every key that was neither used nor reported, with ``classify(key)`` as its reason."""
        for key in self.data:
            if key not in self.used and self.name(key) not in self.ignored:
                self.ignored[self.name(key)] = classify(key)


def _period(seq) -> int:
    n = len(seq)
    for p in range(1, n + 1):
        if all(seq[i] == seq[i % p] for i in range(p, n)):
            return p
    return max(n, 1)


def fit_pattern(letters: list, reader: Reader, key: str) -> str:
    """The shortest cyclic pattern that reproduces ``letters`` (one per layer) exactly; a list with no shorter
    period is its own pattern (one letter per layer)."""
    return "".join(letters[:_period(letters)])


def fit_ffn(is_moe: list, reader: Reader, key: str) -> tuple[int, int]:
    """(first_num_dense_layers k, interleave_moe_layer_step s) with layer l MoE iff l >= k and (l+1) % s == 0."""
    n = len(is_moe)
    if not any(is_moe):
        return n, 1
    for s in range(1, n + 1):
        for k in range(0, n + 1):
            if all(is_moe[l] == (l >= k and (l + 1) % s == 0) for l in range(n)):
                return k, s
    layers = [l for l in range(n) if is_moe[l]]
    raise reader.fail(key, f"MoE layers {layers} cannot be expressed as a dense prefix followed by every s-th "
                           "layer ((l+1) % s == 0), which is all the schema (first_num_dense_layers, "
                           "interleave_moe_layer_step) can express")


def fit_index(full: list, reader: Reader, key: str, prefer: tuple[int, int] | None) -> tuple[int, int]:
    """(index_topk_freq, index_skip_offset) reproducing ``full`` (True: the layer runs its own indexer)."""
    n = len(full)
    candidates = [prefer] if prefer else []
    candidates += [(f, o) for f in range(1, n + 1) for o in range(0, n + 1)]
    for f, o in candidates:
        if f >= 1 and o >= 0 and all(full[i] == computes_index(i + 1, f, o) for i in range(n)):
            return f, o
    shown = "".join("F" if x else "S" for x in full)
    raise reader.fail(key, f"the per-layer indexer schedule {shown!r} (F computes, S reuses) cannot be expressed "
                           "by the schema's rule (layer l, 1-based, computes iff max(l - max(offset, 1), 0) % "
                           "freq == 0)")


# An activation name of a Hugging Face file -> the schema's name for it (maxflops.schema.ACTIVATION_NAMES). The
# names are transformers 5.24's ACT2CLS (what its models build from hidden_act), each gelu variant read as gelu;
# 'swiglu' and 'geglu' are names a model type's own code gives its gated FFN, 'situ' Kimi K3's (its remote code and
# Megatron-Bridge's port: an elementwise sigmoid-tanh unit). Any other name is refused (transformers
# has no such activation): every name keeps the FFN's matmuls, so only the name is checked.
ACTIVATIONS = {
    "gelu": "gelu", "gelu_10": "gelu", "gelu_accurate": "gelu", "gelu_fast": "gelu", "gelu_new": "gelu",
    "gelu_python": "gelu", "gelu_python_tanh": "gelu", "gelu_pytorch_tanh": "gelu", "quick_gelu": "gelu",
    "hardswish": "hard_swish", "laplace": "laplace", "leaky_relu": "leaky_relu", "linear": "linear", "mish": "mish",
    "prelu": "prelu", "relu": "relu", "relu2": "relu2", "relu6": "relu6", "sigmoid": "sigmoid", "silu": "silu",
    "sqrtsoftplus": "sqrtsoftplus", "swish": "silu", "tanh": "tanh", "xielu": "xielu",
    "swiglu": "silu", "geglu": "gelu", "situ": "situ",
}


UNKNOWN_CHOICES = ("error", "report")


def refuse_unknown(path, data: Mapping[str, Any], ignored: Mapping[str, str], known, unknown: str,
                   real: Callable[[], Any] | None = None) -> None:
    """The loader contract: every key of a file is read, known to have no FLOPs effect, or an error. A key the
    loader does not understand is a ValueError naming it and its value (with the closest known key, unless the key
    is itself a real key of the format: ``real()`` gives those, and one real key is no typo of another), unless
    ``unknown='report'`` asks to list it in ``Loaded.ignored`` instead."""
    if unknown not in UNKNOWN_CHOICES:
        raise ValueError(f"unknown={unknown!r} is not one of {', '.join(map(repr, UNKNOWN_CHOICES))}")
    strange = [k for k, why in ignored.items() if why == NOT_UNDERSTOOD]
    if not strange or unknown == "report":
        return
    import difflib

    parts = []
    for name in strange:
        head, _, leaf = name.rpartition(".")
        value = data.get(head, {}).get(leaf) if head and isinstance(data.get(head), dict) else data.get(name)
        is_real = real is not None and leaf in real()
        match = None if is_real else difflib.get_close_matches(leaf, [k for k in known if k != leaf], n=1,
                                                               cutoff=0.75)
        hint = f" (did you mean {match[0]!r}?)" if match else ""  # (a key another model type reads is no hint)
        parts.append(f"{name!r} = {value!r}{hint}")
    raise ValueError(f"{path}: key{'s' if len(parts) > 1 else ''} not understood: {'; '.join(parts)}. A key "
                     "that could change FLOPs is never dropped silently: fix its name, or pass "
                     "unknown='report' (command line: --unknown=report) to count without it")


def validate_overrides(path, overrides: Mapping[str, Any], sources: Mapping[str, str] | None = None) -> None:
    """The overrides must make a valid maxflops config on their own (schema defaults for the rest). An error names
    the file's key that sets the schema key (``sources``: schema key -> file key, where the names differ) beside
    it."""
    try:
        _config.resolve(overrides)
    except ValueError as e:
        msg = str(e)
        prefix = "config key "
        if msg.startswith(prefix):
            key = msg[len(prefix):].split(":", 1)[0].strip("'\"")
            source = (sources or {}).get(key, key)
            if source and source != key:
                msg = f"key {source!r} (maxflops' {key!r}):{msg.split(':', 1)[1]}"
        where = "the file gives" if isinstance(path, pathlib.Path) else "the keys given make"
        raise ValueError(f"{path}: {where} an invalid model: {msg}") from None


