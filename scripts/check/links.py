#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check the relative links of Markdown files.

Every relative link ([text](path), ![alt](path), [ref]: path) must name a
file or directory that exists, and every #anchor must be a heading (or an
<a id/name>) of the Markdown file it points into, with GitHub's rules for
turning a heading into an anchor. Links in fenced code blocks and code
spans are not links. http(s), mailto and other URLs with a scheme are not
checked (no network).

usage: links.py [--root DIR] [FILE.md ...]
With no FILE, every Markdown file git tracks under DIR (default: the
repository of this script). Prints one line per broken link,
"FILE:LINE: TARGET: why", and exits 1 if there is any, 0 if none.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Iterator

FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(?:.+?)\1")
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+[\"'(][^)]*)?\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ID = re.compile(r"<a\s+[^>]*(?:id|name)\s*=\s*[\"']([^\"']+)[\"']", re.I)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def outside_fences(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of the lines outside fenced code blocks."""
    fence = ""
    for num, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = ""
            continue
        if m:
            fence = m.group(1)
            continue
        yield num, line


def slug(heading: str) -> str:
    """GitHub's anchor of a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor a Markdown file defines."""
    seen: Counter[str] = Counter()
    found: set[str] = set()
    for _, line in outside_fences(path.read_text(encoding="utf-8")):
        found.update(HTML_ID.findall(line))
        h = HEADING.match(line)
        if not h:
            continue
        base = slug(h.group(2))
        n = seen[base]
        seen[base] += 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def links(path: Path) -> list[tuple[int, str]]:
    """(line number, target) of every link of a Markdown file."""
    out: list[tuple[int, str]] = []
    for num, line in outside_fences(path.read_text(encoding="utf-8")):
        line = CODE_SPAN.sub("", line)  # code spans are not links
        out.extend((num, t) for t in INLINE.findall(line))
        m = REFDEF.match(line)
        if m:
            out.append((num, m.group(1)))
    return out


class Checker:
    """Checks links, caching each target file's anchors."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cache: dict[Path, set[str]] = {}

    def why_broken(self, src: Path, target: str) -> str | None:
        """None if target resolves from src, else the reason."""
        if not target or SCHEME.match(target) or target.startswith("//"):
            return None
        path, _, anchor = target.partition("#")
        if path.startswith("/"):
            dest = self.root / path.lstrip("/")
        elif path:
            dest = src.parent / path
        else:
            dest = src
        if not dest.exists():
            return "no such file"
        if not anchor or dest.suffix.lower() != ".md" or dest.is_dir():
            return None
        dest = dest.resolve()
        if dest not in self.cache:
            self.cache[dest] = anchors(dest)
        if anchor not in self.cache[dest]:
            return f"no anchor #{anchor} in {os.path.relpath(dest, self.root)}"
        return None

    def check(self, files: list[Path]) -> list[str]:
        """One line per broken link of the files."""
        bad = []
        for f in files:
            for num, target in links(f):
                why = self.why_broken(f, target)
                if why:
                    bad.append(f"{os.path.relpath(f, self.root)}:{num}: {target}: {why}")
        return bad


def tracked_markdown(root: Path) -> list[Path]:
    """The Markdown files git tracks under root."""
    res = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--", "*.md"],
                         capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"git ls-files failed in {root}: {res.stderr.strip()}")
    return [root / p for p in res.stdout.split("\0") if p]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="Check relative links and anchors of Markdown files.")
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[2]),
                    help="repository root (default: this script's repository)")
    ap.add_argument("files", nargs="*", help="Markdown files (default: every tracked *.md)")
    args = ap.parse_args(argv)
    root = Path(args.root).resolve()
    try:
        files = [Path(f).resolve() for f in args.files] or tracked_markdown(root)
        missing = [str(f) for f in files if not f.is_file()]
        if missing:
            raise RuntimeError(f"no such file: {', '.join(missing)}")
        bad = Checker(root).check(files)
    except (OSError, RuntimeError, UnicodeDecodeError) as e:
        print(f"links.py: {e}", file=sys.stderr)
        return 2
    for line in bad:
        print(line)
    print(f"{len(files)} files, {len(bad)} broken links")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
