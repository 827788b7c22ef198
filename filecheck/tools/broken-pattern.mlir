// A pass broken on purpose (test-rlx-broken-pattern: one right pattern, one
// wrong one), found with the tools of docs/writing-a-pass.md section 8.
// RUN: not rlxc-opt %s -p test-rlx-broken-pattern --check-semantics 2>&1 | filecheck %s
// RUN: rlxc-opt %s -p test-rlx-broken-pattern --check-semantics --rewrite-counter=SwapSubOperands:0:2 | filecheck %s --check-prefix=FIRST-TWO
// RUN: not rlxc-opt %s -p test-rlx-broken-pattern --check-semantics --rewrite-counter=SwapSubOperands:2:1 2>&1 | filecheck %s --check-prefix=THIRD
// RUN: rlxc-opt %s -p test-rlx-broken-pattern --pass-statistics 2>&1 >/dev/null | filecheck %s --check-prefix=STATS
// RUN: rlxc-opt %s -p test-rlx-broken-pattern --print-ir-after-change 2>&1 >/dev/null | filecheck %s --check-prefix=CHANGE

// CHECK: pass 'test-rlx-broken-pattern' changed the module's meaning: output #0: relative error
// CHECK: rewrites by that pass: NegateTwice applied 1 of 2 attempts, SwapSubOperands applied 1 of 7 attempts
// CHECK-NEXT: bisect one with --rewrite-counter=PATTERN:0:N

// FIRST-TWO: func.func @main

// THIRD: changed the module's meaning
// THIRD: rewrites by that pass: NegateTwice applied 1 of 2 attempts, SwapSubOperands applied 1 of 1 attempts

// STATS: // -----// Pass statistics //----- //
// STATS-NEXT: test-rlx-broken-pattern (test-rlx-broken-pattern)
// STATS-NEXT:   ops: 8 -> 6
// STATS-NEXT:     rlx.neg                               2 -> 0      (-2)
// STATS-NEXT:   pattern NegateTwice: applied 1 of 2 attempts
// STATS-NEXT:   pattern SwapSubOperands: applied 1 of 7 attempts

// CHANGE: // -----// IR Dump After test-rlx-broken-pattern (test-rlx-broken-pattern) //----- //
// CHANGE: rlx.sub %b, %e

func.func @main(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %a = rlx.sub %x, %y : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %n = rlx.neg %a : tensor<8xf32>
  %nn = rlx.neg %n : tensor<8xf32>
  %e = rlx.exp %nn : tensor<8xf32>
  %b = rlx.sub %y, %x : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %c = rlx.sub %e, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  func.return %c : tensor<8xf32>
}
