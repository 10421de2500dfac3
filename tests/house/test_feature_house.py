"""The trunk features' house (maxflops.features): each feature one module whose record holds its keys, components,
checks and prices; the registry refuses a second feature of a name or a key two features declare; every feature
key is in the schema once; the engine, the check, the inert-key rule and decode traffic read them from the
registry."""

from __future__ import annotations

import pathlib
import re

import pytest

import maxflops
from maxflops import components
from maxflops.features import FEATURES, PRICED, base, feature, inert_rules
from maxflops.schema import SCHEMA

ROOT = pathlib.Path(maxflops.__file__).parent


def test_each_feature_is_one_module_of_its_name():
    names = {f.name for f in FEATURES}
    modules = {p.stem for p in (ROOT / "features").glob("*.py")} - {"__init__", "base"}
    assert names == modules and len(names) >= 14


def test_every_feature_key_is_in_the_schema_as_its_module_declares_it():
    for f in FEATURES:
        for key, field in f.schema.items():
            assert SCHEMA[key] is field, key
        assert set(f.switches) <= set(f.schema) and set(f.reads) <= set(f.schema), f.name
        for comp in f.components:
            assert components.kind_of(comp.name) == comp.kind
        assert set(f.weight_components) <= {comp.name for comp in f.components}, f.name


def test_the_registry_refuses_a_second_feature_or_a_key_declared_twice():
    engram = feature("engram")
    with pytest.raises(ValueError, match="feature 'engram' registered twice"):
        base.register(engram)
    clash = base.Feature("clash", "", {"engram_kernel_size": engram.schema["engram_kernel_size"]}, (), bool, "")
    with pytest.raises(ValueError, match="'engram_kernel_size' declared by features 'engram' and 'clash'"):
        base.register(clash)
    assert "clash" not in {f.name for f in base.registered()}


def test_prices_run_in_the_features_order_and_inert_rules_cover_their_keys():
    assert [f.order for f in PRICED] == sorted(f.order for f in PRICED)
    rules = inert_rules()
    for f in FEATURES:
        for key in f.schema:
            assert (key in rules) == (key in f.reads or key not in f.switches and key not in f.shared_keys), key


# The keys a core module still reads itself, each with where (what the trunk's own parts need of a feature that
# lives inside them): nothing else of a feature is named outside its module.
READ_BY_THE_TRUNK = {
    ("pricing.py", "double_wide_kv_shared_mlp"): "the dense FFN's width on a KV-shared layer",
    ("pricing.py", "zero_experts"): "the router's scored experts",
    ("pricing.py", "zero_expert_share"): "the routed experts' slots (routed_slots)",
    ("account.py", "prompt_tokens"): "the tokens each layer sees beside the head's",
    ("traffic.py", "prompt_tokens"): "the cache each sequence holds",
    ("account.py", "patches_per_sequence"): "the patch stream's positions",
    ("checks.py", "zero_experts"): "the bound on num_experts_per_tok and the product-key router's refusal",
    ("checks.py", "engram_layers"): "aux_conv_impl's inert rule (the convs it sizes)",
    ("checks.py", "residual_conv_kernel"): "aux_conv_impl's inert rule (the convs it sizes)",
    ("checks.py", "mtp_num_layers"): "the MTP modules' letters, checked by their families",
    ("checks.py", "mtp_layer_pattern"): "the MTP modules' letters, checked by their families",
    ("checks.py", "mtp_ffn_layer_pattern"): "the MTP modules' letters, checked by their families",
    ("xla/model.py", "double_wide_kv_shared_mlp"): "the dense FFN's width on a KV-shared layer",
    ("xla/model.py", "prompt_tokens"): "the positions ahead of every sequence (the layers run them, the head does not)",
    ("xla/model.py", "layer_loops"): "reduce_config keeps a looped model's depth (its rules name its layers)",
    ("xla/model.py", "engram_layers"): "NOT_BUILT: the refusal names the key (proved elsewhere)",
    ("xla/model.py", "zero_experts"): "NOT_BUILT: the refusal names the key (a stated input)",
    ("xla/model.py", "patch_layers"): "NOT_BUILT: the refusal names the key (proved elsewhere)",
    ("xla/model.py", "patcher_head_layer"): "NOT_BUILT: the refusal names the key (proved elsewhere)",
}
# The features' layer flags (maxflops.plan.LayerKind) the proof side's trunk reads, likewise.
FLAGS_READ_BY_THE_TRUNK = {("xla/model.py", "kv_shared"): "the dense FFN's width on a KV-shared layer"}
# The proof side's trunk: the Flax model and the modules beside it (a feature's Flax code is its proof module's).
PROOF_TRUNK = tuple(sorted(str(p.relative_to(ROOT)) for d in ("xla", "proofkit") for p in (ROOT / d).glob("*.py")))


