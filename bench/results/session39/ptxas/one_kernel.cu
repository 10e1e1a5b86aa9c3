// Session 39: one QK-norm program kernel alone, for ptxas -v (ptxas/spills.sh defines TILECFG, PROGNAME).
#include "coda/programs/qk_norm_rope.hpp"
#include "coda/gemm/launch.hpp"
namespace coda::epilogue::instances {
void one(const gemm::GemmProblem& p, const gemm::KernelChoice& c, const PROGNAME::Params& e,
         void* workspace, cudaStream_t stream) {
  using K = gemm::GemmKernel<gemm::OperandLayout::kAkBk, cutlass::bfloat16_t,
                             gemm::TileConfig::TILECFG, PROGNAME>;
  K::FusionArguments fusion{};
  PROGNAME::fill(fusion, e);
  gemm::launch_gemm<K>(p, c, fusion, workspace, stream);
}
}
