"""How close the hard player's sampled deals are to the real one, by way of sampling.

    .venv/bin/python -m benchmarks.deal_accuracy [--deals 10] [--seed 880000]
        [--variant NAME:key=val,key=val ...] [--table yardstick]
        [--table hard --table-budget 0.125 [--table-set key=val ...]]

Plays the first hand of each seeded 4-player deal with "normal" (or ``--table``'s
level) at every seat. At each decision of every seat after the first play, each
variant of the hard player
(its own instance per seat, so that one keeping deals between decisions sees all its
seat's decisions) is asked for its card, with double dummy off (``dds=0``: the
sampling and inference run, nothing is solved), and the deals it would have solved
are scored: the share of the other seats' hidden cards each one puts in the right
hand, weighted as the search weighs them; and, at the decisions of the hakem's
partner and opponents in the first three tricks, how many trumps the deals give the
hakem against how many it holds (the mean difference and its root mean square,
weighted likewise); and the share of the scored deals that count (Kish's
effective sample size over the distinct deals: the pool draws a deal again in
proportion to its weight). Shown how many cards of each suit its partner holds, hard
wins 3.6 points more (RESULTS.md, "seventeenth session"), so the error in the
partner's suit lengths is printed too: the root mean square, over the four suits,
of the deals' length minus the real one. The variants see the same positions, so
their difference is paired by decision. The real cards are read only here, to score.
"""

from __future__ import annotations

import argparse
import math
import time

from core.arena import parse_settings, tuned
from core.cards import SUIT_MASKS
from core.match import Match, Phase
from core.players import make_player
from core.variant import Variant

BASE = "max_samples=32,settle_samples=100000,playout_weight=0,search_trump_4p=0,dds=0"
DEFAULT_VARIANTS = [
    "uniform:" + BASE + ",surprise_opponent=1.0,surprise_partner=1.0",
    "fresh:" + BASE,
    "pool128:" + BASE + ",reuse_deals=128",
]


def _accuracy(noted, real: list[int], me: int, seats: tuple[int, ...] = (1, 2, 3)) -> float | None:
    """The weighted share of the hidden cards of the seats ``seats`` after ``me``
    (1 the next seat, 2 the partner) that the noted deals put in the right hand."""
    sw = acc = 0.0
    for w, hands in noted:
        hidden = right = 0
        for s in ((me + k) % 4 for k in seats):
            hidden += real[s].bit_count()
            right += (hands[s] & real[s]).bit_count()
        if hidden:
            sw += w
            acc += w * right / hidden
    return acc / sw if sw else None


def _partner_lengths(noted, real: list[int], me: int) -> float | None:
    """The weighted mean, over the noted deals, of the squared error in the
    partner's length of each suit (summed over the suits)."""
    partner = (me + 2) % 4
    held = [(real[partner] & suit).bit_count() for suit in SUIT_MASKS]
    sw = sq = 0.0
    for w, hands in noted:
        sw += w
        sq += w * sum(
            ((hands[partner] & suit).bit_count() - k) ** 2
            for suit, k in zip(SUIT_MASKS, held, strict=True)
        )
    return sq / sw if sw else None


def _effective(noted) -> float | None:
    """The share of the scored deals that count: Kish's effective sample size,
    (sum of weights)² / sum of squared weights, over the distinct deals (a deal
    drawn again from the pool adds its weight to its first draw's), per deal
    scored."""
    by_deal: dict[tuple, float] = {}
    for w, hands in noted:
        key = tuple(hands)
        by_deal[key] = by_deal.get(key, 0.0) + w
    sw = sum(by_deal.values())
    sq = sum(w * w for w in by_deal.values())
    return sw * sw / sq / len(noted) if sq else None


def _hakem_trumps(noted, real: list[int], hakem: int, trump: int) -> tuple[float, float] | None:
    """The weighted mean of (the hakem's trumps in a noted deal − its real ones),
    and of its square."""
    suit = SUIT_MASKS[trump]
    held = (real[hakem] & suit).bit_count()
    sw = bias = sq = 0.0
    for w, hands in noted:
        d = (hands[hakem] & suit).bit_count() - held
        sw += w
        bias += w * d
        sq += w * d * d
    return (bias / sw, sq / sw) if sw else None


