// RUN: rlxc-opt %s --split-input-file -p "rlx-fuse-elementwise,rlx-fuse-reductions,dce" | filecheck %s
// RUN: rlxc-opt %s --split-input-file -p "rlx-fuse-elementwise,rlx-fuse-reductions,dce,rlx-plan-memory,rlx-emit-cuda" | filecheck %s --check-prefix=CUDA

// add -> layer_norm is one rlx.fusion; the sum, read again by the return,
// is its second result (the kernel stores it as it computes it).
// CHECK-LABEL: func.func @residual_norm
// CHECK-NEXT: %[[N:[a-z0-9_]+]], %[[S:[a-z0-9_]+]] = rlx.fusion ins(%x, %r, %g, %b : tensor<4x128xf32>, tensor<4x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<4x128xf32>, tensor<4x128xf32> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<4x128xf32>, %[[R:.*]]: tensor<4x128xf32>, %[[G:.*]]: tensor<128xf32>, %[[B:.*]]: tensor<128xf32>):
// CHECK-NEXT:   %[[A:.*]] = rlx.elementwise_region ins(%[[X]], %[[R]] : tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32> {
// CHECK:        arith.addf
// CHECK:        %[[L:.*]] = rlx.layer_norm %[[A]], %[[G]], %[[B]]
// CHECK-NEXT:   rlx.yield %[[L]], %[[A]] : tensor<4x128xf32>, tensor<4x128xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[N]], %[[S]]
// One kernel: the row is x + r, written to out1 as it is read.
// CUDA-LABEL: rlx_cuda.kernel @k0
// CUDA-SAME: rlx.fusion
// CUDA-SAME: row form: warp
// CUDA-SAME: pk0.raw = reinterpret_cast<const uint4*>(in0 + base)
// CUDA-SAME: pk1.raw = reinterpret_cast<const uint4*>(in1 + base)
// CUDA-SAME: const float f0 = (a0 + a1);
// CUDA-SAME: reinterpret_cast<uint4*>(out1 + base)[c * 32 + lane] = po0.raw;
// CUDA-NOT: rlx_cuda.kernel
// CUDA-LABEL: func.func @residual_norm
// CUDA-COUNT-1: rlx_cuda.launch
// CUDA-NOT: rlx_cuda.launch
func.func @residual_norm(%x: tensor<4x128xf32>, %r: tensor<4x128xf32>, %g: tensor<128xf32>, %b: tensor<128xf32>) -> (tensor<4x128xf32>, tensor<4x128xf32>) {
  %s = rlx.add %x, %r : tensor<4x128xf32>, tensor<4x128xf32> -> tensor<4x128xf32>
  %n = rlx.layer_norm %s, %g, %b eps = 1.000000e-05 : tensor<4x128xf32>, tensor<128xf32>
  func.return %n, %s : tensor<4x128xf32>, tensor<4x128xf32>
}

// -----

// Scale and a broadcast mask add -> softmax: one fusion; the mask's rows
// are read at their broadcast row (b1), the scale is a constant in the body.
// CHECK-LABEL: func.func @masked_softmax
// CHECK-NEXT: %[[P:[a-z0-9_]+]] = rlx.fusion ins(%s, %m : tensor<2x3x5x7xf16>, tensor<2x1x1x7xf16>) -> tensor<2x3x5x7xf16> {
// CHECK:        arith.mulf
// CHECK:        arith.addf
// CHECK:        rlx.softmax
// CHECK-NEXT:   rlx.yield
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[P]]
// CUDA-LABEL: rlx_cuda.kernel @k0
// CUDA-SAME: const long long b1 = ((r / 15LL)) * 7LL;
// CUDA-SAME: rlx_round_f16(e0)
func.func @masked_softmax(%s: tensor<2x3x5x7xf16>, %m: tensor<2x1x1x7xf16>) -> tensor<2x3x5x7xf16> {
  %c = rlx.constant dense<0.125> : tensor<f16>
  %t = rlx.mul %s, %c : tensor<2x3x5x7xf16>, tensor<f16> -> tensor<2x3x5x7xf16>
  %a = rlx.add %t, %m : tensor<2x3x5x7xf16>, tensor<2x1x1x7xf16> -> tensor<2x3x5x7xf16>
  %p = rlx.softmax %a axis = -1 : tensor<2x3x5x7xf16>
  func.return %p : tensor<2x3x5x7xf16>
}

// -----

// Not fused: softmax over a leading axis (its rows are not trailing), and a
// region whose value an op before the row op also reads (the fusion would
// be placed after that use).
// CHECK-LABEL: func.func @not_fused
// CHECK-NOT: rlx.fusion
// CHECK: func.return
func.func @not_fused(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) {
  %e = rlx.exp %x : tensor<4x8xf32>
  %p = rlx.softmax %e axis = 0 : tensor<4x8xf32>
  %n = rlx.neg %x : tensor<4x8xf32>
  %r = rlx.reduce_sum %n axes = [0] : tensor<4x8xf32> -> tensor<8xf32>
  %l = rlx.rms_norm %n, %g eps = 1.000000e-06 : tensor<4x8xf32>, tensor<8xf32>
  func.return %p, %r, %l : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>
}
