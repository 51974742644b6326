"""API tokens for ``rankcraft serve``, kept per league in the league's database.

A token is ``rk_`` + a 16-hex-digit public key + ``_`` + 43 characters of secret
(:func:`secrets.token_urlsafe`, 256 bits). The database keeps its name, scope, creation
time, public key and the SHA-256 digest of the whole token, never the token itself:
whoever reads the database cannot use what they read. A presented token is looked up by its
public key and its digest compared in constant time (:func:`hmac.compare_digest`).

Scopes nest: ``read`` < ``record`` < ``admin``; a token allows its scope and those below.

>>> import rankcraft
>>> league = rankcraft.League("elo")
>>> token, secret = create_token(league.store, scope="record", name="ingest")
>>> (token.name, token.scope, secret.startswith("rk_"), len(secret))
('ingest', 'record', True, 63)
>>> found = authenticate(league.store, secret)
>>> found.name, found.allows("read"), found.allows("record"), found.allows("admin")
('ingest', True, True, False)
>>> authenticate(league.store, secret[:-1] + "x") is None
True
>>> revoke_token(league.store, "ingest").name
'ingest'
>>> authenticate(league.store, secret) is None
True
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from datetime import UTC, datetime
from typing import Any, Protocol

import attrs

from .errors import InputError

__all__ = [
    "SCOPES",
    "Token",
    "TokenStore",
    "authenticate",
    "create_token",
    "list_tokens",
    "revoke_token",
]

SCOPES = ("read", "record", "admin")
"""The scopes, each allowing those before it."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_TOKEN = re.compile(r"^rk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$")


class TokenStore(Protocol):
    """What a store offers for tokens (the SQL stores and :class:`MemoryStore`)."""

    def add_token(self, name: str, key: str, digest: str, scope: str, created_at: str) -> bool: ...

    def token_rows(self) -> list[tuple[str, str, str, str]]: ...

    def token_by_key(self, key: str) -> tuple[str, str, str, str] | None: ...

    def remove_token(self, name: str) -> bool: ...


@attrs.frozen
class Token:
    """A token as the database describes it (never the secret)."""

    name: str
    scope: str
    created_at: str
    key: str

    def allows(self, needed: str) -> bool:
        """Whether this token may do what ``needed`` (a scope) guards."""
        return SCOPES.index(self.scope) >= SCOPES.index(needed)

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def create_token(store: TokenStore, *, scope: str, name: str | None = None) -> tuple[Token, str]:
    """A new token: its description and its text, which is shown this once and never kept.

    :param name: how ``list`` and ``revoke`` name it (default ``token-KEY``).
    :raises InputError: an unknown scope, a bad or taken name.
    """
    if scope not in SCOPES:
        raise InputError(f"'scope' must be one of {', '.join(SCOPES)}: {scope!r}")
    key = secrets.token_hex(8)
    name = f"token-{key}" if name is None else name
    if not _NAME.match(name):
        raise InputError(
            f"'name' must be 1 to 64 letters, digits, '.', '_' or '-' (starting with a "
            f"letter or digit): {name!r}"
        )
    text = f"rk_{key}_{secrets.token_urlsafe(32)}"
    created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if not store.add_token(name, key, _digest(text), scope, created):
        raise InputError(f"'name' {name!r} is taken: revoke that token first, or pick another")
    return Token(name=name, scope=scope, created_at=created, key=key), text


def list_tokens(store: TokenStore) -> list[Token]:
    """Every token of the league, by name."""
    return [
        Token(name=name, scope=scope, created_at=at, key=key)
        for name, key, scope, at in store.token_rows()
    ]


def revoke_token(store: TokenStore, name: str) -> Token:
    """Forget the token ``name``: from now on it is refused.

    :raises InputError: no token has that name.
    """
    found = [t for t in list_tokens(store) if t.name == name]
    if not found or not store.remove_token(name):
        raise InputError(f"'name': no token is named {name!r}")
    return found[0]


def authenticate(store: TokenStore, presented: str) -> Token | None:
    """The token ``presented`` is, or None when it is malformed, unknown or revoked."""
    shape = _TOKEN.match(presented)
    if shape is None:
        return None
    row = store.token_by_key(shape.group(1))
    if row is None:
        return None
    name, digest, scope, created = row
    if not hmac.compare_digest(digest, _digest(presented)):
        return None
    return Token(name=name, scope=scope, created_at=created, key=shape.group(1))
