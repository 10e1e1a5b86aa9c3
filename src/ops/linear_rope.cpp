// SPDX-License-Identifier: BSD-3-Clause
#include "coda/ops/linear_rope.hpp"

#include <string>

#include "coda/epilogue/program_launchers.hpp"
#include "op_checks.hpp"
#include "tuned_launch.hpp"

namespace coda::ops {

namespace {
using Shape = detail::LinearShape;
Shape check_rope(const ArgCheck& check, const TensorView& QKV, const TensorView& A,
                 const char* a_name, const TensorView& W, const TensorView& positions,
                 const TensorView& frequencies) {
  const Shape s = detail::require_linear(check, A, a_name, W, "W_qkv");
  if (s.n % 2 != 0)
    check.fail("W_qkv: needs an even number of rows (RoPE pairs); got " + std::to_string(s.n));
  detail::require_bf16_matrix(check, QKV, "QKV", s.m, s.n, A.device);
  detail::require_vector(check, positions, "positions", s.m, DType::kI32, A.device);
  detail::require_vector(check, frequencies, "frequencies", s.n, DType::kF32, A.device);
  return s;
}
// check_rope for an op that normalises H by a producer's statistics.
Shape check_rmsnorm_rope(const ArgCheck& check, const TensorView& QKV, const TensorView& H,
                         const TensorView& W, const RowNormStats& stats, float eps,
                         const TensorView& positions, const TensorView& frequencies) {
  const Shape s = check_rope(check, QKV, H, "H", W, positions, frequencies);
  detail::require_filled_stats(check, stats, s.m, s.k, "K (H's columns)");
  if (!(eps >= 0.0f)) check.fail("eps: must be non-negative");
  return s;
}
epilogue::RopeRotateParams rope_params(const TensorView& positions, const TensorView& frequencies) {
  return {static_cast<const std::int32_t*>(positions.data),
          static_cast<const epilogue::RopeFrequency*>(frequencies.data)};
}

// The key of a QK-norm op (kLinearQknormRope or kLinearRmsnormQknormRope): saving Pre is another
// program, with its own key.
OpKey qk_norm_key(OpKey op, bool save_pre) {
  if (!save_pre) return op;
  return op == OpKey::kLinearQknormRope ? OpKey::kLinearQknormRopeSavePre
                                        : OpKey::kLinearRmsnormQknormRopeSavePre;
}

epilogue::QkNormRopeParams qk_norm_params(const ArgCheck& check, const QkNorm& qk, std::int64_t n,
                                          int device, const TensorView& positions,
                                          const TensorView& frequencies) {
  const int hd = detail::require_qk_norm(check, qk, n, "W_qkv: rows", device);
  return {rope_params(positions, frequencies),
          qk.q_weight.data,
          qk.k_weight.data,
          qk.q_heads * hd,
          (qk.q_heads + qk.kv_heads) * hd,
          hd,
          qk.eps};
}

// What the two QK-norm ops check and decide alike: the norm's parameters, the optional Pre
// (bf16 M × N, saved where its data is set), the call's key (qk_norm_key) and its kernel.
struct QkNormCall {
  epilogue::QkNormRopeParams qk;
  bool save_pre;
  detail::TunedCall call;
  gemm::KernelChoice choice;
};
QkNormCall qk_norm_call(const ArgCheck& check, OpKey base_op, const Shape& s, const TensorView& Pre,
                        const QkNorm& qk_norm, int device, const TensorView& positions,
                        const TensorView& frequencies, const OpOptions& options) {
  QkNormCall q{qk_norm_params(check, qk_norm, s.n, device, positions, frequencies),
               Pre.data != nullptr, {}, {}};
  if (q.save_pre) detail::require_bf16_matrix(check, Pre, "Pre", s.m, s.n, device);
  q.call = detail::TunedCall{qk_norm_key(base_op, q.save_pre), s.m, s.n, s.k};
  q.choice = detail::program_choice(check, q.call, options);  // save-Pre: detail::fallback_of
  return q;
}
// The two QK-norm ops' memory: QKV and Pre written; the input, W_qkv, the producer's statistics
// (an empty view for the op without the deferred norm), the RoPE tables and γ read.
void require_qk_norm_memory(const ArgCheck& check, const TensorView& QKV, const TensorView& Pre,
                            const ArgCheck::Named& input, const TensorView& W_qkv,
                            const TensorView& stats_partials, const TensorView& positions,
                            const TensorView& frequencies, const QkNorm& qk_norm) {
  detail::require_memory(check, input.view.device, {{"QKV", QKV}, {"Pre", Pre}},
                         {input,
                          {"W_qkv", W_qkv},
                          {"stats.partials", stats_partials},
                          {"positions", positions},
                          {"frequencies", frequencies},
                          {"qk_norm.q_weight", qk_norm.q_weight},
                          {"qk_norm.k_weight", qk_norm.k_weight}});
}
}  // namespace

void linear_rope(const TensorView& QKV, const TensorView& A, const TensorView& W_qkv,
                 const TensorView& positions, const TensorView& frequencies, cudaStream_t stream,
                 const OpOptions& options) {
  const ArgCheck check("coda::ops::linear_rope");
  const Shape s = check_rope(check, QKV, A, "A", W_qkv, positions, frequencies);
  const detail::TunedCall call{OpKey::kLinearRope, s.m, s.n, s.k};
  const gemm::KernelChoice choice = detail::program_choice(check, call, options);
  detail::require_memory(
      check, A.device, {{"QKV", QKV}},
      {{"A", A}, {"W_qkv", W_qkv}, {"positions", positions}, {"frequencies", frequencies}});
  const epilogue::RopeRotateParams rope = rope_params(positions, frequencies);
  detail::launch_tuned(
      call, options, choice, stream,
      [&](const gemm::KernelChoice& c) { epilogue::rope_rotate(QKV, A, W_qkv, rope, c, stream); });
}

void linear_rmsnorm_rope(const TensorView& QKV, const TensorView& H, const TensorView& W_qkv,
                         const RowNormStats& stats, float eps, const TensorView& positions,
                         const TensorView& frequencies, cudaStream_t stream,
                         const OpOptions& options) {
  const ArgCheck check("coda::ops::linear_rmsnorm_rope");
  const Shape s = check_rmsnorm_rope(check, QKV, H, W_qkv, stats, eps, positions, frequencies);
  const detail::TunedCall call{OpKey::kLinearRmsnormRope, s.m, s.n, s.k};
  const gemm::KernelChoice choice = detail::program_choice(check, call, options);
  detail::require_memory(check, H.device, {{"QKV", QKV}},
                         {{"H", H},
                          {"W_qkv", W_qkv},
                          {"stats.partials", detail::stats_read(stats)},
                          {"positions", positions},
                          {"frequencies", frequencies}});
  const epilogue::RstdRopeRotateParams params{{stats.sums(), eps},
                                              rope_params(positions, frequencies)};
  detail::launch_tuned(call, options, choice, stream,
                       [&](const gemm::KernelChoice& c) {
                         epilogue::rstd_rope_rotate(QKV, H, W_qkv, params, c, stream);
                       });
}

void linear_qknorm_rope(const TensorView& QKV, const TensorView& Pre, const TensorView& A,
                        const TensorView& W_qkv, const TensorView& positions,
                        const TensorView& frequencies, const QkNorm& qk_norm, cudaStream_t stream,
                        const OpOptions& options) {
  const ArgCheck check("coda::ops::linear_qknorm_rope");
  const Shape s = check_rope(check, QKV, A, "A", W_qkv, positions, frequencies);
  const QkNormCall q = qk_norm_call(check, OpKey::kLinearQknormRope, s, Pre, qk_norm, A.device,
                                    positions, frequencies, options);
  require_qk_norm_memory(check, QKV, Pre, {"A", A}, W_qkv, {}, positions, frequencies, qk_norm);
  detail::launch_tuned(q.call, options, q.choice, stream, [&](const gemm::KernelChoice& c) {
    if (q.save_pre)
      epilogue::qk_norm_rope_save_pre(QKV, A, W_qkv, {q.qk, Pre.data, Pre.stride[0]}, c, stream);
    else
      epilogue::qk_norm_rope(QKV, A, W_qkv, q.qk, c, stream);
  });
}

void linear_rmsnorm_qknorm_rope(const TensorView& QKV, const TensorView& Pre, const TensorView& H,
                                const TensorView& W_qkv, const RowNormStats& stats, float eps,
                                const TensorView& positions, const TensorView& frequencies,
                                const QkNorm& qk_norm, cudaStream_t stream,
                                const OpOptions& options) {
  const ArgCheck check("coda::ops::linear_rmsnorm_qknorm_rope");
  const Shape s = check_rmsnorm_rope(check, QKV, H, W_qkv, stats, eps, positions, frequencies);
  const epilogue::RstdRowScaleParams rstd{stats.sums(), eps};
  const QkNormCall q = qk_norm_call(check, OpKey::kLinearRmsnormQknormRope, s, Pre, qk_norm,
                                    H.device, positions, frequencies, options);
  require_qk_norm_memory(check, QKV, Pre, {"H", H}, W_qkv, detail::stats_read(stats), positions,
                         frequencies, qk_norm);
  detail::launch_tuned(q.call, options, q.choice, stream, [&](const gemm::KernelChoice& c) {
    if (q.save_pre)
      epilogue::rstd_qk_norm_rope_save_pre(QKV, H, W_qkv, {rstd, {q.qk, Pre.data, Pre.stride[0]}},
                                           c, stream);
    else
      epilogue::rstd_qk_norm_rope(QKV, H, W_qkv, {rstd, q.qk}, c, stream);
  });
}

}  // namespace coda::ops
