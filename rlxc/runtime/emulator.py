"""Runs a launch-level module's generated kernels on the CPU: each kernel's
CUDA C++ source, with rlx_kernels.cuh and `emulator_prelude.h` (RLX_EMULATE:
plain C++ for the header's inline PTX), compiled by the host's C++ compiler
into a program that runs every CUDA thread of a block as an OS thread
(barriers, warp shuffles and shared memory as on the GPU), the blocks of a
launch one after another (the blocks of a cluster at once, each with its own
shared memory, their statistics met through each other's slots; so too the
blocks a kernel needs resident together, `rlx.co_resident`: the grid forms,
whose blocks meet through global counters), over host
copies of the arena and the parameter buffer laid out as the runtime lays
them out on the device.

So values of the generated kernels are checked where no GPU is (CI): the same
source NVRTC compiles, the same launch geometry, the same arena offsets.

    outs = emulator.run(module, {"x": x}, params, headers=HEADERS)

What it does not run (`EmulationUnsupported`, naming the op or kernel):
cuBLASLt gemms (`rlx_cuda.gemm`; lower with `gemm=kernel`), kernels whose
blocks must be resident together by more than MAX_BLOCKS (the grid forms
lowered for a GPU's multiprocessors: lower for a few, `sm_count=8`),
tensor-core and cp.async PTX (the fused attention kernels' 16-bit forms). Where the source has an arch branch, it takes the one for
no `__CUDA_ARCH__` (the pre-sm_80 forms of a few paired conversions, which
round the same). `rlx_ex2f` and `rlx_erfcc_t` are exact here where the GPU's
are within 2 ulp.

`sanitize="address"` or `"thread"` builds the program with that sanitizer
(out-of-bounds accesses, races between the threads of a block); a report
is an `EmulationError`. Programs are cached by a hash of what they are built
from under the kernel cache (`rlxc.runtime.nvrtc.cache_dir()`)/emulator,
written atomically; the prelude is precompiled once per compiler and flags
(g++). A module's kernels share one program (each in a namespace of its own,
its macros undefined after it), its launches run in one process.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp

from rlxc.dialects import plan as P
from rlxc.dialects import rlx_cuda
from rlxc.dialects.types import tensor_bytes
from rlxc.runtime import binding
from rlxc.runtime.device_arrays import from_device_bytes, to_device_bytes
from rlxc.runtime.nvrtc import cache_dir
from rlxc.signature import check_named_inputs, signature

PRELUDE = Path(__file__).with_name("emulator_prelude.h")
#: seconds a module's launches may take in all before the run counts as hung
#: (a barrier or shuffle some threads never reach)
TIMEOUT_S = 300
#: bytes of dynamic shared memory a block may use (sm_90's most)
DYNAMIC_SMEM = 232448
#: CUDA threads a module's launches may add up to where a run is to take
#: seconds (each is an OS thread here): the tests and the fuzz skip larger
#: graphs (`launched_threads`)
QUICK_MAX_THREADS = 200_000
#: blocks that run at once at most: a cluster's, or those a kernel needs
#: resident together (the prelude's RLX_EMU_MAX_BLOCKS, which must equal it)
MAX_BLOCKS = 16
_UNSUPPORTED_PTX = ("mma.sync", "ldmatrix", "cp.async", "mapa.u64", "barrier.cluster")


class EmulationUnsupported(Exception):
    """The module has an op or kernel the emulator does not run."""


class EmulationError(Exception):
    """A kernel did not build or run on the CPU (the compiler's or the
    program's message, the sanitizer's report, or a hang)."""


class EmulationTimeout(EmulationError):
    """The launches did not finish in TIMEOUT_S: threads waiting at a barrier
    or shuffle others never reach, or a kernel too slow as OS threads (many
    barriers a thread: a block looping over thousands of rows)."""


def compiler() -> str | None:
    """The host C++ compiler the emulator uses (CXX, else g++ or clang++),
    None where there is none."""
    for c in (os.environ.get("CXX"), "g++", "clang++"):
        if c and shutil.which(c):
            return c
    return None


@functools.lru_cache(maxsize=None)
def available(sanitize: str | None = None) -> bool:
    """Whether the host compiler builds and runs a program of the prelude
    (C++20's <barrier>, x86-64's _Float16: GCC 12 or a recent clang), with
    `sanitize`'s runtime where given: threads at a block barrier and a warp
    shuffle, f16 conversions."""
    cxx = compiler()
    if cxx is None:
        return False
    flags = _flags(sanitize)
    probe = r"""
