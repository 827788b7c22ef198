// RUN: rlxc-opt %s | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s --print-op-generic | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s -p rlx-optimize | filecheck %s --check-prefix=OPT
// RUN: rlxc-opt %s -p 'rlx-cuda{sm_count=132}' -t cuda-source | filecheck %s --check-prefix=CUDA

// rlx.scatter_nd (ONNX ScatterND; ScatterElements imports as it): the input
// with the slices its index tuples name replaced, or combined by a reduction.
// Opaque to fusion: the elementwise op before it stays a kernel of its own.

// CHECK-LABEL: func.func @scatter(
// CHECK:       rlx.scatter_nd %{{.*}}[%{{.*}}] = %{{.*}} reduction = "add" : tensor<4x5x3xf32>, tensor<2x6x2xi64>, tensor<2x6x3xf32>
// CHECK:       rlx.scatter_nd %{{.*}}[%{{.*}}] = %{{.*}} reduction = "none" : tensor<4x5x3xbf16>, tensor<7x1xi32>, tensor<7x5x3xbf16>
// OPT-LABEL: func.func @scatter(
// OPT:       rlx.elementwise_region
// OPT:       rlx.scatter_nd %{{.*}}[%{{.*}}] = %{{.*}} reduction = "add"
// One launch of co-resident blocks: the input copied, every block's arrival
// waited for, then a thread per update element, combined atomically:
// CUDA-LABEL: // rlx.scatter_nd (op #1 of @scatter)
// CUDA-NEXT:  // scatter_nd: reduction add, 1 co-resident blocks: copy, wait for all, scatter
// CUDA:       for (long long i = first; i < 60LL; i += stride) y[i] = x[i];
// CUDA:       if (threadIdx.x == 0) rlx_arrive_and_wait<1>(&rlx_scatter_nd_{{[0-9a-f]+}}_arrived);
// CUDA:       long long q0 = (long long)ids[tp * 2LL + 0]; if (q0 < 0) q0 += 4LL;
// CUDA:       dst += q1 * 3LL;
// CUDA-NEXT:  atomicAdd(y + dst, u[j]);
// CUDA-LABEL: // rlx.scatter_nd (op #2 of @scatter)
// CUDA:       y[dst] = u[j];
// CUDA-LABEL: // rlx.scatter_nd (op #3 of @scatter)
// 16-bit elements: a compare-and-swap on their 32-bit word, combined in f32
// CUDA:       rlx_atomic16<false>(y + dst, rlx_ld_f16(u[j]), RlxMax());
func.func @scatter(%x: tensor<4x5x3xf32>, %i: tensor<2x6x2xi64>, %u: tensor<2x6x3xf32>, %b: tensor<4x5x3xbf16>,
                   %j: tensor<7x1xi32>, %v: tensor<7x5x3xbf16>, %h: tensor<8xf16>, %k: tensor<3x1xi64>, %w: tensor<3xf16>)
    -> (tensor<4x5x3xf32>, tensor<4x5x3xbf16>, tensor<8xf16>) {
  %e = rlx.exp %x : tensor<4x5x3xf32>
  %0 = rlx.scatter_nd %e[%i] = %u reduction = "add" : tensor<4x5x3xf32>, tensor<2x6x2xi64>, tensor<2x6x3xf32>
  %1 = rlx.scatter_nd %b[%j] = %v reduction = "none" : tensor<4x5x3xbf16>, tensor<7x1xi32>, tensor<7x5x3xbf16>
  %2 = rlx.scatter_nd %h[%k] = %w reduction = "max" : tensor<8xf16>, tensor<3x1xi64>, tensor<3xf16>
  func.return %0, %1, %2 : tensor<4x5x3xf32>, tensor<4x5x3xbf16>, tensor<8xf16>
}
