#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The slim folder a device call carries for scripts/wheel-ab.sh and the session scripts (a call
# carries at most 64 MiB; .prebuilt's binaries alone are ~30 MB). After
# `CODA_BINARIES=1 scripts/build-wheel.sh`:
#   scripts/pack-ab-wheel.sh NAME   -> .prebuilt/ab/NAME/{COMMIT, coda-*.whl, tests.tar.xz}
# tests.tar.xz holds coda_device_tests (xz: ~17 MB -> ~2 MB); a call unpacks it with
#   tar -xJf .prebuilt/ab/NAME/tests.tar.xz -C .prebuilt/ab/NAME
# It is packed in a private temporary folder: two builds packing at once cannot mix their binaries
# (the 46th session's ad-hoc packing through /tmp did). CODA_PREBUILT: the folder build-wheel.sh
# filled (default .prebuilt, at the repository root).
set -euo pipefail
cd "$(dirname "$0")/.."
prebuilt=${CODA_PREBUILT:-.prebuilt}
name=${1:-}
case $name in
  '' | */* | .*) echo "pack-ab-wheel: NAME must be a plain folder name; got '$name'" >&2; exit 2 ;;
esac
for f in "$prebuilt/COMMIT" "$prebuilt/coda_device_tests"; do
  [ -f "$f" ] || { echo "pack-ab-wheel: $f is missing: run CODA_BINARIES=1 scripts/build-wheel.sh first" >&2; exit 2; }
done
shopt -s nullglob
wheels=("$prebuilt"/coda-*.whl)
[ ${#wheels[@]} -eq 1 ] || { echo "pack-ab-wheel: expected one $prebuilt/coda-*.whl, found ${#wheels[@]}" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$prebuilt/coda_device_tests" "$tmp/"
tar -cJf "$tmp/tests.tar.xz" -C "$tmp" coda_device_tests
out=$prebuilt/ab/$name
rm -rf "$out"
mkdir -p "$out"
cp "$prebuilt/COMMIT" "${wheels[0]}" "$tmp/tests.tar.xz" "$out/"
echo "$out: $(cat "$out/COMMIT"), $(du -sh "$out" | cut -f1)"
