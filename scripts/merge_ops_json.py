#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Joins `coda-bench ops [--bwd]` JSON with bench/torch_ops_fwd.py (torch_ops_bwd.py) JSON from the
same device call into the ops_fwd.json (ops_bwd.json) of bench/results: baselines cublas_gemm, torch_eager, torch_compile, and the share of
the torch.compile headroom captured, (t_compile − t_coda) / (t_compile − t_gemm), t_gemm = cuBLAS.

    python3 scripts/merge_ops_json.py coda_ops.json torch_ops.json > ops_fwd.json
"""
import json
import sys


def main():
    coda = json.load(open(sys.argv[1]))
    torch_rows = {(r["name"], r["shape"]): r for r in json.load(open(sys.argv[2]))["rows"]}
    for row in coda["rows"]:
        t = torch_rows.get((row["name"], row["shape"]))
        if not t:
            continue
        row["baseline"].update({k: v for k, v in t.items()
                                if k in ("torch_eager", "torch_compile", "torch_gemm")
                                or k.endswith("_peak_extra_gib")})
        if "cublas_gemm" in row["baseline"]:  # memory-pass ops have no GEMM: no headroom figure
            headroom = t["torch_compile"] - row["baseline"]["cublas_gemm"]
            row["headroom_captured"] = (t["torch_compile"] - row["coda_ms"]) / headroom if headroom > 0 else None
    json.dump(coda, sys.stdout, indent=1)
    print()
    print("| op | shape | coda ms | cuBLAS ms | × cuBLAS | eager ms | compile ms | headroom captured |",
          file=sys.stderr)
    print("| --- | --- | --- | --- | --- | --- | --- | --- |", file=sys.stderr)
    for r in coda["rows"]:
        b = r["baseline"]
        h = r.get("headroom_captured")
        gemm = b.get("cublas_gemm", b.get("three_gemms", float("nan")))
        ratio = r.get("ratio_over_cublas", r.get("ratio_over_three_gemms", float("nan")))
        print(f"| {r['name']} | {r['shape']} | {r['coda_ms']:.3f} | {gemm:.3f} | "
              f"{ratio:.3f} | {b.get('torch_eager', float('nan')):.3f} | "
              f"{b.get('torch_compile', float('nan')):.3f} | "
              f"{'n/a' if h is None else f'{h:.2f}'} |", file=sys.stderr)


if __name__ == "__main__":
    main()
