// SPDX-License-Identifier: BSD-3-Clause
// RoPE frequencies as the epilogue takes them (host and device): per column pair, the frequency
// in turns (cycles per position) split into an fp32 hi/lo pair, f = hi + lo to ~2^-48 relative.
#pragma once

namespace coda::epilogue {

struct alignas(8) RopeFrequency {
  float hi = 0.0f;
  float lo = 0.0f;
};

// The pair for a frequency given in turns (radians per position / 2π), computed in double.
inline RopeFrequency rope_frequency(double turns) {
  float hi = static_cast<float>(turns);
  return {hi, static_cast<float>(turns - static_cast<double>(hi))};
}

}  // namespace coda::epilogue
