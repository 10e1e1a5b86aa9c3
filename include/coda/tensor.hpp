// SPDX-License-Identifier: BSD-3-Clause
// TensorView: how tensors cross the public API (pointer, dtype, shape, strides, device), and the
// checks every entry point runs on them before it launches anything.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "coda/status.hpp"

namespace coda {

enum class DType : std::uint8_t { kBF16, kF16, kF32, kI32, kI64 };

constexpr std::size_t dtype_bytes(DType t) {
  switch (t) {
    case DType::kBF16:
      return 2;
    case DType::kF16:
      return 2;
    case DType::kF32:
      return 4;
    case DType::kI32:
      return 4;
    case DType::kI64:
      return 8;
  }
  return 0;
}

const char* dtype_name(DType t);

// A non-owning view of a strided tensor of rank <= 4. Shape and strides are in elements.
struct TensorView {
  static constexpr int kMaxRank = 4;

  void* data = nullptr;
  DType dtype = DType::kBF16;
  int rank = 0;
  std::array<std::int64_t, kMaxRank> shape{};
  std::array<std::int64_t, kMaxRank> stride{};
  int device = 0;  // CUDA device ordinal the memory lives on

  // A rows x cols matrix; row_stride defaults to cols (row-major, contiguous).
  static TensorView matrix(const void* data, DType dtype, std::int64_t rows, std::int64_t cols,
                           std::int64_t row_stride = -1, int device = 0);
  // A rows x cols matrix whose rows are contiguous in memory the other way round: element (r, c)
  // at data + r + c * col_stride (the transpose view of a row-major matrix).
  static TensorView matrix_col_major(const void* data, DType dtype, std::int64_t rows,
                                     std::int64_t cols, std::int64_t col_stride = -1,
                                     int device = 0);

  // A contiguous vector of n elements (per-row / per-column vectors, targets, positions).
  static TensorView vector(const void* data, DType dtype, std::int64_t n, int device = 0);

  std::int64_t numel() const;
  std::size_t element_bytes() const { return dtype_bytes(dtype); }
};

// Validation helpers for one entry point; each throws coda::Error naming the entry point
// (`where`), the argument and the constraint.
class ArgCheck {
 public:
  explicit ArgCheck(std::string where) : where_(std::move(where)) {}

  void not_null(const TensorView& t, const char* name) const;
  void dtype_in(const TensorView& t, const char* name, std::initializer_list<DType> allowed) const;
  void rank_is(const TensorView& t, const char* name, int rank) const;
  void dim_is(const TensorView& t, const char* name, int dim, std::int64_t expected,
              const char* expected_name) const;
  void dims_positive(const TensorView& t, const char* name) const;
  // Every dim below 2^31 (CUTLASS problem shapes are int) and every stride non-negative.
  void fits_int32_indexing(const TensorView& t, const char* name) const;
  // TMA: base pointer 16-byte aligned, and every stride except the unit-stride mode a multiple of
  // 16 bytes. Exactly one mode must have stride 1 (the contiguous one).
  void tma_compatible(const TensorView& t, const char* name) const;
  void same_device(const TensorView& t, const char* name, int device) const;
  // Aliasing: no output shares a byte with another output or an input (outputs count each row's
  // last 16-byte unit in full: TMA stores whole units). `in_place` lists the (output, input) pairs
  // an op documents as safe in place; such a pair may be the very same view (same pointer, shape
  // and strides), and must otherwise be disjoint. Implemented in src/overlap.cpp.
  struct Named {
    const char* name;
    TensorView view;
  };
  struct InPlace {
    const char* output;
    const char* input;
  };
  void outputs_disjoint(std::initializer_list<Named> outputs, std::initializer_list<Named> inputs,
                        std::initializer_list<InPlace> in_place = {}) const;
  void fail(const std::string& what) const { throw Error(where_ + ": " + what); }
  const std::string& where() const { return where_; }

 private:
  std::string where_;
};

std::string describe_shape(const TensorView& t);

// Whether two views share a byte of memory. Exact for views made of contiguous rows (rank 1, or
// rank 2 with a unit-stride mode) at one row pitch; otherwise it compares the spans they cover
// and may report views that interleave without sharing an element.
bool views_overlap(const TensorView& a, const TensorView& b);

// `bytes` of raw scratch (workspaces, statistics buffers) as a view, for the aliasing checks.
TensorView workspace_view(const void* data, std::size_t bytes, int device = 0);

}  // namespace coda
