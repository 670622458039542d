"""The import graph of the tree, as a tool that reads files (not one that runs them) sees it, and the
map of it in docs/architecture.md.

Every import of `sbpc.*` in every product `.py` (also those inside functions) must resolve, through
pyproject's `package-dir` table, to a file of the repository; the layers hold (a module imports only
its own layer or lower ones); the API never imports the command-line drivers; the module graph has no
cycle; no product file is over 600 lines; every package folder is listed in pyproject.
"""

from __future__ import annotations

import ast
import re
import tomllib
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 600

# Lower number = lower layer. A module may import its own layer and any lower one.
LAYERS = {
    "sbpc.dialects": 0,
    "sbpc.passes": 1,
    "sbpc.lowering": 2,
    "sbpc.translate": 2,
    "sbpc.runtime": 3,
    "sbpc": 4,  # the API: sbpc/__init__.py, sbpc/api.py
    "sbpc.tools": 5,
}


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


@cache
def package_dirs() -> dict[str, Path]:
    return {name: ROOT / folder for name, folder in _pyproject()["tool"]["setuptools"]["package-dir"].items()}


@cache
def modules() -> dict[str, Path]:
    """Every product module of the tree, by its import name."""
    found: dict[str, Path] = {}
    roots = package_dirs()
    for name, folder in roots.items():
        for path in sorted(folder.rglob("*.py")):
            rel = path.relative_to(folder)
            if any(part == "__pycache__" for part in rel.parts):
                continue
            # A folder mapped on its own is its own package, not a subfolder of `sbpc/`.
            if any(sub != name and roots[sub] in path.parents and roots[sub] != folder and folder in roots[sub].parents
                   for sub in roots):
                continue
            parts = list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([name, *parts])] = path
    return found


def _layer(module: str) -> int:
    best = max((prefix for prefix in LAYERS if module == prefix or module.startswith(prefix + ".")), key=len)
    return LAYERS[best]


def _imports(module: str, path: Path) -> list[tuple[str, int]]:
    """(imported name, line) for every `sbpc` import in the file, at any depth."""
    tree = ast.parse(path.read_text(), str(path))
    out: list[tuple[str, int]] = []
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names if alias.name.split(".")[0] == "sbpc"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join([*base, *([node.module] if node.module else [])])
            else:
                name = node.module or ""
            if name.split(".")[0] != "sbpc":
                continue
            for alias in node.names:
                full = f"{name}.{alias.name}"
                out.append((full if full in modules() else name, node.lineno))
    return out


@cache
def graph() -> dict[str, set[str]]:
    mods = modules()
    edges: dict[str, set[str]] = {}
    for module, path in mods.items():
        edges[module] = {name for name, _ in _imports(module, path) if name in mods and name != module}
    return edges


def test_no_symlinks_in_the_tree() -> None:
    links = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_symlink() and ".git" not in p.parts]
    assert not links


def test_every_package_folder_is_listed() -> None:
    listed = set(_pyproject()["tool"]["setuptools"]["packages"])
    roots = package_dirs()
    found = {name for name, path in modules().items() if path.name == "__init__.py"}
    assert found == listed
    for name in roots:
        assert (roots[name] / "__init__.py").exists(), name


def test_every_import_resolves_to_a_file_of_the_tree() -> None:
    mods = modules()
    unresolved = [f"{path.relative_to(ROOT)}:{line}: {name}"
                  for module, path in mods.items() for name, line in _imports(module, path) if name not in mods]
    assert not unresolved


def test_layers_hold() -> None:
    upward = [f"{modules()[m].relative_to(ROOT)}: {m} imports {t}"
              for m, targets in graph().items() for t in sorted(targets) if _layer(t) > _layer(m)]
    assert not upward


def test_lowering_and_translate_stay_apart() -> None:
    crossing = [f"{m} imports {t}" for m, targets in graph().items() for t in targets
                if {m.split(".")[1:2][0] if "." in m else "", t.split(".")[1] if "." in t else ""}
                == {"lowering", "translate"}]
    assert not crossing


def test_the_api_does_not_import_the_command_line_tools() -> None:
    api = [m for m in graph() if _layer(m) == LAYERS["sbpc"]]
    assert api
    offending = [f"{m} imports {t}" for m in api for t in graph()[m] if t.startswith("sbpc.tools")]
    assert not offending


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(root: str) -> None:  # Tarjan, iterative
        nonlocal counter
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_cycles() -> None:
    assert _cycles(graph()) == []


def test_the_cycle_finder_finds_cycles() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("module", sorted(modules()))
def test_no_product_file_over_600_lines(module: str) -> None:
    lines = modules()[module].read_text().count("\n")
    assert lines <= MAX_LINES, f"{modules()[module].relative_to(ROOT)}: {lines} lines"


# docs/architecture.md, the map a newcomer reads, names every module of the tree and nothing that is gone.
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def _on_the_map() -> set[str]:
    return set(re.findall(r"^- `([\w/]+\.py)` — ", ARCHITECTURE.read_text(encoding="utf-8"), re.MULTILINE))


def test_every_module_is_on_the_map() -> None:
    files = {path.relative_to(ROOT).as_posix() for path in modules().values()}
    assert sorted(files - _on_the_map()) == []


def test_every_module_on_the_map_exists() -> None:
    assert sorted(p for p in _on_the_map() if not (ROOT / p).exists()) == []


def test_the_map_names_every_layer_folder() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    for folder in {str(path.relative_to(ROOT)) + "/" for path in package_dirs().values()}:
        assert f"`{folder}`" in text, folder
    assert "docs/architecture.md" in (ROOT / "README.md").read_text(encoding="utf-8")
