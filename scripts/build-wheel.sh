#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds the Python package's wheel here, for the GPU machine, so that a device call installs it in
# seconds instead of compiling every kernel there (~3 min of each call on 16 cores):
#   scripts/build-wheel.sh [PYTHON]     -> .prebuilt/coda-<version>-cp3XX-*.whl
# PYTHON: the interpreter to build for, the GPU machine's Python version (3.12 there; default:
# python3.12). It needs nanobind and scikit-build-core (pip install nanobind scikit-build-core).
# libstdc++ is linked statically (CODA_STATIC_LIBSTDCXX), as for the carried C++ binaries. A build
# directory outside the checkout makes a rebuild incremental. Then carry .prebuilt and run e.g.
#   CODA_WHEEL=$(ls .prebuilt/coda-*.whl) scripts/device-run.sh ops-py
# CODA_BINARIES=1: the same build also makes coda_device_tests and coda-bench (the kernels compile
# once for both) and copies them to .prebuilt with their commit (.prebuilt/COMMIT), for
# CODA_PREBUILT=.prebuilt scripts/device-run.sh.
# Reusing the kernels CI compiled (seconds instead of ~1 h on 2 cores): ccache hits only where the
# compile lines match .ci/run's, so build in the checkout's build-ci with CI's ccache settings and
# the CUTLASS headers CI used (the nvidia-cutlass wheel of CI's python3):
#   CCACHE_DIR=~/.cache/ccache-coda CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1 \
#   CMAKE_CUDA_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache \
#   CUTLASS_DIR=$(python3 -c "import cutlass_library, os; print(os.path.join(cutlass_library.__path__[0], 'source'))") \
#   CODA_WHEEL_BUILD_DIR=$PWD/build-ci scripts/build-wheel.sh python3.12
# (thirty-sixth session: 103 of 105 units hit; only the Python module compiles for the other Python.)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-python3.12}
build=${CODA_WHEEL_BUILD_DIR:-${TMPDIR:-/tmp}/coda-wheel-build}
binaries=${CODA_BINARIES:-0}
[ -d third_party/cutlass ] || [ -n "${CUTLASS_DIR:-}" ] || scripts/fetch-cutlass.sh
mkdir -p .prebuilt
rm -f .prebuilt/coda-*.whl
"$python" -m pip wheel --no-deps --no-build-isolation -w .prebuilt -Cbuild-dir="$build" \
  -Ccmake.define.CODA_STATIC_LIBSTDCXX=ON \
  -Ccmake.define.CODA_BUILD_TESTS=$([ "$binaries" = 1 ] && echo ON || echo OFF) \
  -Ccmake.define.CODA_BUILD_BENCH=$([ "$binaries" = 1 ] && echo ON || echo OFF) .
if [ "$binaries" = 1 ]; then
  cp "$build/tests/coda_device_tests" "$build/bench/coda-bench" .prebuilt/
  # The binaries' commit (as the wheel's coda/_build_commit.py has it), for their JSON labels.
  sed -n 's/^COMMIT = "\(.*\)"$/\1/p' "$build/python/coda/_build_commit.py" > .prebuilt/COMMIT
fi
ls -la .prebuilt/
