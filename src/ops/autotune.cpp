// SPDX-License-Identifier: BSD-3-Clause
// The autotuner (coda/ops/autotune.hpp): per-device winners in memory and in a JSON file, and the
// timing of the candidates on the op's own arguments.
#include "coda/ops/autotune.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "autotune_file.hpp"
#include "coda/device_check.hpp"
#include "coda/epilogue/program_launchers.hpp"
#include "coda/status.hpp"
#include "tuned_launch.hpp"

#ifndef CODA_LIBRARY_VERSION
#define CODA_LIBRARY_VERSION "unknown"
#endif

namespace coda::ops {

namespace {

using detail::TuneFile;
using detail::TuneIdentity;
using detail::TuneKey;
using detail::TuneWinner;

// -1: not decided yet (CODA_TUNE is read on first use), else 0 or 1.
std::atomic<int> g_enabled{-1};

// Everything below is guarded by g_mutex; a tuning itself runs under g_tuning (one at a time).
std::mutex g_mutex;
std::mutex g_tuning;

struct DeviceTuning {
  TuneIdentity identity;
  std::string path;  // empty: no cache directory, winners stay in memory
  std::map<TuneKey, TuneWinner> winners;
  std::set<TuneKey> failed;  // tuned once without a result: the rule, no second try
};
std::map<int, DeviceTuning> g_devices;  // by device ordinal
std::set<std::string> g_warned;

void warn_once(const std::string& message) {
  if (g_warned.insert(message).second) std::fprintf(stderr, "coda: autotune: %s\n", message.c_str());
}

std::string cache_directory() {
  if (const char* d = std::getenv("CODA_TUNE_CACHE"); d != nullptr && *d != '\0') return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0')
    return std::string(x) + "/coda";
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0')
    return std::string(h) + "/.cache/coda";
  return "";
}

std::string file_name(const TuneIdentity& id) {
  std::string slug;
  for (char c : id.device) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      slug += char(std::tolower(static_cast<unsigned char>(c)));
    else if (!slug.empty() && slug.back() != '-')
      slug += '-';
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return "autotune-" + slug + "-" + std::to_string(id.sm_count) + "sm.json";
}

// The winners of `path` if it exists and is trusted; one warning when it exists and is not.
std::map<TuneKey, TuneWinner> read_winners(const std::string& path, const TuneIdentity& id) {
  std::ifstream in(path);
  if (!in) return {};
  std::stringstream text;
  text << in.rdbuf();
  std::string why;
  if (auto file = detail::parse_tune_file(text.str(), id, &why)) return file->winners;
  warn_once("ignoring " + path + ": " + why);
  return {};
}

// The state of `device`, its file read on first use. Under g_mutex.
DeviceTuning& tuning_of(int device) {
  auto [it, fresh] = g_devices.try_emplace(device);
  DeviceTuning& t = it->second;
  if (!fresh) return t;
  cudaDeviceProp prop{};
  int driver = 0;
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess ||
      cudaDriverGetVersion(&driver) != cudaSuccess) {
    cudaGetLastError();
    warn_once("cannot identify device " + std::to_string(device) + "; winners stay in memory");
    return t;
  }
  t.identity = {prop.name, prop.multiProcessorCount, driver, CODA_LIBRARY_VERSION};
  if (const std::string dir = cache_directory(); !dir.empty()) {
    t.path = dir + "/" + file_name(t.identity);
    t.winners = read_winners(t.path, t.identity);
  } else {
    warn_once("no cache directory ($CODA_TUNE_CACHE, $XDG_CACHE_HOME, $HOME unset); "
              "winners stay in memory");
  }
  return t;
}

// Writes the device's winners, with any another process added to the file meanwhile, through a
// temporary file and a rename (a reader never sees half a file). Under g_mutex.
void save(DeviceTuning& t) {
  if (t.path.empty()) return;
  for (auto& [key, w] : read_winners(t.path, t.identity)) t.winners.try_emplace(key, w);
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(t.path).parent_path(), ec);
  const std::string tmp = t.path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << detail::format_tune_file({t.identity, t.winners});
    if (!out) {
      warn_once("cannot write " + tmp + "; winners stay in memory");
      return;
    }
  }
  std::filesystem::rename(tmp, t.path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    warn_once("cannot write " + t.path + "; winners stay in memory");
  }
}

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw Error(std::string(what) + ": " + cudaGetErrorString(err));
  }
}

