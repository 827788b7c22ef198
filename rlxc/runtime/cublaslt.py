"""`rlx_cuda.gemm` through cuBLASLt (nvmath-python's bindings).

Row-major C[M, N] = A[M, K] · op(B) is run as the column-major product
Cᵀ[N, M] = op(B)ᵀ · Aᵀ, which reads the same bytes: no copies. The bias
epilogue adds along Cᵀ's rows, i.e. per output column n, as `rlx.linear`
wants. The workspace is allocated once. TF32 is off unless the user
allows it (`allow_tf32=True`).

The algorithm is chosen once per gemm, at load time: cuBLASLt's heuristic
proposes up to AUTOTUNE_CANDIDATES algorithms, and where it proposes more
than one each is timed on the executable's own buffers (`autotune`: CUDA
events, the median of AUTOTUNE_REPEAT launches after a warm-up) and the
fastest kept where it beats the first by AUTOTUNE_MARGIN (gemms of
AUTOTUNE_MIN_US or more); a gemm of the same problem (shapes, strides,
types, epilogue: every layer of an encoder) reuses the choice, for the
life of the process (`_TUNED`). H100, 2026-11-26
(`benchmarks/gemm_tuning.py`): BERT-base's gemms at batch 32 had
proposals 3-7% faster than the first in f32 (4096x768x768: 143 -> 134
µs), 1-7% in f16/bf16; end to end, batch 32 f32 went from 17.29 to 17.18
ms (BERT-base) and 2.76 to 2.72 (MiniLM).
`gemm_autotune=False` (rlxc.compile) keeps the first proposal, which makes
the choice, and so the rounding of split reductions, the same from
process to process.
"""

from __future__ import annotations

import numpy as np

from rlxc.dialects.types import dtype

# cudaDataType_t and cublasComputeType_t values (stable C ABI constants).
_COMPUTE_32F = 68
_COMPUTE_32F_FAST_TF32 = 77
_OP_N, _OP_T = 0, 1
WORKSPACE_BYTES = 32 << 20
#: Algorithms asked of cuBLASLt's heuristic per gemm, and launches timed per candidate.
AUTOTUNE_CANDIDATES = 8
AUTOTUNE_REPEAT = 7
#: A proposal other than the first is chosen only where it is this much
#: faster, and only for gemms whose first proposal takes AUTOTUNE_MIN_US or
#: more: shorter ones timed alone did not predict them in the graph (H100,
#: 2026-11-26, `encoders.py --untuned`: tuned at every size, BERT-base and
#: MiniLM batch 1 f32 came out 1.2% and 3.4% slower, with 30-40 µs gemms).
AUTOTUNE_MARGIN = 0.02
AUTOTUNE_MIN_US = 100.0
#: The split-K reduction schemes the heuristic may propose, a
#: cublasLtReductionScheme_t mask (1 in place, 2 in the compute type, 4 in
#: the output type; 0 none: no split-K), or None for cuBLASLt's default.
REDUCTION_SCHEMES: int | None = None
#: (device, problem) -> the index of the heuristic's proposal that timed fastest.
_TUNED: dict[tuple, int] = {}


def available() -> bool:
    try:
        from nvmath.bindings import cublasLt  # noqa: F401
    except Exception:
        return False
    return True


