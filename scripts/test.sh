#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The test command: build every kernel for sm_90a once — the Python package (pip install ., which
# drives CMake through scikit-build-core) with the C++ tests and benchmarks in the same build
# tree — then run the C++ tests through ctest and the Python tests through pytest. Without a
# Hopper GPU the device tests report "skipped" (never passed); CODA_REQUIRE_GPU=1 fails them
# instead.
#   BUILD_DIR (default build), JOBS (default: all cores; kernel TUs are capped by memory).
# Installs what the build and the Python tests need into the python3 on PATH when missing
# (the CUTLASS 4.2 headers' wheel unless third_party/cutlass or CUTLASS_DIR has them;
# scikit-build-core, nanobind, pytest, numpy, torch, transformers, matplotlib, tqdm; pip, from PyPI).
set -euo pipefail
cd "$(dirname "$0")/.."
has_module() {
  python3 -c "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('$1') else 1)"
}
if [ ! -d third_party/cutlass ] && [ -z "${CUTLASS_DIR:-}" ] && ! has_module cutlass_library; then
  python3 -m pip install --quiet --no-deps nvidia-cutlass==4.2.0.0
fi
pip_missing=()
for spec in nanobind:nanobind scikit_build_core:scikit-build-core pytest:pytest numpy:numpy \
            torch:torch transformers:transformers matplotlib:matplotlib tqdm:tqdm; do
  has_module "${spec%%:*}" || pip_missing+=("${spec#*:}")
done
if [ ${#pip_missing[@]} -gt 0 ]; then
  echo "pip installing: ${pip_missing[*]}"
  python3 -m pip install --quiet "${pip_missing[@]}"
fi
build=${BUILD_DIR:-build}
export CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-$(nproc)}
python3 -m pip install --no-build-isolation --no-deps -v -Cbuild-dir="$build" \
  -Ccmake.define.CODA_BUILD_TESTS=ON -Ccmake.define.CODA_BUILD_BENCH=ON .
ctest --test-dir "$build" --output-on-failure
# From outside the checkout, so that `coda` is the installed package (with coda._C), which this
# script has just built from the checkout (a test compares its baked commit with HEAD).
(cd "$build" && CODA_TEST_BUILT_FROM_CHECKOUT=1 python3 -m pytest -q -p no:cacheprovider "$OLDPWD/tests/python")
