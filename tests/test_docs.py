"""The README and docs/ stay true: links that resolve inside the repository, the
layers picture the code makes, the commands CI runs, a README that fits a screen or two."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _anchors(path: Path) -> set[str]:
    """GitHub's anchors for the headings of ``path``."""
    found = set()
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def test_every_link_resolves_inside_the_repository_or_is_public():
    for doc in DOCS:
        for target in LINK.findall(doc.read_text()):
            if target.startswith(("https://", "http://")):
                assert "localhost" not in target and "127.0.0.1" not in target, (doc, target)
                continue
            path, _, anchor = target.partition("#")
            resolved = (doc.parent / path).resolve() if path else doc
            assert resolved.is_relative_to(ROOT), f"{doc.name}: {target} leaves the repository"
            assert resolved.exists(), f"{doc.name}: {target} does not exist"
            if anchor:
                assert anchor in _anchors(resolved), f"{doc.name}: no heading for #{anchor}"


def test_no_doc_points_outside_the_repository_in_plain_text():
    for doc in DOCS:
        assert "../shared/" not in doc.read_text(), doc.name


def test_the_files_the_docs_name_exist():
    named = re.compile(r"`((?:telegram_bot|core|testkit|benchmarks|tests|docs)/[\w./-]+)`")
    for doc in DOCS:
        for path in named.findall(doc.read_text()):
            if "…" in path or "*" in path:
                continue
            assert (ROOT / path).exists(), f"{doc.name} names {path}, which is not there"


def test_the_readme_fits_on_a_screen_or_two():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


def test_the_readme_gives_the_commands_ci_runs():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    for command in (
        "python3 -m venv .venv",
        "-c constraints.txt -e '.[dev]'",
        ".venv/bin/pytest",
    ):
        assert command in readme and command in ci, command
    assert ci.rstrip().splitlines()[-1] == ".venv/bin/pytest"


def test_the_architecture_picture_is_what_the_code_makes():
    made = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "layers.py")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    doc = (ROOT / "docs" / "architecture.md").read_text()
    shown = doc.split("<!-- layers:begin -->")[1].split("<!-- layers:end -->")[0].strip()
    assert shown == made, "run `python docs/layers.py --write`"


def test_the_layers_script_reports_a_planted_upward_import(tmp_path, monkeypatch):
    """The check can fail: in a tree where core imports the bot's platform (once with
    a relative import), that edge is drawn and reported as going up."""
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import layers
    finally:
        sys.path.remove(str(ROOT / "docs"))
    for path, text in {
        "core/__init__.py": "",
        "core/rules.py": "from . import cards\n",
        "core/cards.py": "def late():\n    import telegram_bot.platform.http\n",
        "telegram_bot/__init__.py": "",
        "telegram_bot/platform/__init__.py": "",
        "telegram_bot/platform/http.py": "from ...core import rules\n",
    }.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    monkeypatch.setattr(layers, "ROOT", tmp_path)
    graph = layers.edges()
    assert graph[("core", "telegram_bot.platform")] == {"core.cards"}
    assert graph[("telegram_bot.platform", "core")] == {"telegram_bot.platform.http"}
    assert layers.upward(graph) == [("core", "telegram_bot.platform")]
    assert "Upward imports: core -> telegram_bot.platform" in layers.render(graph)
