// RUN: rlxc-opt %s | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s --print-op-generic | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s --check-prefix=CUDA

// rlx.pad (ONNX Pad: constant, reflect, edge, wrap), rlx.gather_elements and
// rlx.gather_nd (ONNX GatherElements and GatherND) at every level.

// CHECK-LABEL: func.func @pad(
// CUDA-LABEL: // rlx.pad (op #0 of @pad)
// CUDA:       extern "C" __global__ void __launch_bounds__(256) rlx_pad_constant_{{[0-9a-f]+}}(const float* __restrict__ x, float* __restrict__ y)
// CUDA:       inside = inside && j0 >= 0 && j0 < 4LL;
// CUDA:       y[i] = inside ? x[src] : -1.5f;
// CUDA-LABEL: // rlx.pad (op #1 of @pad)
// CUDA:       j1 = j1 < 0 ? -j1 : (j1 >= 5LL ? 8LL - j1 : j1);
// CUDA-LABEL: // rlx.pad (op #2 of @pad)
// CUDA:       j0 = j0 < 0 ? 0 : (j0 >= 4LL ? 3LL : j0);
// CUDA-LABEL: // rlx.pad (op #3 of @pad)
// CUDA:       j1 = ((j1 % 5LL) + 5LL) % 5LL;
// CUDA-LABEL: // rlx.pad (op #4 of @pad)
// CUDA:       y[i] = inside ? x[src] : 7LL;
// CUDA-LABEL: // rlx.pad (op #5 of @pad)
// CUDA:       y[i] = inside ? x[src] : (unsigned char)(true ? 1 : 0);
func.func @pad(%x: tensor<4x5xf32>, %h: tensor<4x5xf16>, %l: tensor<3xi64>, %b: tensor<2x2xi1>) -> (tensor<5x7xf32>, tensor<4x8xf16>, tensor<7x5xf32>, tensor<4x17xf32>, tensor<5xi64>, tensor<3x2xi1>, tensor<f32>) {
  // CHECK-NEXT: %{{.*}} = rlx.pad %{{.*}} low = [1, 0] high = [0, 2] mode = "constant" value = -1.500000e+00 : tensor<4x5xf32> -> tensor<5x7xf32>
  %0 = rlx.pad %x low = [1, 0] high = [0, 2] mode = "constant" value = -1.500000e+00 : tensor<4x5xf32> -> tensor<5x7xf32>
  // CHECK-NEXT: %{{.*}} = rlx.pad %{{.*}} low = [0, 1] high = [0, 2] mode = "reflect" value = 0.000000e+00 : tensor<4x5xf16> -> tensor<4x8xf16>
  %1 = rlx.pad %h low = [0, 1] high = [0, 2] mode = "reflect" value = 0.000000e+00 : tensor<4x5xf16> -> tensor<4x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.pad %{{.*}} low = [2, 0] high = [1, 0] mode = "edge" value = 0.000000e+00 : tensor<4x5xf32> -> tensor<7x5xf32>
  %2 = rlx.pad %x low = [2, 0] high = [1, 0] mode = "edge" value = 0.000000e+00 : tensor<4x5xf32> -> tensor<7x5xf32>
  // CHECK-NEXT: %{{.*}} = rlx.pad %{{.*}} low = [0, 6] high = [0, 6] mode = "wrap" value = 0.000000e+00 : tensor<4x5xf32> -> tensor<4x17xf32>
  %3 = rlx.pad %x low = [0, 6] high = [0, 6] mode = "wrap" value = 0.000000e+00 : tensor<4x5xf32> -> tensor<4x17xf32>
  // CHECK-NEXT: %{{.*}} = rlx.pad %{{.*}} low = [1] high = [1] mode = "constant" value = 7.000000e+00 : tensor<3xi64> -> tensor<5xi64>
  %4 = rlx.pad %l low = [1] high = [1] mode = "constant" value = 7.000000e+00 : tensor<3xi64> -> tensor<5xi64>
  // CHECK-NEXT: %{{.*}} = rlx.pad %{{.*}} low = [1, 0] high = [0, 0] mode = "constant" value = 1.000000e+00 : tensor<2x2xi1> -> tensor<3x2xi1>
  %5 = rlx.pad %b low = [1, 0] high = [0, 0] mode = "constant" value = 1.000000e+00 : tensor<2x2xi1> -> tensor<3x2xi1>
  %s = rlx.reduce_sum %x axes = [0, 1] : tensor<4x5xf32> -> tensor<f32>
  // CHECK: %{{.*}} = rlx.pad %{{.*}} low = [] high = [] mode = "edge" value = 0.000000e+00 : tensor<f32> -> tensor<f32>
  %6 = rlx.pad %s low = [] high = [] mode = "edge" value = 0.000000e+00 : tensor<f32> -> tensor<f32>
  func.return %0, %1, %2, %3, %4, %5, %6 : tensor<5x7xf32>, tensor<4x8xf16>, tensor<7x5xf32>, tensor<4x17xf32>, tensor<5xi64>, tensor<3x2xi1>, tensor<f32>
}