#include "rlx_emu_prelude.h"
int main() {
  blockDim = {32, 1, 1};
  rlx_emu_blocks[0].reset(32);
  int sum[32];
  std::vector<std::thread> ts;
  for (unsigned t = 0; t < 32; ++t)
    ts.emplace_back([&, t] {
      threadIdx = {t, 0, 0};
      __syncthreads();
      sum[t] = __shfl_xor_sync(0xffffffffu, (int)t, 1);
      rlx_emu_blocks[0].leave();
    });
  for (auto& t : ts) t.join();
  return sum[0] == 1 && sum[1] == 0 && rlx_emu_f16_to_float(rlx_emu_float_to_f16(0.1f)) == 0.0999755859375f ? 0 : 1;
}
"""
    try:
        root = cache_dir() / "emulator"
        root.mkdir(parents=True, exist_ok=True)
        prelude = _prelude_dir(cxx, flags, root)
        with tempfile.TemporaryDirectory(dir=root) as tmp:
            (Path(tmp) / "probe.cpp").write_text(probe)
            exe = Path(tmp) / "probe"
            built = subprocess.run([cxx, *flags, "-I", str(prelude), "-o", str(exe), str(Path(tmp) / "probe.cpp")],
                                   capture_output=True, timeout=120)
            return built.returncode == 0 and subprocess.run([str(exe)], capture_output=True, timeout=60,
                                                            env=_env()).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _entry_params(source: str, entry: str) -> list[str]:
    """The C types of the kernel entry's parameters, in order."""
    m = re.search(rf"\b{re.escape(entry)}\s*\(([^)]*)\)\s*\{{", source)
    if m is None:
        raise EmulationError(f"no definition of the entry {entry} in its source")
    types = []
    for p in m.group(1).split(","):
        p = p.replace("__restrict__", "").strip()
        if p:
            types.append(re.sub(r"\s*\b\w+$", "", p).strip())
    return types


def check_supported(kernel: rlx_cuda.KernelOp) -> None:
    """Raises EmulationUnsupported, naming the kernel, for one this does not run."""
    src, entry = kernel.source.data, kernel.entry.data
    for what in _UNSUPPORTED_PTX:
        if what in src:
            raise EmulationUnsupported(f"kernel @{kernel.sym_name.data} ({entry}) uses PTX `{what}`")
    if (g := _co_resident(kernel)) > MAX_BLOCKS:
        raise EmulationUnsupported(f"kernel @{kernel.sym_name.data} ({entry}) needs {g} blocks resident together "
                                   f"(this runs {MAX_BLOCKS} at once at most: lower for fewer multiprocessors)")


def _co_resident(kernel: rlx_cuda.KernelOp) -> int:
    attr = kernel.attributes.get(rlx_cuda.CO_RESIDENT)
    return attr.value.data if isinstance(attr, IntegerAttr) else 0


def blocks_at_once(kernel: rlx_cuda.KernelOp) -> int:
    """The blocks that run at once: the kernel's clusters' (`__cluster_dims__(C,
    1, 1)`) or, where its blocks wait for each other (`rlx.co_resident`: G
    blocks, consecutive in the grid or in the order they take tickets, meet
    through global memory), G; 1 otherwise."""
    m = re.search(r"__cluster_dims__\(\s*(\d+)\s*,\s*1\s*,\s*1\s*\)", kernel.source.data)
    if m is None and "__cluster_dims__" in kernel.source.data:
        raise EmulationUnsupported(f"kernel @{kernel.sym_name.data}: clusters other than C x 1 x 1")
    if m and int(m.group(1)) > MAX_BLOCKS:
        raise EmulationUnsupported(f"kernel @{kernel.sym_name.data}: clusters of {m.group(1)} blocks "
                                   f"(this runs {MAX_BLOCKS} at once at most)")
    return int(m.group(1)) if m else max(1, _co_resident(kernel))


