"""Config loading and every kind of bad input: a ValueError that names the key and the value."""

import subprocess
import sys

import pytest

import maxflops
from maxflops import cli
from maxflops.fields import Ints
from maxflops.schema import SCHEMA
from repo import ROOT

ALL_MODELS = ["llama2-7b", "llama3.1-8b", "llama3.1-70b", "llama3.1-405b", "mixtral-8x7b", "deepseek2-16b",
              "deepseek3-671b", "deepseek3.2-671b", "glm5", "gemma3-27b", "gpt-oss-120b", "llama4-17b-128e",
              "qwen3-235b-a22b", "qwen3-next-80b-a3b"]


def test_every_required_model_is_shipped_and_loads():
    assert set(ALL_MODELS) <= set(maxflops.available_models())
    for name in ALL_MODELS:
        cfg = maxflops.load_config(name)
        assert cfg.model_name == name
        assert set(cfg.keys()) == set(SCHEMA)


def test_loaded_config_is_locked_and_overridable():
    cfg = maxflops.load_config("llama2-7b", max_target_length=4096)
    assert cfg.max_target_length == 4096
    with pytest.raises(AttributeError):
        cfg.not_a_key = 1  # locked: no new keys


def test_load_by_path(tmp_path):
    p = tmp_path / "mine.py"
    p.write_text("from maxflops.config import model_config\n\n"
                 "def get_config():\n    return model_config(model_name='mine', emb_dim=64)\n")
    assert maxflops.load_config(str(p)).emb_dim == 64


def test_convention_override_rederives_the_bundle():
    cfg = maxflops.load_config("deepseek3.2-671b", convention="maxtext")
    assert cfg.causal_pairs == "half_square" and cfg.dsa_pairs == "maxtext"
    back = maxflops.load_config("deepseek3.2-671b", convention="maxtext", causal_pairs="exact")
    assert back.causal_pairs == "exact"  # an explicit knob beats its bundle


def test_every_key_is_documented():
    for key, field in SCHEMA.items():
        assert field.doc.strip(), key
        assert isinstance(field.default, tuple if field.kind is Ints else field.kind), key


BAD = [
    (dict(max_target_lenght=4096), "max_target_lenght", "max_target_length"),
    (dict(emb_dim="wide"), "emb_dim", "'wide'"),
    (dict(emb_dim=0), "emb_dim", "0"),
    (dict(num_decoder_layers=-2), "num_decoder_layers", "-2"),
    (dict(num_query_heads=8, num_kv_heads=3), "num_kv_heads", "3"),
    (dict(num_experts=4, num_experts_per_tok=6), "num_experts_per_tok", "6"),
    (dict(attention_type="mla", use_sparse_indexer=True, index_topk=0), "index_topk", "0"),
    (dict(attention_layer_pattern="GLJ", sliding_window_size=4), "attention_layer_pattern", "'J'"),
    (dict(attention_layer_pattern="L"), "sliding_window_size", "0"),
    (dict(attention_layer_pattern="C", chunk_attn_window_size=-1), "chunk_attn_window_size", "-1"),
    (dict(mode="serve"), "mode", "'serve'"),
    (dict(convention="nemo"), "convention", "'nemo'"),
    (dict(use_sparse_indexer=True), "use_sparse_indexer", "mla"),
    (dict(mlp_activations=("silu", "linear", "gelu")), "mlp_activations", "gelu"),
    (dict(per_device_batch_size=0.3, max_target_length=5), "per_device_batch_size", "0.3"),
    (dict(use_sparse_indexer="yes"), "use_sparse_indexer", "'yes'"),
]


@pytest.mark.parametrize("overrides,key,value", BAD)
def test_bad_config_names_key_and_value(overrides, key, value):
    with pytest.raises(ValueError) as e:
        maxflops.model_config(**overrides)
    assert key in str(e.value) and value in str(e.value)


@pytest.mark.parametrize("lengths,needle", [
    ([100, 0, 5], "segment_lengths[1] = 0"),
    ([100, -3], "segment_lengths[1] = -3"),
    ([3000], "segment_lengths[0] = 3000 exceeds max_target_length=2048"),
    ([2048, 2048, 1], "sum to 4097"),
    ([[1, 2]], "1-D"),
    ([1.5], "integers"),
    ([], "non-empty"),
])
def test_bad_segment_lengths(lengths, needle):
    cfg = maxflops.model_config(per_device_batch_size=2, max_target_length=2048)
    with pytest.raises(ValueError) as e:
        maxflops.count(cfg, segment_lengths=lengths)
    assert needle in str(e.value)


