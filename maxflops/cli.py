"""Command line: ``python -m maxflops [--model=NAME | --config=path.py] [--config.key=value ...] [--json]``.

``--model=NAME`` is shorthand for ``--config=configs/NAME.py``; ``--config.key=value`` overrides any schema key
(ml_collections config_flags). Bad input prints one line and exits with status 2.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import sys
import warnings

DEFAULT_MODEL = "deepseek3.2-671b"

USAGE = """usage: python -m maxflops [--model=NAME|PATH.yml|PATH.json | --config=PATH.py] [--config.KEY=VALUE ...]
                          [--unknown=error|report] [--json]
       python -m maxflops sweep [--model=NAME ...] --lengths=L1,L2,... [--vary=KEY --values=V1,V2,...]
                                [--compare=KEY=VALUE[,KEY=VALUE] | --compare=MODEL[,MODEL...]
                                 | --conventions=NAME[,NAME...]] [--plot=out.png]
                                [--json]
       python -m maxflops sweep [--model=NAME ...] --lengths=L1,...|START:STOP:STEP --batches=B1,...|START:STOP:STEP
                                [--csv=grid.csv] [--plot=grid.png] [--json]      (a grid, exact and fast)
       python -m maxflops compare A B [--config.KEY=VALUE ...] [--unknown=error|report] [--json]
                                  (A, B: NAME or PATH[:KEY=VALUE,...])
       python -m maxflops splash-estimates NAME|PATH [--config.KEY=VALUE ...] [--tensor-shards=N] [--json]
                                  (MaxText's cost_estimate_flops_fwd / _bwd for a flash config, as YAML lines)
       python -m maxflops explain NAME|PATH [--config.KEY=VALUE ...] FIGURE [--devices=N] [--json]
                                  (the conventions that reproduce a published figure, to its printed rounding;
                                   FIGURE: --tflop-per-step=X | --tflops-per-s=X --tokens-per-s=Y
                                   | --mfu=PCT --peak-tflops=P --tokens-per-s=Y | --flops=F --tokens=N)
       python -m maxflops --list        (known models)
  --unknown=report (every subcommand): count a YAML or config.json without the keys it has that maxflops does not
                   understand, and say which (the default, error, refuses the file naming them)
  e.g. python -m maxflops --model=glm5 --config.max_target_length=32768 --config.convention=megatron
       python -m maxflops sweep --model=glm5 --lengths=4096,32768,131072,262144 --compare=use_sparse_indexer=false
       python -m maxflops sweep --model=deepseek4-284b --lengths=4096,131072,1048576 --compare=deepseek3.2-671b,glm5
       python -m maxflops sweep --model=glm5 --lengths=4096,131072 --conventions=maxtext,megatron_main,megatron_bridge
       python -m maxflops compare glm5 glm5:convention=megatron --config.max_target_length=131072"""


class UsageError(Exception):
    pass


def _rewrite_model(argv: list[str]) -> list[str]:
    """Turn ``--model=NAME`` / ``--model NAME`` into ``--config=<configs>/NAME.py`` (or a loaded YAML/JSON file),
    and ``--config.KEY VALUE`` into ``--config.KEY=VALUE``, checking each override against the schema."""
    from .loaders.discovery import model_path

    out, model, i = [argv[0]], None, 1
    while i < len(argv):
        a = argv[i]
        if a == "--model":
            if i + 1 >= len(argv):
                raise UsageError("--model needs a value")
            model, i = argv[i + 1], i + 2
            continue
        if a == "--config" and i + 1 < len(argv) and not argv[i + 1].startswith("-"):  # --config PATH
            a, i = f"--config={argv[i + 1]}", i + 1
        if a.startswith("--config.") and "=" not in a:
            if i + 1 >= len(argv):
                raise UsageError(f"{a} needs a value")
            a, i = f"{a}={argv[i + 1]}", i + 1
        if a.startswith("--model="):
            model = a.split("=", 1)[1]
        else:
            out.append(_check_override(a))
        i += 1
    has_config = any(a == "--config" or a.startswith("--config=") for a in out)
    for a in list(out):
        if not a.startswith("--config="):
            continue
        given = a.split("=", 1)[1]
        if not pathlib.Path(given).is_file():
            raise UsageError(f"--config: file {given!r} does not exist")
        suffix = pathlib.Path(given).suffix.lower()
        if suffix in (".yml", ".yaml", ".json"):  # a MaxText YAML or an HF config.json: as --model=PATH
            if model is not None:
                raise UsageError("give --model or --config, not both")
            out.remove(a)
            model, has_config = given, False
        elif suffix != ".py":
            raise UsageError(f"--config: {given!r}: expected an ml_collections config file (.py with get_config()), "
                             "a MaxText model YAML (.yml, .yaml) or a Hugging Face config.json (.json), got the "
                             f"extension {suffix or '(none)'!r}")
    if model is not None and has_config:
        raise UsageError("give --model or --config, not both")
    if model is not None and model.lower().endswith((".yml", ".yaml", ".json")):
        out.insert(1, f"--from_file={model}")  # a MaxText YAML or an HF config.json: see _parse
        return out
    if not has_config:
        try:
            path = model_path(model or DEFAULT_MODEL)
        except ValueError as e:
            raise UsageError(f"--model: {e}") from None
        out.insert(1, f"--config={path}")
    return out


def _check_override(arg: str) -> str:
    """Validate ``--config.KEY=VALUE`` against the schema before absl sees it (for a one-line error naming the
    key and the value); a list value ``a,b`` is rewritten as the tuple literal absl expects."""
    from .fields import Ints
    from .schema import SCHEMA, closest, coerce

    if not arg.startswith("--config."):
        return arg
    key, _, value = arg[len("--config."):].partition("=")
    if key not in SCHEMA:
        raise UsageError(f"unknown config key {key!r}{closest(key)}")
    if SCHEMA[key].kind in (tuple, Ints):
        text = value.strip().strip("()[]").replace("'", "").replace('"', "")
        return f"--config.{key}={tuple(coerce(key, text))!r}"
    coerce(key, value)
    return arg


def given_keys(argv: list[str]) -> tuple:
    """The schema keys set by ``--config.KEY=VALUE`` flags."""
    return tuple(a[len("--config."):].partition("=")[0] for a in argv if a.startswith("--config."))


def _root_cause(e: BaseException) -> BaseException:
    while True:
        nxt = e.__cause__ or e.__context__
        if nxt is None or isinstance(e, ValueError):
            return e
        e = nxt


def one_line(e: BaseException) -> str:
    """The root cause of an error, first line only (the CLI prints one line)."""
    return str(_root_cause(e)).strip().splitlines()[0] if str(_root_cause(e)).strip() else type(e).__name__


def _unknown(argv: list[str]) -> tuple[str, list[str]]:
    """``--unknown=error|report`` (how a YAML or JSON file's keys not understood are met; every subcommand takes it):
    (the choice, the other arguments)."""
    given = [a.split("=", 1)[1] for a in argv if a.startswith("--unknown=")]
    if given and given[-1] not in ("error", "report"):
        raise UsageError(f"--unknown={given[-1]}: give 'error' (the default) or 'report' (count without the keys "
                         "not understood, and say which)")
    return (given or ["error"])[-1], [a for a in argv if not a.startswith("--unknown=")]


def _parse(argv: list[str]):
    from absl import flags
    from ml_collections import config_flags

    fv = flags.FlagValues()
    foreign = [a.split("=", 1)[1] for a in argv if a.startswith("--from_file=")]
    unknown, argv = _unknown(argv)
    argv = [a for a in argv if not a.startswith("--from_file=")]
    if foreign:
        from .load import load_config

        config_flags.DEFINE_config_dict("config", load_config(foreign[0], unknown=unknown),
                                        "the loaded model", flag_values=fv, lock_config=True, sys_argv=argv)
    else:
        config_flags.DEFINE_config_file("config", None, "ml_collections config file (get_config()).",
                                        flag_values=fv, lock_config=True, sys_argv=argv)
    flags.DEFINE_boolean("json", False, "Print the breakdown as JSON.", flag_values=fv)
    flags.DEFINE_boolean("list", False, "List the built-in models.", flag_values=fv)
    try:
        with warnings.catch_warnings():  # ml_collections loads the config file with the deprecated load_module()
            warnings.filterwarnings("ignore", "the load_module", DeprecationWarning)
            rest = fv(argv)
    except flags.Error as e:
        raise UsageError(str(_root_cause(e)).splitlines()[0]) from None
    except (AttributeError, NameError, SyntaxError, ImportError) as e:  # the config file itself does not load
        path = next((a.split("=", 1)[1] for a in argv if a.startswith("--config=")), "the config file")
        raise UsageError(f"--config: {path}: cannot load it ({type(e).__name__}: {e}); it must be Python "
                         "defining get_config()") from None
    if len(rest) > 1:
        raise UsageError(f"unexpected argument {rest[1]!r}")
    return fv


def _pop(argv: list[str], name: str) -> tuple[str | None, list[str]]:
    """Remove ``--name=value`` or ``--name value`` from argv; (value, rest)."""
    out, value, i = [], None, 0
    while i < len(argv):
        a = argv[i]
        if a == f"--{name}":
            if i + 1 >= len(argv):
                raise UsageError(f"--{name} needs a value")
            value, i = argv[i + 1], i + 2
            continue
        if a.startswith(f"--{name}="):
            value = a.split("=", 1)[1]
        else:
            out.append(a)
        i += 1
    return value, out


def _assignments(text: str, flag: str) -> dict:
    """'k=v,k2=v2' -> {k: v}, each key and value checked against the schema."""
    from .schema import SCHEMA, closest, coerce

    out = {}
    for part in filter(None, text.split(",")):
        key, eq, value = part.partition("=")
        if not eq:
            raise UsageError(f"{flag}: {part!r} is not KEY=VALUE")
        if key not in SCHEMA:
            raise UsageError(f"{flag}: unknown config key {key!r}{closest(key)}")
        out[key] = coerce(key, value)
    return out


def _sweep(argv: list[str]) -> int:
    from .account import sweep
    from .config import validate
    from .schema import SCHEMA, closest, coerce
    from .report import sweep_table

    lengths, argv = _pop(argv, "lengths")
    vary, argv = _pop(argv, "vary")
    values, argv = _pop(argv, "values")
    compare, argv = _pop(argv, "compare")
    conventions, argv = _pop(argv, "conventions")
    plot, argv = _pop(argv, "plot")
    batches, argv = _pop(argv, "batches")
    csv_path, argv = _pop(argv, "csv")
    if batches is not None:
        return _grid(argv, lengths, batches, compare or conventions, plot, csv_path, vary)
    if compare and conventions:
        raise UsageError("sweep: give --compare or --conventions, not both")
    if csv_path:
        raise UsageError("--csv: give --batches too (a grid of lengths and batches), or use --json")
    if vary and lengths:
        raise UsageError("sweep: give --lengths or --vary=KEY --values=..., not both")
    raw = values if vary else lengths
    if vary and vary not in SCHEMA:
        raise UsageError(f"--vary: unknown config key {vary!r}{closest(vary)}")
    if not raw:
        raise UsageError("--vary needs --values=V1,V2,..." if vary else
                         "sweep needs --lengths=L1,L2,... (or --vary=KEY --values=V1,V2,...)")
    argv = _rewrite_model(argv)
    fv = _parse(argv)
    cfg = validate(fv.config, given=given_keys(argv))
    # --lengths: the prompt length, or in decode the tokens already cached (decode does not read the other)
    key = vary or ("decode_kv_length" if cfg["mode"] == "decode" else "max_target_length")
    vals = [coerce(key, v) for v in raw.split(",") if v] if vary else _numbers(raw, "lengths",
                                                                                  lambda v: coerce(key, v))
    runs = [sweep(cfg, key, vals)]
    labels = [cfg["convention"]]
    if compare and all("=" in part for part in compare.split(",") if part):  # a variant of this config
        other = _assignments(compare, "--compare")
        runs.append(sweep(cfg, key, vals, **other))
        labels = [f"{cfg['convention']}", ",".join(f"{k}={v}" for k, v in other.items())]
    elif conventions:  # the peers side by side: the same config counted by each convention's rules
        from .conventions import CONVENTIONS

        for name in filter(None, conventions.split(",")):
            if name not in CONVENTIONS:
                raise UsageError(f"--conventions: unknown convention {name!r}{closest(name, CONVENTIONS)}; "
                                 f"conventions are {', '.join(CONVENTIONS)}")
            runs.append(sweep(cfg, key, vals, convention=name))
            labels.append(name)
    elif compare:  # other models (names or files), with the same --config.KEY=VALUE settings
        from .load import load_config

        settings = {k: cfg[k] for k in given_keys(argv) if k in cfg}
        labels = [cfg["model_name"]]
        unknown = _unknown(argv)[0]
        for name in filter(None, compare.split(",")):
            if "=" in name:
                raise UsageError(f"--compare: {name!r}: give either KEY=VALUE settings or model names, not both")
            other = load_config(name, unknown=unknown, **settings)
            runs.append(sweep(other, key, vals))
            labels.append(validate(other)["model_name"])
    if plot:
        from .plot import plot_sweep, plot_totals

        (plot_totals if conventions else plot_sweep)(vals, runs, labels, plot, key)
    if fv.json:
        print(json.dumps({"key": key, "values": vals, "settings": labels,
                          "runs": [[b.to_dict() for b in run] for run in runs]}, indent=1, default=list))
    else:
        print(sweep_table(key, vals, runs, labels))
        if plot:
            print(f"plot written to {plot}")
    return 0


def _parts(text: str, what: str) -> list:
    """The comma-separated parts of a flag's value: each a ``range`` (``START:STOP:STEP``, STOP included when
    reached; not yet expanded) or the value as written."""
    out = []
    for part in filter(None, text.split(",")):
        if ":" in part:
            try:
                start, stop, step = (int(x) for x in part.split(":"))
            except ValueError:
                raise UsageError(f"--{what}: {part!r} is not START:STOP:STEP with integers") from None
            if step <= 0 or stop < start:
                raise UsageError(f"--{what}: {part!r}: STEP must be positive and STOP at least START")
            out.append(range(start, stop + 1, step))
        else:
            out.append(part)
    return out


def _numbers(text: str, what: str, coerce) -> list:
    """``V1,V2,...`` and ``START:STOP:STEP`` ranges, e.g. ``1024:1048576:1024``."""
    out = []
    for part in _parts(text, what):
        if isinstance(part, range):
            out += list(part)
        else:
            out.append(coerce(part))
    if not out:
        raise UsageError(f"--{what} needs at least one value")
    return out


# The most points a grid sweep runs: 10 million (measured on llama3.1-8b, 200,000 points: 0.15 kB and 2 us a point,
# so about 1.5 GB and 20 s at the limit; a STEP typo asks for 10**10)
MAX_GRID_POINTS = 10_000_000


def _size(text: str, what: str) -> int:
    """How many values ``_numbers`` gives for ``text``, counted before any is made."""
    return sum(len(part) if isinstance(part, range) else 1 for part in _parts(text, what))


def _grid(argv, lengths, batches, compare, plot, csv_path, vary) -> int:
    """``sweep --lengths=... --batches=...``: every (length, batch) of the grid, exact and fast (maxflops.grid)."""
    from .config import validate
    from .schema import coerce
    from .grid import sweep_grid

    if vary or compare:
        raise UsageError("sweep --batches: a grid of --lengths x --batches (no --vary or --compare with it)")
    if not lengths:
        raise UsageError("sweep --batches needs --lengths=L1,L2,... (or START:STOP:STEP)")
    argv = _rewrite_model(argv)
    fv = _parse(argv)
    cfg = validate(fv.config, given=given_keys(argv))
    key = "decode_kv_length" if cfg["mode"] == "decode" else "max_target_length"
    n_lengths, n_batches = _size(lengths, "lengths"), _size(batches, "batches")
    if n_lengths * n_batches > MAX_GRID_POINTS:
        raise UsageError(f"sweep: --lengths={lengths} x --batches={batches} is {n_lengths:,} x {n_batches:,} = "
                         f"{n_lengths * n_batches:,} points, over the limit of {MAX_GRID_POINTS:,} (a STEP typo?): "
                         "take a larger STEP in --lengths or --batches")
    ls = _numbers(lengths, "lengths", lambda v: coerce(key, v))
    bs = _numbers(batches, "batches", lambda v: coerce("per_device_batch_size", v))
    points = len(ls) * len(bs)
    progress = None
    if points >= 20_000 and sys.stderr.isatty() or points >= 1_000_000:
        def progress(done, total, _last=[-1]):  # a bar on stderr, one step per 2%
            step = done * 50 // total
            if step != _last[0]:
                _last[0] = step
                sys.stderr.write(f"\rsweep {'#' * step}{'.' * (50 - step)} {done:,}/{total:,} points")
                if done == total:
                    sys.stderr.write("\n")
                sys.stderr.flush()
    grid = sweep_grid(cfg, ls, bs, progress=progress)
    if csv_path:
        grid.write_csv(csv_path)
    if plot:
        from .plot import plot_grid

        plot_grid(grid, plot)
    if fv.json:
        print(json.dumps({"model": grid.model_name, "mode": grid.mode, "convention": grid.convention,
                          "rows": list(grid.rows())}, indent=1))
        return 0
    print(_grid_table(grid))
    for path, what in ((csv_path, "csv"), (plot, "plot")):
        if path:
            print(f"{what} written to {path}")
    return 0


def _grid_table(grid, limit: int = 40) -> str:
    head = [grid.length_key, "per_device_batch_size", "tokens", "model TFLOPs", "hardware TFLOPs",
            "GFLOPs/token"]
    rows = []
    for row in grid.rows():
        if len(rows) == limit:
            break
        rows.append([f"{row[grid.length_key]:,}", f"{row['per_device_batch_size']:g}", f"{row['tokens']:,}",
                     f"{row['model_flops'] / 1e12:,.3f}", f"{row['hardware_flops'] / 1e12:,.3f}",
                     f"{row['model_flops'] / row['tokens'] / 1e9:,.2f}"])
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]
    points = len(grid.lengths) * len(grid.batches)
    lines = [f"FLOPs per device per step ({grid.model_name}, {grid.mode}, convention {grid.convention}): "
             f"{len(grid.lengths):,} lengths x {len(grid.batches):,} batches = {points:,} points",
             "  ".join(h.rjust(w) for h, w in zip(head, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(x.rjust(w) for x, w in zip(r, widths)) for r in rows]
    if points > limit:
        lines.append(f"... {points - limit:,} more points (--csv=PATH writes them all)")
    return "\n".join(lines)


def _specs_and_overrides(argv: list[str], command: str) -> tuple[list, dict, bool]:
    """A subcommand's arguments: (the configs it names, the ``--config.KEY=VALUE`` overrides they share, --json)."""
    specs, shared, json_out = [], {}, False
    for a in argv[1:]:
        if a.startswith("--config."):
            _check_override(a)
            shared.update(_assignments(a[len("--config."):], "--config"))
        elif a == "--json":
            json_out = True
        elif a.startswith("-"):
            raise UsageError(f"{command}: unknown flag {a!r}")
        else:
            specs.append(a)
    return specs, shared, json_out


def _compare(argv: list[str]) -> int:
    from .account import count
    from .compare import keys_behind
    from .config import validate
    from .load import load_config
    from .report import compare_table

    unknown, argv = _unknown(argv)
    specs, shared, json_out = _specs_and_overrides(argv, "compare")
    if len(specs) != 2:
        raise UsageError(f"compare needs two configs (NAME or PATH[:KEY=VALUE,...]), got {len(specs)}")
    built = []
    for spec in specs:
        name, _, extra = spec.partition(":")
        cfg = load_config(name, unknown=unknown, **{**shared, **_assignments(extra, spec)})
        built.append((spec, cfg, count(cfg), validate(cfg)))
    (la, _, a, ca), (lb, _, b, cb) = built
    if json_out:
        print(json.dumps({"A": {"spec": la, **a.to_dict()}, "B": {"spec": lb, **b.to_dict()}}, indent=1))
    else:
        print(compare_table(a, b, ca, cb, la, lb, keys_behind(ca, cb)))
    return 0


def _splash_estimates(argv: list[str]) -> int:
    from .load import load_config
    from .maxtext.estimates import splash_cost_estimates

    unknown, argv = _unknown(argv)
    shards, argv = _pop(argv, "tensor-shards")
    specs, shared, json_out = _specs_and_overrides(argv, "splash-estimates")
    if len(specs) != 1:
        raise UsageError(f"splash-estimates needs one config (NAME or PATH), got {len(specs)}")
    if shards is not None and not shards.isdigit():
        raise UsageError(f"--tensor-shards={shards}: expected a positive integer")
    n = 1 if shards is None else int(shards)
    got = splash_cost_estimates(load_config(specs[0], unknown=unknown, **shared), tensor_shards=n)
    if json_out:
        print(json.dumps(got, indent=1))
    else:
        print(f"# {specs[0]}: {got['note']}")
        print(f"cost_estimate_flops_fwd: {got['cost_estimate_flops_fwd']}")
        print(f"cost_estimate_flops_bwd: {got['cost_estimate_flops_bwd']}")
    return 0


def _explain(argv: list[str]) -> int:
    from .explain import FORMS, explain
    from .load import load_config

    unknown, argv = _unknown(argv)
    figure, devices = {}, None
    for key in sorted({k for form in FORMS for k in form}):
        value, argv = _pop(argv, key.replace("_", "-"))
        if value is not None:
            figure[key] = value
    devices, argv = _pop(argv, "devices")
    if devices is not None and not devices.isdigit():
        raise UsageError(f"--devices={devices}: expected a positive integer")
    specs, shared, json_out = _specs_and_overrides(argv, "explain")
    if len(specs) != 1:
        raise UsageError(f"explain needs one config (NAME or PATH), got {len(specs)}")
    e = explain(load_config(specs[0], unknown=unknown, **shared), devices=int(devices or 1), **figure)
    if json_out:
        print(json.dumps({"figure": e.figure, "low": e.low, "high": e.high, "exact": e.exact,
                          "candidates": [dataclasses.asdict(c) for c in e.candidates]}, indent=1))
    else:
        print(e.table())
    return 0


def main(argv: list[str] | None = None) -> int:
    from .account import count
    from .config import validate
    from .loaders.discovery import available_models
    from .report import text_report
    from .traffic import decode_traffic

    argv = list(sys.argv if argv is None else argv)
    if any(a in ("-h", "--help", "--helpfull") for a in argv[1:]):
        print(USAGE)
        return 0
    if len(argv) > 1 and argv[1] in ("sweep", "compare", "splash-estimates", "explain"):
        sub = {"sweep": _sweep, "compare": _compare, "splash-estimates": _splash_estimates,
               "explain": _explain}[argv[1]]
        try:
            return sub([argv[0]] + argv[2:])
        except (UsageError, ValueError, TypeError, OSError) as e:
            print(f"maxflops {argv[1]}: error: {one_line(e)}", file=sys.stderr)
            return 2
    try:
        if "--list" in argv[1:]:
            print("\n".join(available_models()))
            return 0
        argv = _rewrite_model(argv)
        fv = _parse(argv)
        resolved = validate(fv.config, given=given_keys(argv))
        b = count(resolved)
        traffic = decode_traffic(resolved) if b.mode == "decode" else None
    except (UsageError, ValueError, TypeError, OSError) as e:
        print(f"maxflops: error: {one_line(e)}", file=sys.stderr)
        return 2
    if fv.json:
        extra = {"decode_traffic": traffic.to_dict()} if traffic is not None else {}
        print(json.dumps({"config": resolved, **b.to_dict(), **extra}, indent=1,
                         default=list))
    else:
        print(text_report(b, resolved, traffic))
    return 0


def quiet_broken_pipe() -> None:
    """Exit quietly when the reader of stdout goes away (``python -m maxflops | head``)."""
    import signal

    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)


def _warn_line(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning on the command line: one line naming it, as errors are."""
    print(f"maxflops: warning: {one_line(message)}", file=sys.stderr)


def run() -> None:
    quiet_broken_pipe()
    warnings.showwarning = _warn_line
    sys.exit(main())
