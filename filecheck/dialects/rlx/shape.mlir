// RUN: rlxc-opt %s | rlxc-opt | filecheck %s
// RUN: rlxc-opt %s --print-op-generic | rlxc-opt | filecheck %s

// Round trip of the shape ops: reshape, transpose, expand, concat, slice, gather.

// CHECK-LABEL: func.func @reshape(
func.func @reshape(%x: tensor<4x16xf32>, %s: tensor<f16>, %b: tensor<2x3xi1>, %l: tensor<6xi64>, %z: tensor<0x4xbf16>) {
  // CHECK-NEXT: %{{.*}} = rlx.reshape %{{.*}} : tensor<4x16xf32> -> tensor<64xf32>
  %0 = rlx.reshape %x : tensor<4x16xf32> -> tensor<64xf32>
  // CHECK-NEXT: %{{.*}} = rlx.reshape %{{.*}} : tensor<4x16xf32> -> tensor<2x2x16xf32>
  %1 = rlx.reshape %x : tensor<4x16xf32> -> tensor<2x2x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.reshape %{{.*}} : tensor<4x16xf32> -> tensor<4x16xf32>
  %2 = rlx.reshape %x : tensor<4x16xf32> -> tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.reshape %{{.*}} : tensor<f16> -> tensor<1x1xf16>
  %3 = rlx.reshape %s : tensor<f16> -> tensor<1x1xf16>
  // CHECK-NEXT: %{{.*}} = rlx.reshape %{{.*}} : tensor<1x1xf16> -> tensor<f16>
  %4 = rlx.reshape %3 : tensor<1x1xf16> -> tensor<f16>
  // CHECK-NEXT: %{{.*}} = rlx.reshape %{{.*}} : tensor<2x3xi1> -> tensor<3x2xi1>
  %5 = rlx.reshape %b : tensor<2x3xi1> -> tensor<3x2xi1>
  // CHECK-NEXT: %{{.*}} = rlx.reshape %{{.*}} : tensor<6xi64> -> tensor<1x6x1xi64>
  %6 = rlx.reshape %l : tensor<6xi64> -> tensor<1x6x1xi64>
  // CHECK-NEXT: %{{.*}} = rlx.reshape %{{.*}} : tensor<0x4xbf16> -> tensor<4x0xbf16>
  %7 = rlx.reshape %z : tensor<0x4xbf16> -> tensor<4x0xbf16>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @transpose(
func.func @transpose(%x: tensor<4x16xf32>, %y: tensor<2x3x4x5xf16>, %s: tensor<i32>, %b: tensor<2x3xi1>) {
  // CHECK-NEXT: %{{.*}} = rlx.transpose %{{.*}} perm = [1, 0] : tensor<4x16xf32> -> tensor<16x4xf32>
  %0 = rlx.transpose %x perm = [1, 0] : tensor<4x16xf32> -> tensor<16x4xf32>
  // CHECK-NEXT: %{{.*}} = rlx.transpose %{{.*}} perm = [0, 1] : tensor<4x16xf32> -> tensor<4x16xf32>
  %1 = rlx.transpose %x perm = [0, 1] : tensor<4x16xf32> -> tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.transpose %{{.*}} perm = [0, 2, 1, 3] : tensor<2x3x4x5xf16> -> tensor<2x4x3x5xf16>
  %2 = rlx.transpose %y perm = [0, 2, 1, 3] : tensor<2x3x4x5xf16> -> tensor<2x4x3x5xf16>
  // CHECK-NEXT: %{{.*}} = rlx.transpose %{{.*}} perm = [3, 2, 1, 0] : tensor<2x3x4x5xf16> -> tensor<5x4x3x2xf16>
  %3 = rlx.transpose %y perm = [3, 2, 1, 0] : tensor<2x3x4x5xf16> -> tensor<5x4x3x2xf16>
  // CHECK-NEXT: %{{.*}} = rlx.transpose %{{.*}} perm = [] : tensor<i32> -> tensor<i32>
  %4 = rlx.transpose %s perm = [] : tensor<i32> -> tensor<i32>
  // CHECK-NEXT: %{{.*}} = rlx.transpose %{{.*}} perm = [1, 0] : tensor<2x3xi1> -> tensor<3x2xi1>
  %5 = rlx.transpose %b perm = [1, 0] : tensor<2x3xi1> -> tensor<3x2xi1>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @expand(
func.func @expand(%x: tensor<1x16xf32>, %v: tensor<16xbf16>, %s: tensor<i64>, %c: tensor<3x1xi1>) {
  // CHECK-NEXT: %{{.*}} = rlx.expand %{{.*}} : tensor<1x16xf32> -> tensor<4x16xf32>
  %0 = rlx.expand %x : tensor<1x16xf32> -> tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.expand %{{.*}} : tensor<1x16xf32> -> tensor<1x16xf32>
  %1 = rlx.expand %x : tensor<1x16xf32> -> tensor<1x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.expand %{{.*}} : tensor<1x16xf32> -> tensor<2x3x16xf32>
  %2 = rlx.expand %x : tensor<1x16xf32> -> tensor<2x3x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.expand %{{.*}} : tensor<16xbf16> -> tensor<2x4x16xbf16>
  %3 = rlx.expand %v : tensor<16xbf16> -> tensor<2x4x16xbf16>
  // CHECK-NEXT: %{{.*}} = rlx.expand %{{.*}} : tensor<i64> -> tensor<3x3xi64>
  %4 = rlx.expand %s : tensor<i64> -> tensor<3x3xi64>
  // CHECK-NEXT: %{{.*}} = rlx.expand %{{.*}} : tensor<3x1xi1> -> tensor<2x3x5xi1>
  %5 = rlx.expand %c : tensor<3x1xi1> -> tensor<2x3x5xi1>
  // CHECK-NEXT: %{{.*}} = rlx.expand %{{.*}} : tensor<1x16xf32> -> tensor<0x16xf32>
  %6 = rlx.expand %x : tensor<1x16xf32> -> tensor<0x16xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @concat(
func.func @concat(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>, %c: tensor<2x5xf32>, %h: tensor<1x2x3xf16>, %i: tensor<2xi32>, %m: tensor<1xi1>, %z: tensor<0x4xf32>) {
  // CHECK-NEXT: %{{.*}} = rlx.concat %{{.*}} axis = 0 : tensor<2x4xf32> -> tensor<2x4xf32>
  %0 = rlx.concat %a axis = 0 : tensor<2x4xf32> -> tensor<2x4xf32>
  // CHECK-NEXT: %{{.*}} = rlx.concat %{{.*}}, %{{.*}} axis = 0 : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<5x4xf32>
  %1 = rlx.concat %a, %b axis = 0 : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<5x4xf32>
  // CHECK-NEXT: %{{.*}} = rlx.concat %{{.*}}, %{{.*}}, %{{.*}} axis = 1 : tensor<2x4xf32>, tensor<2x5xf32>, tensor<2x4xf32> -> tensor<2x13xf32>
  %2 = rlx.concat %a, %c, %a axis = 1 : tensor<2x4xf32>, tensor<2x5xf32>, tensor<2x4xf32> -> tensor<2x13xf32>
  // CHECK-NEXT: %{{.*}} = rlx.concat %{{.*}}, %{{.*}} axis = -1 : tensor<2x4xf32>, tensor<2x5xf32> -> tensor<2x9xf32>
  %3 = rlx.concat %a, %c axis = -1 : tensor<2x4xf32>, tensor<2x5xf32> -> tensor<2x9xf32>
  // CHECK-NEXT: %{{.*}} = rlx.concat %{{.*}}, %{{.*}} axis = -3 : tensor<1x2x3xf16>, tensor<1x2x3xf16> -> tensor<2x2x3xf16>
  %4 = rlx.concat %h, %h axis = -3 : tensor<1x2x3xf16>, tensor<1x2x3xf16> -> tensor<2x2x3xf16>
  // CHECK-NEXT: %{{.*}} = rlx.concat %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} axis = 0 : tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32> -> tensor<8xi32>
  %5 = rlx.concat %i, %i, %i, %i axis = 0 : tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32> -> tensor<8xi32>
  // CHECK-NEXT: %{{.*}} = rlx.concat %{{.*}}, %{{.*}} axis = 0 : tensor<1xi1>, tensor<1xi1> -> tensor<2xi1>
  %6 = rlx.concat %m, %m axis = 0 : tensor<1xi1>, tensor<1xi1> -> tensor<2xi1>
  // CHECK-NEXT: %{{.*}} = rlx.concat %{{.*}}, %{{.*}}, %{{.*}} axis = 0 : tensor<0x4xf32>, tensor<3x4xf32>, tensor<0x4xf32> -> tensor<3x4xf32>
  %7 = rlx.concat %z, %b, %z axis = 0 : tensor<0x4xf32>, tensor<3x4xf32>, tensor<0x4xf32> -> tensor<3x4xf32>
  // CHECK-NEXT: func.return
  func.return
}

// Starts and ends are absolute; negative steps walk backwards (end -1 reaches index 0).
// CHECK-LABEL: func.func @slice(
func.func @slice(%x: tensor<4x16xf32>, %v: tensor<10xi64>, %s: tensor<bf16>, %b: tensor<3x3xi1>) {
  // CHECK-NEXT: %{{.*}} = rlx.slice %{{.*}} starts = [0, 2] ends = [4, 16] steps = [1, 2] : tensor<4x16xf32> -> tensor<4x7xf32>
  %0 = rlx.slice %x starts = [0, 2] ends = [4, 16] steps = [1, 2] : tensor<4x16xf32> -> tensor<4x7xf32>
  // CHECK-NEXT: %{{.*}} = rlx.slice %{{.*}} starts = [0, 0] ends = [4, 16] steps = [1, 1] : tensor<4x16xf32> -> tensor<4x16xf32>
  %1 = rlx.slice %x starts = [0, 0] ends = [4, 16] steps = [1, 1] : tensor<4x16xf32> -> tensor<4x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.slice %{{.*}} starts = [3, 15] ends = [-1, -1] steps = [-1, -4] : tensor<4x16xf32> -> tensor<4x4xf32>
  %2 = rlx.slice %x starts = [3, 15] ends = [-1, -1] steps = [-1, -4] : tensor<4x16xf32> -> tensor<4x4xf32>
  // CHECK-NEXT: %{{.*}} = rlx.slice %{{.*}} starts = [1] ends = [9] steps = [3] : tensor<10xi64> -> tensor<3xi64>
  %3 = rlx.slice %v starts = [1] ends = [9] steps = [3] : tensor<10xi64> -> tensor<3xi64>
  // CHECK-NEXT: %{{.*}} = rlx.slice %{{.*}} starts = [5] ends = [5] steps = [1] : tensor<10xi64> -> tensor<0xi64>
  %4 = rlx.slice %v starts = [5] ends = [5] steps = [1] : tensor<10xi64> -> tensor<0xi64>
  // CHECK-NEXT: %{{.*}} = rlx.slice %{{.*}} starts = [7] ends = [2] steps = [1] : tensor<10xi64> -> tensor<0xi64>
  %5 = rlx.slice %v starts = [7] ends = [2] steps = [1] : tensor<10xi64> -> tensor<0xi64>
  // CHECK-NEXT: %{{.*}} = rlx.slice %{{.*}} starts = [9] ends = [10] steps = [1] : tensor<10xi64> -> tensor<1xi64>
  %6 = rlx.slice %v starts = [9] ends = [10] steps = [1] : tensor<10xi64> -> tensor<1xi64>
  // CHECK-NEXT: %{{.*}} = rlx.slice %{{.*}} starts = [] ends = [] steps = [] : tensor<bf16> -> tensor<bf16>
  %7 = rlx.slice %s starts = [] ends = [] steps = [] : tensor<bf16> -> tensor<bf16>
  // CHECK-NEXT: %{{.*}} = rlx.slice %{{.*}} starts = [2, 0] ends = [3, 3] steps = [1, 1] : tensor<3x3xi1> -> tensor<1x3xi1>
  %8 = rlx.slice %b starts = [2, 0] ends = [3, 3] steps = [1, 1] : tensor<3x3xi1> -> tensor<1x3xi1>
  // CHECK-NEXT: func.return
  func.return
}

// gather is numpy.take: the indices' shape replaces the gathered axis.
// CHECK-LABEL: func.func @gather(
func.func @gather(%table: tensor<100x16xf32>, %ids: tensor<4x8xi64>, %x: tensor<2x5x3xf16>, %i: tensor<7xi32>, %s: tensor<i64>, %m: tensor<6x2xi1>) {
  // CHECK-NEXT: %{{.*}} = rlx.gather %{{.*}}[%{{.*}}] axis = 0 : tensor<100x16xf32>, tensor<4x8xi64> -> tensor<4x8x16xf32>
  %0 = rlx.gather %table[%ids] axis = 0 : tensor<100x16xf32>, tensor<4x8xi64> -> tensor<4x8x16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.gather %{{.*}}[%{{.*}}] axis = 1 : tensor<2x5x3xf16>, tensor<7xi32> -> tensor<2x7x3xf16>
  %1 = rlx.gather %x[%i] axis = 1 : tensor<2x5x3xf16>, tensor<7xi32> -> tensor<2x7x3xf16>
  // CHECK-NEXT: %{{.*}} = rlx.gather %{{.*}}[%{{.*}}] axis = -1 : tensor<2x5x3xf16>, tensor<4x8xi64> -> tensor<2x5x4x8xf16>
  %2 = rlx.gather %x[%ids] axis = -1 : tensor<2x5x3xf16>, tensor<4x8xi64> -> tensor<2x5x4x8xf16>
  // CHECK-NEXT: %{{.*}} = rlx.gather %{{.*}}[%{{.*}}] axis = 0 : tensor<100x16xf32>, tensor<i64> -> tensor<16xf32>
  %3 = rlx.gather %table[%s] axis = 0 : tensor<100x16xf32>, tensor<i64> -> tensor<16xf32>
  // CHECK-NEXT: %{{.*}} = rlx.gather %{{.*}}[%{{.*}}] axis = 0 : tensor<6x2xi1>, tensor<7xi32> -> tensor<7x2xi1>
  %4 = rlx.gather %m[%i] axis = 0 : tensor<6x2xi1>, tensor<7xi32> -> tensor<7x2xi1>
  // CHECK-NEXT: func.return
  func.return
}
