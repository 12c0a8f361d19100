"""Four players (RULES.md "Four players"): first hakem, teams, the deal, trick play,
the end of a hand, kot and hakem-kot, the next hakem and the end of the match."""

from __future__ import annotations

import random

import pytest

from core import (
    CardPlayed,
    CardsDealt,
    ChooseTrump,
    ErrorCode,
    HakemDrawn,
    HandEnded,
    HandKind,
    HandStarted,
    Match,
    MatchEnded,
    Phase,
    PlayCard,
    SeatsArranged,
    Suit,
    TrickWon,
    TrumpChosen,
    Variant,
)
from tests.core.helpers import (
    build_position,
    card,
    check_first_draw,
    of_type,
    play_random_until,
    play_trick,
    refused,
    refused_play,
)

FOUR = Variant.four()


def started(seed: int, variant: Variant = FOUR) -> tuple[Match, list]:
    m, events = Match.new(variant, seed=seed)
    return m, events


# ------------------------------------------------------------- first hakem


@pytest.mark.parametrize("seed", range(40))
def test_first_hakem_is_the_first_ace_dealt_face_up(seed: int) -> None:
    m, events = started(seed)
    drawn = events[0]
    assert isinstance(drawn, HakemDrawn)
    check_first_draw(FOUR, drawn)
    assert drawn.draw[-1][1].rank == 14 and drawn.draw[-1][0] == drawn.hakem
    assert all(c.rank != 14 for _, c in drawn.draw[:-1])
    assert m.hakem == drawn.hakem and m.first_draw == drawn.draw
    # Shown to the table: every view, spectators included, has the sequence.
    assert m.view(None).first_draw == drawn.draw
    assert all(m.view(s).first_draw == drawn.draw for s in range(4))
    assert not of_type(events, SeatsArranged) and m.order == (0, 1, 2, 3)


def test_first_draw_starts_from_a_random_seat() -> None:
    starts, hakems = set(), set()
    for seed in range(60):
        _, events = started(seed)
        starts.add(events[0].draw[0][0])
        hakems.add(events[0].hakem)
    assert starts == hakems == {0, 1, 2, 3}


@pytest.mark.parametrize("seed", range(40))
def test_teams_by_aces_seat_partners_opposite(seed: int) -> None:
    v = Variant.four(teams_by_aces=True)
    m, events = started(seed, v)
    drawn = events[0]
    check_first_draw(v, drawn)
    hakem, partner = drawn.hakem, drawn.partner
    assert partner is not None and partner != hakem
    arranged = events[1]
    assert isinstance(arranged, SeatsArranged) and arranged.order == m.order
    order = m.order
    assert sorted(order) == [0, 1, 2, 3]
    opposite = (hakem + 2) % 4
    # The hakem keeps the seat; the partner (by join order) now sits opposite.
    assert order[hakem] == hakem and order[opposite] == partner
    if partner == opposite:
        assert order == (0, 1, 2, 3)
    else:
        assert order[partner] == opposite  # the player who sat opposite moved
        assert [order[s] for s in range(4) if s not in (partner, opposite)] == [
            s for s in range(4) if s not in (partner, opposite)
        ]
    assert m.view(None).order == order
    assert events[2] == HandStarted(1, hakem, (hakem - 1) % 4)


def test_teams_by_aces_covers_both_cases() -> None:
    cases = set()
    for seed in range(40):
        _, events = started(seed, Variant.four(teams_by_aces=True))
        cases.add(events[0].partner == (events[0].hakem + 2) % 4)
    assert cases == {True, False}


# ------------------------------------------------------------------- deal


@pytest.mark.parametrize("seed", range(12))
def test_dealer_hakem_and_first_five_cards(seed: int) -> None:
    m, events = started(seed)
    h = m.hakem
    assert events[1] == HandStarted(1, h, (h - 1) % 4)
    assert m.dealer == (h - 1) % 4 == m.view(None).dealer
    assert FOUR.side_of(m.dealer) != FOUR.side_of(h)  # the dealer is an opponent
    # The hakem holds five cards and chooses trump before anyone else holds a card.
    assert events[2:] == [CardsDealt(tuple(5 if s == h else 0 for s in range(4)))]
    assert m.phase is Phase.TRUMP and m.turn == h
    assert m.view(None).hand_sizes == tuple(5 if s == h else 0 for s in range(4))
    for s in range(4):
        assert len(m.view(s).hand) == (5 if s == h else 0)
        assert m.legal_actions(s) == ([ChooseTrump(x) for x in Suit] if s == h else [])
    five = set(m.hand_of(h))
    trump = Suit(seed % 4)
    events = m.apply(h, ChooseTrump(trump))
    assert events == [TrumpChosen(h, trump), CardsDealt((13, 13, 13, 13))]
    assert m.trump is trump and set(m.hand_of(h)) >= five
    assert not m.stock
    # The hakem leads the first trick.
    assert m.phase is Phase.PLAY and m.turn == m.leader == h


