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
    #: Per-move thinking budget for the hard computer player with 2 and 3 players...
    think_seconds: float = 0.25
    #: ... and the share of it it thinks with 4, where it stops most searches early:
    #: there half the budget played as well as eight times it (core/players/RESULTS.md,
    #: "Issue 25, thirteenth session"), while 2 and 3 players search to the end of it.
    think_share_4p: float = 0.5
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

    def think_budget(self, players: int) -> float:
        """The hard computer player's seconds a move at a table of ``players``."""
        return self.think_seconds * (self.think_share_4p if players == 4 else 1.0)
