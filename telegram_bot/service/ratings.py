"""Ratings of the matches with strangers: openskill's Plackett-Luce model (Weng-Lin),
with the library's defaults and no rating maths of our own.

One rating per game: 4 players (two partnerships, 2 v 2), 3 players (each for
themselves) and 2 players (1 v 1). A match with a computer seat when it began is
unrated (:func:`rated`). A person who leaves a rated match, or is away two turns in a
row, loses it for rating purposes: the caller ranks their side last.

What people see is the conservative value, ``mu - 3 sigma`` (the library's
``ordinal``), scaled as ``48 (mu - 3 sigma) + 300`` and never below 0 (:func:`display`):

- 48 is 200 / beta (the model's performance spread, 25/6): 200 points then mean what
  they mean in Elo, about a 76% chance for the stronger of two settled players;
- 300 puts a settled average player (mu 25, sigma near 0) at 1500, as in Elo;
- a newcomer (mu 25, sigma 25/3: the conservative value 0) shows 300 and climbs as
  the model grows sure of them, so one lucky win does not top the board.

The matcher compares people without the uncertainty discount (:func:`matching_value`,
the same scale with ``z = 0``): a newcomer is matched as the average player they most
likely are, 1500.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from openskill.models import PlackettLuce

from telegram_bot.platform.storage import online as store
from telegram_bot.platform.storage.online import Skill

__all__ = [
    "DISPLAY_ALPHA",
    "DISPLAY_TARGET",
    "MODEL",
    "Skill",
    "display",
    "initial",
    "matching_value",
    "new_skills",
    "ranks_by_points",
    "rate_match",
    "rated",
    "skill_of",
]

MODEL = PlackettLuce()
DISPLAY_ALPHA = 200 / MODEL.beta
DISPLAY_TARGET = 1500 - DISPLAY_ALPHA * MODEL.mu

#: Per game (players): the teams a match has and the people in each.
SHAPES = {4: (2, 2), 3: (1, 1, 1), 2: (1, 1)}


def initial() -> Skill:
    """A newcomer's rating (the library's prior)."""
    return Skill(MODEL.mu, MODEL.sigma, 0)


def _model_rating(skill: Skill) -> Any:
    return MODEL.rating(mu=skill.mu, sigma=skill.sigma)


def display(skill: Skill) -> int:
    """The rating people see: the conservative value, scaled (see the module's text)."""
    value = _model_rating(skill).ordinal(z=3.0, alpha=DISPLAY_ALPHA, target=DISPLAY_TARGET)
    return max(0, round(value))


def matching_value(skill: Skill) -> float:
    """Where the matcher places a person: the mean on the display scale."""
    return _model_rating(skill).ordinal(z=0.0, alpha=DISPLAY_ALPHA, target=DISPLAY_TARGET)


def rated(teams: Sequence[Sequence[int | None]]) -> bool:
    """A match is rated only if every seat is a different person (no computer)."""
    seats = [uid for team in teams for uid in team]
    return None not in seats and len(set(seats)) == len(seats)


def ranks_by_points(points: Sequence[int]) -> list[int]:
    """Ranks for the library (1 is first, lower is better; ties share a rank) from
    each team's points."""
    return [1 + sum(other > mine for other in points) for mine in points]


def _check(players: int, teams: Sequence[Sequence[int | None]], ranks: Sequence[int]) -> None:
    shape = SHAPES.get(players)
    if shape is None:
        raise ValueError(f"no rated game for {players!r} players")
    if tuple(len(team) for team in teams) != shape:
        raise ValueError(f"a {players}-player match has teams of {shape}, not {teams!r}")
    if len(ranks) != len(teams):
        raise ValueError("one rank per team")
    if not rated(teams):
        raise ValueError("an unrated match (a computer seat, or a person twice)")


def new_skills(
    players: int,
    teams: Sequence[Sequence[int]],
    ranks: Sequence[int],
    current: Mapping[int, Skill],
) -> dict[int, Skill]:
    """Everyone's rating after the match, as the library computes it from their ratings
    before (``current``; newcomers may be missing) and the teams' ranks."""
    _check(players, teams, ranks)
    before = [[current.get(uid) or initial() for uid in team] for team in teams]
    after = MODEL.rate([[_model_rating(s) for s in team] for team in before], ranks=list(ranks))
    skills: dict[int, Skill] = {}
    for team, olds, news in zip(teams, before, after, strict=True):
        for uid, old, new in zip(team, olds, news, strict=True):
            skills[uid] = Skill(float(new.mu), float(new.sigma), old.matches + 1)
    return skills


async def skill_of(session: Any, user_id: int, players: int) -> Skill:
    """The person's rating in a game (the prior if never rated)."""
    found = await store.get_ratings(session, players, [user_id])
    return found.get(user_id) or initial()


async def rate_match(
    session: Any,
    game_id: str,
    players: int,
    teams: Sequence[Sequence[int | None]],
    ranks: Sequence[int],
    now: datetime,
    *,
    only: Collection[int] | None = None,
) -> dict[int, tuple[Skill, Skill]] | None:
    """Rate a finished match of strangers in the caller's transaction: each person's
    (before, after). None when the match is unrated (a computer seat when it began) or
    was rated already (a game is rated once, whoever finishes it).

    ``only``: the people whose ratings change (all by default); the library computes
    the result for everyone, and the others keep theirs (recorded with no change)."""
    if not rated(teams):
        return None
    people = [uid for team in teams for uid in team if uid is not None]
    current = await store.get_ratings(session, players, people, lock=True)
    computed = new_skills(players, teams, ranks, current)  # type: ignore[arg-type]
    before = {uid: current.get(uid) or initial() for uid in people}
    changing = set(people) if only is None else set(only) & set(people)
    after = {uid: computed[uid] if uid in changing else before[uid] for uid in people}
    seats = [
        {
            "user_id": uid,
            "team": side,
            "rank": ranks[side],
            "mu_before": before[uid].mu,
            "sigma_before": before[uid].sigma,
            "mu": after[uid].mu,
            "sigma": after[uid].sigma,
        }
        for side, team in enumerate(teams)
        for uid in team
    ]
    if not await store.record_rated_match(session, game_id, players, seats, now):
        return None
    await store.save_ratings(session, players, {u: after[u] for u in changing}, now)
    return {uid: (before[uid], after[uid]) for uid in changing}
