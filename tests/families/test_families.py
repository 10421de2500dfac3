"""The registry of mixer families: each family complete (engine and proof side), nothing claimed twice, nothing
outside a family's module naming its mixers, every component declared."""

from __future__ import annotations

import ast
import pathlib

import pytest

import maxflops
from maxflops import components
from maxflops.schema import SCHEMA
from maxflops.families import FAMILIES, LETTERS, MIXER_FAMILY
from repo import ROOT, quietly_inert



def test_letters_mixers_and_keys_are_claimed_once():
    letters = [k for fam in FAMILIES for k in fam.letters]
    mixers = [m for fam in FAMILIES for m in fam.mixers]
    keys = [k for fam in FAMILIES for k in fam.keys]
    assert len(letters) == len(set(letters)) and len(mixers) == len(set(mixers))
    assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)
    assert set(keys) <= set(SCHEMA), sorted(set(keys) - set(SCHEMA))
    assert set(LETTERS) == set("GLCDSHMAKNZPVXRWBTQEOYU")
    hf_types = [t for fam in FAMILIES for t in fam.hf_layer_types]
    assert len(hf_types) == len(set(hf_types)), hf_types


def test_every_component_a_family_declares_is_registered_and_every_count_only_holds_declared_ones():
    for fam in FAMILIES:
        for comp in fam.components:
            assert components.kind_of(comp.name) == comp.kind
    seen = set()
    for name in maxflops.available_models():
        for mode in ("train", "prefill", "decode"):
            b = maxflops.count(quietly_inert(lambda: maxflops.load_config(  # (one step's keys in every mode)
                name, mode=mode, decode_kv_length=100, max_target_length=300)))
            seen |= set(b.components) | set(b.hardware_components) | set(b.by_kind()) | set(b.by_kind(True))
    assert seen <= components.KNOWN


def test_an_undeclared_component_is_an_error_not_a_weight():
    from maxflops.breakdown import make_breakdown
    from maxflops.plan import build_plan
    from maxflops.config import resolve

    c = resolve({"num_decoder_layers": 1})
    plan = build_plan(c)
    with pytest.raises(ValueError, match=r"component 'mystery_mixer' is not declared"):
        make_breakdown("m", "train", "exact", 1, plan, [{"mystery_mixer": 10}], {}, lambda: None, lambda: None)


def _is_mixer(node) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr in ("mixer", "projection")
            or isinstance(node, ast.Name) and node.id in ("mixer", "projection"))


# the families' names for their mixers, as a module would import them
_CONSTANTS = {"GLOBAL": "global", "WINDOW": "window", "CHUNK": "chunk", "BIDIRECTIONAL": "bidirectional", "DSA": "dsa",
              "CSA": "csa", "HCA": "hca", "COMPRESSED": "csa", "GDN": "gdn", "LINEAR": "gdn"}


def _constants(node):
    if isinstance(node, ast.Constant):
        return [node.value]
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return [_CONSTANTS[node.id]]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [v for e in node.elts for v in _constants(e)]
    return []


def _mixer_literals(path: pathlib.Path) -> set[str]:
    """Mixer (or family projection) names a module's code compares a layer's mixer or projection with."""
    found = set()
    names = set(MIXER_FAMILY) | {fam.projection for fam in FAMILIES if fam.projection}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_mixer(side) for side in sides):
                found |= {v for side in sides for v in _constants(side) if v in names}
    return found


def test_nothing_outside_the_families_branches_on_a_mixer_name():
    """The analytic engine, the breakdown and the reports read the registry; only a family's module compares a
    layer's mixer. (masks.py is keyed by mask kind, below the families. The proof side, maxflops.xla and
    maxflops.bench, still builds each family's Flax layer and kernels by branching: its slots are registered and
    checked below, its dispatch is not yet the registry's.)"""
    outside = [p for p in (ROOT / "maxflops").rglob("*.py")
               if "families" not in p.parts and p.name != "masks.py"
               and not {"xla", "bench"} & set(p.relative_to(ROOT / "maxflops").parts)]
    offenders = {str(p.relative_to(ROOT)): sorted(_mixer_literals(p)) for p in outside if _mixer_literals(p)}
    assert not offenders, offenders


def test_every_family_fills_its_proof_slots():
    """A family lands with its reference kernel(s), its Flax layer, its part of the reduced model and its bench
    case(s), in its package's proof module; this lists what is missing."""
    import jax.numpy as jnp
    import numpy as np

    from maxflops.proofkit.case import Case, Ctx
    from maxflops.bench.cases import QUICK
    from maxflops.xla.registry import SLOTS, proof_of

    rng = np.random.default_rng(0)
    ctx = Ctx(QUICK["cpu"], "cpu", jnp.float32, lambda *shape, dt=None: jnp.asarray(rng.normal(size=shape)),
              lambda mesh, args: (args, 1))
    missing = []
    for fam in FAMILIES:
        if not (ROOT / "maxflops" / "families" / fam.name / "proof.py").is_file():
            missing.append(f"{fam.name}: no maxflops/families/{fam.name}/proof.py")
            continue
        proof = proof_of(fam)
        missing += [f"{fam.name}: slot {slot}" for slot in SLOTS if not hasattr(proof, slot)]
        if not getattr(proof, "KERNELS", ()) or not all(callable(k) for k in proof.KERNELS):
            missing.append(f"{fam.name}: no reference kernel")
        if not isinstance(getattr(proof, "reduce", None) and proof.reduce(maxflops.model_config()), dict):
            missing.append(f"{fam.name}: reduce(c) is not a dict")
        cases = proof.bench_cases(ctx) if callable(getattr(proof, "bench_cases", None)) else []
        if not cases or not all(isinstance(case, Case) for case in cases):
            missing.append(f"{fam.name}: no bench case")
    assert not missing, missing


def test_the_flax_model_builds_each_family_by_its_slot():
    """maxflops.xla.model names no family and no mixer: its layers come from the registry's proof modules."""
    import ast

    source = (ROOT / "maxflops" / "xla" / "model.py").read_text()
    names = {fam.name for fam in FAMILIES} | {m for fam in FAMILIES for m in fam.mixers}
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and node.value in names:
            found.add(node.value)
        elif isinstance(node, ast.Name) and node.id.lower() in names:
            found.add(node.id)
        elif isinstance(node, ast.alias) and node.name.lower() in names:
            found.add(node.name)
    assert not found, sorted(found)
    assert "attention_type" not in source


def test_a_family_module_owns_its_checks():
    """The config check runs each family's own checks on the letters in use (a compressed letter without
    attention_type='compressed' is the compressed family's error)."""
    with pytest.raises(ValueError, match=r"'S' and 'H' layers are compressed attention"):
        maxflops.model_config(attention_layer_pattern="GS", num_decoder_layers=2)
    with pytest.raises(ValueError, match=r"unknown letter 'J'; letters are .*D \(gated delta net"):
        maxflops.model_config(attention_layer_pattern="GJ")
