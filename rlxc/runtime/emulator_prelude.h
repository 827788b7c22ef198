// emulator_prelude.h: what a generated kernel needs of CUDA, in plain C++ for
// a host compiler (rlxc.runtime.emulator). Each CUDA thread of a block is an
// OS thread; the blocks of a launch run one after another, but for those that
// must run at once (a cluster's, or a grid form's co-resident blocks), which
// run together, each from a copy of the kernel of its own. Included before
// rlx_kernels.cuh, with RLX_EMULATE defined.
#pragma once
#include <atomic>
#include <barrier>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __cluster_dims__(...)
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
// one instance per copy of the kernel, shared by the threads of the block that
// runs it (blocks run one at a time, or together from copies of their own)
#define __shared__ static

struct dim3 { unsigned int x = 1, y = 1, z = 1; };
thread_local dim3 threadIdx, blockIdx;
dim3 blockDim, gridDim;
constexpr int warpSize = 32;

// CUDA's vector types, aligned as CUDA aligns them (the size of the whole, up to 16 bytes)
#define RLX_EMU_VEC2(name, T, A) \
  struct alignas(A) name { T x, y; }; \
  inline name make_##name(T x, T y) { return {x, y}; }
#define RLX_EMU_VEC4(name, T, A) \
  struct alignas(A) name { T x, y, z, w; }; \
  inline name make_##name(T x, T y, T z, T w) { return {x, y, z, w}; }
RLX_EMU_VEC2(char2, signed char, 2) RLX_EMU_VEC4(char4, signed char, 4)
RLX_EMU_VEC2(uchar2, unsigned char, 2) RLX_EMU_VEC4(uchar4, unsigned char, 4)
RLX_EMU_VEC2(short2, short, 4) RLX_EMU_VEC4(short4, short, 8)
RLX_EMU_VEC2(ushort2, unsigned short, 4) RLX_EMU_VEC4(ushort4, unsigned short, 8)
RLX_EMU_VEC2(int2, int, 8) RLX_EMU_VEC4(int4, int, 16)
RLX_EMU_VEC2(uint2, unsigned int, 8) RLX_EMU_VEC4(uint4, unsigned int, 16)
RLX_EMU_VEC2(float2, float, 8) RLX_EMU_VEC4(float4, float, 16)
RLX_EMU_VEC2(longlong2, long long, 16) RLX_EMU_VEC2(ulonglong2, unsigned long long, 16)
RLX_EMU_VEC2(double2, double, 16)

template <class T> inline T __ldg(const T* p) { return *p; }
template <class T> inline T __ldcg(const T* p) { return *p; }
template <class T> inline T __ldcs(const T* p) { return *p; }
template <class T> inline void __stcs(T* p, T v) { *p = v; }

inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline float __uint_as_float(unsigned int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
inline unsigned int __float_as_uint(float f) { unsigned int i; std::memcpy(&i, &f, 4); return i; }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int sh) {
  return (unsigned int)((((unsigned long long)hi << 32) | lo) >> (sh & 31));
}
inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int sh) {
  return (unsigned int)(((((unsigned long long)hi << 32) | lo) << (sh & 31)) >> 32);
}
// CUDA's min/max overloads for integers and floats (in the global namespace)
template <class A, class B> inline std::common_type_t<A, B> min(A a, B b) { return b < a ? b : a; }
template <class A, class B> inline std::common_type_t<A, B> max(A a, B b) { return a < b ? b : a; }
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __clz(unsigned int x) { return x ? __builtin_clz(x) : 32; }
inline int __ffs(unsigned int x) { return __builtin_ffs((int)x); }

// f16 <-> f32, rounded to nearest even (x86-64's _Float16: GCC 12+)
inline float rlx_emu_f16_to_float(unsigned short h) { _Float16 x; std::memcpy(&x, &h, 2); return (float)x; }
inline unsigned short rlx_emu_float_to_f16(float f) { _Float16 x = (_Float16)f; unsigned short h; std::memcpy(&h, &x, 2); return h; }

// blocks that run at once at most (emulator.MAX_BLOCKS)
#define RLX_EMU_MAX_BLOCKS 16

// -- barriers
// __syncthreads over the block's threads that have not returned (a thread
// that leaves the kernel no longer counts, as on the GPU): a std::barrier
// made afresh for each block, a leaving thread dropping out of it. The
// blocks of a cluster run at once (rank: rlx_emu_rank), each with its own
// barrier, and a barrier of the whole cluster.
struct RlxEmuBlockBarrier {
  std::barrier<>* bar = nullptr;
  void reset(int n) { delete bar; bar = new std::barrier<>(n); }
  void sync() { bar->arrive_and_wait(); }
  void leave() { bar->arrive_and_drop(); }
};
RlxEmuBlockBarrier rlx_emu_blocks[RLX_EMU_MAX_BLOCKS], rlx_emu_cluster;
thread_local unsigned int rlx_emu_rank = 0;
thread_local std::barrier<>::arrival_token* rlx_emu_token = nullptr;
void* rlx_emu_slot_table[RLX_EMU_MAX_BLOCKS];
inline void __syncthreads() { rlx_emu_blocks[rlx_emu_rank].sync(); }
inline void rlx_emu_cluster_arrive() { rlx_emu_token = new std::barrier<>::arrival_token(rlx_emu_cluster.bar->arrive()); }
inline void rlx_emu_cluster_wait() {
  rlx_emu_cluster.bar->wait(std::move(*rlx_emu_token));
  delete rlx_emu_token;
  rlx_emu_token = nullptr;
}
inline void rlx_emu_cluster_sync() { rlx_emu_cluster.sync(); }
// Every block's `slots` (the same variable in each block's shared memory),
// once each block has given its own.
template <class T> inline T* const* rlx_emu_cluster_slots(T* slots) {
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) rlx_emu_slot_table[rlx_emu_rank] = slots;
  rlx_emu_cluster.sync();
  return reinterpret_cast<T* const*>(rlx_emu_slot_table);
}
inline int __syncthreads_or(int p) {
  static std::atomic<int> any[RLX_EMU_MAX_BLOCKS];
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) any[rlx_emu_rank] = 0;
  __syncthreads();
  if (p) any[rlx_emu_rank] = 1;
  __syncthreads();
  return any[rlx_emu_rank].load();
}
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_block() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __nanosleep(unsigned int) { std::this_thread::yield(); }

