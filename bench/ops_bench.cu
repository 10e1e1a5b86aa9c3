// SPDX-License-Identifier: BSD-3-Clause
// `coda-bench ops [--bwd]`: the forward (or backward) ops (include/coda/ops/) against the cuBLAS
// GEMM of the same shape (the speed of light) and CODA's plain GEMM, in the same process,
// interleaved rounds. Shapes: the
// Llama-3 1B/8B/70B projections each op replaces at M tokens, and the paper's square shapes
// sq2048/sq4096/sq8192 (M = N = K). linear_bias_gelu(_bwd), the GPT-2 / BERT MLP, runs at N = 4 ·
// hidden of each model's hidden width.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "coda/gemm/choose_config.hpp"
#include "coda/gemm/gemm.hpp"
#include "coda/ops/autotune.hpp"
#include "coda/ops/linear_bias_gelu.hpp"
#include "coda/ops/linear_cross_entropy.hpp"
#include "coda/ops/op_key.hpp"
#include "coda/ops/linear_norm.hpp"
#include "coda/ops/linear_rope.hpp"
#include "coda/ops/linear_swiglu.hpp"
#include "coda/ops/linear_rmsnorm_bwd.hpp"
#include "coda/ops/linear_swiglu_bwd.hpp"
#include "coda/ops/qknorm_rope_bwd.hpp"
#include "coda/ops/rope_bwd.hpp"
#include "coda/ops/norm_stats.hpp"
#include "coda/ops/weights.hpp"
#include "gemm_bench.hpp"
#include "rounds.hpp"
#include "timing.hpp"

