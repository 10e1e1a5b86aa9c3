// SPDX-License-Identifier: BSD-3-Clause
// linear_cross_entropy: the loss-only LM-head GEMM (epilogue program CrossEntropyLoss, no D), then
// two small deterministic kernels: per row, merge the per-tile lse and finish the loss; then the
// sum/mean over rows in a fixed order.
#include "coda/ops/linear_cross_entropy.hpp"

#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "coda/device_check.hpp"
#include "coda/epilogue/lse_math.hpp"
#include "coda/epilogue/merge.hpp"
#include "coda/epilogue/program_launchers.hpp"
#include "coda/gemm/choose_config.hpp"
#include "coda/gemm/gemm.hpp"
#include "coda/status.hpp"
#include "op_checks.hpp"
#include "tuned_launch.hpp"

namespace coda::ops {

namespace {

constexpr const char* kWhere = "coda::ops::linear_cross_entropy";
constexpr int kReduceThreads = 1024;

std::int64_t round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }

// Workspace: [lse partials for any program config][target logits: M floats][valid: M floats].

// The shift log_softmax = logit − shift uses: lse, or NaN where lse is ±inf — the standard
// max-shifted log_softmax computes inf − inf there, so PyTorch's cross_entropy gives a NaN loss and
// gradient for a row with a +inf logit (or every logit −inf) while its logsumexp gives ±inf.
__device__ __forceinline__ float softmax_shift(float lse) { return isinf(lse) ? NAN : lse; }

// One thread per row: lse from the tile partials, then the row's loss (NaN for a target out of
// range; 0 and not counted for ignore_index). row_loss may alias target_logit (same index).
__global__ void finish_rows(const float* partials, int tiles, std::int64_t padded,
                            const float* target_logit, const void* targets, bool targets_int64,
                            std::int64_t ignore_index, int rows, int vocab, float z_loss,
                            float* lse_out, float* row_loss, float* valid) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= rows) return;
  float max = -INFINITY;  // max_nan: a NaN partial makes the row's lse NaN (lse_math.hpp)
  for (int t = 0; t < tiles; ++t) max = epilogue::max_nan(max, partials[t * padded + m]);
  float sum = 0.0f;
  if (isfinite(max))
    for (int t = 0; t < tiles; ++t) sum += expf(partials[t * padded + m] - max);
  const float lse = epilogue::lse_of(max, sum);
  lse_out[m] = lse;
  const std::int64_t target = targets_int64 ? static_cast<const std::int64_t*>(targets)[m]
                                            : static_cast<const std::int32_t*>(targets)[m];
  float loss = 0.0f, counted = 0.0f;
  if (target != ignore_index) {
    counted = 1.0f;
    loss = (target >= 0 && target < vocab)
               ? softmax_shift(lse) - target_logit[m] + z_loss * lse * lse
               : NAN;
  }
  row_loss[m] = loss;
  if (valid != nullptr) valid[m] = counted;
}

