"""docs/writing-a-pass.md section 8 ("Debugging a broken pass"): every
command it shows runs, and the lines it shows are in the command's output."""

import re
import shlex
from pathlib import Path

import pytest

from rlxc.tools.opt import main

ROOT = Path(__file__).resolve().parent.parent
SECTION = (ROOT / "docs" / "writing-a-pass.md").read_text().split("## 8. Debugging a broken pass")[1]
EXAMPLES = re.findall(r"```sh\n(.*?)\n```\n```text\n(.*?)```", SECTION, re.S)


def test_section_has_examples():
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize("command, shown", EXAMPLES, ids=[f"example{i}" for i in range(len(EXAMPLES))])
def test_example_output(command, shown, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    args = shlex.split(command)
    assert args[0] == "rlxc-opt"
    main(args[1:])
    out = capsys.readouterr()
    text = out.out + out.err
    for line in shown.splitlines():
        assert line in text, f"{line!r} not in the output of {command}"
