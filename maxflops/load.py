"""Loading a model: a built-in name, an ml_collections config file, a MaxText model YAML or a Hugging Face
``config.json`` (``load_config``, the public door). Finding the file and reading its format is the loaders' work
(``maxflops.loaders.discovery``, ``maxflops.loaders``); this module builds the config from what they read. It sits
above ``config`` (the schema) and ``loaders``."""

from __future__ import annotations

import pathlib
import warnings

from .config import explicit, as_dict, config_from
from .loaders import detect_and_load
from .loaders.discovery import available_models, config_file, file_model_name, is_foreign, run_config_file
from .loaders.reader import NOT_UNDERSTOOD


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
    if is_foreign(name_or_path):
        return _load_foreign(name_or_path, overrides, unknown)
    if unknown not in ("error", "report"):
        raise ValueError(f"load_config: unknown={unknown!r} is not 'error' or 'report'")
    path = config_file(name_or_path)
    return config_from(explicit({**as_dict(run_config_file(path)), **overrides}, given=overrides), given=overrides)


def _load_foreign(path: str, overrides, unknown: str):
    loaded = detect_and_load(path, unknown=unknown)
    strange = sorted(k for k, v in loaded.ignored.items() if v == NOT_UNDERSTOOD)
    if strange:  # only with unknown='report', the caller's explicit choice
        warnings.warn(f"{path}: keys not understood (counted without them): {', '.join(strange)}", stacklevel=3)
    # the file's own keys are not overrides
    return config_from({"model_name": file_model_name(path), **loaded.overrides, **overrides}, given=overrides)
