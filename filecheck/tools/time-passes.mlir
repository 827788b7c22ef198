// --time-passes (or --mlir-timing) prints a tree that follows named
// pipelines into their passes, on stderr.
// RUN: rlxc-opt %s -p 'rlx-plan,cse' --time-passes 2>&1 >/dev/null | filecheck %s
// RUN: rlxc-opt %s -p rlx-plan --pass-statistics 2>&1 >/dev/null | filecheck %s --check-prefix=STATS

// CHECK: ... Execution time report ...
// CHECK: Total Execution Time: {{[0-9.]+}} seconds
// CHECK: ----Wall Time----  ----Name----
// CHECK-NEXT: {{^ +[0-9.]+ \( *[0-9.]+%\)  rlx-plan$}}
// CHECK-NEXT: {{^ +[0-9.]+ \( *[0-9.]+%\)    rlx-conv-to-gemm$}}
// CHECK-NEXT: {{^ +[0-9.]+ \( *[0-9.]+%\)    rlx-raise-attention$}}
// CHECK-NEXT: {{^ +[0-9.]+ \( *[0-9.]+%\)    rlx-merge-projections$}}
// CHECK-NEXT: {{^ +[0-9.]+ \( *[0-9.]+%\)    rlx-unfuse$}}
// CHECK: {{^ +[0-9.]+ \( *[0-9.]+%\)    rlx-plan-memory$}}
// CHECK-NEXT: {{^ +[0-9.]+ \( *[0-9.]+%\)  cse$}}
// CHECK: {{^ +[0-9.]+ \(100.0%\)  Total$}}

// STATS: rlx-fuse-elementwise (rlx-fuse-elementwise)
// STATS-NEXT: ops: 4 -> 6
// STATS: rlx.elementwise_region                0 -> 1      (+1)
// STATS: rlx-plan-memory (rlx-plan-memory)
// STATS: @main: arena {{[0-9]+}} B, peak live {{[0-9]+}} B

func.func @main(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = rlx.add %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %1 = rlx.tanh %0 : tensor<4x8xf32>
  func.return %1 : tensor<4x8xf32>
}
