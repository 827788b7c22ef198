"""Runs benchmarks/kernels.py (or pytest) with some of rlxc.codegen.rows's
table of thresholds changed (or another codegen module's, named as
MODULE.NAME: `elementwise.UNROLL=2,4`), to compare forms in one device call:

    python3 benchmarks/variant.py NAME=VALUE [NAME=VALUE ...] -- kernels.py args
    python3 benchmarks/variant.py NAME=VALUE ... --pytest -- pytest args
    python3 benchmarks/variant.py NAME=A,B[,C] [NAME=VALUE ...] -- kernels.py args --out DIR

With several values for one name (`A,B`), kernels.py runs once per value in
this one process (torch, the CUDA context and NVRTC's cache are set up
once), each run's results in DIR/NAME-VALUE/kernels.json, and a table of
rlxc's time per case under each value follows (the first value is the
reference); `python3 benchmarks/variant.py --compare A.json B.json`
prints the same table for two earlier runs. Tuples of strings are written
with `+` between their items (`STREAM_DTYPES=f16+bf16,f32+f16+bf16`), and
tables of int tuples with `:` inside an item
(`STREAM_WINDOW_THREADS=+,1400:256+3200:512`: empty, then two pairs).
"""

from __future__ import annotations

import importlib
import json
import runpy
import sys
from pathlib import Path

from rlxc.codegen import rows


def owner(name: str):
    """(object, attribute) of NAME (rows'), MODULE.NAME (rlxc.codegen.MODULE's)
    or rlxc.PATH.NAME (any rlxc module's, or a class's in one:
    `rlxc.dialects.rlx.elementwise.SomeOp.NAME`)."""
    path, _, attr = name.rpartition(".")
    if not path.startswith("rlxc"):
        mod = importlib.import_module(f"rlxc.codegen.{path}") if path else rows
    else:  # the longest importable prefix, then attributes down to the owner
        parts = path.split(".")
        for k in range(len(parts), 0, -1):
            try:
                mod = importlib.import_module(".".join(parts[:k]))
                break
            except ModuleNotFoundError:
                continue
        for part in parts[k:]:
            if not hasattr(mod, part):
                raise SystemExit(f"{getattr(mod, '__name__', mod)} has no {part}")
            mod = getattr(mod, part)
    if not hasattr(mod, attr):
        raise SystemExit(f"{getattr(mod, '__name__', mod)} has no {attr}")
    return mod, attr


def qualified(name: str) -> str:
    """NAME as MODULE.NAME (rows.NAME for rows' own)."""
    return name if "." in name else f"rows.{name}"


def parse_value(name: str, text: str):
    """`text` as a value of NAME's type (ints, floats, True/False, a string, or a
    tuple of strings written with `+` between them, since `,` separates
    values: `STREAM_DTYPES=f16+bf16,f32+f16+bf16`; `+` alone is the empty
    tuple; a table of int tuples with `:` in each item:
    `STREAM_WINDOW_THREADS=1400:256+3200:512`)."""
    mod, attr = owner(name)
    current = getattr(mod, attr)
    kind = type(current)
    if kind is tuple:
        items = tuple(x for x in text.split("+") if x)
        if not items:
            return ()
        if any(":" in x for x in items):
            if any(not isinstance(x, tuple) for x in current):
                raise SystemExit(f"{name} is not a table of tuples: give its items without `:`")
            try:
                return tuple(tuple(int(p) for p in x.split(":")) for x in items)
            except ValueError:
                raise SystemExit(f"{name}: items of ints joined by `:`, not {text!r}") from None
        if any(not isinstance(x, str) for x in current):
            raise SystemExit(f"{name} is a table of tuples: write its items as A:B (`+` alone for none)")
        return items
    if kind is bool:
        if text not in ("True", "False", "1", "0"):
            raise SystemExit(f"{name} is a bool: give True or False, not {text!r}")
        return text in ("True", "1")
    if kind is str:
        return text
    try:
        return float(text) if kind is float else kind(int(text))
    except ValueError:
        raise SystemExit(f"{name} is a{'' if kind is int else ' float'} number, not {text!r}") from None


