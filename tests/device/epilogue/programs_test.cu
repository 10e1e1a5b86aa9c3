// SPDX-License-Identifier: BSD-3-Clause
// The example programs (kernels/coda/programs/examples.hpp) composed with the fixed
// mainloop, on ragged shapes (M, N not multiples of the tile, N odd), in a Cooperative and a
// Pingpong config, against their host twins in float64 with the numerics contract
// (docs/numerics.md).
// Every output is NaN-poisoned first; row padding past the last 16-byte unit must stay untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "coda/epilogue/program_launchers.hpp"
#include "src/epilogue/example_launchers.hpp"
#include "coda/epilogue/merge.hpp"
#include "device/device_buffer.hpp"
#include "device/device_matrix.hpp"
#include "device/gemm_oracle.hpp"
#include "reference/bf16.hpp"
#include "reference/epilogue.hpp"
#include "reference/gemm.hpp"

namespace coda::epilogue {
namespace {

using gemm::TileConfig;
using ref::Matrix;
using testing::DeviceBuffer;
using testing::DeviceMatrix;
using testing::download;
using testing::meets_contract;
using testing::meets_contract_bf16;
using testing::output;
using testing::round_up;
using testing::to_matrix;
using testing::upload;

// The valid region (tiles × count) of a partial buffer, as doubles.
std::vector<double> valid_partials(const std::vector<float>& buffer, PartialLayout layout, int count) {
  std::vector<double> out;
  for (int t = 0; t < layout.tiles; ++t)
    for (int i = 0; i < count; ++i) out.push_back(buffer[t * layout.padded + i]);
  return out;
}
std::vector<double> valid_partials(const ref::Partials& p, int count) {
  std::vector<double> out;
  for (int t = 0; t < p.tiles; ++t)
    for (int i = 0; i < count; ++i) out.push_back(p.v[t * p.padded + i]);
  return out;
}

struct Shape { int m, n, k; };
// Ragged in M and N (N odd, a single row, a single N tile), K not a multiple of 64.
const Shape kShapes[] = {{1, 199, 1000}, {1000, 4095, 199}, {4095, 1001, 1000}, {333, 520, 776}};
// Each program runs in every config it is compiled for (none of these spans whole heads): an op's
// program in kProgramConfigs, an example program in kExampleConfigs.

struct TileDims { int m, n; };
// The tile a program's partial sums are taken over: the tile its epilogue works on (under
// OverlapCooperative a 64 x 128 quarter of the CTA's tile).
TileDims tile_of(TileConfig c) {
  const gemm::EpilogueTileGeometry g = gemm::epilogue_geometry(c);
  return {g.tile_m, g.tile_n};
}

// One random problem: operands, the float64 accumulator and the framework's bf16 GEMM output.
struct GemmCase {
  Shape s;
  DeviceMatrix a, b;
  Matrix acc64, acc_framework;
};

GemmCase make_case(const Shape& s, std::mt19937_64& rng, float a_scale = 1.0f) {
  auto a = testing::random_bf16_matrix(s.m, s.k, rng, a_scale);
  auto b = testing::random_bf16_matrix(s.n, s.k, rng);
  GemmCase g{s, upload(to_matrix(a, s.m, s.k)), upload(to_matrix(b, s.n, s.k)), Matrix(s.m, s.n),
             Matrix(s.m, s.n)};
  g.acc64.v = testing::gemm_ref64(s.m, s.n, s.k, a, b);
  auto fw = testing::gemm_cublas_f32(s.m, s.n, s.k, a, b);
  for (std::size_t i = 0; i < fw.size(); ++i) g.acc_framework.v[i] = ref::round_to_bf16(fw[i]);
  return g;
}

Matrix random_matrix(int rows, int cols, std::mt19937_64& rng, float mean, float stddev) {
  std::normal_distribution<float> dist(mean, stddev);
  Matrix x(rows, cols);
  for (double& v : x.v) v = ref::round_to_bf16(dist(rng));
  return x;
}

std::string trace(const Shape& s, TileConfig c) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " " +
         gemm::to_string(c);
}

// X = acc + R → D;  Σ X² per (row, N-tile);  H = X ⊙ w. Then the merge kernels: Σ and rstd.
TEST(EpiloguePrograms, ResidualRms) {
  std::mt19937_64 rng(testing::fresh_seed("EpiloguePrograms.ResidualRms"));
  for (const Shape& s : kShapes) {
    GemmCase g = make_case(s, rng);
    Matrix residual = random_matrix(s.m, s.n, rng, 0.0f, 8.0f);
    Matrix w = random_matrix(1, s.n, rng, 1.0f, 0.1f);
    DeviceMatrix d_residual = upload(residual), d_w = upload(w);
    const Matrix x = ref::add(g.acc64, residual);
    const Matrix x_fw = ref::round_to_bf16(ref::add(g.acc_framework, residual));
    const Matrix h = ref::mul_per_col(x, w.v);
    const Matrix h_fw = ref::round_to_bf16(ref::mul_per_col(x_fw, w.v));
    for (TileConfig config : kProgramConfigs) {
      // Not compiled where the tile is handed over in bf16 (kNeedsFp32Accumulator).
      if (!has_program_instance(ops::OpKey::kLinearResidualRms, config)) continue;
      SCOPED_TRACE(trace(s, config));
      const TileDims tile = tile_of(config);
      const PartialLayout layout = per_row_partial_layout(config, s.m, s.n);
      DeviceMatrix d = output(s.m, s.n), normed = output(s.m, s.n);
      DeviceBuffer partials(layout.floats() * 4);
      partials.poison();
      ResidualRmsParams params;
      params.residual = d_residual.buffer.get();
      params.residual_stride = d_residual.ld;
      params.norm_weight = d_w.buffer.get();
      params.normed = normed.buffer.get();
      params.normed_stride = normed.ld;
      params.sumsq_partials = partials.get<float>();
      residual_rms(d.view(), g.a.view(), g.b.view(), params, {config});
      CODA_CHECK_CUDA(cudaDeviceSynchronize());

      bool d_pad = false, h_pad = false;
      EXPECT_TRUE(meets_contract(download(d, &d_pad).v, x.v, x_fw.v, "D = acc + R"));
      EXPECT_TRUE(meets_contract(download(normed, &h_pad).v, h.v, h_fw.v, "H = X ⊙ w"));
      EXPECT_TRUE(d_pad && h_pad) << "row padding written";
      const ref::Partials p = ref::per_row_partials(x, tile.m, tile.n, true);
      const ref::Partials p_fw = ref::per_row_partials(x_fw, tile.m, tile.n, true);
      ASSERT_EQ(p.tiles, layout.tiles);
      ASSERT_EQ(p.padded, layout.padded);
      EXPECT_TRUE(meets_contract(valid_partials(partials.download<float>(), layout, s.m),
                                 valid_partials(p, s.m), valid_partials(p_fw, s.m),
                                 "Σ X² partials"));

      DeviceBuffer sums(s.m * 4), rstd(s.m * 4);
      sums.poison();
      rstd.poison();
      merge_partial_sums(partials.get<float>(), layout, s.m, sums.get<float>());
      rstd_from_partials(partials.get<float>(), layout, s.m, s.n, 1e-5f, rstd.get<float>());
      CODA_CHECK_CUDA(cudaDeviceSynchronize());
      auto to_double = [](const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); };
      EXPECT_TRUE(meets_contract(to_double(sums.download<float>()), ref::merge(p, s.m),
                                 ref::merge(p_fw, s.m), "Σ X² merged"));
      EXPECT_TRUE(meets_contract(to_double(rstd.download<float>()), ref::rstd(p, s.m, s.n, 1e-5),
                                 ref::rstd(p_fw, s.m, s.n, 1e-5), "rstd"));
    }
  }
}

