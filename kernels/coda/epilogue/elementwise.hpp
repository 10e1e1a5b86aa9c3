// SPDX-License-Identifier: BSD-3-Clause
// Family 1, element-wise transforms: fp32 register math on the accumulator fragment.
//   Acc                      the fp32 accumulator
//   Apply<Fn, X, Y...>       Fn(X, Y, ...) on whole fragments (Fn: a CUTLASS functor template)
//   Map<F, X, Y...>          F(x, y, ...) element by element (F: a device functor on floats)
//   Add<X, Y>, Mul<X, Y>     X + Y, X · Y
//   Silu<X>, GeluTanh<X>     activations with the fast intrinsics (fast_math.hpp); GeluTanh is
//                            PyTorch's approximate="tanh" GELU, GeluTanhGrad<X> its derivative
//   Gelu<X>                  the erf GELU (CUTLASS's GELU, erff: slower)
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cutlass/array.h>
#include <cutlass/epilogue/fusion/operations.hpp>
#include <cutlass/epilogue/fusion/sm90_callbacks_tma_warpspecialized.hpp>
#include <cutlass/epilogue/thread/activation.h>
#include <cutlass/functional.h>

#include "coda/epilogue/fast_math.hpp"

namespace coda::epilogue {

using Acc = cutlass::epilogue::fusion::Sm90AccFetch;

// Every intermediate is fp32; the kernel converts the root's value to D's type.
template <template <class> class Fn, class... Children>
using Apply = cutlass::epilogue::fusion::Sm90EVT<
    cutlass::epilogue::fusion::Sm90Compute<Fn, float, float,
                                           cutlass::FloatRoundStyle::round_to_nearest>,
    Children...>;

// A scalar functor lifted to the fragment functor shape Apply takes.
template <class ScalarFn>
struct OnFragments {
  template <class T>
  struct Fn {};  // Sm90Compute also names Fn<float>; only fragments are applied
  template <int N>
  struct Fn<cutlass::Array<float, N>> {
    template <class... Frags>
    CUTLASS_DEVICE cutlass::Array<float, N> operator()(Frags const&... x) const {
      cutlass::Array<float, N> y;
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < N; ++i) y[i] = ScalarFn{}(x[i]...);
      return y;
    }
  };
};

// The bare compute node (for DAGs, composition.hpp); Map is it applied to children.
template <class ScalarFn>
using MapNode =
    cutlass::epilogue::fusion::Sm90Compute<OnFragments<ScalarFn>::template Fn, float, float,
                                           cutlass::FloatRoundStyle::round_to_nearest>;
template <class ScalarFn, class... Children>
using Map = cutlass::epilogue::fusion::Sm90EVT<MapNode<ScalarFn>, Children...>;

struct SiluFn {
  CUTLASS_DEVICE float operator()(float x) const { return fast_silu(x); }
};

template <class X, class Y>
using Add = Apply<cutlass::plus, X, Y>;
template <class X, class Y>
using Mul = Apply<cutlass::multiplies, X, Y>;
template <class X>
using Silu = Map<SiluFn, X>;

// a · b as a scalar functor (for MapNode in DAGs).
struct ProductFn {
  CUTLASS_DEVICE float operator()(float a, float b) const { return a * b; }
};
// The erf GELU, 0.5 · x · (1 + erf(x / √2)) (CUTLASS's; PyTorch's default approximate="none").
template <class X>
using Gelu = Apply<cutlass::epilogue::thread::GELU, X>;

// The tanh GELU (PyTorch's approximate="tanh", GPT-2 / BERT) and its derivative.
struct GeluTanhFn {
  CUTLASS_DEVICE float operator()(float x) const { return fast_gelu_tanh(x); }
};
struct GeluTanhGradFn {
  CUTLASS_DEVICE float operator()(float x) const { return fast_gelu_tanh_grad(x); }
};
template <class X>
using GeluTanh = Map<GeluTanhFn, X>;
template <class X>
using GeluTanhGrad = Map<GeluTanhGradFn, X>;

}  // namespace coda::epilogue