def launched_threads(module: ModuleOp) -> int:
    """The CUDA threads of all the module's launches together."""
    return sum(math.prod(op.grid.get_values()) * math.prod(op.block.get_values())
               for op in module.walk() if isinstance(op, rlx_cuda.LaunchOp))


def _namespace(i: int, rank: int, c: int) -> str:
    """The namespace of kernel i's copy for block `rank` of the `c` that run
    at once (one copy where c is 1)."""
    return f"rlx_emu_k{i}_r{rank}" if c > 1 else f"rlx_emu_k{i}"


def _kernel_text(kernel: rlx_cuda.KernelOp, i: int, c: int) -> str:
    """The kernel in a namespace of its own (its static helpers apart from
    other kernels', its entry of C++ linkage), its 16-bit register fences as 32-bit ones, dynamic
    shared memory a static array, and a function that calls its entry
    with the arguments of the launch at hand; a kernel whose C blocks run at
    once (`blocks_at_once`) C times over, so that each of those blocks has
    its own shared memory (its function-local statics), the copies sharing
    the first's `__device__` variables."""
    check_supported(kernel)
    return "".join(_kernel_text_once(kernel, _namespace(i, r, c), _namespace(i, 0, c) if r else "") for r in range(c))


#: a `__device__` variable at file scope (the grid forms' tickets, arrival
#: counters and parts): its name
_DEVICE_VAR = re.compile(r"^__device__\s+[^;(]*?\b(\w+)\s*(?:\[[^\]]*\])?\s*(?:=\s*[^;]*)?;", re.M)


def _kernel_text_once(kernel: rlx_cuda.KernelOp, ns: str, shared_with: str = "") -> str:
    """`shared_with`: the namespace of the copy whose `__device__` variables
    this one's stand for (they are the module's, one for all blocks)."""
    src, entry = kernel.source.data, kernel.entry.data
    if shared_with:
        src = _DEVICE_VAR.sub(lambda m: f"static auto& {m.group(1)} = {shared_with}::{m.group(1)};", src)
    # C++ linkage: the entry is its namespace's (a cluster kernel's copies share its name)
    body = src.replace('#include "rlx_kernels.cuh"', "").replace('"+h"(', '"+r"(').replace('extern "C" ', "")
    body = re.sub(r"extern\s+__shared__\s+([^;\[]*?)(\w+)\s*\[\s*\]\s*;",
                  rf"static \1\2[{DYNAMIC_SMEM}];", body)
    args = ", ".join(f"({t})rlx_emu_arg({j})" for j, t in enumerate(_entry_params(src, entry)))
    undef = "".join(f"#undef {m}\n" for m in dict.fromkeys(re.findall(r"^\s*#\s*define\s+(\w+)", body, re.M)))
    # NVRTC compiles each kernel alone: its macros end with it here
    return f"namespace {ns} {{\n{body}\nstatic void call() {{ {entry}({args}); }}\n}}\n{undef}"