// One block: Σ row_loss and Σ valid in a fixed order; loss = sum, or sum / count for the mean.
__global__ void reduce_rows(const float* row_loss, const float* valid, int rows, bool mean,
                            float* loss) {
  __shared__ float sums[kReduceThreads], counts[kReduceThreads];
  float s = 0.0f, c = 0.0f;
  for (int m = threadIdx.x; m < rows; m += kReduceThreads) {
    s += row_loss[m];
    c += valid[m];
  }
  sums[threadIdx.x] = s;
  counts[threadIdx.x] = c;
  __syncthreads();
  for (int half = kReduceThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      sums[threadIdx.x] += sums[threadIdx.x + half];
      counts[threadIdx.x] += counts[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) loss[0] = mean ? sums[0] / counts[0] : sums[0];
}

void check_launch(const char* what, const char* where = kWhere) {
  const cudaError_t err = cudaGetLastError();
  require(err == cudaSuccess, where, std::string(what) + ": " + cudaGetErrorString(err));
}

// ce.validate_targets: the first row whose target is neither ignore_index nor in [0, vocab).
constexpr int kNoBadRow = 0x7F7F7F7F;  // a cudaMemsetAsync pattern above any row index
__global__ void first_bad_target(const void* targets, bool targets_int64, std::int64_t ignore_index,
                                 int rows, int vocab, int* first) {
  for (int m = blockIdx.x * blockDim.x + threadIdx.x; m < rows; m += gridDim.x * blockDim.x) {
    const std::int64_t t = targets_int64 ? static_cast<const std::int64_t*>(targets)[m]
                                         : static_cast<const std::int32_t*>(targets)[m];
    if (t != ignore_index && (t < 0 || t >= vocab)) atomicMin(first, m);
  }
}

// Throws, naming the first bad row and its target, when ce.validate_targets is set and a target
// is out of range; before anything of the op is launched. Uses 4 bytes of `scratch` and
// synchronizes the stream (so not during graph capture).
void validate_targets(const ArgCheck& check, const TensorView& targets, std::int64_t m,
                      std::int64_t v, const CrossEntropyOptions& ce, void* scratch,
                      cudaStream_t stream, const char* where) {
  if (!ce.validate_targets) return;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  require(cudaStreamIsCapturing(stream, &capture) == cudaSuccess, where, "cudaStreamIsCapturing");
  if (capture != cudaStreamCaptureStatusNone)
    check.fail("ce.validate_targets: it synchronizes the stream, so not during CUDA graph capture");
  const bool int64 = targets.dtype == DType::kI64;
  int* first = static_cast<int*>(scratch);
  int found = kNoBadRow;
  cudaError_t err = cudaMemsetAsync(first, 0x7F, sizeof(int), stream);
  if (err == cudaSuccess) {
    first_bad_target<<<unsigned(std::min<std::int64_t>((m + 255) / 256, 1024)), 256, 0, stream>>>(
        targets.data, int64, ce.ignore_index, int(m), int(v), first);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess)
    err = cudaMemcpyAsync(&found, first, sizeof(int), cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  require(err == cudaSuccess, where, std::string("target check: ") + cudaGetErrorString(err));
  if (found == kNoBadRow) return;
  std::int64_t value = 0;
  std::int32_t value32 = 0;
  const char* at = static_cast<const char*>(targets.data) + std::int64_t(found) * (int64 ? 8 : 4);
  err = int64 ? cudaMemcpy(&value, at, 8, cudaMemcpyDeviceToHost)
              : cudaMemcpy(&value32, at, 4, cudaMemcpyDeviceToHost);
  require(err == cudaSuccess, where, std::string("target check: ") + cudaGetErrorString(err));
  if (!int64) value = value32;
  check.fail("targets: row " + std::to_string(found) + " has target " + std::to_string(value) +
             ", neither ignore_index (" + std::to_string(ce.ignore_index) +
             ") nor in [0, V = " + std::to_string(v) + ")");
}

// One block: the number of targets that are not ignore_index (the mean's denominator), fixed order.
__global__ void count_targets(const void* targets, bool targets_int64, std::int64_t ignore_index,
                              int rows, float* count) {
  __shared__ float counts[kReduceThreads];
  float c = 0.0f;
  for (int m = threadIdx.x; m < rows; m += kReduceThreads) {
    const std::int64_t t = targets_int64 ? static_cast<const std::int64_t*>(targets)[m]
                                         : static_cast<const std::int32_t*>(targets)[m];
    c += t != ignore_index ? 1.0f : 0.0f;
  }
  counts[threadIdx.x] = c;
  __syncthreads();
  for (int half = kReduceThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) counts[threadIdx.x] += counts[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) count[0] = counts[0];
}

// The fwd+bwd op's per-row pass over a chunk of logits (in place): soft-cap, log Σ exp (online
// max/sum per thread, then a fixed-order block combine), the row's loss, then logits → dlogits and
// ⟨raw logit, dlogit⟩. Two reads and one write of the row, 16 bytes (8 logits) per thread and
// access; exponentials in base 2, one FFMA and one ex2 per logit (lse_math.hpp). The row's padding
// up to ld (a multiple of 8) takes no part and is written 0. Deterministic.
// The pass was bound by instructions, not bytes (1.2–1.4 ms a 4096-row chunk at V = 128256 on an
// H100 whether its second read came from DRAM or L2, thirtieth session): per logit it compared the
// column with the target in 64 bits, checked the row's end and carried the soft-cap and both
// exponential forms. So the loops now hold only the softmax: the soft-cap is a template argument,
// the exponential's form is chosen once a row, the row's end is checked on its last access only,
// and the one-hot is added by thread 0 after the pass (the target's raw logit read before it).
// One block per SM walks rows (row += gridDim.x), so the rows in flight (132 × 250 KB) fit in L2
// for the second read (on its own no faster than a block per row: the bound was instructions);
// kRowUnroll independent 16-byte loads per thread keep 64 KB a SM in flight, packed until used
// (512 threads × 8 loads: 77 registers, no spills).
constexpr int kRowThreads = 512;
constexpr int kRowVector = 8;  // bf16 per 16-byte access
constexpr int kRowUnroll = 8;
constexpr int kRowStride = kRowThreads * kRowVector;
struct RowArgs {
  const void* targets;  // chunk's first row
  bool targets_int64;
  std::int64_t ignore_index;
  float z_loss, softcap;
  const float* alpha;  // nullptr: 1; per row (none) or a scalar
  bool alpha_per_row;
  const float* count;  // mean: divide by it; nullptr otherwise
  float* lse;          // chunk's first row
  float* row_loss;     // chunk's first row
  float* valid;        // chunk's first row, or nullptr
  float* zdz;          // chunk's first row, or nullptr
};

// The soft-capped logit, the soft-cap's presence known at compile time: the per-logit loops carry
// no soft-cap code when it is off.
template <bool kSoftcap>
__device__ __forceinline__ float capped_if(float raw, float softcap) {
  return kSoftcap ? softcap * tanhf(raw / softcap) : raw;
}

// 8 logits (one 16-byte access) as floats.
__device__ __forceinline__ void to_floats(const uint4& raw, float (&v)[kRowVector]) {
  const auto* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
  for (int j = 0; j < kRowVector / 2; ++j) {
    const float2 f = __bfloat1622float2(pairs[j]);
    v[2 * j] = f.x;
    v[2 * j + 1] = f.y;
  }
}

// Calls f(n0, v) for each of this thread's 16-byte accesses of the row, v the 8 logits from column
// n0 as floats: kRowUnroll accesses kRowStride apart are loaded together and kept packed until
// used. An access that starts at or past `vocab` is not made (the row is padded to a multiple of
// 8, so one that starts before `vocab` is in the row); f may overwrite the access it is given.
template <class F>
__device__ __forceinline__ void for_each_access(const __nv_bfloat16* y, int vocab, F&& f) {
  for (int base = threadIdx.x * kRowVector; base < vocab; base += kRowUnroll * kRowStride) {
    uint4 packed[kRowUnroll];
#pragma unroll
    for (int u = 0; u < kRowUnroll; ++u)
      if (base + u * kRowStride < vocab)
        packed[u] = *reinterpret_cast<const uint4*>(y + base + u * kRowStride);
#pragma unroll
    for (int u = 0; u < kRowUnroll; ++u) {
      const int n0 = base + u * kRowStride;
      if (n0 >= vocab) break;
      float v[kRowVector];
      to_floats(packed[u], v);
      f(n0, v);
    }
  }
}

// The block's fixed-order sum of `value` (all threads take part; the result is valid in thread 0).
__device__ float block_sum(float* scratch, float value) {
  __syncthreads();  // scratch may still be read from the last use
  scratch[threadIdx.x] = value;
  __syncthreads();
  for (int half = kRowThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) scratch[threadIdx.x] += scratch[threadIdx.x + half];
    __syncthreads();
  }
  return scratch[0];
}

// What the second pass turns a logit into, before the target's one-hot (added by thread 0 once
// the pass is done): a · softmax · (1 + 2·z_loss·lse) · (1 − (y / softcap)²).
struct GradScale {
  float scale, p_scale, shift;  // shift: lse, or lse · log2 e for the fused exponential
  float softcap;
};
template <bool kSoftcap, bool kExact>
__device__ __forceinline__ float grad_of(float raw, const GradScale& s, float onehot) {
  const float v = capped_if<kSoftcap>(raw, s.softcap);
  const float p = kExact ? epilogue::exp_term_exact(v, s.shift) : epilogue::exp_term_fused(v, s.shift);
  float d = p * s.p_scale - onehot;
  if (kSoftcap) d *= 1.0f - (v / s.softcap) * (v / s.softcap);
  return s.scale * d;
}

// The second pass: logits → dlogits (no one-hot) in place; returns this thread's Σ raw · dlogit.
template <bool kSoftcap, bool kExact>
__device__ float write_grads(__nv_bfloat16* y, int vocab, const GradScale& s) {
  float dot = 0.0f;
  for_each_access(y, vocab, [&](int n0, float (&raw)[kRowVector]) {
    float g[kRowVector];
#pragma unroll
    for (int j = 0; j < kRowVector; ++j) g[j] = grad_of<kSoftcap, kExact>(raw[j], s, 0.0f);
    if (n0 + kRowVector > vocab) {  // the row's last access: its padding is written 0
#pragma unroll
      for (int j = 0; j < kRowVector; ++j) {
        g[j] = n0 + j < vocab ? g[j] : 0.0f;
        raw[j] = n0 + j < vocab ? raw[j] : 0.0f;  // scratch, maybe NaN: no part in the sum
      }
    }
#pragma unroll
    for (int j = 0; j < kRowVector; ++j) dot = fmaf(raw[j], g[j], dot);
    __align__(16) __nv_bfloat162 out[kRowVector / 2];
#pragma unroll
    for (int j = 0; j < kRowVector / 2; ++j) out[j] = __floats2bfloat162_rn(g[2 * j], g[2 * j + 1]);
    *reinterpret_cast<uint4*>(y + n0) = *reinterpret_cast<const uint4*>(out);
  });
  return dot;
}

template <bool kSoftcap>
__device__ void cross_entropy_row(__nv_bfloat16* logits, std::int64_t ld, int vocab,
                                  const RowArgs& a, int row, float* maxes, float* sums) {
  __nv_bfloat16* y = logits + row * ld;
  const std::int64_t target = a.targets_int64 ? static_cast<const std::int64_t*>(a.targets)[row]
                                              : static_cast<const std::int32_t*>(a.targets)[row];
  const bool target_in_row = target >= 0 && target < vocab;
  // Thread 0 keeps the target's raw logit for the loss and the one-hot (NaN for a target out of
  // [0, V): the loss is then NaN), read before the second pass overwrites it.
  const float target_raw =
      threadIdx.x == 0 && target_in_row ? __bfloat162float(y[target]) : NAN;
  // Running max (max_nan: a NaN logit makes the row NaN) and Σ exp(v − max) in base 2, fused or
  // exact form by the max's scale (lse_math.hpp).
  float max = -INFINITY, sum = 0.0f;
  for_each_access(y, vocab, [&](int n0, float (&v)[kRowVector]) {
#pragma unroll
    for (int j = 0; j < kRowVector; ++j) v[j] = capped_if<kSoftcap>(v[j], a.softcap);
    if (n0 + kRowVector > vocab) {  // the row's last access: its padding takes no part
#pragma unroll
      for (int j = 0; j < kRowVector; ++j) v[j] = n0 + j < vocab ? v[j] : -INFINITY;
    }
    float vmax = -INFINITY;
#pragma unroll
    for (int j = 0; j < kRowVector; ++j) vmax = epilogue::max_nan(vmax, v[j]);
    const float m = epilogue::max_nan(max, vmax);
    const bool exact = epilogue::needs_exact_shift(m);
    if (m != max) sum *= epilogue::rescale_factor(max, m, exact);  // NaN: m != max
    max = m;
    const float shift = epilogue::log2_shift(m);
#pragma unroll
    for (int j = 0; j < kRowVector; ++j)
      sum += exact ? epilogue::exp_term_exact(v[j], m) : epilogue::exp_term_fused(v[j], shift);
  });
  __syncthreads();  // the last row's readers of maxes and sums are done
  maxes[threadIdx.x] = max;
  sums[threadIdx.x] = sum;
  __syncthreads();
  for (int half = kRowThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      const float m1 = maxes[threadIdx.x], m2 = maxes[threadIdx.x + half];
      const float mx = epilogue::max_nan(m1, m2);
      sums[threadIdx.x] = (m1 == -INFINITY ? 0.0f : sums[threadIdx.x] * expf(m1 - mx)) +
                          (m2 == -INFINITY ? 0.0f : sums[threadIdx.x + half] * expf(m2 - mx));
      maxes[threadIdx.x] = mx;
    }
    __syncthreads();
  }
  const float lse = epilogue::lse_of(maxes[0], sums[0]), shift = softmax_shift(lse);
  const bool ignored = target == a.ignore_index;
  if (threadIdx.x == 0) {
    a.lse[row] = lse;
    a.row_loss[row] = ignored ? 0.0f
                              : shift - capped_if<kSoftcap>(target_raw, a.softcap) +
                                    a.z_loss * lse * lse;
    if (a.valid != nullptr) a.valid[row] = ignored ? 0.0f : 1.0f;
  }
  float scale = a.alpha == nullptr ? 1.0f : a.alpha[a.alpha_per_row ? row : 0];
  if (a.count != nullptr) scale /= a.count[0];
  if (ignored) scale = 0.0f;
  const bool exact = epilogue::needs_exact_shift(shift);
  const GradScale gs{scale, 1.0f + 2.0f * a.z_loss * lse, exact ? shift : shift * epilogue::kLog2e,
                     a.softcap};
  float dot = exact ? write_grads<kSoftcap, true>(y, vocab, gs)
                    : write_grads<kSoftcap, false>(y, vocab, gs);
  __syncthreads();  // the row's dlogits are written
  if (threadIdx.x == 0 && target_in_row) {
    // The one-hot: the target's dlogit again with it, and its share of ⟨raw, dlogit⟩ corrected.
    const float without = exact ? grad_of<kSoftcap, true>(target_raw, gs, 0.0f)
                                : grad_of<kSoftcap, false>(target_raw, gs, 0.0f);
    const float with = exact ? grad_of<kSoftcap, true>(target_raw, gs, 1.0f)
                             : grad_of<kSoftcap, false>(target_raw, gs, 1.0f);
    y[target] = __float2bfloat16_rn(with);
    dot = fmaf(target_raw, with - without, dot);
  }
  if (a.zdz == nullptr) return;
  const float zdz = block_sum(sums, dot);
  if (threadIdx.x == 0) a.zdz[row] = zdz;
}

