"""``python -m core``: play one simulated match between computer players and print it."""

from __future__ import annotations

import argparse

from .events import (
    CardPlayed,
    HakemDrawn,
    HandEnded,
    HandStarted,
    MatchEnded,
    TrickWon,
    TrumpChosen,
)
from .match import Match
from .players import make_player
from .variant import Variant


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    parser.add_argument("--bidding", action="store_true", help="the two-player bidding variant")
    parser.add_argument("--level", default="normal", help="random, easy, normal or hard")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quiet", action="store_true", help="hands only, no tricks")
    args = parser.parse_args(argv)
    variant = Variant.bidding() if args.bidding else Variant(players=args.players)
    match, events = Match.new(variant, seed=args.seed)
    players = [make_player(args.level, seed=args.seed + s) for s in range(variant.players)]
    while True:
        for e in events:
            if isinstance(e, HakemDrawn):
                draw = " ".join(f"{s + 1}:{c}" for s, c in e.draw)
                print(f"first ace: {draw} -> seat {e.hakem + 1} is hakem")
            elif isinstance(e, HandStarted):
                print(
                    f"\nhand {e.hand_no}: hakem seat {e.hakem + 1 if e.hakem is not None else '-'}"
                )
            elif isinstance(e, TrumpChosen):
                print(f"trump {e.suit.symbol}")
            elif isinstance(e, TrickWon) and not args.quiet:
                cards = " ".join(f"{s + 1}:{c}" for s, c in e.plays)
                print(f"  trick {e.trick_no:2}: {cards}  -> seat {e.seat + 1}")
            elif isinstance(e, HandEnded):
                print(
                    f"hand won by side {e.winner}: {e.kind} {e.points} tricks {e.tricks} score {e.scores}"
                )
            elif isinstance(e, MatchEnded):
                print(f"\nmatch won by side {e.winner + 1}: {e.scores}")
                return
            elif isinstance(e, CardPlayed):
                pass
        seat = match.turn
        assert seat is not None
        events = match.apply(seat, players[seat].act(match.view(seat)))


if __name__ == "__main__":
    main()
