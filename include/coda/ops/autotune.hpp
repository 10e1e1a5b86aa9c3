// SPDX-License-Identifier: BSD-3-Clause
// The built-in autotuner of the fused ops' kernel choice. Opt-in: CODA_TUNE=1 in the environment,
// or set_autotune(true). Host-visible.
//
// With it on, the first call of a fused op at a (device, op, N, K, M bucket) that this machine has
// not timed runs every kernel candidate (program_candidates) on that call's own arguments, a few
// interleaved rounds, keeps the fastest, then runs it for the call's result. The winner is kept in
// memory and in a JSON file per device (autotune_cache_file), reused by later processes on the
// same device name, SM count, driver and library build. What it never does:
//   - tune during CUDA-graph capture (the capturing call gets a known winner or the rule);
//   - tune a call with options.choice set (that choice runs);
//   - trust a cache file that does not parse, belongs to another device, driver or build, or names
//     a kernel that does not exist: it is ignored with one warning on stderr;
//   - fail a call because tuning failed: the rule runs, with one warning.
// An op whose output is also an input (linear_rmsnorm_bwd with accumulate) gets that output
// saved before and restored after the timed runs; with no memory for the copy it is not tuned.
// One tuning runs at a time in a process; a second thread needing one meanwhile runs the rule.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coda/gemm/config.hpp"
#include "coda/ops/op_key.hpp"

namespace coda::ops {

// On or off for the whole process; before the first call, CODA_TUNE decides ("1": on).
void set_autotune(bool on);
bool autotune_enabled();

// The kernels the fused ops can run: each config the programs are compiled for
// (epilogue::kProgramConfigs) × raster along M or N × swizzle 1, 2, 4, 8; the indices the Python
// tuner forces. op_candidates(op): those `op`'s program is compiled for (the QK-norm ops lack the
// 192-column tile), what the autotuner and `coda-bench tune-ops` time.
const std::vector<gemm::KernelChoice>& program_candidates();
std::vector<gemm::KernelChoice> op_candidates(OpKey op);

// The M rows a winner is tuned for and reused at: M rounded up to a power of two (at least 128).
// A packed batch whose M changes every step thus tunes a handful of buckets, not every M.
std::int64_t autotune_m_bucket(std::int64_t m);

// The cache file of the current device: $CODA_TUNE_CACHE/, else $XDG_CACHE_HOME/coda/, else
// $HOME/.cache/coda/, then autotune-<device>-<SMs>sm.json.
std::string autotune_cache_file();

// Forgets every winner held in memory (the next use reloads the file). For tests.
void autotune_forget();

// A kernel forced on one op, on the calling thread, for a benchmark that tunes from outside the
// op (`python -m coda.bench tune` times each candidate in the harness of record): while set, every
// call of `op` on this thread without options.choice runs `choice`, checked and used as if passed
// in options.choice (the table, the rule and the autotuner are bypassed). nullopt clears it.
// Thread-local: another thread's calls are unaffected.
void force_op_choice(OpKey op, std::optional<gemm::KernelChoice> choice);
std::optional<gemm::KernelChoice> forced_op_choice(OpKey op);

// The kernel `op` last ran on the calling thread (its table row, the rule, a forced or passed-in
// choice, or the autotuner's winner), for a benchmark that names what an op ran; nullopt before
// its first launch on this thread. Thread-local, like force_op_choice.
std::optional<gemm::KernelChoice> last_op_choice(OpKey op);

}  // namespace coda::ops