_MAIN = """
// argv: arena params launches. Each line of `launches`: the kernel's index,
// grid x y z, block x y z, the argument count, then a kind (0 arena, 1
// params, 2 value) and a number per argument. The arena is written back.
static unsigned char* rlx_emu_load(const char* path, size_t* n) {
  FILE* f = std::fopen(path, "rb");
  if (!f) { std::perror(path); std::exit(2); }
  std::fseek(f, 0, SEEK_END); *n = (size_t)std::ftell(f); std::fseek(f, 0, SEEK_SET);
  unsigned char* p = (unsigned char*)std::aligned_alloc(256, (*n + 255) / 256 * 256 + 256);
  if (*n && std::fread(p, 1, *n, f) != *n) { std::perror(path); std::exit(2); }
  std::fclose(f);
  return p;
}
int main(int argc, char** argv) {
  if (argc != 4) { std::fprintf(stderr, "usage: arena params launches\\n"); return 2; }
  size_t arena_n, params_n;
  rlx_emu_buffers[0] = rlx_emu_load(argv[1], &arena_n);
  rlx_emu_buffers[1] = rlx_emu_load(argv[2], &params_n);
  FILE* lf = std::fopen(argv[3], "r");
  if (!lf) { std::perror(argv[3]); return 2; }
  int k, nargs;
  while (std::fscanf(lf, "%d %u %u %u %u %u %u %d", &k, &gridDim.x, &gridDim.y, &gridDim.z,
                     &blockDim.x, &blockDim.y, &blockDim.z, &nargs) == 8) {
    for (int i = 0; i < nargs; ++i)
      if (std::fscanf(lf, "%lld %lld", &rlx_emu_args[i][0], &rlx_emu_args[i][1]) != 2) return 2;
    // C blocks at once (a cluster's, or those that must be resident together; else 1), its threads rank by rank
    const int per_block = (int)(blockDim.x * blockDim.y * blockDim.z), C = rlx_emu_at_once[k];
    const int threads = C * per_block;
    if (gridDim.x % C) { std::fprintf(stderr, "a grid of %u blocks, %d at once\\n", gridDim.x, C); return 2; }
    std::barrier<> between(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        const unsigned l = (unsigned)(t % per_block);
        rlx_emu_rank = (unsigned)(t / per_block);
        threadIdx = {l % blockDim.x, (l / blockDim.x) % blockDim.y, l / (blockDim.x * blockDim.y)};
        for (unsigned z = 0; z < gridDim.z; ++z)
          for (unsigned y = 0; y < gridDim.y; ++y)
            for (unsigned x = 0; x < gridDim.x; x += C) {
              if (t == 0) {
                for (int b = 0; b < C; ++b) rlx_emu_blocks[b].reset(per_block);
                rlx_emu_cluster.reset(threads);
              }
              between.arrive_and_wait();
              blockIdx = {x + rlx_emu_rank, y, z};
              rlx_emu_kernels[k][rlx_emu_rank]();
              rlx_emu_blocks[rlx_emu_rank].leave();
              rlx_emu_cluster.leave();
              between.arrive_and_wait();
            }
      });
    for (auto& th : pool) th.join();
    std::printf("done %d\\n", k);
    std::fflush(stdout);
  }
  std::fclose(lf);
  FILE* f = std::fopen(argv[1], "wb");
  if (!f || std::fwrite(rlx_emu_buffers[0], 1, arena_n, f) != arena_n) { std::perror(argv[1]); return 2; }
  std::fclose(f);
  return 0;
}
"""


def _program_text(kernels: list[rlx_cuda.KernelOp]) -> str:
    """One host program for a module's kernels: the prelude and the header,
    the argument table, each kernel, the table of their calls, and a main
    that runs the launches listed in a file over the arena and the
    parameter buffer (`_MAIN`)."""
    head = [
        '#include "rlx_emu_prelude.h"',
        '#include "rlx_kernels.cuh"',
        f'static_assert(RLX_EMU_MAX_BLOCKS == {MAX_BLOCKS}, "emulator.MAX_BLOCKS and the prelude\'s disagree");',
        "static unsigned char* rlx_emu_buffers[2];",
        "static long long rlx_emu_args[256][2];",
        "static unsigned long long rlx_emu_arg(int i) {",
        "  const long long kind = rlx_emu_args[i][0], v = rlx_emu_args[i][1];",
        "  return kind == 2 ? (unsigned long long)v : (unsigned long long)(rlx_emu_buffers[kind] + v);",
        "}",
    ]
    at_once = [blocks_at_once(k) for k in kernels]

    def calls(i: int, c: int) -> str:
        return "{" + ", ".join(f"{_namespace(i, r, c)}::call" for r in range(c)) + "}"
    table = (f"static void (*rlx_emu_kernels[][{MAX_BLOCKS}])() = {{" + ", ".join(calls(i, c) for i, c in enumerate(at_once)) + "};\n"
             + "static const int rlx_emu_at_once[] = {" + ", ".join(map(str, at_once)) + "};")
    kernel_texts = "".join(_kernel_text(k, i, c) for i, (k, c) in enumerate(zip(kernels, at_once)))
    return "\n".join(head) + "\n" + kernel_texts + table + "\n" + _MAIN


