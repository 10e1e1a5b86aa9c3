// SPDX-License-Identifier: BSD-3-Clause
// coda._C: the C++ ops for Python, on raw device pointers and the caller's CUDA stream (an int),
// with no torch headers, so one build serves any PyTorch. Outputs and workspaces are allocated by
// the caller (PyTorch's caching allocator); nothing here allocates device memory. Validation is
// the C++ API's own: coda::Error becomes ValueError with its message. The torch-facing layer
// (custom ops, fake kernels, autograd) is python/coda/ops.py.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <tuple>

#include "coda/gemm/config_names.hpp"
#include "coda/gemm/gemm.hpp"
#include "coda/ops/autotune.hpp"
#include "coda/ops/linear_bias_gelu.hpp"
#include "coda/ops/linear_cross_entropy.hpp"
#include "coda/ops/linear_norm.hpp"
#include "coda/ops/linear_rmsnorm_bwd.hpp"
#include "coda/ops/linear_rope.hpp"
#include "coda/ops/linear_swiglu.hpp"
#include "coda/ops/linear_swiglu_bwd.hpp"
#include "coda/ops/op_key.hpp"
#include "coda/ops/qknorm_rope_bwd.hpp"
#include "coda/ops/rope_bwd.hpp"
#include "coda/ops/weights.hpp"
#include "coda/status.hpp"
#include "tensor_caster.hpp"

namespace nb = nanobind;
using coda::TensorView;
using namespace coda::ops;

namespace {

cudaStream_t as_stream(std::uintptr_t s) { return reinterpret_cast<cudaStream_t>(s); }
void* as_ptr(std::uintptr_t p) { return reinterpret_cast<void*>(p); }

// A stats buffer as the Python side keeps it: a contiguous fp32 vector of norm_stats_floats(M, N)
// floats and the (tiles, padded) its producer wrote (linear_residual_rms_stats_layout, or {1, M}
// for rms_norm_stats). `width` > 0: a consumer of M × width rows — the buffer's length must be the
// one a producer of that width allocates (the tensor carries no width of its own; this catches a
// buffer from a producer of another tile count of columns).
RowNormStats stats_of(const char* op, const TensorView& buffer, int tiles, std::int64_t padded,
                      const TensorView& rows, int width = 0) {
  const coda::ArgCheck check(std::string("coda::ops::") + op);
  check.not_null(buffer, "stats");
  check.dtype_in(buffer, "stats", {coda::DType::kF32});
  check.rank_is(buffer, "stats", 1);
  if (buffer.stride[0] != 1) check.fail("stats: must be contiguous");
  RowNormStats s;
  s.partials = static_cast<float*>(buffer.data);
  s.capacity = buffer.numel();
  if (width > 0) {
    check.rank_is(rows, "the normalised input", 2);
    const std::int64_t need = norm_stats_floats(rows.shape[0], width);
    if (s.capacity != need)
      check.fail(
          "stats: " + std::to_string(s.capacity) +
          " floats, made for another shape than this op's M × K: norm_stats_floats(M, K) = " +
          std::to_string(need));
    s.layout = {tiles, padded};
    s.width = width;
  }
  return s;
}

// Fills `stats` as a producer; returns the layout it wrote (checked against the prediction on
// the Python side).
std::pair<int, std::int64_t> layout_of(const RowNormStats& s) {
  return {s.layout.tiles, s.layout.padded};
}

QkNorm qk_norm_of(const TensorView& q_weight, const TensorView& k_weight, int q_heads, int kv_heads,
                  float eps) {
  return QkNorm{q_weight, k_weight, q_heads, kv_heads, eps};
}

CrossEntropyOptions ce_options(std::int64_t ignore_index, int reduction, float z_loss,
                               float softcap) {
  if (reduction < 0 || reduction > 2)
    throw coda::Error("reduction: must be 0 (none), 1 (sum) or 2 (mean)");
  CrossEntropyOptions ce;
  ce.ignore_index = ignore_index;
  ce.reduction = static_cast<Reduction>(reduction);
  ce.z_loss = z_loss;
  ce.softcap = softcap;
  return ce;
}

OpKey op_key_named(const std::string& op) {
  const std::optional<OpKey> key = op_key_from_name(op);
  if (!key) throw coda::Error("op: '" + op + "' is not an op with a kernel choice (coda/ops/op_key.hpp)");
  return *key;
}

// A plain-GEMM kernel by name, for a benchmark that forces one (coda.ops.forced_gemm_kernel):
// config as coda::gemm::to_string names it ("coop_256x128_1x2"; "" for the table's choice),
// raster "along_m", "along_n" or "heuristic", swizzle 1, 2, 4 or 8 (checked by gemm()).
std::optional<coda::gemm::KernelChoice> gemm_choice_named(const std::string& config,
                                                          const std::string& raster, int swizzle) {
  if (config.empty()) return std::nullopt;
  const std::optional<coda::gemm::TileConfig> tile = coda::gemm::tile_config_named(config);
  if (!tile) {
    std::string configs;
    for (int c = 0; c < coda::gemm::kNumTileConfigs; ++c)
      configs += std::string(c ? ", " : "") + coda::gemm::to_string(coda::gemm::TileConfig(c));
    throw coda::Error("config: '" + config + "' is not a tile config (" + configs + ")");
  }
  const std::optional<coda::gemm::RasterOrder> order =
      coda::gemm::named(raster, coda::gemm::kRasterOrders);
  if (!order) throw coda::Error("raster: '" + raster + "' is not along_m, along_n or heuristic");
  return coda::gemm::KernelChoice{*tile, *order, swizzle};
}

const coda::gemm::KernelChoice& candidate_at(int i) {
  const auto& all = program_candidates();
  if (i < 0 || std::size_t(i) >= all.size())
    throw coda::Error("candidate: must be in [0, " + std::to_string(all.size()) + "); got " +
                      std::to_string(i));
  return all[std::size_t(i)];
}

}  // namespace

