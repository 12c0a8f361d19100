"""Storage: migrations, constraints, optimistic saves, results and tallies.

Every test that takes ``engine``/``sessions`` runs on SQLite and on PostgreSQL (the
latter skipped when no server is reachable); see tests/storage/conftest.py.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from telegram_bot.platform.storage import (
    ActiveGameExistsError,
    Base,
    Game,
    StaleGameError,
    alembic_config,
    create_engine,
    database_url_from_env,
    downgrade,
    migrate,
    normalize_url,
    repo,
    session_factory,
)
from telegram_bot.platform.storage.inline_sqlite import InlineConnection

CHAT = -1001234567890
OTHER_CHAT = -1009876543210
ALICE, BOB, CARA, DAVE = 1001, 1002, 1003, 5_000_000_001  # ids above 2**32 exist

Sessions = async_sessionmaker[AsyncSession]


def seat(user_id: int | None, name: str, bot: str | None = None) -> dict:
    return {"user_id": user_id, "name": name, "bot": bot, "away": False, "timeouts": 0}


async def new_chat(sessions: Sessions, chat_id: int = CHAT) -> None:
    async with sessions.begin() as s:
        await repo.get_or_create_chat(s, chat_id, "supergroup", "Hokm night")


# ------------------------------------------------------------------ URLs (no database)


def test_database_url_from_env(tmp_path: Path) -> None:
    assert database_url_from_env({}) == "sqlite+aiosqlite:///hokm.sqlite3"
    data = tmp_path / "data"
    assert database_url_from_env({"HOKM_DATA_DIR": str(data)}) == (
        f"sqlite+aiosqlite:///{data.resolve().as_posix()}/hokm.sqlite3"
    )
    assert database_url_from_env({"DATABASE_URL": "postgres://u:p%40ss@h:5432/db"}) == (
        "postgresql+asyncpg://u:p%40ss@h:5432/db"
    )
    assert database_url_from_env(
        {"DATABASE_URL": "postgresql://u@h/db?sslmode=require", "HOKM_DATA_DIR": "/x"}
    ) == ("postgresql+asyncpg://u@h/db?ssl=require")
    assert normalize_url("postgresql+asyncpg://u@h/db") == "postgresql+asyncpg://u@h/db"
    assert normalize_url("sqlite:///a.db") == "sqlite+aiosqlite:///a.db"


# ------------------------------------------------------------------ migrations


async def test_migrations_reach_head_and_match_models(engine: AsyncEngine, db_url: str) -> None:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None

    def check(conn):  # type: ignore[no-untyped-def]
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        tables = set(inspect(conn).get_table_names())
        return context.get_current_revision(), tables, compare_metadata(context, Base.metadata)

    async with engine.connect() as conn:
        current, tables, diff = await conn.run_sync(check)
    assert current == head
    assert {"users", "chats", "games", "match_results", "player_tallies"} <= tables
    assert diff == [], f"models and migrations differ: {diff}"

    # Running the migrations again is a no-op.
    await migrate(db_url)


async def test_migrate_from_any_directory_and_downgrade(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    await migrate(db_url)
    await downgrade(db_url)
    engine = create_engine(db_url)
    try:
        async with engine.connect() as conn:
            tables = await conn.run_sync(lambda c: set(inspect(c).get_table_names()))
        assert "games" not in tables
    finally:
        await engine.dispose()
    await migrate(db_url)
    assert list(elsewhere.iterdir()) == []


async def test_sqlite_pragmas(engine: AsyncEngine) -> None:
    if engine.dialect.name != "sqlite":
        pytest.skip("SQLite only")
    async with engine.connect() as conn:
        assert (await conn.scalar(text("PRAGMA journal_mode"))) == "wal"
        assert (await conn.scalar(text("PRAGMA foreign_keys"))) == 1
        busy = await conn.scalar(text("PRAGMA busy_timeout"))
        raw = (await conn.get_raw_connection()).driver_connection
        if isinstance(raw, InlineConnection):
            # SQLite must not sleep on the event loop: the connection waits instead.
            assert busy == 0
            assert raw._busy_timeout >= 1
        else:
            assert busy >= 1000


@pytest.mark.parametrize("threads", [False, True], ids=["inline", "threads"])
async def test_sqlite_waits_for_a_write_lock(tmp_path: Path, threads: bool) -> None:
    """A write while another connection of the same process holds the write lock
    waits for it (the loop keeps running, so the holder can finish) instead of
    failing with "database is locked" or stopping the loop."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'lock.sqlite3'}"
    await migrate(url)
    engine = create_engine(url, threads=threads)
    try:
        sessions = session_factory(engine)
        await new_chat(sessions)
        holding, ticks = asyncio.Event(), 0

        async def holder() -> None:
            async with sessions.begin() as s:
                await repo.get_or_create_chat(s, OTHER_CHAT, "group", "holder")
                holding.set()
                for _ in range(20):  # holds the lock over several turns of the loop
                    await asyncio.sleep(0.005)

        async def writer() -> None:
            await holding.wait()
            async with sessions.begin() as s:
                await s.execute(
                    text("UPDATE chats SET title = 'writer' WHERE id = :c"), {"c": CHAT}
                )

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.001)

        tick = asyncio.create_task(ticker())
        await asyncio.wait_for(asyncio.gather(holder(), writer()), 30)
        tick.cancel()
        assert ticks >= 10  # the loop ran while the writer waited
        async with sessions.begin() as s:
            titles = dict((await s.execute(text("SELECT id, title FROM chats"))).all())
        assert titles == {CHAT: "writer", OTHER_CHAT: "holder"}
    finally:
        await engine.dispose()


