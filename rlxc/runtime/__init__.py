"""The CUDA runtime: consumes launch-level modules (level [5]) only.

* `nvrtc`: CUDA C++ source -> cubin, with the disk cache
* `driver_api`: driver plumbing (errors, devices, allocation, stream ordering)
* `device_arrays`: device-array interop (`DeviceArray`, CUDA array interface
  and DLPack inputs, host <-> device bytes)
* `executable`: `CudaExecutable` (arena, params, launches, graphs, run)
* `cublaslt`: `rlx_cuda.gemm` on cuBLASLt; `dlpack`: the DLPack C ABI

Lowering and compiling a graph-level module is `rlxc.driver.compile`, above
this package.
"""
