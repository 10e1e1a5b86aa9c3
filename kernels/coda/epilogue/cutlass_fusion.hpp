// SPDX-License-Identifier: BSD-3-Clause
// CUTLASS's SM90 fusion headers in an order that compiles: they are not self-contained
// (CUTLASS issue #1827), so every primitive header includes this one first.
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/numeric_conversion.h>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/fusion/operations.hpp>
#include <cutlass/epilogue/fusion/sm90_callbacks_tma_warpspecialized.hpp>