// D = α · r[m] · acc
TEST(EpiloguePrograms, RowScale) {
  std::mt19937_64 rng(testing::fresh_seed("EpiloguePrograms.RowScale"));
  for (const Shape& s : kShapes) {
    GemmCase g = make_case(s, rng);
    std::uniform_real_distribution<float> u(0.25f, 2.0f);
    std::vector<float> r(s.m);
    for (float& v : r) v = u(rng);
    const float alpha = -0.7f;
    DeviceBuffer d_r(s.m * 4), d_alpha(4);
    d_r.upload(r);
    d_alpha.upload(std::vector<float>{alpha});
    std::vector<double> r64(r.begin(), r.end());
    const Matrix expect = ref::scale(ref::mul_per_row(g.acc64, r64), alpha);
    const Matrix expect_fw = ref::round_to_bf16(ref::scale(ref::mul_per_row(g.acc_framework, r64), alpha));
    for (TileConfig config : kExampleConfigs) {
      SCOPED_TRACE(trace(s, config));
      DeviceMatrix d = output(s.m, s.n);
      row_scale(d.view(), g.a.view(), g.b.view(), {d_alpha.get<float>(), d_r.get<float>()}, {config});
      CODA_CHECK_CUDA(cudaDeviceSynchronize());
      bool pad = false;
      EXPECT_TRUE(meets_contract(download(d, &pad).v, expect.v, expect_fw.v, "D = α·r·acc"));
      EXPECT_TRUE(pad);
    }
  }
}