template <bool kSoftcap>
__global__ void __launch_bounds__(kRowThreads, 1)
    cross_entropy_rows(__nv_bfloat16* logits, std::int64_t ld, int vocab, int rows, RowArgs a) {
  __shared__ float maxes[kRowThreads], sums[kRowThreads];
  for (int row = blockIdx.x; row < rows; row += gridDim.x)
    cross_entropy_row<kSoftcap>(logits, ld, vocab, a, row, maxes, sums);
}

// Rows per chunk of the fwd+bwd op: `asked`, or the fewest chunks of at most ~2 GiB of bf16
// logits, made equal (a multiple of 128, ≥ 128). Each chunk after the first reduce-adds the whole
// fp32 dW (2 · V·H·4 bytes of traffic, 5 GB at Qwen3-8B widths), so fewer chunks move less; equal
// ones leave no short last chunk whose GEMMs run a part-empty wave.
constexpr std::int64_t kChunkLogitsBytes = 2ll << 30;
std::int64_t chunk_rows(std::int64_t m, std::int64_t v, std::int64_t asked) {
  if (asked > 0) return std::min(asked, m);
  const std::int64_t most =
      std::max<std::int64_t>(128, kChunkLogitsBytes / (2 * round_up(v, 8)) / 128 * 128);
  const std::int64_t chunks = (m + most - 1) / most;
  return std::min(round_up((m + chunks - 1) / chunks, 128), m);
}

