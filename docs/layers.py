"""Print the package-level import graph that docs/architecture.md shows.

    python docs/layers.py            # a Mermaid diagram and a table, as in the doc
    python docs/layers.py --check    # exit 1 if an import goes up the layers
    python docs/layers.py --write    # put the output into docs/architecture.md

Every ``import`` in every module (function-level ones included) is read with ``ast``,
without importing anything, so the picture is what the code says, on any checkout,
with no tool to install. tests/test_docs.py checks that the doc shows this output.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The layers, top first: each may import only those below it (and itself).
#: testkit and benchmarks sit beside the bot: they drive it, it never imports them.
LAYERS: list[tuple[str, str]] = [
    ("telegram_bot.runtime", "processes: one bot, or the cluster's ingress and workers"),
    ("telegram_bot.handlers", "python-telegram-bot handlers: parse, authorize, delegate"),
    ("telegram_bot.web", "the Mini App: page, card art, initData check, JSON API, live push"),
    ("telegram_bot.service", "the game service: lobby, table, clock, exits, review"),
    ("telegram_bot.chat", "what chats see: texts, keyboards, callbacks, translations"),
    ("telegram_bot.platform", "storage, migrations, outbox, rate limits, HTTP, locks"),
    # One layer, as .importlinter has it: the arena, the bench and the hand review sit
    # on top of the computer players, which sit on top of the rules.
    ("core", "the rules, the computer players and the arena: no Telegram, no database"),
]
BESIDE: list[tuple[str, str]] = [
    ("testkit", "Bot API emulator, simulated people, chaos, fleet, demo"),
    ("benchmarks", "load, fuzz and memory benchmarks"),
]
GROUPS = [name for name, _ in LAYERS + BESIDE]
BEGIN, END = "<!-- layers:begin -->", "<!-- layers:end -->"


def group_of(module: str) -> str | None:
    """The longest group name that ``module`` is in (telegram_bot.web before telegram_bot)."""
    best = None
    for group in GROUPS:
        if (module == group or module.startswith(group + ".")) and (
            best is None or len(group) > len(best)
        ):
            best = group
    return best


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """Absolute names of the modules ``path`` imports (relative imports resolved)."""
    this = module_name(path)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            found.add(prefix)
            found.update(f"{prefix}.{alias.name}" for alias in node.names)
    return found


def edges() -> dict[tuple[str, str], set[str]]:
    """(importer's group, imported group) -> the importing modules."""
    found: dict[tuple[str, str], set[str]] = defaultdict(set)
    for top in {g.split(".")[0] for g in GROUPS}:
        for path in sorted((ROOT / top).rglob("*.py")):
            source = group_of(module_name(path))
            if source is None:
                continue
            for name in imports_of(path):
                target = group_of(name)
                if target is not None and target != source:
                    found[(source, target)].add(module_name(path))
    return found


def upward(graph: dict[tuple[str, str], set[str]]) -> list[tuple[str, str]]:
    """Edges that go up the layers, or from the bot into what sits beside it."""
    rank = {name: i for i, (name, _) in enumerate(LAYERS)}
    bad = []
    for source, target in graph:
        if source not in rank:
            continue  # testkit and benchmarks may import anything
        if target not in rank or rank[target] < rank[source]:
            bad.append((source, target))
    return sorted(bad)


def short(group: str) -> str:
    return group.removeprefix("telegram_bot.")


def render(graph: dict[tuple[str, str], set[str]]) -> str:
    lines = ["```mermaid", "graph TD"]
    for name, _ in LAYERS + BESIDE:
        lines.append(f'  {short(name).replace(".", "_")}["{name}"]')
    for (source, target), modules in sorted(graph.items()):
        style = "-.->" if source in dict(BESIDE) else "-->"
        lines.append(
            f"  {short(source).replace('.', '_')} {style}|{len(modules)}| "
            f"{short(target).replace('.', '_')}"
        )
    lines.append("```")
    lines.append("")
    lines.append("| package | what it is | imports (modules that do) |")
    lines.append("|---|---|---|")
    for name, what in LAYERS + BESIDE:
        targets = sorted((t, len(m)) for (s, t), m in graph.items() if s == name)
        listed = ", ".join(f"{short(t)} ({n})" for t, n in targets) or "nothing of the above"
        lines.append(f"| `{name}` | {what} | {listed} |")
    bad = upward(graph)
    lines.append("")
    if bad:
        lines.append("Upward imports: " + ", ".join(f"{s} -> {t}" for s, t in bad))
    else:
        lines.append("No import goes up the layers, and the bot imports nothing beside it.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 on an upward import")
    parser.add_argument("--write", action="store_true", help="update docs/architecture.md")
    args = parser.parse_args(argv)
    graph = edges()
    made = render(graph)
    if args.write:
        doc = ROOT / "docs" / "architecture.md"
        head, rest = doc.read_text().split(BEGIN)
        tail = rest.split(END)[1]
        doc.write_text(f"{head}{BEGIN}\n{made}\n{END}{tail}")
    else:
        print(made)
    if args.check and upward(graph):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
