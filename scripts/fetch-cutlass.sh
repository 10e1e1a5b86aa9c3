#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fills third_party/cutlass (git-ignored) with the CUTLASS 4.2 headers from the nvidia-cutlass
# wheel, so they can travel with the working tree to a machine without internet (the GPU box
# carries this folder). CMake finds it there before looking for the wheel.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=third_party/cutlass
root=$(python3 -c "import importlib.util, os; s = importlib.util.find_spec('cutlass_library'); print(os.path.join(list(s.submodule_search_locations)[0], 'source') if s else '')")
if [ -z "$root" ] || [ ! -f "$root/include/cutlass/version.h" ]; then
  python3 -m pip install --quiet --no-deps nvidia-cutlass==4.2.0.0
  root=$(python3 -c "import importlib.util, os; s = importlib.util.find_spec('cutlass_library'); print(os.path.join(list(s.submodule_search_locations)[0], 'source'))")
fi
rm -rf "$dest"
mkdir -p "$dest/tools/util"
cp -r "$root/include" "$dest/include"
cp -r "$root/tools/util/include" "$dest/tools/util/include"
echo "CUTLASS headers in $dest ($(du -sh "$dest" | cut -f1))"
