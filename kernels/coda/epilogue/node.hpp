// SPDX-License-Identifier: BSD-3-Clause
// What CODA's own EVT nodes share (device-side, CUTLASS):
//   RegisterNode<Arguments>   the host-side boilerplate of a node that works in registers only
//                             (no shared memory, no TMA loads): its Arguments are its Params
//                             (or a second type made from them: RegisterNode<Arguments, Params>).
//   FragmentCoords            the absolute (m, n) of each element of the fragment `visit` sees.
//   make_row_registers<T>     one register per output row a thread holds, addressable with the
//                             same (epi_m, epi_n, index) as the fragment (stride 0 along N).
//   partition_of_vector<T>    the thread's partition of a per-row or per-column vector.
//
// Register layout these nodes rely on (Hopper wgmma accumulators, both schedules): a thread holds
// columns in adjacent pairs (2j, 2j + 1) as consecutive fragment elements, the 4 lanes of a quad
// (lane / 4 equal) hold the same rows, lane ^ 1 holds the neighbouring pair of the same row, and
// one quad holds a row across the whole CTA tile's N. The GPU tests check every node on ragged
// shapes, so a CUTLASS change of this layout fails there.
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cstddef>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/fusion/sm90_visitor_tma_warpspecialized.hpp>

namespace coda::epilogue {

template <class Arguments_, class Params_ = Arguments_>
struct RegisterNode {
  struct SharedStorage {};
  using Arguments = Arguments_;
  using Params = Params_;  // the kernel's form of the Arguments, made from them on the host

  template <class ProblemShape>
  static constexpr Params to_underlying_arguments(ProblemShape const&, Arguments const& args,
                                                  void*) {
    return Params(args);
  }
  template <class ProblemShape>
  static bool can_implement(ProblemShape const&, Arguments const&) {
    return true;
  }
  template <class ProblemShape>
  static std::size_t get_workspace_size(ProblemShape const&, Arguments const&) {
    return 0;
  }
  template <class ProblemShape>
  static cutlass::Status initialize_workspace(ProblemShape const&, Arguments const&, void*,
                                              cudaStream_t, cutlass::CudaHostAdapter* = nullptr) {
    return cutlass::Status::kSuccess;
  }

  CUTLASS_DEVICE bool is_producer_load_needed() const { return false; }
  CUTLASS_DEVICE bool is_C_load_needed() const { return false; }

  CUTLASS_HOST_DEVICE RegisterNode() {}
  CUTLASS_HOST_DEVICE RegisterNode(Params const& p, SharedStorage const&) : params(p) {}
  Params params;

  template <class... Args>
  CUTLASS_DEVICE auto get_producer_load_callbacks(
      cutlass::epilogue::fusion::detail::ProducerLoadArgs<Args...> const&) {
    return cutlass::epilogue::fusion::detail::EmptyProducerLoadCallbacks{};
  }
};

// The collective hands nodes coordinates relative to the thread's first element (a static
// layout, so per-element offsets fold to constants) plus that element's residue to (M, N).
template <class ThrCoordTensor>
struct FragmentCoords {
  ThrCoordTensor tCcD;  // (CPY, CPY_M, CPY_N, EPI_M, EPI_N)
  int m0, n0;           // absolute coordinate of the thread's first element
  int M, N;             // problem extent

  template <int FragmentSize>
  CUTLASS_DEVICE cute::tuple<int, int> at(int epi_v, int epi_m, int epi_n, int i) const {
    auto c = tCcD(cute::_, cute::_, cute::_, epi_m, epi_n)(epi_v * FragmentSize + i);
    return {m0 + int(cute::get<0>(c)), n0 + int(cute::get<1>(c))};
  }
  template <int FragmentSize>
  CUTLASS_DEVICE bool in_bounds(int epi_v, int epi_m, int epi_n, int i) const {
    auto [m, n] = at<FragmentSize>(epi_v, epi_m, epi_n, i);
    return m < M && n < N;
  }
};

template <class Args>
CUTLASS_DEVICE auto fragment_coords(Args const& args) {
  auto [M, N, K, L] = args.problem_shape_mnkl;
  return FragmentCoords<decltype(args.tCcD)>{
      args.tCcD, int(M) - int(cute::get<0>(args.residue_tCcD)),
      int(N) - int(cute::get<1>(args.residue_tCcD)), int(M), int(N)};
}

// Whether the CTA tile has any element inside (M, N) (the scheduler may round the tile grid up
// to the cluster shape), and whether it has all of them inside: uniform per CTA.
template <class Args>
CUTLASS_DEVICE bool tile_in_bounds(Args const& args) {
  return int(cute::get<0>(args.residue_cD)) > 0 && int(cute::get<1>(args.residue_cD)) > 0;
}
template <class Args>
CUTLASS_DEVICE bool tile_interior(Args const& args) {
  return int(cute::get<0>(args.residue_cD)) >= int(cute::size<0>(args.tile_shape_mnk)) &&
         int(cute::get<1>(args.residue_cD)) >= int(cute::size<1>(args.tile_shape_mnk));
}

// The thread's partition (CPY, CPY_M, CPY_N, EPI_M, EPI_N) of an M×N vector broadcast along one
// mode: `stride` (_1, _0, _0) gives one element per row, (_0, _1, _0) one per column. Only its
// layout is used (the pointer is null): register tensors and coordinate views are shaped by it.
template <class T, bool ReferenceSrc, class Args, class Stride>
CUTLASS_DEVICE auto partition_of_vector(Args const& args, Stride stride) {
  using namespace cute;
  auto [M, N, K, L] = args.problem_shape_mnkl;
  Tensor vector = make_tensor(make_gmem_ptr(static_cast<T const*>(nullptr)),
                              make_layout(make_shape(M, N, L), stride));
  return cutlass::epilogue::fusion::sm90_partition_for_epilogue<ReferenceSrc>(
      vector, args.tile_shape_mnk, args.tile_coord_mnkl, args.epi_tile, args.tiled_copy,
      args.thread_idx);
}

// Registers shaped like the thread's accumulator partition with stride 0 along N: element
// (epi_m, epi_n, i) of any fragment aliases its row's register. `unique_rows(r)` is the compact
// view (one element per row); `unique_row_coords(r, args)` the matching relative coordinates.
template <class T, bool ReferenceSrc, class Args>
CUTLASS_DEVICE auto make_row_registers(Args const& args) {
  using namespace cute;
  return make_tensor_like<T>(
      partition_of_vector<T, ReferenceSrc>(args, make_stride(_1{}, _0{}, _0{})));
}

template <class RowRegisters>
CUTLASS_DEVICE auto unique_rows(RowRegisters& r) {
  return cute::filter_zeros(r);
}

template <class RowRegisters, class Args>
CUTLASS_DEVICE auto unique_row_coords(RowRegisters const& r, Args const& args) {
  return cute::filter_zeros(args.tCcD, r.stride());
}

// Exchange with lane ^ mask of the same warp (all 32 lanes take part).
template <class T>
CUTLASS_DEVICE T shuffle_xor(T v, int mask) {
  return __shfl_xor_sync(0xffffffffu, v, mask);
}

}  // namespace coda::epilogue