struct Shape {
  std::int64_t m, v, h;
};

// What the loss-only and the fwd+bwd ops both take.
Shape check_inputs(const ArgCheck& check, const TensorView& loss, const TensorView& lse,
                   const TensorView& X, const TensorView& W, const TensorView& targets,
                   const CrossEntropyOptions& ce) {
  check.not_null(X, "X");
  check.rank_is(X, "X", 2);
  check.not_null(W, "W");
  check.rank_is(W, "W", 2);
  const std::int64_t m = X.shape[0], v = W.shape[0], h = X.shape[1];
  detail::require_bf16_matrix(check, X, "X", m, h, X.device);
  detail::require_bf16_matrix(check, W, "W", v, h, X.device);
  check.not_null(targets, "targets");
  check.dtype_in(targets, "targets", {DType::kI32, DType::kI64});
  detail::require_vector(check, targets, "targets", m, targets.dtype, X.device);
  detail::require_vector(check, lse, "lse", m, DType::kF32, X.device);
  detail::require_vector(check, loss, "loss", ce.reduction == Reduction::kNone ? m : 1, DType::kF32,
                         X.device);
  if (!(ce.z_loss >= 0.0f) || !std::isfinite(ce.z_loss))
    check.fail("ce.z_loss: must be finite and non-negative");
  if (!(ce.softcap >= 0.0f) || !std::isfinite(ce.softcap))
    check.fail("ce.softcap: must be finite and non-negative (0: no soft-cap)");
  return {m, v, h};
}

}  // namespace

