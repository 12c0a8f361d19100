"""Benchmark: 4-player hands per second in self-play, in one process.

``python -m core.bench`` prints the figures. Random-legal self-play uses the engine's
legal-move generator and ``push`` (``legal_cards`` + ``push``, as python-chess's
``legal_moves`` + ``push``), the calls a search makes. Its yardstick is a minimal
loop on bit masks (:func:`bitmask_match`) that plays *the same hands*: the same
decks, trump choices and random cards, so the same tricks (checked before timing).
Both deal with :func:`core.deck.deal`, so the deal is not what is compared. The two
run in turns in the same process, so load on the machine hits both alike, and the
ratio engine / loop is printed with the load average. ``--floor`` adds
:mod:`core.bench_floor`, the most an engine with two calls per card can reach. The
rule-based figure goes through ``view`` and ``apply`` with full validation, as a
table does.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections.abc import Callable

from .actions import ChooseTrump
from .bench_floor import _DEAL_PLANS, floor_match
from .cards import SUIT_PATTERNS, Suit
from .deck import deal, deck_rng, shuffled_deck
from .match import Match, Phase
from .players import ComputerPlayer
from .variant import Variant

__all__ = ["bench_players", "bench_random", "bitmask_match", "engine_match", "same_hands"]

_FOUR = Variant.four()


def engine_match(seed: int, tricks: list[tuple[int, ...]] | None = None) -> int:
    """One match of random-legal self-play through the engine; returns its hands.
    ``tricks`` receives each hand's tricks per seat."""
    rnd = random.Random(seed).random
    over = Phase.OVER
    m = Match(_FOUR, seed=seed)
    m.start()
    legal_cards, push = m.legal_cards, m.push
    suits = tuple(ChooseTrump(s) for s in Suit)
    hands = 0
    while m.phase is not over:
        m.apply(m.turn, suits[int(rnd() * 4)])
        options = legal_cards()
        while options:  # none once the hand is over (the next one starts with trump)
            push(options[int(rnd() * len(options))])  # a uniformly random legal card
            options = legal_cards()
        hands += 1
    if tricks is not None:
        tricks.extend(tuple(h["tricks"]) for h in m.history)
    return hands


def bitmask_match(seed: int, tricks: list[tuple[int, ...]] | None = None) -> int:
    """The same match as :func:`engine_match` with nothing but bit masks: first
    hakem, deals, trump, follow suit, trick winners, hand and match scores (kot 2,
    hakem-kot 3, to 7 points). The yardstick of the engine's speed: everything in
    local variables, no calls but the random numbers, the shuffle and the deal
    (the engine's own: dealing is not what is measured)."""
    rnd = random.Random(seed).random
    patterns = SUIT_PATTERNS
    s_, h_, d_, c_ = patterns
    seat = deck_rng(seed, "hakem-seat").randrange(4)
    for card in shuffled_deck(seed, "hakem"):
        if card % 13 == 12:  # the first ace names the hakem
            break
        seat = (seat + 1) & 3
    hakem = seat
    scores = [0, 0]
    hand_no = 0
    while True:
        hand_no += 1
        deck = shuffled_deck(seed, f"hand:{hand_no}")
        trump = int(rnd() * 4)
        hands = deal(deck, _DEAL_PLANS[hakem], 4)
        won = [0, 0, 0, 0]
        leader = hakem
        while True:
            hand = hands[leader]
            options = (
                s_[hand & 0x1FFF]
                + h_[hand >> 13 & 0x1FFF]
                + d_[hand >> 26 & 0x1FFF]
                + c_[hand >> 39]
            )
            best = options[int(rnd() * len(options))]
            hands[leader] = hand ^ 1 << best
            led = best // 13
            top = led  # the suit of the card taking the trick so far
            winner = seat = leader
            for _ in range(3):
                seat = (seat + 1) & 3
                hand = hands[seat]
                follow = hand >> 13 * led & 0x1FFF
                options = (
                    patterns[led][follow]
                    if follow
                    else s_[hand & 0x1FFF]
                    + h_[hand >> 13 & 0x1FFF]
                    + d_[hand >> 26 & 0x1FFF]
                    + c_[hand >> 39]
                )
                card = options[int(rnd() * len(options))]
                hands[seat] = hand ^ 1 << card
                suit = card // 13
                if suit == top:
                    if card > best:
                        best, winner = card, seat
                elif suit == trump:
                    best, winner, top = card, seat, suit
            won[winner] += 1
            leader = winner
            side = winner & 1
            if won[side] + won[side + 2] == 7:
                break
        if tricks is not None:
            tricks.append(tuple(won))
        lost_all = won[1 - side] + won[3 - side] == 0
        points = (2 if side == hakem & 1 else 3) if lost_all else 1
        scores[side] += points
        if scores[side] >= 7:
            return hand_no
        if side != hakem & 1:
            hakem = (hakem + 1) & 3


