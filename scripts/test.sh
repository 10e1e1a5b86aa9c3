#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The test command: build every kernel for sm_90a once — the Python package (pip install ., which
# drives CMake through scikit-build-core) with the C++ tests and benchmarks in the same build
# tree — then run the C++ tests through ctest and the Python tests through pytest. Without a
# Hopper GPU the device tests report "skipped" (never passed); CODA_REQUIRE_GPU=1 fails them
# instead.
#   BUILD_DIR (default build), JOBS (default: all cores; kernel TUs are capped by memory).
# Needs scikit-build-core, nanobind, pytest, torch and transformers in the python3 on PATH
# (.ci/run installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
export CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-$(nproc)}
python3 -m pip install --no-build-isolation --no-deps -v -Cbuild-dir="$build" \
  -Ccmake.define.CODA_BUILD_TESTS=ON -Ccmake.define.CODA_BUILD_BENCH=ON .
ctest --test-dir "$build" --output-on-failure
# From outside the checkout, so that `coda` is the installed package (with coda._C).
(cd "$build" && python3 -m pytest -q -p no:cacheprovider "$OLDPWD/tests/python")