NB_MODULE(_C, m) {
  m.doc() = "CODA fused-epilogue GEMM ops on raw device pointers (see coda.ops for torch).";
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const coda::Error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  // --- the kernel autotuner (coda/ops/autotune.hpp) --------------------------------------------
  m.def("set_autotune", &set_autotune, nb::arg("on"));
  m.def("autotune_enabled", &autotune_enabled);
  m.def("autotune_cache_file", &autotune_cache_file);
  m.def("autotune_forget", &autotune_forget);
  // Tuning from the Python op benchmark (python -m coda.bench tune): the candidates, one forced
  // on an op for this thread (index into program_candidates; -1 clears), and the table row.
  m.def("program_candidates", [] {
    std::vector<std::tuple<std::string, std::string, int>> out;
    for (const coda::gemm::KernelChoice& c : program_candidates())
      out.emplace_back(coda::gemm::to_string(c.config), coda::gemm::to_string(c.raster), c.swizzle);
    return out;
  });
  // The indices of program_candidates() that `op`'s program is compiled for.
  m.def("op_candidates", [](const std::string& op) {
    const auto& all = program_candidates();
    std::vector<int> out;
    for (const coda::gemm::KernelChoice& c : op_candidates(op_key_named(op)))
      out.push_back(int(std::find(all.begin(), all.end(), c) - all.begin()));
    return out;
  }, nb::arg("op"));
  m.def("force_op_choice", [](const std::string& op, int candidate) {
    force_op_choice(op_key_named(op), candidate < 0 ? std::nullopt
                                                    : std::optional(candidate_at(candidate)));
  }, nb::arg("op"), nb::arg("candidate"));
  // The kernel an op last ran on this thread, as (config, raster, swizzle); None before its first
  // launch. The tuner names "today's" kernel with it.
  m.def("last_op_choice", [](const std::string& op)
            -> std::optional<std::tuple<std::string, std::string, int>> {
    const std::optional<coda::gemm::KernelChoice> c = last_op_choice(op_key_named(op));
    if (!c) return std::nullopt;
    return std::make_tuple(coda::gemm::to_string(c->config), coda::gemm::to_string(c->raster),
                           c->swizzle);
  }, nb::arg("op"));
  m.def("op_table_row", [](const std::string& op, std::int64_t mm, std::int64_t n, std::int64_t k,
                           int candidate) {
    return op_table_row(op_key_named(op), mm, n, k, candidate_at(candidate));
  });

  // --- sizes and layouts (host only) ---------------------------------------------------------
  m.def("norm_stats_floats", &norm_stats_floats, nb::arg("m"), nb::arg("n"));
  m.def("norm_stats_tiling", [] {  // norm_stats_floats(m, n) = ceil(n / tile) · round_up(m, multiple)
    const coda::epilogue::AnyConfigTiling t = coda::epilogue::per_row_partial_tiling_any_config();
    return std::make_pair(t.tile, t.multiple);
  });
  m.def("linear_residual_rms_stats_layout", [](std::int64_t mm, std::int64_t n, std::int64_t k) {
    const auto l = linear_residual_rms_stats_layout(mm, n, k);
    return std::make_pair(l.tiles, l.padded);
  });
  m.def("linear_swiglu_bwd_workspace_bytes", &linear_swiglu_bwd_workspace_bytes);
  m.def("linear_rmsnorm_bwd_workspace_bytes", &linear_rmsnorm_bwd_workspace_bytes);
  m.def("linear_bias_gelu_bwd_workspace_bytes", &linear_bias_gelu_bwd_workspace_bytes);
  m.def("qknorm_rope_bwd_workspace_bytes", &qknorm_rope_bwd_workspace_bytes);
  m.def("linear_cross_entropy_workspace_bytes", &linear_cross_entropy_workspace_bytes);
  m.def("linear_cross_entropy_fwd_bwd_workspace_bytes",
        &linear_cross_entropy_fwd_bwd_workspace_bytes);
  m.def("gate_up_interleave_rows", &gate_up_interleave_rows);
  m.def("rope_interleave_rows", &rope_interleave_rows);
  m.def("rope_frequencies",
        [](int q_heads, int kv_heads, int head_dim, double theta, double factor,
           double low_freq_factor, double high_freq_factor, double original_max_position) {
          return rope_frequencies(
              q_heads, kv_heads, head_dim, theta,
              RopeScaling{factor, low_freq_factor, high_freq_factor, original_max_position});
        });

  // --- the plain GEMM (coda/gemm/gemm.hpp): D = A·Wᵀ with no epilogue, the fused ops' yardstick --
  // config/raster/swizzle: a kernel forced by name (gemm_choice_named); config "" is the table's.
  m.def(
      "gemm_workspace_bytes",
      [](const TensorView& D, const TensorView& A, const TensorView& W, const std::string& config,
         const std::string& raster, int swizzle) {
        coda::gemm::GemmOptions options;
        options.choice = gemm_choice_named(config, raster, swizzle);
        return coda::gemm::workspace_bytes(D, A, W, options);
      },
      nb::arg("D"), nb::arg("A"), nb::arg("W"), nb::arg("config") = "",
      nb::arg("raster") = "heuristic", nb::arg("swizzle") = 1);
  m.def(
      "gemm",
      [](const TensorView& D, const TensorView& A, const TensorView& W, std::uintptr_t workspace,
         std::size_t workspace_bytes, std::uintptr_t stream, const std::string& config,
         const std::string& raster, int swizzle) {
        coda::gemm::GemmOptions options;
        options.choice = gemm_choice_named(config, raster, swizzle);
        options.workspace = reinterpret_cast<void*>(workspace);
        options.workspace_bytes = workspace_bytes;
        coda::gemm::gemm(D, A, W, options, as_stream(stream));
      },
      nb::arg("D"), nb::arg("A"), nb::arg("W"), nb::arg("workspace"), nb::arg("workspace_bytes"),
      nb::arg("stream"), nb::arg("config") = "", nb::arg("raster") = "heuristic",
      nb::arg("swizzle") = 1);

  // --- forward ops ---------------------------------------------------------------------------
  m.def("rms_norm_stats", [](const TensorView& H, const TensorView& stats, const TensorView& X,
                             const TensorView& w, std::uintptr_t stream) {
    RowNormStats s = stats_of("rms_norm_stats", stats, 0, 0, X);
    rms_norm_stats(H, s, X, w, as_stream(stream));
    return layout_of(s);
  });
  m.def("linear_residual_rms",
        [](const TensorView& X, const TensorView& H, const TensorView& stats, const TensorView& A,
           const TensorView& W, const TensorView& R, const TensorView& w, std::uintptr_t stream) {
          RowNormStats s = stats_of("linear_residual_rms", stats, 0, 0, A);
          linear_residual_rms(X, H, s, A, W, R, w, as_stream(stream));
          return layout_of(s);
        });
  m.def("linear_rmsnorm", [](const TensorView& D, const TensorView& H, const TensorView& W,
                             const TensorView& stats, int tiles, std::int64_t padded, float eps,
                             std::uintptr_t stream) {
    linear_rmsnorm(D, H, W, stats_of("linear_rmsnorm", stats, tiles, padded, H, int(H.shape[1])),
                   eps, as_stream(stream));
  });
  m.def("linear_swiglu",
        [](const TensorView& Z, const TensorView& Y, const TensorView& A, const TensorView& W,
           std::uintptr_t stream) { linear_swiglu(Z, Y, A, W, as_stream(stream)); });
  m.def("linear_rmsnorm_swiglu", [](const TensorView& Z, const TensorView& Y, const TensorView& H,
                                    const TensorView& W, const TensorView& stats, int tiles,
                                    std::int64_t padded, float eps, std::uintptr_t stream) {
    linear_rmsnorm_swiglu(
        Z, Y, H, W, stats_of("linear_rmsnorm_swiglu", stats, tiles, padded, H, int(H.shape[1])),
        eps, as_stream(stream));
  });
  m.def("linear_bias_gelu", [](const TensorView& Y, const TensorView& Pre, const TensorView& X,
                               const TensorView& W, const TensorView& bias, std::uintptr_t stream) {
    linear_bias_gelu(Y, Pre, X, W, bias, as_stream(stream));
  });
  m.def("linear_rope",
        [](const TensorView& QKV, const TensorView& A, const TensorView& W,
           const TensorView& positions, const TensorView& freqs,
           std::uintptr_t stream) { linear_rope(QKV, A, W, positions, freqs, as_stream(stream)); });
  m.def("linear_rmsnorm_rope", [](const TensorView& QKV, const TensorView& H, const TensorView& W,
                                  const TensorView& stats, int tiles, std::int64_t padded,
                                  float eps, const TensorView& positions, const TensorView& freqs,
                                  std::uintptr_t stream) {
    linear_rmsnorm_rope(QKV, H, W,
                        stats_of("linear_rmsnorm_rope", stats, tiles, padded, H, int(H.shape[1])),
                        eps, positions, freqs, as_stream(stream));
  });
  m.def("linear_qknorm_rope",
        [](const TensorView& QKV, const TensorView& Pre, const TensorView& A, const TensorView& W,
           const TensorView& positions, const TensorView& freqs, const TensorView& q_weight,
           const TensorView& k_weight, int q_heads, int kv_heads, float qk_eps,
           std::uintptr_t stream) {
          linear_qknorm_rope(QKV, Pre, A, W, positions, freqs,
                             qk_norm_of(q_weight, k_weight, q_heads, kv_heads, qk_eps),
                             as_stream(stream));
        });
  m.def("linear_rmsnorm_qknorm_rope",
        [](const TensorView& QKV, const TensorView& Pre, const TensorView& H, const TensorView& W,
           const TensorView& stats, int tiles, std::int64_t padded, float eps,
           const TensorView& positions, const TensorView& freqs, const TensorView& q_weight,
           const TensorView& k_weight, int q_heads, int kv_heads, float qk_eps,
           std::uintptr_t stream) {
          linear_rmsnorm_qknorm_rope(
              QKV, Pre, H, W,
              stats_of("linear_rmsnorm_qknorm_rope", stats, tiles, padded, H, int(H.shape[1])), eps,
              positions, freqs, qk_norm_of(q_weight, k_weight, q_heads, kv_heads, qk_eps),
              as_stream(stream));
        });
  m.def("linear_cross_entropy",
        [](const TensorView& loss, const TensorView& lse, const TensorView& X, const TensorView& W,
           const TensorView& targets, std::int64_t ignore_index, int reduction, float z_loss,
           float softcap, std::uintptr_t workspace, std::size_t workspace_bytes,
           std::uintptr_t stream) {
          linear_cross_entropy(loss, lse, X, W, targets,
                               ce_options(ignore_index, reduction, z_loss, softcap),
                               as_ptr(workspace), workspace_bytes, as_stream(stream));
        });

  // --- backward ops --------------------------------------------------------------------------
  m.def("linear_cross_entropy_fwd_bwd",
        [](const TensorView& loss, const TensorView& lse, const TensorView& dX,
           const TensorView& dW, bool accumulate_dW, const TensorView& zdz, const TensorView& alpha,
           const TensorView& X, const TensorView& W, const TensorView& targets,
           std::int64_t ignore_index, int reduction, float z_loss, float softcap,
           std::uintptr_t workspace, std::size_t workspace_bytes, std::uintptr_t stream) {
          linear_cross_entropy_fwd_bwd(
              loss, lse, CrossEntropyGrads{dX, dW, accumulate_dW, zdz, alpha}, X, W, targets,
              ce_options(ignore_index, reduction, z_loss, softcap), as_ptr(workspace),
              workspace_bytes, as_stream(stream));
        });
  m.def("linear_swiglu_bwd",
        [](const TensorView& dZ, const TensorView& Y, const TensorView& zdz, const TensorView& dOut,
           const TensorView& W_down, const TensorView& Z, std::uintptr_t workspace,
           std::size_t workspace_bytes, std::uintptr_t stream) {
          linear_swiglu_bwd(dZ, Y, zdz, dOut, W_down, Z, as_ptr(workspace), workspace_bytes,
                            as_stream(stream));
        });
  m.def("linear_bias_gelu_bwd",
        [](const TensorView& dPre, const TensorView& dbias, const TensorView& dOut,
           const TensorView& W_down, const TensorView& Pre, std::uintptr_t workspace,
           std::size_t workspace_bytes, std::uintptr_t stream) {
          linear_bias_gelu_bwd(dPre, dbias, dOut, W_down, Pre, as_ptr(workspace), workspace_bytes,
                               as_stream(stream));
        });
  m.def("linear_rmsnorm_bwd",
        [](const TensorView& dX, bool accumulate, const TensorView& N, const TensorView& dw,
           const TensorView& dZ, const TensorView& W, const TensorView& X, const TensorView& stats,
           int tiles, std::int64_t padded, const TensorView& norm_weight, float eps,
           const TensorView& zdz, std::uintptr_t workspace, std::size_t workspace_bytes,
           std::uintptr_t stream) {
          const RmsNormSaved saved{
              X, stats_of("linear_rmsnorm_bwd", stats, tiles, padded, X, int(X.shape[1])),
              norm_weight, eps};
          linear_rmsnorm_bwd(dX, accumulate, N, dw, dZ, W, saved, zdz, as_ptr(workspace),
                             workspace_bytes, TensorView{}, as_stream(stream));
        });
  // dQKV as attention's dQ, dK, dV (dK, dV empty: dQ is the whole [M, N]).
  m.def("rope_bwd", [](const TensorView& dZ, const TensorView& zdz, const TensorView& QKV,
                       const TensorView& dQ, const TensorView& dK, const TensorView& dV,
                       const TensorView& positions, const TensorView& freqs, std::uintptr_t stream) {
    rope_bwd(dZ, zdz, QKV, QkvGrad{dQ, dK, dV}, positions, freqs, as_stream(stream));
  });
  m.def("qknorm_rope_bwd",
        [](const TensorView& dPre, const TensorView& zdz, const TensorView& dq_weight,
           const TensorView& dk_weight, const TensorView& Pre, const TensorView& dQ,
           const TensorView& dK, const TensorView& dV, const TensorView& positions,
           const TensorView& freqs, const TensorView& q_weight,
           const TensorView& k_weight, int q_heads, int kv_heads, float qk_eps,
           std::uintptr_t workspace, std::size_t workspace_bytes, std::uintptr_t stream) {
          qknorm_rope_bwd(dPre, zdz, QkNormGrads{dq_weight, dk_weight, false}, Pre,
                          QkvGrad{dQ, dK, dV}, positions,
                          freqs, qk_norm_of(q_weight, k_weight, q_heads, kv_heads, qk_eps),
                          as_ptr(workspace), workspace_bytes, as_stream(stream));
        });
}
