"""The layering of `rlxc/` as a test.

Reads the package table of docs/ARCHITECTURE.md ("may import") and every
import statement of every file under rlxc/, and fails on

* an import of an rlxc package or module that the importing file's row does
  not allow: module-level imports always, function-level ones too unless the
  document's second table lists that edge;
* a cycle among the module-level imports between files.

The document is the single source: change the table there, not here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "rlxc"
DOC = ROOT / "docs" / "ARCHITECTURE.md"


def unit_of_path(path: Path) -> str:
    """`dialects` for rlxc/dialects/..., `driver` for rlxc/driver.py,
    `__init__` for rlxc/__init__.py."""
    rel = path.relative_to(PKG)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def unit_of_module(dotted: str) -> str | None:
    """The unit an imported rlxc module belongs to, None outside rlxc."""
    parts = dotted.split(".")
    if parts[0] != "rlxc":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _tables(text: str) -> list[list[list[str]]]:
    tables, current = [], []
    for line in text.splitlines():
        if line.lstrip().startswith("|"):
            current.append(_cells(line))
        elif current:
            tables.append(current)
            current = []
    if current:
        tables.append(current)
    return tables


def read_rules() -> tuple[dict[str, set[str] | None], set[tuple[str, str]]]:
    """(unit -> allowed units, None for everything; allowed lazy edges as
    (file relative to the repo, unit))."""
    text = DOC.read_text()
    packages = text[text.index("## Packages") :]
    tables = _tables(packages)
    allowed: dict[str, set[str] | None] = {}
    for row in tables[0][2:]:
        path = re.findall(r"`rlxc/([^`/]+)(?:/|\.py)`", row[0])
        if not path:
            continue
        (unit,) = path
        rule = row[2]
        allowed[unit] = None if rule.strip() == "everything" else set(re.findall(r"`(\w+)`", rule.split("—")[0]))
    lazy = set()
    for row in tables[1][2:]:
        (src,) = re.findall(r"`([^`]+)`", row[0])
        lazy |= {(src, u) for u in re.findall(r"`(\w+)`", row[1])}
    return allowed, lazy


def imports(path: Path) -> list[tuple[str, bool, int]]:
    """(imported module, at module level, line) for each rlxc import."""
    tree = ast.parse(path.read_text(), str(path))
    # the package a relative import starts from
    pkg_parts = list(path.relative_to(ROOT).parts[:-1]) if path.is_relative_to(ROOT) else []
    out = []

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = top and not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if isinstance(child, ast.Import):
                out.extend((a.name, top, child.lineno) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = ".".join(pkg_parts[: len(pkg_parts) - child.level + 1])
                    mod = f"{base}.{child.module}" if child.module else base
                else:
                    mod = child.module or ""
                for a in child.names:  # `from rlxc.dialects import rlx` imports a module
                    sub = f"{mod}.{a.name}"
                    as_path = ROOT / Path(*sub.split("."))
                    is_module = as_path.with_suffix(".py").exists() or (as_path / "__init__.py").exists()
                    out.append((sub if is_module else mod, top, child.lineno))
            visit(child, inner)

    visit(tree, True)
    return [(m, top, line) for m, top, line in out if m.split(".")[0] == "rlxc"]


FILES = sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


def test_table_names_every_unit():
    allowed, _ = read_rules()
    units = {unit_of_path(p) for p in FILES}
    missing = units - set(allowed)
    assert not missing, f"docs/ARCHITECTURE.md's package table has no row for: {sorted(missing)}"
    for unit, rule in allowed.items():
        assert rule is None or rule <= units, f"row {unit} names unknown units {rule - units}"


def violations(path: Path, me: str, rel: str) -> list[str]:
    """The imports of `path` (a file of unit `me`) that the table forbids."""
    allowed, lazy = read_rules()
    rule = allowed[me]
    bad = []
    for mod, top, line in imports(path):
        unit = unit_of_module(mod)
        if unit is None or unit == me or rule is None or unit in rule:
            continue
        if not top and (rel, unit) in lazy:
            continue
        where = "module level" if top else "inside a function"
        bad.append(f"{rel}:{line}: imports {mod} ({where}); `rlxc/{me}` may import {sorted(rule) or 'no rlxc package'}")
    return bad


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_follow_the_table(path: Path):
    bad = violations(path, unit_of_path(path), str(path.relative_to(ROOT)))
    assert not bad, "\n".join(bad)


def test_no_import_cycles_between_files():
    def module_name(p: Path) -> str:
        parts = list(p.relative_to(ROOT).with_suffix("").parts)
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    graph = {module_name(p): {m for m, top, _ in imports(p) if top} for p in FILES}
    for deps in graph.values():
        deps &= set(graph)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def strong(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v] - {v}):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    assert not cycles, f"module-level import cycles: {cycles}"


def test_the_checker_catches_forbidden_imports(tmp_path):
    """The checker is not vacuous: a runtime file importing passes, even
    inside a function, and a dialect importing the interpreter are flagged;
    the listed lazy edge is not."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from rlxc.dialects import rlx\n"
        "def f():\n"
        "    from rlxc.passes.pipelines import run_pipeline\n"
    )
    bad = violations(probe, "runtime", "rlxc/runtime/probe.py")
    assert len(bad) == 1 and "rlxc.passes.pipelines (inside a function)" in bad[0]
    probe.write_text("import rlxc.interp\ndef g():\n    from rlxc.passes import canonicalization\n")
    assert len(violations(probe, "dialects", "rlxc/dialects/probe.py")) == 2
    assert len(violations(probe, "dialects", "rlxc/dialects/rlx/base.py")) == 1
