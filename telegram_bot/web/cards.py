"""The card art, drawn here as SVG: corner indices, pips, court cards and backs.

Nothing is downloaded: every card is a few hundred bytes of SVG generated on first
use and cached (the page loads them as images, so the browser caches them too).
Two deck styles: ``classic`` (spades and clubs black, hearts and diamonds red) and
``four`` (four colours: diamonds blue, clubs green), easier to tell apart on a small
screen. Court cards are a framed, stylised letter and suit, drawn the same way up
from either end; the card backs are a lattice with the four suits in the middle.

Served as ``/cards/<deck>/<card>.svg`` (``AS``, ``TD``: :attr:`core.Card.ascii`),
``/cards/back/<style>.svg`` and ``/cards/suit/<deck>/<S|H|D|C>.svg``; see
:func:`asset`.
"""

from __future__ import annotations

import functools
import hashlib

from core.cards import CARDS, Card, Rank, Suit, parse_card

__all__ = ["BACKS", "DECKS", "asset", "back_svg", "card_svg", "etag", "suit_svg"]

W, H = 200, 280

#: The deck styles: each suit's colour, spades hearts diamonds clubs.
DECKS: dict[str, tuple[str, str, str, str]] = {
    "classic": ("#1c1c22", "#d1202f", "#d1202f", "#1c1c22"),
    "four": ("#1c1c22", "#d1202f", "#1565c0", "#17803a"),
}
#: The card backs: main colour, darker shade.
BACKS: dict[str, tuple[str, str]] = {
    "blue": ("#1f4e9c", "#163a75"),
    "red": ("#a3202c", "#7a1520"),
    "green": ("#1d6b45", "#134a30"),
}

# The suits as paths in a 100x100 box (drawn by the project).
_SUIT_PATHS = {
    Suit.SPADES: (
        "M50 3C43 15 27 28 15 40C6 49 3 56 3 64C3 77 13 86 26 86C35 86 42 82 46 75"
        "C45 85 40 92 31 97L69 97C60 92 55 85 54 75C58 82 65 86 74 86C87 86 97 77 97 64"
        "C97 56 94 49 85 40C73 28 57 15 50 3Z"
    ),
    Suit.HEARTS: (
        "M50 95C41 83 25 70 13 57C6 49 3 41 3 32C3 17 14 6 28 6C38 6 46 12 50 21"
        "C54 12 62 6 72 6C86 6 97 17 97 32C97 41 94 49 87 57C75 70 59 83 50 95Z"
    ),
    Suit.DIAMONDS: "M50 2C60 18 72 34 88 50C72 66 60 82 50 98C40 82 28 66 12 50C28 34 40 18 50 2Z",
    Suit.CLUBS: (
        "M50 4A21 21 0 0 0 32 36A21 21 0 1 0 45 71C44 83 39 91 31 97L69 97C61 91 56 83 55 71"
        "A21 21 0 1 0 68 36A21 21 0 0 0 50 4Z"
    ),
}

_FONT = "Liberation Sans,Arial,Helvetica,Roboto,DejaVu Sans,sans-serif"
_SERIF = "Liberation Serif,Georgia,Times New Roman,Noto Serif,DejaVu Serif,serif"

# Pip positions (x, y) in the card, for 2 to 10: standard layouts.
_L, _M, _R = 62, 100, 138
_T, _B, _C = 66, 214, 140
_T3, _B3 = 115, 165  # the inner rows of four
_PIPS: dict[int, tuple[tuple[int, int], ...]] = {
    2: ((_M, _T), (_M, _B)),
    3: ((_M, _T), (_M, _C), (_M, _B)),
    4: ((_L, _T), (_R, _T), (_L, _B), (_R, _B)),
    5: ((_L, _T), (_R, _T), (_M, _C), (_L, _B), (_R, _B)),
    6: ((_L, _T), (_R, _T), (_L, _C), (_R, _C), (_L, _B), (_R, _B)),
    7: ((_L, _T), (_R, _T), (_M, 103), (_L, _C), (_R, _C), (_L, _B), (_R, _B)),
    8: ((_L, _T), (_R, _T), (_M, 103), (_L, _C), (_R, _C), (_M, 177), (_L, _B), (_R, _B)),
    9: (
        (_L, _T),
        (_R, _T),
        (_L, _T3),
        (_R, _T3),
        (_M, _C),
        (_L, _B3),
        (_R, _B3),
        (_L, _B),
        (_R, _B),
    ),
    10: (
        (_L, _T),
        (_R, _T),
        (_M, 90),
        (_L, _T3),
        (_R, _T3),
        (_L, _B3),
        (_R, _B3),
        (_M, 190),
        (_L, _B),
        (_R, _B),
    ),
}


