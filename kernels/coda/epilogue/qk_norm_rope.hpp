// SPDX-License-Identifier: BSD-3-Clause
// Family 5 (reduce, then rewrite): per-head RMSNorm of Q and K followed by RoPE, on the fused QKV
// tile while it is still in registers (Qwen3 / OLMo-2 QK-norm):
//   QkNormRopePairs<X> for a Q or K head h of x = X[m, head columns]:
//                     y = RoPE(x · rsqrt(mean(x²) + eps) ⊙ γ)      (γ = γ_q or γ_k, per column)
//                   V columns pass through unchanged.
// `visit` passes X through; `reduce` (called by the collective once the whole subtile has been
// visited, with the subtile's results) sums x² per row and head, combines the 4 lanes of a quad
// (which hold the row's whole subtile, node.hpp), and rewrites the results in place, as CUTLASS's
// top-k softmax node does. So the node must be the root of the program, and the subtile must hold
// whole heads: programs using it declare kEpilogueTileN = kQkNormSubtileN (gemm/kernel.hpp), a
// multiple of head_dim ∈ {64, 128}; the Q/K/V boundaries are multiples of head_dim, so a subtile
// holds one or two whole heads. Columns are in the adjacent-pair RoPE order (rope.hpp), γ permuted
// the same way (weights.hpp). Deterministic: fixed shuffle order, no atomics.
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cstdint>

#include <cute/tensor.hpp>
#include <cutlass/array.h>
#include <cutlass/bfloat16.h>

#include "coda/epilogue/node.hpp"
#include "coda/epilogue/rope.hpp"

namespace coda::epilogue {

constexpr int kQkNormSubtileN = 128;

struct QkNormRopeArguments {
  RopePairsArguments rope;
  const cutlass::bfloat16_t* q_norm_weight = nullptr;  // [head_dim] γ_q
  const cutlass::bfloat16_t* k_norm_weight = nullptr;  // [head_dim] γ_k
  int q_columns = 0;                                   // q_heads · head_dim
  int qk_columns = 0;                                  // (q_heads + kv_heads) · head_dim
  int head_dim = 128;                                  // 64 or 128
  float eps = 1e-6f;
};

struct QkNormRopePairsNode : RegisterNode<QkNormRopeArguments> {
  using RegisterNode::RegisterNode;

  // The rewrite is branch-free and reads each side input once per thread: a row's position once
  // per tile (begin), a column pair's γ and frequency once for all the thread's rows (the loop
  // has no control flow, so the compiler merges the equal loads). Rows past M and columns past N
  // read in-bounds neighbours; TMA never stores their results. A subtile of V columns only is
  // left as it is, with no work.
  template <class Coords, class RowF, class Positions>
  struct ConsumerStoreCallbacks : cutlass::epilogue::fusion::detail::EmptyConsumerStoreCallbacks {
    CUTLASS_DEVICE ConsumerStoreCallbacks(Coords coords, RowF first_head, RowF second_head,
                                          Positions positions, Params const& params)
        : coords(coords), first_head(first_head), second_head(second_head),
          positions(positions), params(params) {}
    Coords coords;
    RowF first_head, second_head;  // per row: Σx², then the norm scale, of the subtile's heads
    Positions positions;           // per row: its RoPE position (rope.hpp)
    Params const& params;

    CUTLASS_DEVICE void begin() {
      positions.load(params.rope.positions, coords.m0, coords.M);
      // The tile's RoPE frequencies (128 columns: 64 pairs, four 128-byte lines) prefetched into
      // L1, one line a lane of lanes 0-3: the rewrite below loads each pair's frequency shortly
      // before its use (two heads a subtile: ~10 instructions). Alone it measured 1.00 x (46th
      // session, H100); the waits on those loads were L1 evictions by the register store's Pre
      // stores (register_store.hpp), and the A/B and test suites that took that store in ran
      // with this prefetch.
      const int lane = int(threadIdx.x % 32);
      const int n = (coords.n0 & ~(kQkNormSubtileN - 1)) + lane * 32;
      if (lane < kQkNormSubtileN / 32 && n < coords.N)
        asm volatile("prefetch.global.L1 [%0];" ::"l"(params.rope.frequencies + n / 2));
    }

