// SPDX-License-Identifier: BSD-3-Clause
// Whether two tensor views share memory, and the entry points' aliasing check built on it.
#include <algorithm>
#include <string>

#include "coda/tensor.hpp"

namespace coda {

namespace {

// The bytes a view covers as `rows` runs of `width` bytes, `pitch` bytes apart. A view that is not
// a set of contiguous rows (no unit-stride mode, rows that overlap each other, rank > 2) becomes
// one run over its whole span: larger than its real footprint, never smaller.
struct Runs {
  std::int64_t begin = 0, rows = 0, width = 0, pitch = 0;
  std::int64_t end() const { return begin + (rows - 1) * pitch + width; }
};

std::int64_t round_up_16(std::int64_t bytes) { return (bytes + 15) / 16 * 16; }

// Division rounding towards −∞ (b > 0).
std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - (a % b != 0 && a < 0); }

// `written`: the view is an output, which the kernels store in whole 16-byte units (TMA), so each
// row's last unit counts in full.
Runs runs_of(const TensorView& t, bool written) {
  Runs r;
  if (t.data == nullptr || t.numel() <= 0) return r;  // rows = 0: covers nothing
  const auto e = static_cast<std::int64_t>(t.element_bytes());
  r.begin = static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(t.data));
  int modes[TensorView::kMaxRank], n = 0;
  for (int i = 0; i < t.rank; ++i)
    if (t.shape[i] > 1) modes[n++] = i;
  auto unit = [&](int i) { return t.stride[i] == 1; };
  if (n == 0) {
    r.rows = 1, r.width = e;
  } else if (n == 1) {
    const int i = modes[0];
    r.rows = unit(i) ? 1 : t.shape[i];
    r.width = unit(i) ? t.shape[i] * e : e;
    r.pitch = t.stride[i] * e;
  } else if (n == 2 && (unit(modes[0]) || unit(modes[1]))) {
    const int u = unit(modes[1]) ? modes[1] : modes[0], o = u == modes[0] ? modes[1] : modes[0];
    r.rows = t.shape[o], r.width = t.shape[u] * e, r.pitch = t.stride[o] * e;
  } else {
    r.rows = 0;  // the span below
  }
  if (written) r.width = round_up_16(r.width);
  if (r.rows == 0 || (r.rows > 1 && r.pitch < r.width)) {
    std::int64_t last = 0;
    for (int i = 0; i < t.rank; ++i) last += (t.shape[i] - 1) * t.stride[i];
    r.rows = 1, r.width = (last + 1) * e, r.pitch = 0;
    if (written) r.width = round_up_16(r.width);
  }
  return r;
}

bool runs_overlap(Runs a, Runs b) {
  if (a.rows == 0 || b.rows == 0) return false;
  if (a.end() <= b.begin || b.end() <= a.begin) return false;
  if (a.rows == 1 && b.rows == 1) return true;
  // A single run can take the other view's pitch; two different pitches: assume the worst.
  if (a.rows == 1) a.pitch = b.pitch;
  if (b.rows == 1) b.pitch = a.pitch;
  if (a.pitch != b.pitch) return true;
  // Row i of a and row j of b meet iff (j − i)·pitch lies strictly between d − b.width and
  // d + a.width (d = a.begin − b.begin); is there such a j − i within the rows both views have?
  const std::int64_t s = a.pitch, d = a.begin - b.begin;
  const std::int64_t lo = std::max(floor_div(d - b.width, s) + 1, -(a.rows - 1));
  const std::int64_t hi = std::min(-floor_div(-(d + a.width), s) - 1, b.rows - 1);
  return lo <= hi;
}

bool same_layout(const TensorView& a, const TensorView& b) {
  return a.data == b.data && a.dtype == b.dtype && a.rank == b.rank && a.shape == b.shape &&
         a.stride == b.stride;
}

}  // namespace

TensorView workspace_view(const void* data, std::size_t bytes, int device) {
  return TensorView::vector(data, DType::kF32, static_cast<std::int64_t>((bytes + 3) / 4), device);
}

bool views_overlap(const TensorView& a, const TensorView& b) {
  return runs_overlap(runs_of(a, false), runs_of(b, false));
}

void ArgCheck::outputs_disjoint(std::initializer_list<Named> outputs,
                                std::initializer_list<Named> inputs,
                                std::initializer_list<InPlace> in_place) const {
  auto allowed = [&](const char* out, const char* in) {
    for (const InPlace& p : in_place)
      if (std::string(p.output) == out && std::string(p.input) == in) return true;
    return false;
  };
  auto check_pair = [&](const Named& out, const Named& other, bool other_written) {
    if (!runs_overlap(runs_of(out.view, true), runs_of(other.view, other_written))) return;
    if (allowed(out.name, other.name)) {
      if (same_layout(out.view, other.view)) return;
      fail(std::string(out.name) + ": may be " + other.name +
           " itself (in place: same pointer, shape and strides) but must not overlap it "
           "otherwise; got " +
           describe_shape(out.view) + " and " + describe_shape(other.view));
    }
    fail(std::string(out.name) + ": overlaps " + other.name +
         " in memory (an output must not share memory with any other argument)");
  };
  for (auto out = outputs.begin(); out != outputs.end(); ++out) {
    for (auto other = out + 1; other != outputs.end(); ++other) check_pair(*out, *other, true);
    for (const Named& in : inputs) check_pair(*out, in, false);
  }
}

}  // namespace coda
