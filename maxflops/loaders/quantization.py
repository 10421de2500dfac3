"""A Hugging Face file's ``quantization_config`` read into decode weight bytes (``weight_bytes_rules``).

FLOPs do not move with a weight's storage; decode traffic does. Each format gives bytes per element with its block or
group scales (exact fractions: the scale's bytes over the elements it scales):

- ``fp8`` (transformers' fine-grained FP8, DeepSeek's checkpoints): one byte, and a scale per
  ``weight_block_size`` block (4 bytes, float32; 1 byte with ``scale_fmt: ue8m0``): 1 + 4/16384 for 128 x 128;
- ``mxfp4`` (gpt-oss): the experts at half a byte and a one-byte scale per 32 elements, 17/32; the quantizer
  touches the experts alone;
- ``compressed-tensors`` / ModelOpt ``config_groups`` (NVFP4, int4, FP8): ``num_bits / 8`` and, with a
  ``group_size``, one scale per group (an FP4 float's: one byte; an int's: two, bfloat16; ``scale_dtype`` when
  given), plus a packed zero point for an asymmetric int;
- ``gptq`` / ``awq``: ``bits / 8``, a float16 scale and a packed zero point per ``group_size``;
- ``bitsandbytes``: 4-bit at half a byte and a float32 absmax per 64 (double quantization: a byte per 64 and a
  float32 per 256 blocks), 8-bit at one byte.

What a quantizer converts: the decoder's Linear layers and its experts (``nn.Embedding`` never, the MoE routers
kept at ``weight_bytes``: transformers' routers are not the Linear layers these quantizers replace, and the
checkpoints that quantize theirs are not read here). The output head as transformers' quantizers decide it
(``get_modules_to_not_convert``): bitsandbytes and fine-grained FP8 keep it when the file gives no skip list
(``llm_int8_skip_modules`` / ``modules_to_not_convert`` absent or null; an empty list converts it), AWQ always keeps
it (its default skips are added to the file's), GPTQ never converts it (optimum replaces the Linear layers of the
decoder blocks alone, those of ``modules_in_block_to_quantize`` where given); compressed-tensors and ModelOpt convert
what their targets name. tests/loaders/test_quantization.py holds this to transformers' quantizers
(tests/fixtures/hf_quant). ``modules_to_not_convert``, ``ignore`` and
``exclude_modules`` name the modules kept unquantized, matched as transformers matches them (a regex from the start
up to a module boundary, or a suffix), as compressed-tensors does (``re:`` regexes) and as globs (``*.attn.*``),
against the module names a checkpoint's layer carries in transformers' and in the authors' own naming. A pattern that
names only a small module of a group (a norm, a bias, the indexer's head weights) leaves the group's matrices as
they are. Per-tensor and per-channel scales are not counted (a few bytes per matrix or per row).
"""

from __future__ import annotations

import fnmatch
import functools
import re
from fractions import Fraction

# Module names (past the layer number) of each weight group's matrices: transformers' names and the authors' own
# (DeepSeek's reference code: attn / ffn / wq_a ...); the routers are never converted.
_LAYER_NAMES = {
    "attention": ("self_attn.q_proj", "self_attn.k_proj", "self_attn.o_proj", "self_attn.q_a_proj",
                  "self_attn.q_b_proj", "self_attn.kv_a_proj_with_mqa", "self_attn.kv_b_proj",
                  "linear_attn.in_proj_qkv", "linear_attn.out_proj", "linear_attn.in_proj_qkvz",
                  "mixer.in_proj", "mixer.out_proj", "attn.wq_a", "attn.wq_b", "attn.wkv", "attn.wo_a", "attn.wo_b"),
    "mlp": ("mlp.gate_proj", "mlp.up_proj", "mlp.down_proj", "ffn.w1", "ffn.w2", "ffn.w3"),
    "moe_routed": ("mlp.experts", "mlp.experts.0.gate_proj", "mlp.experts.0.down_proj", "block_sparse_moe.experts",
                   "block_sparse_moe.experts.0.w1", "ffn.experts", "ffn.experts.0.w1", "feed_forward.experts",
                   "experts"),
    "moe_shared": ("mlp.shared_expert.gate_proj", "mlp.shared_expert.down_proj", "mlp.shared_experts.gate_proj",
                   "mlp.shared_experts.down_proj", "ffn.shared_experts.w1", "ffn.shared_experts.w2"),
}
_PREFIXES = ("model.layers.", "model.language_model.layers.", "language_model.model.layers.", "layers.")
_HEAD = ("lm_head", "head", "language_model.lm_head", "model.lm_head")