    template <class ElementAcc, class ElementIn, int F>
    CUTLASS_DEVICE cutlass::Array<float, F> visit(cutlass::Array<ElementAcc, F> const&, int, int,
                                                  int, cutlass::Array<ElementIn, F> const& x) {
      cutlass::Array<float, F> y;
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < F; ++i) y[i] = float(x[i]);
      return y;
    }

    template <class STensor, class SyncFn, class VTensor>
    CUTLASS_DEVICE void reduce(STensor&&, SyncFn const&, int epi_m, int epi_n, bool,
                               VTensor visit_results) {
      constexpr int F = cute::remove_cvref_t<decltype(visit_results(0))>::kElements;
      static_assert(F % 2 == 0, "QkNormRope: the fragment must hold whole column pairs");
      // Subtiles start at multiples of kQkNormSubtileN (uniform over the CTA).
      const int subtile_n0 =
          cute::get<1>(coords.template at<F>(0, epi_m, epi_n, 0)) & ~(kQkNormSubtileN - 1);
      if (subtile_n0 >= params.qk_columns) return;  // V heads only: through
      // One head a subtile (head_dim = 128: Qwen3, OLMo-2) or two (64), a uniform branch: with
      // one head every per-column choice below (which head, which γ, rotated or not) is the
      // subtile's, so the loop keeps no per-column predicates or pointers live. Those spilled in
      // the overlapped Cooperative kernel's epilogue warp group (152 registers), and the spill
      // cost its MMA warp groups 7 % of cycles waiting on operands; without it the QK-norm RoPE
      // runs 1.02 x its plain twin's cycles there and 0.89 x Pingpong's op time (H100, 44th
      // session). Two heads a subtile (64) ran 1.04-1.09 x their old time after this change; one
      // program per head count did not win that back (1.00 x, 45th session), so sharing one
      // kernel is not the cause.
      if (params.head_dim == kQkNormSubtileN)
        normalize_and_rotate<false>(epi_m, epi_n, subtile_n0, visit_results);
      else
        normalize_and_rotate<true>(epi_m, epi_n, subtile_n0, visit_results);
    }

