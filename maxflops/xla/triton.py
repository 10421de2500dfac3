"""Pallas GPU kernels lowered with Triton priced from their own code: the Triton module a ``__gpu$xla.gpu.triton``
custom call carries, run over its launch grid.

Pallas lowers a kernel for an NVIDIA or AMD GPU (``compiler_params=pallas.triton.CompilerParams()``, jax's own GPU
flash attention ``jax.experimental.pallas.ops.gpu.attention``, tokamax's ``triton`` implementations) to one custom
call whose backend config holds the launch grid (``grid_x``, ``grid_y``, ``grid_z``), the kernel's name and the
kernel itself as MLIR bytecode of Triton's dialect (``ir``). XLA's cost analysis does not look inside. As for a
Mosaic kernel (:mod:`maxflops.xla.mosaic`, whose evaluator this reuses), the scalar program (program ids, integer
arithmetic, ``scf.for`` bounds, ``scf.if``) is evaluated at every point of the grid and every ``tt.dot`` it reaches
adds ``2 * M * N * K``: a causal flash kernel whose key loop stops at the diagonal costs the tiles it visits. A branch
or a bound on data (a pointer load) is :class:`~maxflops.xla.mosaic.NotPriceable`, named by the caller.
"""

from __future__ import annotations

import functools
import hashlib
import re

from .mosaic import Kernel, NotPriceable, _Block, _Op, parse_module, price
from .stablehlo import dict_text, mlir_string_bytes

_FIELD = re.compile(r'\b(grid_[xyz]|name)\s*=\s*("(?:[^"\\]|\\.)*"|-?\d+)')
_IR = re.compile(r'\bir\s*=\s*"((?:[^"\\]|\\.)*)"')


def config_of(backend_config: str) -> tuple[str, tuple[int, int, int], bytes]:
    """(name, launch grid, the kernel's MLIR bytecode) from the custom call's backend config: the dictionary as MLIR
    prints it (``{debug = false, grid_x = 2 : i32, ..., ir = "ML\\EFR..."}``), or that text as a JSON string."""
    text = dict_text(backend_config)
    fields = {k: v for k, v in _FIELD.findall(text)}
    m = _IR.search(text)
    if m is None or not all(f"grid_{a}" in fields for a in "xyz"):
        raise NotPriceable("the Triton call's backend config holds no kernel (ir) or no launch grid")
    name = fields.get("name", '"?"').strip('"')
    return name, tuple(int(fields[f"grid_{a}"]) for a in "xyz"), mlir_string_bytes(m.group(1))


@functools.lru_cache(maxsize=128)
def _load_cached(digest: str, name: str, grid: tuple, body: bytes) -> Kernel:
    del digest
    return parse_module(body, _triton_kernel(name, grid))


def load_kernel(name: str, grid: tuple[int, int, int], body: bytes) -> Kernel:
    return _load_cached(hashlib.sha1(body).hexdigest(), name, grid, body)


def _triton_kernel(name: str, grid: tuple):
    """How a Triton module becomes a :class:`Kernel`: its ``tt.func``, with the three program ids as the body's first
    arguments (``tt.get_program_id`` reads them) and the launch grid as the kernel's grid."""

    def build(funcs, block, fresh):
        main = next((f for f in funcs if f.name == "tt.func"), None)
        if main is None:
            raise NotPriceable("the Triton module holds no tt.func")
        for f in funcs:
            if f is not main and "tt.dot" in str(f):
                raise NotPriceable("a matmul in a helper function of the Triton module: calls are not followed")
        pids = tuple(fresh() for _ in range(3))
        body = block(main.regions[0].blocks[0], functools.partial(_program_id, pids))
        return Kernel(name, grid, 0, (("index",),) * 3, _Block(pids + body.args, body.ops), 0)

    return build


def _program_id(pids: tuple, op, name: str, slot):
    """Triton's ``tt.get_program_id`` (its axis in the op's properties, ``<0 : i32>``) read as a copy of that program
    id; None for every other op."""
    if name != "tt.get_program_id":
        return None
    m = re.search(r"<(\d+)\s*:\s*i32>", str(op))
    if m is None:
        raise NotPriceable(f"a program id without an axis: {str(op)[:80]}")
    return _Op("arith.bitcast", (slot(op.results[0]),), (pids[int(m.group(1))],), {}, (), (("int", 32),))


def price_call(backend_config: str):
    """The :class:`~maxflops.xla.mosaic.KernelPrice` of one call."""
    name, grid, body = config_of(backend_config)
    return price(load_kernel(name, grid, body), [])
