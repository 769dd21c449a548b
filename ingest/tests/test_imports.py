"""The package's modules import each other one way: no loop, not even through an
import inside a function (which hides a loop from Python, not from a reader)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "pitchside_ingest"


def imports_of(path: Path) -> set[str]:
    """The package modules a file imports, anywhere in it (`from .x import`,
    `from . import x`, `from pitchside_ingest.x import`)."""
    known = {p.stem for p in PACKAGE.glob("*.py")}
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        module = node.module or ""
        if node.level == 0:
            if not module.startswith("pitchside_ingest"):
                continue
            module = module.removeprefix("pitchside_ingest").lstrip(".")
        if module:
            out.add(module.split(".")[0])
        else:
            out.update(a.name for a in node.names)
    return out & known


def graph() -> dict[str, set[str]]:
    return {p.stem: imports_of(p) - {p.stem} for p in sorted(PACKAGE.glob("*.py"))}


def find_loop(g: dict[str, set[str]]) -> list[str] | None:
    done: set[str] = set()

    def visit(m: str, path: list[str]) -> list[str] | None:
        if m in path:
            return path[path.index(m):] + [m]
        if m in done:
            return None
        for n in sorted(g.get(m, ())):
            loop = visit(n, path + [m])
            if loop:
                return loop
        done.add(m)
        return None

    for m in sorted(g):
        loop = visit(m, [])
        if loop:
            return loop
    return None


def test_no_modules_import_each_other_round_a_loop():
    loop = find_loop(graph())
    assert loop is None, "import loop: " + " -> ".join(loop)


def test_the_loop_finder_sees_a_loop_through_three_modules():
    assert find_loop({"ddl": {"views"}, "views": {"spark_sinks"}, "spark_sinks": {"ddl"}}) == [
        "ddl", "views", "spark_sinks", "ddl"]
    assert find_loop({"ddl": {"views"}, "spark_sinks": {"ddl", "views"}, "views": set()}) is None


def test_the_views_are_plain_text_and_import_nothing_of_the_package():
    assert graph()["views"] == set()