# ------------------------------------------------------------ trick play


def test_follow_suit_is_enforced() -> None:
    rng = random.Random(3)
    checked = 0
    for seed in range(30):
        m, _ = started(seed)
        while not m.is_over and checked < 40:
            seat = m.turn
            if m.phase is Phase.PLAY and m.trick:
                led = m.trick[0][1].suit
                hand = m.hand_of(seat)
                follow = [c for c in hand if c.suit == led]
                other = [c for c in hand if c.suit != led]
                if follow and other:
                    e = refused(m, seat, PlayCard(rng.choice(other)))
                    assert e.code is ErrorCode.MUST_FOLLOW_SUIT and e.info["led_suit"] == led
                    assert refused_play(m, seat, rng.choice(other)).code is (
                        ErrorCode.MUST_FOLLOW_SUIT
                    )
                    assert set(m.legal_cards(seat)) == set(follow)
                    checked += 1
                elif not follow:
                    # Void in the led suit: any card, trump included.
                    assert m.legal_cards(seat) == tuple(hand)
            m.apply(seat, rng.choice(m.legal_actions(seat)))
    assert checked == 40


def test_leader_may_play_any_card() -> None:
    m, _ = started(8)
    m.apply(m.turn, ChooseTrump(Suit.CLUBS))
    assert m.legal_cards(m.turn) == tuple(m.hand_of(m.turn))


def test_trick_goes_to_the_highest_trump_and_winner_leads() -> None:
    m = build_position(
        FOUR,
        tricks_won=[0, 0, 0, 0],
        hakem=1,
        trump=Suit.HEARTS,
        hands={
            1: [card("AS"), card("KD")],
            2: [card("3S"), card("AC")],
            3: [card("2H"), card("KS")],
            0: [card("QS"), card("JS")],
        },
    )
    assert m.turn == 1
    events = m.apply(1, PlayCard(card("AS")))
    events += m.apply(2, PlayCard(card("3S")))
    assert refused(m, 3, PlayCard(card("2H"))).code is ErrorCode.MUST_FOLLOW_SUIT
    events += m.apply(3, PlayCard(card("KS")))
    events += m.apply(0, PlayCard(card("QS")))
    assert of_type(events, TrickWon)[0].seat == 1
    assert m.turn == m.leader == 1
    # The last trick (one card each): seat 2 is void in spades and ruffs with a low trump.
    m2 = build_position(
        FOUR,
        tricks_won=[3, 3, 3, 3],
        hakem=1,
        trump=Suit.HEARTS,
        hands={1: [card("AS")], 2: [card("2H")], 3: [card("KS")], 0: [card("QS")]},
        leader=1,
    )
    events = play_trick_cards(m2, ["AS", "2H", "KS", "QS"])
    won = of_type(events, TrickWon)[0]
    assert won.seat == 2 and won.plays[1] == (2, card("2H"))
    assert of_type(events, HandEnded)[0].winner == 0


def play_trick_cards(m: Match, texts: list[str]) -> list:
    events: list = []
    for t in texts:
        events += m.apply(m.turn, PlayCard(card(t)))
    return events


# ----------------------------------------------------------- end of a hand


def test_hand_ends_as_soon_as_a_team_has_seven_tricks() -> None:
    # Partners sit opposite: seats 0 and 2 have 3 + 3 tricks; seat 2 takes the 7th.
    m = build_position(FOUR, tricks_won=[3, 2, 3, 1], hakem=1, hands={2: [card("AS")]}, leader=2)
    events = play_trick(m, card("AS"))
    ended = of_type(events, HandEnded)
    assert ended == [
        HandEnded(1, 0, HandKind.NORMAL, (1, 0), (3, 2, 4, 1), (1, 0), 1),
    ]
    # The rest of the hand (3 tricks) is not played: a new hand starts at once.
    assert of_type(events, HandStarted)[0].hand_no == 2
    assert m.hand_no == 2 and m.phase is Phase.TRUMP and m.scores == [1, 0]
    assert len(of_type(events, CardPlayed)) == 4


def test_hand_goes_on_below_seven() -> None:
    m = build_position(FOUR, tricks_won=[3, 2, 2, 3], hakem=0, hands={1: [card("AS")]}, leader=1)
    events = play_trick(m, card("AS"))
    assert of_type(events, TrickWon)[0].tricks == (3, 3, 2, 3)  # 5 to 6
    assert not of_type(events, HandEnded)
    assert m.phase is Phase.PLAY and m.turn == 1 and m.hand_no == 1