// Y = silu(acc + b[n]) → D;  Σ_m Y per (column, M-tile)
TEST(EpiloguePrograms, BiasSiluColSum) {
  std::mt19937_64 rng(testing::fresh_seed("EpiloguePrograms.BiasSiluColSum"));
  for (const Shape& s : kShapes) {
    GemmCase g = make_case(s, rng);
    Matrix bias = random_matrix(1, s.n, rng, 0.0f, 4.0f);
    DeviceMatrix d_bias = upload(bias);
    const Matrix y = ref::silu(ref::add_per_col(g.acc64, bias.v));
    const Matrix y_fw = ref::round_to_bf16(ref::silu(ref::round_to_bf16(ref::add_per_col(g.acc_framework, bias.v))));
    for (TileConfig config : kExampleConfigs) {
      SCOPED_TRACE(trace(s, config));
      const TileDims tile = tile_of(config);
      const PartialLayout layout = per_col_partial_layout(config, s.m, s.n);
      DeviceMatrix d = output(s.m, s.n);
      DeviceBuffer partials(layout.floats() * 4);
      partials.poison();
      bias_silu_col_sum(d.view(), g.a.view(), g.b.view(),
                        {d_bias.buffer.get(), partials.get<float>()}, {config});
      CODA_CHECK_CUDA(cudaDeviceSynchronize());
      bool pad = false;
      EXPECT_TRUE(meets_contract(download(d, &pad).v, y.v, y_fw.v, "D = silu(acc + b)"));
      EXPECT_TRUE(pad);
      const ref::Partials p = ref::per_col_partials(y, tile.m, tile.n);
      const ref::Partials p_fw = ref::per_col_partials(y_fw, tile.m, tile.n);
      ASSERT_EQ(p.tiles, layout.tiles);
      EXPECT_TRUE(meets_contract(valid_partials(partials.download<float>(), layout, s.n),
                                 valid_partials(p, s.n), valid_partials(p_fw, s.n),
                                 "Σ_m Y partials"));
    }
  }
}

