"""Loading a model: a built-in name, an ml_collections config file, a MaxText model YAML or a Hugging Face
``config.json``. This module sits above ``config`` (the schema) and ``loaders`` (the foreign formats)."""

from __future__ import annotations

import importlib.util
import pathlib
import warnings

from .config import explicit, as_dict, available_models, config_dir, config_from, model_path
from .reader import NOT_UNDERSTOOD


def _load_file(path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(f"maxflops_config_{path.stem.replace('.', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, "get_config"):
        raise ValueError(f"config file {str(path)!r} has no get_config()")
    return module.get_config()


FILE_SUFFIXES = (".yml", ".yaml", ".json")


def load_config(name_or_path, *, unknown: str = "error", **overrides):
    """Load a model by name (a file in ``configs/``), a path (``str`` or ``pathlib.Path``) to an ml_collections
    config file (``.py`` with ``get_config()``), a MaxText model YAML (``.yml``/``.yaml``) or a Hugging Face
    ``config.json`` (``.json``).

    ``overrides`` replace keys of the loaded config; the result is validated and locked. Every key of a YAML or
    JSON file is read, known to have no FLOPs effect, or an error: a key the loader does not understand is a
    ValueError naming it (``unknown='report'`` counts without it and warns). Keys the file does not set take the
    defaults of the code that reads such files (MaxText's ``base.yml``, the ``transformers`` config class).
    """
    if isinstance(name_or_path, pathlib.PurePath):
        name_or_path = str(name_or_path)
    if not isinstance(name_or_path, str) or not name_or_path:
        raise ValueError(f"load_config: expected a model name ({', '.join(available_models()[:3])}, ...) or a "
                         f"path to a .py, .yml, .yaml or .json file, got {name_or_path!r}")
    path = pathlib.Path(name_or_path)
    suffix = path.suffix.lower()
    if suffix in FILE_SUFFIXES:
        return _load_foreign(name_or_path, overrides, unknown)
    if unknown not in ("error", "report"):
        raise ValueError(f"load_config: unknown={unknown!r} is not 'error' or 'report'")
    if suffix == ".py":
        if not path.is_file():
            raise ValueError(f"config file {name_or_path!r} does not exist")
    elif path.is_file() and not (config_dir() / f"{name_or_path}.py").is_file():
        raise ValueError(f"{name_or_path}: cannot tell the format from the extension {suffix or '(none)'!r}: use .py "
                         "for an ml_collections config file, .yml or .yaml for a MaxText model YAML, .json for a "
                         "Hugging Face config.json")
    elif "/" in name_or_path or "\\" in name_or_path:
        raise ValueError(f"{name_or_path}: no such file (and a model name has no '/'; see maxflops --list)")
    else:
        path = model_path(name_or_path)
    return config_from(explicit({**as_dict(_load_file(path)), **overrides}, given=overrides), given=overrides)


def _load_foreign(path: str, overrides, unknown: str):
    from .loaders import detect_and_load

    loaded = detect_and_load(path, unknown=unknown)
    strange = sorted(k for k, v in loaded.ignored.items() if v == NOT_UNDERSTOOD)
    if strange:  # only with unknown='report', the caller's explicit choice
        warnings.warn(f"{path}: keys not understood (counted without them): {', '.join(strange)}", stacklevel=3)
    name = pathlib.Path(path).stem if pathlib.Path(path).name != "config.json" else pathlib.Path(path).parent.name
    # the file's own keys are not overrides
    return config_from({"model_name": name or "model", **loaded.overrides, **overrides}, given=overrides)
