"""Runs benchmarks/kernels.py (or pytest) with some of rlxc.codegen.rows's
table of thresholds changed, to compare forms in one device call:

    python3 benchmarks/variant.py NAME=VALUE [NAME=VALUE ...] -- kernels.py args
    python3 benchmarks/variant.py NAME=VALUE ... --pytest -- pytest args
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

from rlxc.codegen import rows


def main() -> int:
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    settings, rest = argv[:split], argv[split + 1:]
    use_pytest = "--pytest" in settings
    for s in settings:
        if s == "--pytest":
            continue
        name, value = s.split("=", 1)
        if not hasattr(rows, name):
            raise SystemExit(f"rlxc.codegen.rows has no {name}")
        setattr(rows, name, type(getattr(rows, name))(int(value)) if value.lstrip("-").isdigit() else value == "True")
        print(f"# rows.{name} = {getattr(rows, name)!r}", flush=True)
    if use_pytest:
        import pytest

        return pytest.main(rest)
    sys.argv = ["kernels.py", *rest]
    runpy.run_path(str(Path(__file__).with_name("kernels.py")), run_name="__main__")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
