#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Test of the Markdown link checker (scripts/check/links.py) on a small
fixed tree: good links pass, each kind of broken link fails with its exact
line. KTAP output with a "# Totals:" line.

    /usr/bin/python3 selftests/docs/test_links.py

Stdlib only.
"""

import os
import subprocess
import sys
import tempfile
from typing import Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import ktap  # noqa: E402  (selftests/ktap.py)

LINKS = os.path.join(HERE, "..", "..", "scripts", "check", "links.py")


GOOD: Dict[str, str] = {
    "README.md": (
        "# Top\n\n"
        "See [guide](docs/guide.md), [its part](docs/guide.md#a-part-with-code),\n"
        "the [second one](docs/guide.md#same-1), [here](#top), [dir](docs/),\n"
        "![img](docs/img.png), [web](https://example.com/x#y), [mail](mailto:a@b),\n"
        "[code](src/a.c#L3) and [ref][r].\n\n"
        "[r]: docs/guide.md#whats-new-v2\n"
        "```\n[not a link](missing.md)\n```\n"
        "Inline `[not a link](missing.md)` either.\n"),
    "docs/guide.md": (
        "# Guide\n\n## A part with `code`\n\n## Same\n\n## Same\n\n"
        "## What's new: v2!\n\n<a id=\"custom\"></a>\n"
        "Back to [the top](../README.md#top), [custom](#custom).\n"),
    "docs/img.png": "",
    "src/a.c": "int a;\n",
}



def check(extra: Dict[str, str]) -> Tuple[int, List[str]]:
    """Run links.py on GOOD plus extra (in a fresh git repository); its
    exit status and output lines."""
    with tempfile.TemporaryDirectory() as root:
        for name, text in {**GOOD, **extra}.items():
            path = os.path.join(root, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        for cmd in (["git", "init", "-q"], ["git", "add", "-A"]):
            subprocess.run(cmd, cwd=root, check=True)
        res = subprocess.run([sys.executable, LINKS, "--root", root],
                             capture_output=True, text=True, check=False)
    return res.returncode, res.stdout.splitlines()


def expect_broken(extra: Dict[str, str], lines: List[str]) -> None:
    rc, out = check(extra)
    assert rc == 1, (rc, out)
    files = len([n for n in {**GOOD, **extra} if n.endswith(".md")])
    assert out == lines + [f"{files} files, {len(lines)} broken links"], out


@ktap.test("good links pass")
def t_good() -> None:
    rc, out = check({})
    assert (rc, out) == (0, ["2 files, 0 broken links"]), (rc, out)


@ktap.test("missing file fails")
def t_missing_file() -> None:
    expect_broken({"docs/new.md": "x\n\nsee [it](gone.md) and [img](../nope.png)\n"},
                  ["docs/new.md:3: gone.md: no such file",
                   "docs/new.md:3: ../nope.png: no such file"])


@ktap.test("missing anchor in another file fails")
def t_missing_anchor() -> None:
    expect_broken({"x.md": "[a](docs/guide.md#a-part-with-code-)\n"},
                  ["x.md:1: docs/guide.md#a-part-with-code-: "
                   "no anchor #a-part-with-code- in docs/guide.md"])


@ktap.test("missing anchor in the same file fails")
def t_missing_self_anchor() -> None:
    expect_broken({"x.md": "# One\n[a](#one) [b](#two)\n"},
                  ["x.md:2: #two: no anchor #two in x.md"])


@ktap.test("third duplicate heading anchor does not exist")
def t_duplicates() -> None:
    expect_broken({"x.md": "[a](docs/guide.md#same-2)\n"},
                  ["x.md:1: docs/guide.md#same-2: no anchor #same-2 in docs/guide.md"])


@ktap.test("broken reference definition fails")
def t_refdef() -> None:
    expect_broken({"x.md": "[t][r]\n\n[r]: docs/missing.md\n"},
                  ["x.md:3: docs/missing.md: no such file"])


@ktap.test("untracked files are not checked")
def t_untracked() -> None:
    with tempfile.TemporaryDirectory() as root:
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        with open(os.path.join(root, "x.md"), "w", encoding="utf-8") as f:
            f.write("[a](gone.md)\n")
        res = subprocess.run([sys.executable, LINKS, "--root", root],
                             capture_output=True, text=True, check=False)
        assert (res.returncode, res.stdout) == (0, "0 files, 0 broken links\n"), res
        res = subprocess.run([sys.executable, LINKS, "--root", root,
                              os.path.join(root, "x.md")],
                             capture_output=True, text=True, check=False)
        assert res.returncode == 1, res


@ktap.test("a file that does not exist is a usage error")
def t_usage() -> None:
    res = subprocess.run([sys.executable, LINKS, "/nonexistent/x.md"],
                         capture_output=True, text=True, check=False)
    assert res.returncode == 2, res
    assert res.stderr == "links.py: no such file: /nonexistent/x.md\n", res.stderr


if __name__ == "__main__":
    sys.exit(ktap.run())
