// RUN: rlxc-opt %s --split-input-file -p rlx-merge-projections | filecheck %s
// RUN: rlxc-opt %s --split-input-file -p 'rlx-merge-projections{max_rows=8}' | filecheck %s --check-prefix=ROWS

// Q, K and V of one input: one linear over the weights and biases joined
// (rows of [out, in] weights), sliced back on the last axis. The params the
// join reads move above it; `rlxc.compile` computes the concats once.
// CHECK-LABEL: func.func @qkv
// ROWS-LABEL: func.func @qkv
// ROWS: rlx.concat %wq, %wk, %wv axis = 0
// CHECK-NEXT: %wq = rlx.param "q.w" : tensor<8x16xf32>
// CHECK-NEXT: %bq = rlx.param "q.b" : tensor<8xf32>
// CHECK-NEXT: %wk = rlx.param "k.w" : tensor<8x16xf32>
// CHECK-NEXT: %wv = rlx.param "v.w" : tensor<8x16xf32>
// CHECK-NEXT: %bk = rlx.param "k.b" : tensor<8xf32>
// CHECK-NEXT: %bv = rlx.param "v.b" : tensor<8xf32>
// CHECK-NEXT: %[[W:.*]] = rlx.concat %wq, %wk, %wv axis = 0 : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<24x16xf32>
// CHECK-NEXT: %[[B:.*]] = rlx.concat %bq, %bk, %bv axis = 0 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<24xf32>
// CHECK-NEXT: %[[Y:.*]] = rlx.linear %x, %[[W]] bias %[[B]] : tensor<2x4x16xf32>, tensor<24x16xf32>, tensor<24xf32> -> tensor<2x4x24xf32>
// CHECK-NEXT: %q = rlx.slice %[[Y]] starts = [0, 0, 0] ends = [2, 4, 8] steps = [1, 1, 1] : tensor<2x4x24xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: %k = rlx.slice %[[Y]] starts = [0, 0, 8] ends = [2, 4, 16] steps = [1, 1, 1] : tensor<2x4x24xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: %v = rlx.slice %[[Y]] starts = [0, 0, 16] ends = [2, 4, 24] steps = [1, 1, 1] : tensor<2x4x24xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: %s = rlx.add %q, %k
// CHECK-NEXT: %t = rlx.add %s, %v
func.func @qkv(%x: tensor<2x4x16xf32>) -> tensor<2x4x8xf32> {
  %wq = rlx.param "q.w" : tensor<8x16xf32>
  %bq = rlx.param "q.b" : tensor<8xf32>
  %q = rlx.linear %x, %wq bias %bq : tensor<2x4x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  %wk = rlx.param "k.w" : tensor<8x16xf32>
  %bk = rlx.param "k.b" : tensor<8xf32>
  %k = rlx.linear %x, %wk bias %bk : tensor<2x4x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  %wv = rlx.param "v.w" : tensor<8x16xf32>
  %bv = rlx.param "v.b" : tensor<8xf32>
  %v = rlx.linear %x, %wv bias %bv : tensor<2x4x16xf32>, tensor<8x16xf32>, tensor<8xf32> -> tensor<2x4x8xf32>
  %s = rlx.add %q, %k : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %t = rlx.add %s, %v : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  func.return %t : tensor<2x4x8xf32>
}

// -----

