// RUN: rlxc-opt %s | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s --print-op-generic | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s -p rlx-optimize | filecheck %s --check-prefix=OPT
// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s --check-prefix=CUDA

// rlx.cumsum (ONNX CumSum) and rlx.topk (ONNX TopK, two results) at every
// level: both are opaque to fusion, each its own kernel.

// CHECK-LABEL: func.func @cumsum(
// OPT-LABEL: func.func @cumsum(
// OPT:       rlx.elementwise_region
// OPT:       rlx.cumsum %{{.*}} axis = 1 :
// OPT:       rlx.elementwise_region
// CUDA-LABEL: // rlx.cumsum (op #1 of @cumsum)
// CUDA:       extern "C" __global__ void __launch_bounds__(256) rlx_cumsum_{{[0-9a-f]+}}(const float* __restrict__ x, float* __restrict__ y)
// CUDA:       const long long base = (l / 5LL) * 20LL + l % 5LL;
// CUDA:       acc += v; y[o] = acc;
// CUDA-LABEL: // rlx.cumsum (op #3 of @cumsum)
// CUDA:       const long long o = base + (3LL - j) * 5LL;
// CUDA:       y[o] = rlx_st_bf16(acc); acc += v;
// CUDA-LABEL: // rlx.cumsum (op #4 of @cumsum)
// CUDA:       long long acc = 0;
// CUDA:       y[o] = (int)(acc); acc += v;
// CUDA-LABEL: // rlx.cumsum (op #5 of @cumsum)
// CUDA:       rlx_cumsum_rows_{{[0-9a-f]+}}(
// CUDA:       __shfl_up_sync(0xffffffffu, s, w)
// CUDA:       if (j < 1000LL) y[o] = before + s;
func.func @cumsum(%x: tensor<3x4x5xf32>, %b: tensor<3x4x5xbf16>, %i: tensor<6xi32>, %l: tensor<2x1000xf32>) -> (tensor<3x4x5xf32>, tensor<3x4x5xbf16>, tensor<6xi32>, tensor<2x1000xf32>) {
  // CHECK-NEXT: rlx.exp
  %e = rlx.exp %x : tensor<3x4x5xf32>
  // CHECK-NEXT: %{{.*}} = rlx.cumsum %{{.*}} axis = 1 : tensor<3x4x5xf32>
  %0 = rlx.cumsum %e axis = 1 : tensor<3x4x5xf32>
  // CHECK-NEXT: rlx.neg
  %1 = rlx.neg %0 : tensor<3x4x5xf32>
  // CHECK-NEXT: %{{.*}} = rlx.cumsum %{{.*}} axis = -2 exclusive reverse : tensor<3x4x5xbf16>
  %2 = rlx.cumsum %b axis = -2 exclusive reverse : tensor<3x4x5xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.cumsum %{{.*}} axis = 0 exclusive : tensor<6xi32>
  %3 = rlx.cumsum %i axis = 0 exclusive : tensor<6xi32>
  // CHECK-NEXT: %{{.*}} = rlx.cumsum %{{.*}} axis = 1 : tensor<2x1000xf32>
  %4 = rlx.cumsum %l axis = 1 : tensor<2x1000xf32>
  func.return %1, %2, %3, %4 : tensor<3x4x5xf32>, tensor<3x4x5xbf16>, tensor<6xi32>, tensor<2x1000xf32>
}

// Two results, each planned its own slot; a topk whose indices alone are
// used stays (dce keeps an op while any result is used), one with no result
// used goes.
// CHECK-LABEL: func.func @topk(
// OPT-LABEL: func.func @topk(
// OPT:       %{{.*}}, %{{.*}} = rlx.topk %{{.*}} k = 3 axis = -1 :
// OPT:       %{{.*}}, %{{.*}} = rlx.topk %{{.*}} k = 2 axis = 0 smallest unsorted :
// OPT:       %{{.*}}, %{{.*}} = rlx.topk %{{.*}} k = 7 axis = 0 :
// OPT-NOT:   rlx.topk
// OPT:       func.return
// CUDA-LABEL: // rlx.topk (op #0 of @topk)
// CUDA:       bool rlx_topk_before(float a, long long ia, float b, long long ib) {
// CUDA:       if (an || bn) return an && bn ? ia < ib : an;
// CUDA:       return a > b || (a == b && ia < ib);
// CUDA:       rlx_topk_{{[0-9a-f]+}}(const float* __restrict__ x, float* __restrict__ vals, long long* __restrict__ ids)
// CUDA:       if (pi >= 0 && !rlx_topk_before(pv, pi, v, k)) continue;
// CUDA:       vals[to] = x[from]; ids[to] = pi;
// CUDA-LABEL: // rlx.topk (op #1 of @topk)
// CUDA:       bool rlx_topk_before(long long a, long long ia, long long b, long long ib) {
// CUDA-NEXT:  return a < b || (a == b && ia < ib);
func.func @topk(%x: tensor<4x10xf32>, %n: tensor<5x3xi32>, %h: tensor<7xf16>) -> (tensor<4x3xf32>, tensor<4x3xi64>, tensor<2x3xi64>, tensor<7xf16>) {
  // CHECK-NEXT: %{{.*}}, %{{.*}} = rlx.topk %{{.*}} k = 3 axis = -1 : tensor<4x10xf32> -> tensor<4x3xf32>, tensor<4x3xi64>
  %v, %i = rlx.topk %x k = 3 axis = -1 : tensor<4x10xf32> -> tensor<4x3xf32>, tensor<4x3xi64>
  // CHECK-NEXT: %{{.*}}, %{{.*}} = rlx.topk %{{.*}} k = 2 axis = 0 smallest unsorted : tensor<5x3xi32> -> tensor<2x3xi32>, tensor<2x3xi64>
  %w, %j = rlx.topk %n k = 2 axis = 0 smallest unsorted : tensor<5x3xi32> -> tensor<2x3xi32>, tensor<2x3xi64>
  // CHECK-NEXT: %{{.*}}, %{{.*}} = rlx.topk %{{.*}} k = 7 axis = 0 : tensor<7xf16> -> tensor<7xf16>, tensor<7xi64>
  %s, %o = rlx.topk %h k = 7 axis = 0 : tensor<7xf16> -> tensor<7xf16>, tensor<7xi64>
  // CHECK-NEXT: %{{.*}}, %{{.*}} = rlx.topk %{{.*}} k = 0 axis = 0 : tensor<7xf16> -> tensor<0xf16>, tensor<0xi64>
  %z, %zi = rlx.topk %h k = 0 axis = 0 : tensor<7xf16> -> tensor<0xf16>, tensor<0xi64>
  func.return %v, %i, %j, %s : tensor<4x3xf32>, tensor<4x3xi64>, tensor<2x3xi64>, tensor<7xf16>
}