# ------------------------------------------------------------------ users and chats


async def test_users(sessions: Sessions) -> None:
    async with sessions.begin() as s:
        user = await repo.get_or_create_user(s, DAVE, "Dave", None, "fa-IR")
        assert (user.id, user.language, user.started_bot) == (DAVE, None, False)
        assert user.telegram_language == "fa-IR"
        assert user.created_at.tzinfo is not None
    async with sessions.begin() as s:
        assert await repo.set_user_language(s, DAVE, "en")
        assert await repo.mark_started(s, DAVE)
        assert not await repo.mark_started(s, 42)  # unknown user
        with pytest.raises(ValueError):
            await repo.set_user_language(s, DAVE, "de")
    async with sessions.begin() as s:
        user = await repo.get_or_create_user(s, DAVE, "David", "dave", "en")
        # Name and username refresh; the chosen language and started flag stay.
        assert (user.first_name, user.username, user.language, user.started_bot) == (
            "David",
            "dave",
            "en",
            True,
        )
        await repo.set_user_language(s, DAVE, None)
    async with sessions() as s:
        user = await repo.get_user(s, DAVE)
        assert user is not None and user.language is None


async def test_the_web_deck_is_kept_per_user(sessions: Sessions) -> None:
    async with sessions.begin() as s:
        await repo.get_or_create_user(s, DAVE, "Dave", None, "fa")
        await repo.get_or_create_user(s, DAVE + 1, "Eve", None, "fa")
        assert await repo.get_user_deck(s, DAVE) is None
        assert await repo.get_user_deck(s, 42) is None  # unknown user
        assert await repo.set_user_deck(s, DAVE, "four")
        assert not await repo.set_user_deck(s, 42, "four")
        with pytest.raises(ValueError):
            await repo.set_user_deck(s, DAVE, "x" * 17)
    async with sessions.begin() as s:
        # Kept across transactions, for that user only; a refreshed name leaves it.
        await repo.get_or_create_user(s, DAVE, "David", "dave", "en")
        assert await repo.get_user_deck(s, DAVE) == "four"
        assert await repo.get_user_deck(s, DAVE + 1) is None
        assert await repo.set_user_deck(s, DAVE, None)
    async with sessions() as s:
        user = await repo.get_user(s, DAVE)
        assert user is not None and user.deck is None and user.language is None


async def test_chats(sessions: Sessions) -> None:
    async with sessions.begin() as s:
        chat = await repo.get_or_create_chat(s, CHAT, "group", "Friends")
        assert (chat.language, chat.settings) == ("fa", {})
        await repo.set_chat_language(s, CHAT, "en")
        settings = await repo.update_chat_settings(s, CHAT, {"target": 7, "timer": 60})
        assert settings == {"target": 7, "timer": 60}
    async with sessions.begin() as s:
        chat = await repo.get_or_create_chat(s, CHAT, "supergroup", "Friends 2")
        assert (chat.type, chat.title, chat.language) == ("supergroup", "Friends 2", "en")
        settings = await repo.update_chat_settings(s, CHAT, {"timer": None, "bot": "hard"})
        assert settings == {"target": 7, "bot": "hard"}
    async with sessions() as s:
        chat = await repo.get_chat(s, CHAT)
        assert chat is not None and chat.settings == {"target": 7, "bot": "hard"}
        with pytest.raises(LookupError):
            await repo.update_chat_settings(s, 1, {"x": 1})


