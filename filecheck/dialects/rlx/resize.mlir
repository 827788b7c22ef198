// RUN: rlxc-opt %s | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s --print-op-generic | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s --check-prefix=CUDA

// rlx.resize (ONNX Resize, nearest and linear): the result type is the output shape;
// coordinate_transformation_mode (half_pixel) and nearest_mode (round_prefer_floor) print
// only where they are not the default.

// CHECK-LABEL: func.func @main(
// CHECK-NEXT: %{{.*}} = rlx.resize %{{.*}} scales = [1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00] mode = "nearest" : tensor<1x2x3x4xf32> -> tensor<1x2x6x8xf32>
// CHECK-NEXT: %{{.*}} = rlx.resize %{{.*}} scales = [1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00] mode = "nearest" coordinate_transformation_mode = "asymmetric" nearest_mode = "floor" : tensor<1x2x3x4xi64> -> tensor<1x2x6x8xi64>
// CHECK-NEXT: %{{.*}} = rlx.resize %{{.*}} scales = [1.000000e+00, 1.000000e+00, 2.000000e+00, 0.60000002384185791] mode = "linear" : tensor<1x2x3x4xf16> -> tensor<1x2x6x2xf16>
// CHECK-NEXT: %{{.*}} = rlx.resize %{{.*}} scales = [1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00] mode = "linear" coordinate_transformation_mode = "align_corners" : tensor<1x2x3x4xf32> -> tensor<1x2x6x8xf32>
// CHECK-NEXT: %{{.*}} = rlx.resize %{{.*}} scales = [1.000000e+00, 2.500000e+00, 1.000000e+00] mode = "linear" coordinate_transformation_mode = "pytorch_half_pixel" : tensor<2x2x5xbf16> -> tensor<2x5x5xbf16>

// Each resized axis's source indices (and linear weights) are tables in the kernel:
// CUDA: // rlx.resize (op #0 of @main)
// CUDA: static __device__ const int [[K0:rlx_resize_[0-9a-f]+]]_idx2[6] = {0, 0, 1, 1, 2, 2};
// CUDA: static __device__ const int [[K0]]_idx3[8] = {0, 0, 1, 1, 2, 2, 3, 3};
// CUDA: y[i] = x[base + (long long)[[K0]]_idx2[c2] * 4LL + (long long)[[K0]]_idx3[c3] * 1LL];
// CUDA: // rlx.resize (op #1 of @main)
// CUDA: (const long long* __restrict__ x, long long* __restrict__ y)
// CUDA: // rlx.resize (op #2 of @main)
// CUDA: static __device__ const int [[K2:rlx_resize_[0-9a-f]+]]_lo2[6] = {0, 0, 0, 1, 1, 2};
// CUDA: static __device__ const int [[K2]]_hi2[6] = {0, 1, 1, 2, 2, 2};
// CUDA: static __device__ const float [[K2]]_t2[6] = {0.75f, 0.25f, 0.75f, 0.25f, 0.75f, 0.25f};
// CUDA: acc += (1.0f - t2) * (1.0f - t3) * rlx_ld_f16(x[base + lo2 + lo3]);
// CUDA: acc += t2 * t3 * rlx_ld_f16(x[base + hi2 + hi3]);
// CUDA: y[i] = rlx_st_f16(acc);
// CUDA: // rlx.resize (op #3 of @main)
// CUDA: static __device__ const float [[K3:rlx_resize_[0-9a-f]+]]_t2[6] = {0.0f, 0.4000000059604645f, 0.800000011920929f, 0.20000000298023224f, 0.6000000238418579f, 0.0f};
// CUDA: // rlx.resize (op #4 of @main)
// CUDA-NOT: _lo0
// CUDA: _lo1[5]
// CUDA-NOT: _lo2
// CUDA: acc += (1.0f - t1) * rlx_ld_bf16(x[base + lo1]);
func.func @main(%x: tensor<1x2x3x4xf32>, %n: tensor<1x2x3x4xi64>, %h: tensor<1x2x3x4xf16>, %b: tensor<2x2x5xbf16>) -> (tensor<1x2x6x8xf32>, tensor<1x2x6x8xi64>, tensor<1x2x6x2xf16>, tensor<1x2x6x8xf32>, tensor<2x5x5xbf16>) {
  %0 = rlx.resize %x scales = [1.0, 1.0, 2.0, 2.0] mode = "nearest" : tensor<1x2x3x4xf32> -> tensor<1x2x6x8xf32>
  %1 = rlx.resize %n scales = [1.0, 1.0, 2.0, 2.0] mode = "nearest" coordinate_transformation_mode = "asymmetric" nearest_mode = "floor" : tensor<1x2x3x4xi64> -> tensor<1x2x6x8xi64>
  %2 = rlx.resize %h scales = [1.0, 1.0, 2.0, 0.60000002384185791] mode = "linear" coordinate_transformation_mode = "half_pixel" : tensor<1x2x3x4xf16> -> tensor<1x2x6x2xf16>
  %3 = rlx.resize %x scales = [1.0, 1.0, 2.0, 2.0] mode = "linear" coordinate_transformation_mode = "align_corners" nearest_mode = "round_prefer_floor" : tensor<1x2x3x4xf32> -> tensor<1x2x6x8xf32>
  %4 = rlx.resize %b scales = [1.0, 2.5, 1.0] mode = "linear" coordinate_transformation_mode = "pytorch_half_pixel" : tensor<2x2x5xbf16> -> tensor<2x5x5xbf16>
  func.return %0, %1, %2, %3, %4 : tensor<1x2x6x8xf32>, tensor<1x2x6x8xi64>, tensor<1x2x6x2xf16>, tensor<1x2x6x8xf32>, tensor<2x5x5xbf16>
}
