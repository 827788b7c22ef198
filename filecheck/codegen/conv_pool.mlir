// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s

// A convolution of one group is channels-last patches and a cuBLASLt gemm
// with the bias as its epilogue (rlx-conv-to-gemm). Over three channels the
// im2col kernel reads the NCHW input itself, an element at a time, and
// stores 16-byte items of [n, oh, ow, 28]: 27 taps and a zero column, so
// the gemm's rows stay aligned. The pool after it runs channels last
// (consecutive threads, consecutive channels).
// CHECK: // rlx.im2col
// CHECK-NEXT: // im2col form: each element gathered, 4 an item (16 bytes), NCHW input
// CHECK: if (kk >= 27u) { item.e[j] = (float)0; continue; }
// CHECK: const unsigned tap = kk / 3u, ci = kk % 3u;
// CHECK: item.e[j] = in ? x[((b * 3u + ci) * 8u + (unsigned)iy) * 8u + (unsigned)ix] : (float)0;
// CHECK: yv[q] = item.raw;
// CHECK: // rlx.max_pool2d
// CHECK: const long long ch = i % 4LL, ox = (i / 4LL) % 4LL, oy = (i / 16LL) % 4LL, b = i / 64LL;
// CHECK: const float v = x[((b * 8LL + iy) * 8LL + ix) * 4LL + ch];
// CHECK: acc = rlx_maxf(acc, v)
// A grouped convolution keeps the direct kernel: a thread per output element.
// CHECK: // rlx.conv2d
// CHECK: float acc = bias[oc];
// CHECK: for (int ci = 0; ci < 2; ++ci)
// CHECK: const long long iy = oy * 1 - 1 + ky * 1; if (iy < 0 || iy >= 8) continue;
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %xg: tensor<1x4x8x8xf32>, %wg: tensor<4x2x3x3xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x8x8xf32>) {
  %c = rlx.conv2d %x, %w bias %b stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %p = rlx.max_pool2d %c kernel = [2, 2] stride = [2, 2] padding = [0, 0, 0, 0] : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  %g = rlx.conv2d %xg, %wg bias %b stride = [1, 1] padding = [1, 1, 1, 1] dilation = [1, 1] groups = 2 : tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  func.return %p, %g : tensor<1x4x4x4xf32>, tensor<1x4x8x8xf32>
}

// Dilated pools step the window by the dilation; with ceil_mode and count_include_pad the
// divisor counts the taps before the padded end, which the last window may hang past.
// CHECK: // rlx.max_pool2d
// CHECK: const long long iy = y0 + ky * 2; if (iy < 0 || iy >= 4) continue;
// CHECK: // rlx.avg_pool2d
// CHECK: const long long ix = x0 + kx * 2; if (ix < 0 || ix >= 7) continue;
// CHECK: const long long nh = min(3LL, (7LL - (y0 + 1) + 0) / 1), nw = min(2LL, (8LL - (x0 + 0) + 1) / 2);
// CHECK: y[i] = rlx_st_f16(acc / (float)(nh * nw));
func.func @ceil(%x: tensor<1x1x4x4xf32>, %y: tensor<1x2x5x7xf16>) -> (tensor<1x1x2x2xf32>, tensor<1x2x3x4xf16>) {
  %0 = rlx.max_pool2d %x kernel = [2, 2] stride = [1, 1] padding = [0, 0, 0, 0] dilation = [2, 2] : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>
  %1 = rlx.avg_pool2d %y kernel = [3, 2] stride = [2, 2] padding = [1, 0, 1, 1] dilation = [1, 2] ceil_mode count_include_pad : tensor<1x2x5x7xf16> -> tensor<1x2x3x4xf16>
  func.return %0, %1 : tensor<1x1x2x2xf32>, tensor<1x2x3x4xf16>
}
