"""The ``elo`` plugin's K-factor schedule rules (``k_by_games``, ``k_by_rating``)."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from rankcraft.validators import RATING_LIMIT, within

K_LIMIT = 1e4
"""The largest K-factor: ten thousand rating points per unit of surprise."""

_rating = within(-RATING_LIMIT, RATING_LIMIT)
_k = within(1e-6, K_LIMIT)


@attrs.frozen(kw_only=True)
class KByGames:
    """Attributes:
    games_below: the rule applies while a player has fewer rated games than this, ≥ 1.
    k: the K-factor then, rating points per unit of surprise, in [1e-6, 1e4].
    """

    games_below: int = attrs.field(validator=attrs.validators.ge(1))
    k: float = attrs.field(validator=_k)


@attrs.frozen(kw_only=True)
class KByRating:
    """Attributes:
    rating_at_least: the rule applies from this rating (rating points) up, |x| ≤ 1e6.
    k: the K-factor then, in [1e-6, 1e4].
    """

    rating_at_least: float = attrs.field(validator=_rating)
    k: float = attrs.field(validator=_k)


def sorted_by_games(rules: Sequence[KByGames]) -> tuple[KByGames, ...]:
    """``k_by_games`` as :meth:`EloParams.k_for` reads it: the smallest ``games_below``
    first."""
    return tuple(sorted(rules, key=lambda r: r.games_below))


def sorted_by_rating(rules: Sequence[KByRating]) -> tuple[KByRating, ...]:
    """``k_by_rating`` as :meth:`EloParams.k_for` reads it: the highest threshold first."""
    return tuple(sorted(rules, key=lambda r: -r.rating_at_least))
