// SPDX-License-Identifier: BSD-3-Clause
// TensorView constructors and ArgCheck messages.
#include <gtest/gtest.h>

#include "coda/tensor.hpp"
#include "host/test_support.hpp"

namespace coda {
namespace {

alignas(16) unsigned char g_buffer[1 << 12];

using testing::error_of;

TEST(TensorView, MatrixIsRowMajorByDefault) {
  TensorView t = TensorView::matrix(g_buffer, DType::kBF16, 3, 5);
  EXPECT_EQ(t.rank, 2);
  EXPECT_EQ(t.shape[0], 3);
  EXPECT_EQ(t.shape[1], 5);
  EXPECT_EQ(t.stride[0], 5);
  EXPECT_EQ(t.stride[1], 1);
  EXPECT_EQ(t.numel(), 15);
  TensorView c = TensorView::matrix_col_major(g_buffer, DType::kF32, 3, 5, 8);
  EXPECT_EQ(c.stride[0], 1);
  EXPECT_EQ(c.stride[1], 8);
}

TEST(TensorView, VectorIsContiguous) {
  const auto v = TensorView::vector(reinterpret_cast<void*>(0x100), DType::kI32, 7, 1);
  EXPECT_EQ(v.rank, 1);
  EXPECT_EQ(v.shape[0], 7);
  EXPECT_EQ(v.stride[0], 1);
  EXPECT_EQ(v.device, 1);
  EXPECT_EQ(v.numel(), 7);
}

TEST(ArgCheck, MessagesNameEntryPointArgumentAndConstraint) {
  ArgCheck check("coda::op");
  TensorView t = TensorView::matrix(nullptr, DType::kF32, 2, 2);
  EXPECT_EQ(error_of([&] { check.not_null(t, "X"); }), "coda::op: X: data pointer is null");
  t.data = g_buffer;
  EXPECT_EQ(error_of([&] { check.dtype_in(t, "X", {DType::kBF16, DType::kF16}); }),
            "coda::op: X: dtype must be bf16 or f16; got f32");
  EXPECT_EQ(error_of([&] { check.rank_is(t, "X", 3); }),
            "coda::op: X: must have rank 3; got rank 2");
  EXPECT_NE(error_of([&] { check.dim_is(t, "X", 1, 7, "N"); }).find("dim 1 must equal N = 7"),
            std::string::npos);
  EXPECT_EQ(error_of([&] { check.same_device(t, "X", 1); }),
            "coda::op: X: must be on device 1; got device 0");
}

TEST(ArgCheck, TmaAlignment) {
  ArgCheck check("coda::op");
  EXPECT_EQ(error_of([&] {
              check.tma_compatible(TensorView::matrix(g_buffer, DType::kBF16, 4, 16), "X");
            }),
            "");
  auto odd_stride = TensorView::matrix(g_buffer, DType::kBF16, 4, 12, 12);
  EXPECT_NE(error_of([&] { check.tma_compatible(odd_stride, "X"); })
                .find("stride of dim 0 must be a multiple of 8 elements"),
            std::string::npos);
  auto misaligned = TensorView::matrix(g_buffer + 2, DType::kBF16, 4, 16);
  EXPECT_EQ(error_of([&] { check.tma_compatible(misaligned, "X"); }),
            "coda::op: X: data pointer must be 16-byte aligned (TMA)");
  auto no_unit = TensorView::matrix(g_buffer, DType::kBF16, 4, 4);
  no_unit.stride = {16, 8, 0, 0};
  EXPECT_NE(error_of([&] { check.tma_compatible(no_unit, "X"); }).find("must be contiguous"),
            std::string::npos);
}

TEST(ArgCheck, Int32Indexing) {
  ArgCheck check("coda::op");
  auto huge = TensorView::matrix(g_buffer, DType::kBF16, std::int64_t(1) << 31, 8);
  EXPECT_NE(error_of([&] { check.fits_int32_indexing(huge, "X"); }).find("below 2^31"),
            std::string::npos);
  auto ok = TensorView::matrix(g_buffer, DType::kBF16, (std::int64_t(1) << 31) - 1, 8);
  EXPECT_EQ(error_of([&] { check.fits_int32_indexing(ok, "X"); }), "");
  auto zero = TensorView::matrix(g_buffer, DType::kBF16, 0, 8);
  EXPECT_NE(error_of([&] { check.dims_positive(zero, "X"); }).find("every dim must be positive"),
            std::string::npos);
}

}  // namespace
}  // namespace coda