// One family at a time: D = silu(acc);  D = acc + R;  D = acc with Σ acc² partials.
TEST(EpiloguePrograms, SingleFamilyPrograms) {
  std::mt19937_64 rng(testing::fresh_seed("EpiloguePrograms.SingleFamilyPrograms"));
  for (const Shape& s : kShapes) {
    GemmCase g = make_case(s, rng);
    Matrix residual = random_matrix(s.m, s.n, rng, 0.0f, 8.0f);
    DeviceMatrix d_residual = upload(residual);
    const Matrix act = ref::silu(g.acc64);
    const Matrix act_fw = ref::round_to_bf16(ref::silu(g.acc_framework));
    const Matrix sum = ref::add(g.acc64, residual);
    const Matrix sum_fw = ref::round_to_bf16(ref::add(g.acc_framework, residual));
    for (TileConfig config : kExampleConfigs) {
      SCOPED_TRACE(trace(s, config));
      bool pad = false;
      DeviceMatrix d = output(s.m, s.n);
      activation(d.view(), g.a.view(), g.b.view(), {}, {config});
      CODA_CHECK_CUDA(cudaDeviceSynchronize());
      EXPECT_TRUE(meets_contract(download(d, &pad).v, act.v, act_fw.v, "D = silu(acc)"));
      EXPECT_TRUE(pad);

      d.buffer.poison();
      residual_add(d.view(), g.a.view(), g.b.view(), {d_residual.buffer.get(), d_residual.ld}, {config});
      CODA_CHECK_CUDA(cudaDeviceSynchronize());
      EXPECT_TRUE(meets_contract(download(d, &pad).v, sum.v, sum_fw.v, "D = acc + R"));
      EXPECT_TRUE(pad);

      const TileDims tile = tile_of(config);
      const PartialLayout layout = per_row_partial_layout(config, s.m, s.n);
      DeviceBuffer partials(layout.floats() * 4);
      partials.poison();
      d.buffer.poison();
      row_sum_squares(d.view(), g.a.view(), g.b.view(), {partials.get<float>()}, {config});
      CODA_CHECK_CUDA(cudaDeviceSynchronize());
      EXPECT_TRUE(meets_contract(download(d, &pad).v, g.acc64.v, g.acc_framework.v, "D = acc"));
      EXPECT_TRUE(pad);
      const ref::Partials p = ref::per_row_partials(g.acc64, tile.m, tile.n, true);
      const ref::Partials p_fw = ref::per_row_partials(g.acc_framework, tile.m, tile.n, true);
      EXPECT_TRUE(meets_contract(valid_partials(partials.download<float>(), layout, s.m),
                                 valid_partials(p, s.m), valid_partials(p_fw, s.m),
                                 "Σ acc² partials"));
    }
  }
}

// Column-pair programs need N even; N/2 odd in all but one shape (the last pair of a row has no
// neighbour for the 4-byte store), and N crosses tile and 32-column subtile boundaries.
const Shape kPairShapes[] = {{1, 202, 1000}, {1000, 4094, 199}, {4095, 1002, 1000}, {333, 520, 776}};

// D = Z = acc;  Y[m, j] = silu(Z[m, 2j]) · Z[m, 2j+1]
TEST(EpiloguePrograms, SwiGluPairs) {
  std::mt19937_64 rng(testing::fresh_seed("EpiloguePrograms.SwiGluPairs"));
  for (const Shape& s : kPairShapes) {
    GemmCase g = make_case(s, rng);
    const Matrix y = ref::silu_gate_pairs(g.acc64);
    const Matrix y_fw = ref::round_to_bf16(ref::silu_gate_pairs(g.acc_framework));
    for (TileConfig config : kProgramConfigs) {
      SCOPED_TRACE(trace(s, config));
      DeviceMatrix d = output(s.m, s.n), gated = output(s.m, s.n / 2);
      swiglu_pairs(d.view(), g.a.view(), g.b.view(), {gated.buffer.get(), gated.ld}, {config});
      // Y again with rows only 4-byte aligned (stride ≡ 2 mod 4 elements): each lane then stores
      // its four outputs as two 4-byte halves instead of one 8-byte store (gated.hpp).
      const std::int64_t ld4 = round_up(s.n / 2, 4) + 2;
      DeviceMatrix gated4{DeviceBuffer(std::size_t(s.m) * ld4 * 2), s.m, s.n / 2, ld4};
      gated4.buffer.poison();
      DeviceMatrix d4 = output(s.m, s.n);
      swiglu_pairs(d4.view(), g.a.view(), g.b.view(), {gated4.buffer.get(), gated4.ld}, {config});
      CODA_CHECK_CUDA(cudaDeviceSynchronize());
      bool d_pad = false, y_pad = false, d4_pad = false, y4_pad = false;
      EXPECT_TRUE(meets_contract(download(d, &d_pad).v, g.acc64.v, g.acc_framework.v, "D = Z"));
      const ref::Matrix y_got = download(gated, &y_pad);
      EXPECT_TRUE(meets_contract(y_got.v, y.v, y_fw.v, "Y = silu(g)·u"));
      EXPECT_TRUE(d_pad && y_pad) << "row padding written";
      download(d4, &d4_pad);
      EXPECT_EQ(download(gated4, &y4_pad).v, y_got.v) << "Y: same bits with 4-byte aligned rows";
      // Y is stored from registers, not by TMA: nothing past column N/2 − 1 may be written.
      const std::vector<std::uint16_t> y4_bits = gated4.buffer.download<std::uint16_t>();
      bool y4_beyond_untouched = true;
      for (int r = 0; r < s.m; ++r)
        for (std::int64_t c = s.n / 2; c < ld4; ++c)
          if (y4_bits[std::size_t(r) * ld4 + c] != 0xFFFF) y4_beyond_untouched = false;
      EXPECT_TRUE(d4_pad && y4_beyond_untouched) << "Y written past column N/2 - 1";
    }
  }
}

