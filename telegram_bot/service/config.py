"""The game service's settings (the runtime fills them from the environment)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ServiceConfig"]


@dataclass
class ServiceConfig:
    bot_username: str = "HokmBot"
    #: Pause before computer players move, so people can follow the table.
    computer_delay: float = 1.0
    #: Extra pause after a hand ends.
    hand_pause: float = 2.0
    #: Per-move thinking budget for the hard computer player.
    think_seconds: float = 0.25
    #: Tests and demos only: seed the deals (match ``k`` started uses ``deal_seed + k``)
    #: so a scenario is reproducible. Live tables leave it None: secure shuffles.
    deal_seed: int | None = None
    #: Play with anyone: seconds in the queue before the computers are offered, and
    #: between two matching passes (0: this process does not match).
    online_wait: float = 60.0
    online_interval: float = 1.0
    #: The Mini App's public https URL (HOKM_WEBAPP_URL): each hand message gets an
    #: "Open the table" button; None: no Mini App, the chat only.
    webapp_url: str | None = None
    #: The Mini App's short name from BotFather's /newapp (HOKM_WEBAPP_SHORT_NAME): the
    #: group's table message gets a t.me/<bot>/<app>?startapp=<game> link.
    webapp_short_name: str | None = None
