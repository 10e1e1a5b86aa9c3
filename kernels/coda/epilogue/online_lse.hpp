// SPDX-License-Identifier: BSD-3-Clause
// Family 5, online state: per (row, N-tile) log-sum-exp and target-logit capture, the forward of
// cross-entropy without the M × V logits ever leaving registers.
//   OnlineLse<X>   lse_partials[t, m] = log Σ_{n in N-tile t, n < N} exp(X[m, n])
//                  target_logits[m]   = X[m, target[m]] (written by the tile holding the target;
//                                       rows whose target is ignore_index are not written)
//                  passes X on (soft-capped when params.softcap > 0: X ← c · tanh(X / c),
//                  Gemma 2's logit soft-cap, applied before everything else).
// State: a running (max, Σexp) per row in registers across the tile's subtiles; each fragment
// first takes its own row maxima, so there is at most one rescale per row per fragment, and each
// element costs a max, an FFMA and an ex2 (the sum is kept in base 2, log2 e folded into the
// shift; rows of extreme scale take the exact form, lse_math.hpp). Tiles wholly inside (M, N),
// all but the last row and column of tiles, skip the per-element bounds checks.
// At the end of the tile the 4 lanes of a quad (which hold the whole row, node.hpp) combine their
// states with shuffles and lane 0 of the quad writes. No atomics, no shared memory: the
// combination order is fixed, so the result is deterministic. Non-finite logits give what
// torch.logsumexp gives (lse_math.hpp): a NaN in the row → NaN, a +inf → +inf, every column −inf →
// −inf. Merge the partials with merge_lse_partials (merge.hpp).
// A node of its own: CUTLASS's row reduction (Sm90ColReduction) over a (max, sum) pair type leaves
// lane-local results (it does not combine the pair across the quad's lanes).
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/array.h>
#include <cutlass/bfloat16.h>

#include "coda/epilogue/lse_math.hpp"
#include "coda/epilogue/mufu.hpp"
#include "coda/epilogue/node.hpp"

namespace coda::epilogue {

struct OnlineLseArguments {
  float* lse_partials = nullptr;  // tiles × padded floats (per-row partial layout)
  std::int64_t padded = 0;        // PartialLayout::padded
  const void* targets = nullptr;  // [M] int32 or int64 column per row; nullptr: no capture
  bool targets_int64 = false;
  std::int64_t ignore_index = -100;
  float* target_logits = nullptr;  // [M]
  float softcap = 0.0f;            // > 0: logits become softcap · tanh(logit / softcap) first
};

namespace detail {

// exp(x − max) with the −inf − (−inf) case (an empty row) giving 0.
CUTLASS_DEVICE float exp_shifted(float x, float max) {
  return max == -INFINITY ? 0.0f : __expf(x - max);
}

// (max, sum) ⊕ (max', sum'); a NaN max stays NaN (max_nan).
CUTLASS_DEVICE void combine_lse(float& max, float& sum, float other_max, float other_sum) {
  float m = max_nan(max, other_max);
  sum = sum * exp_shifted(max, m) + other_sum * exp_shifted(other_max, m);
  max = m;
}

}  // namespace detail

struct OnlineLseNode : RegisterNode<OnlineLseArguments> {
  using RegisterNode::RegisterNode;
  // With no D (GemmKernel<..., void, ...>: loss-only cross-entropy), CUTLASS sizes the epilogue's
  // D scratch from the root node's ElementAux.
  using ElementAux = cutlass::bfloat16_t;

  template <class Coords, class RowF, class RowI, class RowCoords>
  struct ConsumerStoreCallbacks : cutlass::epilogue::fusion::detail::EmptyConsumerStoreCallbacks {
    CUTLASS_DEVICE ConsumerStoreCallbacks(Coords coords, RowF run_max, RowF run_sum,
                                          RowF subtile_max, RowF shift, RowI target,
                                          RowCoords row_coords, int tile_n, bool tile_in_bounds,
                                          bool tile_interior, Params const& params)
        : coords(coords),
          run_max(run_max),
          run_sum(run_sum),
          subtile_max(subtile_max),
          shift(shift),
          target(target),
          row_coords(row_coords),
          tile_n(tile_n),
          tile_in_bounds(tile_in_bounds),
          tile_interior(tile_interior),
          params(params) {}
    Coords coords;
    RowF run_max, run_sum, subtile_max, shift;  // per row (stride 0 along N)
    RowI target;                                // target column per row, −1: none
    RowCoords row_coords;
    int tile_n;
    bool tile_in_bounds;
    bool tile_interior;  // every element of the CTA tile inside (M, N): no per-element checks
    Params const& params;

