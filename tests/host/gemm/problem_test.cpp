// SPDX-License-Identifier: BSD-3-Clause
// make_gemm_problem: operand-layout detection and every rejection, with its message.
#include <gtest/gtest.h>

#include "coda/gemm/problem.hpp"
#include "host/test_support.hpp"

namespace coda::gemm {
namespace {

using testing::error_of;

void* const kA = testing::kFakeA;
void* const kB = testing::kFakeB;
void* const kD = testing::kFakeD;

TensorView rows(void* p, std::int64_t r, std::int64_t c, std::int64_t ld = -1, DType t = DType::kBF16) {
  return TensorView::matrix(p, t, r, c, ld);
}
TensorView cols(void* p, std::int64_t r, std::int64_t c, std::int64_t ld = -1) {
  return TensorView::matrix_col_major(p, DType::kBF16, r, c, ld);
}

TEST(GemmProblem, ForwardLayout) {
  GemmProblem p = make_gemm_problem(rows(kD, 64, 32), rows(kA, 64, 16), rows(kB, 32, 16));
  EXPECT_EQ(p.layout, OperandLayout::kAkBk);
  EXPECT_EQ(p.m, 64);
  EXPECT_EQ(p.n, 32);
  EXPECT_EQ(p.k, 16);
  EXPECT_EQ(p.a_stride, 16);
  EXPECT_EQ(p.b_stride, 16);
  EXPECT_EQ(p.d_stride, 32);
}

TEST(GemmProblem, DgradLayoutFromTransposedWeightView) {
  // dX[M, in] = dY[M, out] · W[out, in]: B = Wᵀ is an N-major view of the row-major weight.
  GemmProblem p = make_gemm_problem(rows(kD, 64, 48), rows(kA, 64, 16), cols(kB, 48, 16, 56));
  EXPECT_EQ(p.layout, OperandLayout::kAkBn);
  EXPECT_EQ(p.b_stride, 56);
}

TEST(GemmProblem, WgradLayout) {
  GemmProblem p = make_gemm_problem(rows(kD, 40, 48), cols(kA, 40, 16, 40), cols(kB, 48, 16));
  EXPECT_EQ(p.layout, OperandLayout::kAmBn);
  EXPECT_EQ(p.a_stride, 40);
  EXPECT_EQ(p.b_stride, 48);
}

TEST(GemmProblem, RaggedExtentsWithPaddedStrides) {
  GemmProblem p = make_gemm_problem(rows(kD, 1, 199, 200), rows(kA, 1, 4095, 4096),
                                    rows(kB, 199, 4095, 4096));
  EXPECT_EQ(p.m, 1);
  EXPECT_EQ(p.n, 199);
  EXPECT_EQ(p.k, 4095);
  EXPECT_EQ(p.d_stride, 200);
}

TEST(GemmProblem, UnitExtentStridesAreNormalised) {
  // K = 1 with A [M, 1] and B [N, 1] dense: never stepped along K, so both read as M/N-major
  // with an aligned (unused) K stride.
  GemmProblem p = make_gemm_problem(rows(kD, 64, 8), rows(kA, 64, 1, 1), rows(kB, 8, 1, 1));
  EXPECT_EQ(p.layout, OperandLayout::kAmBn);
  EXPECT_EQ(p.a_stride, 64);
  EXPECT_EQ(p.b_stride, 8);
  // A [1, K] with an odd row stride: M = 1, so the row stride is never used.
  GemmProblem q = make_gemm_problem(rows(kD, 1, 8), rows(kA, 1, 24, 25), rows(kB, 8, 24));
  EXPECT_EQ(q.layout, OperandLayout::kAkBk);
  EXPECT_EQ(q.a_stride % 8, 0);
}

TEST(GemmProblem, FloatOutput) {
  GemmProblem p = make_gemm_problem(rows(kD, 8, 12, 12, DType::kF32), rows(kA, 8, 16), rows(kB, 12, 16));
  EXPECT_EQ(p.d_dtype, DType::kF32);
}

struct Rejection {
  const char* name;
  TensorView d, a, b;
  const char* message;
};

TEST(GemmProblem, RejectsWithNamedArgumentAndConstraint) {
  const Rejection cases[] = {
      {"null A", rows(kD, 8, 8), rows(nullptr, 8, 8), rows(kB, 8, 8), "coda::gemm: A: data pointer is null"},
      {"null D", rows(nullptr, 8, 8), rows(kA, 8, 8), rows(kB, 8, 8), "coda::gemm: D: data pointer is null"},
      {"f32 A", rows(kD, 8, 8), rows(kA, 8, 8, -1, DType::kF32), rows(kB, 8, 8), "coda::gemm: A: dtype must be bf16; got f32"},
      {"i32 D", rows(kD, 8, 8, -1, DType::kI32), rows(kA, 8, 8), rows(kB, 8, 8), "coda::gemm: D: dtype must be bf16 or f32; got i32"},
      {"K mismatch", rows(kD, 8, 8), rows(kA, 8, 16), rows(kB, 8, 24), "coda::gemm: B: dim 1 must equal K (A's dim 1) = 16"},
      {"M mismatch", rows(kD, 16, 8), rows(kA, 8, 16), rows(kB, 8, 16), "coda::gemm: D: dim 0 must equal M (A's dim 0) = 8"},
      {"N mismatch", rows(kD, 8, 16), rows(kA, 8, 16), rows(kB, 8, 16), "coda::gemm: D: dim 1 must equal N (B's dim 0) = 8"},
      {"empty", rows(kD, 0, 8), rows(kA, 0, 16), rows(kB, 8, 16), "coda::gemm: D: every dim must be positive"},
      {"huge M", rows(kD, std::int64_t(1) << 31, 8), rows(kA, std::int64_t(1) << 31, 8), rows(kB, 8, 8), "coda::gemm: D: dim 0 must be below 2^31"},
      {"misaligned B", rows(kD, 8, 8), rows(kA, 8, 8), rows(static_cast<char*>(kB) + 8, 8, 8), "coda::gemm: B: data pointer must be 16-byte aligned (TMA)"},
      {"odd A stride", rows(kD, 8, 8), rows(kA, 8, 199), rows(kB, 8, 199, 200), "coda::gemm: A: the non-contiguous stride must be a multiple of 8 elements"},
      {"no unit stride", rows(kD, 8, 8), [] { auto t = rows(kA, 8, 8); t.stride = {16, 2, 0, 0}; return t; }(), rows(kB, 8, 8), "coda::gemm: A: one dim must be contiguous"},
      {"column-major D", cols(kD, 8, 8), rows(kA, 8, 8), rows(kB, 8, 8), "coda::gemm: D: must be row-major"},
      {"f32 D stride", rows(kD, 8, 6, 6, DType::kF32), rows(kA, 8, 8), rows(kB, 6, 8), "coda::gemm: D: must be row-major (unit column stride) with a row stride that is a multiple of 4 elements"},
      {"overlapping D", rows(kD, 8, 16, 8), rows(kA, 8, 8), rows(kB, 16, 8), "coda::gemm: D: row stride must be at least N"},
      {"A M-major, B K-major", rows(kD, 8, 8), cols(kA, 8, 16), rows(kB, 8, 16), "coda::gemm: A is M-major and B is K-major"},
      {"rank 3", [] { auto t = rows(kD, 8, 8); t.rank = 3; t.shape[2] = 1; return t; }(), rows(kA, 8, 8), rows(kB, 8, 8), "coda::gemm: D: must have rank 2; got rank 3"},
      {"device", rows(kD, 8, 8), [] { auto t = rows(kA, 8, 8); t.device = 1; return t; }(), rows(kB, 8, 8), "coda::gemm: A: must be on device 0; got device 1"},
  };
  for (const Rejection& c : cases) {
    std::string msg = error_of([&] { make_gemm_problem(c.d, c.a, c.b); });
    EXPECT_EQ(msg.rfind(c.message, 0), 0u) << c.name << ": got \"" << msg << "\"";
  }
}

}  // namespace
}  // namespace coda::gemm
