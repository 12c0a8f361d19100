"""The hard player's settings, one class attribute each, documented with the
measurement that chose its value (core/players/RESULTS.md).

:class:`~.hard.HardPlayer` inherits them; the searches it delegates to
(:mod:`.dds_search`, :mod:`.playout_search`, :mod:`.trump_search`) read them from
the player, so the arena's ``--a-set NAME=VALUE`` changes one setting of one player.
"""

from __future__ import annotations

__all__ = ["HardSettings"]


class HardSettings:
    """What the hard player searches, how long, and how it weighs what it has seen."""

    #: Exact search once every hand holds at most this many cards (2 / 3 players).
    #: 2 players at 7 rather than 5 (with inference, below): +4.0 points (SE 1.8) on
    #: 100 fresh deals (RESULTS.md, "Issue 25, third session"); at 9 since the
    #: bitboard solver made a solve about eight times cheaper (a 9-card ending costs
    #: what a 7-card one did): +1.9 (SE 1.1) over 300 tuning deals against the old
    #: solver at 7, and +2.5 (SE 1.3) for bitboards at 7 on 100 of them: the gain is
    #: the cheaper solve, 9 cards no worse than 7 (RESULTS.md, "fifth session").
    exact_cards_2p = 9
    exact_cards_3p = 3
    #: Solve the exact ending on bitboards (:mod:`.endgame`; off: on engine copies, the
    #: same values at about 8 (2 players) to 20 (3 players) times the cost: a baseline
    #: to measure).
    bitboard_ending = True
    max_samples = 400
    #: Weight of the rule-based card's prior (points, divided by sqrt(samples)).
    prior = 0.5
    #: ... for 4-player card play. Off: every pull toward the rules measured worse
    #: there (RESULTS.md, "Exploration"); the rule card still wins ties.
    prior_dds = 0.0
    #: 4 players: before this many tricks are complete, score cards with yes/no
    #: double-dummy questions (reach 7? take all? take one?) instead of trick counts.
    yes_no_tricks = 5
    #: Inference (:mod:`.inference`): a sampled deal's weight is multiplied by this
    #: for every past play an opponent / the partner would not have made by the rules.
    surprise_opponent = 0.1
    surprise_partner = 0.6
    #: Candidate deals drawn per solved one while yes/no questions are used (a solve
    #: then costs 10-20 candidates' drawing and weighing).
    candidates_early = 6
    candidates_late = 2
    candidates_max = 8
    #: ... and more, up to ``candidates_max``, while their weights add up to less.
    candidate_weight = 1.0
    #: 4 players: add this times the result of a rule-based playout of the sampled
    #: deal to each card's double-dummy score (0: double dummy only). Double dummy
    #: credits every seat with seeing all cards; a playout of the rules models how
    #: the rule-based levels go on. Weight 2 won against ``normal0`` (+3.1, SE 1.5),
    #: but weight 0 won against the yardstick (+3.2, SE 1.0, 732 fresh pairs) and
    #: matched it against today's normal (+0.9, SE 1.1, 835 load-matched fresh
    #: pairs), at a little less CPU: RESULTS.md, "Issue 25, eighth session".
    playout_weight = 0.0
    #: ... on leads too, when ``playout_weight`` is set (off: leads are scored by
    #: double dummy alone, the other cards with the blend; a measurement:
    #: benchmarks/dd_errors.py put most of the playouts' cost on leads).
    lead_playouts = True
    #: Who plays the seats in those playouts: 0 the rules (``normal0``), 1 the
    #: rules with normal's corrections to following (no look-ahead).
    playout_policy = 0
    #: The policy of the card that wins ties and decides when no sample fits (0 the
    #: rules, 1 the corrected rules).
    rule_policy = 0
    #: The model of the others' play in inference (:func:`.inference.play_likelihood`):
    #: 0 the rules, 1 the corrected rules, 2 the arena's yardstick itself (a
    #: diagnostic: an exact model of that opponent, to measure what inference could
    #: at best be worth against it; RESULTS.md, "Issue 25, fourteenth session").
    inference_policy = 0
    #: 4 players: discard by the partnership's signal (:mod:`.signals`: from the
    #: longest side suit holding its ace or king) among the cards the search finds
    #: equally good, and read the partner's discards so. Shown its partner's hand,
    #: hard took 54% of the oracle's edge over the yardstick instead of 24%; this
    #: signal, +0.1 points (SE 0.6) over 1,000 pairs: seldom given, so off
    #: (RESULTS.md, "Issue 25, fourteenth session").
    signal_discards = False
    #: 4 players: a count signal when following suit without taking the trick
    #: (:func:`.signals.signal_follow`), read by the partner; 0 off, 1 parity (high
    #: from an even number), 2 high from a doubleton. Parity, with the discard
    #: signal: −0.7 points (SE 0.8) over 1,000 pairs, so off (RESULTS.md, "Issue
    #: 25, fourteenth session").
    signal_counts = 0
    #: ... read with this factor for each of the partner's follows that breaks it
    #: (1.0: read as the partner's other plays are, through the model of its play
    #: and ``surprise_partner``).
    surprise_count = 1.0
    #: How much of the best card's mean score (points of the hand) a signal may
    #: give up: 0 signals only among cards the search finds equal. Sampled means
    #: differ by noise far more often than by a real trick, so a small tolerance
    #: lets the signal be given where the search only guesses at a difference.
    #: With ``signal_discards`` and 0.05: −1.7 points (SE 0.8) over 1,000 fresh
    #: pairs against the yardstick, so 0 (RESULTS.md, "Issue 25, sixteenth session").
    signal_tolerance = 0.0
    #: 4 players: of a run of cards the same to double dummy, lead the highest and
    #: follow or discard with the lowest (:func:`.signals.sequence_card`), and read
    #: the partner's plays so. The search cannot tell the cards of a run apart, so
    #: it costs nothing to double dummy; opponents who do not play double dummy
    #: may answer the cards of a run otherwise. Played and
    #: read: −1.4 points (SE 0.8) over 1,000 fresh pairs against the yardstick;
    #: played and not read: −0.6 (SE 0.8); read at 0.1: −0.1 (SE 0.8); so off
    #: (RESULTS.md, "Issue 25, sixteenth session").
    sequence_signals = False
    #: ... the factor for each play of the partner's that breaks it (soft: people
    #: play their runs by other habits).
    surprise_sequence = 0.3
    #: 4 players: weigh a sampled deal by how likely the hakem was to name trump
    #: from the hand it gives the hakem (:mod:`.trump_prior`), raised to this power
    #: (0: off; one trump put in the hakem's hand first). It takes away the sampled
    #: deals' bias in the hakem's trumps in the first three tricks (-0.19 to -0.01
    #: cards) but not their spread (1.44 cards), places +0.10 (SE 0.06) points more of the hidden
    #: cards right, and played -0.5 points (SE 0.8) over 1,000 fresh pairs against
    #: the yardstick: off (RESULTS.md, "Issue 25, seventeenth session").
    trump_prior = 0.0
    #: 2 and 3 players: inference for the playouts' deals, the factor for every past
    #: play of another seat that the rules would not have made (1.0: off, uniform
    #: deals by the voids), and the candidate deals drawn per sample. 2 players: on
    #: (with ``exact_cards_2p=7``, +3.3 points, SE 1.5, on 150 fresh deals); 3
    #: players: off, +0.8 (SE 2.7) on 40 fresh deals (RESULTS.md, "Issue 25, third
    #: session"; the runs there name both ``surprise_small``).
    surprise_2p = 0.1
    surprise_3p = 1.0
    candidates_small = 4
    #: 4 players: keep this many weighted deals from one decision to the next within
    #: a hand (:mod:`.particles`; 0: fresh candidate deals every decision). The
    #: solved deals are then drawn from the pool in proportion to their weights, and
    #: a deal drawn again reuses its scores; ``max_samples`` counts distinct deals.
    #: On since the ninth session: with double dummy alone it played even with fresh
    #: deals (−0.1, SE 1.0, over 608 fresh pairs against the yardstick; −0.4, SE 1.1, over 503
    #: against normal) at half the CPU per decision (69 against 142 ms). With the rule
    #: playouts it had cost 3.3 points (SE 1.3): RESULTS.md, "Issue 25, ninth session".
    reuse_deals = 128
    #: ... for leads too (off: a lead draws fresh candidate deals, as with
    #: ``reuse_deals=0``; the pool is brought up to date at the seat's next follow).
    #: Off, with leads at 0.5 s and no margin: −0.7 points (SE 1.4) over 289 fresh
    #: pairs against the yardstick, at 116 ms a decision (RESULTS.md, "Issue 25,
    #: thirteenth session").
    pool_leads = True
    #: ... dropping kept deals whose weight falls below this times the best one.
    reuse_floor = 0.01
    #: ... and drawing at most this share of the pool's size afresh per decision
    #: (0.125 since the twelfth session, with ``settle_margin``, below; 0.5 before).
    reuse_fresh = 0.125
    #: ... keeping the pools of this many hands (seats of tables) at most: a bot's
    #: think process serves every computer seat, three a solo table (at 64, 40 solo
    #: tables' 120 seats wiped each other's pools: benchmarks.solo_capacity). A full
    #: pool of 128 deals is about 36 KiB, so 256 pools are about 9 MiB a process.
    pools_kept = 256
    #: 4 players: score cards by double dummy at all (off: the playouts alone, as
    #: normal does, with inference and as many samples as the budget allows).
    dds = True
    #: Stop sampling early (at least this many samples) once the choice is settled.
    #: 4 players: at 8 from the third trick on (``settle_samples_first`` 24 before),
    #: 33.1 and 35.1 ms a decision against 38.5 and 38.4 at 24 (24% of the issue's
    #: start against 27%, two rounds), −0.2 points (SE 0.7) over 1,000 fresh pairs
    #: against the yardstick and −0.4 (SE 0.8) over 1,000 against normal. At 8 in the
    #: first tricks too it lost 1.5 points (SE 0.8) against the yardstick
    #: (RESULTS.md, "Issue 25, fifteenth and sixteenth sessions").
    settle_samples = 8
    #: ... in the first two tricks, where 40% of a 4-player hand's CPU goes.
    settle_samples_first = 24
    #: 4 players: ... or once no other card could be better by this many points
    #: (its edge over the leader, two standard errors up; 0: only a clear leader
    #: settles it). Cards that differ on one deal in thirty keep the search going to
    #: the end of its budget otherwise. At 0.05, with ``reuse_fresh`` 0.125, at
    #: 0.125 s, against the settings before (0, 0.5, at 0.25 s), over 1,000 fresh
    #: pairs each: +0.1 points (SE 0.8) against normal, −0.5 (SE 0.8) against the
    #: yardstick, at 28% of the CPU the issue started from (RESULTS.md, "Issue 25,
    #: eleventh session" and "twelfth session"). The default since.
    settle_margin = 0.05
    #: ... and for a lead (0: only a clear leader settles it).
    lead_settle_margin = 0.05
    #: 2 / 3 players: stop sampling early once the choice is settled, as with 4.
    settle_2p = False
    settle_3p = False
    #: Fewer sampled deals than this for the trump choice: choose by the rules.
    min_trump_samples = 12
    #: 4 players: search the trump choice at all (off: the rules name it at once; a
    #: sampled choice scored no better than the rule's, RESULTS.md). Off since the
    #: twelfth session: on 60 hakems' choices (``benchmarks.trump_search``) it never
    #: reached ``min_trump_samples`` at 0.125 or 0.25 s, so the rule named every
    #: trump after 83 (166) ms of CPU spent for nothing; at 1 s 7 of 60 reached it
    #: and 2 chose another suit than the rule.
    search_trump_4p = False
    #: Search the opening lead too (yes/no solver questions on 52-card deals, a few
    #: ms each, rarely over 0.1 s), as every later card is.
    search_opening_lead = True
    #: 4 players: search the cards of the first trick only when the decision's budget
    #: is at least this many seconds (0: always; else the rules play them). On 52-card
    #: deals a decision affords about five solves at 0.125 s, and the first trick is
    #: a fifth of a hand's CPU. At 0.125 s the rules' first trick played even with
    #: the searched one over 1,000 fresh pairs against normal (+0.1 points, SE 0.9)
    #: and the yardstick (−0.3, SE 0.8), at 20% of the CPU the issue started from
    #: instead of 26%, but against the settings before (0.25 s) it lost 0.9 (SE 0.8)
    #: and 3.2 (SE 1.3, 437 pairs): not the default (RESULTS.md, "Issue 25, twelfth
    #: session").
    first_trick_budget = 0.0
    #: 4 players: the share of the decision's budget that a card following a lead
    #: may spend (1: all of it; leads always may). Most of hard's decisive errors
    #: are leads, and a bigger search picks a card that keeps the hand more often
    #: than an equal one (``benchmarks/dd_errors.py --recheck``). But at 0.25 with
    #: a 0.5 s budget and ``lead_settle_margin`` 0 (leads searched four times as
    #: long as today's follows) it gained +0.7 points (SE 0.8) over 1,000 fresh
    #: pairs against the yardstick, for 45% more time a decision: within noise, so
    #: 1 (RESULTS.md, "Issue 25, thirteenth session").
    follow_share = 1.0
    #: 4 players: search the leads after the opening one (off: the rules lead; a
    #: measurement of the leads, where most of hard's decisive errors are made:
    #: benchmarks/dd_errors.py).
    search_leads = True
    #: 2 players: search the hakem's trump, the discards and every keep-or-take
    #: draw by finishing the deal and playing it out by the rules on sampled hidden
    #: cards (:mod:`.drawing`) instead of deciding them by the rules' card values.
    search_trump_2p = False
    search_discards_2p = False
    search_draw_2p = False
    #: ... at most this many sampled deals per decision (fewer once settled).
    deal_samples = 400
