// SPDX-License-Identifier: BSD-3-Clause
// TensorView constructors and the argument checks shared by every entry point.
#include "coda/tensor.hpp"

#include <limits>

namespace coda {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kBF16: return "bf16";
    case DType::kF16: return "f16";
    case DType::kF32: return "f32";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
  }
  return "?";
}

TensorView TensorView::matrix(const void* data, DType dtype, std::int64_t rows, std::int64_t cols,
                              std::int64_t row_stride, int device) {
  TensorView t;
  t.data = const_cast<void*>(data);
  t.dtype = dtype;
  t.rank = 2;
  t.shape = {rows, cols, 0, 0};
  t.stride = {row_stride < 0 ? cols : row_stride, 1, 0, 0};
  t.device = device;
  return t;
}

TensorView TensorView::vector(const void* data, DType dtype, std::int64_t n, int device) {
  TensorView t;
  t.data = const_cast<void*>(data);
  t.dtype = dtype;
  t.rank = 1;
  t.shape = {n, 0, 0, 0};
  t.stride = {1, 0, 0, 0};
  t.device = device;
  return t;
}

TensorView TensorView::matrix_col_major(const void* data, DType dtype, std::int64_t rows,
                                        std::int64_t cols, std::int64_t col_stride, int device) {
  TensorView t = matrix(data, dtype, rows, cols, 0, device);
  t.stride = {1, col_stride < 0 ? rows : col_stride, 0, 0};
  return t;
}

std::int64_t TensorView::numel() const {
  std::int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= shape[i];
  return n;
}

// std::to_string, not iostreams: in the Python module, an ostringstream crashed inside the
// host process's libstdc++ (H100 image, PyTorch 2.11); string concatenation needs no locale.
std::string describe_shape(const TensorView& t) {
  std::string dims, strides;
  for (int i = 0; i < t.rank; ++i) {
    dims += (i ? ", " : "") + std::to_string(t.shape[i]);
    strides += (i ? ", " : "") + std::to_string(t.stride[i]);
  }
  return std::string(dtype_name(t.dtype)) + "[" + dims + "] strides (" + strides + ")";
}

void ArgCheck::not_null(const TensorView& t, const char* name) const {
  if (t.data == nullptr) fail(std::string(name) + ": data pointer is null");
}

void ArgCheck::dtype_in(const TensorView& t, const char* name,
                        std::initializer_list<DType> allowed) const {
  std::string names;
  for (DType d : allowed) {
    if (d == t.dtype) return;
    names += (names.empty() ? "" : " or ") + std::string(dtype_name(d));
  }
  fail(std::string(name) + ": dtype must be " + names + "; got " + dtype_name(t.dtype));
}

void ArgCheck::rank_is(const TensorView& t, const char* name, int rank) const {
  if (t.rank != rank)
    fail(std::string(name) + ": must have rank " + std::to_string(rank) + "; got rank " +
         std::to_string(t.rank));
}

void ArgCheck::dim_is(const TensorView& t, const char* name, int dim, std::int64_t expected,
                      const char* expected_name) const {
  if (t.shape[dim] != expected)
    fail(std::string(name) + ": dim " + std::to_string(dim) + " must equal " + expected_name +
         " = " + std::to_string(expected) + "; got " + describe_shape(t));
}

void ArgCheck::dims_positive(const TensorView& t, const char* name) const {
  for (int i = 0; i < t.rank; ++i)
    if (t.shape[i] <= 0)
      fail(std::string(name) + ": every dim must be positive; got " + describe_shape(t));
}

void ArgCheck::fits_int32_indexing(const TensorView& t, const char* name) const {
  for (int i = 0; i < t.rank; ++i) {
    if (t.shape[i] > std::numeric_limits<std::int32_t>::max())
      fail(std::string(name) + ": dim " + std::to_string(i) +
           " must be below 2^31 (32-bit problem sizes); got " + describe_shape(t));
    if (t.stride[i] < 0)
      fail(std::string(name) + ": strides must be non-negative; got " + describe_shape(t));
  }
}

void ArgCheck::tma_compatible(const TensorView& t, const char* name) const {
  const auto bytes = static_cast<std::int64_t>(t.element_bytes());
  if (reinterpret_cast<std::uintptr_t>(t.data) % 16 != 0)
    fail(std::string(name) + ": data pointer must be 16-byte aligned (TMA)");
  int unit_modes = 0;
  for (int i = 0; i < t.rank; ++i) {
    if (t.stride[i] == 1) {
      ++unit_modes;
    } else if (t.shape[i] > 1 && (t.stride[i] * bytes) % 16 != 0) {
      fail(std::string(name) + ": stride of dim " + std::to_string(i) + " must be a multiple of " +
           std::to_string(16 / bytes) + " elements (16 bytes, for TMA); got " + describe_shape(t));
    }
  }
  if (unit_modes == 0)
    fail(std::string(name) + ": one dim must be contiguous (stride 1); got " + describe_shape(t));
}

void ArgCheck::same_device(const TensorView& t, const char* name, int device) const {
  if (t.device != device)
    fail(std::string(name) + ": must be on device " + std::to_string(device) + "; got device " +
         std::to_string(t.device));
}

}  // namespace coda
