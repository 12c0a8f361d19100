"""The page's view model: no card a seat may not see, in any payload, at any moment
of whole matches of every variant."""

from __future__ import annotations

import json
import random
import re

import pytest

from core.cards import cards_in
from core.match import Match
from core.state import Phase
from core.variant import Variant
from telegram_bot.web.view import SeatInfo, view_of_match

CARD = re.compile(r"[2-9TJQKA][SHDC]")


def _strings(obj) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _strings(v)] + [
            k for k in obj if isinstance(k, str)
        ]
    if isinstance(obj, list | tuple):
        return [s for v in obj for s in _strings(v)]
    return []


def _hidden_from(m: Match, seat: int | None) -> set[str]:
    hidden = set()
    for s in range(m.n):
        if s != seat:
            hidden |= {c.ascii for c in cards_in(m.hands[s])}
        # Discards: another seat's are hidden; with two players one's own may hold a
        # card put away unseen (a kept draw), so none are to be shown at all.
        hidden |= {c.ascii for c in cards_in(m.discards[s])}
    stock = list(m.stock)
    if seat is not None and m.phase is Phase.DRAW and seat == m.turn and stock:
        stock = stock[1:]  # the deciding seat sees the top card
    hidden |= {c.ascii for c in stock}
    hidden |= {c.ascii for c in m.pile}
    return hidden


def _payloads(m: Match):
    seats = [SeatInfo(f"P{i}") for i in range(m.n)]
    for seat in [*range(m.n), None]:
        payload = view_of_match(m, seat, game_id="g1", move=m.ply, seats=seats)
        # What goes on the wire: the JSON text.
        yield seat, json.loads(json.dumps(payload))


@pytest.mark.slow
@pytest.mark.parametrize(
    "variant",
    [Variant.four(), Variant.three(), Variant.two(), Variant.bidding()],
    ids=["four", "three", "two", "bidding"],
)
@pytest.mark.parametrize("seed", [1, 2])
def test_no_hidden_card_in_any_payload_of_a_whole_match(variant: Variant, seed: int) -> None:
    rng = random.Random(seed)
    m, _ = Match.new(
        variant.with_options(target=2) if variant.kind == "classic" else variant, seed=seed
    )
    moments = 0
    while True:
        for seat, payload in _payloads(m):
            # The face-up deal that chose the first hakem: public, and shuffled back.
            drawn = payload.pop("first_draw")
            assert drawn == [] or drawn == [{"seat": s, "card": c.ascii} for s, c in m.first_draw]
            shown = {s for s in _strings(payload) if CARD.fullmatch(s)}
            leaked = shown & _hidden_from(m, seat)
            assert not leaked, (seat, m.phase, leaked)
            if seat is None:
                assert payload["hand"] == [] and payload["legal"] == {}
            else:
                assert sorted(payload["hand"]) == sorted(c.ascii for c in m.hand_of(seat))
                if m.phase is Phase.PLAY and seat == m.turn:
                    assert sorted(payload["legal"]["play"]) == sorted(
                        c.ascii for c in m.legal_cards(seat)
                    )
                elif seat != m.turn:
                    assert payload["legal"] == {}
        moments += 1
        if m.is_over or moments >= 3000:
            break
        seat = m.turn
        m.apply(seat, rng.choice(m.legal_actions(seat)))
    if variant.kind == "bidding":
        return  # random bids rarely end a match: 3000 moments of it are enough
    assert m.is_over
    last = next(_payloads(m))[1]
    assert last["winner"] == m.winner and last["phase"] == "over"


def test_payload_at_trick_play() -> None:
    m, _ = Match.new(Variant.four(), seed=5)
    m.apply(m.turn, m.legal_actions(m.turn)[0])  # trump
    assert m.phase is Phase.PLAY
    first = m.turn
    card = m.legal_cards(first)[0]
    m.play(first, card)
    seats = [SeatInfo("Ali"), SeatInfo("Sara", bot=True), SeatInfo("Reza"), SeatInfo("Mina")]
    p = view_of_match(m, m.turn, game_id="abc", move=7, seats=seats, deadline=1.5)
    assert p["game"] == "abc" and p["move"] == 7 and p["deadline"] == 1.5
    assert p["trump"] == m.trump.letter and p["hakem"] == m.hakem
    assert p["trick"] == [{"seat": first, "card": card.ascii}]
    assert len(p["hand"]) == 13 and p["you"] == m.turn
    assert [s["cards"] for s in p["seats"]] == [12 if s == first else 13 for s in range(4)]
    assert p["seats"][1] | {} == p["seats"][1] and p["seats"][1]["bot"] is True
    assert [s["side"] for s in p["seats"]] == [0, 1, 0, 1]
    # The hand is held by suit, colours alternating, high to low.
    suits = [c[1] for c in p["hand"]]
    assert suits == sorted(suits, key="SHCD".index)
