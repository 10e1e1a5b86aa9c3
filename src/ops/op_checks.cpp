// SPDX-License-Identifier: BSD-3-Clause
#include "op_checks.hpp"

#include <limits>
#include <string>

#include "coda/device_check.hpp"
#include "coda/gemm/choose_config.hpp"
#include "coda/ops/autotune.hpp"

namespace coda::ops::detail {

void require_bf16_matrix(const ArgCheck& check, const TensorView& t, const char* name,
                         std::int64_t rows, std::int64_t cols, int device) {
  require_matrix(check, t, name, rows, cols, DType::kBF16, device);
}

namespace {
// Present, of `dtype` and `rank`, every extent positive: before the extents are compared.
void require_typed(const ArgCheck& check, const TensorView& t, const char* name, DType dtype,
                   int rank) {
  check.not_null(t, name);
  check.dtype_in(t, name, {dtype});
  check.rank_is(t, name, rank);
  check.dims_positive(t, name);
}
}  // namespace

void require_matrix(const ArgCheck& check, const TensorView& t, const char* name, std::int64_t rows,
                    std::int64_t cols, DType dtype, int device) {
  require_typed(check, t, name, dtype, 2);
  check.dim_is(t, name, 0, rows, "M");
  check.dim_is(t, name, 1, cols, "N");
  check.fits_int32_indexing(t, name);
  if (t.stride[1] != 1)
    check.fail(std::string(name) + ": rows must be contiguous (stride 1 along the last dim); got " +
               describe_shape(t));
  // tma_compatible takes either unit-stride mode as the contiguous one; a one-column matrix with
  // row stride 1 (both strides 1) would pass it, but TMA reads rows 16-byte aligned apart.
  if (t.shape[0] > 1 && (t.stride[0] * std::int64_t(t.element_bytes())) % 16 != 0)
    check.fail(std::string(name) + ": the row stride must be a multiple of 16 bytes (TMA); got " +
               describe_shape(t));
  check.tma_compatible(t, name);
  check.same_device(t, name, device);
}

void require_vector(const ArgCheck& check, const TensorView& t, const char* name,
                    std::int64_t length, DType dtype, int device) {
  require_typed(check, t, name, dtype, 1);
  check.dim_is(t, name, 0, length, "the matching dim");
  if (t.stride[0] != 1) check.fail(std::string(name) + ": must be contiguous");
  if (reinterpret_cast<std::uintptr_t>(t.data) % 16 != 0)
    check.fail(std::string(name) + ": must be 16-byte aligned");
  check.same_device(t, name, device);
}

namespace {
// Two matrices, both present and of rank 2, before their extents are compared.
void require_two_matrices(const ArgCheck& check, const TensorView& a, const char* a_name,
                          const TensorView& b, const char* b_name) {
  check.not_null(a, a_name);
  check.rank_is(a, a_name, 2);
  check.not_null(b, b_name);
  check.rank_is(b, b_name, 2);
}
}  // namespace

LinearShape require_linear(const ArgCheck& check, const TensorView& A, const char* a_name,
                           const TensorView& W, const char* w_name) {
  require_two_matrices(check, A, a_name, W, w_name);
  check.dim_is(W, w_name, 1, A.shape[1], "K (the input's dim 1)");
  const LinearShape s{A.shape[0], W.shape[0], A.shape[1]};
  require_bf16_matrix(check, A, a_name, s.m, s.k, A.device);
  require_bf16_matrix(check, W, w_name, s.n, s.k, A.device);
  return s;
}

LinearShape require_dgrad_linear(const ArgCheck& check, const TensorView& dY, const char* dy_name,
                                 const TensorView& W, const char* w_name) {
  require_two_matrices(check, dY, dy_name, W, w_name);
  check.dim_is(W, w_name, 0, dY.shape[1], (std::string(dy_name) + "'s columns").c_str());
  const LinearShape s{dY.shape[0], W.shape[1], dY.shape[1]};
  require_bf16_matrix(check, dY, dy_name, s.m, s.k, dY.device);
  require_bf16_matrix(check, W, w_name, s.k, s.n, dY.device);
  return s;
}

TensorView dgrad_b(const TensorView& W) {
  return TensorView::matrix_col_major(W.data, DType::kBF16, W.shape[1], W.shape[0], W.stride[0],
                                      W.device);
}

void require_workspace(const ArgCheck& check, const void* workspace, std::size_t bytes,
                       std::size_t need, const char* need_name) {
  if (workspace == nullptr) check.fail("workspace: data pointer is null");
  if (reinterpret_cast<std::uintptr_t>(workspace) % 16 != 0)
    check.fail("workspace: must be 16-byte aligned");
  if (bytes < need)
    check.fail(std::string("workspace_bytes: needs ") + need_name + " = " + std::to_string(need) +
               "; got " + std::to_string(bytes));
}

void require_memory(const ArgCheck& check, int device,
                    std::initializer_list<ArgCheck::Named> outputs,
                    std::initializer_list<ArgCheck::Named> inputs,
                    std::initializer_list<ArgCheck::InPlace> in_place) {
  check.outputs_disjoint(outputs, inputs, in_place);
  const std::string& where = check.where();
  require_current_device(device, where.c_str(), outputs.begin()->name);
  for (const auto* list : {&outputs, &inputs})
    for (const ArgCheck::Named& a : *list)
      if (a.view.data != nullptr) require_device_memory(a.view.data, device, where.c_str(), a.name);
}

int require_qk_norm(const ArgCheck& check, const QkNorm& qk, std::int64_t n, const char* n_name,
                    int device) {
  if (qk.q_heads <= 0 || qk.kv_heads <= 0)
    check.fail("qk_norm.q_heads/kv_heads: must be positive; got " + std::to_string(qk.q_heads) +
               ", " + std::to_string(qk.kv_heads));
  const std::int64_t heads = std::int64_t(qk.q_heads) + 2 * std::int64_t(qk.kv_heads);
  if (n % heads != 0 || (n / heads != 64 && n / heads != 128))
    check.fail(std::string(n_name) +
               " must be (q_heads + 2·kv_heads) · head_dim with head_dim 64 or 128; got " +
               std::to_string(n) + " for " + std::to_string(heads) + " heads");
  const int hd = int(n / heads);
  require_vector(check, qk.q_weight, "qk_norm.q_weight", hd, DType::kBF16, device);
  require_vector(check, qk.k_weight, "qk_norm.k_weight", hd, DType::kBF16, device);
  if (!(qk.eps >= 0.0f)) check.fail("qk_norm.eps: must be non-negative");
  return hd;
}

void require_stats_buffer(const ArgCheck& check, const RowNormStats& stats, std::int64_t m,
                          std::int64_t n) {
  if (stats.partials == nullptr) check.fail("stats.partials: data pointer is null");
  if (reinterpret_cast<std::uintptr_t>(stats.partials) % 16 != 0)
    check.fail("stats.partials: must be 16-byte aligned");
  const std::int64_t need = norm_stats_floats(m, n);
  if (stats.capacity < need)
    check.fail("stats.capacity: needs norm_stats_floats(M, N) = " + std::to_string(need) +
               " floats; got " + std::to_string(stats.capacity));
}

void require_filled_stats(const ArgCheck& check, const RowNormStats& stats, std::int64_t m,
                          std::int64_t width, const char* width_name) {
  if (stats.partials == nullptr) check.fail("stats.partials: data pointer is null");
  if (reinterpret_cast<std::uintptr_t>(stats.partials) % 16 != 0)
    check.fail("stats.partials: must be 16-byte aligned");
  if (stats.width <= 0 || stats.layout.tiles <= 0)
    check.fail("stats: not filled by a producer (width and layout are unset)");
  if (stats.layout.padded < m)
    check.fail("stats: produced for " + std::to_string(stats.layout.padded) +
               " rows at most, but this op has M = " + std::to_string(m));
  if (stats.layout.floats() > stats.capacity)
    check.fail("stats: layout exceeds the buffer's capacity");
  if (stats.width != width)
    check.fail("stats.width: the statistics must be of " + std::string(width_name) + " = " +
               std::to_string(width) + " features; got " + std::to_string(stats.width));
}

TensorView stats_written(const RowNormStats& stats, std::int64_t m, std::int64_t n) {
  return TensorView::vector(stats.partials, DType::kF32, norm_stats_floats(m, n));
}

TensorView stats_read(const RowNormStats& stats) {
  return TensorView::vector(stats.partials, DType::kF32, stats.layout.floats());
}

namespace {

struct OpTableEntry {
  OpKey op;
  int m, n, k;
  gemm::KernelChoice choice;
};

using gemm::Decomposition;
using gemm::RasterOrder;
using gemm::TileConfig;
// One table per tuned GPU (`coda-bench tune-ops` on it), each ended by a sentinel (OpKey::kCount).
constexpr OpTableEntry kH200OpTable[] = {
#include "op_table_h200.inc"
    {OpKey::kCount, 0, 0, 0, {}},
};
constexpr OpTableEntry kH100OpTable[] = {
#include "op_table_h100.inc"
    {OpKey::kCount, 0, 0, 0, {}},
};

const OpTableEntry* op_table_of(gemm::TunedGpu gpu) {
  switch (gpu) {
    case gemm::TunedGpu::kH100:
      return kH100OpTable;
    case gemm::TunedGpu::kH200:
      return kH200OpTable;
    case gemm::TunedGpu::kUntuned:
      return nullptr;
  }
  return nullptr;
}

}  // namespace

gemm::KernelChoice program_choice(const ArgCheck& check, const TunedCall& call,
                                  const OpOptions& options) {
  // A choice passed in, or forced on this op for a benchmark (force_op_choice): checked alike.
  const std::optional<gemm::KernelChoice> given =
      options.choice ? options.choice : forced_op_choice(call.op);
  if (!given) return op_choice(gemm::current_tuned_gpu(), call.op, call.m, call.n, call.k);
  if (!epilogue::has_program_instance(call.op, given->config)) {
    std::string compiled;
    for (TileConfig c : epilogue::kProgramConfigs)
      if (epilogue::has_program_instance(call.op, c))
        compiled += std::string(compiled.empty() ? "" : ", ") + gemm::to_string(c);
    check.fail(std::string("options.choice.config: ") + name(call.op) + " is compiled for " +
               compiled + "; got " + gemm::to_string(given->config));
  }
  if (given->decomposition == Decomposition::kStreamK)
    check.fail("options.choice.decomposition: the fused ops do not run stream-K");
  return *given;
}

gemm::KernelChoice op_choice(gemm::TunedGpu gpu, OpKey op, std::int64_t m, std::int64_t n,
                             std::int64_t k) {
  // The op's nearest tuned shape on this GPU (gemm::tuned_shape_distance), if one is near.
  const OpTableEntry* nearest = nullptr;
  double best = std::numeric_limits<double>::infinity();
  if (const OpTableEntry* e = op_table_of(gpu))
    for (; e->op != OpKey::kCount; ++e)
      if (e->op == op) {
        const double d = gemm::tuned_shape_distance(int(m), int(n), int(k), e->m, e->n, e->k);
        if (d < best) best = d, nearest = e;
      }
  // A row of this very shape was timed as is; any other choice gets a swizzle that fits its grid.
  if (nearest == nullptr) return rule_choice(gpu, op, m, n, k);
  if (best == 0.0) return nearest->choice;
  return gemm::fit_swizzle(nearest->choice, int(m), int(n), swizzle_fit_of(op));
}

gemm::KernelChoice rule_choice(gemm::TunedGpu gpu, OpKey op, std::int64_t m, std::int64_t n,
                               std::int64_t k) {
  return gemm::fit_swizzle(fallback_of(gpu, op, m, n, k), int(m), int(n), swizzle_fit_of(op));
}

gemm::KernelChoice fallback_of(gemm::TunedGpu gpu, OpKey op, std::int64_t m, std::int64_t n,
                               std::int64_t k) {
  switch (op) {
    case OpKey::kLinearRmsnormBwd:
    case OpKey::kLinearBiasGeluBwd:
    case OpKey::kLinearSwigluBwd: {
      if (op == OpKey::kLinearRmsnormBwd && gpu == gemm::TunedGpu::kH200 &&
          k < kRmsnormBwdPingpongK && m < kRmsnormBwdPingpongRows)
        return {TileConfig::kPingpong128x128Cluster2x1, RasterOrder::kAlongN, 1,
                Decomposition::kHeuristic};
      gemm::KernelChoice c = gemm::choose_data_parallel_kernel_for(
          gpu, gemm::OperandLayout::kAkBn, DType::kBF16, int(m), int(n), int(k));
      if (op == OpKey::kLinearRmsnormBwd) {
        c.config = TileConfig::kCoop128x256Cluster2x1;
        return c;
      }
      return wide_pingpong_where_measured(
          gpu, op, m, n, k,
          {TileConfig::kPingpong128x128Cluster2x1, c.raster, c.swizzle, c.decomposition});
    }
    case OpKey::kLinearQknormRopeSavePre:
    case OpKey::kLinearRmsnormQknormRopeSavePre: {
      gemm::KernelChoice c = op_choice(gpu,
                                       op == OpKey::kLinearQknormRopeSavePre
                                           ? OpKey::kLinearQknormRope
                                           : OpKey::kLinearRmsnormQknormRope,
                                       m, n, k);
      c.config = TileConfig::kPingpong128x128Cluster2x1;
      return c;
    }
    default:
      return wide_pingpong_where_measured(
          gpu, op, m, n, k, along_m_where_measured(gpu, op, m, n, k, forward_program_rule(m, n, k)));
  }
}

gemm::KernelChoice along_m_where_measured(gemm::TunedGpu gpu, OpKey op, std::int64_t m,
                                          std::int64_t n, std::int64_t k,
                                          const gemm::KernelChoice& rule) {
  if (gpu != gemm::TunedGpu::kH200 || !is_wide_output(op, n, k) ||
      rule.config != TileConfig::kPingpong128x128Cluster2x1 || rule.raster != RasterOrder::kAlongN)
    return rule;
  const gemm::ClusterTiles tiles = gemm::cluster_tiles(rule.config, long(m), long(n));
  const std::int64_t most_rows = n >= 16 * k ? kH200AlongMVocabRows : kH200AlongMRows;
  if (tiles.rows >= tiles.cols || m > most_rows) return rule;
  return {rule.config, RasterOrder::kAlongM, 1, rule.decomposition};
}

namespace {

// The H100's wide tile (wide_pingpong_where_measured): from K = kWideFromK, and from kFewTokens
// rows along N with swizzle 2.
constexpr TileConfig kWide = TileConfig::kPingpong128x192Cluster2x1;
constexpr std::int64_t kWideFromK = 4096;
constexpr gemm::KernelChoice kWideAlongN{kWide, RasterOrder::kAlongN, 2, Decomposition::kHeuristic};

// Pingpong 128 x 192 along the shorter mode of its tile grid at M x N, swizzle 2 where that pads
// no tile, else 1 with the same raster (which op_choice's own fit then keeps).
gemm::KernelChoice wide_along_shorter_mode(std::int64_t m, std::int64_t n) {
  const gemm::ClusterTiles tiles = gemm::cluster_tiles(kWide, long(m), long(n));
  const RasterOrder raster = tiles.rows < tiles.cols ? RasterOrder::kAlongM : RasterOrder::kAlongN;
  return gemm::fit_swizzle({kWide, raster, 2, Decomposition::kHeuristic}, int(m), int(n));
}

}  // namespace

gemm::KernelChoice wide_pingpong_where_measured(gemm::TunedGpu gpu, OpKey op, std::int64_t m,
                                                std::int64_t n, std::int64_t k,
                                                const gemm::KernelChoice& rule) {
  if (gpu != gemm::TunedGpu::kH100 || !epilogue::has_program_instance(op, kWide)) return rule;
  if (is_wide_dgrad(op)) {
    if (k >= kWideFromK) return m < kFewTokens ? wide_along_shorter_mode(m, n) : kWideAlongN;
    if (m < kFewTokens) return rule;
    return {TileConfig::kPingpong128x128Cluster2x1, RasterOrder::kAlongN, 2, Decomposition::kHeuristic};
  }
  const bool forward_pingpong = rule.config == TileConfig::kPingpong128x128Cluster2x1;
  if (m < kFewTokens) return forward_pingpong ? wide_along_shorter_mode(m, n) : rule;
  // A forward op keeps Cooperative from K = 8192, and the walk along M of a small A; an MLP's
  // wide output widens at every K below 8192 and either raster (the LM head's cross-entropy does
  // not: at K = 2048 the wide tile ran 0.69-0.95 of the rule's speed on the H100's tuner logs).
  const bool wide_output =
      forward_pingpong && op != OpKey::kLinearCrossEntropy && is_wide_output(op, n, k);
  if (!wide_output && (k < kWideFromK || !(forward_pingpong && rule.raster == RasterOrder::kAlongN)))
    return rule;
  return kWideAlongN;
}

bool is_wide_dgrad(OpKey op) {
  return op == OpKey::kLinearSwigluBwd || op == OpKey::kLinearBiasGeluBwd;
}

bool is_wide_output(OpKey op, std::int64_t n, std::int64_t k) {
  const bool mlp_or_head = op == OpKey::kLinearSwiglu || op == OpKey::kLinearRmsnormSwiglu ||
                           op == OpKey::kLinearBiasGelu || op == OpKey::kLinearBiasGeluSavePre ||
                           op == OpKey::kLinearCrossEntropy;
  return mlp_or_head && n >= 2 * k;
}

gemm::SwizzleFit swizzle_fit_of(OpKey op) {
  gemm::SwizzleFit fit;
  // Every op: a row tuned along M whose swizzle the fit lowers walks along N. On the H100 at
  // M = 13350 (op tuner, every candidate in the same rounds, 8B / 1B / Qwen3-8B widths, thirtieth
  // session), the rows tuned along M with swizzle 4–8 at 16384 ran 1.09–1.37 × matmul at swizzle 2
  // along M, 0.98–1.16 along N: the QK-norm RoPE 1.29 → 1.10, the RMSNorm backward 1.11 → 1.02.
  fit.lowered_walks_along_n = true;
  // The SwiGLU backward keeps its tuned swizzle at up to 5 % padding and walks the shorter mode
  // once the swizzle falls to 1, Pingpong too. Its operands are re-read from DRAM in narrow bands
  // (bench/RESULTS.md, twenty-eighth session), so swizzle 1 costs more than a few % of padding
  // tiles: on the H100 (thirtieth session) the 8B row's Pingpong 128 × 192 along N ran 1.30–1.39 ×
  // matmul at swizzle 1 and 1.10–1.18 at swizzle 2 (3.2–3.5 % padding) at M = 12000–14000. Over
  // 36 (model, M) points of that sweep (M = 4096–32768), bounds of 5–6 % lost least against the
  // best swizzle (worst 1.08); 8 % kept the 1B's swizzle 8 at 13350 (5.7 %, 1.33–1.39 against
  // 1.25 at swizzle 2), 3 % dropped the 8B's to 1. Eighteenth session: swizzle 1's heuristic
  // raster ran 0.87–0.92 of the tuned one at M = 5194. Other ops keep the 2 % (seventeenth).
  if (op == OpKey::kLinearSwigluBwd) {
    fit.max_padding = 0.05;
    fit.pingpong_heuristic_raster = true;
  }
  return fit;
}

gemm::KernelChoice forward_program_rule(std::int64_t m, std::int64_t n, std::int64_t k) {
  const bool cooperative = k >= 8192;
  // Walking along N over fewer tile rows than columns, each B tile is fetched once per row, no
  // CTA in flight sharing it; along M the CTAs in flight share B tiles and re-read A, which pays
  // while A stays in L2 (a third of the 50 MB of both tuned parts). A larger A, re-read from DRAM
  // along M, starves the mainloop: at M = 16384 the wide-N ops ran 1.3–1.5 × the best
  // candidate's time along M (scripts/rule_coverage.py on the tune-ops logs).
  constexpr std::int64_t kL2ResidentBytes = 16 << 20;
  const TileConfig config =
      cooperative ? TileConfig::kCoop128x256Cluster2x1 : TileConfig::kPingpong128x128Cluster2x1;
  const gemm::ClusterTiles tiles = gemm::cluster_tiles(config, long(m), long(n));
  const bool along_m = tiles.rows < tiles.cols && m * k * 2 <= kL2ResidentBytes;
  const RasterOrder raster = along_m ? RasterOrder::kAlongM : RasterOrder::kAlongN;
  return {config, raster, cooperative ? 4 : along_m ? 2 : 1, Decomposition::kHeuristic};
}

}  // namespace coda::ops::detail