std::size_t linear_cross_entropy_workspace_bytes(std::int64_t m, std::int64_t v) {
  return static_cast<std::size_t>(epilogue::per_row_partial_floats_any_config(m, v) +
                                  2 * round_up(m, 4)) *
         sizeof(float);
}

void linear_cross_entropy(const TensorView& loss, const TensorView& lse, const TensorView& X,
                          const TensorView& W, const TensorView& targets,
                          const CrossEntropyOptions& ce, void* workspace,
                          std::size_t workspace_bytes, cudaStream_t stream,
                          const OpOptions& options) {
  const ArgCheck check(kWhere);
  const Shape sh = check_inputs(check, loss, lse, X, W, targets, ce);
  const std::int64_t m = sh.m, v = sh.v, h = sh.h;
  detail::require_workspace(check, workspace, workspace_bytes,
                            linear_cross_entropy_workspace_bytes(m, v),
                            "linear_cross_entropy_workspace_bytes(M, V)");

  const detail::TunedCall call{OpKey::kLinearCrossEntropy, m, v, h};
  const gemm::KernelChoice choice = detail::program_choice(check, call, options);
  float* partials = static_cast<float*>(workspace);
  float* target_logits = partials + epilogue::per_row_partial_floats_any_config(m, v);
  float* valid = target_logits + round_up(m, 4);

  epilogue::CrossEntropyLossParams p;
  p.lse_partials = partials;
  p.targets = targets.data;
  p.targets_int64 = targets.dtype == DType::kI64;
  p.ignore_index = ce.ignore_index;
  p.target_logits = target_logits;
  p.softcap = ce.softcap;
  detail::require_memory(
      check, X.device,
      {{"loss", loss},
       {"lse", lse},
       {"workspace",
        workspace_view(workspace, linear_cross_entropy_workspace_bytes(m, v), X.device)}},
      {{"X", X}, {"W", W}, {"targets", targets}});
  validate_targets(check, targets, m, v, ce, workspace, stream, kWhere);
  detail::launch_tuned(call, options, choice, stream,
                       [&](const gemm::KernelChoice& c) {
    const epilogue::PartialLayout layout =
        epilogue::per_row_partial_layout(c.config, static_cast<int>(m), static_cast<int>(v));
    epilogue::CrossEntropyLossParams pc = p;
    pc.lse_padded = layout.padded;
    epilogue::cross_entropy_loss_partials(X, W, pc, c, stream);

    const bool reduce = ce.reduction != Reduction::kNone;
    const int blocks = static_cast<int>((m + 255) / 256);
    finish_rows<<<blocks, 256, 0, stream>>>(
        partials, layout.tiles, layout.padded, target_logits, targets.data, p.targets_int64,
        ce.ignore_index, static_cast<int>(m), static_cast<int>(v), ce.z_loss,
        static_cast<float*>(lse.data), reduce ? target_logits : static_cast<float*>(loss.data),
        reduce ? valid : nullptr);
    check_launch("finish kernel launch");
    if (reduce) {
      reduce_rows<<<1, kReduceThreads, 0, stream>>>(target_logits, valid, static_cast<int>(m),
                                                    ce.reduction == Reduction::kMean,
                                                    static_cast<float*>(loss.data));
      check_launch("reduce kernel launch");
    }
  });
}