def _matches(pattern: str, name: str, transformers: bool) -> bool:
    """``transformers``: as its quantizers read ``modules_to_not_convert`` (a regex from the start up to a module
    boundary, or a suffix); else as compressed-tensors and ModelOpt read ``ignore`` and targets (``re:`` a regex from
    the start, else a glob, an exact name included)."""
    return _matcher((pattern,), transformers)(name)


def _valid(regex: str) -> bool:
    try:
        re.compile(regex)
        return True
    except re.error:
        return False


_NAME = re.compile(r"[A-Za-z0-9_.]+")


def _trie(words, literal: bool = False) -> str:
    """One regex matching exactly the regexes ``words`` (letters, digits, '_' and '.', the one metacharacter: any
    character; ``literal``: any strings, matched as they are), their common prefixes shared, so that a name is
    matched in one walk (a published skip list names hundreds of modules)."""
    tree: dict = {}
    for w in words:
        node = tree
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node) -> str:
        alts = ["" if ch == "" else (re.escape(ch) if literal else ch) + emit(child)
                for ch, child in sorted(node.items())]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
    return emit(tree)


@functools.lru_cache(maxsize=4096)
def _matcher(patterns: tuple, transformers: bool):
    """One test for a whole list of patterns (a published skip list names thousands of modules): the suffixes in a
    set, the regexes and globs in one compiled alternation each, every pattern read as ``_matches`` says."""
    regexes = [p[3:] for p in patterns if p.startswith("re:")]
    plain = [p for p in patterns if not p.startswith("re:")]
    # a suffix: the reversed name against a trie of the reversed patterns
    suffix = re.compile(_trie([p[::-1] for p in plain], literal=True)) if transformers and plain else None
    if transformers:  # a regex from the start up to a module boundary (a pattern that is no regex: only a suffix)
        names = [p for p in plain if _NAME.fullmatch(p)]  # module names: one trie, '.' still any character
        if names:
            regexes.append(rf"(?:{_trie(names)})(?:(?<=\.)|(?=\.|$))")
        regexes += [rf"(?:{p})(?:(?<=\.)|(?=\.|$))" for p in plain if not _NAME.fullmatch(p) and _valid(p)]
    else:  # globs, an exact name included
        regexes += [fnmatch.translate(p) for p in plain]
    regexes = [x for x in regexes if _valid(x)] if not all(map(_valid, regexes)) else regexes
    combined = re.compile("|".join(f"(?:{x})" for x in regexes)) if regexes else None

    def test(name: str) -> bool:
        if suffix is not None and suffix.match(name[::-1]):
            return True
        return combined is not None and combined.match(name) is not None

    # the same test over many names (a published skip list is tested against every module name of every layer):
    # the compiled matchers bound once, no call per name
    by_suffix = suffix.match if suffix is not None else None
    from_start = combined.match if combined is not None else None

    def any_of(names) -> bool:
        for name in names:
            if by_suffix is not None and by_suffix(name[::-1]) or from_start is not None and from_start(name):
                return True
        return False
    test.any_of = any_of
    return test


def _named(patterns, names, transformers=False) -> bool:
    return _matcher(tuple(patterns), transformers).any_of(names)


def _layer_names(group: str, layer: int) -> tuple:
    return tuple(f"{pre}{layer}.{n}" for pre in _PREFIXES for n in _LAYER_NAMES[group])