// -- warps: the lanes of a mask meet at a barrier of their own (one per warp
// and mask), each lane's value in a slot, read by its source lane.
inline int rlx_emu_tid() { return (int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)); }
std::mutex rlx_emu_warp_mutex;
std::map<std::pair<int, unsigned int>, std::barrier<>*> rlx_emu_warp_barriers;
alignas(16) unsigned char rlx_emu_lanes[RLX_EMU_MAX_BLOCKS * 1024][16];
inline std::barrier<>* rlx_emu_warp_barrier(int warp, unsigned int mask) {
  std::lock_guard<std::mutex> l(rlx_emu_warp_mutex);
  auto key = std::make_pair(warp, mask);
  auto it = rlx_emu_warp_barriers.find(key);
  if (it == rlx_emu_warp_barriers.end())
    it = rlx_emu_warp_barriers.emplace(key, new std::barrier<>(__builtin_popcount(mask))).first;
  return it->second;
}
[[noreturn]] inline void rlx_emu_fail(const char* what, int lane, unsigned int mask) {
  std::fprintf(stderr, "rlxc emulator: %s (thread %d, lane %d, mask 0x%08x, block %u)\n", what, rlx_emu_tid(), lane,
               mask, blockIdx.x);
  std::abort();
}
template <class T> inline T rlx_emu_shfl(unsigned int mask, T v, int src) {
  static_assert(sizeof(T) <= 16, "a shuffled value is at most 16 bytes");
  const int t = (int)rlx_emu_rank * 1024 + rlx_emu_tid(), warp = t >> 5, lane = t & 31;
  if (!((mask >> lane) & 1u)) rlx_emu_fail("a shuffle by a lane outside its mask", lane, mask);
  std::barrier<>* b = rlx_emu_warp_barrier(warp, mask);
  std::memcpy(rlx_emu_lanes[t], &v, sizeof(T));
  b->arrive_and_wait();
  T r = v;
  if (src != lane) {
    if (src < 0 || src > 31 || !((mask >> src) & 1u)) rlx_emu_fail("a shuffle reading a lane outside its mask", lane, mask);
    std::memcpy(&r, rlx_emu_lanes[(warp << 5) | src], sizeof(T));
  }
  b->arrive_and_wait();
  return r;
}
template <class T> inline T __shfl_xor_sync(unsigned int mask, T v, int m, int width = 32) {
  const int lane = rlx_emu_tid() & 31, src = lane ^ m;
  return rlx_emu_shfl(mask, v, (src & ~(width - 1)) == (lane & ~(width - 1)) ? src : lane);
}
template <class T> inline T __shfl_up_sync(unsigned int mask, T v, unsigned int d, int width = 32) {
  const int lane = rlx_emu_tid() & 31;
  return rlx_emu_shfl(mask, v, (lane & (width - 1)) >= (int)d ? lane - (int)d : lane);
}
template <class T> inline T __shfl_down_sync(unsigned int mask, T v, unsigned int d, int width = 32) {
  const int lane = rlx_emu_tid() & 31;
  return rlx_emu_shfl(mask, v, (lane & (width - 1)) + (int)d < width ? lane + (int)d : lane);
}
template <class T> inline T __shfl_sync(unsigned int mask, T v, int src, int width = 32) {
  const int lane = rlx_emu_tid() & 31;
  return rlx_emu_shfl(mask, v, (lane & ~(width - 1)) + (src & (width - 1)));
}
inline void __syncwarp(unsigned int mask = 0xffffffffu) {
  const int t = (int)rlx_emu_rank * 1024 + rlx_emu_tid();
  rlx_emu_warp_barrier(t >> 5, mask)->arrive_and_wait();
}

// -- atomics (the threads of a block run at once)
template <class T> inline T atomicAdd(T* p, T v) {
  if constexpr (std::is_floating_point_v<T>) {
    std::atomic_ref<T> a(*p);
    T old = a.load();
    while (!a.compare_exchange_weak(old, old + v)) {}
    return old;
  } else {
    return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
  }
}
template <class T, class U> inline T atomicCAS(T* p, U compare, U value) {
  T expected = (T)compare;
  __atomic_compare_exchange_n(p, &expected, (T)value, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return expected;
}
template <class T> inline T atomicMax(T* p, T v) {
  std::atomic_ref<T> a(*p);
  T old = a.load();
  while (old < v && !a.compare_exchange_weak(old, v)) {}
  return old;
}
template <class T> inline T atomicMin(T* p, T v) {
  std::atomic_ref<T> a(*p);
  T old = a.load();
  while (v < old && !a.compare_exchange_weak(old, v)) {}
  return old;
}
template <class T> inline T atomicExch(T* p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
inline size_t __cvta_generic_to_shared(const void* p) { return (size_t)p; }
