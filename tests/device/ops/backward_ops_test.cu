// SPDX-License-Identifier: BSD-3-Clause
// The backward ops against the float64 *standard* backward (reference/llama.hpp: separate gate/up
// halves, hand-derived gradients checked against finite differences in the host tests), under
// the numerics contract (DESIGN.md §5); the framework model is PyTorch's bf16 autograd. Ragged
// and Llama-1B widths, M = 1 … 16383, fresh seeds, poisoned outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "coda/ops/linear_swiglu_bwd.hpp"
#include "coda/ops/weights.hpp"
#include "device/device_matrix.hpp"
#include "device/ops/ops_test_support.hpp"
#include "reference/llama.hpp"

namespace coda::ops {
namespace {

using testing::DeviceMatrix;
using testing::download;
using testing::meets_contract;
using testing::output;
using testing::upload;

// Columns [a | b] interleaved: out[:, 2j] = a[:, j], out[:, 2j + 1] = b[:, j].
Matrix interleave(const Matrix& a, const Matrix& b) {
  Matrix out(a.rows, 2 * a.cols);
  for (int r = 0; r < a.rows; ++r)
    for (int j = 0; j < a.cols; ++j) out(r, 2 * j) = a(r, j), out(r, 2 * j + 1) = b(r, j);
  return out;
}

std::vector<double> row_dot(const Matrix& g, const Matrix& u, const Matrix& dg, const Matrix& du) {
  std::vector<double> s(g.rows, 0.0);
  for (int r = 0; r < g.rows; ++r)
    for (int j = 0; j < g.cols; ++j) s[r] += g(r, j) * dg(r, j) + u(r, j) * du(r, j);
  return s;
}

// dY = dOut · W_down → dZ (interleaved), Y recomputed, zdz = Σ z·dz per row.
TEST(BackwardOps, SwiGluBackwardAgainstStandard) {
  std::mt19937_64 rng(testing::fresh_seed("BackwardOps.SwiGluBackwardAgainstStandard"));
  struct Shape { int m, hidden, ffn; };
  const Shape shapes[] = {{1, 520, 260}, {199, 2048, 8192}, {1000, 776, 1000}, {16383, 264, 520}};
  for (const Shape& s : shapes) {
    SCOPED_TRACE("m " + std::to_string(s.m) + " hidden " + std::to_string(s.hidden) + " ffn " +
                 std::to_string(s.ffn));
    const Matrix d_out = random_bf16(s.m, s.hidden, rng, 1.0);
    const Matrix w_down = random_bf16(s.hidden, s.ffn, rng, 0.03);
    const Matrix gate = random_bf16(s.m, s.ffn, rng, 2.0), up = random_bf16(s.m, s.ffn, rng, 1.0);
    const Matrix w_t = ref::transpose(w_down);  // linear64(x, w) is x · wᵀ

    Matrix dg64, du64, dg_fw, du_fw;
    ref::silu_mul_backward(gate, up, linear64(d_out, w_t), &dg64, &du64);
    ref::silu_mul_backward(gate, up, linear_framework(d_out, w_t), &dg_fw, &du_fw, true);
    const Matrix y64 = ref::silu_mul(gate, up);
    const Matrix y_fw = ref::round_to_bf16(ref::hadamard(ref::round_to_bf16(ref::silu(gate)), up));
    const std::vector<double> zdz64 = row_dot(gate, up, dg64, du64);
    const std::vector<double> zdz_fw = row_dot(gate, up, dg_fw, du_fw);

    DeviceMatrix d_dout = upload(d_out), d_w = upload(w_down), d_z = upload(interleave(gate, up));
    DeviceMatrix dz = output(s.m, 2 * s.ffn), y = output(s.m, s.ffn);
    DeviceBuffer zdz(s.m * 4), ws(linear_swiglu_bwd_workspace_bytes(s.m, s.ffn));
    zdz.poison();
    ws.poison();
    linear_swiglu_bwd(dz.view(), y.view(), vector_view(zdz, s.m, DType::kF32), d_dout.view(),
                      d_w.view(), d_z.view(), ws.get(), linear_swiglu_bwd_workspace_bytes(s.m, s.ffn));
    CODA_CHECK_CUDA(cudaDeviceSynchronize());

    bool pad[2];
    EXPECT_TRUE(meets_contract(download(dz, &pad[0]).v, interleave(dg64, du64).v,
                               interleave(dg_fw, du_fw).v, "dZ"));
    EXPECT_TRUE(meets_contract(download(y, &pad[1]).v, y64.v, y_fw.v, "Y recomputed"));
    const std::vector<float> got = zdz.download<float>();
    EXPECT_TRUE(meets_contract(std::vector<double>(got.begin(), got.end()), zdz64, zdz_fw, "zdz"));
    for (bool p : pad) EXPECT_TRUE(p) << "row padding written";
  }
}

}  // namespace
}  // namespace coda::ops