def _paired(xs: list[float], base: list[float]) -> tuple[float, float]:
    """The mean of ``xs`` minus ``base``, decision by decision, and its standard error."""
    n = len(xs)
    diffs = [a - b for a, b in zip(xs, base, strict=True)]
    mean = sum(diffs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in diffs) / max(1, n - 1))
    return mean, sd / math.sqrt(n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--deals", type=int, default=10)
    ap.add_argument("--seed", type=int, default=880000)
    ap.add_argument("--variant", action="append", help="NAME:key=val,key=val")
    ap.add_argument(
        "--table",
        default="normal",
        help="the level playing every seat (yardstick: judge inference_policy=2, its exact model)",
    )
    ap.add_argument(
        "--table-budget", type=float, default=None, help="seconds a decision (a hard table)"
    )
    ap.add_argument(
        "--table-set",
        action="append",
        default=[],
        help="a setting of the table's players, key=val (a signal they play, to be read)",
    )
    args = ap.parse_args()
    table_sets = parse_settings(args.table_set)
    variants = []
    for item in args.variant or DEFAULT_VARIANTS:
        name, _, sets = item.partition(":")
        variants.append((name, parse_settings([s for s in sets.split(",") if s])))
    scores: dict[str, list[float]] = {name: [] for name, _ in variants}
    partner: dict[str, list[float]] = {name: [] for name, _ in variants}
    late: dict[str, list[float]] = {name: [] for name, _ in variants}
    trumps: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in variants}
    lengths: dict[str, list[float]] = {name: [] for name, _ in variants}
    effective: dict[str, list[float]] = {name: [] for name, _ in variants}
    cpu: dict[str, float] = dict.fromkeys(scores, 0.0)
    with open("/proc/loadavg") as f:
        load0 = f.read().split()[0]
    for d in range(args.deals):
        seed = args.seed + d
        m, _ = Match.new(Variant.four(), seed)
        drivers = [
            tuned(
                make_player(args.table, seed=seed * 10 + s, time_budget=args.table_budget),
                table_sets,
            )
            for s in range(4)
        ]
        hards = {
            name: [
                tuned(make_player("hard", seed=seed * 10 + s, time_budget=5.0), sets)
                for s in range(4)
            ]
            for name, sets in variants
        }
        hand = m.hand_no
        while m.hand_no == hand and m.phase is not Phase.OVER:
            seat = m.turn
            view = m.view(seat)
            if m.phase is Phase.PLAY and (view.tricks or view.trick) and len(view.legal) > 1:
                row, part, held, shape, ess = {}, {}, {}, {}, {}
                for name, _ in variants:
                    p = hards[name][seat]
                    p.dds_search.noted = []
                    c0 = time.process_time()
                    p.act(view)
                    cpu[name] += time.process_time() - c0
                    row[name] = _accuracy(p.dds_search.noted, m.hands, seat)
                    part[name] = _accuracy(p.dds_search.noted, m.hands, seat, (2,))
                    shape[name] = _partner_lengths(p.dds_search.noted, m.hands, seat)
                    ess[name] = _effective(p.dds_search.noted)
                    if seat != view.hakem and len(view.tricks) < 3:
                        held[name] = _hakem_trumps(
                            p.dds_search.noted, m.hands, view.hakem, int(view.trump)
                        )
                if all(v is not None for v in row.values()):
                    for name, v in row.items():
                        scores[name].append(v)
                        partner[name].append(part[name])
                        lengths[name].append(shape[name])
                        effective[name].append(ess[name])
                        if len(view.tricks) >= 6:
                            late[name].append(v)
                if held and all(v is not None for v in held.values()):
                    for name, v in held.items():
                        trumps[name].append(v)
            m.apply(seat, drivers[seat].act(view))
    with open("/proc/loadavg") as f:
        load1 = f.read().split()[0]
    first = variants[0][0]
    n = len(scores[first])
    print(
        f"{args.deals} deals from seed {args.seed}, {args.table} at every seat, {n} decisions;"
        f" load {load0} -> {load1}"
    )
    for name, _ in variants:
        xs, ls = scores[name], late[name]
        mean_d, se = _paired(xs, scores[first])
        print(
            f"  {name:10s} hidden cards placed right: {100 * sum(xs) / n:5.1f}%"
            f" (tricks 7-13: {100 * sum(ls) / max(1, len(ls)):5.1f}%;"
            f" the partner's: {100 * sum(partner[name]) / n:5.1f}%)"
            f"  minus {first}: {100 * mean_d:+5.2f} (SE {100 * se:.2f})"
            f"  CPU {1000 * cpu[name] / n:6.1f} ms/decision"
        )
    for name, _ in variants:
        mean_d, se = _paired(lengths[name], lengths[first])
        print(
            f"  {name:10s} the partner's suit lengths: root mean square error"
            f" {math.sqrt(sum(lengths[name]) / n / 4):.3f} cards a suit;"
            f" mean squared error summed over the suits minus {first}:"
            f" {mean_d:+.3f} (SE {se:.3f})"
        )
    for name, _ in variants:
        print(
            f"  {name:10s} deals that count (Kish's effective sample size over the distinct"
            f" deals, per deal scored): {100 * sum(effective[name]) / n:.1f}% at the mean"
        )
    t = len(trumps[first])
    for name, _ in variants:
        bias = sum(b for b, _ in trumps[name]) / max(1, t)
        rms = math.sqrt(sum(q for _, q in trumps[name]) / max(1, t))
        print(
            f"  {name:10s} the hakem's trumps, tricks 1-3 ({t} decisions of the others):"
            f" deals minus real {bias:+.2f} cards, root mean square {rms:.2f}"
        )


if __name__ == "__main__":
    main()