class LtGemm:
    """One planned cuBLASLt matmul on fixed device pointers."""

    def __init__(self, op, ptr_of, handle: int, workspace: int, allow_tf32: bool = False):
        from nvmath.bindings import cublasLt as lt

        self.lt = lt
        self.name = f"cuBLASLt gemm {op.m.value.data}x{op.n.value.data}x{op.k.value.data}"
        m, n, k = op.m.value.data, op.n.value.data, op.k.value.data
        batch = op.batch.value.data
        sa, sb, sc = op.strides.get_values()
        dt = dtype(op.dtype.data).cuda_data_type
        locs = list(op.locations.data)
        a, b = ptr_of(locs[0]), ptr_of(locs[1])
        bias = ptr_of(locs[2]) if len(locs) >= 4 else None
        # a residual is cuBLASLt's C (beta 1, C's layout); D is rlx's result
        residual = ptr_of(locs[3]) if len(locs) == 5 else None
        c = ptr_of(locs[-1])
        trans_a, trans_b = op.trans_a.value.data, op.trans_b.value.data
        self._keep = []  # host buffers whose addresses cuBLASLt holds

        def i32(v):
            arr = np.array([v], dtype=np.int32)
            self._keep.append(arr)
            return arr

        def u64(v, dtype=np.uint64):
            arr = np.array([v], dtype=dtype)
            self._keep.append(arr)
            return arr

        compute = _COMPUTE_32F_FAST_TF32 if allow_tf32 and op.dtype.data == "f32" else _COMPUTE_32F
        self.desc = lt.matmul_desc_create(compute, 0)  # scale type: CUDA_R_32F
        A = lt.MatmulDescAttribute
        # X = op(B)ᵀ as an [N, K] column-major operand; Y = op(A)ᵀ as [K, M].
        for attr, val in ((A.TRANSA, _OP_T if trans_b else _OP_N), (A.TRANSB, _OP_T if trans_a else _OP_N)):
            buf = i32(val)
            lt.matmul_desc_set_attribute(self.desc, attr, buf.ctypes.data, buf.nbytes)
        epilogue = {
            "none": lt.Epilogue.DEFAULT,
            "bias": lt.Epilogue.BIAS,
            "bias_relu": lt.Epilogue.RELU_BIAS,
            "bias_gelu": lt.Epilogue.GELU_BIAS,
        }[op.epilogue.data]
        buf = u64(int(epilogue), np.uint32)
        lt.matmul_desc_set_attribute(self.desc, A.EPILOGUE, buf.ctypes.data, buf.nbytes)
        if bias is not None:
            buf = u64(bias)
            lt.matmul_desc_set_attribute(self.desc, A.BIAS_POINTER, buf.ctypes.data, buf.nbytes)
        # Column-major layouts of the stored bytes.
        x_layout = lt.matrix_layout_create(dt, k, n, k) if trans_b else lt.matrix_layout_create(dt, n, k, n)
        # A stored [m, k] row-major is [k, m] column-major (Aᵀ, as is); stored [k, m] it is
        # [m, k] column-major, which TRANSB turns into Aᵀ
        y_layout = lt.matrix_layout_create(dt, m, k, m) if trans_a else lt.matrix_layout_create(dt, k, m, k)
        d_layout = lt.matrix_layout_create(dt, n, m, n)
        self.layouts = (x_layout, y_layout, d_layout)
        L = lt.MatrixLayoutAttribute
        for layout, stride in ((x_layout, sb), (y_layout, sa), (d_layout, sc)):
            if batch > 1:
                cnt = i32(batch)
                lt.matrix_layout_set_attribute(layout, L.BATCH_COUNT, cnt.ctypes.data, cnt.nbytes)
                off = u64(stride, np.int64)
                lt.matrix_layout_set_attribute(layout, L.STRIDED_BATCH_OFFSET, off.ctypes.data, off.nbytes)
        pref = lt.matmul_preference_create()
        ws = u64(WORKSPACE_BYTES)
        lt.matmul_preference_set_attribute(pref, lt.MatmulPreferenceAttribute.MAX_WORKSPACE_BYTES, ws.ctypes.data, ws.nbytes)
        if REDUCTION_SCHEMES is not None:
            mask = np.array([REDUCTION_SCHEMES], dtype=np.uint32)
            attr = getattr(lt.MatmulPreferenceAttribute, "REDUCTION_SCHEME_MASK", 3)  # CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK
            lt.matmul_preference_set_attribute(pref, attr, mask.ctypes.data, mask.nbytes)
        self.heuristic = lt.MatmulHeuristicResult(AUTOTUNE_CANDIDATES)
        found = np.zeros(1, dtype=np.int32)
        lt.matmul_algo_get_heuristic(
            handle, self.desc, x_layout, y_layout, d_layout, d_layout, pref, AUTOTUNE_CANDIDATES,
            self.heuristic.ptr, found.ctypes.data,
        )  # fmt: skip
        lt.matmul_preference_destroy(pref)
        if found[0] < 1:
            raise RuntimeError(f"cuBLASLt found no algorithm for {self.name} ({op.dtype.data})")
        self.candidates = int(found[0])
        self._item = lt.matmul_heuristic_result_dtype.itemsize
        #: the proposal in use (its index), and the cuBLASLt algorithm's address
        self.choice = 0
        self.algo = int(self.heuristic.ptr)  # a result starts with its cublasLtMatmulAlgo_t
        #: what makes two gemms the same problem for the tuning cache (pointers aside)
        self.problem = (op.dtype.data, m, n, k, batch, sa, sb, sc, trans_a, trans_b, op.epilogue.data,
                        bias is not None, residual is not None, compute, REDUCTION_SCHEMES)
        self.alpha = np.array([1.0], dtype=np.float32)
        self.beta = np.array([1.0 if residual is not None else 0.0], dtype=np.float32)
        self.handle, self.workspace = handle, workspace
        self.args = (b, a, residual if residual is not None else c, c)

    def launch(self, stream: int) -> None:
        x_layout, y_layout, d_layout = self.layouts
        b, a, c, d = self.args
        self.lt.matmul(
            self.handle, self.desc, self.alpha.ctypes.data, b, x_layout, a, y_layout,
            self.beta.ctypes.data, c, d_layout, d, d_layout, self.algo,
            self.workspace, WORKSPACE_BYTES, stream,
        )  # fmt: skip

    def use(self, choice: int) -> None:
        """Run with the heuristic's proposal number `choice` from now on."""
        self.choice = choice
        self.algo = int(self.heuristic.ptr) + choice * self._item

    def autotune(self, stream: int, device: int) -> list[float]:
        """Times the heuristic's proposals on this gemm's buffers (whatever
        they hold: the output is overwritten by the next run) and keeps the
        fastest where it beats the first by AUTOTUNE_MARGIN (else the first:
        a difference within the noise is not worth a choice that differs
        from run to run). The first is timed first: under AUTOTUNE_MIN_US it
        is kept and the others are not timed. The rest are timed
        round-robin, so that all see the same clocks. A problem tuned before
        in this process takes its earlier choice untimed. Returns the
        proposals' median µs (inf: cuBLASLt refused to run it; only the
        first's where it was under the floor; empty where nothing was
        timed)."""
        key = (device, self.problem)
        known = _TUNED.get(key)
        if self.candidates < 2 or (known is not None and known < self.candidates):
            self.use(known or 0)
            return []
        from rlxc.runtime.driver_api import _driver, check, median

        cu = _driver()
        start = check(cu.cuEventCreate(0), "cuEventCreate")
        try:
            stop = check(cu.cuEventCreate(0), "cuEventCreate")
        except BaseException:
            cu.cuEventDestroy(start)
            raise

        def once(i: int) -> float | None:
            """µs of one launch of proposal `i`; None where cuBLASLt refuses it
            (a CUDA error is raised: the context would be lost)."""
            self.use(i)
            check(cu.cuEventRecord(start, stream), "cuEventRecord")
            try:
                self.launch(stream)
            except self.lt.cuBLASLtError:
                return None
            check(cu.cuEventRecord(stop, stream), "cuEventRecord")
            check(cu.cuEventSynchronize(stop), f"{self.name} (tuning proposal {i})")
            return check(cu.cuEventElapsedTime(start, stop), "cuEventElapsedTime") * 1e3

        try:
            first = [t for t in (once(0) for _ in range(3)) if t is not None]
            if first and median(first) < AUTOTUNE_MIN_US:
                _TUNED[key] = 0
                self.use(0)
                return [median(first)]
            alive = [i for i in range(self.candidates) if once(i) is not None]  # a warm-up each
            samples: dict[int, list[float]] = {i: [] for i in alive}
            for _ in range(AUTOTUNE_REPEAT):
                for i in alive:
                    t = once(i)
                    if t is not None:
                        samples[i].append(t)
        finally:
            cu.cuEventDestroy(start)
            cu.cuEventDestroy(stop)
        medians = [median(samples.get(i, [])) for i in range(self.candidates)]
        best = min(range(len(medians)), key=medians.__getitem__)
        if medians[best] == float("inf"):
            raise RuntimeError(f"{self.name}: none of cuBLASLt's {self.candidates} algorithms ran")
        if medians[best] > medians[0] * (1 - AUTOTUNE_MARGIN):
            best = 0
        _TUNED[key] = best
        self.use(best)
        return medians