# ------------------------------------------------------------------ games


async def test_create_and_get_game(sessions: Sessions) -> None:
    await new_chat(sessions)
    async with sessions.begin() as s:
        game = await repo.create_game(
            s, CHAT, ALICE, seats=[seat(ALICE, "Alice")], settings={"target": 7}
        )
    assert len(game.id) == 6 and game.id.isascii() and game.id.isalnum()
    assert game.id == game.id.lower()
    assert (game.status, game.move, game.state, game.settings) == ("lobby", 0, None, {"target": 7})
    async with sessions() as s:
        loaded = await repo.get_game(s, game.id)
        assert loaded is not None and loaded.seats == [seat(ALICE, "Alice")]
        assert (await repo.get_active_game(s, CHAT)).id == game.id  # type: ignore[union-attr]
        assert await repo.get_active_game(s, OTHER_CHAT) is None
        assert await repo.get_game(s, "nope00") is None


async def test_one_active_game_per_chat(sessions: Sessions) -> None:
    await new_chat(sessions)
    await new_chat(sessions, OTHER_CHAT)
    async with sessions.begin() as s:
        first = await repo.create_game(s, CHAT, ALICE)
        await repo.create_game(s, OTHER_CHAT, BOB)  # another chat: fine
    async with sessions() as s:
        with pytest.raises(ActiveGameExistsError) as info:
            await repo.create_game(s, CHAT, BOB)
        assert info.value.game_id == first.id
        await s.rollback()

    # The database itself enforces it, whatever the code path (partial unique index).
    async with sessions() as s:
        with pytest.raises(IntegrityError):
            await s.execute(
                text(
                    "INSERT INTO games (id, chat_id, status, owner_id, seats, settings, "
                    "move, private_messages) VALUES ('dup001', :chat, 'playing', 1, "
                    "'[]', '{}', 0, '{}')"
                ),
                {"chat": CHAT},
            )
            await s.flush()
        await s.rollback()

    # A finished or cancelled game frees the chat; inactive games may pile up.
    async with sessions.begin() as s:
        first.status = "playing"
        first.move = 1
        await repo.save_game(s, first, expected_move=0)
    async with sessions.begin() as s:
        first.status = "cancelled"
        await repo.save_game(s, first, expected_move=1)
        second = await repo.create_game(s, CHAT, BOB)
        second.status = "finished"
        await repo.save_game(s, second, expected_move=0)
        third = await repo.create_game(s, CHAT, CARA)
    async with sessions() as s:
        assert (await repo.get_active_game(s, CHAT)).id == third.id  # type: ignore[union-attr]

    # Reviving an old game while another is active violates the index.
    async with sessions() as s:
        first.status = "lobby"
        with pytest.raises(IntegrityError):
            await repo.save_game(s, first, expected_move=1)
        await s.rollback()


async def test_concurrent_lobbies_race(sessions: Sessions) -> None:
    await new_chat(sessions)

    async def open_lobby(owner: int) -> str:
        async with sessions.begin() as s:
            return (await repo.create_game(s, CHAT, owner)).id

    results = await asyncio.gather(
        open_lobby(ALICE), open_lobby(BOB), open_lobby(CARA), return_exceptions=True
    )
    created = [r for r in results if isinstance(r, str)]
    refused = [r for r in results if isinstance(r, ActiveGameExistsError | IntegrityError)]
    assert len(created) == 1 and len(refused) == 2, results