// D = RoPE(acc), positions up to 2^20 with per-document resets, some pairs with f = 0 (V).
TEST(EpiloguePrograms, RopeRotate) {
  std::mt19937_64 rng(testing::fresh_seed("EpiloguePrograms.RopeRotate"));
  for (const Shape& s : kPairShapes) {
    GemmCase g = make_case(s, rng);
    std::vector<std::int32_t> pos(s.m);
    std::uniform_int_distribution<std::int32_t> start(0, (1 << 20) - 5000);
    for (int m = 0, p = start(rng); m < s.m; ++m, ++p) {
      if (m % 700 == 699) p = 0;  // a new document
      pos[m] = p;
    }
    std::vector<RopeFrequency> freq(s.n / 2);
    std::vector<double> turns(s.n / 2);
    const double two_pi = 2.0 * std::acos(-1.0);
    for (int j = 0; j < s.n / 2; ++j) {
      const int head_pair = j % 64;  // hd = 128; every third head is a V head
      turns[j] = (j / 64) % 3 == 2 ? 0.0 : std::pow(500000.0, -head_pair / 64.0) / two_pi;
      freq[j] = rope_frequency(turns[j]);
    }
    DeviceBuffer d_pos(pos.size() * 4), d_freq(freq.size() * 8);
    d_pos.upload(pos);
    d_freq.upload(freq);
    const std::vector<std::int64_t> pos64(pos.begin(), pos.end());
    const Matrix y = ref::rope_pairs(g.acc64, pos64, turns);
    const Matrix y_fw = ref::round_to_bf16(ref::rope_pairs(g.acc_framework, pos64, turns));
    for (TileConfig config : kProgramConfigs) {
      SCOPED_TRACE(trace(s, config));
      DeviceMatrix d = output(s.m, s.n);
      rope_rotate(d.view(), g.a.view(), g.b.view(),
                  {d_pos.get<std::int32_t>(), d_freq.get<RopeFrequency>()}, {config});
      CODA_CHECK_CUDA(cudaDeviceSynchronize());
      bool pad = false;
      EXPECT_TRUE(meets_contract(download(d, &pad).v, y.v, y_fw.v, "D = RoPE(acc)"));
      EXPECT_TRUE(pad);
    }
  }
}

// dY = acc (M × F);  Z (M × 2F) read as packed pairs;  D = silu(g)·u;  dZ packed.
TEST(EpiloguePrograms, SwiGluPairsGrad) {
  std::mt19937_64 rng(testing::fresh_seed("EpiloguePrograms.SwiGluPairsGrad"));
  for (const Shape& s : kShapes) {  // F = N may be odd: Z has 2F columns
    GemmCase g = make_case(s, rng);
    Matrix z = random_matrix(s.m, 2 * s.n, rng, 0.0f, 3.0f);
    DeviceMatrix d_z = upload(z);
    const Matrix y = ref::silu_gate_pairs(z);
    const Matrix y_fw = ref::round_to_bf16(y);
    const Matrix dz = ref::silu_gate_pairs_grad(g.acc64, z);
    const Matrix dz_fw = ref::round_to_bf16(ref::silu_gate_pairs_grad(g.acc_framework, z));
    for (TileConfig config : kExampleConfigs) {
      SCOPED_TRACE(trace(s, config));
      DeviceMatrix d = output(s.m, s.n), d_dz = output(s.m, 2 * s.n);
      // A bf16 row of stride ld is a row of ld / 2 packed pairs.
      swiglu_pairs_grad(d.view(), g.a.view(), g.b.view(),
                        {d_z.buffer.get(), d_z.ld / 2, d_dz.buffer.get(), d_dz.ld / 2}, {config});
      CODA_CHECK_CUDA(cudaDeviceSynchronize());
      bool d_pad = false, dz_pad = false;
      EXPECT_TRUE(meets_contract(download(d, &d_pad).v, y.v, y_fw.v, "D = silu(g)·u"));
      EXPECT_TRUE(meets_contract(download(d_dz, &dz_pad).v, dz.v, dz_fw.v, "dZ"));
      EXPECT_TRUE(d_pad && dz_pad) << "row padding written";
    }
  }
}

