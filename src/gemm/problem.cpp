// SPDX-License-Identifier: BSD-3-Clause
// make_gemm_problem: every constraint of the fixed mainloop, checked on the host.
#include "coda/gemm/problem.hpp"

#include <string>
#include <utility>

namespace coda::gemm {
namespace {

// How an operand [outer, inner] can be read by TMA: with mode `inner` contiguous ("inner-major",
// i.e. K-major for A and B) or mode `outer` contiguous. A mode of extent 1 is never stepped, so its
// stride does not matter; it is normalised to an aligned value.
struct Major {
  bool inner_ok = false, outer_ok = false;
  std::int64_t inner_stride = 0;  // the stride of `outer` when inner-major
  std::int64_t outer_stride = 0;  // the stride of `inner` when outer-major
};

std::int64_t aligned_elems(const TensorView& t) {
  return 16 / static_cast<std::int64_t>(t.element_bytes());
}

std::int64_t round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }

Major read_major(const TensorView& t) {
  const std::int64_t align = aligned_elems(t);
  auto usable = [&](int mode, int other) {  // `mode` contiguous, `other` strided
    bool unit = t.stride[mode] == 1 || t.shape[mode] == 1;
    bool strided = t.shape[other] == 1 || t.stride[other] % align == 0;
    return unit && strided;
  };
  auto stride_of = [&](int mode, int other) {
    return t.shape[mode] == 1 ? round_up(t.shape[other], align) : t.stride[mode];
  };
  Major m;
  m.inner_ok = usable(1, 0);
  m.outer_ok = usable(0, 1);
  m.inner_stride = stride_of(0, 1);
  m.outer_stride = stride_of(1, 0);
  return m;
}

void require_readable(const ArgCheck& check, const TensorView& t, const char* name,
                      const Major& m) {
  if (m.inner_ok || m.outer_ok) return;
  if (t.stride[0] != 1 && t.stride[1] != 1)
    check.fail(std::string(name) + ": one dim must be contiguous (stride 1); got " +
               describe_shape(t));
  check.fail(std::string(name) + ": the non-contiguous stride must be a multiple of " +
             std::to_string(aligned_elems(t)) + " elements (16 bytes, for TMA); got " +
             describe_shape(t));
}

}  // namespace

namespace {

// A and B against the mainloop (on `device`); the layout and A/B fields of the problem.
GemmProblem check_operands(const ArgCheck& check, const TensorView& A, const TensorView& B,
                           int device) {
  for (auto [t, name] : {std::pair<const TensorView*, const char*>{&A, "A"}, {&B, "B"}}) {
    check.not_null(*t, name);
    check.rank_is(*t, name, 2);
    check.dims_positive(*t, name);
    check.fits_int32_indexing(*t, name);
  }
  check.dtype_in(A, "A", {DType::kBF16});
  check.dtype_in(B, "B", {DType::kBF16});
  check.dim_is(B, "B", 1, A.shape[1], "K (A's dim 1)");
  check.same_device(A, "A", device);
  check.same_device(B, "B", device);
  for (auto [t, name] : {std::pair<const TensorView*, const char*>{&A, "A"}, {&B, "B"}})
    if (reinterpret_cast<std::uintptr_t>(t->data) % 16 != 0)
      check.fail(std::string(name) + ": data pointer must be 16-byte aligned (TMA)");
  const Major a = read_major(A), b = read_major(B);
  require_readable(check, A, "A", a);
  require_readable(check, B, "B", b);

  GemmProblem p;
  p.m = static_cast<int>(A.shape[0]);
  p.k = static_cast<int>(A.shape[1]);
  p.n = static_cast<int>(B.shape[0]);
  p.device = device;
  p.a = A.data;
  p.b = B.data;
  if (a.inner_ok && b.inner_ok) {
    p.layout = OperandLayout::kAkBk;
    p.a_stride = a.inner_stride;
    p.b_stride = b.inner_stride;
  } else if (a.inner_ok && b.outer_ok) {
    p.layout = OperandLayout::kAkBn;
    p.a_stride = a.inner_stride;
    p.b_stride = b.outer_stride;
  } else if (a.outer_ok && b.outer_ok) {
    p.layout = OperandLayout::kAmBn;
    p.a_stride = a.outer_stride;
    p.b_stride = b.outer_stride;
  } else {
    check.fail("A is M-major and B is K-major: this operand layout is not compiled in; pass a "
               "K-major A or an N-major B (A: " + describe_shape(A) + ", B: " +
               describe_shape(B) + ")");
  }
  return p;
}

}  // namespace

GemmProblem make_gemm_problem(const TensorView& D, const TensorView& A, const TensorView& B,
                              const char* where) {
  ArgCheck check(where);
  check.not_null(D, "D");
  check.rank_is(D, "D", 2);
  check.dims_positive(D, "D");
  check.fits_int32_indexing(D, "D");
  GemmProblem p = check_operands(check, A, B, D.device);
  check.dtype_in(D, "D", {DType::kBF16, DType::kF32});
  check.dim_is(D, "D", 0, A.shape[0], "M (A's dim 0)");
  check.dim_is(D, "D", 1, B.shape[0], "N (B's dim 0)");
  if (reinterpret_cast<std::uintptr_t>(D.data) % 16 != 0)
    check.fail("D: data pointer must be 16-byte aligned (TMA)");
  const Major d = read_major(D);
  if (!d.inner_ok)
    check.fail("D: must be row-major (unit column stride) with a row stride that is a multiple of " +
               std::to_string(aligned_elems(D)) + " elements (16 bytes, for TMA); got " +
               describe_shape(D));
  if (D.shape[0] > 1 && d.inner_stride < D.shape[1])
    check.fail("D: row stride must be at least N (rows must not overlap); got " + describe_shape(D));
  p.d_dtype = D.dtype;
  p.d = D.data;
  p.d_stride = d.inner_stride;
  return p;
}

GemmProblem make_gemm_problem_without_d(const TensorView& A, const TensorView& B,
                                        const char* where) {
  return check_operands(ArgCheck(where), A, B, A.device);
}

}  // namespace coda::gemm
