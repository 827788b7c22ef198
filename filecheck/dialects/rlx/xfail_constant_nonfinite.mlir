// XFAIL: *
// Known bug: rlxc-opt prints a NaN or infinite element of rlx.constant as its
// bit pattern (the only way MLIR syntax spells it: 0x7FC00000 is f32 NaN), but
// parses that hex literal back as the *integer* 2143289344 converted to float.
// A NaN/-inf constant (an attention mask, a max-reduction identity) built by the
// graph builder therefore changes value silently on a print/parse round trip;
// here `0x7FC00000` comes back as `2.14328934e+09`.
// RUN: rlxc-opt %s | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s --print-op-generic | rlxc-opt | filecheck %s

// CHECK-LABEL: func.func @nonfinite(
func.func @nonfinite() {
  // CHECK-NEXT: %{{.*}} = rlx.constant dense<[{{0x7[fF][cC]00000}}, {{0x7[fF]800000}}, {{0x[fF][fF]800000}}]> : tensor<3xf32>
  %0 = rlx.constant dense<[0x7FC00000, 0x7F800000, 0xFF800000]> : tensor<3xf32>
  // CHECK-NEXT: %{{.*}} = rlx.constant dense<{{0x[fF][cC]00}}> : tensor<2xf16>
  %1 = rlx.constant dense<0xFC00> : tensor<2xf16>
  // CHECK-NEXT: %{{.*}} = rlx.constant dense<{{0x7[fF][cC]0}}> : tensor<2xbf16>
  %2 = rlx.constant dense<0x7FC0> : tensor<2xbf16>
  func.return
}