std::size_t linear_cross_entropy_fwd_bwd_workspace_bytes(std::int64_t m, std::int64_t v,
                                                         std::int64_t asked_rows) {
  const std::int64_t rows = chunk_rows(m, v, asked_rows);
  return static_cast<std::size_t>(rows * round_up(v, 8) * 2 +     // the chunk's logits, bf16
                                  (2 * round_up(m, 4) + 4) * 4);  // row losses, valid, count
}

void linear_cross_entropy_fwd_bwd(const TensorView& loss, const TensorView& lse,
                                  const CrossEntropyGrads& grads, const TensorView& X,
                                  const TensorView& W, const TensorView& targets,
                                  const CrossEntropyOptions& ce, void* workspace,
                                  std::size_t workspace_bytes, cudaStream_t stream,
                                  const OpOptions& options) {
  constexpr const char* kFwdBwd = "coda::ops::linear_cross_entropy_fwd_bwd";
  const ArgCheck check(kFwdBwd);
  const Shape sh = check_inputs(check, loss, lse, X, W, targets, ce);
  const std::int64_t m = sh.m, v = sh.v, h = sh.h;
  detail::require_bf16_matrix(check, grads.dX, "grads.dX", m, h, X.device);
  detail::require_matrix(check, grads.dW, "grads.dW", v, h, DType::kF32, X.device);
  if (grads.dW.stride[0] != h) check.fail("grads.dW: rows must be contiguous (stride H)");
  if (grads.zdz.data != nullptr)
    detail::require_vector(check, grads.zdz, "grads.zdz", m, DType::kF32, X.device);
  const bool per_row_alpha = ce.reduction == Reduction::kNone;
  if (grads.alpha.data != nullptr)
    detail::require_vector(check, grads.alpha, "grads.alpha", per_row_alpha ? m : 1, DType::kF32,
                           X.device);
  if (ce.chunk_rows < 0 || ce.chunk_rows % 128 != 0)
    check.fail("ce.chunk_rows: must be 0 (automatic) or a positive multiple of 128; got " +
               std::to_string(ce.chunk_rows));
  detail::require_workspace(check, workspace, workspace_bytes,
                            linear_cross_entropy_fwd_bwd_workspace_bytes(m, v, ce.chunk_rows),
                            "linear_cross_entropy_fwd_bwd_workspace_bytes(M, V, ce.chunk_rows)");

  const std::int64_t rows = chunk_rows(m, v, ce.chunk_rows), ld = round_up(v, 8);
  // Data-parallel kernels: no stream-K workspace to share between the chunk's GEMMs.
  auto data_parallel = [&](gemm::OperandLayout layout, std::int64_t gm, std::int64_t gn,
                           std::int64_t gk) {
    gemm::GemmOptions o;
    gemm::KernelChoice c =
        options.choice ? *options.choice
                       : gemm::choose_data_parallel_kernel(layout, DType::kBF16, int(gm), int(gn),
                                                           int(gk));
    if (gemm::is_stream_k(c.config))
      c = {gemm::TileConfig::kCoop128x256Cluster2x1, c.raster, c.swizzle};
    o.choice = c;
    return o;
  };
  auto* logits = static_cast<__nv_bfloat16*>(workspace);
  float* row_losses = reinterpret_cast<float*>(logits + rows * ld);
  float* valid = row_losses + round_up(m, 4);
  float* count = valid + round_up(m, 4);
  const bool reduce = ce.reduction != Reduction::kNone;
  const bool int64_targets = targets.dtype == DType::kI64;
  const std::size_t target_bytes = int64_targets ? 8 : 4;
  const TensorView w_n_major = detail::dgrad_b(W);
  auto row_view = [](const TensorView& t, std::int64_t r0, std::int64_t n) {
    return TensorView::matrix(static_cast<char*>(t.data) + r0 * t.stride[0] * 2, t.dtype, n,
                              t.shape[1], t.stride[0], t.device);
  };
  // dW += dlogitsᵀ · X_c: dlogits and X_c as the wgrad GEMM's M- and N-major operands.
  auto dlogits_t = [&](const TensorView& chunk) {
    return TensorView::matrix_col_major(chunk.data, DType::kBF16, v, chunk.shape[0], ld, X.device);
  };
  auto x_t = [&](const TensorView& x_rows) {
    return TensorView::matrix_col_major(x_rows.data, DType::kBF16, h, x_rows.shape[0], X.stride[0],
                                        X.device);
  };
  const gemm::KernelChoice wgrad{gemm::TileConfig::kCoop128x256Cluster2x1};
  gemm::GemmOptions wgrad_store;
  wgrad_store.choice = wgrad;
  // The chunk GEMMs' kernels (options.choice among them) are checked here, host-only: a bad
  // choice must fail before the first launch, not after the first chunk.
  const std::int64_t mc0 = std::min(rows, m);
  const TensorView logits0 = TensorView::matrix(workspace, DType::kBF16, mc0, v, ld, X.device);
  try {
    gemm::workspace_bytes(logits0, row_view(X, 0, mc0), W,
                          data_parallel(gemm::OperandLayout::kAkBk, mc0, v, h));
    gemm::workspace_bytes(row_view(grads.dX, 0, mc0), logits0, w_n_major,
                          data_parallel(gemm::OperandLayout::kAkBn, mc0, h, v));
    gemm::workspace_bytes(grads.dW, dlogits_t(logits0), x_t(row_view(X, 0, mc0)), wgrad_store);
  } catch (const Error& e) {
    check.fail(std::string("options.choice: for the chunk GEMMs, ") + e.what());
  }
  detail::require_memory(
      check, X.device,
      {{"loss", loss},
       {"lse", lse},
       {"grads.dX", grads.dX},
       {"grads.dW", grads.dW},
       {"grads.zdz", grads.zdz},
       {"workspace",
        workspace_view(workspace, linear_cross_entropy_fwd_bwd_workspace_bytes(m, v, ce.chunk_rows),
                       X.device)}},
      {{"X", X}, {"W", W}, {"targets", targets}, {"grads.alpha", grads.alpha}});
  const DeviceChecksDone checked;  // validate once: the chunk GEMMs skip their pointer queries
  validate_targets(check, targets, m, v, ce, workspace, stream, kFwdBwd);

  if (ce.reduction == Reduction::kMean) {
    count_targets<<<1, kReduceThreads, 0, stream>>>(targets.data, int64_targets, ce.ignore_index,
                                                    int(m), count);
    check_launch("count kernel launch", kFwdBwd);
  }
  int sms = 0;  // the row pass runs a block per SM
  const cudaError_t sm_err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, X.device);
  require(sm_err == cudaSuccess && sms > 0, kFwdBwd,
          std::string("SM count query: ") + cudaGetErrorString(sm_err));
  for (std::int64_t r0 = 0; r0 < m; r0 += rows) {
    const std::int64_t mc = std::min(rows, m - r0);
    const TensorView x_c = row_view(X, r0, mc);
    const TensorView logits_c = TensorView::matrix(logits, DType::kBF16, mc, v, ld, X.device);
    // 1. logits = X_c · Wᵀ (bf16, kept for the chunk).
    gemm::gemm(logits_c, x_c, W, data_parallel(gemm::OperandLayout::kAkBk, mc, v, h), stream);
    // 2. per row: lse, loss, then logits → dlogits in place and ⟨z, dz⟩.
    RowArgs a{
        static_cast<const char*>(targets.data) + r0 * target_bytes,
        int64_targets,
        ce.ignore_index,
        ce.z_loss,
        ce.softcap,
        static_cast<const float*>(grads.alpha.data) + (per_row_alpha && grads.alpha.data ? r0 : 0),
        per_row_alpha,
        ce.reduction == Reduction::kMean ? count : nullptr,
        static_cast<float*>(lse.data) + r0,
        reduce ? row_losses + r0 : static_cast<float*>(loss.data) + r0,
        reduce ? valid + r0 : nullptr,
        grads.zdz.data ? static_cast<float*>(grads.zdz.data) + r0 : nullptr};
    const unsigned blocks = unsigned(std::min<std::int64_t>(mc, sms));
    if (ce.softcap > 0.0f)
      cross_entropy_rows<true><<<blocks, kRowThreads, 0, stream>>>(logits, ld, int(v), int(mc), a);
    else
      cross_entropy_rows<false><<<blocks, kRowThreads, 0, stream>>>(logits, ld, int(v), int(mc), a);
    check_launch("row kernel launch", kFwdBwd);
    // 3. dX rows = dlogits · W.
    gemm::gemm(row_view(grads.dX, r0, mc), logits_c, w_n_major,
               data_parallel(gemm::OperandLayout::kAkBn, mc, h, v), stream);
    // 4. dW += dlogitsᵀ · X_c (fp32, TMA reduce-add; chunks in order: deterministic). Unless dW
    // accumulates, the first chunk stores it: no memset, and no read of the zeros it wrote
    // (2 × V·H·4 bytes less traffic, 4.2 GB at 8B widths).
    if (r0 == 0 && !grads.accumulate_dW)
      gemm::gemm(grads.dW, dlogits_t(logits_c), x_t(x_c), wgrad_store, stream);
    else
      epilogue::weight_grad_accumulate(grads.dW, dlogits_t(logits_c), x_t(x_c), {}, wgrad, stream);
  }
  if (reduce) {
    reduce_rows<<<1, kReduceThreads, 0, stream>>>(row_losses, valid, int(m),
                                                  ce.reduction == Reduction::kMean,
                                                  static_cast<float*>(loss.data));
    check_launch("reduce kernel launch", kFwdBwd);
  }
}

}  // namespace coda::ops