class Format:
    """One storage format: bytes per element, the groups it converts (``targets``: only the modules they name),
    and the modules it leaves alone (``skip``)."""

    def __init__(self, size: Fraction, groups=("attention", "mlp", "moe_routed", "moe_shared"), targets=None, skip=(),
                 transformers=False, head=True):
        self.size, self.groups, self.targets, self.skip = size, groups, targets, tuple(skip)
        self.transformers, self.head = transformers, head  # how skip reads; whether it converts an untargeted head

    def skips(self, names: tuple) -> bool:
        matcher = self.__dict__.get("_skip_matcher")
        if matcher is None:  # (looked up once: the cache key hashes the whole list, thousands of names)
            matcher = self._skip_matcher = _matcher(self.skip, self.transformers)
        return matcher.any_of(names)

    def converts(self, group: str, names: tuple) -> bool:
        return group in self.groups and (self.targets is None or _named(self.targets, names)) and \
            not self.skips(names)


def _compressed_tensors_format(group: dict, skip) -> Format | None:
    w = group.get("weights") or {}
    bits = w.get("num_bits")
    if not isinstance(bits, int):
        return None
    size = Fraction(bits, 8)
    g = w.get("group_size")
    if isinstance(g, int) and g > 0:
        dtype = str(w.get("scale_dtype") or "")
        scale = 1 if "int8" in dtype or "uint8" in dtype or "float8" in dtype else \
            1 if w.get("type") == "float" and bits == 4 else 2
        zero = 0 if w.get("symmetric", True) else Fraction(bits, 8)
        size += (scale + zero) / Fraction(g)
    targets = tuple(t for t in group.get("targets") or () if t != "Linear")
    return Format(size, targets=targets or None, skip=skip)


# ModelOpt's per-module algorithms (``quantized_layers``): bytes per element
_MODELOPT = {"FP8": Fraction(1), "NVFP4": Fraction(9, 16), "W4A16_NVFP4": Fraction(9, 16),
             "W4A8_NVFP4_FP8": Fraction(9, 16)}  # NVFP4: half a byte and a one-byte scale per 16