def _pip(suit: Suit, color: str, x: float, y: float, size: float, flip: bool = False) -> str:
    s = size / 100
    t = f"translate({x - size / 2:g} {y - size / 2:g}) scale({s:g})"
    if flip:
        t = f"rotate(180 {x:g} {y:g}) " + t
    return f'<path transform="{t}" fill="{color}" d="{_SUIT_PATHS[suit]}"/>'


def _corner(card: Card, color: str) -> str:
    label = card.rank.label
    size = 30 if label == "10" else 36
    spacing = ' letter-spacing="-3"' if label == "10" else ""
    text = (
        f'<text x="24" y="44" text-anchor="middle" font-family="{_FONT}" font-weight="700" '
        f'font-size="{size}"{spacing} fill="{color}">{label}</text>'
    )
    return text + _pip(card.suit, color, 24, 64, 24)


def _crown(kind: Rank, color: str, x: float, y: float) -> str:
    """A small ornament over a court letter: a crown for K and Q, a gem for J."""
    if kind == Rank.JACK:
        return (
            f'<path fill="{color}" d="M{x} {y - 12}l9 10l-9 10l-9-10z"/>'
            f'<path fill="#fff" opacity=".55" d="M{x} {y - 8}l4 6h-8z"/>'
        )
    points = 5 if kind == Rank.KING else 3
    width = 40 if kind == Rank.KING else 32
    left = x - width / 2
    step = width / (points - 1)
    d = f"M{left:g} {y + 8}"
    for i in range(points):
        px = left + i * step
        d += f"L{px:g} {y - 10}"
        if i < points - 1:
            d += f"L{px + step / 2:g} {y - 1}"
    d += f"L{left + width:g} {y + 8}Z"
    dots = "".join(
        f'<circle cx="{left + i * step:g}" cy="{y - 12}" r="3" fill="{color}"/>'
        for i in range(points)
    )
    return f'<path fill="{color}" d="{d}"/>{dots}'


def _court(card: Card, color: str) -> str:
    x0, y0, x1, y1 = 44, 30, 156, 250
    tint = "#fbf3dc"
    frame = (
        f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" rx="8" fill="{tint}" '
        f'stroke="{color}" stroke-width="3"/>'
        f'<rect x="{x0 + 6}" y="{y0 + 6}" width="{x1 - x0 - 12}" height="{y1 - y0 - 12}" rx="5" '
        f'fill="none" stroke="{color}" stroke-width="1" opacity=".5"/>'
        f'<path d="M{x0 + 10} 140H{x1 - 10}" stroke="{color}" stroke-width="1.5" opacity=".6"/>'
    )
    half = (
        _crown(card.rank, color, 88, 56)
        + f'<text x="88" y="126" text-anchor="middle" font-family="{_SERIF}" font-weight="700" '
        f'font-size="66" fill="{color}">{card.rank.label}</text>'
        + _pip(card.suit, color, 134, 100, 30)
    )
    return frame + half + f'<g transform="rotate(180 100 140)">{half}</g>'


