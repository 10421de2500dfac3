"""Command line: ``python -m maxflops [--model=NAME | --config=path.py] [--config.key=value ...] [--json]``.

``--model=NAME`` is shorthand for ``--config=configs/NAME.py``; ``--config.key=value`` overrides any schema key
(ml_collections config_flags). Bad input prints one line and exits with status 2.
"""

from __future__ import annotations

import json
import sys

DEFAULT_MODEL = "deepseek3.2-671b"

USAGE = """usage: python -m maxflops [--model=NAME | --config=PATH.py] [--config.KEY=VALUE ...] [--json]
       python -m maxflops --list        (known models)
  e.g. python -m maxflops --model=glm5 --config.max_target_length=32768 --config.convention=megatron"""


class UsageError(Exception):
    pass


def _rewrite_model(argv: list[str]) -> list[str]:
    """Turn ``--model=NAME`` / ``--model NAME`` into ``--config=<configs>/NAME.py``."""
    from .config import available_models, config_dir

    out, model, i = [argv[0]], None, 1
    while i < len(argv):
        a = argv[i]
        if a == "--model":
            if i + 1 >= len(argv):
                raise UsageError("--model needs a value")
            model, i = argv[i + 1], i + 2
            continue
        if a.startswith("--model="):
            model = a.split("=", 1)[1]
        else:
            _check_override(a)
            out.append(a)
        i += 1
    has_config = any(a == "--config" or a.startswith("--config=") for a in out)
    if model is not None and has_config:
        raise UsageError("give --model or --config, not both")
    if not has_config:
        model = model or DEFAULT_MODEL
        path = config_dir() / f"{model}.py"
        if not path.is_file():
            import difflib

            names = available_models()
            match = difflib.get_close_matches(model, names, n=1, cutoff=0.4)
            hint = f" (did you mean {match[0]!r}?)" if match else ""
            raise UsageError(f"--model: unknown model {model!r}{hint}; known: {', '.join(names)}")
        out.insert(1, f"--config={path}")
    return out


def _check_override(arg: str) -> None:
    """Validate ``--config.KEY=VALUE`` against the schema before absl sees it, for a one-line error."""
    from .config import SCHEMA, _closest, _coerce

    if not arg.startswith("--config."):
        return
    key, _, value = arg[len("--config."):].partition("=")
    if key not in SCHEMA:
        raise UsageError(f"unknown config key {key!r}{_closest(key)}")
    if value:
        _coerce(key, value)


def _root_cause(e: BaseException) -> BaseException:
    while True:
        nxt = e.__cause__ or e.__context__
        if nxt is None or isinstance(e, ValueError):
            return e
        e = nxt


def _parse(argv: list[str]):
    from absl import flags
    from ml_collections import config_flags

    fv = flags.FlagValues()
    config_flags.DEFINE_config_file("config", None, "ml_collections config file (get_config()).",
                                    flag_values=fv, lock_config=True, sys_argv=argv)
    flags.DEFINE_boolean("json", False, "Print the breakdown as JSON.", flag_values=fv)
    flags.DEFINE_boolean("list", False, "List the built-in models.", flag_values=fv)
    try:
        rest = fv(argv)
    except flags.Error as e:
        raise UsageError(str(_root_cause(e)).splitlines()[0]) from None
    if len(rest) > 1:
        raise UsageError(f"unexpected argument {rest[1]!r}")
    return fv


def main(argv: list[str] | None = None) -> int:
    from .account import count
    from .config import available_models, validate
    from .report import text_report

    argv = list(sys.argv if argv is None else argv)
    if any(a in ("-h", "--help", "--helpfull") for a in argv[1:]):
        print(USAGE)
        return 0
    try:
        if "--list" in argv[1:]:
            print("\n".join(available_models()))
            return 0
        fv = _parse(_rewrite_model(argv))
        cfg = fv.config
        b = count(cfg)
        resolved = validate(cfg)
    except (UsageError, ValueError, TypeError) as e:
        print(f"maxflops: error: {_root_cause(e)}", file=sys.stderr)
        return 2
    if fv.json:
        print(json.dumps({"config": resolved, **b.to_dict()}, indent=1, default=list))
    else:
        print(text_report(b, resolved))
    return 0


def run() -> None:
    sys.exit(main())