def formats(quant: dict, expert_dtype=None) -> tuple:
    """The formats of a quantization_config in order, a later one over an earlier one where both convert a module;
    () for a method not read here."""
    method = str(quant.get("quant_method") or "").lower()
    out = []
    if method == "fp8":
        block = quant.get("weight_block_size")
        scale = 1 if quant.get("scale_fmt") == "ue8m0" else 4
        skip = quant.get("modules_to_not_convert")
        # transformers' FP8 quantizer keeps the output head when the file names no skip list (an empty list is one)
        common = dict(skip=skip or (), transformers=True, head=skip is not None)
        if isinstance(block, (list, tuple)) and len(block) == 2:
            out.append(Format(1 + Fraction(scale, block[0] * block[1]), **common))
        else:
            out.append(Format(Fraction(1), **common))
        if expert_dtype == "fp4":  # DeepSeek-V4: the experts in FP4 (E2M1), a one-byte scale per 32
            out.append(Format(Fraction(17, 32), groups=("moe_routed",)))
    elif method == "mxfp4":
        out.append(Format(Fraction(17, 32), groups=("moe_routed",), skip=quant.get("modules_to_not_convert") or (),
                          transformers=True))
    elif method in ("gptq", "awq"):
        bits, g = quant.get("bits", 4), quant.get("group_size", 128)
        if not isinstance(bits, int) or isinstance(bits, bool) or not 1 <= bits <= 8:
            raise ValueError(f"quantization_config 'bits': {bits!r}: expected an integer number of bits (2, 3, 4 "
                             f"or 8) for quant_method {method!r}")
        size = Fraction(bits, 8) + (Fraction(2 + Fraction(bits, 8), g) if isinstance(g, int) and g > 0 else 0)
        if method == "awq":  # the AWQ quantizer always adds the default skips: the output head is kept
            out.append(Format(size, skip=quant.get("modules_to_not_convert") or (), transformers=True, head=False))
        else:  # optimum converts the Linear layers of the decoder blocks alone (the head never), those of
            # modules_in_block_to_quantize only where given (a name matched as its suffix)
            keep = quant.get("modules_in_block_to_quantize")
            if keep is not None and not (isinstance(keep, list) and all(
                    isinstance(part, list) and all(isinstance(n, str) for n in part) for part in keep)):
                raise ValueError(f"quantization_config 'modules_in_block_to_quantize': {keep!r}: expected a list of "
                                 "lists of module names, as optimum reads it")
            targets = tuple("*" + name for part in keep for name in part) if keep else None
            out.append(Format(size, targets=targets, head=False))
    elif method == "bitsandbytes":
        skip = quant.get("llm_int8_skip_modules")
        # the default skips (the output head) only where the file names no skip list
        common = dict(skip=skip or (), transformers=True, head=skip is not None)
        if quant.get("load_in_4bit"):
            size = Fraction(1, 2) + (Fraction(1, 64) + Fraction(4, 64 * 256) if quant.get("bnb_4bit_use_double_quant")
                                     else Fraction(4, 64))
            out.append(Format(size, **common))
        elif quant.get("load_in_8bit"):
            out.append(Format(Fraction(1), **common))
    layers = quant.get("quantized_layers")
    if isinstance(layers, dict) and layers:  # ModelOpt names each converted module (once) and its algorithm
        by_algo: dict = {}
        for name, spec in layers.items():
            algo = spec.get("quant_algo") if isinstance(spec, dict) else None
            if algo not in _MODELOPT:
                return ()
            by_algo.setdefault(algo, []).append(name)
        for algo, names in by_algo.items():  # one format per algorithm, its modules the targets
            out.append(Format(_MODELOPT[algo], groups=("attention", "mlp", "moe_routed", "moe_shared", "logits"),
                              targets=tuple(names)))
        return tuple(out)
    if isinstance(quant.get("config_groups"), dict):
        skip = quant.get("ignore") or quant.get("exclude_modules") or ()
        for group in quant["config_groups"].values():
            f = _compressed_tensors_format(group, skip) if isinstance(group, dict) else None
            if f is None:
                return ()
            out.append(f)
    return tuple(out)


def _size(fmts, group: str, names: tuple):
    size = None
    for f in fmts:
        if f.converts(group, names):
            size = f.size
    return size


def _head(fmts):
    """The output head's size: a format converting every Linear, or one naming the head, unless it skips it."""
    size = None
    for f in fmts:
        named = f.head and (f.targets is None and "attention" in f.groups or
                            f.targets is not None and _named(f.targets, _HEAD))
        if named and not f.skips(_HEAD):
            size = f.size
    return size


def weight_rules(quant: dict, layers: int, expert_dtype=None) -> tuple:
    """The weight_bytes_rules of a file's quantization_config over ``layers`` decoder layers (the report prints
    them; () where every weight is kept unquantized); None for a method not read here."""
    fmts = formats(quant, expert_dtype)
    if not fmts:
        return None
    rules = []
    for group in _LAYER_NAMES:
        rules += _runs(group, [_size(fmts, group, _layer_names(group, layer)) for layer in range(layers)])
    head = _head(fmts)
    if head is not None:
        rules.append(f"logits={head}")
    return tuple(rules)


def _runs(group: str, sizes: list) -> list:
    """Rules for one group's per-layer sizes (None: unquantized): one rule per run of equal sizes."""
    if sizes and all(s == sizes[0] for s in sizes):
        return [] if sizes[0] is None else [f"{group}={sizes[0]}"]
    out, start = [], 0
    for i in range(1, len(sizes) + 1):
        if i == len(sizes) or sizes[i] != sizes[start]:
            if sizes[start] is not None:
                span = str(start) if i - 1 == start else f"{start}-{i - 1}"
                out.append(f"{group}@{span}={sizes[start]}")
            start = i
    return out


__all__ = ["weight_rules", "formats"]
