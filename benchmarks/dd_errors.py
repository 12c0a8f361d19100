"""Where a 4-player level's plays throw a hand away, by double dummy.

    python -m benchmarks.dd_errors --a hard --b yardstick --deals 60 --seed 961000 --budget 0.25

Plays the arena's duplicate deals (the first hand of each seed, A at seats 0 and 2,
then at 1 and 3) and, before every card, asks double dummy (DDS, every card face up)
whether the side of the seat to play can still take 7 tricks with its best card and
with the card played. A play that turns "can still win" into "cannot" is a *decisive
error*: with the cards hidden some are unavoidable, which is why the oracle (shown
every card) makes none and is the ceiling. Printed for A and B, as the hakem's side
and as defenders: decisive errors per 100 hands, by trick and by position in the
trick, and the hands' results; with the load average. Only the first card that flips
a hand is counted for each side (after it the side is lost double dummy).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter

from core import Match, PlayCard, Variant
from core.arena import parse_settings, seat_players, seatings
from core.events import HandEnded
from core.players.double_dummy import dds_card_tricks
from core.players.oracle import OraclePlayer
from core.scoring import TRICKS_TO_WIN

ROLES = ("hakem's side", "defenders")


def play_and_check(
    a: str, b: str, seed: int, budget: float, a_set: tuple[tuple[str, str], ...] = ()
) -> list[dict]:
    """Both seatings of one deal; for each, the decisive errors of each side."""
    out = []
    for k, seating in enumerate(seatings(4)):
        seats = seat_players(a, b, seating, seed * 100 + k * 10, budget, a_set)
        m, _ = Match.new(Variant(4), seed)
        errors: list[tuple[int, int, int, int]] = []  # (who, role, trick, position)
        lost_side = [False, False]
        hakem_side = -1  # known once play begins; the engine deals the next hand at the end
        ended = None
        while ended is None:
            seat = m.turn
            view = m.view(seat)
            player = seats[seat]
            if isinstance(player, OraclePlayer):
                player.see(m)
            action = player.act(view)
            if isinstance(action, PlayCard):
                hakem_side = m.hakem % 2  # type: ignore[operator]
            if isinstance(action, PlayCard) and len(m.legal_cards(seat)) > 1:
                side = seat % 2
                if not lost_side[side]:
                    leader = m.trick[0][0] if m.trick else seat
                    values = dds_card_tricks(list(m.hands), list(m.trick), leader, int(m.trump))
                    won = m.tricks_won[side] + m.tricks_won[side + 2]
                    best = won + max(values.values()) >= TRICKS_TO_WIN
                    mine = won + values[int(action.card)] >= TRICKS_TO_WIN
                    if best and not mine:
                        lost_side[side] = True
                        role = 0 if hakem_side == side else 1
                        errors.append((seating[seat], role, len(m.tricks) + 1, len(m.trick) + 1))
            for e in m.apply(seat, action):
                if isinstance(e, HandEnded):
                    ended = e
        a_side = 0 if seating[0] == 0 else 1
        out.append(
            {
                "errors": errors,
                "a_won": ended.winner % 2 == a_side,
                "a_role": 0 if hakem_side == a_side else 1,
            }
        )
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--a", default="hard")
    p.add_argument("--b", default="yardstick")
    p.add_argument("--deals", type=int, default=60)
    p.add_argument("--seed", type=int, default=961000)
    p.add_argument("--budget", type=float, default=0.25)
    p.add_argument("--a-set", action="append", metavar="NAME=VALUE", help="one of A's settings")
    opts = p.parse_args()
    a_set = parse_settings(opts.a_set)
    t0 = time.perf_counter()
    hands = []
    for d in range(opts.deals):
        hands.extend(play_and_check(opts.a, opts.b, opts.seed + d, opts.budget, a_set))
    n = len(hands)
    names = (opts.a, opts.b)
    print(
        f"4 players, {opts.a}{list(a_set) if a_set else ''} (A) vs {opts.b} (B), deals {opts.seed}-{opts.seed + opts.deals - 1}"
        f" x 2 seatings = {n} hands, budget {opts.budget} s, {time.perf_counter() - t0:.0f} s,"
        f" load {os.getloadavg()[0]:.1f}"
    )
    wins = [Counter(), Counter()]
    for h in hands:
        wins[h["a_role"]][h["a_won"]] += 1
    for role in (0, 1):
        total = sum(wins[role].values())
        print(f"  A's hands won as {ROLES[role]}: {wins[role][True]}/{total}")
    print("decisive errors per 100 hands (each side in each hand counts once):")
    for who in (0, 1):
        errs = [e for h in hands for e in h["errors"] if e[0] == who]
        by_role = Counter(e[1] for e in errs)
        by_trick = Counter(min(e[2], 8) for e in errs)
        by_pos = Counter(e[3] for e in errs)
        per = 100.0 / n
        print(
            f"  {names[who]:>10}: {len(errs) * per:5.1f} in all; as the hakem's side"
            f" {by_role[0] * per:.1f}, as defenders {by_role[1] * per:.1f}"
        )
        print(
            "              by trick "
            + " ".join(f"{t if t < 8 else '8+'}:{by_trick[t] * per:.1f}" for t in range(1, 9))
        )
        print(
            "              by position in the trick "
            + " ".join(f"{q}:{by_pos[q] * per:.1f}" for q in range(1, 5))
        )
        leads = [e for e in errs if e[3] == 1]
        lead_trick = Counter(min(e[2], 8) for e in leads)
        lead_role = Counter(e[1] for e in leads)
        print(
            f"              leads: as the hakem's side {lead_role[0] * per:.1f}, as defenders"
            f" {lead_role[1] * per:.1f}; by trick "
            + " ".join(f"{t if t < 8 else '8+'}:{lead_trick[t] * per:.1f}" for t in range(1, 9))
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