// A device copy of the output an op also reads (none when its data is null), put back on
// destruction (after the timed runs).
class SavedOutput {
 public:
  SavedOutput(const TensorView& view, cudaStream_t stream) : view_(view), stream_(stream) {
    if (view_.data == nullptr) return;
    check(cudaMalloc(&copy_, row_bytes() * std::size_t(view_.shape[0])),
          "no memory to save the output the op reads");
    copy(true);
  }
  ~SavedOutput() {
    if (copy_ == nullptr) return;
    try {
      copy(false);
      cudaStreamSynchronize(stream_);
    } catch (const Error&) {
    }
    cudaFree(copy_);
  }
  SavedOutput(const SavedOutput&) = delete;
  SavedOutput& operator=(const SavedOutput&) = delete;

 private:
  std::size_t row_bytes() const { return std::size_t(view_.shape[1]) * view_.element_bytes(); }
  void copy(bool save) {
    const std::size_t width = row_bytes(), pitch = std::size_t(view_.stride[0]) * view_.element_bytes();
    check(save ? cudaMemcpy2DAsync(copy_, width, view_.data, pitch, width, view_.shape[0],
                                   cudaMemcpyDeviceToDevice, stream_)
               : cudaMemcpy2DAsync(view_.data, pitch, copy_, width, width, view_.shape[0],
                                   cudaMemcpyDeviceToDevice, stream_),
          "saving the output the op reads");
  }
  TensorView view_;
  cudaStream_t stream_;
  void* copy_ = nullptr;
};

class EventPair {
 public:
  EventPair() {
    check(cudaEventCreate(&start_), "cudaEventCreate");
    if (cudaEventCreate(&stop_) != cudaSuccess) {
      cudaEventDestroy(start_);
      check(cudaErrorMemoryAllocation, "cudaEventCreate");
    }
  }
  ~EventPair() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  // Milliseconds per launch of `reps` back-to-back launches.
  double time(const detail::OpLaunch& launch, const gemm::KernelChoice& c, int reps,
              cudaStream_t stream) {
    check(cudaEventRecord(start_, stream), "cudaEventRecord");
    for (int r = 0; r < reps; ++r) launch(c);
    check(cudaEventRecord(stop_, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop_), "timing a candidate");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return double(ms) / reps;
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// The fastest candidate for the call. Each runs once to warm up (and to fail early), then
// kRounds interleaved rounds of `reps` back-to-back launches (about 2 ms a candidate), the order
// reversed every other round so that clock drift cancels; a candidate's score is its median
// round. The rule stays unless a candidate beats it by kMargin: it is a choice tuned with rotated
// operands (the op table) or a measured rule, and the tuner's own timing — the call's operands,
// repeated — is not free of noise. Throws coda::Error on any failure.
TuneWinner time_candidates(const detail::TunedCall& call, const gemm::KernelChoice& rule,
                           cudaStream_t stream, const detail::OpLaunch& launch) {
  constexpr int kRounds = 5;
  constexpr double kMargin = 0.97;
  std::vector<gemm::KernelChoice> candidates = {rule};
  for (const gemm::KernelChoice& c : op_candidates(call.op))
    if (!(c == rule) && (!call.keep_config || c.config == rule.config)) candidates.push_back(c);
  SavedOutput saved(call.read_output, stream);
  EventPair events;
  for (const gemm::KernelChoice& c : candidates) launch(c);
  check(cudaStreamSynchronize(stream), "warm-up launches");
  const double once = events.time(launch, rule, 1, stream);
  const int reps = std::clamp(int(2.0 / std::max(once, 1e-3)), 1, 16);
  const std::size_t n = candidates.size();
  std::vector<std::vector<double>> rounds(n);
  for (int round = 0; round < kRounds; ++round)
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t i = round % 2 == 0 ? j : n - 1 - j;
      rounds[i].push_back(events.time(launch, candidates[i], reps, stream));
    }
  std::vector<double> score(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::sort(rounds[i].begin(), rounds[i].end());
    score[i] = rounds[i][kRounds / 2];
  }
  std::size_t w = std::min_element(score.begin(), score.end()) - score.begin();
  if (score[w] > kMargin * score[0]) w = 0;
  return {candidates[w], score[w]};
}

}  // namespace

void set_autotune(bool on) { g_enabled.store(on ? 1 : 0); }

bool autotune_enabled() {
  int on = g_enabled.load(std::memory_order_relaxed);
  if (on < 0) {
    const char* env = std::getenv("CODA_TUNE");
    int expected = -1;
    g_enabled.compare_exchange_strong(expected, env != nullptr && std::string(env) == "1");
    on = g_enabled.load();
  }
  return on == 1;
}