// The indices have the input's rank, extents no larger off the axis; the
// result has their shape.
// CHECK-LABEL: func.func @gather_elements(
// CUDA-LABEL: // rlx.gather_elements (op #0 of @gather_elements)
// CUDA:       long long q = (long long)ids[i]; if (q < 0) q += 5LL;
// CUDA:       y[i] = x[(i / 2LL) * 5LL + q * 1LL];
func.func @gather_elements(%x: tensor<3x5xf32>, %i: tensor<3x2xi64>, %j: tensor<2x5xi32>, %b: tensor<2x3x4xbf16>, %k: tensor<2x1x4xi64>) -> (tensor<3x2xf32>, tensor<2x5xf32>, tensor<2x1x4xbf16>) {
  // CHECK-NEXT: %{{.*}} = rlx.gather_elements %{{.*}}[%{{.*}}] axis = 1 : tensor<3x5xf32>, tensor<3x2xi64> -> tensor<3x2xf32>
  %0 = rlx.gather_elements %x[%i] axis = 1 : tensor<3x5xf32>, tensor<3x2xi64> -> tensor<3x2xf32>
  // CHECK-NEXT: %{{.*}} = rlx.gather_elements %{{.*}}[%{{.*}}] axis = 0 : tensor<3x5xf32>, tensor<2x5xi32> -> tensor<2x5xf32>
  %1 = rlx.gather_elements %x[%j] axis = 0 : tensor<3x5xf32>, tensor<2x5xi32> -> tensor<2x5xf32>
  // CHECK-NEXT: %{{.*}} = rlx.gather_elements %{{.*}}[%{{.*}}] axis = -2 : tensor<2x3x4xbf16>, tensor<2x1x4xi64> -> tensor<2x1x4xbf16>
  %2 = rlx.gather_elements %b[%k] axis = -2 : tensor<2x3x4xbf16>, tensor<2x1x4xi64> -> tensor<2x1x4xbf16>
  func.return %0, %1, %2 : tensor<3x2xf32>, tensor<2x5xf32>, tensor<2x1x4xbf16>
}

// indices.shape[:-1] + input.shape[batch_dims + m:], m = indices.shape[-1].
// CHECK-LABEL: func.func @gather_nd(
// CUDA-LABEL: // rlx.gather_nd (op #0 of @gather_nd)
// CUDA:       const long long r = i % 6LL, j = i / 6LL;
// CUDA:       long long q1 = (long long)ids[j * 2LL + 1]; if (q1 < 0) q1 += 5LL;
// CUDA:       src += q1 * 6LL;
func.func @gather_nd(%x: tensor<4x5x6xf32>, %i: tensor<3x2xi64>, %j: tensor<4x2x1xi32>, %k: tensor<7x3xi64>, %m: tensor<4x5x1xi64>) -> (tensor<3x6xf32>, tensor<4x2x6xf32>, tensor<7xf32>, tensor<4x5xf32>) {
  // CHECK-NEXT: %{{.*}} = rlx.gather_nd %{{.*}}[%{{.*}}] batch_dims = 0 : tensor<4x5x6xf32>, tensor<3x2xi64> -> tensor<3x6xf32>
  %0 = rlx.gather_nd %x[%i] batch_dims = 0 : tensor<4x5x6xf32>, tensor<3x2xi64> -> tensor<3x6xf32>
  // CHECK-NEXT: %{{.*}} = rlx.gather_nd %{{.*}}[%{{.*}}] batch_dims = 1 : tensor<4x5x6xf32>, tensor<4x2x1xi32> -> tensor<4x2x6xf32>
  %1 = rlx.gather_nd %x[%j] batch_dims = 1 : tensor<4x5x6xf32>, tensor<4x2x1xi32> -> tensor<4x2x6xf32>
  // CHECK-NEXT: %{{.*}} = rlx.gather_nd %{{.*}}[%{{.*}}] batch_dims = 0 : tensor<4x5x6xf32>, tensor<7x3xi64> -> tensor<7xf32>
  %2 = rlx.gather_nd %x[%k] batch_dims = 0 : tensor<4x5x6xf32>, tensor<7x3xi64> -> tensor<7xf32>
  // CHECK-NEXT: %{{.*}} = rlx.gather_nd %{{.*}}[%{{.*}}] batch_dims = 2 : tensor<4x5x6xf32>, tensor<4x5x1xi64> -> tensor<4x5xf32>
  %3 = rlx.gather_nd %x[%m] batch_dims = 2 : tensor<4x5x6xf32>, tensor<4x5x1xi64> -> tensor<4x5xf32>
  func.return %0, %1, %2, %3 : tensor<3x6xf32>, tensor<4x2x6xf32>, tensor<7xf32>, tensor<4x5xf32>
}