def test_no_core_module_names_a_feature_key_but_where_the_trunk_reads_it():
    """The engine, the check, decode traffic, the components and the proof side's trunk (the Flax model) read a
    feature's keys only through its record and its proof module, but for the trunk's own parts listed in
    READ_BY_THE_TRUNK (each still read there)."""
    assert "xla/model.py" in PROOF_TRUNK
    for module in ("account.py", "pricing.py", "checks.py", "traffic.py", "components.py", *PROOF_TRUNK):
        text = (ROOT / module).read_text()
        for f in FEATURES:
            for key in f.schema:
                assert (f'"{key}"' in text) == ((module, key) in READ_BY_THE_TRUNK), (module, key)


def test_a_layer_kind_names_no_feature_and_reads_their_marks():
    """LayerKind carries the features' marks as data (LayerKind.features), read as attributes with their defaults;
    the registry refuses a flag two features declare."""
    import dataclasses

    from maxflops.features import FLAGS
    from maxflops.plan import LayerKind, build_plan
    from maxflops.config import validate

    fields = {f.name for f in dataclasses.fields(LayerKind)}
    assert not fields & set(FLAGS) and {"engram", "attn_res", "kv_shared", "messages", "patches"} <= set(FLAGS)
    kind = LayerKind("global", 0, "gqa", False, "dense", False)
    assert kind.engram is False and kind.attn_res == () and kind.messages == 0
    with pytest.raises(AttributeError):
        kind.no_such_flag
    c = validate(maxflops.model_config(num_decoder_layers=4, engram_layers=[1, 3], num_kv_shared_layers=1))
    marks = [dict(k.features) for _, k in build_plan(c).kind_rows()]
    assert marks == [{}, {"engram": True}, {}, {"engram": True, "kv_shared": True}]
    engram = feature("engram")
    clash = base.Feature("clash", "", {}, (), bool, "", flags={"engram": True})
    with pytest.raises(ValueError, match="layer flag 'engram' declared by features 'engram' and 'clash'"):
        base.register(clash)
    assert engram.flags == {"engram": False}


def test_families_ask_for_letters_in_their_stated_order_and_a_letter_is_declared_once():
    import dataclasses

    from maxflops.families import FAMILIES, letters_of

    assert [f.claims for f in FAMILIES] == sorted(f.claims for f in FAMILIES)
    names = [f.name for f in FAMILIES]
    assert names.index("compressed") < names.index("dsa") < names.index("attention") == len(names) - 1
    mamba2 = next(f for f in FAMILIES if f.name == "mamba2")
    twin = dataclasses.replace(mamba2, name="twin")
    with pytest.raises(ValueError, match="pattern letter 'M' declared by families 'mamba2' and 'twin'"):
        letters_of((*FAMILIES, twin))


def test_a_features_flax_code_is_its_proof_module_of_the_registrys_hooks():
    """A feature's part of the Flax model is the module its record names (maxflops.features.proofs.<name>), one per
    module there; a module defines only the hooks maxflops.xla.registry lists, a residual scheme all three of its
    own; the proof side's trunk reads a feature's layer flags only where FLAGS_READ_BY_THE_TRUNK says."""
    import importlib
    import inspect

    from maxflops.features import FLAGS
    from maxflops.xla.registry import FEATURE_SLOTS

    named = {f.proof: f for f in FEATURES if f.proof}
    assert {f"maxflops.features.proofs.{p.stem}" for p in (ROOT / "features" / "proofs").glob("*.py")} - {
        "maxflops.features.proofs.__init__"} == set(named)
    for path, f in named.items():
        assert path == f"maxflops.features.proofs.{f.name}", f.name
        module = importlib.import_module(path)
        hooks = {name for name, obj in vars(module).items() if inspect.isfunction(obj) and obj.__module__ == path
                 and not name.startswith("_")}
        assert hooks and hooks <= set(FEATURE_SLOTS), (f.name, hooks - set(FEATURE_SLOTS))
        scheme = {"enter", "layer", "leave"}
        assert not hooks & scheme or scheme <= hooks, f.name
    assert {"altup", "attn_res", "mhc"} == {f.name for f in named.values()
                                            if hasattr(importlib.import_module(f.proof), "layer")}
    for module in PROOF_TRUNK:
        text = (ROOT / module).read_text()
        for flag in FLAGS:
            read = re.search(rf"kind\.{flag}\b", text) is not None
            assert read == ((module, flag) in FLAGS_READ_BY_THE_TRUNK), (module, flag)
