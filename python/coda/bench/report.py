# SPDX-License-Identifier: BSD-3-Clause
"""Results of the Python benchmarks: JSON rows, a PNG chart and a text table.

The JSON follows bench/results/*.json (top level: commit, date, gpu, command, rows; a row: name,
shape, `coda_ms`, `baseline` {name: ms}, a ratio, `headroom_captured`), extended with what a layer
row needs. Headroom captured = (t_compile - t_coda) / (t_compile - t_floor), as in RESULTS.md.
"""
from __future__ import annotations

import datetime
import json
import platform
from importlib import metadata
from pathlib import Path

import torch

from coda.provenance import git_commit


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def run_metadata(device: torch.device, command: list[str], **method) -> dict:
    gpu = torch.cuda.get_device_name(device) if device.type == "cuda" else f"cpu ({platform.processor() or 'unknown'})"
    return {"commit": git_commit(), "date": datetime.date.today().isoformat(), "gpu": gpu,
            "command": " ".join(command), "torch": torch.__version__,
            "transformers": _version("transformers"), "liger_kernel": _version("liger-kernel"),
            "method": method}


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    return numerator / denominator if numerator is not None and denominator else None


def headroom_captured(compile_ms: float | None, coda_ms: float | None, floor_ms: float | None) -> float | None:
    if compile_ms is None or coda_ms is None or floor_ms is None or compile_ms == floor_ms:
        return None
    return (compile_ms - coda_ms) / (compile_ms - floor_ms)


def layer_row(*, row: str, size: str, tokens: int, dims: dict, times_ms: dict[str, float | None],
              rounds_ms: dict[str, list[float]], peak_extra_gib: dict[str, float | None] | None,
              status: dict[str, str], checks: dict[str, dict], notes: str) -> dict:
    floor_ms = times_ms.get("floor")
    entry = {
        "name": f"layer_{row}", "shape": size, "M": tokens, "dims": dims,
        "coda_ms": times_ms.get("coda"),
        "baseline": {name: ms for name, ms in times_ms.items() if name != "coda"},
        "ratio_over_floor": {name: _ratio(ms, floor_ms) for name, ms in times_ms.items()},
        "headroom_captured": headroom_captured(times_ms.get("hf_compile"), times_ms.get("coda"), floor_ms),
        "rounds_ms": rounds_ms, "status": status, "checks": checks, "notes": notes,
    }
    if peak_extra_gib is not None:
        entry["peak_extra_gib"] = peak_extra_gib
    return entry


def write_json(path: Path, run: dict, rows: list[dict]) -> None:
    path.write_text(json.dumps({**run, "rows": rows}, indent=1) + "\n")


class RunRecord:
    """A benchmark run's JSON file, rewritten whole after every row (through a temporary file and a
    rename, so a reader never sees half of it): a run cut off by a time limit — a device call has
    one — keeps every row it finished. `complete` is false until finish()."""

    def __init__(self, path: Path, run: dict):
        self.path, self.run, self.rows = path, {**run, "complete": False}, []
        path.parent.mkdir(parents=True, exist_ok=True)
        self._write()

    def add(self, row: dict) -> None:
        self.rows.append(row)
        self._write()

    def finish(self) -> None:
        self.run["complete"] = True
        self._write()

    def _write(self) -> None:
        partial = self.path.with_name(self.path.name + ".partial")
        write_json(partial, self.run, self.rows)
        partial.replace(self.path)


def _times(row: dict) -> dict[str, float | None]:
    return {**row["baseline"], "coda": row["coda_ms"]}


def write_chart(path: Path, rows: list[dict], variants: list[str]) -> str:
    """Grouped bars, one group per (size, row), one bar per variant: time / floor. Returns a note."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        return f"no chart ({error})"
    shown = [name for name in variants if any(_times(row).get(name) for row in rows)]
    groups = [f"{row['shape']}\n{row['name'].removeprefix('layer_')}" for row in rows]
    width = 0.8 / max(len(shown), 1)
    figure, axes = plt.subplots(figsize=(max(6.0, 1.1 * len(rows) * max(len(shown), 1) * 0.45 + 2), 4.5))
    for index, name in enumerate(shown):
        heights = [row["ratio_over_floor"].get(name) or 0.0 for row in rows]
        positions = [group + (index - (len(shown) - 1) / 2) * width for group in range(len(rows))]
        axes.bar(positions, heights, width, label=name)
    axes.axhline(1.0, color="black", linewidth=0.8)
    axes.set_xticks(range(len(rows)), groups)
    axes.set_ylabel("time / floor (GEMMs + SDPA alone)")
    axes.set_title(f"Llama-3 decoder layer, bf16, M = {rows[0]['M'] if rows else '?'} tokens")
    axes.legend(fontsize="small", ncols=min(len(shown), 5))
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return f"chart {path}"


def _cell(ms: float | None, ratio: float | None) -> str:
    if ms is None:
        return "-"
    return f"{ms:.3f} ({ratio:.2f}x)" if ratio is not None else f"{ms:.3f}"


def row_line(row: dict) -> str:
    times = _times(row)
    cells = ", ".join(f"{name} {_cell(ms, row['ratio_over_floor'].get(name))}" for name, ms in times.items()
                      if ms is not None)
    return f"[{row['shape']}] {row['name']}: {cells}"


def format_table(rows: list[dict], variants: list[str]) -> str:
    """ms (x floor) per variant, headroom captured, which variants passed the output check; then why
    any variant did not run."""
    header = ["row", "size", "M", *variants, "headroom", "checks"]
    lines = [header]
    for row in rows:
        times = _times(row)
        checks = " ".join(f"{name}:{'-' if check['pass'] is None else 'ok' if check['pass'] else 'FAIL'}"
                          for name, check in row["checks"].items())
        headroom = row["headroom_captured"]
        lines.append([row["name"], row["shape"], str(row["M"]),
                      *(_cell(times.get(name), row["ratio_over_floor"].get(name))
                        if times.get(name) is not None else row["status"].get(name, "-").split(":")[0]
                        for name in variants),
                      "-" if headroom is None else f"{headroom:.2f}", checks])
    widths = [max(len(line[column]) for line in lines) for column in range(len(header))]
    table = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in lines]
    reasons = {f"{name}: {status}" for row in rows for name, status in row["status"].items() if status != "ok"}
    return "\n".join(table + sorted(reasons))