def spell(value) -> str:
    """A value as the command line writes it (tuples with `+`, and `:`
    inside a table's items)."""
    if not isinstance(value, tuple):
        return str(value)
    return "+".join(":".join(map(str, x)) if isinstance(x, tuple) else x for x in value) or "+"


def _percent(frac: float | None) -> str:
    """A fraction as a whole percentage; "—" for none (a case that moves nothing)."""
    return "—" if frac is None else f"{100 * frac:.0f}%"


def compare(paths: list[Path], labels: list[str]) -> list[str]:
    """Markdown lines: rlxc's µs per case under each run, and each run's
    change against the first (+: faster)."""
    runs = [json.loads(p.read_text()) for p in paths]

    def key(r):
        return r["op"], r["dtype"], r["n"], r["mb"]

    by_key = [{key(r): r for r in run["rows"] if r.get("rlxc_ms")} for run in runs]
    lines = ["| op | dtype | row | MB | " + " | ".join(f"{lab} µs" for lab in labels)
             + "".join(f" | {lab} vs {labels[0]}" for lab in labels[1:]) + " | % copy (last) |",
             "| --- | --- | ---: | ---: |" + " ---: |" * (2 * len(labels) - 1) + " ---: |"]
    for k, first in by_key[0].items():
        cells = [m.get(k) for m in by_key]
        if any(c is None for c in cells):
            continue
        us = [c["rlxc_ms"] * 1e3 for c in cells]
        gains = "".join(f" | {100 * (us[0] / u - 1):+.1f}%" for u in us[1:])
        lines.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | " + " | ".join(f"{u:.1f}" for u in us)
                     + f"{gains} | {_percent(cells[-1].get('copy_frac'))} |")
    return lines


def main() -> int:
    argv = sys.argv[1:]
    if argv[:1] == ["--compare"]:
        paths = [Path(p) for p in argv[1:]]
        print("\n".join(compare(paths, [p.parent.name or p.stem for p in paths])))
        return 0
    split = argv.index("--") if "--" in argv else len(argv)
    settings, rest = argv[:split], argv[split + 1:]
    use_pytest = "--pytest" in settings
    several = []
    for s in settings:
        if s == "--pytest":
            continue
        name, value = s.split("=", 1)
        values = [parse_value(name, v) for v in value.split(",")]
        if len(values) > 1:
            several.append((name, values))
            continue
        setattr(*owner(name), values[0])
        print(f"# {qualified(name)} = {values[0]!r}", flush=True)
    if use_pytest:
        if several:
            raise SystemExit("--pytest takes one value per name")
        import pytest

        return pytest.main(rest)
    script = str(Path(__file__).with_name("kernels.py"))
    if not several:
        sys.argv = ["kernels.py", *rest]
        runpy.run_path(script, run_name="__main__")
        return 0
    if len(several) > 1:
        raise SystemExit("several values for one name at a time")
    if "--out" not in rest:
        raise SystemExit("several values need --out DIR (each run's results go to DIR/NAME-VALUE)")
    name, values = several[0]
    at = rest.index("--out") + 1
    out = Path(rest[at])
    dirs = []
    for v in values:
        setattr(*owner(name), v)
        print(f"# {qualified(name)} = {v!r}", flush=True)
        d = out / f"{name}-{spell(v)}"
        sys.argv = ["kernels.py", *rest[:at], str(d), *rest[at + 1:]]
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as e:  # kernels.py's main returns its status through SystemExit
            if e.code:
                raise
        dirs.append(d / "kernels.json")
    if not all(d.exists() for d in dirs):  # --dry-run writes no results
        print(f"\n(no results to compare: {', '.join(str(d) for d in dirs if not d.exists())} not written)")
        return 0
    table = compare(dirs, [f"{name}={spell(v)}" for v in values])
    print("\n".join(["", *table]))
    (out / f"{name}.md").write_text("\n".join(table) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