def _face(card: Card, deck: str) -> str:
    color = DECKS[deck][card.suit]
    rank = int(card.rank)
    if rank == Rank.ACE:
        body = _pip(card.suit, color, 100, 140, 110 if card.suit == Suit.SPADES else 96)
    elif rank >= Rank.JACK:
        body = _court(card, color)
    else:
        body = "".join(_pip(card.suit, color, x, y, 36, flip=y > _C) for x, y in _PIPS[rank])
    corner = _corner(card, color)
    return (
        f'<rect x="1" y="1" width="{W - 2}" height="{H - 2}" rx="14" fill="#fff" '
        f'stroke="#b9bcc6" stroke-width="2"/>'
        f'{body}{corner}<g transform="rotate(180 100 140)">{corner}</g>'
    )


def _svg(inner: str, title: str, w: int = W, h: int = H) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" '
        f'height="{h}" role="img"><title>{title}</title>{inner}</svg>'
    )


@functools.lru_cache(maxsize=256)
def card_svg(card: Card | int | str, deck: str = "classic") -> str:
    """One card's face as an SVG document."""
    if deck not in DECKS:
        raise KeyError(deck)
    c = parse_card(card) if isinstance(card, str) else CARDS[int(card)]
    return _svg(_face(c, deck), str(c))


@functools.lru_cache(maxsize=8)
def back_svg(style: str = "blue") -> str:
    """A card back: a lattice in the style's colours, the four suits in the middle."""
    main, dark = BACKS[style]
    lattice = (
        f'<pattern id="l" width="16" height="16" patternUnits="userSpaceOnUse">'
        f'<rect width="16" height="16" fill="{main}"/>'
        f'<path d="M8 0L16 8L8 16L0 8Z" fill="{dark}"/>'
        f'<circle cx="8" cy="8" r="1.6" fill="#fff" opacity=".35"/></pattern>'
    )
    suits = "".join(
        _pip(s, "#fff", x, y, 22)
        for s, (x, y) in zip(Suit, ((100, 118), (122, 140), (100, 162), (78, 140)), strict=True)
    )
    inner = (
        f"<defs>{lattice}</defs>"
        f'<rect x="1" y="1" width="{W - 2}" height="{H - 2}" rx="14" fill="#fff" '
        f'stroke="#b9bcc6" stroke-width="2"/>'
        f'<rect x="12" y="12" width="{W - 24}" height="{H - 24}" rx="8" fill="url(#l)"/>'
        f'<rect x="18" y="18" width="{W - 36}" height="{H - 36}" rx="6" fill="none" '
        f'stroke="#fff" stroke-width="2" opacity=".6"/>'
        f'<circle cx="100" cy="140" r="44" fill="{dark}" stroke="#fff" stroke-width="3"/>'
        f"{suits}"
    )
    return _svg(inner, "card back")


@functools.lru_cache(maxsize=16)
def suit_svg(suit: Suit | str, deck: str = "classic") -> str:
    """A suit symbol alone (the trump sign, the trump choice buttons)."""
    s = Suit.parse(suit) if isinstance(suit, str) else Suit(suit)
    return _svg(_pip(s, DECKS[deck][s], 50, 50, 96), s.name.lower(), 100, 100)


@functools.lru_cache(maxsize=512)
def asset(path: str) -> str | None:
    """The SVG at ``path`` under ``/cards/`` (``classic/AS.svg``, ``back/blue.svg``,
    ``suit/four/H.svg``), or None if there is no such card."""
    parts = path.split("/")
    if not parts[-1].endswith(".svg"):
        return None
    parts[-1] = parts[-1][:-4]
    try:
        match parts:
            case ["back", style] if style in BACKS:
                return back_svg(style)
            case ["suit", deck, letter] if deck in DECKS and letter in ("S", "H", "D", "C"):
                return suit_svg(letter, deck)
            case [deck, name] if deck in DECKS and len(name) == 2 and name.isupper():
                card = parse_card(name)
                return card_svg(card, deck) if card.ascii == name else None
    except ValueError:
        return None
    return None


def etag(body: str) -> str:
    return '"' + hashlib.blake2b(body.encode(), digest_size=8).hexdigest() + '"'