def bench_random(
    seconds: float = 3.0, seed: int = 1, engine: Callable[[int], int] | None = None
) -> tuple[tuple[int, float], tuple[int, float], float]:
    """Random-legal self-play, the engine (``engine``, by default
    :func:`engine_match`) and the bit-mask loop playing each match
    in turn (the same match: the same hands), for about ``seconds`` of CPU in all.

    Returns ((engine hands, engine seconds), (loop hands, loop seconds), median of
    the per-match speed ratios engine / loop). Taking turns match by match, the
    two meet the same load on a shared machine; the median shrugs off a match
    that a busy machine slowed down. Times are this process's CPU time, so time
    spent waiting for a core is counted for neither; and the two take turns going
    first, since whichever runs second runs a few percent faster (warm caches)."""
    clock = time.process_time
    play = engine or engine_match
    times = [0.0, 0.0]  # engine, loop
    hands = 0
    ratios = []
    deadline = clock() + seconds
    while clock() < deadline:
        took = [0.0, 0.0]
        for side in (0, 1) if seed % 2 else (1, 0):
            t0 = clock()
            h = (play if side == 0 else bitmask_match)(seed)
            took[side] = clock() - t0
        times[0] += took[0]
        times[1] += took[1]
        ratios.append(took[1] / took[0])
        hands += h
        seed += 1
    return (hands, times[0]), (hands, times[1]), statistics.median(ratios)


def same_hands(matches: int = 30, seed: int = 1, engine: Callable[..., int] | None = None) -> bool:
    """Whether the engine (by default :func:`engine_match`) and the bit-mask loop
    play the same hands, trick for trick."""
    for s in range(seed, seed + matches):
        a: list[tuple[int, ...]] = []
        b: list[tuple[int, ...]] = []
        (engine or engine_match)(s, a)
        bitmask_match(s, b)
        if a != b:
            return False
    return True


def bench_players(player: ComputerPlayer, seconds: float = 3.0, seed: int = 1) -> tuple[int, float]:
    """Self-play where every seat is ``player``, deciding from its own view."""
    hands = 0
    match_seed = seed
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        m, _ = Match.new(Variant.four(), seed=match_seed)
        match_seed += 1
        while not m.is_over:
            hand_no = m.hand_no
            seat = m.turn
            m.apply(seat, player.act(m.view(seat)))
            if m.hand_no != hand_no or m.is_over:
                hands += 1
    return hands, time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also time core.bench_floor: two calls per card and no records, against the loop",
    )
    args = parser.parse_args(argv)
    if not same_hands():
        raise SystemExit("the engine and the bit-mask loop played different hands")
    load = os.getloadavg()
    (eh, et), (lh, lt), median = bench_random(2 * args.seconds)
    engine, loop = eh / et, lh / lt
    print(
        f"random-legal self-play, engine (legal_cards + push): {engine:,.0f} 4-player hands "
        f"per CPU second ({eh} hands)"
    )
    print(
        f"random-legal self-play, bit-mask loop, same hands:    {loop:,.0f} 4-player hands "
        f"per CPU second ({lh} hands)"
    )
    print(f"engine / loop: {engine / loop:.2f} (median of the matches: {median:.2f})")
    if args.floor:
        if not same_hands(engine=floor_match):
            raise SystemExit("core.bench_floor and the bit-mask loop played different hands")
        (fh, ft), (lh, lt), median = bench_random(2 * args.seconds, engine=floor_match)
        floor, loop = fh / ft, lh / lt
        print(
            f"two calls per card, no records (core.bench_floor): {floor:,.0f} 4-player hands "
            f"per CPU second; / loop: {floor / loop:.2f} (median of the matches: {median:.2f})"
        )
    from .players import make_player

    hands, elapsed = bench_players(make_player("normal0", seed=1), args.seconds)
    print(
        f"rule-based (normal0) self-play: {hands / elapsed:,.0f} 4-player hands/s ({hands} hands)"
    )
    end = os.getloadavg()
    print(
        f"load average (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the start, "
        f"{end[0]:.2f} {end[1]:.2f} {end[2]:.2f} at the end"
    )


if __name__ == "__main__":
    main()
