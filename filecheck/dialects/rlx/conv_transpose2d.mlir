// RUN: rlxc-opt %s | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s --print-op-generic | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s --check-prefix=CUDA

// rlx.conv_transpose2d (ONNX ConvTranspose): NCHW input, weight [in, out/groups, kh, kw],
// extent stride*(in-1) + output_padding + dilation*(k-1) + 1 - pad_begin - pad_end.

// CHECK-LABEL: func.func @main(
// CHECK-NEXT: %{{.*}} = rlx.conv_transpose2d %{{.*}}, %{{.*}} stride = [1, 1] padding = [0, 0, 0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x5x5xf32>, tensor<3x4x3x3xf32> -> tensor<1x4x7x7xf32>
// CHECK-NEXT: %{{.*}} = rlx.conv_transpose2d %{{.*}}, %{{.*}} bias %{{.*}} stride = [2, 2] padding = [1, 1, 1, 1] output_padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x5x5xf32>, tensor<3x4x3x3xf32>, tensor<4xf32> -> tensor<1x4x10x10xf32>
// CHECK-NEXT: %{{.*}} = rlx.conv_transpose2d %{{.*}}, %{{.*}} stride = [3, 2] padding = [1, 2, 1, 2] output_padding = [0, 0] dilation = [2, 1] groups = 3 : tensor<2x6x3x3xf16>, tensor<6x2x3x3xf16> -> tensor<2x6x9x3xf16>
// CHECK-NEXT: %{{.*}} = rlx.conv_transpose2d %{{.*}}, %{{.*}} stride = [2, 2] padding = [0, 0, 0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x2x2x2xbf16>, tensor<2x1x2x2xbf16> -> tensor<1x1x4x4xbf16>

// A thread per output element gathers the input pixels whose kernel reaches it:
// CUDA: // rlx.conv_transpose2d (op #0 of @main)
// CUDA: const long long ox = i % 7LL, oy = (i / 7LL) % 7LL, oc = (i / 49LL) % 4LL, b = i / 196LL;
// CUDA: const long long ty = oy + 0 - ky * 1; if (ty < 0 || ty % 1 != 0 || ty / 1 >= 5) continue;
// CUDA: // rlx.conv_transpose2d (op #1 of @main)
// CUDA: float acc = bias[oc];
// CUDA: const long long ty = oy + 1 - ky * 1; if (ty < 0 || ty % 2 != 0 || ty / 2 >= 5) continue;
// CUDA: const long long tx = ox + 1 - kx * 1; if (tx < 0 || tx % 2 != 0 || tx / 2 >= 5) continue;
// CUDA: acc += x[((b * 3LL + ch) * 5LL + iy) * 5LL + ix] * wt[((ch * 4LL + ocg) * 3 + ky) * 3 + kx];
// CUDA: // rlx.conv_transpose2d (op #2 of @main)
// CUDA: const long long g = oc / 2LL, ocg = oc % 2LL;
// CUDA: const long long ty = oy + 1 - ky * 2; if (ty < 0 || ty % 3 != 0 || ty / 3 >= 3) continue;
// CUDA: acc += rlx_ld_f16(x[((b * 6LL + ch) * 3LL + iy) * 3LL + ix]) * rlx_ld_f16(wt[((ch * 2LL + ocg) * 3 + ky) * 3 + kx]);
// CUDA: y[i] = rlx_st_f16(acc);
// CUDA: // rlx.conv_transpose2d (op #3 of @main)
// CUDA: y[i] = rlx_st_bf16(acc);
func.func @main(%x: tensor<1x3x5x5xf32>, %w: tensor<3x4x3x3xf32>, %b: tensor<4xf32>, %h: tensor<2x6x3x3xf16>, %wh: tensor<6x2x3x3xf16>, %xb: tensor<1x2x2x2xbf16>, %wb: tensor<2x1x2x2xbf16>) -> (tensor<1x4x7x7xf32>, tensor<1x4x10x10xf32>, tensor<2x6x9x3xf16>, tensor<1x1x4x4xbf16>) {
  %0 = rlx.conv_transpose2d %x, %w stride = [1, 1] padding = [0, 0, 0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x5x5xf32>, tensor<3x4x3x3xf32> -> tensor<1x4x7x7xf32>
  %1 = rlx.conv_transpose2d %x, %w bias %b stride = [2, 2] padding = [1, 1, 1, 1] output_padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x5x5xf32>, tensor<3x4x3x3xf32>, tensor<4xf32> -> tensor<1x4x10x10xf32>
  %2 = rlx.conv_transpose2d %h, %wh stride = [3, 2] padding = [1, 2, 1, 2] output_padding = [0, 0] dilation = [2, 1] groups = 3 : tensor<2x6x3x3xf16>, tensor<6x2x3x3xf16> -> tensor<2x6x9x3xf16>
  %3 = rlx.conv_transpose2d %xb, %wb stride = [2, 2] padding = [0, 0, 0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x2x2x2xbf16>, tensor<2x1x2x2xbf16> -> tensor<1x1x4x4xbf16>
  func.return %0, %1, %2, %3 : tensor<1x4x7x7xf32>, tensor<1x4x10x10xf32>, tensor<2x6x9x3xf16>, tensor<1x1x4x4xbf16>
}
