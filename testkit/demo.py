"""``python -m testkit.demo``: watch the real bot host one match, no token needed.

Starts the Bot API emulator on 127.0.0.1, runs the real bot against it on a
throwaway SQLite file, seats simulated people (who press the buttons in their
private hand messages) beside computer players, and prints the group's
conversation as Telegram would show it, then one person's private hand message.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from testkit.emulator import BotApiEmulator
from testkit.simulation import BotRunner, Table, by_level

NAMES = {"fa": ["سارا", "علی", "مریم", "رضا"], "en": ["Sara", "Ali", "Maryam", "Reza"]}


async def run(players: int, people: int, lang: str, target: int) -> None:
    async with BotApiEmulator(bot_username="HokmDemoBot", bot_name="Hokm") as emu:
        with tempfile.TemporaryDirectory() as tmp:
            runner = BotRunner(emu, f"sqlite+aiosqlite:///{Path(tmp) / 'demo.sqlite3'}")
            await runner.start()
            try:
                users = [emu.add_user(n, language_code=lang) for n in NAMES[lang][:people]]
                for u in users:
                    await emu.send_message(u, u.private_chat_id, "/start")
                group = emu.add_group("Hokm demo", members=users, admins=users[:1])
                owner = users[0]
                if lang == "en":
                    await emu.send_message(owner, group.id, "/language")
                    await runner.settle()
                    await emu.press(
                        owner, group.id, emu.chat_log(group.id)[-1].message_id, "g:::c=en"
                    )
                await emu.send_message(owner, group.id, "/newgame")
                await runner.settle()
                table = Table(emu, runner, group, users)
                game = await table.game()
                lobby = emu.chat_log(group.id)[-1].message_id
                for option in (f"players={players}", f"target={target}", "timer=0"):
                    await emu.press(owner, group.id, lobby, f"o:{game.id}::{option}")
                for u in users[1:]:
                    await emu.press(u, group.id, lobby, f"j:{game.id}")
                await runner.settle()
                await emu.press(owner, group.id, lobby, f"s:{game.id}")
                await table.play_out({u.id: by_level("normal", seed=u.id) for u in users})
                await runner.settle()
                game = await table.game()
                hand = table.hand_message(game, owner)
            finally:
                await runner.stop()
            print_chat(emu, group)
            print_hand(hand, owner.first_name)
            calls = emu.count_calls(methods=("sendMessage", "editMessageText"))
            print(f"\n[{table.presses} button presses by people; {calls} messages sent or edited]")


def print_chat(emu: BotApiEmulator, group) -> None:
    # Only what is still in the group: a table the bot re-posted lower down deleted its
    # old message, which a reader would take for a second, frozen table.
    for message in emu.chat_log(group.id, include_deleted=False):
        who = "bot" if message.from_bot else "person"
        edits = len(message.edits)
        suffix = f"  (edited {edits} times)" if edits else ""
        print(f"\n--- {who}{suffix} ---")
        print(message.text)


def print_hand(message, name: str) -> None:
    """One person's private hand message, as it looked a third of the way through
    (its last version only says who won)."""
    versions = message.edit_history
    version = versions[len(versions) // 3]
    cards = [
        b["text"] for row in (version.reply_markup or {}).get("inline_keyboard", []) for b in row
    ]
    print(
        f"\n=== {name}'s private hand message (version {len(versions) // 3 + 1} of {len(versions)}) ==="
    )
    print(version.text)
    print("[buttons: " + " ".join(cards) + "]")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m testkit.demo", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    parser.add_argument(
        "--people",
        type=int,
        default=2,
        help="simulated people, 1 to --players (the other seats are computers)",
    )
    parser.add_argument("--lang", default="fa", choices=("fa", "en"))
    parser.add_argument("--target", type=int, default=3, choices=(1, 3, 5, 7, 10))
    args = parser.parse_args(argv)
    if not 1 <= args.people <= args.players:
        parser.error(
            f"argument --people: {args.people} is not between 1 and --players "
            f"({args.players}): at least one person must play, and each needs a seat"
        )
    asyncio.run(run(args.players, args.people, args.lang, args.target))


if __name__ == "__main__":
    main()
