"""What a CUDA graph's launch costs the host, and `exe.run`'s overhead beyond
the device time (GPU machine), with the captured graph's memset nodes kept
or replaced by fill kernels (`executable.MEMSETS_AS_KERNELS`), optionally
cuBLASLt's split-K schemes limited (`cublaslt.REDUCTION_SCHEMES`), and run()
waiting for the graph's mapped flag (`executable.SIGNAL_WAIT`: "kernels",
"flagkernel") or for the stream ("stream", "sleep").

For each encoder (benchmarks/encoders.py's builder, seq 128, device-resident
torch inputs) and variant, one line of JSON: the I/O graph's nodes by kind,
the device time per call (events, median), `host_overhead()` in `--rounds`
rounds (each the median over `--per` calls of wall less that call's device
time), and the host time of the `cuGraphLaunch` call alone on an idle
stream (median of 60). The variants are compiled and measured in turns
within one process, so they share the card's state.

    python benchmarks/host_launch.py [--cases bert-base:32:f32,...] [--variants kernels,memsets,nosplitk] [--out DIR]
    python benchmarks/host_launch.py --spin 100,1000,5000,20000 [--out DIR]
    python benchmarks/host_launch.py --flag 1000,5000,20000 [--out DIR]

`--spin` measures the wall clock against CUDA events without rlxc's
runtime: a graph of one kernel (or of 100) spinning T µs on the GPU's
global timer, launched between two events and waited for by polling
`cuStreamQuery` or by `cuStreamSynchronize`; per T, wall less event time
(median, p10, p90 of 50 calls), raw and with the event time in host
seconds (`CudaExecutable.clock_ratio`'s measure).

`--flag` asks whether that growth is time the host loses or the two clocks
disagreeing while the GPU is busy: one kernel spinning T µs on the global
timer writes the timer and a sequence number into mapped host memory at its
start and at its end; the host, polling that memory, stamps when it sees
each, then polls `cuStreamQuery` until the stream is done; in its "sleep"
rows the host sleeps from the first write seen until SLEEP_SPIN_US before
the kernel's end, then polls. Per T (median
over 40 calls): host µs per global-timer µs between the two writes (the
clocks' ratio under load), the host's start and end delays (launch call to
the first write seen; last write seen to the stream reported done), and wall
less event time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import rlxc  # noqa: E402
from encoders import build_rlxc, make_weights, model_config, rlxc_params  # noqa: E402

#: variant -> (MEMSETS_AS_KERNELS, REDUCTION_SCHEMES, executable.SYNC_SLEEP_MARGIN_S, executable.SIGNAL_WAIT)
VARIANTS = {"kernels": (True, None, 0.0, "write"), "memsets": (False, None, 0.0, "write"), "nosplitk": (True, 0, 0.0, "write"),
            "sleep": (True, None, 300e-6, ""), "stream": (True, None, 0.0, ""), "flagkernel": (True, None, 0.0, "kernel")}
DEFAULTS = (True, None, 0.0, "write")


def measure(name: str, batch: int, dtype: str, variant: str, rounds: int, per: int) -> dict:
    import torch
    from cuda.bindings import driver as cu

    from rlxc.runtime import cublaslt, executable

    (executable.MEMSETS_AS_KERNELS, cublaslt.REDUCTION_SCHEMES, executable.SYNC_SLEEP_MARGIN_S,
     executable.SIGNAL_WAIT) = VARIANTS[variant]
    try:
        cfg = model_config(name)
        tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
        x = torch.randn(batch, 128, cfg.hidden, device="cuda", dtype=tdt)
        inputs = {"x": x}
        exe = rlxc.compile(build_rlxc(cfg, batch, 128, dtype), target="cuda", params=rlxc_params(make_weights(cfg), dtype))
        (y,) = exe.run(inputs)
        torch.cuda.synchronize()
        kinds: dict[str, int] = {}
        for node in executable._graph_nodes(exe._io.graph):
            kind = str(cu.cuGraphNodeGetType(node)[1]).split(".")[-1].split(":")[0].replace("CU_GRAPH_NODE_TYPE_", "").lower()
            kinds[kind] = kinds.get(kind, 0) + 1
        device_us = statistics.median(exe.time_runs(inputs, repeat=30)) * 1e3
        overhead = [round(exe.host_overhead(inputs, repeat=per)["overhead_us"], 1) for _ in range(rounds)]
        launch = []
        pc = time.perf_counter
        for _ in range(60):
            cu.cuStreamSynchronize(exe.stream)
            t0 = pc()
            cu.cuGraphLaunch(exe._io.exec, exe.stream)
            launch.append((pc() - t0) * 1e6)
        cu.cuStreamSynchronize(exe.stream)
        out = torch.as_tensor(y, device="cuda") if dtype != "bf16" else None
        row = {"model": name, "batch": batch, "dtype": dtype, "variant": variant, "nodes": kinds,
               "memsets_as_kernels": exe.memsets_as_kernels, "signal": exe.signal_form, "device_us": round(device_us, 1),
               "host_overhead_us": overhead, "launch_call_us": round(statistics.median(launch), 2),
               "checksum": None if out is None else float(out.float().abs().sum())}
        exe.close()
        return row
    finally:
        (executable.MEMSETS_AS_KERNELS, cublaslt.REDUCTION_SCHEMES, executable.SYNC_SLEEP_MARGIN_S,
         executable.SIGNAL_WAIT) = DEFAULTS


SPIN = r"""extern "C" __global__ void spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}"""


def _bare_kernel(source: str, name: str):
    """An executable (only for its stream and clock_ratio()) and kernel
    `name` of `source`, loaded on its context: (exe, module, function)."""
    from cuda.bindings import driver as cu

    from rlxc.runtime.driver_api import check, device_arch
    from rlxc.runtime.nvrtc import compile_cubin

    g = rlxc.GraphBuilder()
    exe = rlxc.compile(g.build([g.relu(g.input("x", [4]))]), target="cuda")
    mod = check(cu.cuModuleLoadData(compile_cubin(source, device_arch()[0], f"{name}.cu")), "cuModuleLoadData")
    return exe, mod, check(cu.cuModuleGetFunction(mod, name.encode()), "cuModuleGetFunction")


def spin(spans_us: list[int]) -> list[dict]:
    """The `--spin` measurement (see the module docstring)."""
    import numpy as np
    from cuda.bindings import driver as cu

    from rlxc.runtime.driver_api import check

    exe, mod, fn = _bare_kernel(SPIN, "spin")
    stream = exe.stream
    ratio = exe.clock_ratio()
    start, stop = check(cu.cuEventCreate(0), "cuEventCreate"), check(cu.cuEventCreate(0), "cuEventCreate")
    pc, rows = time.perf_counter, []
    for span in spans_us:
        for nodes in (1, 100):
            arg = np.array([span * 1000 // nodes], dtype=np.uint64)
            ptrs = np.array([arg.ctypes.data], dtype=np.uint64)
            check(cu.cuStreamBeginCapture(stream, cu.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "capture")
            for _ in range(nodes):
                check(cu.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, stream, ptrs.ctypes.data, 0), "cuLaunchKernel")
            graph = check(cu.cuStreamEndCapture(stream), "cuStreamEndCapture")
            ge = check(cu.cuGraphInstantiate(graph, 0), "cuGraphInstantiate")
            for wait in ("poll", "block"):
                raw, fixed = [], []
                for i in range(60):
                    t0 = pc()
                    cu.cuEventRecord(start, stream)
                    cu.cuGraphLaunch(ge, stream)
                    cu.cuEventRecord(stop, stream)
                    if wait == "poll":
                        while cu.cuStreamQuery(stream)[0] != cu.CUresult.CUDA_SUCCESS:
                            pass
                    else:
                        cu.cuStreamSynchronize(stream)
                    wall = (pc() - t0) * 1e6
                    d = check(cu.cuEventElapsedTime(start, stop), "cuEventElapsedTime") * 1e3
                    if i >= 10:
                        raw.append(wall - d)
                        fixed.append(wall - d * ratio)
                q = lambda v: [round(statistics.median(v), 1), round(sorted(v)[5], 1), round(sorted(v)[-5], 1)]  # noqa: E731
                rows.append({"spin_us": span, "nodes": nodes, "wait": wait, "clock_ratio": round(ratio, 6),
                             "wall_less_events_us": q(raw), "host_clock_us": q(fixed)})
                print(json.dumps(rows[-1]), flush=True)
            cu.cuGraphExecDestroy(ge)
            cu.cuGraphDestroy(graph)
    cu.cuModuleUnload(mod)
    exe.close()
    return rows


FLAG = r"""extern "C" __global__ void spin_flag(unsigned long long ns, volatile unsigned long long* out,
                                          unsigned long long seq) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  out[0] = t0; __threadfence_system(); out[1] = seq; __threadfence_system();
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
  out[2] = t; __threadfence_system(); out[3] = seq; __threadfence_system();
}"""


#: `--flag`'s "sleep" rows: the host sleeps until this many µs before the
#: kernel's end, then polls (its "spin" rows poll throughout)
SLEEP_SPIN_US = 300


def flag(spans_us: list[int], calls: int = 40) -> list[dict]:
    """The `--flag` measurement (see the module docstring)."""
    import ctypes

    import numpy as np
    from cuda.bindings import driver as cu

    from rlxc.runtime.driver_api import check

    exe, mod, fn = _bare_kernel(FLAG, "spin_flag")
    stream = exe.stream
    host = check(cu.cuMemHostAlloc(64, cu.CU_MEMHOSTALLOC_DEVICEMAP), "cuMemHostAlloc")
    dev = check(cu.cuMemHostGetDevicePointer(host, 0), "cuMemHostGetDevicePointer")
    out = np.ctypeslib.as_array((ctypes.c_uint64 * 4).from_address(int(host)))
    out[:] = 0
    start, stop = check(cu.cuEventCreate(0), "cuEventCreate"), check(cu.cuEventCreate(0), "cuEventCreate")
    pc, rows, seq = time.perf_counter, [], 0
    for span, wait in [(t, w) for t in spans_us for w in ("spin", "sleep")]:
        ratio, first, last, wall = [], [], [], []
        for i in range(calls + 5):
            seq += 1
            args = [np.array([span * 1000], dtype=np.uint64), np.array([int(dev)], dtype=np.uint64),
                    np.array([seq], dtype=np.uint64)]
            ptrs = np.array([a.ctypes.data for a in args], dtype=np.uint64)
            t0 = pc()
            cu.cuEventRecord(start, stream)
            cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, ptrs.ctypes.data, 0)
            cu.cuEventRecord(stop, stream)
            while out[1] != seq:
                pass
            h1 = pc()
            if wait == "sleep" and span > SLEEP_SPIN_US:  # the thread sleeps through most of the kernel
                time.sleep((span - SLEEP_SPIN_US) * 1e-6)
            while out[3] != seq:
                pass
            h2 = pc()
            while cu.cuStreamQuery(stream)[0] != cu.CUresult.CUDA_SUCCESS:
                pass
            h3 = pc()
            d = check(cu.cuEventElapsedTime(start, stop), "cuEventElapsedTime") * 1e3
            if i >= 5:
                ratio.append((h2 - h1) * 1e9 / float(out[2] - out[0]))
                first.append((h1 - t0) * 1e6)
                last.append((h3 - h2) * 1e6)
                wall.append((h3 - t0) * 1e6 - d)
        med = lambda v, k=2: round(statistics.median(v), k)  # noqa: E731
        rows.append({"spin_us": span, "wait": wait, "host_per_timer": med(ratio, 6), "start_delay_us": med(first),
                     "end_delay_us": med(last), "wall_less_events_us": med(wall),
                     "clock_gap_us": round((med(ratio, 6) - 1) * span, 2)})
        print(json.dumps(rows[-1]), flush=True)
    cu.cuMemFreeHost(host)
    cu.cuModuleUnload(mod)
    exe.close()
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default="bert-base:32:f32,12x384x12x1536:32:f32,bert-base:32:f16,bert-base:1:f32",
                    help="MODEL:BATCH:DTYPE,... (models as encoders.py --models)")
    ap.add_argument("--variants", default="memsets,kernels", help=f"of {','.join(VARIANTS)}")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--per", type=int, default=60)
    ap.add_argument("--spin", help="T1,T2,... µs: the bare-graph clock measurement instead")
    ap.add_argument("--flag", help="T1,T2,... µs: the mapped-memory clock measurement instead")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    rows = []
    if args.spin:
        rows = spin([int(t) for t in args.spin.split(",")])
        args.cases = ""
    if args.flag:
        rows = flag([int(t) for t in args.flag.split(",")])
        args.cases = ""
    for case in filter(None, args.cases.split(",")):
        name, batch, dtype = case.split(":")
        for variant in args.variants.split(","):
            row = measure(name, int(batch), dtype, variant, args.rounds, args.per)
            print(json.dumps(row), flush=True)
            rows.append(row)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / ("host_flag.json" if args.flag else "host_spin.json" if args.spin else "host_launch.json")).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
