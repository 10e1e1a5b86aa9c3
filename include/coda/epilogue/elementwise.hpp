// SPDX-License-Identifier: BSD-3-Clause
// Family 1, element-wise transforms: fp32 register math on the accumulator fragment.
//   Acc                      the fp32 accumulator
//   Apply<Fn, X, Y...>       Fn(X, Y, ...) element by element (Fn: a CUTLASS functor template)
//   Add<X, Y>, Mul<X, Y>     X + Y, X · Y
//   Silu<X>, Gelu<X>         activations
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cutlass/epilogue/fusion/operations.hpp>
#include <cutlass/epilogue/fusion/sm90_callbacks_tma_warpspecialized.hpp>
#include <cutlass/epilogue/thread/activation.h>
#include <cutlass/functional.h>

namespace coda::epilogue {

using Acc = cutlass::epilogue::fusion::Sm90AccFetch;

// Every intermediate is fp32; the kernel converts the root's value to D's type.
template <template <class> class Fn, class... Children>
using Apply = cutlass::epilogue::fusion::Sm90EVT<
    cutlass::epilogue::fusion::Sm90Compute<Fn, float, float,
                                           cutlass::FloatRoundStyle::round_to_nearest>,
    Children...>;

template <class X, class Y> using Add = Apply<cutlass::plus, X, Y>;
template <class X, class Y> using Mul = Apply<cutlass::multiplies, X, Y>;
template <class X> using Silu = Apply<cutlass::epilogue::thread::SiLu, X>;
template <class X> using Gelu = Apply<cutlass::epilogue::thread::GELU, X>;

}  // namespace coda::epilogue