// SwiGLU's gate and up (no bias, different widths are fine) merge; the
// down projection reads another input and stays. Linears with a different
// activation, or a weight that is not a param, do not merge.
// CHECK-LABEL: func.func @gate_up
// CHECK:      %[[W:.*]] = rlx.concat %wg, %wu axis = 0 : tensor<32x16xf32>, tensor<32x16xf32> -> tensor<64x16xf32>
// CHECK-NEXT: %[[Y:.*]] = rlx.linear %x, %[[W]] : tensor<4x16xf32>, tensor<64x16xf32> -> tensor<4x64xf32>
// CHECK-NEXT: %g = rlx.slice %[[Y]] starts = [0, 0] ends = [4, 32] steps = [1, 1] : tensor<4x64xf32> -> tensor<4x32xf32>
// CHECK-NEXT: %u = rlx.slice %[[Y]] starts = [0, 32] ends = [4, 64] steps = [1, 1] : tensor<4x64xf32> -> tensor<4x32xf32>
// CHECK:      %r = rlx.linear %x, %wr activation "relu"
// CHECK:      %z = rlx.linear %x, %wz : tensor<4x16xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
// CHECK:      %d = rlx.linear %h, %wd
func.func @gate_up(%x: tensor<4x16xf32>, %wz: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %wg = rlx.param "gate.w" : tensor<32x16xf32>
  %wu = rlx.param "up.w" : tensor<32x16xf32>
  %wd = rlx.param "down.w" : tensor<16x32xf32>
  %wr = rlx.param "r.w" : tensor<8x16xf32>
  %g = rlx.linear %x, %wg : tensor<4x16xf32>, tensor<32x16xf32> -> tensor<4x32xf32>
  %u = rlx.linear %x, %wu : tensor<4x16xf32>, tensor<32x16xf32> -> tensor<4x32xf32>
  %r = rlx.linear %x, %wr activation "relu" : tensor<4x16xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  %z = rlx.linear %x, %wz : tensor<4x16xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  %a = rlx.silu %g : tensor<4x32xf32>
  %h = rlx.mul %a, %u : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>
  %d = rlx.linear %h, %wd : tensor<4x32xf32>, tensor<16x32xf32> -> tensor<4x16xf32>
  func.return %d, %r, %z : tensor<4x16xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// matmuls with param right-hand sides [K, N] join on the columns. Their
// input has 3x5 = 15 rows: with max_rows=8 they stay apart.
// ROWS-LABEL: func.func @matmuls
// ROWS-NOT: rlx.concat
// ROWS: func.return
// CHECK-LABEL: func.func @matmuls
// CHECK-NEXT: %a = rlx.param "a" : tensor<16x8xf32>
// CHECK-NEXT: %b = rlx.param "b" : tensor<16x4xf32>
// CHECK-NEXT: %[[W:.*]] = rlx.concat %a, %b axis = 1 : tensor<16x8xf32>, tensor<16x4xf32> -> tensor<16x12xf32>
// CHECK-NEXT: %[[Y:.*]] = rlx.matmul %x, %[[W]] : tensor<3x5x16xf32>, tensor<16x12xf32> -> tensor<3x5x12xf32>
// CHECK-NEXT: %ya = rlx.slice %[[Y]] starts = [0, 0, 0] ends = [3, 5, 8] steps = [1, 1, 1] : tensor<3x5x12xf32> -> tensor<3x5x8xf32>
// CHECK-NEXT: %yb = rlx.slice %[[Y]] starts = [0, 0, 8] ends = [3, 5, 12] steps = [1, 1, 1] : tensor<3x5x12xf32> -> tensor<3x5x4xf32>
func.func @matmuls(%x: tensor<3x5x16xf32>) -> (tensor<3x5x8xf32>, tensor<3x5x4xf32>) {
  %a = rlx.param "a" : tensor<16x8xf32>
  %b = rlx.param "b" : tensor<16x4xf32>
  %ya = rlx.matmul %x, %a : tensor<3x5x16xf32>, tensor<16x8xf32> -> tensor<3x5x8xf32>
  %yb = rlx.matmul %x, %b : tensor<3x5x16xf32>, tensor<16x4xf32> -> tensor<3x5x4xf32>
  func.return %ya, %yb : tensor<3x5x8xf32>, tensor<3x5x4xf32>
}

// -----

// One weight used twice is one gemm written twice (cse's to remove): nothing
// to join. Twins within a merged group are dropped (@twins).
// CHECK-LABEL: func.func @nothing
// CHECK-NOT: rlx.concat
// CHECK: func.return %y, %y2
func.func @nothing(%x: tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %w = rlx.param "w" : tensor<8x16xf32>
  %y = rlx.linear %x, %w : tensor<4x16xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  %y2 = rlx.linear %x, %w : tensor<4x16xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  func.return %y, %y2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @twins
// CHECK:      %[[W:.*]] = rlx.concat %a, %b axis = 0 : tensor<8x16xf32>, tensor<4x16xf32> -> tensor<12x16xf32>
// CHECK-NEXT: %[[Y:.*]] = rlx.linear %x, %[[W]]
// CHECK-NEXT: %ya = rlx.slice %[[Y]] starts = [0, 0] ends = [4, 8]
// CHECK-NEXT: %yb = rlx.slice %[[Y]] starts = [0, 8] ends = [4, 12]
// CHECK-NEXT: func.return %ya, %yb, %ya
func.func @twins(%x: tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x4xf32>, tensor<4x8xf32>) {
  %a = rlx.param "a" : tensor<8x16xf32>
  %b = rlx.param "b" : tensor<4x16xf32>
  %ya = rlx.linear %x, %a : tensor<4x16xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  %yb = rlx.linear %x, %b : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x4xf32>
  %ya2 = rlx.linear %x, %a : tensor<4x16xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  func.return %ya, %yb, %ya2 : tensor<4x8xf32>, tensor<4x4xf32>, tensor<4x8xf32>
}