    CUTLASS_DEVICE void begin() {
      auto max_k = unique_rows(run_max);
      auto sum_k = unique_rows(run_sum);
      auto target_k = unique_rows(target);
      CUTLASS_PRAGMA_UNROLL
      for (int k = 0; k < cute::size(max_k); ++k) {
        max_k(k) = -INFINITY;
        sum_k(k) = 0.0f;
        int m = coords.m0 + int(cute::get<0>(row_coords(k)));
        std::int64_t t = -1;
        if (params.targets != nullptr && m < coords.M) {
          t = params.targets_int64 ? static_cast<const std::int64_t*>(params.targets)[m]
                                   : static_cast<const std::int32_t*>(params.targets)[m];
          if (t == params.ignore_index || t < 0 || t >= coords.N) t = -1;
        }
        target_k(k) = int(t);  // −1 also for rows ≥ M: no column matches it
      }
    }

    // One pass of the fragment: the row maxima (kChecked: elements inside (M, N) only).
    template <bool kChecked, int F, class Fragment, class SubMax>
    CUTLASS_DEVICE void take_max(Fragment const& y, SubMax& sub_max, int epi_v, int epi_m,
                                 int epi_n) const {
      const int base = epi_v * F;
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < F; ++i) {
        // max_nan, not fmaxf: a NaN logit must reach the row's max and so its lse.
        if (!kChecked || coords.template in_bounds<F>(epi_v, epi_m, epi_n, i))
          sub_max(base + i) = max_nan(sub_max(base + i), float(y[i]));
      }
    }
    // The second pass: Σ exp(y − max) per row in base 2 (lse_math.hpp): the fused form, or
    // (kExact, any scale) the exact one, which also checks bounds.
    template <bool kChecked, bool kExact, int F, class Fragment, class Sum, class Shift, class Max>
    CUTLASS_DEVICE void add_terms(Fragment const& y, Sum& sum, Shift const& shift_mn,
                                  Max const& max_mn, int epi_v, int epi_m, int epi_n) const {
      const int base = epi_v * F;
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < F; ++i) {
        if (!kChecked || coords.template in_bounds<F>(epi_v, epi_m, epi_n, i))
          sum(base + i) += kExact ? exp_term_exact(float(y[i]), max_mn(base + i))
                                  : exp_term_fused(float(y[i]), shift_mn(base + i));
      }
    }

