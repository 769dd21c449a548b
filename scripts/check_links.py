#!/usr/bin/env python3
"""Checks that every relative link, and every #anchor, resolves.

    python3 scripts/check_links.py [--book docs/book] [FILE.md ...]

Checks the built mdBook (every href and src in its HTML pages) and the
Markdown files at the top of the repository that link into it (README.md,
CONTRIBUTING.md, CHANGELOG.md, SPEC.md by default). A link resolves when its
file or folder exists and, with a #fragment, the target has that anchor: an
id= in an HTML page, a heading (GitHub's slug) or an explicit <a id=...> in a
Markdown file. External links (http:, https:, mailto:) are not checked: CI has
no internet. Exit 1 and a line per broken link, else exit 0 and a summary.
Standard library only.
"""

import argparse
import html.parser
import os
import re
import sys
import urllib.parse

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MD = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md", "SPEC.md"]
# mdBook's own pages: 404.html resolves its links against the site's root URL,
# print.html repeats every page with its links rewritten to its own anchors
# (checked as well), toc.html is the sidebar's frame.
SKIP_HTML = {"404.html", "toc.html"}
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:|^//")


class Page(html.parser.HTMLParser):
    """The links (href, src) and the anchors (id, name) of one HTML page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links = []
        self.anchors = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value is None:
                continue
            if name in ("id", "name"):
                self.anchors.add(value)
            elif name in ("href", "src") and tag != "base":
                self.links.append((value, self.getpos()[0]))


def slug(heading):
    """GitHub's (and mdBook's) anchor for a Markdown heading."""
    text = re.sub(r"<[^>]+>", "", heading)  # inline HTML
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links keep their text
    text = text.strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def strip_code(text):
    """Markdown without fenced code blocks and inline code spans (no links there)."""
    out, fenced = [], False
    for line in text.split("\n"):
        if re.match(r"^\s*(```|~~~)", line):
            fenced = not fenced
            out.append("")
            continue
        out.append("" if fenced else re.sub(r"`[^`]*`", "``", line))
    return out


_md_anchor_cache = {}


def markdown_anchors(path):
    if path not in _md_anchor_cache:
        anchors, seen = set(), {}
        with open(path, encoding="utf-8") as f:
            for line in strip_code(f.read()):
                m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
                if m:
                    base = slug(m.group(1))
                    n = seen.get(base, 0)
                    seen[base] = n + 1
                    anchors.add(base if n == 0 else f"{base}-{n}")
                anchors.update(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", line))
        _md_anchor_cache[path] = anchors
    return _md_anchor_cache[path]


_html_anchor_cache = {}


def html_anchors(path):
    if path not in _html_anchor_cache:
        page = Page()
        with open(path, encoding="utf-8") as f:
            page.feed(f.read())
        _html_anchor_cache[path] = page.anchors
    return _html_anchor_cache[path]


def check(source, line, target, base_dir, problems):
    """One link from `source` (at `line`) to `target`, relative to `base_dir`."""
    if not target or EXTERNAL.match(target):
        return
    path, _, fragment = target.partition("#")
    path = urllib.parse.unquote(path.split("?", 1)[0])
    fragment = urllib.parse.unquote(fragment)
    resolved = os.path.normpath(os.path.join(base_dir, path)) if path else source
    where = f"{os.path.relpath(source, REPO)}:{line}: {target}"
    if not os.path.exists(resolved):
        problems.append(f"{where}: no such file {os.path.relpath(resolved, REPO)}")
        return
    if not fragment:
        return
    if os.path.isdir(resolved):
        problems.append(f"{where}: an anchor on a folder")
        return
    if resolved.endswith((".html", ".htm")):
        anchors = html_anchors(resolved)
    elif resolved.endswith(".md"):
        anchors = markdown_anchors(resolved)
    else:
        return  # an anchor into a source file (#L10): not checked
    if fragment not in anchors:
        problems.append(f"{where}: no anchor #{fragment} in {os.path.relpath(resolved, REPO)}")


def check_book(book, problems):
    pages = 0
    for root, _, files in os.walk(book):
        for name in sorted(files):
            if not name.endswith(".html") or name in SKIP_HTML:
                continue
            path = os.path.join(root, name)
            page = Page()
            with open(path, encoding="utf-8") as f:
                page.feed(f.read())
            _html_anchor_cache[path] = page.anchors
            for target, line in page.links:
                check(path, line, target, root, problems)
            pages += 1
    return pages


LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def check_markdown(path, problems):
    with open(path, encoding="utf-8") as f:
        lines = strip_code(f.read())
    count = 0
    for number, line in enumerate(lines, start=1):
        targets = LINK.findall(line) + re.findall(r"<a\s+href=\"([^\"]+)\"", line)
        for target in targets:
            check(path, number, target, os.path.dirname(path), problems)
            count += 1
    return count


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--book", default=os.path.join(REPO, "docs", "book"))
    ap.add_argument("markdown", nargs="*", default=[os.path.join(REPO, f) for f in DEFAULT_MD])
    args = ap.parse_args()
    problems = []
    if not os.path.isfile(os.path.join(args.book, "index.html")):
        print(f"check_links: {args.book} has no index.html; run `mdbook build docs` first", file=sys.stderr)
        return 1
    pages = check_book(args.book, problems)
    links = 0
    for path in args.markdown:
        links += check_markdown(os.path.abspath(path), problems)
    for p in problems:
        print(p)
    if problems:
        print(f"check_links: {len(problems)} broken link(s)", file=sys.stderr)
        return 1
    print(f"check_links: {pages} book pages and {len(args.markdown)} Markdown files ({links} links) resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