const std::vector<gemm::KernelChoice>& program_candidates() {
  static const std::vector<gemm::KernelChoice> candidates = [] {
    std::vector<gemm::KernelChoice> v;
    for (gemm::TileConfig c : epilogue::kProgramConfigs)
      for (gemm::RasterOrder r : {gemm::RasterOrder::kAlongM, gemm::RasterOrder::kAlongN})
        for (int swizzle : {1, 2, 4, 8}) v.push_back({c, r, swizzle, gemm::Decomposition::kHeuristic});
    return v;
  }();
  return candidates;
}

std::vector<gemm::KernelChoice> op_candidates(OpKey op) {
  std::vector<gemm::KernelChoice> v;
  for (const gemm::KernelChoice& c : program_candidates())
    if (epilogue::has_program_instance(op, c.config)) v.push_back(c);
  return v;
}

namespace {
thread_local std::optional<gemm::KernelChoice> t_forced[std::size_t(OpKey::kCount)];
thread_local std::optional<gemm::KernelChoice> t_last[std::size_t(OpKey::kCount)];
}  // namespace

void force_op_choice(OpKey op, std::optional<gemm::KernelChoice> choice) {
  if (op >= OpKey::kCount) throw Error("force_op_choice: op is not an op key");
  t_forced[std::size_t(op)] = choice;
}

std::optional<gemm::KernelChoice> forced_op_choice(OpKey op) {
  return op < OpKey::kCount ? t_forced[std::size_t(op)] : std::nullopt;
}

std::optional<gemm::KernelChoice> last_op_choice(OpKey op) {
  return op < OpKey::kCount ? t_last[std::size_t(op)] : std::nullopt;
}

std::int64_t autotune_m_bucket(std::int64_t m) {
  std::int64_t bucket = 128;
  while (bucket < m) bucket *= 2;
  return bucket;
}

std::string autotune_cache_file() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  return tuning_of(device).path;
}

void autotune_forget() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_devices.clear();
  g_warned.clear();
}

namespace detail {

namespace {

// launch_tuned without the record of what ran.
gemm::KernelChoice run_tuned(const TunedCall& call, const OpOptions& options,
                             const gemm::KernelChoice& rule, cudaStream_t stream,
                             const OpLaunch& launch) {
  if (options.choice || forced_op_choice(call.op) || !autotune_enabled()) {
    launch(rule);
    return rule;
  }
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  const TuneKey key{name(call.op), call.n, call.k, autotune_m_bucket(call.m)};
  // A known winner; one that breaks keep_config (the rule's config changed since) is not one.
  auto known = [&]() -> std::optional<gemm::KernelChoice> {
    std::lock_guard<std::mutex> lock(g_mutex);
    DeviceTuning& t = tuning_of(device);
    if (t.failed.count(key)) return rule;
    const auto it = t.winners.find(key);
    if (it == t.winners.end() || (call.keep_config && it->second.choice.config != rule.config))
      return std::nullopt;
    return it->second.choice;
  };
  std::optional<gemm::KernelChoice> choice = known();
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (!choice && (cudaStreamIsCapturing(stream, &capture) != cudaSuccess ||
                  capture != cudaStreamCaptureStatusNone)) {
    cudaGetLastError();
    choice = rule;  // never time inside a capture
  }
  std::unique_lock<std::mutex> tuning(g_tuning, std::defer_lock);
  if (!choice && !tuning.try_lock()) choice = rule;  // another thread is timing: do not wait
  if (!choice) choice = known();                     // it may have just timed this key
  if (!choice) {
    std::optional<TuneWinner> winner;
    std::string failure;
    try {
      winner = time_candidates(call, rule, stream, launch);
    } catch (const Error& e) {
      failure = e.what();
    }
    std::lock_guard<std::mutex> lock(g_mutex);
    DeviceTuning& t = tuning_of(device);
    if (winner) {
      t.winners[key] = *winner;
      save(t);
      choice = winner->choice;
    } else {
      t.failed.insert(key);
      warn_once(std::string(name(call.op)) + " (N " + std::to_string(call.n) + ", K " +
                std::to_string(call.k) + ") not tuned, the rule runs: " + failure);
      choice = rule;
    }
  }
  launch(*choice);
  return *choice;
}

}  // namespace

gemm::KernelChoice launch_tuned(const TunedCall& call, const OpOptions& options,
                                const gemm::KernelChoice& rule, cudaStream_t stream,
                                const OpLaunch& launch) {
  const DeviceChecksDone checked;  // the op ran require_memory: validate once
  const gemm::KernelChoice ran = run_tuned(call, options, rule, stream, launch);
  if (call.op < OpKey::kCount) t_last[std::size_t(call.op)] = ran;
  return ran;
}

}  // namespace detail

}  // namespace coda::ops
