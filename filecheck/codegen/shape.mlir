// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s

// A transpose that changes the innermost axis goes through a padded 32x32
// shared-memory tile (once size-1 axes are dropped and axes that stay
// adjacent merged: [2, 0, 1] of 2x3x4 is the 2-D transpose of 6x4). Slices,
// concats and gathers map output to source indices, one trip per thread,
// in 16-byte items where the innermost runs allow (4 floats here).
// CHECK: // injective form: tiled transpose, 32x32 tiles of axes (1, 2) of 2x3x4
// CHECK: __shared__ float tile[32][33];
// CHECK: if (row < 3u && col < 4u) tile[j][tx] = x[xb + row * 4u + col];
// CHECK: if (row < 3u && col < 4u) y[yb + col * 3u + row] = tile[tx][j];
// CHECK: // injective form: tiled transpose, 32x32 tiles of axes (0, 1) of 6x4
// CHECK: // injective form: strided slice, one element per item
// CHECK: v[u] = x[4u + (i / 4u) * 12u + ((i / 2u) % 2u) * 4u + (i % 2u) * 2u];
// CHECK: // injective form: strided slice, 4 elements per 16-byte item
// CHECK: v[u] = x[i];
// CHECK: // injective form: concat along axis 0, 4 elements per 16-byte item
// CHECK: if (a < 3u) v[u] = x0[
// CHECK: else if (a < 8u) v[u] = x1[
// CHECK: // injective form: gather along axis 0, 4 elements per 16-byte item
// CHECK: long long q = (long long)ids[j]; if (q < 0) q += 10LL;
// CHECK: if (i < 6u) y[i] = v[u];
func.func @main(%x: tensor<2x3x4xf32>, %y: tensor<5x4xf32>, %t: tensor<10x4xf32>, %ids: tensor<6xi64>) -> (tensor<2x4x3xf32>, tensor<4x2x3xf32>, tensor<2x2x2xf32>, tensor<8x4xf32>, tensor<6x4xf32>) {
  %a = rlx.transpose %x perm = [0, 2, 1] : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  %b = rlx.transpose %x perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %c = rlx.slice %x starts = [0, 1, 0] ends = [2, 3, 4] steps = [1, 1, 2] : tensor<2x3x4xf32> -> tensor<2x2x2xf32>
  %s = rlx.slice %y starts = [0, 0] ends = [3, 4] steps = [1, 1] : tensor<5x4xf32> -> tensor<3x4xf32>
  %d = rlx.concat %s, %y axis = 0 : tensor<3x4xf32>, tensor<5x4xf32> -> tensor<8x4xf32>
  %e = rlx.gather %t[%ids] axis = 0 : tensor<10x4xf32>, tensor<6xi64> -> tensor<6x4xf32>
  func.return %a, %b, %c, %d, %e : tensor<2x4x3xf32>, tensor<4x2x3xf32>, tensor<2x2x2xf32>, tensor<8x4xf32>, tensor<6x4xf32>
}
