"""Loaders: a MaxText model YAML or a Hugging Face ``config.json`` -> maxflops schema overrides.

    import maxflops
    from maxflops import loaders

    loaded = loaders.detect_and_load("config.json")          # or a MaxText configs/models/*.yml
    cfg = maxflops.model_config(**loaded.overrides, model_name="mine", max_target_length=8192)
    loaded.ignored                                           # {file key: why it was not used}

Every key of the file is either used (it sets or checks a schema key) or reported in ``Loaded.ignored`` with a
reason, never silently dropped. Reasons start with one of:

- ``"no FLOPs effect"``: the key changes no matmul (RoPE, norms, dtypes, dropout, token ids, routing
  restrictions that keep the top-k count, tied embeddings, ...);
- ``"unused"``: the key has a FLOPs meaning, but not in this model (a dense width when every layer is MoE, a window
  size with no sliding layers, ...);
- ``"superseded"``: the file says the same thing twice and the other key wins (as it does in the model's code);
- ``"not counted"``: the key belongs to a part maxflops does not count (the vision encoder of a multimodal model);
- ``"not modelled"``: the key has a FLOPs effect maxflops has no knob for;
- ``"not understood"``: the loader does not know the key. Only with ``unknown='report'``: by default such a key
  is a ValueError naming it and its value (a misspelled key must not let a default stand in for it).

One used key is reported too, because the schema expresses it another way: a Qwen shared expert wider than
``moe_intermediate_size`` (``"used as k shared experts ..."``).

Keys absent from the file that the loader needed take the default of the code that reads such files
(MaxText's ``base.yml``, or the ``transformers`` config class of the model type) and are listed in
``Loaded.defaults`` as {key: value used}.

Per-layer lists (HF ``layer_types``, ``mlp_layer_types``, ``moe_layers``, ``no_rope_layers``, ``indexer_types``, ...)
are first expanded with the rules of the model's own code, then fitted to the schema's cyclic knobs
(``attention_layer_pattern``, ``first_num_dense_layers`` + ``interleave_moe_layer_step``, ``index_topk_freq`` +
``index_skip_offset``) so that the schema reproduces the list exactly; a list that cannot be reproduced is a
ValueError naming its key.

Bad input (a missing file, invalid YAML or JSON, an unsupported model type or decoder block, a value of the wrong
type, a missing required key) raises ValueError naming the file, the key and the value.

Plain Python: PyYAML and json are imported inside the functions; jax and numpy are never imported. The two
houses (``maxflops.loaders.hf``, ``maxflops.loaders.maxtext``) are imported when first used, so that
``import maxflops`` (which finds shipped models through ``maxflops.loaders.discovery``) stays light; their names here
(``load_hf_config``, ``load_maxtext_yaml``, ``MAXTEXT_BASE_DEFAULTS``, ``MAXTEXT_DECODER_BLOCKS``, ``HF_MODEL_TYPES``)
are read from them when asked.
"""

from __future__ import annotations

import pathlib

from .reader import NO_EFFECT, NOT_UNDERSTOOD, Loaded, read_file  # noqa: F401 (read_file: used by the tests)

__all__ = ["Loaded", "load_maxtext_yaml", "load_hf_config", "detect_and_load", "NO_EFFECT", "NOT_UNDERSTOOD",
           "MAXTEXT_BASE_DEFAULTS", "MAXTEXT_DECODER_BLOCKS", "HF_MODEL_TYPES"]

def detect_and_load(path, *, unknown: str = "error") -> Loaded:
    """By extension: ``.yml`` / ``.yaml`` -> load_maxtext_yaml, ``.json`` -> load_hf_config."""
    suffix = pathlib.Path(path).suffix.lower()
    if suffix in (".yml", ".yaml"):
        from .maxtext.model_yaml import load_maxtext_yaml

        return load_maxtext_yaml(path, unknown=unknown)
    if suffix == ".json":
        from .hf import load_hf_config

        return load_hf_config(path, unknown=unknown)
    raise ValueError(f"{path}: cannot tell the format from the extension {suffix or '(none)'!r}: use .yml or "
                     ".yaml for a MaxText model YAML, .json for a Hugging Face config.json")


def __getattr__(attr):
    """The houses' names, from their modules when first asked (see the module docstring)."""
    if attr == "HF_MODEL_TYPES":  # every model type the Hugging Face house reads (listed when asked)
        from .hf import model_types

        return model_types()
    if attr == "load_hf_config":
        from .hf import load_hf_config

        return load_hf_config
    if attr in ("load_maxtext_yaml", "MAXTEXT_BASE_DEFAULTS", "MAXTEXT_DECODER_BLOCKS"):
        from .maxtext import model_yaml

        return getattr(model_yaml, attr)
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
