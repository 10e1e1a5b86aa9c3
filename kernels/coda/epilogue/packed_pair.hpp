// SPDX-License-Identifier: BSD-3-Clause
// Family 3, 16-bit pairs packed in 32 bits: element j of a packed M × N/2 tensor carries columns
// 2j (low half) and 2j + 1 (high half) of an interleaved M × N bf16 tensor — the same bytes, read
// as 32-bit elements. A GEMM whose output column j lines up with the pair j (the SwiGLU backward:
// dY[m, j] against Z[m, 2j], Z[m, 2j+1]) loads and stores such tensors as ordinary 32-bit tiles:
//   PackedPairLoad<Ctx>         the packed tile (TileLoad of 32-bit elements, bits kept as is)
//   PairFirst<P>, PairSecond<P> column 2j, column 2j+1 of a packed value P, as fp32
//   PackPair<A, B>              bf16(A) in the low half, bf16(B) in the high half
//   PackedPairStore<Ctx, P>     stores a packed value P (TileStore of 32-bit elements)
// The 32-bit carrier type is float because every EVT edge is fp32: float → float conversions copy
// bits, so the pairs travel through the tree untouched. Only these nodes may read them.
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cstdint>

#include <cutlass/array.h>
#include <cutlass/bfloat16.h>

#include "coda/epilogue/elementwise.hpp"
#include "coda/epilogue/tile.hpp"

namespace coda::epilogue {

namespace detail {
CUTLASS_DEVICE float bits_as_float(std::uint32_t bits) { return __uint_as_float(bits); }
CUTLASS_DEVICE std::uint32_t float_bits(float x) { return __float_as_uint(x); }
}  // namespace detail

// The element-wise functors (for Map, or as DAG nodes with MapNode).
struct PackPairFn {
  CUTLASS_DEVICE float operator()(float first, float second) const {
    std::uint32_t lo = cutlass::bfloat16_t(first).raw();
    std::uint32_t hi = cutlass::bfloat16_t(second).raw();
    return detail::bits_as_float(lo | (hi << 16));
  }
};
template <int Shift>
struct UnpackBf16Fn {  // a bf16 is the top half of an fp32
  CUTLASS_DEVICE float operator()(float packed) const {
    return detail::bits_as_float(((detail::float_bits(packed) >> Shift) & 0xffffu) << 16);
  }
};
using FirstOfPairFn = UnpackBf16Fn<0>;
using SecondOfPairFn = UnpackBf16Fn<16>;

template <class Ctx>
using PackedPairLoad = TileLoad<Ctx, float>;
template <class P>
using PairFirst = Map<FirstOfPairFn, P>;
template <class P>
using PairSecond = Map<SecondOfPairFn, P>;
template <class A, class B>
using PackPair = Map<PackPairFn, A, B>;
template <class Ctx>
using PackedPairStoreNode = TileStoreNode<Ctx, float>;
template <class Ctx, class P>
using PackedPairStore = TileStore<Ctx, float, P>;

}  // namespace coda::epilogue
