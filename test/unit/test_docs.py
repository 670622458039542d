"""The README and docs/ stand on their own in a clone: every relative link resolves inside the
repository, and the README's Python example runs (issue 11, point 8c)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve_inside_the_repository(doc: Path) -> None:
    targets = [t for t in LINK.findall(doc.read_text(encoding="utf-8")) if not re.match(r"[a-z]+:", t)]
    for target in targets:
        path = (doc.parent / target.split("#")[0]).resolve()
        assert path.is_relative_to(ROOT), f"{doc.name} links outside the repository: {target}"
        assert path.exists(), f"{doc.name} links to a missing file: {target}"
    assert "../shared" not in doc.read_text(encoding="utf-8")


def test_the_readme_links_the_contract() -> None:
    assert "(docs/spec.md)" in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.torch  # the example ends with a run on backend="torch"
def test_the_readme_python_example_runs(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    (example,) = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.DOTALL)
    monkeypatch.chdir(ROOT)
    exec(compile(example, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert out.startswith("[S(0)], [S(0)] -> [S(0)]\n")
    assert "sbp.all_to_all" in out