// D = rstd[m] · acc with rstd folded from Σx² partials in registers; bitwise equal to the merge
// kernel followed by the row-scale broadcast.
TEST(EpiloguePrograms, RstdRowScaleLeaf) {
  std::mt19937_64 rng(testing::fresh_seed("EpiloguePrograms.RstdRowScaleLeaf"));
  for (const Shape& s : kShapes) {
    GemmCase g = make_case(s, rng);
    const int width = 4096, tile_n = 256;
    const ref::Partials p = ref::per_row_partials(random_matrix(s.m, width, rng, 0.0f, 2.0f), 128,
                                                  tile_n, /*square=*/true);
    const PartialLayout layout{p.tiles, p.padded};
    std::vector<float> host(p.v.begin(), p.v.end());
    DeviceBuffer partials(host.size() * 4), rstd(s.m * 4);
    partials.upload(host);
    const std::vector<double> r = ref::rstd(p, s.m, width, 1e-6);
    const Matrix expect = ref::mul_per_row(g.acc64, r);
    const Matrix expect_fw = ref::round_to_bf16(ref::mul_per_row(g.acc_framework, r));
    for (TileConfig config : kProgramConfigs) {
      // Not compiled where the tile is handed over in bf16 (kNeedsFp32Accumulator).
      if (!has_program_instance(ops::OpKey::kLinearRmsnorm, config)) continue;
      SCOPED_TRACE(trace(s, config));
      DeviceMatrix leaf = output(s.m, s.n), two_step = output(s.m, s.n);
      rstd_row_scale(leaf.view(), g.a.view(), g.b.view(),
                     {{partials.get<float>(), layout, width}, 1e-6f}, {config});
      CODA_CHECK_CUDA(cudaDeviceSynchronize());
      bool pad = false, pad2 = false;
      const Matrix got = download(leaf, &pad);
      EXPECT_TRUE(meets_contract(got.v, expect.v, expect_fw.v, "D = rstd·acc"));
      EXPECT_TRUE(pad);
      // The two-step twin runs the example row_scale, compiled in kExampleConfigs only.
      if (std::find(std::begin(kExampleConfigs), std::end(kExampleConfigs), config) == std::end(kExampleConfigs))
        continue;
      rstd_from_partials(partials.get<float>(), layout, s.m, width, 1e-6f, rstd.get<float>());
      row_scale(two_step.view(), g.a.view(), g.b.view(), {nullptr, rstd.get<float>()}, {config});
      CODA_CHECK_CUDA(cudaDeviceSynchronize());
      const Matrix got2 = download(two_step, &pad2);
      std::size_t differ = 0;
      for (std::size_t i = 0; i < got.v.size(); ++i)
        differ += !(got.v[i] == got2.v[i] || (std::isnan(got.v[i]) && std::isnan(got2.v[i])));
      EXPECT_EQ(differ, 0u) << "leaf and merge kernel + broadcast differ";
    }
  }
}

// D += acc by TMA reduce-add, onto a non-zero D.
TEST(EpiloguePrograms, ResidualAccumulate) {
  std::mt19937_64 rng(testing::fresh_seed("EpiloguePrograms.ResidualAccumulate"));
  for (const Shape& s : kShapes) {
    GemmCase g = make_case(s, rng);
    Matrix before = random_matrix(s.m, s.n, rng, 0.0f, 8.0f);
    const Matrix sum = ref::add(g.acc64, before);
    const Matrix sum_fw = ref::round_to_bf16(ref::add(g.acc_framework, before));
    for (TileConfig config : kExampleConfigs) {
      SCOPED_TRACE(trace(s, config));
      DeviceMatrix d = upload(before);  // padding NaN: must stay untouched
      residual_accumulate(d.view(), g.a.view(), g.b.view(), {}, {config});
      CODA_CHECK_CUDA(cudaDeviceSynchronize());
      bool pad = false;
      EXPECT_TRUE(meets_contract(download(d, &pad).v, sum.v, sum_fw.v, "D += acc"));
      EXPECT_TRUE(pad);
    }
  }
}

