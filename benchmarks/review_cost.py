"""What a hand review costs, and what it costs the event loop.

    PYTHONPATH=. python -m benchmarks.review_cost [--hands 20] [--seed 1]

Plays ``--hands`` 4-player hands with the normal computer player (hands stop at 7
tricks, as at the table), then reviews each (telegram_bot.platform.thinking.review: one
double-dummy solve per card played) two ways, side by side in the same run:

- baseline: on the event loop itself, as a plain call would;
- the bot's way: in the thinkers' process pool (Thinkers.run).

Meanwhile a ticker coroutine sleeps 10 ms at a time; its worst lateness is how long
the loop could not answer a button press. Prints seconds per review and the ticker's
worst lateness for each way, with the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

from core import Match, Phase, PlayCard, Variant
from core.players import make_player
from telegram_bot.platform.thinking import Thinkers, review

TICK = 0.01


def _hands(count: int, seed: int) -> list[tuple[tuple[int, ...], int, tuple[tuple[int, int], ...]]]:
    out = []
    players = [make_player("normal", seed=seed + s) for s in range(4)]
    k = 0
    while len(out) < count:
        match = Match(Variant(), seed=seed + k)
        match.start()
        k += 1
        deal, trump = None, 0
        plays: list[tuple[int, int]] = []
        hand_no = match.hand_no
        while match.hand_no == hand_no and not match.is_over:
            seat = match.turn
            action = players[seat].act(match.view(seat))
            if deal is None and match.phase is Phase.PLAY:
                deal, trump = tuple(match.hands), int(match.trump)
            if isinstance(action, PlayCard):
                plays.append((seat, int(action.card)))
            match.apply(seat, action)
        out.append((deal, trump, tuple(plays)))
    return out


async def _ticker(stop: asyncio.Event, late: list[float]) -> None:
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        t = loop.time()
        await asyncio.sleep(TICK)
        late.append(loop.time() - t - TICK)


async def _run(hands, pooled: bool) -> tuple[list[float], float]:
    thinkers = Thinkers(processes=1) if pooled else None
    if thinkers is not None:  # start the worker before timing (the bot's is warm)
        await thinkers.run(review, *hands[0])
    stop, late = asyncio.Event(), []
    ticker = asyncio.create_task(_ticker(stop, late))
    await asyncio.sleep(TICK * 3)
    times = []
    for hand in hands:
        t = time.perf_counter()
        if thinkers is not None:
            await thinkers.run(review, *hand)
        else:
            review(*hand)
        times.append(time.perf_counter() - t)
        await asyncio.sleep(TICK * 2)  # the ticker's lateness is then one review's
    stop.set()
    await ticker
    if thinkers is not None:
        await thinkers.shutdown()
    return times, max(late)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hands", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    hands = _hands(args.hands, args.seed)
    plays = statistics.mean(len(h[2]) for h in hands)
    print(f"{len(hands)} hands, {plays:.1f} cards played per hand (one solve each)")
    for name, pooled in (("on the loop (baseline)", False), ("in the pool (the bot)", True)):
        times, worst = asyncio.run(_run(hands, pooled))
        times.sort()
        p95 = times[max(0, round(0.95 * len(times)) - 1)]
        print(
            f"{name:24s} review mean {statistics.mean(times):.3f} s, p95 {p95:.3f} s, "
            f"max {times[-1]:.3f} s; loop's worst lateness {worst * 1000:.0f} ms; "
            f"load {os.getloadavg()[0]:.2f}"
        )


if __name__ == "__main__":
    main()
