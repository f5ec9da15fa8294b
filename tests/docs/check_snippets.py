#!/usr/bin/env python3
"""Every C++ block of the README and of docs/*.md is code that is compiled and run: a section of
docs/snippets/*.cpp (built and run by ctest, label docs) or lines of an example (examples/*.cpp,
built and run by ctest, label examples), word for word up to indentation.

    check_snippets.py REPO_ROOT

Exits 1 naming each block found nowhere (its file and line), so that the docs cannot drift from
code that works.
"""
import glob
import os
import sys


def dedent(lines):
    lines = [l.rstrip() for l in lines]
    indents = [len(l) - len(l.lstrip()) for l in lines if l.strip()]
    cut = min(indents) if indents else 0
    return [l[cut:] if l.strip() else "" for l in lines]


def blocks(path):
    """(line number, lines) of each ```cpp block of a Markdown file."""
    out, cur, start = [], None, 0
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            s = line.rstrip("\n")
            if cur is None and s.strip().startswith("```cpp"):
                cur, start = [], n + 1
            elif cur is not None and s.strip() == "```":
                out.append((start, cur))
                cur = None
            elif cur is not None:
                cur.append(s)
    return out


def found(block, sources):
    want = dedent(block)
    n = len(want)
    for lines in sources.values():
        for i in range(len(lines) - n + 1):
            if lines[i].strip() != want[0].strip():
                continue
            if dedent(lines[i:i + n]) == want:
                return True
    return False


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    code = sorted(glob.glob(os.path.join(root, "docs", "snippets", "*.cpp")) +
                  glob.glob(os.path.join(root, "examples", "*.cpp")))
    sources = {}
    for c in code:
        with open(c, encoding="utf-8") as f:
            sources[c] = [l.rstrip("\n") for l in f]
    docs = [os.path.join(root, "README.md")] + sorted(
        glob.glob(os.path.join(root, "docs", "*.md")))
    missing = 0
    checked = 0
    for d in docs:
        for line, block in blocks(d):
            checked += 1
            if not found(block, sources):
                missing += 1
                print("%s:%d: this C++ block is in no compiled snippet or example: %s" %
                      (os.path.relpath(d, root), line, block[0].strip() if block else ""))
    print("%d C++ blocks checked, %d not code that runs" % (checked, missing))
    return 1 if missing or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
