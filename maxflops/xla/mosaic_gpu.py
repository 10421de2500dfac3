"""Pallas Mosaic GPU kernels priced from their own code: the module a ``mosaic_gpu_v2`` custom call carries, run
over its launch, block by block and warp by warp.

A Pallas kernel for an NVIDIA Hopper or Blackwell GPU written with ``jax.experimental.pallas.mosaic_gpu`` (jax's
FlashAttention 3, ``attention_mgpu``; its Hopper and Blackwell matmuls; tokamax's ``mosaic_gpu`` implementations)
lowers to one custom call whose backend config holds the kernel as MLIR bytecode (``module``), already lowered to
the GPU's threads: a host function whose ``gpu.launch`` carries the grid, the threads of a block and the body every
thread runs. XLA's cost analysis does not look inside (0 FLOPs). As for a Mosaic TPU kernel
(:mod:`maxflops.xla.mosaic`, whose evaluator this reuses), the body's scalar program is evaluated and every matrix
instruction it reaches is counted:

- the body runs once per block of the grid and once per warp of the block, lane 0 standing for its warp (a kernel
  specializes its work by warpgroup, ``thread_id // 128``, or by warp); ``elect.sync`` picks that lane, an index
  shuffle from lane 0 is its own value;
- a Hopper ``wgmma.mma_async`` (the inline PTX Mosaic GPU emits, or NVVM's op) adds ``2 * m * n * k`` of its shape
  (``m64n128k16``), once per warpgroup (its four warps issue it together: counted at the first);
- a Blackwell ``tcgen05.mma``, issued by one thread, adds ``2 * M * N * K``: M and N from its instruction descriptor
  (an operand the program fixes), K from its kind; a pair of blocks issues one MMA of both blocks' rows;
- Blackwell's work stealing (cluster launch control) is answered "nothing stolen": each block runs the tile it was
  launched for, the same work in total as any stealing would share out;
- block dimensions the pruned program never reads (a batch or head index used only to address memory) are
  evaluated once and multiplied by their size, which is exact: nothing that decides a matmul reads them.

So a causal kernel's key loop that stops at the diagonal costs the tiles it visits, and a persistent kernel's loop
over output tiles costs the tiles it takes. What the evaluation cannot fix (a branch on data, a descriptor built from
data, a sparse or warp-level MMA) is :class:`~maxflops.xla.mosaic.NotPriceable`, named by the caller as not counted.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import re

from .mosaic import _INT_BINARY, Kernel, KernelPrice, NotPriceable, _Op, _Run, _wrap, parse_module
from .stablehlo import dict_text, mlir_string_bytes

_MODULE = re.compile(r'\bmodule\s*=\s*"((?:[^"\\]|\\.)*)"')
_WGMMA = re.compile(r"\bwgmma\.mma_async(\.sp)?\.sync\.aligned\.m(\d+)n(\d+)k(\d+)\.(\w+)\.(\w+)\.(\w+)")
_WARP_MMA = re.compile(r"(?<![\w.])mma\.(sync|sp)\b")
_WARPGROUP = 128
_WARP = 32
_DIMS = {"x": 0, "y": 1, "z": 2}


def module_of(backend_config: str) -> bytes:
    """The kernel's MLIR bytecode from the custom call's backend config: the dictionary as MLIR prints it
    (``{kernel_hash = "...", module = "ML\\EFR..."}``), or that text as a JSON string."""
    text = dict_text(backend_config)
    m = _MODULE.search(text)
    if m is None:
        raise NotPriceable("the mosaic_gpu_v2 call's backend config holds no kernel module")
    return mlir_string_bytes(m.group(1))


def _read(op, name: str, slot):
    """Mosaic GPU's own readings of an op: an MMA as ``gpu.mma`` with its price; the ids and sizes with their
    dimension; None for every other op."""
    if name == "llvm.inline_asm":
        text = str(op.attributes["asm_string"]) if "asm_string" in op.attributes else ""
        if "tcgen05.mma" in text:
            return _tcgen05(op, slot, text)
        if "clusterlaunchcontrol.query_cancel.is_canceled" in text:
            # Blackwell's work stealing: a block asks whether it took a block not yet launched. Answered "no":
            # every block then runs the tile it was launched for, which is the same work in total (each tile once)
            return _Op("gpu.not_canceled", tuple(slot(r) for r in op.results), (), {}, (), (("other",),))
        if "wgmma.mma_async" not in text:
            if _WARP_MMA.search(text):
                raise NotPriceable(f"a warp-level MMA ({text[:60]}): not priced")
            return None                                  # fences, commits, waits and every other instruction
        m = _WGMMA.search(text)
        if m is None:
            raise NotPriceable(f"a wgmma this pricer does not read: {text[:80]}")
        if m.group(1):
            raise NotPriceable(f"a sparse wgmma ({m.group(0)}): not priced")
        return _mma(op, slot, int(m.group(2)), int(m.group(3)), int(m.group(4)), m.group(6))
    if name == "nvvm.wgmma.mma_async":
        m = re.search(r"m\s*=\s*(\d+)\s*,\s*n\s*=\s*(\d+)\s*,\s*k\s*=\s*(\d+)", str(op.attributes["shape"]))
        if m is None:
            raise NotPriceable(f"a wgmma without a shape: {str(op)[:80]}")
        return _mma(op, slot, *map(int, m.groups()), "")
    if name.startswith("nvvm.tcgen05.mma") or name.startswith("nvvm.mma"):
        raise NotPriceable(f"{name}: an MMA this pricer does not decode")
    if name in _IDS:
        # the dimension as jaxlib prints it: #gpu<dim x> (MLIR of jax 0.10), #gpu.dim<x> (later)
        dim = re.search(r"\bdim\W+([xyz])\b", str(op.attributes["dimension"])) if "dimension" in op.attributes \
            else None
        if dim is None:
            raise NotPriceable(f"{name} without a dimension")
        return _Op(name, (slot(op.results[0]),), (), {"dim": _DIMS[dim.group(1)]}, (), (("index",),))
    if name == "llvm.extractvalue":
        pos = re.findall(r"-?\d+", str(op.attributes["position"]).partition(":")[2]) \
            if "position" in op.attributes else []
        return _Op(name, (slot(op.results[0]),), (slot(op.operands[0]),), {"pos": tuple(map(int, pos))}, (),
                   (("other",),))
    if name == "nvvm.shfl.sync":
        kind = str(op.attributes["kind"]) if "kind" in op.attributes else ""
        return _Op(name, tuple(slot(r) for r in op.results), tuple(slot(x) for x in op.operands),
                   {"idx": "idx" in kind}, (), (("int", 32),))
    return None


def _mma(op, slot, m: int, n: int, k: int, dtype: str) -> _Op:
    shape = f"wgmma m{m}n{n}k{k}" + (f" {dtype}" if dtype else "")
    return _Op("gpu.mma", tuple(slot(r) for r in op.results), tuple(slot(x) for x in op.operands),
               {"shape": shape, "flops": 2 * m * n * k}, (), tuple(("other",) for _ in op.results))


# K of one tcgen05.mma by its kind (PTX ISA, tcgen05.mma): 32 bytes of A's row for every kind but tf32's 8 and
# the 4-bit kinds' 64
_TCGEN05_K = {"f16": 16, "tf32": 8, "f8f6f4": 32, "i8": 32, "mxf8f6f4": 32, "mxf4": 64, "mxf4nvf4": 64}
_TCGEN05 = re.compile(r"\btcgen05\.mma(\.sp)?\.cta_group::(\d)\.kind::(\w+)[^\s]*\s+"
                      r"\[[^\]]*\]\s*,\s*[^,]+,\s*[^,]+,\s*\$(\d+)")


def _tcgen05(op, slot, text: str) -> _Op:
    """A Blackwell ``tcgen05.mma``: its kind gives K, its instruction descriptor (an operand, a constant in the
    programs Mosaic GPU writes) M and N, read when the evaluation reaches it."""
    m = _TCGEN05.search(text)
    if m is None or m.group(3) not in _TCGEN05_K:
        raise NotPriceable(f"a tcgen05.mma this pricer does not read: {' '.join(text.split())[:120]}")
    if m.group(1):
        raise NotPriceable("a sparse tcgen05.mma: not priced")
    desc = slot(op.operands[int(m.group(4))])
    return _Op("gpu.mma_desc", tuple(slot(r) for r in op.results), tuple(slot(x) for x in op.operands),
               {"reads": (desc,), "desc": desc, "k": _TCGEN05_K[m.group(3)], "kind": m.group(3)}, (),
               tuple(("other",) for _ in op.results))


def _tcgen05_price(run, op, vals):
    """M and N from the instruction descriptor (bits 17-22: N >> 3, bits 24-28: M >> 4), K from the kind."""
    desc = run.env[op.attrs["desc"]]
    if desc is None:
        raise NotPriceable(f"kernel {run.k.name}: a tcgen05.mma whose instruction descriptor the program does not fix")
    n, m, k = ((desc >> 17) & 0x3F) << 3, ((desc >> 24) & 0x1F) << 4, op.attrs["k"]
    _hit(run, (id(op), desc), f"tcgen05 m{m}n{n}k{k} {op.attrs['kind']}", 2 * m * n * k)
    return [None] * len(op.results)


def _hit(run, key, shape: str, flops: int) -> None:
    if key not in run.hits:
        run.hits[key] = [shape, flops, 0]
    run.hits[key][2] += 1
    run.point_flops += flops


_IDS = ("gpu.block_id", "gpu.thread_id", "gpu.block_dim", "gpu.grid_dim", "gpu.cluster_id", "gpu.cluster_block_id",
        "gpu.cluster_dim", "gpu.cluster_dim_blocks", "gpu.lane_id")


def _build(funcs, block, fresh) -> Kernel:
    host = [f for f in funcs if _has_launch(f)]
    if len(host) != 1:
        raise NotPriceable(f"the Mosaic GPU module holds {len(host)} functions with a gpu.launch (one expected)")
    f = host[0]
    name = str(f.attributes["sym_name"]).strip('"') if "sym_name" in f.attributes else "?"
    body = block(f.regions[0].blocks[0], _read)
    return Kernel(name, (), 0, (), body, 0)


def _has_launch(f) -> bool:
    for r in f.regions:
        for b in r.blocks:
            for o in b.operations:
                if o.operation.name.endswith("gpu.launch"):
                    return True
    return False


@functools.lru_cache(maxsize=64)
def _load_cached(digest: str, body: bytes) -> Kernel:
    del digest
    return parse_module(body, _build)


def load_kernel(body: bytes) -> Kernel:
    return _load_cached(hashlib.sha1(body).hexdigest(), body)


# ----------------------------------------------------------------------------------------------------------------------
# Evaluation
# ----------------------------------------------------------------------------------------------------------------------

def _launch_parts(op: _Op, vals: list) -> tuple[tuple, tuple, tuple]:
    """(grid, threads per block, cluster) from a ``gpu.launch``'s operands, by its ``operandSegmentSizes``: the async
    tokens, grid x y z, block x y z, cluster x y z (each 0 or 1), the dynamic shared memory size."""
    sizes = [int(x) for x in re.findall(r"\d+", str(op.attrs.get("operandSegmentSizes", "")).partition(":")[2])]
    if len(sizes) < 7:
        raise NotPriceable(f"a gpu.launch whose operands are not said ({op.attrs.get('operandSegmentSizes')})")
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    part = [vals[starts[i]] if sizes[i] else 1 for i in range(1, min(len(sizes), 10))]
    if any(v is None for v in part):
        raise NotPriceable("a gpu.launch sized by values the program does not fix")
    part += [1] * (9 - len(part))
    return tuple(part[0:3]), tuple(part[3:6]), tuple(part[6:9])


class _Launch:
    """The evaluation of one kernel: handlers for the ids of the block and thread it is at, and the launch."""

    def __init__(self):
        self.block_id = (0, 0, 0)
        self.thread = (0, 0, 0)
        self.grid = self.threads = self.cluster = (1, 1, 1)
        self.launches: list = []                         # (grid, threads per block, blocks with an MMA)

    def handlers(self) -> dict:
        h = {name: self._id for name in _IDS}
        h["gpu.launch"] = self._launch
        h["gpu.mma_desc"] = _tcgen05_price
        h["gpu.mma"] = self._wgmma
        h["gpu.not_canceled"] = lambda run, op, vals: [_NOT_CANCELED]
        h["llvm.extractvalue"] = _extract
        h["nvvm.elect.sync"] = lambda run, op, vals: [1]
        h["nvvm.shfl.sync"] = self._shuffle
        for name, f in _LLVM_INT.items():
            h[name] = _binary(f)
        return h

    def _id(self, run, op, vals):
        d, name = op.attrs["dim"], op.name
        value = {"gpu.block_id": self.block_id[d], "gpu.thread_id": self.thread[d], "gpu.block_dim": self.threads[d],
                 "gpu.grid_dim": self.grid[d], "gpu.cluster_block_id": self.block_id[d] % self.cluster[d],
                 "gpu.cluster_id": self.block_id[d] // self.cluster[d], "gpu.cluster_dim_blocks": self.cluster[d],
                 "gpu.cluster_dim": self.grid[d] // self.cluster[d], "gpu.lane_id": 0}[name]
        return [value]

    def _wgmma(self, run, op, vals):
        # issued by the warpgroup's four warps together: counted at its first
        if self.thread[0] % _WARPGROUP == 0:
            _hit(run, id(op), op.attrs["shape"], op.attrs["flops"])
        return [None] * len(op.results)

    @staticmethod
    def _shuffle(run, op, vals):
        # the thread standing for its warp is lane 0: an index shuffle from lane 0 reads its own value
        _, value, lane, *_ = vals
        return [value if op.attrs.get("idx") and lane == 0 else None, None][:len(op.results)]

    def _launch(self, run, op, vals):
        grid, threads, cluster = _launch_parts(op, vals)
        if threads[1] != 1 or threads[2] != 1 or threads[0] % _WARP:
            raise NotPriceable(f"a block of {threads} threads: whole warps along x expected")
        body = op.regions[0]
        if any(_reads(body, a) for a in body.args[12:]):
            raise NotPriceable("a gpu.launch body reading its cluster arguments: not priced")
        used = _block_dims_read(body)
        saved = (self.grid, self.threads, self.cluster)
        self.grid, self.threads, self.cluster = grid, threads, cluster
        times = {k: h[2] for k, h in run.hits.items()}
        flops = run.point_flops
        blocks_with_mma = 0
        ranges = [range(n) if used[d] else range(1) for d, n in enumerate(grid)]
        for block_id in itertools.product(*ranges):
            self.block_id = block_id
            before = run.point_flops
            for w in range(threads[0] // _WARP):
                self.thread = (w * _WARP, 0, 0)
                ids = [*block_id, *self.thread, *grid, *threads]
                run.block(body, (ids + [None] * len(body.args))[:len(body.args)])
            blocks_with_mma += run.point_flops > before
        weight = math.prod(n for d, n in enumerate(grid) if not used[d])
        if weight > 1:                                   # the dimensions nothing reads: every block alike
            for k, h in run.hits.items():
                h[2] += (h[2] - times.get(k, 0)) * (weight - 1)
            run.point_flops += (run.point_flops - flops) * (weight - 1)
        self.launches.append((grid, threads, blocks_with_mma * weight))
        self.grid, self.threads, self.cluster = saved
        return [None] * len(op.results)


class _Struct(tuple):
    """A struct value the evaluation knows: its fields."""


_NOT_CANCELED = _Struct((None, None, None, 0))          # the ctaid it would have taken, and "not canceled"


def _extract(run, op, vals):
    v = vals[0]
    for i in op.attrs["pos"]:
        v = v[i] if isinstance(v, _Struct) and 0 <= i < len(v) else None
    return [v]


def _binary(f):
    def handle(run, op, vals):
        a, b = vals[0], vals[1]
        kind = op.result_kinds[0]
        if a is None or b is None or kind[0] != "int":
            return [None]
        return [_wrap(f(a, b), kind[1])]
    return handle


# LLVM's integer ops, as arith's (the evaluator's own table)
_LLVM_INT = {f"llvm.{a}": _INT_BINARY[f"arith.{b}"] for a, b in (
    ("add", "addi"), ("sub", "subi"), ("mul", "muli"), ("and", "andi"), ("or", "ori"), ("xor", "xori"),
    ("shl", "shli"), ("lshr", "shrui"), ("ashr", "shrsi"), ("udiv", "divui"), ("urem", "remui"))}


def _block_dims_read(body) -> list[bool]:
    """Which of the launch's block dimensions the pruned body reads (a block id, a cluster id, a region argument)."""
    used = [False, False, False]
    for d in range(3):                                   # the region's own block-id arguments
        if d < len(body.args) and _reads(body, body.args[d]):
            used[d] = True
    for op in _walk(body):
        if op.name in ("gpu.block_id", "gpu.cluster_id", "gpu.cluster_block_id"):
            used[op.attrs["dim"]] = True
    return used


def _walk(b):
    for op in b.ops:
        yield op
        for r in op.regions:
            if r is not None:
                yield from _walk(r)


def _reads(b, s) -> bool:
    return any(s in op.operands for op in _walk(b))


def price(kernel: Kernel) -> tuple[KernelPrice, tuple]:
    """One call's :class:`~maxflops.xla.mosaic.KernelPrice` (grid and blocks with an MMA: its last launch's) and its
    launches, (grid, threads per block, blocks with an MMA) each."""
    launch = _Launch()
    run = _Run(kernel, {}, launch.handlers())
    run.block(kernel.body, [None] * len(kernel.body.args))
    if not launch.launches:
        raise NotPriceable(f"kernel {kernel.name}: no gpu.launch reached")
    matmuls = tuple(tuple(hit) for hit in run.hits.values())
    grid, _, with_mma = launch.launches[-1]
    return KernelPrice(kernel.name, sum(f * n for _, f, n in matmuls), grid, with_mma, matmuls), \
        tuple(launch.launches)


def price_call(backend_config: str) -> tuple[KernelPrice, tuple]:
    return price(load_kernel(module_of(backend_config)))