async def test_optimistic_save_conflict(sessions: Sessions) -> None:
    await new_chat(sessions)
    async with sessions.begin() as s:
        game = await repo.create_game(s, CHAT, ALICE)

    # Two handlers read the same game at move 0 ...
    async with sessions() as s:
        mine = await repo.get_game(s, game.id)
    async with sessions() as s:
        theirs = await repo.get_game(s, game.id)
    assert mine is not None and theirs is not None and mine is not theirs

    # ... the first to save wins ...
    deadline = datetime.now(UTC) + timedelta(seconds=60)
    async with sessions.begin() as s:
        mine.status, mine.state, mine.move, mine.deadline = "playing", '{"v": 1}', 1, deadline
        await repo.save_game(s, mine, expected_move=0)
        await repo.bind_slot(s, repo.hand_slot(game.id, ALICE), 77)

    # ... and the second cannot overwrite it.
    async with sessions() as s:
        theirs.state, theirs.move = '{"v": "other"}', 1
        with pytest.raises(StaleGameError) as info:
            await repo.save_game(s, theirs, expected_move=0)
        assert (info.value.game_id, info.value.expected_move) == (game.id, 0)
        await s.rollback()

    async with sessions() as s:
        stored = await repo.get_game(s, game.id)
    assert stored is not None
    assert (stored.status, stored.state, stored.move) == ("playing", '{"v": 1}', 1)
    assert stored.private_messages == {str(ALICE): 77}  # JSON keys are strings
    assert stored.deadline == deadline and stored.deadline.tzinfo is not None

    # Message ids are bound by themselves and keep the move number.
    async with sessions.begin() as s:
        await repo.bind_slot(s, repo.table_slot(game.id), 9_000_000_000)
    async with sessions() as s:
        again = await repo.get_game(s, game.id)
    assert again is not None and (again.move, again.table_message_id) == (1, 9_000_000_000)

    # A missing game is stale too.
    ghost = Game(id="ghost1", chat_id=CHAT, owner_id=ALICE, status="lobby", move=3)
    async with sessions() as s:
        with pytest.raises(StaleGameError):
            await repo.save_game(s, ghost, expected_move=3)


async def test_message_ids_survive_saves_from_stale_reads(sessions: Sessions) -> None:
    """A game saved from a read made before a message was sent keeps that message's id,
    and binding one player's hand message keeps the others' (no read-modify-write)."""
    await new_chat(sessions)
    async with sessions.begin() as s:
        game = await repo.create_game(s, CHAT, ALICE)
    async with sessions() as s:
        stale = await repo.get_game(s, game.id)
    assert stale is not None

    async def bind(slot: str, message_id: int | None) -> None:
        async with sessions.begin() as s:
            await repo.bind_slot(s, slot, message_id)

    await asyncio.gather(
        bind(repo.table_slot(game.id), 500),
        bind(repo.hand_slot(game.id, ALICE), 501),
        bind(repo.hand_slot(game.id, BOB), 502),
        bind(repo.hand_slot(game.id, CARA), 503),
    )
    async with sessions.begin() as s:
        stale.seats = [{"user_id": ALICE}]
        await repo.save_game(s, stale, expected_move=0)
    await bind(repo.hand_slot(game.id, BOB), None)
    async with sessions() as s:
        stored = await repo.get_game(s, game.id)
        assert await repo.slot_message_id(s, repo.hand_slot(game.id, CARA)) == 503
        assert await repo.slot_message_id(s, repo.hand_slot(game.id, BOB)) is None
        assert await repo.slot_message_id(s, repo.table_slot(game.id)) == 500
    assert stored is not None and stored.seats == [{"user_id": ALICE}]
    assert stored.table_message_id == 500
    assert stored.private_messages == {str(ALICE): 501, str(CARA): 503}


async def test_concurrent_saves_only_one_wins(sessions: Sessions) -> None:
    await new_chat(sessions)
    async with sessions.begin() as s:
        game = await repo.create_game(s, CHAT, ALICE)

    async def play(tag: str) -> str:
        async with sessions() as s:
            snapshot = await repo.get_game(s, game.id)
        assert snapshot is not None
        await asyncio.sleep(0)
        async with sessions.begin() as s:
            snapshot.state = tag
            snapshot.move = 1
            await repo.save_game(s, snapshot, expected_move=0)
        return tag

    results = await asyncio.gather(*(play(f"w{i}") for i in range(4)), return_exceptions=True)
    winners = [r for r in results if isinstance(r, str)]
    assert len(winners) == 1, results
    assert all(isinstance(r, StaleGameError) for r in results if not isinstance(r, str))
    async with sessions() as s:
        stored = await repo.get_game(s, game.id)
    assert stored is not None and stored.state == winners[0]


