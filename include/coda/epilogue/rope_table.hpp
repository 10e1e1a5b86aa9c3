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

#if defined(__CUDACC__)
// sin and cos of 2π · position · f, range-reduced exactly for |position| < 2^24 (rope.hpp says
// how): the epilogue's RoPE nodes and the RoPE backward kernel share it.
__device__ __forceinline__ void rope_sincos(int position, RopeFrequency f, float& s, float& c) {
  float pos = float(position);
  float p = pos * f.hi;
  float e = fmaf(pos, f.hi, -p);
  float turns = (p - rintf(p)) + fmaf(pos, f.lo, e);
  __sincosf(6.283185307179586f * turns, &s, &c);
}
#endif

}  // namespace coda::epilogue
