"""NVRTC: CUDA C++ source -> cubin for one architecture, with a disk cache.

Compiles to cubin (`--gpu-architecture=sm_XY`), never PTX: a PTX from a newer
NVRTC carries a PTX ISA the installed driver may refuse, while a cubin for the
exact architecture loads. Runs without a GPU, so CI compiles every kernel.

Headers a source includes (`#include "name"`) are given as text, name ->
text (`headers=`; rlxc's kernels need `rlxc.codegen.HEADERS`), and handed
to NVRTC with the program: nothing is read from disk.

The cache (`$RLXC_CACHE_DIR`, else `$XDG_CACHE_HOME/rlxc`, else
`~/.cache/rlxc`) is keyed by a hash of the source, the headers, the
options, the architecture and the NVRTC version. Entries are written
atomically (a temporary file, then a rename) and carry a checksum, so a torn
or corrupt entry is detected and recompiled rather than loaded.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

#: Options every kernel is compiled with: exact math (no fast-math), C++17.
DEFAULT_OPTIONS = ("--std=c++17", "-default-device")

_MAGIC = b"RLXCUBIN1\n"


class NvrtcError(RuntimeError):
    """A kernel failed to compile: carries NVRTC's log and the saved source."""

    def __init__(self, message: str, log: str, source_path: Path | None):
        super().__init__(message)
        self.log = log
        self.source_path = source_path


def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError as e:  # pragma: no cover - a broken install
        raise NvrtcError(
            "NVRTC is not available: install cuda-python and nvidia-cuda-nvrtc", "", None
        ) from e
    return nvrtc


def _check(result, what: str) -> None:
    nvrtc = _nvrtc()
    if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        _, msg = nvrtc.nvrtcGetErrorString(result)
        raise NvrtcError(f"{what} failed: {msg.decode() if isinstance(msg, bytes) else msg}", "", None)


def nvrtc_version() -> str:
    err, major, minor = _nvrtc().nvrtcVersion()
    _check(err, "nvrtcVersion")
    return f"{major}.{minor}"


def cache_dir() -> Path:
    """Where compiled kernels are kept (see the module docstring)."""
    if d := os.environ.get("RLXC_CACHE_DIR"):
        return Path(d)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rlxc"


def cache_key(source: str, arch: str, options: Sequence[str], headers: Mapping[str, str] | None = None) -> str:
    """The cache entry's name: a hash of everything the cubin depends on."""
    h = hashlib.sha256()
    parts = [source, arch, "\0".join(options), nvrtc_version()]
    for name, text in sorted((headers or {}).items()):
        parts += [name, text]
    for part in parts:
        h.update(part.encode())
        h.update(b"\0\1")
    return h.hexdigest()


def write_atomic(path: Path, data: bytes) -> None:
    """Writes `data` to `path` through a temporary file beside it, renamed into
    place: a reader sees the old file or the whole new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # as open() would create it (mkstemp's file is 0600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _read_entry(path: Path) -> bytes | None:
    """The cubin of a cache entry, or None if it is missing or corrupt."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + 32:
        return None
    digest, payload = data[len(_MAGIC) : len(_MAGIC) + 32], data[len(_MAGIC) + 32 :]
    if hashlib.sha256(payload).digest() != digest:
        return None
    return payload


def compile_cubin(
    source: str,
    arch: str,
    name: str = "kernel.cu",
    options: Sequence[str] = DEFAULT_OPTIONS,
    headers: Mapping[str, str] | None = None,
) -> bytes:
    """Compiles `source` to a cubin for `arch` (e.g. "sm_90"), without the
    cache; `headers` (name -> text) are what its `#include "name"`s find.

    On failure raises NvrtcError with the compiler log and the path of a file
    holding the failing source (its headers saved beside it).
    """
    return _compile(source, arch, name, options, headers)[0]


@dataclass(frozen=True)
class Resources:
    """What ptxas reports for a kernel (`-Xptxas -v`): registers per
    thread, bytes spilled to and reloaded from local memory, the stack
    frame, static shared memory; `log` is the whole report."""

    registers: int
    spill_stores: int
    spill_loads: int
    stack: int
    smem: int
    log: str


def resources(source: str, arch: str, name: str = "kernel.cu",
              headers: Mapping[str, str] | None = None) -> Resources:
    """Compiles `source` (uncached, with ptxas' report) and returns what
    its kernel uses (`Resources`; the sums where the source holds several
    kernels). Raises NvrtcError as `compile_cubin` does."""
    import re

    log = _compile(source, arch, name, (*DEFAULT_OPTIONS, "-Xptxas", "-v"), headers)[1]

    def total(pattern: str) -> int:
        return sum(int(m) for m in re.findall(pattern, log))
    return Resources(total(r"Used (\d+) registers"), total(r"(\d+) bytes spill stores"),
                     total(r"(\d+) bytes spill loads"), total(r"(\d+) bytes stack frame"),
                     total(r"(\d+) bytes smem"), log)


