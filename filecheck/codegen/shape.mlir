// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s

// Swapping the last two axes goes through a padded shared-memory tile; other
// permutations, slices, concats and gathers map output to source indices.
// CHECK: __shared__ float tile[32][33];
// CHECK: y[i] = x[
// CHECK: y[i] = x[{{[0-9]+}}LL + 
// CHECK: if (a < 3LL) y[i] = x0[
// CHECK: else if (a < 8LL) y[i] = x1[
// CHECK: long long q = (long long)ids[j]; if (q < 0) q += 10LL;
func.func @main(%x: tensor<2x3x4xf32>, %y: tensor<5x4xf32>, %t: tensor<10x4xf32>, %ids: tensor<6xi64>) -> (tensor<2x4x3xf32>, tensor<4x2x3xf32>, tensor<2x2x2xf32>, tensor<8x4xf32>, tensor<6x4xf32>) {
  %a = rlx.transpose %x perm = [0, 2, 1] : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  %b = rlx.transpose %x perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %c = rlx.slice %x starts = [0, 1, 0] ends = [2, 3, 4] steps = [1, 1, 2] : tensor<2x3x4xf32> -> tensor<2x2x2xf32>
  %s = rlx.slice %y starts = [0, 0] ends = [3, 4] steps = [1, 1] : tensor<5x4xf32> -> tensor<3x4xf32>
  %d = rlx.concat %s, %y axis = 0 : tensor<3x4xf32>, tensor<5x4xf32> -> tensor<8x4xf32>
  %e = rlx.gather %t[%ids] axis = 0 : tensor<10x4xf32>, tensor<6xi64> -> tensor<6x4xf32>
  func.return %a, %b, %c, %d, %e : tensor<2x4x3xf32>, tensor<4x2x3xf32>, tensor<2x2x2xf32>, tensor<8x4xf32>, tensor<6x4xf32>
}
