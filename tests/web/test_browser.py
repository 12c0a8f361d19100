"""The page in a real browser: headless Chromium (the system's, through its path)
driven by Playwright, against games held in memory.

Skipped, with the reason, when Chromium or Playwright is missing; CI installs both
(``apt-get install -y chromium`` and ``pip install playwright``; never
``playwright install``). Screenshots go to ``tests/artifacts/`` (or
``$HOKM_ARTIFACTS``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from core.actions import Bid, DeclareBlind, Draw, PlayCard
from core.cards import parse_card
from core.match import Match
from core.state import Phase
from core.variant import Variant
from telegram_bot.web.app import WebConfig, create_app
from telegram_bot.web.games import MemoryGames
from telegram_bot.web.texts import texts_json
from testkit.webapp import init_data, page_hash

from .conftest import NAMES, TOKEN, seats, trick_play_match, user_of_seat

CHROMIUM = os.environ.get("HOKM_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(os.environ.get("HOKM_ARTIFACTS", Path(__file__).parents[1] / "artifacts"))

try:
    from playwright.async_api import async_playwright, expect
except ImportError:  # pragma: no cover - depends on the machine
    async_playwright = None

if async_playwright is None:
    MISSING = "browser tests need Playwright: pip install playwright (never 'playwright install')"
elif not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
    MISSING = f"browser tests need Chromium at {CHROMIUM}: apt-get install -y chromium"
else:
    MISSING = None
#: CI sets HOKM_TEST_BROWSER=1: there, a missing browser fails the tests instead.
REQUIRED = os.environ.get("HOKM_TEST_BROWSER", "").strip() == "1"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(MISSING is not None and not REQUIRED, reason=str(MISSING)),
]

LIGHT = {
    "bg_color": "#ffffff",
    "text_color": "#000000",
    "hint_color": "#999999",
    "link_color": "#2481cc",
    "button_color": "#2481cc",
    "button_text_color": "#ffffff",
    "secondary_bg_color": "#efeff3",
}
DARK = {
    "bg_color": "#212121",
    "text_color": "#ffffff",
    "hint_color": "#aaaaaa",
    "link_color": "#8774e1",
    "button_color": "#8774e1",
    "button_text_color": "#ffffff",
    "secondary_bg_color": "#0f0f0f",
}


def follow_match() -> Match:
    """Trick play, the leader has played, and the next seat holds both cards it must
    play (the led suit) and cards it may not."""
    for seed in range(1, 200):
        m, _ = Match.new(Variant.four(), seed=seed)
        m.apply(m.turn, m.legal_actions(m.turn)[0])
        leader = m.turn
        led = m.legal_cards(leader)[0]
        nxt = (leader + 1) % 4
        hand = m.hand_of(nxt)
        if any(c.suit == led.suit for c in hand) and any(c.suit != led.suit for c in hand):
            return m
    raise AssertionError("no such deal")


@pytest.fixture
async def served() -> AsyncIterator[tuple[str, MemoryGames]]:
    games = MemoryGames()
    runner = web.AppRunner(create_app(games, WebConfig(bot_token=TOKEN)), shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}", games
    finally:
        await runner.cleanup()


@pytest.fixture
async def browser():
    if MISSING is not None:
        pytest.fail(f"HOKM_TEST_BROWSER=1 but {MISSING}")
    async with async_playwright() as p:
        b = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield b
        finally:
            await b.close()


async def open_page(
    browser, base: str, user_id: int, *, lang="fa", theme=LIGHT, scale=1, game="g1"
):
    ctx = await browser.new_context(
        viewport={"width": 390, "height": 844}, device_scale_factor=scale, has_touch=True
    )
    page = await ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    data = init_data(TOKEN, user_id, "Ali", language_code=lang)
    await page.goto(f"{base}/?game={game}{page_hash(data, theme)}")
    page.errors = errors  # type: ignore[attr-defined]
    return page


async def tap_card(page, card: str) -> None:
    """Tap a card of the hand where a finger would: on its visible strip (the cards
    overlap, the next one covering the right of each). An illegal card is marked
    aria-disabled, but a finger can tap it all the same."""
    await page.locator(f'#hand .card[data-card="{card}"]').tap(
        position={"x": 6, "y": 30}, force=True
    )


async def test_plays_a_legal_card_and_refuses_an_illegal_one(served, browser) -> None:
    base, games = served
    m = follow_match()
    games.add("g1", m, seats())
    leader = m.turn
    me = (leader + 1) % 4
    page = await open_page(browser, base, user_of_seat(m, me))
    hand = page.locator("#hand .card")
    await expect(hand).to_have_count(13)
    # Thirteen cards drawn: each is an image of the card art, loaded.
    assert await page.locator("#hand .card img").evaluate_all(
        "imgs => imgs.every(i => i.complete && i.naturalWidth > 0)"
    )
    # The leader plays elsewhere (a chat press): the page shows it without reloading.
    led = m.legal_cards(leader)[0]
    await games.apply_for_seat("g1", leader, PlayCard(led))
    await expect(page.locator(f'#trick .tc[data-card="{led.ascii}"]')).to_have_count(1)
    await expect(page.locator("#status")).to_have_class("mine")
    legal = {c.ascii for c in m.legal_cards(me)}
    illegal = next(c.ascii for c in m.hand_of(me) if c.ascii not in legal)
    await expect(page.locator("#hand .card.legal")).to_have_count(len(legal))
    # An illegal card: tapped, it stays in the hand and nothing is sent.
    await tap_card(page, illegal)
    await expect(page.locator("#toast")).to_be_visible()
    assert len(games.log) == 1 and m.turn == me
    await expect(hand).to_have_count(13)
    # A legal card: tapped, it is played.
    card = sorted(legal)[0]
    await tap_card(page, card)
    await expect(page.locator(f'#trick .tc[data-card="{card}"]')).to_have_count(1)
    await expect(hand).to_have_count(12)
    assert games.log[-1][1:] == (me, PlayCard(parse_card(card)))
    assert page.errors == []  # type: ignore[attr-defined]


async def test_a_second_players_page_follows(served, browser) -> None:
    base, games = served
    m, _ = Match.new(Variant.four(), seed=21)
    games.add("g1", m, seats())
    hakem = m.turn
    assert m.phase is Phase.TRUMP
    watcher = (hakem + 2) % 4
    hakem_page = await open_page(browser, base, user_of_seat(m, hakem), lang="en")
    other_page = await open_page(browser, base, user_of_seat(m, watcher), lang="en")
    await expect(hakem_page.locator("#hand .card")).to_have_count(5)
    await expect(other_page.locator("#hand .card")).to_have_count(0)
    await expect(hakem_page.locator("#panel .suit-btn")).to_have_count(4)
    await hakem_page.wait_for_function(
        "() => Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)"
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    await hakem_page.screenshot(path=str(ARTIFACTS / "trump-choice-en-light.png"))
    # The hakem names trump on the page; the other page sees it and gets its 13 cards.
    await hakem_page.locator('#panel .suit-btn[data-suit="H"]').tap()
    await expect(other_page.locator('#trump img[data-trump="H"]')).to_have_count(1)
    await expect(other_page.locator("#hand .card")).to_have_count(13)
    await expect(hakem_page.locator("#hand .card")).to_have_count(13)
    # The hakem leads with a tap; the other page shows the card in the trick.
    card = await hakem_page.locator("#hand .card.legal").first.get_attribute("data-card")
    await tap_card(hakem_page, card)
    await expect(other_page.locator(f'#trick .tc[data-card="{card}"]')).to_have_count(1)
    assert games.games["g1"].move == 2


@pytest.mark.parametrize("lang", ["fa", "en"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
async def test_screenshots_direction_and_theme(served, browser, lang: str, scheme: str) -> None:
    base, games = served
    m = follow_match()
    game = games.add("g1", m, seats())
    # One trick taken, two cards of the next on the table, the viewer on turn.
    for _ in range(6):
        await games.apply_for_seat("g1", m.turn, PlayCard(m.legal_cards(m.turn)[-1]))
    me = m.turn
    game.deadline = time.time() + 21
    theme = LIGHT if scheme == "light" else DARK
    page = await open_page(browser, base, user_of_seat(m, me), lang=lang, theme=theme, scale=2)
    await expect(page.locator("#hand .card")).to_have_count(len(m.hand_of(me)))
    assert await page.evaluate("document.documentElement.dir") == ("rtl" if lang == "fa" else "ltr")
    assert await page.evaluate("document.documentElement.lang") == lang
    dark = await page.evaluate("document.documentElement.classList.contains('dark')")
    assert dark == (scheme == "dark")
    bg = await page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert bg == ("rgb(255, 255, 255)" if scheme == "light" else "rgb(33, 33, 33)")
    # Names as given, the viewer as "You"/"شما"; the status line in the language.
    names = await page.locator("#seats .name").all_inner_texts()
    assert set(NAMES) - {NAMES[m.order[me]]} <= set(names)
    words = json.loads(texts_json(lang))["texts"]
    await expect(page.locator("#status-text")).to_have_text(words["your_turn"])
    await expect(page.locator(f'#seats .seat[data-seat="{me}"] .name')).to_have_text(words["you"])
    await page.evaluate("document.fonts.ready")
    await expect(page.locator("#last img")).to_have_count(4)
    await expect(page.locator("#trick .tc")).to_have_count(2)
    await page.wait_for_function(
        "() => document.getAnimations().every(a => a.playState !== 'running')"
    )
    await page.wait_for_function(
        "() => Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)"
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"table-{lang}-{scheme}.png"))
    assert await page.evaluate(LAYOUT) == []
    if DOC_IMAGES and scheme == "light":
        # The README's pictures: HOKM_DOC_IMAGES=docs/img, one phone's CSS pixels.
        save_small(await page.screenshot(scale="css"), Path(DOC_IMAGES) / f"table-{lang}.png")
    assert page.errors == []  # type: ignore[attr-defined]


DOC_IMAGES = os.environ.get("HOKM_DOC_IMAGES", "").strip()


def save_small(png: bytes, path: Path) -> None:
    """A PNG of at most 256 colours (a few tens of kB), for a picture kept in git."""
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    small = image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    path.parent.mkdir(parents=True, exist_ok=True)
    small.save(path, optimize=True)


# ------------------------------------------------------------------ layouts


async def settle(page) -> None:
    """Wait until the page is still: fonts and images loaded, no animation running."""
    await page.evaluate("document.fonts.ready")
    await page.wait_for_function(
        "() => Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)"
    )
    await page.wait_for_function(
        "() => document.getAnimations().every(a => a.playState !== 'running')"
    )


async def shot(page, name: str) -> Path:
    await settle(page)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    await page.screenshot(path=str(path))
    return path


#: What must not overlap on the table, and must stay on the screen: measured in the
#: page (bounding boxes), for every player count and phase.
LAYOUT = """() => {
  const box = e => { const r = e.getBoundingClientRect();
    return {l: r.left, t: r.top, r: r.right, b: r.bottom, w: r.width, h: r.height}; };
  const meet = (a, b) => a.l < b.r - 1 && b.l < a.r - 1 && a.t < b.b - 1 && b.t < a.b - 1;
  const inside = (a, o) => a.l >= o.l - 1 && a.t >= o.t - 1 && a.r <= o.r + 1 && a.b <= o.b + 1;
  const visible = e => !e.closest('[hidden]') && e.getClientRects().length > 0;
  const all = q => Array.from(document.querySelectorAll(q)).filter(visible);
  const problems = [];
  const screen = {l: 0, t: 0, r: innerWidth, b: innerHeight};
  const felt = box(document.getElementById('felt'));
  const name = e => e.id ? '#' + e.id : (e.className + '[' + (e.dataset.seat || e.dataset.card || '') + ']');
  // Each seat's avatar, name and card backs: on the felt, apart from one another.
  const parts = [];
  all('#seats .seat').forEach(s => {
    ['.avatar', '.name', '.backs', '.meta'].forEach(q => {
      const e = s.querySelector(q);
      if (e && visible(e)) parts.push([s.dataset.seat + q, box(e)]);
    });
  });
  parts.forEach(([n, b]) => { if (!inside(b, felt)) problems.push(n + ' off the felt'); });
  for (let i = 0; i < parts.length; i++) for (let j = i + 1; j < parts.length; j++) {
    const [n1, b1] = parts[i], [n2, b2] = parts[j];
    if (n1.split('.')[0] !== n2.split('.')[0] && meet(b1, b2)) problems.push(n1 + ' meets ' + n2);
  }
  // The trick's cards: on the felt, clear of the seats and of the last trick.
  const trick = all('#trick .tc img').map(e => [e.parentNode.dataset.card, box(e)]);
  const last = all('#last').map(e => ['#last', box(e)]);
  trick.forEach(([c, b]) => {
    if (!inside(b, felt)) problems.push('trick card ' + c + ' off the felt');
    parts.concat(last).forEach(([n, p]) => { if (meet(b, p)) problems.push('trick card ' + c + ' meets ' + n); });
  });
  last.forEach(([n, b]) => parts.forEach(([m, p]) => { if (meet(b, p)) problems.push(n + ' meets ' + m); }));
  // The bar, status, panel and hand: on the screen, one under another, no scrolling.
  const blocks = ['#bar', '#felt', '#status', '#panel', '#hand'].map(q => document.querySelector(q)).filter(visible);
  blocks.forEach(e => { if (!inside(box(e), screen)) problems.push(name(e) + ' off the screen'); });
  all('#hand .card, #bar > *, #scores > *, #panel > *').forEach(e => {
    if (!inside(box(e), screen)) problems.push(name(e) + ' off the screen');
  });
  all('#scores > *, #trump, #deck').forEach((e, i, xs) => xs.slice(i + 1).forEach(f => {
    if (meet(box(e), box(f))) problems.push(name(e) + ' meets ' + name(f));
  }));
  if (document.scrollingElement.scrollHeight > innerHeight + 1) problems.push('the page scrolls');
  return problems;
}"""


async def assert_layout(page) -> None:
    await settle(page)
    assert await page.evaluate(LAYOUT) == []


def _users(n: int) -> list[dict]:
    return seats()[:n]


def _play_tricks(m: Match, plays: int) -> None:
    for _ in range(plays):
        m.apply(m.turn, PlayCard(m.legal_cards(m.turn)[-1]))


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_three_player_table(served, browser, lang: str) -> None:
    base, games = served
    m, _ = Match.new(Variant.three(), seed=7)
    m.apply(m.turn, m.legal_actions(m.turn)[0])
    _play_tricks(m, 3 + 2)  # a trick taken, two cards of the next on the table
    game = games.add("g1", m, _users(3), move=6)
    game.deadline = time.time() + 25
    me = m.turn
    page = await open_page(browser, base, user_of_seat(m, me), lang=lang, scale=2)
    await expect(page.locator("#hand .card")).to_have_count(len(m.hand_of(me)))
    assert len(m.hand_of(me)) == 16
    # The two others sit at the top corners, their cards face down; the viewer below.
    positions = {
        await s.get_attribute("data-seat"): await s.get_attribute("data-pos")
        for s in await page.locator("#seats .seat").all()
    }
    assert sorted(positions.values()) == ["bottom", "top-left", "top-right"]
    assert positions[str(me)] == "bottom"
    await expect(page.locator("#seats .backs")).to_have_count(2)
    await expect(page.locator("#trick .tc")).to_have_count(2)
    await expect(page.locator("#last img")).to_have_count(3)
    # Three scores (no teams), each player's own.
    await expect(page.locator("#scores .score")).to_have_count(3)
    await assert_layout(page)
    await shot(page, f"table3-{lang}")
    # A legal card among sixteen is still tappable where a finger goes.
    card = await page.locator("#hand .card.legal").first.get_attribute("data-card")
    await tap_card(page, card)
    await expect(page.locator(f'#trick .tc[data-card="{card}"]')).to_have_count(1)
    assert page.errors == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("lang", ["fa", "en"])
async def test_two_player_table(served, browser, lang: str) -> None:
    base, games = served
    m, _ = Match.new(Variant.two(), seed=5)
    while m.phase is not Phase.PLAY:
        m.apply(m.turn, m.legal_actions(m.turn)[0])
    _play_tricks(m, 2 + 1)
    game = games.add("g1", m, _users(2), move=30)
    game.deadline = time.time() + 25
    me = m.turn
    page = await open_page(browser, base, user_of_seat(m, me), lang=lang, scale=2)
    await expect(page.locator("#hand .card")).to_have_count(len(m.hand_of(me)))
    pos = await page.locator("#seats .seat").evaluate_all("ss => ss.map(s => s.dataset.pos)")
    assert sorted(pos) == ["bottom", "top"]
    await expect(page.locator("#trick .tc")).to_have_count(1)
    await expect(page.locator("#last img")).to_have_count(2)
    await assert_layout(page)
    await shot(page, f"table2-{lang}")
    assert page.errors == []  # type: ignore[attr-defined]


async def test_two_player_discard_and_draw_on_the_page(served, browser) -> None:
    base, games = served
    m, _ = Match.new(Variant.two(), seed=5)
    games.add("g1", m, _users(2))
    hakem = m.turn
    other = 1 - hakem
    page = await open_page(browser, base, user_of_seat(m, hakem), lang="fa", scale=2)
    await page.locator('#panel .suit-btn[data-suit="S"]').tap()
    # Discard: two cards picked by tapping, then confirmed; confirm waits for two.
    await expect(page.locator("#hand .card")).to_have_count(5)
    assert m.phase is Phase.DISCARD and m.turn == hakem
    confirm = page.locator("#panel .btn")
    await expect(confirm).to_be_disabled()
    hand = [c.ascii for c in m.hand_of(hakem)]
    await tap_card(page, hand[0])
    await expect(page.locator("#hand .card.picked")).to_have_count(1)
    await expect(confirm).to_be_disabled()
    await tap_card(page, hand[1])
    await tap_card(page, hand[2])
    await tap_card(page, hand[2])  # a second tap puts it back
    await expect(page.locator("#hand .card.picked")).to_have_count(2)
    await expect(confirm).to_be_enabled()
    await assert_layout(page)
    await shot(page, "two-discard-fa")
    await confirm.tap()
    await expect(page.locator("#hand .card")).to_have_count(3)
    assert {c.ascii for c in m.hand_of(hakem)} == set(hand[2:])
    # The other player discards elsewhere; then the draws begin.
    await games.apply_for_seat("g1", other, m.legal_actions(other)[0])
    while m.turn != hakem:
        await games.apply_for_seat("g1", m.turn, Draw(True))
    assert m.phase is Phase.DRAW
    top = page.locator("#panel .top-card")
    await expect(top).to_have_count(1)
    seen = await top.get_attribute("alt")
    await expect(page.locator("#panel .btn")).to_have_count(2)
    await assert_layout(page)
    await shot(page, "two-draw-fa")
    before = len(m.hand_of(hakem))
    log = len(games.log)
    # Keep the card shown: it joins the hand.
    await page.locator("#panel .btn").first.tap()
    await expect(page.locator(f'#hand .card[data-card="{seen}"]')).to_have_count(1)
    assert games.log[log][1:] == (hakem, Draw(True)) and len(m.hand_of(hakem)) == before + 1
    # Next draw: take the next one instead; the card shown is not kept.
    while m.turn != hakem:
        await games.apply_for_seat("g1", m.turn, Draw(True))
    await expect(page.locator("#panel .top-card")).not_to_have_attribute("alt", seen)
    seen = await page.locator("#panel .top-card").get_attribute("alt")
    await page.locator("#panel .btn.alt").tap()
    await expect(page.locator("#panel .top-card")).to_have_count(0)
    assert games.log[-1][1:] == (hakem, Draw(False))
    assert seen not in {c.ascii for c in m.hand_of(hakem)}
    assert page.errors == []  # type: ignore[attr-defined]


async def test_bidding_screens_on_the_page(served, browser) -> None:
    base, games = served
    m, _ = Match.new(Variant.bidding(), seed=5)
    games.add("g1", m, _users(2))
    me = m.turn
    page = await open_page(browser, base, user_of_seat(m, me), lang="en", scale=2)
    # Blind nil or not, before seeing any card.
    assert m.phase is Phase.BLIND
    await expect(page.locator("#panel .btn")).to_have_count(2)
    await expect(page.locator("#hand .card")).to_have_count(0)
    await assert_layout(page)
    await shot(page, "bidding-blind-en")
    await page.locator("#panel .btn.alt").tap()
    await expect(page.locator("#panel")).to_be_hidden()
    assert games.log[-1][1:] == (me, DeclareBlind(False))
    while m.phase is not Phase.BID:
        await games.apply_for_seat("g1", m.turn, m.legal_actions(m.turn)[0])
    if m.turn != me:
        await games.apply_for_seat("g1", m.turn, Bid(3))
    # The bids, 0 to 13, as buttons under the caption; thirteen cards in hand.
    bids = page.locator("#panel .bid-btn")
    await expect(bids).to_have_count(len(m.legal_actions(me)))
    await expect(page.locator("#hand .card")).to_have_count(13)
    await assert_layout(page)
    await shot(page, "bidding-bid-en")
    await bids.nth(4).tap()
    await expect(page.locator("#panel")).to_be_hidden()
    assert games.log[-1][1:] == (me, Bid(4))
    assert m.phase is Phase.PLAY or m.turn != me
    await expect(page.locator(f'#seats .seat[data-seat="{me}"] .pill')).to_contain_text(["4"])
    assert page.errors == []  # type: ignore[attr-defined]


async def test_the_deck_choice_follows_the_user(served, browser) -> None:
    base, games = served
    m = trick_play_match()
    games.add("g1", m, seats())
    me = user_of_seat(m, m.turn)
    page = await open_page(browser, base, me)
    first = page.locator("#hand .card img").first
    await expect(first).to_have_attribute("src", re.compile(r"^/cards/classic/"))
    await page.locator("#deck").tap()
    await expect(first).to_have_attribute("src", re.compile(r"^/cards/four/"))
    await page.wait_for_function("() => document.documentElement.dataset.deckSaved === 'four'")
    assert games.decks == {me: "four"}
    # Another device (a fresh browser profile): the server's choice is drawn.
    other = await open_page(browser, base, me)
    await expect(other.locator("#hand .card img").first).to_have_attribute(
        "src", re.compile(r"^/cards/four/")
    )
    # Another user keeps the default.
    third = await open_page(browser, base, user_of_seat(m, (m.turn + 1) % 4))
    await expect(third.locator("#hand .card img").first).to_have_attribute(
        "src", re.compile(r"^/cards/classic/")
    )
