"""Finding a model by its name or its path: the built-in configs (``config_dir``, ``available_models``,
``model_path``), what a name or a path given to ``maxflops.load_config`` names (``is_foreign``, ``config_file``,
``file_model_name``), and running an ml_collections config file (``run_config_file``). The foreign formats (a
MaxText model YAML, a Hugging Face ``config.json``) are read by the other loaders; ``maxflops.load`` builds the
config from what was found."""

from __future__ import annotations

import difflib
import importlib.util
import os
import pathlib

CONFIG_DIR_ENV = "MAXFLOPS_CONFIG_DIR"
# the extensions of the files another project's code reads (a MaxText model YAML, a Hugging Face config.json)
FILE_SUFFIXES = (".yml", ".yaml", ".json")


def config_dir() -> pathlib.Path:
    """The built-in model configs: $MAXFLOPS_CONFIG_DIR, else the repository's configs/ (a source checkout or an
    editable install), else the copy a wheel installs as maxflops/configs."""
    env = os.environ.get(CONFIG_DIR_ENV)
    if env:
        return pathlib.Path(env)
    package = pathlib.Path(__file__).resolve().parents[1]  # maxflops/
    source = package.parent / "configs"
    return source if source.is_dir() else package / "configs"


def available_models() -> list[str]:
    """The built-in model names (the files of ``configs/``), sorted: each is a ``load_config`` name and a
    ``--model=NAME``."""
    d = config_dir()
    return sorted(p.stem for p in d.glob("*.py") if not p.name.startswith("_")) if d.is_dir() else []


def model_path(name: str) -> pathlib.Path:
    """The config file of a built-in model, or a ValueError that suggests the closest name."""
    path = config_dir() / f"{name}.py"
    if not path.is_file():
        names = available_models()
        match = difflib.get_close_matches(name, names, n=1, cutoff=0.4)
        hint = f" (did you mean {match[0]!r}?)" if match else ""
        raise ValueError(f"unknown model {name!r}{hint}; known: {', '.join(names)}")
    return path


def is_foreign(name_or_path: str) -> bool:
    """Whether ``name_or_path`` names a file in another project's format (by its extension, ``FILE_SUFFIXES``)."""
    return pathlib.Path(name_or_path).suffix.lower() in FILE_SUFFIXES


def config_file(name_or_path: str) -> pathlib.Path:
    """The ml_collections config file a built-in name or a ``.py`` path names; a ValueError for a path that does
    not exist, a file of another extension, or an unknown name."""
    path = pathlib.Path(name_or_path)
    suffix = path.suffix.lower()
    if suffix == ".py":
        if not path.is_file():
            raise ValueError(f"config file {name_or_path!r} does not exist")
        return path
    if path.is_file() and not (config_dir() / f"{name_or_path}.py").is_file():
        raise ValueError(f"{name_or_path}: cannot tell the format from the extension {suffix or '(none)'!r}: use .py "
                         "for an ml_collections config file, .yml or .yaml for a MaxText model YAML, .json for a "
                         "Hugging Face config.json")
    if "/" in name_or_path or "\\" in name_or_path:
        raise ValueError(f"{name_or_path}: no such file (and a model name has no '/'; see maxflops --list)")
    return model_path(name_or_path)


def run_config_file(path: pathlib.Path):
    """The ``get_config()`` of an ml_collections config file (the file is run as a module)."""
    spec = importlib.util.spec_from_file_location(f"maxflops_config_{path.stem.replace('.', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, "get_config"):
        raise ValueError(f"config file {str(path)!r} has no get_config()")
    return module.get_config()


def file_model_name(path: str) -> str:
    """The model name a foreign file gives: its stem, or for a ``config.json`` its folder's name."""
    p = pathlib.Path(path)
    return (p.stem if p.name != "config.json" else p.parent.name) or "model"