def _compile(
    source: str,
    arch: str,
    name: str,
    options: Sequence[str],
    headers: Mapping[str, str] | None,
) -> tuple[bytes, str]:
    """`compile_cubin`'s work: the cubin and NVRTC's log."""
    nvrtc = _nvrtc()
    opts = [*options, f"--gpu-architecture={arch}"]
    headers = dict(headers or {})
    err, prog = nvrtc.nvrtcCreateProgram(
        source.encode(), name.encode(), len(headers),
        [t.encode() for t in headers.values()], [n.encode() for n in headers],
    )  # fmt: skip
    _check(err, "nvrtcCreateProgram")
    try:
        (result,) = nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
        err, log_size = nvrtc.nvrtcGetProgramLogSize(prog)
        log = b" " * log_size
        nvrtc.nvrtcGetProgramLog(prog, log)
        log_text = log.decode(errors="replace").rstrip("\0 \n")
        if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            d = cache_dir() / "failed"
            d.mkdir(parents=True, exist_ok=True)
            path = d / f"{hashlib.sha256(source.encode()).hexdigest()[:16]}-{name}"
            write_atomic(path, source.encode())
            for header, text in headers.items():
                write_atomic(d / header, text.encode())
            hint = (
                "\n(a header it includes was not given: pass headers=, rlxc.codegen.HEADERS for rlxc's kernels)"
                if "cannot open source file" in log_text else ""
            )  # fmt: skip
            raise NvrtcError(
                f"NVRTC failed to compile {name} for {arch} (options: {' '.join(opts)}):\n"
                f"{log_text}{hint}\nsource saved at {path}",
                log_text,
                path,
            )
        err, size = nvrtc.nvrtcGetCUBINSize(prog)
        _check(err, "nvrtcGetCUBINSize")
        cubin = b" " * size
        (err,) = nvrtc.nvrtcGetCUBIN(prog, cubin)
        _check(err, "nvrtcGetCUBIN")
        return cubin, log_text
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


@dataclass
class CompileStats:
    hits: int = 0
    misses: int = 0
    corrupt: int = 0
    names: list[str] = field(default_factory=list)


def compile_cached(
    source: str,
    arch: str,
    name: str = "kernel.cu",
    options: Sequence[str] = DEFAULT_OPTIONS,
    stats: CompileStats | None = None,
    headers: Mapping[str, str] | None = None,
) -> bytes:
    """`compile_cubin` through the disk cache."""
    path = cache_dir() / arch / f"{cache_key(source, arch, options, headers)}.cubin"
    if path.exists():
        cubin = _read_entry(path)
        if cubin is not None:
            if stats:
                stats.hits += 1
            return cubin
        if stats:
            stats.corrupt += 1
    cubin = compile_cubin(source, arch, name, options, headers)
    write_atomic(path, _MAGIC + hashlib.sha256(cubin).digest() + cubin)
    if stats:
        stats.misses += 1
    return cubin


def compile_many(
    sources: Sequence[tuple[str, str]],
    arch: str,
    options: Sequence[str] = DEFAULT_OPTIONS,
    workers: int | None = None,
    stats: CompileStats | None = None,
    headers: Mapping[str, str] | None = None,
) -> list[bytes]:
    """Compiles (name, source) pairs, all with the same `headers`, in
    parallel threads (NVRTC releases the GIL while it compiles); results in
    order."""
    workers = workers or min(len(sources), os.cpu_count() or 1) or 1
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [
            pool.submit(compile_cached, src, arch, name, options, stats, headers)
            for name, src in sources
        ]
        return [f.result() for f in futures]


def compile_module_kernels(
    module,
    arch: str | None = None,
    stats: CompileStats | None = None,
    headers: Mapping[str, str] | None = None,
) -> dict[str, bytes]:
    """Every `rlx_cuda.kernel` of a module -> its cubin, by symbol. The
    kernels `rlx-emit-cuda` generates include `rlx_kernels.cuh`: pass
    `headers=rlxc.codegen.HEADERS`."""
    from rlxc.dialects.rlx_cuda import KernelOp

    kernels = [o for o in module.ops if isinstance(o, KernelOp)]
    cubins = compile_many(
        [(f"{k.sym_name.data}.cu", k.source.data) for k in kernels],
        arch or (kernels[0].arch.data if kernels else "sm_90"),
        stats=stats,
        headers=headers,
    )
    return {k.sym_name.data: c for k, c in zip(kernels, cubins)}
