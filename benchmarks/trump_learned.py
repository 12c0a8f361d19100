"""Could a trump choice learnt offline beat the rules'? A measurement (issue 25).

    .venv/bin/python -m benchmarks.trump_learned [--train 6000] [--test 6000]
        [--seed 7001] [--hidden 16] [--epochs 8] [--jobs 2]

At the 4-player trump choice the hakem has seen five cards and nothing else, so
the other 47 are uniformly random: what each suit is worth, double dummy, can be
learnt from random deals with no inference at all, whereas the search affords a
handful of 52-card solves a decision (``search_trump_4p`` is off for that reason).

Random deals; for each seat as the hakem (leading the first trick) and each suit
as trump, DDS says whether the hakem's side reaches 7 tricks (one yes/no solve
each, 16 a deal). A small network (numpy, one hidden layer) learns that from a
random five of the hakem's thirteen cards, seen as the trump suit's ranks and the
side suits' ranks in a canonical order; it is trained on the first set of deals
and judged on the second: how often the suit it prefers lets the hakem's side
reach 7 on the real deal, next to the rules' suit (:func:`.rules.choose_trump_rule`)
and the best suit of each real deal (which no player can know).
"""

from __future__ import annotations

import argparse
import os
import random
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from core.players.double_dummy import dds_cards_reaching
from core.players.rules import choose_trump_rule


def _deals(seed: int, n: int) -> tuple[list[list[int]], list[list[list[int]]]]:
    """``n`` random deals and, for each seat as hakem and each suit, whether the
    hakem's side reaches 7 tricks double dummy."""
    rng = random.Random(seed)
    hands_all, wins_all = [], []
    for _ in range(n):
        cards = list(range(52))
        rng.shuffle(cards)
        hands = [sum(1 << c for c in cards[13 * p : 13 * p + 13]) for p in range(4)]
        wins = [
            [int(bool(dds_cards_reaching(hands, (), h, s, 7))) for s in range(4)] for h in range(4)
        ]
        hands_all.append(hands)
        wins_all.append(wins)
    return hands_all, wins_all


def _generate(seed: int, n: int, jobs: int):
    chunks = [(seed * 1000 + k, n // jobs + (k < n % jobs)) for k in range(jobs)]
    hands, wins = [], []
    with ProcessPoolExecutor(jobs) as pool:
        for h, w in pool.map(_deals, *zip(*chunks, strict=True)):
            hands += h
            wins += w
    return hands, wins


def features(five: int, trump: int) -> list[int]:
    """The trump suit's ranks, then the side suits' (longest, then highest, first),
    then the trump length one-hot."""
    pats = [five >> (13 * s) & 0x1FFF for s in range(4)]
    side = sorted((pats[s] for s in range(4) if s != trump), key=lambda p: (p.bit_count(), p))
    out: list[int] = []
    for p in [pats[trump], *reversed(side)]:
        out += [p >> r & 1 for r in range(13)]
    n = pats[trump].bit_count()
    return out + [int(n == k) for k in range(6)]


def _examples(hands, wins, reps: int, seed: int):
    rng = random.Random(seed)
    x, y, rule = [], [], []
    for hs, ws in zip(hands, wins, strict=True):
        for h in range(4):
            cards = [c for c in range(52) if hs[h] >> c & 1]
            for _ in range(reps):
                five = sum(1 << c for c in rng.sample(cards, 5))
                rule.append(int(choose_trump_rule(five)))
                for s in range(4):
                    x.append(features(five, s))
                    y.append(ws[h][s])
    return np.array(x, np.float32), np.array(y, np.float32), np.array(rule)


class _Net:
    """One hidden ReLU layer, a logistic output, trained by Adam on log loss."""

    def __init__(self, inputs: int, hidden: int, seed: int) -> None:
        g = np.random.default_rng(seed)
        self.p = {
            "w1": g.normal(0, 1 / np.sqrt(inputs), (inputs, hidden)).astype(np.float32),
            "b1": np.zeros(hidden, np.float32),
            "w2": g.normal(0, 1 / np.sqrt(hidden), hidden).astype(np.float32),
            "b2": np.zeros(1, np.float32),
        }

    def forward(self, x):
        h = np.maximum(x @ self.p["w1"] + self.p["b1"], 0)
        return h, 1 / (1 + np.exp(-(h @ self.p["w2"] + self.p["b2"])))

    def fit(self, x, y, epochs: int, seed: int, lr=1e-3, batch=256, l2=1e-5) -> None:
        m = {k: np.zeros_like(v) for k, v in self.p.items()}
        v = {k: np.zeros_like(v) for k, v in self.p.items()}
        g = np.random.default_rng(seed)
        t = 0
        for _ in range(epochs):
            order = g.permutation(len(x))
            for j in range(0, len(x), batch):
                b = order[j : j + batch]
                h, out = self.forward(x[b])
                d = (out - y[b]) / len(b)
                dh = np.outer(d, self.p["w2"]) * (h > 0)
                grads = {
                    "w2": h.T @ d + l2 * self.p["w2"],
                    "b2": np.array([d.sum()], np.float32),
                    "w1": x[b].T @ dh + l2 * self.p["w1"],
                    "b1": dh.sum(0),
                }
                t += 1
                for k, gk in grads.items():
                    m[k] = 0.9 * m[k] + 0.1 * gk
                    v[k] = 0.999 * v[k] + 0.001 * gk**2
                    step = m[k] / (1 - 0.9**t) / (np.sqrt(v[k] / (1 - 0.999**t)) + 1e-8)
                    self.p[k] -= lr * step


def _judge(net: _Net, x, y, rule, label: str) -> None:
    _, p = net.forward(x)
    p, y = p.reshape(-1, 4), y.reshape(-1, 4)
    n = len(rule)
    choice = p.argmax(1)
    model_won, rule_won = y[np.arange(n), choice], y[np.arange(n), rule]
    diff = model_won - rule_won
    print(
        f"{label}: {n} hakems' choices: the hakem's side reaches 7 with the learnt suit "
        f"{100 * model_won.mean():.2f}%, the rules' {100 * rule_won.mean():.2f}%, the best "
        f"suit of the real deal {100 * y.max(1).mean():.2f}%; learnt - rules "
        f"{100 * diff.mean():+.2f} points (SE {100 * diff.std() / np.sqrt(n):.2f}); "
        f"the suits differ on {100 * (choice != rule).mean():.1f}%"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", type=int, default=6000, help="deals to learn from")
    ap.add_argument("--test", type=int, default=6000, help="deals to judge on")
    ap.add_argument("--seed", type=int, default=7001)
    ap.add_argument("--hidden", type=int, default=16)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--reps", type=int, default=3, help="random fives per training hand")
    ap.add_argument("--jobs", type=int, default=2)
    o = ap.parse_args()
    t0 = time.perf_counter()
    load = os.getloadavg()[0]
    train = _generate(o.seed, o.train, o.jobs)
    test = _generate(o.seed + 1, o.test, o.jobs)
    print(f"{o.train} + {o.test} deals solved in {time.perf_counter() - t0:.0f} s, load {load:.2f}")
    x, y, rule = _examples(*train, o.reps, o.seed)
    net = _Net(x.shape[1], o.hidden, o.seed)
    net.fit(x, y, o.epochs, o.seed)
    _judge(net, *_examples(*test, 1, o.seed + 1), "held out")
    _judge(net, x[: 4 * 4 * o.test], y[: 4 * 4 * o.test], rule[: 4 * o.test], "trained on")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