// Logits = acc → D;  per-tile log Σ exp and the target logit; merged lse. Ragged V, ignored
// rows, int32 and int64 targets, and logits of magnitude ~1e4.
TEST(EpiloguePrograms, CrossEntropyPartials) {
  std::mt19937_64 rng(testing::fresh_seed("EpiloguePrograms.CrossEntropyPartials"));
  for (const Shape& s : kShapes) {
    for (float a_scale : {1.0f, 2048.0f}) {
      GemmCase g = make_case(s, rng, a_scale);
      double biggest = 0;
      for (double v : g.acc64.v) biggest = std::max(biggest, std::abs(v));
      std::vector<std::int64_t> targets(s.m);
      std::uniform_int_distribution<std::int64_t> col(0, s.n - 1);
      for (int m = 0; m < s.m; ++m) targets[m] = m % 5 == 3 ? -100 : col(rng);
      for (bool int64 : {false, true}) {
        DeviceBuffer d_targets(s.m * 8);
        if (int64) d_targets.upload(targets);
        else d_targets.upload(std::vector<std::int32_t>(targets.begin(), targets.end()));
        for (TileConfig config : kExampleConfigs) {
          SCOPED_TRACE(trace(s, config) + (int64 ? " int64" : " int32") + " max |logit| " +
                       std::to_string(biggest));
          const TileDims tile = tile_of(config);
          const PartialLayout layout = per_row_partial_layout(config, s.m, s.n);
          DeviceMatrix d = output(s.m, s.n);
          DeviceBuffer partials(layout.floats() * 4), target_logits(s.m * 4), lse(s.m * 4);
          partials.poison();
          target_logits.poison();
          CrossEntropyPartialsParams params;
          params.lse_partials = partials.get<float>();
          params.lse_padded = layout.padded;
          params.targets = d_targets.get();
          params.targets_int64 = int64;
          params.target_logits = target_logits.get<float>();
          cross_entropy_partials(d.view(), g.a.view(), g.b.view(), params, {config});
          merge_lse_partials(partials.get<float>(), layout, s.m, lse.get<float>());
          CODA_CHECK_CUDA(cudaDeviceSynchronize());

          bool pad = false;
          EXPECT_TRUE(meets_contract(download(d, &pad).v, g.acc64.v, g.acc_framework.v, "D = logits"));
          const ref::Partials p = ref::per_row_lse_partials(g.acc64, tile.m, tile.n);
          const ref::Partials p_fw = ref::per_row_lse_partials(g.acc_framework, tile.m, tile.n);
          EXPECT_TRUE(meets_contract(valid_partials(partials.download<float>(), layout, s.m),
                                     valid_partials(p, s.m), valid_partials(p_fw, s.m),
                                     "lse partials"));
          auto lse_got = lse.download<float>();
          EXPECT_TRUE(meets_contract(std::vector<double>(lse_got.begin(), lse_got.end()),
                                     ref::merge_lse(p, s.m), ref::merge_lse(p_fw, s.m), "lse"));
          auto captured = target_logits.download<float>();
          std::vector<double> got, want, want_fw;
          std::size_t ignored_written = 0;
          for (int m = 0; m < s.m; ++m) {
            if (targets[m] == -100) {
              ignored_written += !std::isnan(captured[m]);  // still poisoned
              continue;
            }
            got.push_back(captured[m]);
            want.push_back(g.acc64(m, int(targets[m])));
            want_fw.push_back(g.acc_framework(m, int(targets[m])));
          }
          EXPECT_TRUE(meets_contract_bf16(got, want, want_fw, "target logits"));
          EXPECT_EQ(ignored_written, 0u) << "ignored rows must not be written";
        }
      }
    }
  }
}

}  // namespace
}  // namespace coda::epilogue
