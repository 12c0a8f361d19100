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

``--recheck SECONDS`` asks, at each of A's decisive errors, a fresh A with that
budget, sampling fresh deals (``reuse_deals=0``) with no early stop on a margin
(``settle_margin`` and ``lead_settle_margin`` 0), and counts how often its card would
have kept the hand, next to how often a card drawn at random among A's distinct
choices would have: if more search fixed the errors, the first would be well above
the second.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter

from core import Match, PlayCard, Variant
from core.arena import parse_settings, seat_players, seatings, tuned
from core.events import HandEnded
from core.players import make_player
from core.players.double_dummy import dds_card_tricks
from core.players.knowledge import Knowledge
from core.players.oracle import OraclePlayer
from core.players.search import distinct_cards
from core.scoring import TRICKS_TO_WIN

ROLES = ("hakem's side", "defenders")


def recheck(
    a: str, a_set: tuple[tuple[str, str], ...], view, good: set[int], seed: int, budget: float
) -> tuple[bool, float]:
    """Whether a fresh, bigger search of A picks a card that keeps the hand, and the
    share of A's distinct cards that do."""
    player = tuned(make_player(a, seed=seed, time_budget=budget), a_set)
    for name, value in (("reuse_deals", 0), ("settle_margin", 0.0), ("lead_settle_margin", 0.0)):
        if hasattr(player, name):
            setattr(player, name, value)
    card = int(player.act(view).card)  # type: ignore[union-attr]
    distinct = distinct_cards([x.card for x in view.legal], Knowledge(view))  # type: ignore[union-attr]
    return card in good, sum(int(c) in good for c in distinct) / len(distinct)


def play_and_check(
    a: str,
    b: str,
    seed: int,
    budget: float,
    a_set: tuple[tuple[str, str], ...] = (),
    recheck_budget: float | None = None,
) -> list[dict]:
    """Both seatings of one deal; for each, the decisive errors of each side."""
    out = []
    for k, seating in enumerate(seatings(4)):
        seats = seat_players(a, b, seating, seed * 100 + k * 10, budget, a_set)
        m, _ = Match.new(Variant(4), seed)
        # (who, role, trick, position; for A's errors with --recheck: kept, share)
        errors: list[tuple] = []
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
                        error: tuple = (seating[seat], role, len(m.tricks) + 1, len(m.trick) + 1)
                        if recheck_budget and seating[seat] == 0:
                            good = {c for c, v in values.items() if won + v >= TRICKS_TO_WIN}
                            error += recheck(a, a_set, view, good, seed, recheck_budget)
                        errors.append(error)
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
    p.add_argument("--recheck", type=float, metavar="SECONDS", help="re-ask A's errors, bigger")
    opts = p.parse_args()
    a_set = parse_settings(opts.a_set)
    t0 = time.perf_counter()
    hands = []
    for d in range(opts.deals):
        hands.extend(
            play_and_check(opts.a, opts.b, opts.seed + d, opts.budget, a_set, opts.recheck)
        )
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
    if opts.recheck:
        rechecked = [e for h in hands for e in h["errors"] if len(e) > 4]
        for what, pos in (("leads", {1}), ("follows", {2, 3, 4})):
            some = [e for e in rechecked if e[3] in pos]
            if some:
                kept = sum(e[4] for e in some)
                share = sum(e[5] for e in some) / len(some)
                print(
                    f"A's decisive {what} re-asked at {opts.recheck} s (fresh deals, no margin):"
                    f" {kept} of {len(some)} kept the hand ({kept / len(some):.0%}); a random"
                    f" distinct card would keep it {share:.0%} of the time"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
