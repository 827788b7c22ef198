// RUN: rlxc-opt %s -p rlx-cuda -t cuda-source | filecheck %s

// Softmax over the middle axis of [6000, 64, 3] f16 takes the slab form.
// An outer index's 192 floats are 0 modulo the 32 banks, so the column
// statistics' loads (a column's elements 3 floats apart) fell on 6 banks;
// the codegen counts those conflicts (rows._slab_wavefronts) and pads each
// outer index by 20 floats (rows.COLUMN_SLAB_PAD), every shared-memory
// access going through the padded index:
// CHECK: // row form: columns slab (37 outer indices per block: 37 x 64 x 3 consecutive elements in shared memory (20 floats of padding each), read and written in order, 16-byte items (8 elements); 2 threads per column)
// CHECK: __shared__ __align__(16) float slab[7844];  // 37 outer indices' elements, in order, 20 floats after each
// CHECK: float4* sp = reinterpret_cast<float4*>(slab + (p4 * 8) / 192 * 212 + (p4 * 8) % 192);
// CHECK: const float* col = slab + (c / 3) * 212 + (c % 3);
// CHECK: const float* sp = slab + (p4 * 8) / 192 * 212 + (p4 * 8) % 192;
// Single-element slabs stay unpadded (the padded index would cost a
// division per element):
// CHECK: // row form: columns slab (118 outer indices per block: 118 x 21 x 3 consecutive elements in shared memory, read and written in order; 1 thread per column)
// CHECK: for (int p = threadIdx.x; p < count; p += 256) slab[p] = rlx_ld_f16(x[base + p]);
// CHECK: const float* col = slab + (c / 3) * 63 + (c % 3);

// Elementwise kernels take blocks of 128 threads, 2 vectors a thread
// (elementwise.BLOCK_THREADS, UNROLL: exact GELU in f32, relu, f16 GELU);
// a 16-bit region reading a bias row as vectors takes blocks of 256, 4
// vectors a thread (BROADCAST16_THREADS, BROADCAST16_UNROLL):
// CHECK: // elementwise form: vector: 4 elements per thread and trip, 16-byte accesses, a tail of 3 elements, 2 trips per thread, 128 threads a block
// CHECK: __launch_bounds__(128)
// CHECK: const unsigned w0 = (unsigned)blockIdx.x * 256u + threadIdx.x;
// CHECK: float4 p0[2];
// CHECK: rlx_erfcf(
// CHECK: // elementwise form: vector: 4 elements per thread and trip, 16-byte accesses, a tail of 3 elements, 2 trips per thread, 128 threads a block
// CHECK: // elementwise form: vector: 8 elements per thread and trip, 16-byte accesses, 2 trips per thread, 128 threads a block
// CHECK: // elementwise form: vector: 8 elements per thread and trip, 16-byte accesses, 4 trips per thread, 256 threads a block
// CHECK: __launch_bounds__(256)
// CHECK: const unsigned w0 = (unsigned)blockIdx.x * 1024u + threadIdx.x;
// CHECK: uint4 p1[4];
func.func @main(%x: tensor<6000x64x3xf16>, %y: tensor<20000x21x3xf16>, %z: tensor<1001x1283xf32>, %h: tensor<64x64xf16>, %hb: tensor<64xf16>) -> (tensor<6000x64x3xf16>, tensor<20000x21x3xf16>, tensor<1001x1283xf32>, tensor<1001x1283xf32>, tensor<64x64xf16>, tensor<64x64xf16>) {
  %a = rlx.softmax %x axis = 1 : tensor<6000x64x3xf16>
  %b = rlx.softmax %y axis = 1 : tensor<20000x21x3xf16>
  %c = rlx.gelu %z : tensor<1001x1283xf32>
  %d = rlx.relu %z : tensor<1001x1283xf32>
  %e = rlx.gelu %h : tensor<64x64xf16>
  %s = rlx.add %h, %hb : tensor<64x64xf16>, tensor<64xf16> -> tensor<64x64xf16>
  %f = rlx.gelu %s : tensor<64x64xf16>
  func.return %a, %b, %c, %d, %e, %f : tensor<6000x64x3xf16>, tensor<20000x21x3xf16>, tensor<1001x1283xf32>, tensor<1001x1283xf32>, tensor<64x64xf16>, tensor<64x64xf16>
}