@pytest.mark.parametrize(
    ("hakem", "kind", "points"),
    [
        (0, HandKind.KOT, 2),  # the hakem's team wins 7-0
        (2, HandKind.KOT, 2),
        (1, HandKind.HAKEM_KOT, 3),  # the hakem's opponents win 7-0
        (3, HandKind.HAKEM_KOT, 3),
    ],
)
def test_kot_and_hakem_kot(hakem: int, kind: HandKind, points: int) -> None:
    m = build_position(
        FOUR, tricks_won=[4, 0, 2, 0], hakem=hakem, hands={0: [card("AS")]}, leader=0
    )
    (ended,) = of_type(play_trick(m, card("AS")), HandEnded)
    assert ended.winner == 0 and ended.kind is kind and ended.points == (points, 0)
    assert ended.tricks == (5, 0, 2, 0) and m.scores == [points, 0]


def test_seven_to_one_is_one_point_even_for_the_opponents() -> None:
    m = build_position(FOUR, tricks_won=[1, 3, 0, 3], hakem=0, hands={3: [card("AS")]}, leader=3)
    (ended,) = of_type(play_trick(m, card("AS")), HandEnded)
    assert (ended.winner, ended.kind, ended.points) == (1, HandKind.NORMAL, (0, 1))


@pytest.mark.parametrize(
    ("hakem", "winner_seat", "next_hakem"),
    [
        (0, 0, 0),  # the hakem's team won: same hakem
        (0, 2, 0),
        (1, 3, 1),
        (0, 1, 1),  # lost: the old hakem deals, the next seat is hakem
        (1, 0, 2),
        (2, 3, 3),
        (3, 0, 0),
        (3, 2, 0),
    ],
)
def test_next_hakem(hakem: int, winner_seat: int, next_hakem: int) -> None:
    won = [0, 0, 0, 0]
    won[winner_seat] = 6
    won[(winner_seat + 1) % 4] = 1
    m = build_position(
        FOUR, tricks_won=won, hakem=hakem, hands={winner_seat: [card("AS")]}, leader=winner_seat
    )
    events = play_trick(m, card("AS"))
    (ended,) = of_type(events, HandEnded)
    assert ended.winner == winner_seat % 2 and ended.hakem == hakem
    (started_,) = of_type(events, HandStarted)
    assert started_.hakem == next_hakem == m.hakem
    assert started_.dealer == (next_hakem - 1) % 4 == m.dealer
    if next_hakem != hakem:
        assert m.dealer == hakem  # the old hakem deals
    assert m.turn == next_hakem and m.phase is Phase.TRUMP
    assert len(m.hand_of(next_hakem)) == 5


# ---------------------------------------------------------- end of match


@pytest.mark.parametrize(
    ("target", "scores", "tricks", "final"),
    [
        (7, [6, 3], [3, 2, 3, 1], (7, 3)),
        (7, [6, 6], [3, 2, 3, 1], (7, 6)),
        (7, [5, 0], [3, 0, 3, 0], (7, 0)),  # kot jumps to the target
        (7, [6, 4], [3, 0, 3, 0], (8, 4)),  # kot passes it
        (3, [2, 0], [3, 2, 3, 1], (3, 0)),  # the target is a table setting
    ],
)
def test_match_ends_at_target(target: int, scores: list, tricks: list, final: tuple) -> None:
    v = Variant.four(target=target)
    m = build_position(
        v, tricks_won=tricks, hakem=0, scores=scores, hands={0: [card("AS")]}, leader=0
    )
    events = play_trick(m, card("AS"))
    assert events[-1] == MatchEnded(0, final)
    assert isinstance(events[-2], HandEnded) and events[-2].scores == final
    assert m.is_over and m.phase is Phase.OVER and m.winner == 0 and m.turn is None
    assert m.legal_actions(0) == [] and m.legal_cards(0) == ()
    for seat in range(4):
        assert refused(m, seat, PlayCard(m.hand_of(seat)[0])).code is ErrorCode.MATCH_OVER
    assert refused(m, 0, ChooseTrump(Suit.SPADES)).code is ErrorCode.MATCH_OVER


def test_no_match_end_below_target() -> None:
    m = build_position(
        FOUR, tricks_won=[3, 2, 3, 1], hakem=0, scores=[5, 6], hands={0: [card("AS")]}, leader=0
    )
    events = play_trick(m, card("AS"))
    assert not of_type(events, MatchEnded) and m.scores == [6, 6] and not m.is_over


def test_whole_seeded_match() -> None:
    """A full match with random legal play: the match ends exactly when a team reaches 7."""
    m, _ = started(11)
    events = play_random_until(m, random.Random(11), lambda x: False)
    ends = of_type(events, HandEnded)
    assert m.is_over and max(m.scores) >= 7 and ends[-1].scores == tuple(m.scores)
    assert all(max(e.scores) < 7 for e in ends[:-1])
    assert events[-1] == MatchEnded(m.winner, tuple(m.scores))
    assert m.scores[m.winner] == max(m.scores)
    assert [e.hand_no for e in ends] == list(range(1, len(ends) + 1))
