"""The card art: every card drawn, well-formed, with the right pips and colours."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from core.cards import CARDS, Rank
from telegram_bot.web import cards

NS = "{http://www.w3.org/2000/svg}"


def _tree(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == NS + "svg"
    return root


@pytest.mark.parametrize("deck", sorted(cards.DECKS))
def test_every_card_is_distinct_wellformed_svg(deck: str) -> None:
    bodies = {cards.asset(f"{deck}/{c.ascii}.svg") for c in CARDS}
    assert None not in bodies and len(bodies) == 52
    for body in bodies:
        _tree(body)


@pytest.mark.parametrize("card", CARDS, ids=[c.ascii for c in CARDS])
def test_pips_and_indices(card) -> None:
    root = _tree(cards.card_svg(card))
    # Two corner indices, each a rank label and a small suit.
    labels = [t.text for t in root.iter(NS + "text")]
    assert labels.count(card.rank.label) >= 2
    suit_path = cards._SUIT_PATHS[card.suit]
    pips = [p for p in root.iter(NS + "path") if p.get("d") == suit_path]
    rank = int(card.rank)
    if rank <= 10:
        assert len(pips) == rank + 2  # the pips, and the two corners'
    elif rank == Rank.ACE:
        assert len(pips) == 3
    else:
        assert len(pips) == 4  # the court's two, and the corners'


def test_colours_of_the_two_decks() -> None:
    def fills(ascii: str, deck: str) -> set[str]:
        root = _tree(cards.card_svg(ascii, deck))
        return {p.get("fill") for p in root.iter(NS + "path") if p.get("fill", "").startswith("#")}

    red, black = cards.DECKS["classic"][1], cards.DECKS["classic"][0]
    assert fills("7H", "classic") == fills("7D", "classic") == {red}
    assert fills("7S", "classic") == fills("7C", "classic") == {black}
    four = [next(iter(fills(f"7{s}", "four"))) for s in "SHDC"]
    assert len(set(four)) == 4


@pytest.mark.parametrize(
    "path",
    [
        "classic/XX.svg",
        "classic/10S.svg",
        "classic/as.svg",
        "classic/AS",
        "nope/AS.svg",
        "back/purple.svg",
        "suit/classic/X.svg",
        "../etc/passwd",
        "classic/AS.svg/x",
        "",
    ],
)
def test_unknown_assets(path: str) -> None:
    assert cards.asset(path) is None


def test_backs_and_suits() -> None:
    for style in cards.BACKS:
        _tree(cards.asset(f"back/{style}.svg"))
    for deck in cards.DECKS:
        for s in "SHDC":
            _tree(cards.asset(f"suit/{deck}/{s}.svg"))
