// SPDX-License-Identifier: BSD-3-Clause
// launch_gemm<K>: a validated GemmProblem + kernel choice + epilogue arguments -> one launch of
// GemmKernel K. Device-side header (CUTLASS); included only by instance TUs.
#pragma once

#include <atomic>
#include <string>

#include <cuda_runtime_api.h>

#include "coda/gemm/kernel.hpp"
#include "coda/gemm/problem.hpp"
#include "coda/status.hpp"

namespace coda::gemm {

namespace detail {

inline void check_cuda(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    cudaGetLastError();  // a failed query leaves its error for the caller's next check: clear it
    throw Error(std::string("coda::gemm: ") + what + ": " + cudaGetErrorString(err));
  }
}

// A cute stride with one static unit mode: set the dynamic one (modes 0 and 1), batch stride 0.
template <class Stride>
Stride make_stride(std::int64_t non_unit_stride) {
  Stride s{};
  if constexpr (cute::is_static<std::remove_reference_t<decltype(cute::get<0>(s))>>::value)
    cute::get<1>(s) = non_unit_stride;
  else
    cute::get<0>(s) = non_unit_stride;
  return s;
}

// SM count and the occupancy-limited cluster count, queried once per (kernel, device): the
// persistent grid is sized from them.
template <class K>
cutlass::KernelHardwareInfo hardware_info(int device) {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> sm_count[kMaxDevices];
  static std::atomic<int> max_clusters[kMaxDevices];
  require(device >= 0 && device < kMaxDevices, "coda::gemm", "device ordinal out of range");
  if (sm_count[device].load() == 0) {
    int sms = 0;
    check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
               "querying the SM count");
    // Queries the current device, which gemm() has checked is `device`.
    int clusters =
        cutlass::KernelHardwareInfo::query_device_max_active_clusters<typename K::Kernel>();
    max_clusters[device].store(clusters);
    sm_count[device].store(sms);
  }
  cutlass::KernelHardwareInfo hw;
  hw.device_id = device;
  hw.sm_count = sm_count[device].load();
  hw.max_active_clusters = max_clusters[device].load();
  return hw;
}

template <class Options>
Options to_cutlass(RasterOrder raster) {
  switch (raster) {
    case RasterOrder::kAlongM: return Options::AlongM;
    case RasterOrder::kAlongN: return Options::AlongN;
    case RasterOrder::kHeuristic: break;
  }
  return Options::Heuristic;
}

}  // namespace detail

template <class K>
typename K::Arguments make_arguments(const GemmProblem& p, const KernelChoice& choice,
                                     const typename K::FusionArguments& fusion) {
  using Kernel = typename K::Kernel;
  typename K::Arguments args{};
  args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
  args.problem_shape = {p.m, p.n, p.k, 1};
  args.mainloop.ptr_A = static_cast<const typename K::ElementA*>(p.a);
  args.mainloop.dA = detail::make_stride<typename Kernel::StrideA>(p.a_stride);
  args.mainloop.ptr_B = static_cast<const typename K::ElementB*>(p.b);
  args.mainloop.dB = detail::make_stride<typename Kernel::StrideB>(p.b_stride);
  args.epilogue.thread = fusion;
  args.epilogue.ptr_C = nullptr;
  args.epilogue.ptr_D = static_cast<typename K::ElementD*>(p.d);
  args.epilogue.dD = detail::make_stride<typename Kernel::StrideD>(p.d_stride);
  args.hw_info = detail::hardware_info<K>(p.device);

  using Options = typename Kernel::TileScheduler::RasterOrderOptions;
  args.scheduler.raster_order = detail::to_cutlass<Options>(choice.raster);
  args.scheduler.max_swizzle_size = choice.swizzle;
  if constexpr (K::kStreamK) {
    using Mode = typename Kernel::TileScheduler::DecompositionMode;
    args.scheduler.reduction_mode = Kernel::TileScheduler::ReductionMode::Deterministic;
    args.scheduler.decomposition_mode =
        choice.decomposition == Decomposition::kStreamK        ? Mode::StreamK
        : choice.decomposition == Decomposition::kDataParallel ? Mode::DataParallel
                                                               : Mode::Heuristic;
  }
  return args;
}

template <class K>
std::size_t gemm_workspace_bytes(const GemmProblem& p, const KernelChoice& choice) {
  return K::Device::get_workspace_size(make_arguments<K>(p, choice, {}));
}

// Contract: `p` came from make_gemm_problem (TMA constraints hold) and `workspace` holds
// gemm_workspace_bytes<K>(p, choice) bytes. Launches once on `stream`; no host sync.
template <class K>
void launch_gemm(const GemmProblem& p, const KernelChoice& choice,
                 const typename K::FusionArguments& fusion, void* workspace, cudaStream_t stream) {
  typename K::Arguments args = make_arguments<K>(p, choice, fusion);
  // CUTLASS's can_implement assumes packed tensors and so asks every contiguous extent to be a
  // multiple of 8. TMA itself needs only 16-byte base and strides (checked by make_gemm_problem)
  // and clips ragged extents, so its remaining checks run on the shape rounded up to 8.
  typename K::Arguments rounded = args;
  auto round8 = [](int x) { return (x + 7) / 8 * 8; };
  rounded.problem_shape = {round8(p.m), round8(p.n), round8(p.k), 1};
  require(K::Device::can_implement(rounded) == cutlass::Status::kSuccess, "coda::gemm",
          std::string("kernel ") + to_string(choice.config) + " cannot implement this problem");

  typename K::Device op;
  cutlass::Status status = op.initialize(args, workspace, stream);
  require(status == cutlass::Status::kSuccess, "coda::gemm",
          std::string("initialize failed: ") + cutlassGetStatusString(status));
  status = op.run(stream);
  detail::check_cuda(cudaGetLastError(), "kernel launch");
  require(status == cutlass::Status::kSuccess, "coda::gemm",
          std::string("launch failed: ") + cutlassGetStatusString(status));
}

}  // namespace coda::gemm