async def test_detached_game_is_not_autoflushed(sessions: Sessions) -> None:
    await new_chat(sessions)
    async with sessions.begin() as s:
        game = await repo.create_game(s, CHAT, ALICE)
    async with sessions.begin() as s:
        loaded = await repo.get_game(s, game.id)
        assert loaded is not None
        loaded.state = "unsaved"
        loaded.move = 5
        await repo.get_active_game(s, CHAT)  # a query: no autoflush of `loaded`
    async with sessions() as s:
        stored = await repo.get_game(s, game.id)
    assert stored is not None and (stored.state, stored.move) == (None, 0)


async def test_list_active_games_and_find_for_user(sessions: Sessions) -> None:
    await new_chat(sessions)
    await new_chat(sessions, OTHER_CHAT)
    third_chat = -1005555555555
    await new_chat(sessions, third_chat)
    async with sessions.begin() as s:
        lobby = await repo.create_game(s, CHAT, ALICE, seats=[seat(ALICE, "Alice")])
        playing = await repo.create_game(
            s,
            OTHER_CHAT,
            BOB,
            seats=[seat(BOB, "Bob"), seat(None, "Computer", "normal"), seat(DAVE, "Dave")],
        )
        playing.status, playing.move = "playing", 1
        playing.deadline = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
        await repo.save_game(s, playing, expected_move=0)
        done = await repo.create_game(s, third_chat, CARA, seats=[seat(CARA, "Cara")])
        done.status = "finished"
        await repo.save_game(s, done, expected_move=0)

    async with sessions() as s:
        active = await repo.list_active_games(s)
        assert {g.id for g in active} == {lobby.id, playing.id}
        resumed = next(g for g in active if g.id == playing.id)
        assert resumed.deadline == datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
        assert resumed.user_ids() == [BOB, DAVE]

        assert (await repo.find_active_game_for_user(s, ALICE)).id == lobby.id  # type: ignore[union-attr]
        assert (await repo.find_active_game_for_user(s, DAVE)).id == playing.id  # type: ignore[union-attr]
        assert await repo.find_active_game_for_user(s, CARA) is None  # finished
        assert await repo.find_active_game_for_user(s, 424242) is None


# ------------------------------------------------------------------ results and tallies


async def test_results_tallies_and_leaderboard(sessions: Sessions) -> None:
    await new_chat(sessions)
    players = [
        {"user_id": ALICE, "name": "Alice", "side": 0, "bot": None},
        {"user_id": BOB, "name": "Bob", "side": 1, "bot": None},
        {"user_id": CARA, "name": "Cara", "side": 0, "bot": None},
        {"user_id": None, "name": "Computer", "side": 1, "bot": "normal"},
    ]
    t0 = datetime(2026, 11, 22, 20, 0, tzinfo=UTC)
    async with sessions.begin() as s:
        first = await repo.record_match_result(
            s,
            chat_id=CHAT,
            game_id="game01",
            variant="four",
            target=7,
            scores=[7, 5],
            winner_side=0,
            hands_played=9,
            players=players,
            hands_won=[5, 4],
            kots=[1, 0],
            finished_at=t0,
        )
        assert first is not None and first.id is not None
    async with sessions.begin() as s:
        # Recording the same game again changes nothing.
        assert (
            await repo.record_match_result(
                s,
                chat_id=CHAT,
                game_id="game01",
                variant="four",
                target=7,
                scores=[7, 5],
                winner_side=0,
                hands_played=9,
                players=players,
            )
            is None
        )
    async with sessions.begin() as s:
        renamed = [dict(p, name="Bobby") if p["user_id"] == BOB else p for p in players]
        await repo.record_match_result(
            s,
            chat_id=CHAT,
            game_id="game02",
            variant="four",
            target=7,
            scores=[3, 7],
            winner_side=1,
            hands_played=6,
            players=renamed,
            hands_won=[2, 4],
            kots=[0, 2],
            finished_at=t0 + timedelta(hours=1),
        )

    async with sessions() as s:
        alice = await repo.get_tally(s, CHAT, ALICE)
        bob = await repo.get_tally(s, CHAT, BOB)
        assert alice is not None and bob is not None
        assert (alice.matches_played, alice.matches_won, alice.hands_won, alice.kots) == (
            2,
            1,
            7,
            1,
        )
        assert alice.points == 10
        assert (bob.name, bob.matches_played, bob.matches_won, bob.hands_won, bob.kots) == (
            "Bobby",
            2,
            1,
            8,
            2,
        )
        assert bob.points == 12

        board = await repo.leaderboard(s, CHAT, limit=10)
        # Everyone won one match; Bob has the most hands; Alice and Cara tie, by user id.
        assert [t.user_id for t in board] == [BOB, ALICE, CARA]
        assert len(await repo.leaderboard(s, CHAT, limit=1)) == 1
        assert await repo.leaderboard(s, OTHER_CHAT) == []

        recent = await repo.recent_matches(s, CHAT, limit=5)
        assert [m.game_id for m in recent] == ["game02", "game01"]
        assert recent[1].finished_at == t0
        assert recent[1].players[3] == {
            "user_id": None,
            "name": "Computer",
            "side": 1,
            "bot": "normal",
        }
        assert (recent[0].scores, recent[0].winner_side, recent[0].kots) == ([3, 7], 1, [0, 2])
        assert await repo.count_matches(s, CHAT) == 2


