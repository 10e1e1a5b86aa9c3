// SPDX-License-Identifier: BSD-3-Clause
// Composing primitives beyond a tree (a tree is just nesting: Mul<PerRow<Ctx>, Acc>):
//   Split<Input, Output, Side...>  compute Input once; Output (→ D) and each Side tree (→ aux
//                                  outputs) read it as `Shared`. Inside them, Shared *replaces*
//                                  the accumulator: Acc there is the Input value too.
//   Dag<Edges<From<i...>...>, Nodes...>   (JoinEdges: one Edges from several)
//                                  any DAG of bare nodes in topological order; node k takes the
//                                  values of nodes From<i...> as its inputs; the last node's value
//                                  goes to D. Use when a value is needed twice and the accumulator
//                                  is needed beside it (the SwiGLU backward). Bare nodes: Acc,
//                                  TileLoad, PerRow, PerCol, MapNode<F>, TileStoreNode, ...
// A DAG's Arguments is a cute::tuple indexed like Nodes: cute::get<k>(args) = {...}.
#pragma once

#include "coda/epilogue/cutlass_fusion.hpp"

#include <cute/container/tuple.hpp>
#include <cute/int_tuple.hpp>
#include <cutlass/epilogue/fusion/sm90_visitor_tma_warpspecialized.hpp>

namespace coda::epilogue {

using Shared = cutlass::epilogue::fusion::Sm90SplitTreeFetch;
template <class Input, class Output, class... Side>
using Split = cutlass::epilogue::fusion::Sm90SplitTreeVisitor<Input, Output, Side...>;

template <int... Inputs>
using From = cute::seq<Inputs...>;
template <class... Froms>
using Edges = cute::tuple<Froms...>;
template <class EdgeTuple, class... Nodes>
using Dag = cutlass::epilogue::fusion::Sm90TopologicalVisitor<float, EdgeTuple, Nodes...>;

// Edges<A...> then Edges<B...> then …, as one Edges (DAGs that share their first nodes).
template <class... EdgeTuples>
struct JoinEdges;
template <class... A>
struct JoinEdges<cute::tuple<A...>> {
  using type = cute::tuple<A...>;
};
template <class... A, class... B, class... Rest>
struct JoinEdges<cute::tuple<A...>, cute::tuple<B...>, Rest...>
    : JoinEdges<cute::tuple<A..., B...>, Rest...> {};

}  // namespace coda::epilogue
