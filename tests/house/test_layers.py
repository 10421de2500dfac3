"""The house's layering: no import circle among maxflops' modules, not even through imports inside functions; the
analytic core imports no jax."""

from __future__ import annotations

import ast
import pathlib
from repo import ROOT

PKG = ROOT / "maxflops"


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in PKG.rglob("*.py")}


def imports(name: str) -> set[str]:
    """Every maxflops module ``name`` imports, at any depth of its code (a package import is its __init__)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            if not target.startswith("maxflops"):
                continue
            for alias in node.names:  # `from . import keys`: the submodule, if it is one
                sub = f"{target}.{alias.name}"
                out.add(sub if sub in MODULES else target)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("maxflops"))
    return {m for m in out if m in MODULES and m != name}


def test_no_import_circle():
    graph = {name: imports(name) for name in MODULES}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                cycle = stack[stack.index(m):] + [m]
                raise AssertionError("import circle: " + " -> ".join(cycle))
            if m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n)


def test_the_analytic_core_imports_no_jax():
    # the MaxText trainer hook runs inside MaxText's (jax) process and asks jax for the local device count
    # and each family's proof module (maxflops.families.<name>.proof) is its jax side
    # and the proof side's ground floor (maxflops.proofkit.kernels: the reference kernels)
    # and each trunk feature's proof module (maxflops.features.proofs.<name>) is its part of the Flax model
    core = [n for n in MODULES if not n.startswith(("maxflops.xla", "maxflops.bench", "maxflops.maxtext.trainer",
                                                    "maxflops.proofkit.kernels", "maxflops.features.proofs."))
            and not (n.startswith("maxflops.families.") and n.endswith(".proof"))]
    for name in core:
        tree = ast.parse(MODULES[name].read_text())
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            assert not any(n == "jax" or n.startswith(("jax.", "flax")) for n in names), name


def test_every_package_ships():
    """setup.py finds the packages under maxflops/ (a package missing from the wheel fails to import, and an editable
    install hides it): every folder of modules is a package (find_packages skips a folder without __init__.py), the
    search covers maxflops/ and no table in pyproject.toml replaces its list, and configs/ is added."""
    import tomllib

    folders = {p.parent for p in PKG.rglob("*.py") if "__pycache__" not in p.parts}
    assert {f for f in folders if not (f / "__init__.py").exists()} == set()
    setup = (ROOT / "setup.py").read_text()
    assert 'find_packages(include=["maxflops", "maxflops.*"]) + ["maxflops.configs"]' in setup
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "packages" not in tool and tool["package-dir"] == {"maxflops.configs": "configs"}


def test_the_proof_side_imports_point_down():
    """xla/ and bench/ import the families' proof modules; those (and proofkit, their ground floor) import neither."""
    for name, path in MODULES.items():
        proof = name.startswith("maxflops.families.") and name.endswith(".proof")
        if not (proof or name.startswith("maxflops.proofkit")):
            continue
        package = name.split(".")[:-1] if not path.name == "__init__.py" else name.split(".")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = package[:len(package) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                assert not target.startswith(("maxflops.xla", "maxflops.bench")), (name, target)


def test_no_two_test_modules_share_a_basename():
    """pytest imports each test module by its basename (the test folders are no packages): two of one name fail
    collection on a fresh checkout."""
    seen: dict[str, pathlib.Path] = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        assert path.name not in seen, (path, seen.get(path.name))
        seen[path.name] = path