async def test_result_and_tally_share_the_transaction(sessions: Sessions) -> None:
    await new_chat(sessions)
    with pytest.raises(RuntimeError):
        async with sessions.begin() as s:
            await repo.record_match_result(
                s,
                chat_id=CHAT,
                game_id="game09",
                variant="four",
                target=7,
                scores=[7, 0],
                winner_side=0,
                hands_played=7,
                players=[{"user_id": ALICE, "name": "Alice", "side": 0, "bot": None}],
            )
            raise RuntimeError("crash before commit")
    async with sessions() as s:
        assert await repo.recent_matches(s, CHAT) == []
        assert await repo.get_tally(s, CHAT, ALICE) is None
        assert (await s.scalar(select(Game).limit(1))) is None


async def test_session_factory_keeps_objects_after_commit(engine: AsyncEngine) -> None:
    factory = session_factory(engine)
    async with factory.begin() as s:
        user = await repo.get_or_create_user(s, ALICE, "Alice")
    assert user.first_name == "Alice"  # no lazy load after commit


async def test_outbox_ids_are_never_reused(sessions: Sessions) -> None:
    """A drain holds rows it read and deletes each by id once sent: an id handed again
    to a newer row (SQLite reuses the largest rowid of an emptied table) would make it
    delete a message never sent."""
    from sqlalchemy import delete, select

    from telegram_bot.platform.storage.models import OutboxMessage

    async with sessions.begin() as s:
        s.add(OutboxMessage(chat_id=CHAT, op="send", text="first"))
    async with sessions.begin() as s:
        first = await s.scalar(select(OutboxMessage.id))
        await s.execute(delete(OutboxMessage))
    async with sessions.begin() as s:
        s.add(OutboxMessage(chat_id=CHAT, op="send", text="second"))
    async with sessions() as s:
        second = await s.scalar(select(OutboxMessage.id))
    assert second > first


async def test_a_game_saved_commits_and_rolls_back_with_its_transaction(
    sessions: Sessions, engine: AsyncEngine
) -> None:
    """On PostgreSQL the game is read and saved on asyncpg directly (storage.pgdirect):
    still inside the session's transaction, its row lock held until the end."""
    await new_chat(sessions)
    async with sessions.begin() as s:
        game = await repo.create_game(s, CHAT, ALICE)
    with pytest.raises(RuntimeError):
        async with sessions.begin() as s:
            loaded = await repo.get_game(s, game.id, lock=True)
            assert loaded is not None
            loaded.move = 1
            await repo.save_game(s, loaded, expected_move=0)
            if engine.dialect.name == "postgresql":
                async with sessions.begin() as other:  # the row is locked meanwhile
                    assert await repo.get_game(other, game.id, lock="skip") is None
            raise RuntimeError("rolled back")
    async with sessions.begin() as s:
        loaded = await repo.get_game(s, game.id, lock=True)
        assert loaded is not None and loaded.move == 0
        loaded.move = 1
        await repo.save_game(s, loaded, expected_move=0)
    async with sessions() as s:
        stored = await repo.get_game(s, game.id, lock="skip")
        assert stored is not None and stored.move == 1
        with pytest.raises(StaleGameError):
            await repo.save_game(s, stored, expected_move=0)