def _flags(sanitize: str | None) -> list[str]:
    flags = ["-std=c++20", "-O1", "-w", "-pthread", "-DRLX_EMULATE", "-fno-strict-aliasing"]
    if sanitize:
        flags += [f"-fsanitize={sanitize}", "-fno-omit-frame-pointer", "-g"]
    return flags


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def _prelude_dir(cxx: str, flags: list[str], root: Path) -> Path:
    """A folder with the prelude as `rlx_emu_prelude.h` and, for g++, its
    precompiled form beside it (the C++ library headers it includes take
    most of a kernel's build otherwise), made once per compiler and flags;
    made whole in a temporary folder, then renamed into place."""
    text = PRELUDE.read_text()
    final = root / f"prelude-{_digest(text, cxx, ' '.join(flags))}"
    if final.exists():
        return final
    tmp = Path(tempfile.mkdtemp(dir=root))
    (tmp / "rlx_emu_prelude.h").write_text(text)
    if "g++" in Path(cxx).name:  # a failed precompile only costs time: the header is still there
        subprocess.run([cxx, *flags, "-x", "c++-header", str(tmp / "rlx_emu_prelude.h"), "-o",
                        str(tmp / "rlx_emu_prelude.h.gch")], capture_output=True)
    try:
        os.rename(tmp, final)
    except OSError:  # another process made it first
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def _build(kernels: list[rlx_cuda.KernelOp], headers: Mapping[str, str], sanitize: str | None) -> Path:
    """The host program of a module's kernels (built once, cached by content)."""
    cxx = compiler()
    if cxx is None:
        raise EmulationUnsupported("no host C++ compiler (g++ or clang++; CXX names another)")
    text = _program_text(kernels)
    flags = _flags(sanitize)
    root = cache_dir() / "emulator"
    exe = root / _digest(text, PRELUDE.read_text(), cxx, " ".join(flags),
                         *(f"{k}\0{v}" for k, v in sorted(headers.items())))
    if exe.exists():
        return exe
    root.mkdir(parents=True, exist_ok=True)
    prelude = _prelude_dir(cxx, flags, root)
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        for name, content in headers.items():
            (Path(tmp) / name).write_text(content)
        (Path(tmp) / "kernels.cpp").write_text(text)
        out = Path(tmp) / "k"
        r = subprocess.run([cxx, *flags, "-I", str(prelude), "-I", tmp, "-o", str(out), str(Path(tmp) / "kernels.cpp")],
                           capture_output=True, text=True)
        if r.returncode:
            keep = root / f"{exe.name}.cpp"
            shutil.copy(Path(tmp) / "kernels.cpp", keep)
            names = ", ".join(f"@{k.sym_name.data}" for k in kernels)
            raise EmulationError(f"{cxx} could not build the kernels ({names}); source: {keep} "
                                 f"(with -I {prelude})\n{r.stderr[-4000:]}")
        os.replace(out, exe)  # atomic: a half-written program is never found
    return exe


