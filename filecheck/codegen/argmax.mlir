// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s

// argmax by row length: a warp per row up to 4096 elements (8 rows per
// block, shuffles only), a block beyond; 16-byte reads where the row allows.
// Rows whose lanes would take fewer than 4 accesses each take a group of
// fewer lanes (75 accesses: 16 lanes), shuffling within the group's mask.
// CHECK: // argmax form: lane groups (16 lanes per row, 16 rows per block), 4 elements per 16-byte access
// CHECK: for (long long k4 = lane; k4 < 75LL; k4 += 16) {
// CHECK: const unsigned int gmask = 65535u << ((threadIdx.x & 31) & ~15);  // this row's lanes
// CHECK: for (int s = 8; s > 0; s >>= 1) {
// CHECK: if (lane == 0) y[r] = bi;
// CHECK: // argmax form: warp (8 rows per block), 8 elements per 16-byte access
// CHECK: for (long long k4 = lane; k4 < 512LL; k4 += 32) {
// CHECK: // argmax form: block, 8 elements per 16-byte access
// CHECK: for (long long k4 = threadIdx.x; k4 < 1024LL; k4 += 256) {
// A middle axis of 6 over 20 rows (too few for the columns form): a lane per row, element by element.
// CHECK: // argmax form: lane groups (1 lane per row, 256 rows per block), one element per access
func.func @main(%x: tensor<7x300xf32>, %y: tensor<3x4096xf16>, %w: tensor<3x8192xbf16>, %z: tensor<4x6x5xbf16>) -> (tensor<7xi64>, tensor<3xi64>, tensor<3xi64>, tensor<4x5xi64>) {
  %a = rlx.argmax %x axis = -1 : tensor<7x300xf32> -> tensor<7xi64>
  %b = rlx.argmax %y axis = -1 : tensor<3x4096xf16> -> tensor<3xi64>
  %d = rlx.argmax %w axis = -1 : tensor<3x8192xbf16> -> tensor<3xi64>
  %c = rlx.argmax %z axis = 1 : tensor<4x6x5xbf16> -> tensor<4x5xi64>
  func.return %a, %b, %d, %c : tensor<7xi64>, tensor<3xi64>, tensor<3xi64>, tensor<4x5xi64>
}
