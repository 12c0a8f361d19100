"""Deployment files: the lock file, the Dockerfile, .dockerignore, the entrypoint and
docker-compose.yml, checked by reading them and running the parts that run here (there
is no Docker engine in CI)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins() -> dict[str, str]:
    found: dict[str, str] = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, sep, version = line.partition("==")
        assert sep and version.strip(), f"constraints.txt: {line!r} is not name==version"
        found[canonical(name)] = version.strip()
    return found


def project_requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    return [Requirement(r) for r in project["dependencies"] + extras["dev"]]


# ---------------------------------------------------------------- constraints.txt


def test_constraints_pin_every_dependency_at_the_version_the_tests_run_with():
    """Every package the project needs, directly or not, is pinned; and the pins are
    what this environment has, so CI and the image run what the tests ran on."""
    pinned = pins()
    needed: dict[str, set[str]] = {}
    todo = [(req, {""}) for req in project_requirements()]
    while todo:
        req, parent_extras = todo.pop()
        if req.marker and not any(req.marker.evaluate({"extra": e}) for e in parent_extras):
            continue
        name = canonical(req.name)
        extras = set(req.extras) | {""}
        if extras <= needed.get(name, set()):
            continue
        needed[name] = needed.get(name, set()) | extras
        dist = metadata.distribution(req.name)
        todo += [(Requirement(r), extras) for r in dist.requires or []]
    missing = sorted(set(needed) - set(pinned))
    assert not missing, f"not pinned in constraints.txt: {missing}"
    stale = {
        name: (pinned[name], metadata.version(name))
        for name in needed
        if metadata.version(name) != pinned[name]
    }
    assert not stale, f"constraints.txt (pinned, installed) differ: {stale}"
    assert "hokm-telegram" not in pinned


def test_ci_and_the_image_install_with_the_constraints():
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"pip install .*-c constraints\.txt .*-e '\.\[dev\]'", ci), ci
    assert "-c constraints.txt" in install_dependencies()["command"]


# --------------------------------------------------------------------- Dockerfile


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for raw in (ROOT / "Dockerfile").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        pending += line
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        word, _, rest = pending.partition(" ")
        instructions.append((word.upper(), rest.strip()))
        pending = ""
    return instructions


def install_dependencies() -> dict[str, object]:
    """The RUN that installs the dependencies, with its position and the COPYs before."""
    steps = dockerfile()
    for at, (word, args) in enumerate(steps):
        if word == "RUN" and "pip install" in args:
            copied = [a for w, a in steps[:at] if w == "COPY"]
            return {"at": at, "command": args, "copied_before": copied}
    raise AssertionError("no RUN pip install in the Dockerfile")


def copy_sources() -> list[str]:
    sources = []
    for word, args in dockerfile():
        if word == "COPY" and "--from" not in args:
            sources += [a for a in shlex.split(args) if not a.startswith("--")][:-1]
    return sources


def test_the_image_installs_pinned_dependencies_before_copying_anything_else():
    """A README or code change must not re-run the dependency install: only the two
    files the install reads are copied before it."""
    first = install_dependencies()
    sources = [s for args in first["copied_before"] for s in shlex.split(args)[:-1]]
    assert sorted(sources) == ["constraints.txt", "pyproject.toml"]
    steps = dockerfile()
    later = [args for word, args in steps[first["at"] + 1 :] if word == "RUN"]
    project_install = next(args for args in later if "pip install" in args)
    assert "--no-deps" in project_install, "the project's install must not move a pin"
    assert "pip check" in project_install


def test_the_image_dependency_list_is_pyprojects_runtime_list(tmp_path):
    """Runs the Dockerfile's own command that writes requirements.txt from
    pyproject.toml, and checks every line is allowed by a pin."""
    command = install_dependencies()["command"]
    assert isinstance(command, str)
    write_list = command.split(" && ")[0]
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(["sh", "-c", write_list], cwd=tmp_path, env=env, check=True)
    listed = [Requirement(line) for line in (tmp_path / "requirements.txt").read_text().split()]
    runtime = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert [str(r) for r in listed] == [str(Requirement(r)) for r in runtime]
    pinned = pins()
    for req in listed:
        assert req.specifier.contains(pinned[canonical(req.name)]), (req, pinned)


def test_the_image_runs_as_a_non_root_user_with_its_settings():
    steps = dockerfile()
    users = [args for word, args in steps if word == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0"), users
    env = " ".join(args for word, args in steps if word == "ENV")
    assert "HOKM_IN_CONTAINER=1" in env
    assert "HOKM_DATA_DIR=/data" in env
    entrypoint = [args for word, args in steps if word == "ENTRYPOINT"]
    assert entrypoint == ['["docker-entrypoint.sh"]']
    assert "docker-entrypoint.sh" in copy_sources()
    assert os.access(ROOT / "docker-entrypoint.sh", os.X_OK)


# ------------------------------------------------------------------- .dockerignore


def dockerignore_rules() -> list[tuple[re.Pattern[str], bool]]:
    """Docker's rules: the last pattern matching a path or one of its parent folders
    decides; ``!`` lets back in; ``*`` stays within a path segment, ``**`` does not."""
    rules = []
    for raw in (ROOT / ".dockerignore").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        include = line.startswith("!")
        pattern = line.lstrip("!").strip("/")
        regex = ""
        for part in re.split(r"(\*\*/|\*\*|\*|\?)", pattern):
            regex += {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}.get(
                part, re.escape(part)
            )
        rules.append((re.compile(regex + r"\Z"), include))
    return rules


def in_context(path: str, rules: list[tuple[re.Pattern[str], bool]]) -> bool:
    parts = path.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    sent = True
    for pattern, include in rules:
        if any(pattern.match(c) for c in candidates):
            sent = include
    return sent


def tracked_files() -> list[str]:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return out.split()


def test_the_build_context_has_the_code_and_no_data():
    rules = dockerignore_rules()
    files = tracked_files()
    for never in (
        ".git/HEAD",
        ".venv/bin/python",
        "hokm.sqlite3",
        "data/hokm.sqlite3-wal",
        "core/players/runs/hard-normal-4p.jsonl",
        "benchmarks/results/loadtest.json",
        "core/__pycache__/cards.cpython-311.pyc",
        "locales/fa/LC_MESSAGES/hokm.mo",
        *[
            f
            for f in files
            if f.startswith(("tests/", "benchmarks/", ".ci/", "core/players/runs/"))
        ],
    ):
        assert not in_context(never, rules), never
    for source in copy_sources():
        under = [f for f in files if f == source or f.startswith(source.rstrip("/") + "/")]
        assert under, f"the Dockerfile copies {source}, which git does not have"
        left_out = [f for f in under if not in_context(f, rules) and "/players/runs/" not in f]
        assert not left_out, f".dockerignore leaves out what the Dockerfile copies: {left_out}"


def test_the_dockerignore_matcher_follows_dockers_rules():
    """The reading above, on rules whose outcome Docker documents."""
    rules = [(re.compile(r"[^/]*\Z"), False), (re.compile(r"core\Z"), True)]
    assert in_context("core/cards.py", rules)
    assert not in_context("tests/test_x.py", rules)
    assert not in_context("README.md", rules)


# -------------------------------------------------------------------- entrypoint


def unprivileged() -> list[str]:
    """A prefix that makes folder permissions count (root ignores them)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: permissions cannot be checked")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


