// RUN: rlxc-opt %s | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s --print-op-generic | rlxc-opt | filecheck %s

// Round trip of the normalisations: softmax, log_softmax, layer_norm and rms_norm.

// CHECK-LABEL: func.func @softmax(
func.func @softmax(%x: tensor<4x16xf32>, %h: tensor<2x3x8xf16>, %b: tensor<8xbf16>) {
  // CHECK-NEXT: %{{.*}} = rlx.softmax %{{.*}} axis = -1 : tensor<4x16xf32>
  %0 = rlx.softmax %x axis = -1 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.softmax %{{.*}} axis = 0 : tensor<4x16xf32>
  %1 = rlx.softmax %x axis = 0 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.softmax %{{.*}} axis = 1 : tensor<2x3x8xf16>
  %2 = rlx.softmax %h axis = 1 : tensor<2x3x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.softmax %{{.*}} axis = 0 : tensor<8xbf16>
  %3 = rlx.softmax %b axis = 0 : tensor<8xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.log_softmax %{{.*}} axis = 1 : tensor<4x16xf32>
  %4 = rlx.log_softmax %x axis = 1 : tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.log_softmax %{{.*}} axis = -3 : tensor<2x3x8xf16>
  %5 = rlx.log_softmax %h axis = -3 : tensor<2x3x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.log_softmax %{{.*}} axis = -1 : tensor<8xbf16>
  %6 = rlx.log_softmax %b axis = -1 : tensor<8xbf16>
  // CHECK-NEXT: func.return
  func.return
}

// gamma and beta cover the trailing axes of the input: one axis or several.
// CHECK-LABEL: func.func @layer_norm(
func.func @layer_norm(%x: tensor<4x16xf32>, %g: tensor<16xf32>, %x3: tensor<2x8x16xf16>, %g2: tensor<8x16xf16>, %gf: tensor<2x8x16xf16>, %xb: tensor<3x4xbf16>, %gb: tensor<4xbf16>) {
  // CHECK-NEXT: %{{.*}} = rlx.layer_norm %{{.*}}, %{{.*}}, %{{.*}} eps = 1.000000e-05 : tensor<4x16xf32>, tensor<16xf32>
  %0 = rlx.layer_norm %x, %g, %g eps = 1.000000e-05 : tensor<4x16xf32>, tensor<16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.layer_norm %{{.*}}, %{{.*}}, %{{.*}} eps = 1.000000e-06 : tensor<2x8x16xf16>, tensor<8x16xf16>
  %1 = rlx.layer_norm %x3, %g2, %g2 eps = 1.000000e-06 : tensor<2x8x16xf16>, tensor<8x16xf16>
  // CHECK-NEXT: %{{.*}} = rlx.layer_norm %{{.*}}, %{{.*}}, %{{.*}} eps = 0.000000e+00 : tensor<2x8x16xf16>, tensor<2x8x16xf16>
  %2 = rlx.layer_norm %x3, %gf, %gf eps = 0.000000e+00 : tensor<2x8x16xf16>, tensor<2x8x16xf16>
  // CHECK-NEXT: %{{.*}} = rlx.layer_norm %{{.*}}, %{{.*}}, %{{.*}} eps = 1.000000e-03 : tensor<3x4xbf16>, tensor<4xbf16>
  %3 = rlx.layer_norm %xb, %gb, %gb eps = 1.000000e-03 : tensor<3x4xbf16>, tensor<4xbf16>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @rms_norm(
func.func @rms_norm(%x: tensor<4x16xf32>, %g: tensor<16xf32>, %x3: tensor<2x8x16xf16>, %g2: tensor<8x16xf16>, %xb: tensor<3x4xbf16>, %gb: tensor<4xbf16>) {
  // CHECK-NEXT: %{{.*}} = rlx.rms_norm %{{.*}}, %{{.*}} eps = 1.000000e-06 : tensor<4x16xf32>, tensor<16xf32>
  %0 = rlx.rms_norm %x, %g eps = 1.000000e-06 : tensor<4x16xf32>, tensor<16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.rms_norm %{{.*}}, %{{.*}} eps = 1.000000e-05 : tensor<2x8x16xf16>, tensor<8x16xf16>
  %1 = rlx.rms_norm %x3, %g2 eps = 1.000000e-05 : tensor<2x8x16xf16>, tensor<8x16xf16>
  // CHECK-NEXT: %{{.*}} = rlx.rms_norm %{{.*}}, %{{.*}} eps = 0.99999990000000005 : tensor<3x4xbf16>, tensor<4xbf16>
  %2 = rlx.rms_norm %xb, %gb eps = 9.999999e-01 : tensor<3x4xbf16>, tensor<4xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.rms_norm %{{.*}}, %{{.*}} eps = 1.000000e-06 {tag} : tensor<4x16xf32>, tensor<16xf32>
  %3 = rlx.rms_norm %x, %g eps = 1.000000e-06 {tag} : tensor<4x16xf32>, tensor<16xf32>
  // CHECK-NEXT: func.return
  func.return
}