namespace coda::bench {

namespace {

struct Model {
  std::string name;
  int hidden, q_heads, kv_heads, head_dim, ffn;
};

TensorView matrix(const DeviceAlloc& a, std::int64_t rows, std::int64_t cols) {
  return TensorView::matrix(a.get(), DType::kBF16, rows, cols);
}
TensorView vector_view(const DeviceAlloc& a, std::int64_t n, DType t) {
  return TensorView::vector(a.get(), t, n);
}

struct Row {
  std::string name, shape;
  int m, n, k;
  double ms, cublas_ms, plain_ms, over_cublas;
  double copy_ms = 0.0;  // memory-pass ops (no GEMM): a device copy of the same traffic
  double three_gemms_ms = 0.0, peak_extra_gib = 0.0;  // LM head + cross-entropy fwd+bwd
  double tuned_ms = 0.0, tuned_over_rule = 0.0;       // --autotune: the op with the tuner on
};

// One op at one GEMM shape: the op, cuBLAS and the plain GEMM, interleaved.
// With tune_out: instead, time every kernel candidate and append the best as an op_table.inc line.
Row measure(const std::string& op, const std::string& shape_name, int m, int n, int k,
            const Model& model, const BenchArgs& args, cublasHandle_t handle, cudaStream_t stream,
            std::string* tune_out = nullptr) {
  // Backward ops run in dgrad GEMMs (dY = dOut · W: A K-major, B N-major); n = F, k = hidden.
  const bool bwd =
      op == "linear_swiglu_bwd" || op == "linear_rmsnorm_bwd" || op == "linear_bias_gelu_bwd";
  const GemmShape shape{shape_name, op, bwd ? "dgrad" : "fwd",
                        bwd ? gemm::OperandLayout::kAkBn : gemm::OperandLayout::kAkBk, m, n, k};
  OperandSets ops(shape, 256u << 20);
  const std::size_t mn = std::size_t(m) * n;
  DeviceAlloc z(bwd ? 4 * mn : 16), dz(bwd ? 4 * mn : 16), zdz(std::size_t(m) * 4), dw(std::size_t(n) * 4),
      bwd_workspace(bwd ? std::max({ops::linear_swiglu_bwd_workspace_bytes(m, n),
                                    ops::linear_rmsnorm_bwd_workspace_bytes(m, n),
                                    ops::linear_bias_gelu_bwd_workspace_bytes(m, n)})
                        : 16);
  DeviceAlloc extra(mn * 2), residual(mn * 2), weight(std::size_t(n) * 2),
      stats_buf(ops::norm_stats_floats(m, std::max(n, k)) * 4), positions(std::size_t(m) * 4),
      freq(std::size_t(n) * 4);
  if (model.q_heads > 0) {
    const std::vector<float> t =
        ops::rope_frequencies(model.q_heads, model.kv_heads, model.head_dim, 500000.0);
    if (t.size() == std::size_t(n))  // the QKV projections: the rope ops
      check_cuda(cudaMemcpy(freq.get(), t.data(), t.size() * 4, cudaMemcpyHostToDevice), "freq");
  }
  // Statistics of a K-wide producer for the rmsnorm consumers (as a block would leave them).
  ops::RowNormStats stats{stats_buf.get<float>(), ops::norm_stats_floats(m, std::max(n, k))};
  stats.layout = epilogue::per_row_partial_layout(gemm::TileConfig::kCoop128x256Cluster2x1, m, k);
  stats.width = k;
  ops::RowNormStats produced = stats;
  // Statistics of an N-wide X (the RMSNorm backward's D = n), as its producer would leave them.
  ops::RowNormStats stats_of_d = stats;
  stats_of_d.layout = epilogue::per_row_partial_layout(gemm::TileConfig::kCoop128x256Cluster2x1, m, n);
  stats_of_d.width = n;
  gemm::GemmOptions plain;
  plain.choice = gemm::choose_kernel(shape.layout, DType::kBF16, m, n, k);
  std::size_t ws = gemm::workspace_bytes(ops.d(0), ops.a(0), ops.b(0), plain);
  if (args.epilogue_cost)  // the plain twins of the candidates share this workspace
    for (const gemm::KernelChoice& c : ops::program_candidates()) {
      gemm::GemmOptions same = plain;
      same.choice = c;
      ws = std::max(ws, gemm::workspace_bytes(ops.d(0), ops.a(0), ops.b(0), same));
    }
  DeviceAlloc workspace(std::max<std::size_t>(ws, 16));  // stream-K partials
  plain.workspace = ws ? workspace.get() : nullptr;
  plain.workspace_bytes = ws;
  const auto pos = vector_view(positions, m, DType::kI32), fr = vector_view(freq, n, DType::kF32);
  const ops::QkNorm qk_norm{vector_view(weight, model.head_dim, DType::kBF16),
                           vector_view(weight, model.head_dim, DType::kBF16), model.q_heads,
                           model.kv_heads, 1e-6f};
  // Cross-entropy: the loss, the lse, and its workspace (the targets are `positions`, all 0).
  const bool ce_op = op == "linear_cross_entropy";
  DeviceAlloc ce_loss(16), ce_lse(std::size_t(m) * 4),
      ce_workspace(ce_op ? ops::linear_cross_entropy_workspace_bytes(m, n) : 16);

  // The op on operand set i, with options (a forced kernel when tuning).
  std::function<void(int, const ops::OpOptions&)> op_run;
  if (op == "linear_residual_rms")
    op_run = [&](int i, const ops::OpOptions& o) {
      ops::linear_residual_rms(ops.d(i), matrix(extra, m, n), produced, ops.a(i), ops.b(i),
                               matrix(residual, m, n), vector_view(weight, n, DType::kBF16), stream,
                               o);
    };
  else if (op == "linear_rmsnorm")
    op_run = [&](int i, const ops::OpOptions& o) {
      ops::linear_rmsnorm(ops.d(i), ops.a(i), ops.b(i), stats, 1e-5f, stream, o);
    };
  else if (op == "linear_swiglu")
    op_run = [&](int i, const ops::OpOptions& o) {
      ops::linear_swiglu(ops.d(i), matrix(extra, m, n / 2), ops.a(i), ops.b(i), stream, o);
    };
  else if (op == "linear_rmsnorm_swiglu")
    op_run = [&](int i, const ops::OpOptions& o) {
      ops::linear_rmsnorm_swiglu(ops.d(i), matrix(extra, m, n / 2), ops.a(i), ops.b(i), stats,
                                 1e-5f, stream, o);
    };
  else if (op == "linear_swiglu_no_z")  // Z not stored (recomputed in the backward)
    op_run = [&](int i, const ops::OpOptions& o) {
      ops::linear_swiglu(TensorView{}, matrix(extra, m, n / 2), ops.a(i), ops.b(i), stream, o);
    };
  else if (op == "linear_rmsnorm_swiglu_no_z")
    op_run = [&](int i, const ops::OpOptions& o) {
      ops::linear_rmsnorm_swiglu(TensorView{}, matrix(extra, m, n / 2), ops.a(i), ops.b(i), stats,
                                 1e-5f, stream, o);
    };
  else if (op == "linear_cross_entropy")
    op_run = [&](int i, const ops::OpOptions& o) {
      ops::CrossEntropyOptions ce;  // mean over all tokens (targets 0: none ignored)
      ops::linear_cross_entropy(vector_view(ce_loss, 1, DType::kF32),
                                vector_view(ce_lse, m, DType::kF32), ops.a(i), ops.b(i),
                                vector_view(positions, m, DType::kI32), ce, ce_workspace.get(),
                                ops::linear_cross_entropy_workspace_bytes(m, n), stream, o);
    };
  else if (op == "linear_rope")
    op_run = [&](int i, const ops::OpOptions& o) {
      ops::linear_rope(ops.d(i), ops.a(i), ops.b(i), pos, fr, stream, o);
    };
  else if (op == "linear_rmsnorm_rope")
    op_run = [&](int i, const ops::OpOptions& o) {
      ops::linear_rmsnorm_rope(ops.d(i), ops.a(i), ops.b(i), stats, 1e-5f, pos, fr, stream, o);
    };
  else if (op == "linear_qknorm_rope")
    op_run = [&](int i, const ops::OpOptions& o) {
      ops::linear_qknorm_rope(ops.d(i), TensorView{}, ops.a(i), ops.b(i), pos, fr, qk_norm, stream, o);
    };
  else if (op == "linear_qknorm_rope_save_pre")  // training: the pre-norm projection kept
    op_run = [&](int i, const ops::OpOptions& o) {
      ops::linear_qknorm_rope(ops.d(i), matrix(extra, m, n), ops.a(i), ops.b(i), pos, fr, qk_norm,
                              stream, o);
    };
  else if (op == "linear_rmsnorm_qknorm_rope")
    op_run = [&](int i, const ops::OpOptions& o) {
      ops::linear_rmsnorm_qknorm_rope(ops.d(i), TensorView{}, ops.a(i), ops.b(i), stats, 1e-5f, pos, fr, qk_norm,
                                      stream, o);
    };
  else if (op == "linear_rmsnorm_qknorm_rope_save_pre")  // training: the pre-norm projection kept
    op_run = [&](int i, const ops::OpOptions& o) {
      ops::linear_rmsnorm_qknorm_rope(ops.d(i), matrix(extra, m, n), ops.a(i), ops.b(i), stats,
                                      1e-5f, pos, fr, qk_norm, stream, o);
    };
  else if (op == "linear_bias_gelu")  // bias b[n] in `weight`
    op_run = [&](int i, const ops::OpOptions& o) {
      ops::linear_bias_gelu(ops.d(i), TensorView{}, ops.a(i), ops.b(i),
                            vector_view(weight, n, DType::kBF16), stream, o);
    };
  else if (op == "linear_bias_gelu_save_pre")  // training: the pre-activation kept for the backward
    op_run = [&](int i, const ops::OpOptions& o) {
      ops::linear_bias_gelu(ops.d(i), matrix(extra, m, n), ops.a(i), ops.b(i),
                            vector_view(weight, n, DType::kBF16), stream, o);
    };
  else if (op == "linear_swiglu_bwd")
    op_run = [&](int i, const ops::OpOptions& o) {
      // ops.b(i) is W_down [hidden, F] seen as the GEMM's N-major B.
      ops::linear_swiglu_bwd(matrix(dz, m, 2 * n), ops.d(i), vector_view(zdz, m, DType::kF32),
                             ops.a(i), TensorView::matrix(ops.b(i).data, DType::kBF16, k, n),
                             matrix(z, m, 2 * n), bwd_workspace.get(),
                             ops::linear_swiglu_bwd_workspace_bytes(m, n), stream, o);
    };
  else if (op == "linear_rmsnorm_bwd")
    op_run = [&](int i, const ops::OpOptions& o) {
      // dZ [M, k] · W [k, n = D]; X and N in `extra`/`residual`, dX accumulated into D.
      const ops::RmsNormSaved saved{matrix(residual, m, n), stats_of_d,
                                    vector_view(weight, n, DType::kBF16), 1e-5f};
      ops::linear_rmsnorm_bwd(ops.d(i), true, matrix(extra, m, n), vector_view(dw, n, DType::kF32),
                              ops.a(i), TensorView::matrix(ops.b(i).data, DType::kBF16, k, n),
                              saved, vector_view(zdz, m, DType::kF32), bwd_workspace.get(),
                              ops::linear_rmsnorm_bwd_workspace_bytes(m, n), {}, stream, o);
    };
  else if (op == "linear_bias_gelu_bwd")
    op_run = [&](int i, const ops::OpOptions& o) {
      // dP = (dOut [M, k] · W_down [k, n]) ⊙ gelu'(Pre), Pre in `extra`; ∂b into `dw`.
      ops::linear_bias_gelu_bwd(ops.d(i), vector_view(dw, n, DType::kF32), ops.a(i),
                                TensorView::matrix(ops.b(i).data, DType::kBF16, k, n),
                                matrix(extra, m, n), bwd_workspace.get(),
                                ops::linear_bias_gelu_bwd_workspace_bytes(m, n), stream, o);
    };
  else
    throw Error("coda-bench ops: unknown op " + op);
  std::function<void(int)> run = [&](int i) { op_run(i, {}); };

  if (tune_out != nullptr) {
    // Every kernel the op's program can run (the autotuner's candidates), against cuBLAS.
    std::vector<Timed> v = {{"cublas", [&](int i) { ops.cublas_gemm(handle, i); }}};
    const std::optional<ops::OpKey> key = ops::op_key_from_name(op);
    if (!key) throw Error("coda-bench tune-ops: " + op + " has no op-table key (coda/ops/op_key.hpp)");
    const std::vector<gemm::KernelChoice> choices = ops::op_candidates(*key);
    for (const gemm::KernelChoice& c : choices) {
      const ops::OpOptions o{c};
      v.push_back({"candidate", [&, o](int i) { op_run(i, o); }});
    }
    // --epilogue-cost: the plain GEMM under each candidate's own kernel (same tile, schedule,
    // raster and swizzle), so that fused / plain is the epilogue's cost alone; variant
    // choices.size() + i is candidate i's plain twin.
    if (args.epilogue_cost)
      for (const gemm::KernelChoice& c : choices) {
        gemm::GemmOptions same = plain;
        same.choice = c;
        v.push_back({"plain twin", [&, same](int i) {
                       gemm::gemm(ops.d(i), ops.a(i), ops.b(i), same, stream);
                     }});
      }
    std::vector<std::vector<double>> all;
    interleaved_rounds(v, ops.count(), 1, 1, stream, &all);  // warm-up
    const int reps = std::max(1, std::min(6, int(20.0 / std::max(median(all[0]), 0.01))));
    auto per_round = interleaved_rounds(v, ops.count(), args.rounds, reps, stream, &all);
    // The best by its median per-round ratio to cuBLAS, which ran in the same rounds: a clock or
    // thermal drift over the run moves both sides of a round alike (pooled medians of ms do not
    // cancel it; at 5 rounds they picked a candidate 3 % behind the best by ratio).
    std::vector<double> ratio(v.size());
    for (std::size_t i = 1; i < v.size(); ++i) ratio[i] = median_ratio(per_round[i], per_round[0]);
    std::size_t best = 1;
    for (std::size_t i = 2; i <= choices.size(); ++i)
      if (ratio[i] < ratio[best]) best = i;
    // Every candidate's time, for the log: what the choice was between.
    for (std::size_t i = 1; i <= choices.size(); ++i) {
      const gemm::KernelChoice& c = choices[i - 1];
      std::printf("  candidate %-20s %s swizzle %d  %.3f ms  %.3f x cuBLAS", gemm::to_string(c.config),
                  c.raster == gemm::RasterOrder::kAlongM ? "along M" : "along N", c.swizzle,
                  median(all[i]), ratio[i]);
      if (args.epilogue_cost) {
        const std::size_t twin = choices.size() + i;
        std::printf("  plain twin %.3f ms  epilogue %.3f x", median(all[twin]),
                    median_ratio(per_round[i], per_round[twin]));
      }
      std::printf("\n");
    }
    const gemm::KernelChoice& c = choices[best - 1];
    char line[512];
    std::snprintf(line, sizeof line, "%s  // %s: %.3f x cuBLAS\n",
                  ops::op_table_row(*key, m, n, k, c).c_str(), shape_name.c_str(), ratio[best]);
    *tune_out += line;
    std::printf("%s", line);
    std::fflush(stdout);
    return {};
  }

  std::vector<Timed> v = {
      {"cublas", [&](int i) { ops.cublas_gemm(handle, i); }},
      {"plain", [&](int i) { gemm::gemm(ops.d(i), ops.a(i), ops.b(i), plain, stream); }},
      {op, run}};
  // The tuned variant turns the tuner on for its own calls only; its first call (warm-up) times
  // the candidates on operand set 0 and persists the winner in CODA_TUNE_CACHE.
  if (args.autotune)
    v.push_back({"tuned", [&](int i) {
                   ops::set_autotune(true);
                   op_run(i, {});
                   ops::set_autotune(false);
                 }});
  std::vector<std::vector<double>> all;
  interleaved_rounds(v, ops.count(), 1, 2, stream, &all);  // warm-up
  const int reps = std::max(2, std::min(10, int(40.0 / std::max(median(all[0]), 0.01))));
  auto per_round = interleaved_rounds(v, ops.count(), args.rounds, reps, stream, &all);
  Row r{op, shape_name, m, n, k, median(all[2]), median(all[0]), median(all[1]),
        median_ratio(per_round[2], per_round[0])};
  std::printf("%-22s %-7s %6d×%6d×%6d  %.3f ms  cuBLAS %.3f  plain %.3f  ×cuBLAS %.3f",
              r.name.c_str(), r.shape.c_str(), m, n, k, r.ms, r.cublas_ms, r.plain_ms, r.over_cublas);
  if (args.autotune) {
    r.tuned_ms = median(all[3]);
    r.tuned_over_rule = median_ratio(per_round[3], per_round[2]);
    std::printf("  tuned %.3f ms ×cuBLAS %.3f tuned/rule %.3f", r.tuned_ms,
                median_ratio(per_round[3], per_round[0]), r.tuned_over_rule);
  }
  std::printf("\n");
  std::fflush(stdout);
  return r;
}

bool selected(const std::string& list, const std::string& name) {
  return list == "all" || ("," + list + ",").find("," + name + ",") != std::string::npos;
}

}  // namespace

// The RoPE backwards (memory passes, no GEMM): rope_bwd, or qknorm_rope_bwd with op
// "qknorm_rope_bwd". Their time and bandwidth over the bytes they must move (read the saved
// QKV / Pre and dQKV, write dZ / dPre: 6 bytes per element), interleaved with a device copy of
// the same read + write volume as the memory speed of light.
Row measure_rope_bwd(const std::string& op, const std::string& shape_name, int m,
                     const Model& model, const BenchArgs& args, cudaStream_t stream) {
  const int n = (model.q_heads + 2 * model.kv_heads) * model.head_dim, hd = model.head_dim;
  const std::size_t bytes = std::size_t(m) * n * 2;
  const int sets = int(std::max<std::size_t>(1, std::min<std::size_t>(8, (256u << 20) / (3 * bytes))));
  std::vector<DeviceAlloc> y, dy, dz;
  for (int i = 0; i < sets; ++i)  // y[i] has 1.5 × bytes so the copy below can read that much of it
    y.emplace_back(bytes + bytes / 2), dy.emplace_back(bytes), dz.emplace_back(bytes);
  DeviceAlloc zdz(std::size_t(m) * 4), positions(std::size_t(m) * 4), freq(std::size_t(n) * 4),
      copy_dst(2 * bytes);
  const std::vector<float> t = ops::rope_frequencies(model.q_heads, model.kv_heads, model.head_dim, 500000.0);
  check_cuda(cudaMemcpy(freq.get(), t.data(), t.size() * 4, cudaMemcpyHostToDevice), "freq");
  // QK-norm: γ (ones), ∂γ, and the workspace.
  DeviceAlloc gamma(std::size_t(hd) * 2), dgamma(std::size_t(hd) * 8),
      ws(ops::qknorm_rope_bwd_workspace_bytes(m, hd));
  const std::vector<std::uint16_t> ones(hd, 0x3f80);
  check_cuda(cudaMemcpy(gamma.get(), ones.data(), hd * 2, cudaMemcpyHostToDevice), "gamma");
  const ops::QkNorm qk{vector_view(gamma, hd, DType::kBF16), vector_view(gamma, hd, DType::kBF16),
                       model.q_heads, model.kv_heads, 1e-6f};
  const ops::QkNormGrads grads{vector_view(dgamma, hd, DType::kF32),
                               TensorView::vector(static_cast<float*>(dgamma.get()) + hd, DType::kF32, hd)};
  const bool qk_norm = op == "qknorm_rope_bwd";
  const std::vector<Timed> v = {
      {"copy", [&](int i) {  // 1.5 × bytes read and written: rope_bwd's 3 × bytes of traffic
         check_cuda(cudaMemcpyAsync(copy_dst.get(), y[i].get(), bytes + bytes / 2,
                                    cudaMemcpyDeviceToDevice, stream), "copy");
       }},
      {op, [&](int i) {
         const TensorView pos = vector_view(positions, m, DType::kI32), fr = vector_view(freq, n, DType::kF32);
         if (qk_norm)
           ops::qknorm_rope_bwd(matrix(dz[i], m, n), vector_view(zdz, m, DType::kF32), grads,
                                matrix(y[i], m, n), matrix(dy[i], m, n), pos, fr, qk, ws.get(),
                                ops::qknorm_rope_bwd_workspace_bytes(m, hd), stream);
         else
           ops::rope_bwd(matrix(dz[i], m, n), vector_view(zdz, m, DType::kF32), matrix(y[i], m, n),
                         matrix(dy[i], m, n), pos, fr, stream);
       }}};
  std::vector<std::vector<double>> all;
  interleaved_rounds(v, sets, 1, 2, stream, &all);  // warm-up
  interleaved_rounds(v, sets, args.rounds, 10, stream, &all);
  const double ms = median(all[1]), copy_ms = median(all[0]);
  std::printf("%-22s %-7s %6d×%6d  %.3f ms (%.0f GB/s)  copy of the same traffic %.3f ms\n", op.c_str(),
              shape_name.c_str(), m, n, ms, 3.0 * bytes / ms * 1e-6, copy_ms);
  std::fflush(stdout);
  return {op, shape_name, m, n, 0, ms, 0.0, 0.0, 0.0, copy_ms};
}

// LM head + cross-entropy forward and backward against its three cuBLAS GEMMs (logits, dX, dW)
// run back to back; peak extra memory = the op's workspace (dlogits never whole).
Row measure_ce_fwd_bwd(const std::string& shape_name, int m, const Model& model,
                       const BenchArgs& args, cublasHandle_t handle, cudaStream_t stream) {
  const int v = 128256, h = model.hidden;
  const GemmShape fwd{shape_name, "lm_head", "fwd", gemm::OperandLayout::kAkBk, m, v, h};
  const GemmShape dgrad{shape_name, "lm_head", "dgrad", gemm::OperandLayout::kAkBn, m, h, v};
  const GemmShape wgrad{shape_name, "lm_head", "wgrad", gemm::OperandLayout::kAmBn, v, h, m};
  OperandSets f(fwd, 0), d(dgrad, 0), w(wgrad, 0);  // one set each: every operand is ≫ L2
  DeviceAlloc targets(std::size_t(m) * 4), loss(16), lse(std::size_t(m) * 4), zdz(std::size_t(m) * 4),
      dx(std::size_t(m) * h * 2), dw(std::size_t(v) * h * 4);
  const std::size_t ws_bytes = ops::linear_cross_entropy_fwd_bwd_workspace_bytes(m, v);
  DeviceAlloc ws(ws_bytes);
  const double peak_extra_gib = double(ws_bytes) / double(1u << 30);
  const ops::CrossEntropyOptions ce;  // mean; targets all 0
  const ops::CrossEntropyGrads grads{matrix(dx, m, h), TensorView::matrix(dw.get(), DType::kF32, v, h),
                                     false, vector_view(zdz, m, DType::kF32), {}};
  const std::vector<Timed> variants = {
      {"three_gemms", [&](int) {
         f.cublas_gemm(handle, 0);
         d.cublas_gemm(handle, 0);
         w.cublas_gemm(handle, 0);
       }},
      {"coda", [&](int) {
         ops::linear_cross_entropy_fwd_bwd(vector_view(loss, 1, DType::kF32),
                                           vector_view(lse, m, DType::kF32), grads, f.a(0), f.b(0),
                                           vector_view(targets, m, DType::kI32), ce, ws.get(),
                                           ws_bytes, stream);
       }}};
  std::vector<std::vector<double>> all;
  interleaved_rounds(variants, 1, 1, 1, stream, &all);  // warm-up
  auto per_round = interleaved_rounds(variants, 1, args.rounds, 2, stream, &all);
  const double ms = median(all[1]), gemms = median(all[0]);
  std::printf("%-30s %-4s %6d×%6d×%5d  %.3f ms  three cuBLAS GEMMs %.3f ms  ×%.3f  workspace %.2f GiB\n",
              "linear_cross_entropy_fwd_bwd", shape_name.c_str(), m, v, h, ms, gemms,
              median_ratio(per_round[1], per_round[0]), peak_extra_gib);
  std::fflush(stdout);
  return {"linear_cross_entropy_fwd_bwd", shape_name, m, v, h, ms, 0.0, 0.0,
          median_ratio(per_round[1], per_round[0]), 0.0, gemms, peak_extra_gib};
}

int run_ops_bench(const BenchArgs& args, bool tune) {
  std::string table;
  std::string* tune_out = tune ? &table : nullptr;
  const BenchDevice device;
  cudaStream_t stream = device.stream;
  cublasHandle_t handle = device.handle;
  const cudaDeviceProp& prop = device.prop;
  // --passes bwd (or --bwd): the backward ops; otherwise the forward ones.
  const bool bwd = args.passes == "bwd";
  std::printf("coda-bench ops (%s) on %s, %d rounds\n", bwd ? "backward" : "forward", prop.name,
              args.rounds);

  const Model models[] = {{"1B", 2048, 32, 8, 64, 8192},
                          {"8B", 4096, 32, 8, 128, 14336},
                          {"70B", 8192, 64, 8, 128, 28672}};
  const int m = args.tokens();
  std::vector<Row> rows;
  // One op row, when --ops selects it.
  auto add = [&](const std::string& op, const std::string& shape_name, int rows_m, int n, int k,
                 const Model& md, std::string* tune_table = nullptr) {
    if (selected(args.ops, op))
      rows.push_back(measure(op, shape_name, rows_m, n, k, md, args, handle, stream, tune_table));
  };
  for (const Model& md : models) {
    if (!selected(args.models, md.name)) continue;
    const int qkv = (md.q_heads + 2 * md.kv_heads) * md.head_dim;
    if (bwd) {
      // The down-projection's dgrad: dOut [M, hidden] · W_down [hidden, F].
      add("linear_swiglu_bwd", md.name, m, md.ffn, md.hidden, md, tune_out);
      // The MLP norm's backward in the gate/up dgrad: dZ [M, 2F] · W_gu [2F, hidden].
      add("linear_rmsnorm_bwd", md.name, m, md.hidden, 2 * md.ffn, md, tune_out);
      // A GELU MLP's down-projection dgrad: dOut [M, hidden] · W_down [hidden, 4 · hidden].
      add("linear_bias_gelu_bwd", md.name, m, 4 * md.hidden, md.hidden, md, tune_out);
      if (!tune) {
        for (const char* op : {"rope_bwd", "qknorm_rope_bwd"})
          if (selected(args.ops, op)) rows.push_back(measure_rope_bwd(op, md.name, m, md, args, stream));
        if (selected(args.ops, "linear_cross_entropy_fwd_bwd"))
          rows.push_back(measure_ce_fwd_bwd(md.name, m, md, args, handle, stream));
      }
      continue;
    }
    add("linear_residual_rms", md.name, m, md.hidden, md.q_heads * md.head_dim, md, tune_out);
    add("linear_rmsnorm", md.name, m, qkv, md.hidden, md, tune_out);
    add("linear_swiglu", md.name, m, 2 * md.ffn, md.hidden, md, tune_out);
    add("linear_rmsnorm_swiglu", md.name, m, 2 * md.ffn, md.hidden, md, tune_out);
    if (!tune) {  // same kernel table as with Z
      add("linear_swiglu_no_z", md.name, m, 2 * md.ffn, md.hidden, md);
      add("linear_rmsnorm_swiglu_no_z", md.name, m, 2 * md.ffn, md.hidden, md);
    }
    add("linear_rope", md.name, m, qkv, md.hidden, md, tune_out);
    add("linear_rmsnorm_rope", md.name, m, qkv, md.hidden, md, tune_out);
    add("linear_qknorm_rope", md.name, m, qkv, md.hidden, md, tune_out);
    add("linear_qknorm_rope_save_pre", md.name, m, qkv, md.hidden, md, tune_out);
    add("linear_rmsnorm_qknorm_rope", md.name, m, qkv, md.hidden, md, tune_out);
    add("linear_rmsnorm_qknorm_rope_save_pre", md.name, m, qkv, md.hidden, md, tune_out);
    add("linear_cross_entropy", md.name, m, 128256, md.hidden, md, tune_out);
    add("linear_bias_gelu", md.name, m, 4 * md.hidden, md.hidden, md, tune_out);
    add("linear_bias_gelu_save_pre", md.name, m, 4 * md.hidden, md.hidden, md, tune_out);
  }
  for (int s : {2048, 4096, 8192}) {
    const std::string name = "sq" + std::to_string(s);
    if (!selected(args.models, name)) continue;
    const Model sq{name, s, s / 128 - 2, 1, 128, s / 2};  // heads: (q + 2 kv) · 128 = s
    if (bwd) {
      add("linear_swiglu_bwd", name, s, s, s, sq, tune_out);
      add("linear_rmsnorm_bwd", name, s, s, s, sq, tune_out);
      add("linear_bias_gelu_bwd", name, s, s, s, sq, tune_out);
      continue;
    }
    for (const char* op : {"linear_residual_rms", "linear_rmsnorm", "linear_swiglu",
                           "linear_rmsnorm_swiglu", "linear_rope", "linear_rmsnorm_rope",
                           "linear_qknorm_rope", "linear_rmsnorm_qknorm_rope", "linear_bias_gelu",
                           "linear_bias_gelu_save_pre"})
      add(op, name, s, s, s, sq, tune_out);
  }

  if (tune) {
    std::ofstream f(args.table_out);
    f << "// Op × shape -> kernel table for the fused ops (program_choice in op_checks.cpp), written\n"
         "// by `coda-bench tune-ops` on " << prop.name << " (" << args.date << ", commit "
      << args.commit << "): every candidate in " << args.rounds << " interleaved rounds.\n"
         "// {OpKey, M, N, K, {config, raster, swizzle, decomposition}},  // shape: × cuBLAS\n"
      << table;
    return 0;
  }
  if (!args.json.empty()) {
    std::ofstream f(args.json);
    write_json_header(f, args, prop.name);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      f << "    {\"name\": \"" << r.name << "\", \"shape\": \"" << r.shape << "\", \"mnk\": [" << r.m
        << ", " << r.n << ", " << r.k << "], \"coda_ms\": " << r.ms;
      if (r.three_gemms_ms > 0)  // LM head + cross-entropy: against its three GEMMs
        f << ", \"baseline\": {\"three_gemms\": " << r.three_gemms_ms
          << "}, \"ratio_over_three_gemms\": " << r.over_cublas
          << ", \"peak_extra_gib\": " << r.peak_extra_gib << "}";
      else if (r.copy_ms > 0)  // a memory pass: against a device copy of the same traffic
        f << ", \"baseline\": {\"device_copy\": " << r.copy_ms << "}, \"ratio_over_copy\": "
          << r.ms / r.copy_ms << "}";
      else
        f << ", \"baseline\": {\"cublas_gemm\": " << r.cublas_ms << ", \"coda_plain_gemm\": "
          << r.plain_ms << "}, \"ratio_over_cublas\": " << r.over_cublas;
      if (r.tuned_ms > 0)
        f << ", \"tuned_ms\": " << r.tuned_ms << ", \"ratio_tuned_over_rule\": " << r.tuned_over_rule;
      if (r.three_gemms_ms <= 0 && r.copy_ms <= 0) f << "}";
      f << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    f << "  ]\n}\n";
  }
  std::printf("\n| op | shape | M×N×K | ms | cuBLAS ms | plain ms | × cuBLAS |\n"
              "| --- | --- | --- | --- | --- | --- | --- |\n");
  for (const Row& r : rows)
    std::printf("| %s | %s | %d×%d×%d | %.3f | %.3f | %.3f | %.3f |\n", r.name.c_str(),
                r.shape.c_str(), r.m, r.n, r.k, r.ms, r.cublas_ms, r.plain_ms, r.over_cublas);
  return 0;
}

}  // namespace coda::bench
