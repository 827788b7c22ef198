"""rlxc-opt's inspection features (rlxc/tools/pass_runner.py): the pass tree
for timing, the debug counter, pattern statistics, round-trip checking."""

import pytest

from rlxc.context import parse_module
from rlxc.passes.pipelines import parse_pipeline
from rlxc.tools.opt import main
from rlxc.tools.pass_runner import PatternStats, RewriteCounter, instrument_patterns, pass_tree

TEXT = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = rlx.transpose %x perm = [0] : tensor<4xf32> -> tensor<4xf32>
  %1 = rlx.neg %0 : tensor<4xf32>
  %2 = rlx.neg %1 : tensor<4xf32>
  func.return %2 : tensor<4xf32>
}
"""


def test_pass_tree_follows_named_pipelines():
    passes = parse_pipeline("rlx-plan,cse").passes
    tree, paths = pass_tree(passes)
    assert [n.name for n in tree] == ["rlx-plan", "cse"]
    assert [n.name for n in tree[0].children][:5] == ["rlx-conv-to-gemm", "rlx-raise-attention", "rlx-merge-projections",
                                                       "rlx-unfuse", "canonicalize"]
    assert [len(p) for p in paths] == [2] * len(tree[0].children) + [1]


def test_rewrite_counter_window():
    c = RewriteCounter.parse("P:2:3")
    assert [c.allow() for _ in range(7)] == [False, False, True, True, True, False, False]
    c = RewriteCounter.parse("P:1:-1")
    assert [c.allow() for _ in range(4)] == [False, True, True, True]
    with pytest.raises(ValueError, match="expected PATTERN:skip:count"):
        RewriteCounter.parse("P:1")


def test_patterns_are_counted_inside_the_rewriter():
    from rlxc.context import make_context
    from rlxc.passes.pipelines import run_pipeline

    module = parse_module(TEXT)
    stats = PatternStats()
    with instrument_patterns(stats, {}):
        run_pipeline(module, "canonicalize")
    assert sum(stats.applied.values()) >= 1  # the identity transpose and -(-x) fold
    assert all(stats.attempted[n] >= k for n, k in stats.applied.items())
    # every applied pattern refused by a counter: nothing is rewritten by them
    applied = [n for n, k in stats.applied.items() if k]
    module = parse_module(TEXT)
    stats = PatternStats()
    with instrument_patterns(stats, {n: RewriteCounter(n, 0, 0) for n in applied}):
        after = run_pipeline(module, "canonicalize")
    assert sum(stats.applied.values()) == 0
    assert all(stats.refused[n] >= 1 for n in applied)
    assert "rlx.neg" in str(after)
    del make_context


def test_bad_counter_is_a_clean_error(tmp_path, capsys):
    f = tmp_path / "m.mlir"
    f.write_text(TEXT)
    assert main([str(f), "-p", "canonicalize", "--rewrite-counter=oops"]) == 1
    err = capsys.readouterr().err
    assert "expected PATTERN:skip:count" in err and "Traceback" not in err