def test_unknown_model_suggests_the_closest():
    with pytest.raises(ValueError, match="glm5"):
        maxflops.load_config("glm6")


@pytest.mark.parametrize("argv,needle", [
    (["--model=glm-5"], "did you mean 'glm5'"),
    (["--config.max_target_lenght=4"], "unknown config key 'max_target_lenght'"),
    (["--config.num_kv_heads=abc"], "'num_kv_heads': expected int, got 'abc'"),
    (["--model=llama3.1-8b", "--config.num_kv_heads=3"], "'num_kv_heads': 3 does not divide"),
    (["--config.mode=serve"], "'mode': 'serve'"),
    (["--model=glm5", "--config=configs/glm5.py"], "not both"),
    (["stray"], "unexpected argument"),
])
def test_cli_bad_input_is_one_line_and_exit_2(argv, needle, capsys):
    assert cli.main(["maxflops", *argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_cli_bad_input_in_a_real_process():
    root = ROOT
    p = subprocess.run([sys.executable, "-m", "maxflops", "--config.emb_dim=0"], capture_output=True, text=True,
                       cwd=root)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip() == "maxflops: error: config key 'emb_dim': must be positive, got 0"


def test_convention_bundles_hold_plain_values_of_the_schema_types():
    from maxflops.conventions import CONVENTIONS

    for name, bundle in CONVENTIONS.items():
        for key, value in bundle.items():
            assert isinstance(value, SCHEMA[key].kind), (name, key, value)


def test_changing_convention_on_a_built_config_rederives_its_knobs():
    # As `--config.convention=megatron` does: the ConfigDict was built 'exact', then its convention changed.
    cfg = maxflops.load_config("glm5", max_target_length=4096)
    with cfg.unlocked():
        cfg.convention = "megatron"
    assert maxflops.count(cfg).total == maxflops.count(maxflops.load_config(
        "glm5", max_target_length=4096, convention="megatron")).total
    # A knob the user set explicitly survives a convention change.
    cfg = maxflops.load_config("glm5", max_target_length=4096, convention="maxtext", causal_pairs="exact")
    assert cfg.causal_pairs == "exact" and maxflops.count(cfg, convention="megatron").components == \
        maxflops.count(maxflops.load_config("glm5", max_target_length=4096, convention="megatron",
                                            causal_pairs="exact")).components


@pytest.mark.parametrize("overrides,key,value", [
    (dict(per_device_batch_size=float("nan")), "per_device_batch_size", "nan"),
    (dict(capacity_factor=float("inf")), "capacity_factor", "inf"),
    (dict(mode="decode", per_device_batch_size=2.5), "per_device_batch_size", "2.5"),
    (dict(attention_type="mla", use_sparse_indexer=True, causal=False), "causal", "False"),
    (dict(attention_type="compressed", attention_layer_pattern="S", sliding_window_size=4, attention_output_gate=True),
     "attention_output_gate",
     "True"),
    (dict(mlp_activations=("",)), "mlp_activations", "''"),
])
def test_more_bad_values(overrides, key, value):
    with pytest.raises(ValueError) as e:
        maxflops.model_config(**overrides)
    assert key in str(e.value) and value in str(e.value)


def test_fractional_batches_that_make_whole_tokens_are_accepted():
    assert maxflops.count(maxflops.model_config(per_device_batch_size=0.07, max_target_length=100)).tokens == 7


def test_override_types_are_part_of_the_cache_key():
    cfg = maxflops.model_config(attention_type="mla")
    maxflops.count(cfg, use_sparse_indexer=True)
    with pytest.raises(ValueError, match="use_sparse_indexer"):
        maxflops.count(cfg, use_sparse_indexer=1)


@pytest.mark.parametrize("argv,needle", [
    (["--config.max_target_length", "abc"], "'max_target_length': expected int, got 'abc'"),
    (["--config=configs/glm55.py"], "does not exist"),
    (["sweep", "--model=glm5", "--lengths=4096", "--plot=/nonexistent/dir/x.png"], "No such file"),
])
def test_cli_more_bad_input(argv, needle, capsys):
    assert cli.main(["maxflops", *argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_cli_list_flags_and_explicit_knobs_beside_a_convention(capsys):
    import json

    assert cli.main(["maxflops", "--model=glm5", "--config.mlp_activations=silu,linear", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["config"]["mlp_activations"] == ["silu", "linear"]
    assert d["total"] == maxflops.count(maxflops.load_config("glm5")).total
    assert cli.main(["maxflops", "--model=deepseek3.2-671b", "--config.convention=maxtext",
                     "--config.causal_pairs=exact", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    expect = maxflops.load_config("deepseek3.2-671b", convention="maxtext", causal_pairs="exact")
    assert d["config"]["causal_pairs"] == "exact" and d["total"] == maxflops.count(expect).total


def test_every_default_passes_its_own_check_and_configs_are_locked():
    # resolve() checks only the values that differ from the defaults: each default must pass the check itself
    from maxflops.schema import SCHEMA, check_value
    for key, field in SCHEMA.items():
        check_value(key, field.default)
    cfg = maxflops.model_config()
    assert cfg.is_locked
    with pytest.raises(AttributeError):
        cfg.not_a_key = 1
    with pytest.raises(ValueError, match="'num_kv_heads'"):
        maxflops.model_config(num_kv_heads=0)


def test_a_peers_branch_follows_the_models_kind():
    """A convention's branch for a kind of model (config.CONVENTION_BRANCHES: Megatron's hybrid path leaves out the
    MTP eh projection) is derived again when the kind changes after the config was built, by override or by hand,
    and when the convention changes: the count equals a config built fresh."""
    import maxflops

    kw = dict(mtp_num_layers=2, mtp_layer_pattern="G-", mtp_ffn_layer_pattern="-E", max_target_length=1024)
    cfg = maxflops.load_config("nemotron-3-nano-30b-a3b", convention="megatron_main", **kw)
    assert cfg.convention_knobs_from == "megatron_main:hybrid" and cfg.mtp_eh_proj is False
    plain = dict(attention_layer_pattern="G", ffn_layer_pattern="", mtp_layer_pattern="G", mtp_ffn_layer_pattern="")
    fresh = maxflops.count(maxflops.load_config("nemotron-3-nano-30b-a3b", convention="megatron_main",
                                                **{**kw, **plain}))
    assert fresh.components["mtp"] > 0
    assert maxflops.count(cfg, **plain).total == fresh.total
    by_hand = {k: v for k, v in cfg.to_dict().items()}
    by_hand.update(plain)
    assert maxflops.count(by_hand).total == fresh.total
    exact = maxflops.count(maxflops.load_config("nemotron-3-nano-30b-a3b", **kw))
    assert maxflops.count(cfg, convention="exact").total == exact.total


@pytest.mark.parametrize("key,advice", [("batch_size", "per_device_batch_size"),
                                        ("global_batch_size", "per_device_batch_size"),
                                        ("seq_len", "max_target_length"), ("num_layers", "num_decoder_layers"),
                                        ("max_target_lenght", "max_target_length"), ("index_tpok", "index_topk"),
                                        ("warmup_steps", None), ("learning_rate", None), ("steps", None)])
def test_did_you_mean_never_points_a_trainers_key_at_another_key(key, advice):
    """A misspelling gets its key; another framework's name gets the schema key it means; a trainer's key that means
    nothing here (warmup_steps, learning_rate) gets no advice: never the nearest spelling of another meaning
    (batch_size -> mamba_chunk_size, warmup_steps -> warmup_cse_layers)."""
    with pytest.raises(ValueError) as e:
        maxflops.model_config(**{key: 1})
    msg = str(e.value)
    assert f"unknown config key {key!r}" in msg
    assert (f"(did you mean {advice!r}?)" in msg) if advice else "did you mean" not in msg


def test_splash_estimates_from_the_command_line(capsys):
    """MaxText's hand-typed splash figures as YAML lines: one call on the device's heads (tensor shards divide it,
    exactly: every head costs the same); bad input is one line and exit 2."""
    from maxflops.maxtext import splash_cost_estimates

    argv = ["maxflops", "splash-estimates", "llama3.1-8b", "--config.attention_impl=blocked"]
    assert cli.main(argv + ["--tensor-shards=4"]) == 0
    out = capsys.readouterr().out.splitlines()
    # 8 of 32 heads x 10 causal tiles of 512 x 512 (2048 tokens) x QK^T and PV, head width 128
    assert out[1] == f"cost_estimate_flops_fwd: {8 * 10 * 2 * 2 * 512 * 512 * 128}"
    whole = splash_cost_estimates(maxflops.load_config("llama3.1-8b", attention_impl="blocked"))
    assert out[2] == f"cost_estimate_flops_bwd: {whole['cost_estimate_flops_bwd'] // 4}"
    assert "8 of 32 query heads" in out[0]
    for bad, said in ((["--tensor-shards=3"], "positive divisor of num_query_heads (32)"),
                      (["--tensor-shards=x"], "expected a positive integer"), ([], None)):
        code = cli.main((argv if bad else argv[:3]) + bad)
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and (said or "attention_impl") in err, err