    template <bool kTwoHeads, class VTensor>
    CUTLASS_DEVICE void normalize_and_rotate(int epi_m, int epi_n, int subtile_n0,
                                             VTensor visit_results) {
      constexpr int F = cute::remove_cvref_t<decltype(visit_results(0))>::kElements;
      constexpr int kHeadDim = kTwoHeads ? kQkNormSubtileN / 2 : kQkNormSubtileN;
      auto first_mn = first_head(cute::_, cute::_, cute::_, epi_m, epi_n);
      auto second_mn = second_head(cute::_, cute::_, cute::_, epi_m, epi_n);
      auto first_k = unique_rows(first_head);
      auto second_k = unique_rows(second_head);
      auto in_second_head = [](int n) { return kTwoHeads && (n & kHeadDim) != 0; };
      // Per head of the subtile: its γ (Q's or K's) and whether it is rotated (a Q or K head; the
      // first head is, the subtile starts before qk_columns). The Q/K/V boundaries are multiples
      // of head_dim, so each head is all Q, all K or all V.
      const cutlass::bfloat16_t* const first_gamma =
          subtile_n0 < params.q_columns ? params.q_norm_weight : params.k_norm_weight;
      const cutlass::bfloat16_t* const second_gamma =
          subtile_n0 + kHeadDim < params.q_columns ? params.q_norm_weight : params.k_norm_weight;
      const bool second_normed = subtile_n0 + kHeadDim < params.qk_columns;

      CUTLASS_PRAGMA_UNROLL
      for (int k = 0; k < cute::size(first_k); ++k) first_k(k) = second_k(k) = 0.0f;
      CUTLASS_PRAGMA_UNROLL
      for (int v = 0; v < cute::size(visit_results); ++v) {
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < F; ++i) {
          int n = cute::get<1>(coords.template at<F>(v, epi_m, epi_n, i));
          float x = visit_results(v)[i];
          if constexpr (kTwoHeads) {
            bool second = in_second_head(n);
            float x_first = second ? 0.0f : x, x_second = second ? x : 0.0f;
            first_mn(v * F + i) = fmaf(x_first, x_first, first_mn(v * F + i));
            second_mn(v * F + i) = fmaf(x_second, x_second, second_mn(v * F + i));
          } else {
            first_mn(v * F + i) = fmaf(x, x, first_mn(v * F + i));
          }
        }
      }
      const float inv_hd = 1.0f / float(kHeadDim);
      CUTLASS_PRAGMA_UNROLL
      for (int k = 0; k < cute::size(first_k); ++k) {
        float a = first_k(k), b = second_k(k);
        CUTLASS_PRAGMA_UNROLL
        for (int mask = 1; mask <= 2; mask <<= 1) {
          a += shuffle_xor(a, mask);
          if constexpr (kTwoHeads) b += shuffle_xor(b, mask);
        }
        first_k(k) = rsqrtf(a * inv_hd + params.eps);
        if constexpr (kTwoHeads) second_k(k) = rsqrtf(b * inv_hd + params.eps);
      }

      CUTLASS_PRAGMA_UNROLL
      for (int v = 0; v < cute::size(visit_results); ++v) {
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < F; i += 2) {
          const int n = cute::get<1>(coords.template at<F>(v, epi_m, epi_n, i));
          const bool second = in_second_head(n);
          // n even: one 4-byte load of (γ[j], γ[j + 1]), in bounds for any n.
          const auto g = *reinterpret_cast<const cutlass::Array<cutlass::bfloat16_t, 2>*>(
              (second ? second_gamma : first_gamma) + (n & (kHeadDim - 1)));
          const RopeFrequency f = frequency_at(params.rope.frequencies, n, coords.N);
          float scale = second ? second_mn(v * F + i) : first_mn(v * F + i);
          float x0 = visit_results(v)[i] * scale * float(g[0]);
          float x1 = visit_results(v)[i + 1] * scale * float(g[1]);
          float s, c;
          rope_sincos(positions.at(epi_m, epi_n, v * F + i), f, s, c);
          const bool normed = !second || second_normed;  // V columns pass through
          visit_results(v)[i] = normed ? x0 * c - x1 * s : visit_results(v)[i];
          visit_results(v)[i + 1] = normed ? x0 * s + x1 * c : visit_results(v)[i + 1];
        }
      }
    }
  };

  template <bool ReferenceSrc, class... Args>
  CUTLASS_DEVICE auto get_consumer_store_callbacks(
      cutlass::epilogue::fusion::detail::ConsumerStoreArgs<Args...> const& args) {
    static_assert(cute::size<1>(decltype(args.epi_tile){}) == kQkNormSubtileN,
                  "QkNormRope: the program must declare kEpilogueTileN = kQkNormSubtileN");
    auto coords = fragment_coords(args);
    auto first_head = make_row_registers<float, ReferenceSrc>(args);
    auto second_head = make_row_registers<float, ReferenceSrc>(args);
    auto positions = make_row_positions<ReferenceSrc>(args);
    return ConsumerStoreCallbacks<decltype(coords), decltype(first_head), decltype(positions)>(
        coords, first_head, second_head, positions, params);
  }
};

template <class X>
using QkNormRopePairs = cutlass::epilogue::fusion::Sm90EVT<QkNormRopePairsNode, X>;

}  // namespace coda::epilogue