def run(module: ModuleOp, inputs: Mapping[str, object], params: Mapping[str, np.ndarray] | None = None, *,
        headers: Mapping[str, str], poison: bool = True, sanitize: str | None = None) -> list[np.ndarray]:
    """The outputs of the module's entry function, lowered by `rlx-cuda`,
    for host `inputs` (by name) and `params`, its kernels run on the CPU.
    `poison` fills the arena with 0xFF bytes first, as `CudaExecutable.run`
    does on request (a value read before it is written shows as NaN)."""
    from rlxc.runtime.executable import param_images  # its module imports the CUDA bindings lazily

    sig = signature(module)
    f = sig.func
    fplan = P.function_plan(f)
    if fplan is None:
        raise EmulationUnsupported(f"@{f.sym_name.data} is not planned: lower it with rlx-cuda first")
    arena = np.full(max(fplan.arena_bytes, P.ALIGN), 0xFF if poison else 0, np.uint8)
    pbuf = np.zeros(max(P.param_bytes(f), P.ALIGN), np.uint8)
    for off, data, _ in param_images(f, params or {}):
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        pbuf[off: off + raw.size] = raw
    args = check_named_inputs(sig, inputs)
    for (_, t), off, a in zip(sig.inputs, fplan.arg_offsets, args):
        raw = np.ascontiguousarray(to_device_bytes(np.asarray(a), t)).reshape(-1).view(np.uint8)
        arena[off: off + raw.size] = raw
    kernels = [k for k in module.ops if isinstance(k, rlx_cuda.KernelOp)]
    index = {k.sym_name.data: i for i, k in enumerate(kernels)}
    launches, what = [], []
    for i, op in enumerate(f.body.block.ops):
        if isinstance(op, rlx_cuda.LaunchOp):
            sym = op.kernel.root_reference.data
            grid, block = list(op.grid.get_values()), list(op.block.get_values())
            kargs = [f"{ {'arena': 0, 'param': 1, 'i64': 2}[a.kind.data]} {a.value.value.data}" for a in op.args.data]
            launches.append(" ".join(map(str, [index[sym], *grid, *[1] * (3 - len(grid)), *block,
                                               *[1] * (3 - len(block)), len(kargs), *kargs])))
            what.append(f"launch #{len(what)} (op #{i}) of @{sym} ({kernels[index[sym]].entry.data}, "
                        f"grid {grid}, block {block})")
        elif isinstance(op, rlx_cuda.GemmOp):
            raise EmulationUnsupported(f"op #{i} (rlx_cuda.gemm) runs on cuBLASLt: lower with gemm=kernel")
        elif isinstance(op, rlx_cuda.CopyOp):
            raise EmulationUnsupported(f"op #{i} (rlx_cuda.copy)")
    if launches:
        exe = _build(kernels, headers, sanitize)
        with tempfile.TemporaryDirectory() as tmp:
            paths = [Path(tmp) / n for n in ("arena", "params", "launches")]
            arena.tofile(paths[0])
            pbuf.tofile(paths[1])
            paths[2].write_text("\n".join(launches) + "\n")
            _execute(exe, paths, what)
            arena = np.fromfile(paths[0], np.uint8)
    ret = f.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    outs = []
    for v, t in zip(ret.arguments, sig.outputs):
        loc = binding.location(f, fplan.arg_offsets, v)
        off, n = loc.value.value.data, tensor_bytes(t)
        buf = pbuf if loc.kind.data == "param" else arena
        outs.append(from_device_bytes(buf[off: off + n].copy(), t))  # pyright: ignore[reportArgumentType]
    return outs


def _env() -> dict[str, str]:
    """The programs' environment: the warp barriers live as long as the
    process (not leaks), a race stops the run."""
    return dict(os.environ, ASAN_OPTIONS="detect_leaks=0", TSAN_OPTIONS="halt_on_error=1")


def _execute(exe: Path, paths: list[Path], what: list[str]) -> None:
    """Runs the program over the files; a failure names the launch that
    was running (the program prints each one it finishes)."""
    try:
        r = subprocess.run([str(exe), *map(str, paths)], capture_output=True, text=True, timeout=TIMEOUT_S, env=_env())
    except subprocess.TimeoutExpired as e:
        done = (e.stdout or b"").count(b"done") if isinstance(e.stdout, bytes) else (e.stdout or "").count("done")
        raise EmulationTimeout(f"{what[min(done, len(what) - 1)]} did not finish in {TIMEOUT_S} s (threads waiting "
                               "at a barrier or shuffle that others never reach, or too slow here?)") from None
    done = r.stdout.count("done")
    if r.returncode or "Sanitizer" in r.stderr:
        raise EmulationError(f"{what[min(done, len(what) - 1)]} failed (exit {r.returncode}):\n{r.stderr[-6000:]}")


__all__ = ["QUICK_MAX_THREADS", "EmulationError", "EmulationTimeout", "EmulationUnsupported", "available",
           "check_supported", "compiler", "launched_threads", "run"]
