"""Loading a model: a built-in name, an ml_collections config file, a MaxText model YAML or a Hugging Face
``config.json``. This module sits above ``config`` (the schema) and ``loaders`` (the foreign formats)."""

from __future__ import annotations

import importlib.util
import pathlib
import warnings

from .config import _explicit, as_dict, model_config, model_path


def _load_file(path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(f"maxflops_config_{path.stem.replace('.', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, "get_config"):
        raise ValueError(f"config file {str(path)!r} has no get_config()")
    return module.get_config()


FILE_SUFFIXES = (".yml", ".yaml", ".json")


def load_config(name_or_path: str, **overrides):
    """Load a model by name (a file in ``configs/``), a path to an ml_collections config file (``get_config()``),
    a MaxText model YAML (``.yml``/``.yaml``) or a Hugging Face ``config.json`` (``.json``).

    ``overrides`` replace keys of the loaded config; the result is validated and locked. Keys of a YAML or JSON
    file that the loader does not understand are reported with ``warnings.warn`` (``maxflops.loaders`` returns
    the full list with a reason per ignored key).
    """
    if str(name_or_path).lower().endswith(FILE_SUFFIXES):
        return _load_foreign(str(name_or_path), overrides)
    path = pathlib.Path(name_or_path)
    if not (name_or_path.endswith(".py") or path.is_file()):
        path = model_path(name_or_path)
    elif not path.is_file():
        raise ValueError(f"config file {name_or_path!r} does not exist")
    return model_config(**_explicit({**as_dict(_load_file(path)), **overrides}, given=overrides))


def _load_foreign(path: str, overrides):
    from .loaders import detect_and_load

    loaded = detect_and_load(path)
    unknown = {k: v for k, v in loaded.ignored.items() if v.startswith("not understood")}
    if unknown:
        warnings.warn(f"{path}: keys not understood (not counted): {', '.join(sorted(unknown))}", stacklevel=3)
    name = pathlib.Path(path).stem if pathlib.Path(path).name != "config.json" else pathlib.Path(path).parent.name
    return model_config(**{"model_name": name or "model", **loaded.overrides, **overrides})