    template <class ElementAcc, class ElementIn, int F>
    CUTLASS_DEVICE cutlass::Array<ElementIn, F> visit(cutlass::Array<ElementAcc, F> const&,
                                                      int epi_v, int epi_m, int epi_n,
                                                      cutlass::Array<ElementIn, F> const& x) {
      auto sub_max = subtile_max(cute::_, cute::_, cute::_, epi_m, epi_n);
      auto sum_mn = run_sum(cute::_, cute::_, cute::_, epi_m, epi_n);
      auto shift_mn = shift(cute::_, cute::_, cute::_, epi_m, epi_n);
      auto target_mn = target(cute::_, cute::_, cute::_, epi_m, epi_n);
      auto sub_max_k = unique_rows(subtile_max);
      auto max_k = unique_rows(run_max);
      auto sum_k = unique_rows(run_sum);
      auto shift_k = unique_rows(shift);
      const int base = epi_v * F;

      cutlass::Array<ElementIn, F> y = x;
      if (params.softcap > 0.0f) {  // uniform branch: free when off
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < F; ++i)
          y[i] = ElementIn(params.softcap * tanhf(float(x[i]) / params.softcap));
      }
      CUTLASS_PRAGMA_UNROLL
      for (int k = 0; k < cute::size(sub_max_k); ++k) sub_max_k(k) = -INFINITY;
      if (tile_interior)  // uniform per CTA
        take_max<false, F>(y, sub_max, epi_v, epi_m, epi_n);
      else
        take_max<true, F>(y, sub_max, epi_v, epi_m, epi_n);
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < F; ++i) {  // rows without a target (and rows ≥ M) hold −1
        auto [m, n] = coords.template at<F>(epi_v, epi_m, epi_n, i);
        if (n == target_mn(base + i)) params.target_logits[m] = float(y[i]);
      }
      // The rows' new maxima (in sub_max_k), and whether any needs the exact form (uniform per
      // thread; rows of this fragment or not, they share the thread's loop).
      bool exact = false;
      CUTLASS_PRAGMA_UNROLL
      for (int k = 0; k < cute::size(max_k); ++k) {
        sub_max_k(k) = max_nan(max_k(k), sub_max_k(k));
        exact |= needs_exact_shift(sub_max_k(k));
      }
      // One rescale per row, where the max moved (rows this fragment does not touch keep theirs).
      CUTLASS_PRAGMA_UNROLL
      for (int k = 0; k < cute::size(max_k); ++k) {
        const float old = max_k(k), m = sub_max_k(k);
        if (m != old) sum_k(k) *= rescale_factor(old, m, exact);  // NaN: m != old
        max_k(k) = m;
        shift_k(k) = log2_shift(m);
      }
      auto max_mn = run_max(cute::_, cute::_, cute::_, epi_m, epi_n);
      if (exact)
        add_terms<true, true, F>(y, sum_mn, shift_mn, max_mn, epi_v, epi_m, epi_n);
      else if (tile_interior)
        add_terms<false, false, F>(y, sum_mn, shift_mn, max_mn, epi_v, epi_m, epi_n);
      else
        add_terms<true, false, F>(y, sum_mn, shift_mn, max_mn, epi_v, epi_m, epi_n);
      return y;
    }

    CUTLASS_DEVICE void end() {
      // A CTA wholly outside (M, N) (the scheduler rounds the tile grid up to the cluster and
      // swizzle) has no partial slot: write nothing. Uniform per CTA, so no lane misses a shuffle.
      if (!tile_in_bounds) return;
      auto max_k = unique_rows(run_max);
      auto sum_k = unique_rows(run_sum);
      const bool quad_leader = (threadIdx.x & 3) == 0;
      CUTLASS_PRAGMA_UNROLL
      for (int k = 0; k < cute::size(max_k); ++k) {
        float max = max_k(k), sum = sum_k(k);
        CUTLASS_PRAGMA_UNROLL
        for (int mask = 1; mask <= 2; mask <<= 1)
          detail::combine_lse(max, sum, shuffle_xor(max, mask), shuffle_xor(sum, mask));
        int m = coords.m0 + int(cute::get<0>(row_coords(k)));
        if (quad_leader && m < coords.M)
          params.lse_partials[tile_n * params.padded + m] = lse_of(max, sum);
      }
    }
  };

  template <bool ReferenceSrc, class... Args>
  CUTLASS_DEVICE auto get_consumer_store_callbacks(
      cutlass::epilogue::fusion::detail::ConsumerStoreArgs<Args...> const& args) {
    auto coords = fragment_coords(args);
    auto run_max = make_row_registers<float, ReferenceSrc>(args);
    auto run_sum = make_row_registers<float, ReferenceSrc>(args);
    auto subtile_max = make_row_registers<float, ReferenceSrc>(args);
    auto shift = make_row_registers<float, ReferenceSrc>(args);
    auto target = make_row_registers<int, ReferenceSrc>(args);
    auto row_coords = unique_row_coords(run_max, args);
    int tile_n = int(cute::get<1>(args.tile_coord_mnkl));
    return ConsumerStoreCallbacks<decltype(coords), decltype(run_max), decltype(target),
                                  decltype(row_coords)>(
        coords, run_max, run_sum, subtile_max, shift, target, row_coords, tile_n,
        tile_in_bounds(args), tile_interior(args), params);
  }
};

template <class X>
using OnlineLse = cutlass::epilogue::fusion::Sm90EVT<OnlineLseNode, X>;

}  // namespace coda::epilogue