def entrypoint(data_dir: Path, *command: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    return subprocess.run(
        [*unprivileged(), "sh", str(ROOT / "docker-entrypoint.sh"), *command],
        env={**clean, "HOKM_DATA_DIR": str(data_dir), **env},
        capture_output=True,
        text=True,
        check=False,
    )


def test_an_unwritable_data_folder_stops_with_one_line_naming_the_owner_it_needs(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o555)
    try:
        done = entrypoint(data, "echo", "started")
        assert done.returncode == 2 and "started" not in done.stdout
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        assert f"uid {os.getuid()}" in lines[0] and f"chown -R {os.getuid()}:" in lines[0]
        # With PostgreSQL the folder is not used, so it is not checked.
        done = entrypoint(data, "echo", "started", DATABASE_URL="postgresql://db/hokm")
        assert done.returncode == 0 and done.stdout == "started\n"
    finally:
        data.chmod(0o755)


def test_a_database_file_left_by_another_owner_is_caught_too(tmp_path):
    (tmp_path / "hokm.sqlite3").touch(mode=0o444)
    done = entrypoint(tmp_path, "echo", "started")
    assert done.returncode == 2 and "chown -R" in done.stderr


def test_a_writable_data_folder_runs_the_command(tmp_path):
    done = entrypoint(tmp_path, "sh", "-c", 'echo "$1"', "sh", "two words")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "two words\n" and done.stderr == ""


# ------------------------------------------------------------------- matplotlib


def test_the_hard_player_starts_without_endplays_package_and_matplotlib(tmp_path):
    """The image's case, a home the bot cannot write: the hard player loads endplay's
    DDS binding alone (core/players/solver.py: dds), not endplay's package, whose
    dealer imports matplotlib: about a second of CPU at every think worker's start,
    and a complaint about the home unless MPLCONFIGDIR named a writable folder."""
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o555)
    clean = {k: v for k, v in os.environ.items() if k != "MPLCONFIGDIR"}
    script = (
        "import sys, core.players.hard as h; p = h.HardPlayer(); "
        "from core.players.solver import dds; assert dds().SolveBoard; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('endplay', 'matplotlib')))"
    )
    try:
        done = subprocess.run(
            [*unprivileged(), sys.executable, "-c", script],
            cwd=ROOT,
            env={**clean, "HOME": str(home), "XDG_CONFIG_HOME": "", "XDG_CACHE_HOME": ""},
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        home.chmod(0o755)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.strip() == "['endplay._dds']"


# ----------------------------------------------------------------- docker-compose


def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_runs_an_ingress_and_two_workers_on_one_postgresql():
    services = compose()["services"]
    assert set(services) == {"ingress", "worker", "postgres"}, "no broker, nothing else"
    ingress, worker, postgres = services["ingress"], services["worker"], services["postgres"]
    # The front, not telegram_bot.runtime.cluster: the think workers of a process
    # started as that module imported the whole bot (its docstring says why).
    assert ingress["command"] == ["python", "-m", "telegram_bot", "ingress"]
    assert worker["command"] == ["python", "-m", "telegram_bot", "worker"]
    assert worker["deploy"]["replicas"] == 2
    for bot in (ingress, worker):
        assert bot["image"] == "hokm" and bot["build"] == "."
        assert bot["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert bot["environment"]["DATABASE_URL"].startswith("postgresql://")
        assert "@postgres:5432/" in bot["environment"]["DATABASE_URL"]
        assert "BOT_TOKEN" in bot["environment"]
        assert bot["init"] is True, "SIGTERM must reach the bot, which finishes its work"
    assert ingress["environment"]["DATABASE_URL"] == worker["environment"]["DATABASE_URL"]
    assert "WEBHOOK_URL" in ingress["environment"]
    port = ingress["environment"]["WEBHOOK_PORT"]
    assert any(p.endswith(f":{port}") for p in ingress["ports"])
    assert "pg_isready" in " ".join(postgres["healthcheck"]["test"])
    for service in services.values():
        assert service["restart"] in ("unless-stopped", "always", "on-failure")


_VARIABLE = re.compile(r"\$\{(\w+)(?::([?-])([^}]*))?\}")


def interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's ``${VAR}``, ``${VAR:-default}`` and ``${VAR:?error}`` (empty = unset)."""

    def one(m: re.Match[str]) -> str:
        name, kind, arg = m.group(1), m.group(2), m.group(3)
        if env.get(name):
            return env[name]
        if kind == "?":
            raise KeyError(f"{name}: {arg}")
        return arg if kind == "-" else ""

    return _VARIABLE.sub(one, value)


def test_compose_has_no_default_secret_or_password():
    """Without WEBHOOK_SECRET the ingress takes updates from anyone who finds the URL;
    a default database password is everyone's. Compose must refuse to start instead."""
    services = compose()["services"]
    ingress, worker, postgres = services["ingress"], services["worker"], services["postgres"]
    full = {
        "BOT_TOKEN": "1:x",
        "WEBHOOK_URL": "https://example.org",
        "WEBHOOK_SECRET": "s3cret",
        "POSTGRES_PASSWORD": "pw",
    }
    secret = ingress["environment"]["WEBHOOK_SECRET"]
    assert interpolate(secret, full) == "s3cret"
    settings = [
        secret,
        ingress["environment"]["DATABASE_URL"],
        worker["environment"]["DATABASE_URL"],
        postgres["environment"]["POSTGRES_PASSWORD"],
    ]
    for value in settings:
        interpolate(value, full)
    for missing in ("WEBHOOK_SECRET", "POSTGRES_PASSWORD"):
        for empty in ({k: v for k, v in full.items() if k != missing}, {**full, missing: ""}):
            refused = [v for v in settings if missing in v]
            assert refused, missing
            for value in refused:
                with pytest.raises(KeyError, match=missing):
                    interpolate(value, empty)
    url = interpolate(worker["environment"]["DATABASE_URL"], full)
    assert url == "postgresql://hokm:pw@postgres:5432/hokm"


def health_command(service: str) -> list[str]:
    test = compose()["services"][service]["healthcheck"]["test"]
    assert test[0] == "CMD" and test[1] == "python", test
    return [sys.executable, *test[2:]]


def run_health(service: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("HOKM_HEARTBEAT_FILE",)}
    return subprocess.run(
        health_command(service),
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_worker_health_check_reads_the_heartbeat_compose_sets(tmp_path):
    worker = compose()["services"]["worker"]
    heartbeat = worker["environment"]["HOKM_HEARTBEAT_FILE"]
    assert heartbeat.startswith("/tmp/"), "the image's user may write only there"
    assert worker["healthcheck"]["start_period"], "a worker migrates and starts first"
    beat = tmp_path / "worker.heartbeat"
    done = run_health("worker", HOKM_HEARTBEAT_FILE=str(beat))
    assert done.returncode == 1 and "no heartbeat" in done.stderr
    beat.touch()
    assert run_health("worker", HOKM_HEARTBEAT_FILE=str(beat)).returncode == 0
    old = beat.stat().st_mtime - 120
    os.utime(beat, (old, old))
    done = run_health("worker", HOKM_HEARTBEAT_FILE=str(beat))
    assert done.returncode == 1 and "heartbeat" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_ingress_health_check_asks_its_port(tmp_path):
    import http.server
    import threading

    ingress = compose()["services"]["ingress"]
    assert ingress["healthcheck"]["start_period"]
    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        # Any answer will do (here 501): the webhook's path is secret.
        assert run_health("ingress", WEBHOOK_PORT=str(port)).returncode == 0
    finally:
        server.shutdown()
        server.server_close()
    done = run_health("ingress", WEBHOOK_PORT=str(port))
    assert done.returncode == 1 and f"port {port}" in done.stderr


def pool_sizes() -> dict[str, int]:
    """The connections each engine the bot creates may hold, from the code: every
    ``create_engine(`` call in telegram_bot must be one of these (a new one must be
    counted here, and in docker-compose.yml's max_connections)."""
    from telegram_bot.platform.storage.db import create_engine

    default = create_engine("postgresql://hokm:pw@postgres:5432/hokm")
    pool = default.sync_engine.pool
    kept = pool.size() + pool._max_overflow  # type: ignore[attr-defined]
    calls: dict[str, list[str]] = {}
    for path in (ROOT / "telegram_bot").rglob("*.py"):
        for line in path.read_text().splitlines():
            if "create_engine(" in line and "def create_engine" not in line:
                calls.setdefault(path.relative_to(ROOT).as_posix(), []).append(line.strip())
    assert calls == {
        "telegram_bot/platform/storage/db.py": [
            ">>> engine = create_engine(url)",
            "engine = create_engine(text)",  # migrate(): one connection, while starting
        ],
        "telegram_bot/platform/migrations/env.py": [
            "engine = create_engine(_url(), poolclass=pool.NullPool)",  # unused by migrate()
        ],
        # HOKM_DB_POOL, unset in docker-compose.yml (checked below), keeps the default.
        "telegram_bot/runtime/app.py": ["engine = create_engine(settings.database_url, **sizing)"],
        "telegram_bot/runtime/cluster.py": [
            "engine = create_engine(url, pool_size=8, max_overflow=0)  # one short insert a request",
            "engine = create_engine(url)",
        ],
        "telegram_bot/platform/ratelimit.py": [
            "engine = create_engine(self.database_url, pool_size=4, max_overflow=0)"
        ],
    }, calls
    assert not re.search(r"HOKM_DB_POOL\s*[:=]", (ROOT / "docker-compose.yml").read_text())
    cluster = (ROOT / "telegram_bot" / "runtime" / "cluster.py").read_text()
    # The worker's LISTEN connection, and the ingress's for languages.
    assert cluster.count("asyncpg.connect(") == 2
    # The ingress: its inbox (8), the Mini App's game service (its pages' moves), the
    # rate limiter, the pages' PgBus and the language LISTEN connections, migrations.
    return {"worker": kept + kept + 4 + 1 + 1, "ingress": 8 + kept + 4 + 1 + 1 + 1}


def test_postgresql_takes_the_connections_of_the_scale_example():
    """README and compose say ``--scale worker=4``; PostgreSQL's default 100 connections
    were not enough for that (an ingress and 3 workers held 71-79)."""
    text = (ROOT / "docker-compose.yml").read_text()
    scales = {int(n) for n in re.findall(r"--scale worker=(\d+)", text)}
    readme = ROOT / "README.md"
    if readme.exists():
        scales |= {int(n) for n in re.findall(r"--scale worker=(\d+)", readme.read_text())}
    workers = max(scales | {compose()["services"]["worker"]["deploy"]["replicas"]})
    sizes = pool_sizes()
    needed = workers * sizes["worker"] + sizes["ingress"] + 3  # + superuser_reserved
    command = compose()["services"]["postgres"]["command"]
    limit = next(int(a.split("=", 1)[1]) for a in command if a.startswith("max_connections="))
    assert limit >= needed, (workers, sizes, limit)
    assert f"{workers} x {sizes['worker']} + {sizes['ingress']} = {needed - 3}" in text


def test_the_roles_compose_runs_are_roles_of_the_cluster_command():
    if not (ROOT / "telegram_bot" / "runtime" / "cluster.py").exists():
        pytest.skip("telegram_bot.runtime.cluster is not in this checkout")
    done = subprocess.run(
        [sys.executable, "-m", "telegram_bot.runtime.cluster", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for service in ("ingress", "worker"):
        assert compose()["services"][service]["command"][-1] in done.stdout


# ------------------------------------------------------------------ no-token text


def no_token(**env: str) -> str:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("BOT_TOKEN", "TELEGRAM_API_URL", "HOKM_IN_CONTAINER")
    }
    done = subprocess.run(
        [sys.executable, "-m", "telegram_bot"],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    return done.stderr


def test_without_a_token_the_image_tells_how_to_run_the_image():
    err = no_token(HOKM_IN_CONTAINER="1")
    assert "@BotFather" in err
    assert "docker run -d --name hokm -e BOT_TOKEN=123456789:AA... -v hokm-data:/data hokm" in err
    assert "docker run --rm hokm python -m testkit.demo" in err
    assert ".venv" not in err


def test_without_a_token_a_checkout_tells_how_to_run_from_the_checkout():
    err = no_token()
    assert "BOT_TOKEN=123456789:AA... .venv/bin/python -m telegram_bot" in err
    assert "docker" not in err
