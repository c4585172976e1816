"""A :class:`SeenStore` on Redis (redis-py), shared by every worker on every machine.

ADR-0022 as in :mod:`._idempotency`: an id is remembered only after its handler returned, under
``<prefix>seen:<id>`` with an expiry. With a ``lease``, :meth:`RedisSeenStore.claim` also takes
an in-flight claim ``<prefix>claim:<id>`` (``SET NX PX``, checked against the seen key in the
same script), so two workers handed the same message at once do not both run it, while a worker
that dies mid-handle leaves only a claim that lapses after ``lease``. A live handler's claim is
renewed while it runs (:meth:`RedisSeenStore.renew`, three times per lease), so the lease bounds
how long a dead worker's message waits, not how long a handler may take.

Every Redis failure surfaces as :class:`SeenStoreUnavailable`: the guard then runs nothing and
marks nothing, and the worker must not acknowledge the message.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import timedelta
from math import isfinite
from typing import Any, Final, Generic, Literal, TypeVar

from .._arguments import implementing
from .._extras import missing_extra
from ._idempotency import Lease, SeenStoreUnavailable

try:
    import redis
    import redis.asyncio
    from redis.commands.core import AsyncScript, Script
    from redis.exceptions import RedisError
except ImportError as exc:  # pragma: no cover - exercised without the extra only
    raise missing_extra("RedisSeenStore (and AsyncRedisSeenStore)", "redis", exc) from exc

__all__ = ["AsyncRedisSeenStore", "RedisSeenStore"]

ClientT = TypeVar("ClientT")
ScriptT = TypeVar("ScriptT")

DEFAULT_PREFIX: Final = "envelopekit:idempotency:"
DEFAULT_TTL: Final = timedelta(days=7)

# KEYS[1] = seen key, KEYS[2] = claim key; ARGV[1] = token, ARGV[2] = lease in ms (0: no claim).
# One script, so a claim cannot be taken between another worker's remember and this check.
_CLAIM: Final = """
if redis.call('exists', KEYS[1]) == 1 then return 'seen' end
if ARGV[2] == '0' then return 'free' end
if redis.call('set', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return 'claimed' end
return 'held'
"""

# KEYS[1] = claim key; ARGV[1] = token. Only the holder ends its own claim: a lease that lapsed
# and was taken by another worker is left alone.
_RELEASE: Final = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""


# KEYS[1] = claim key; ARGV[1] = token, ARGV[2] = lease in ms. Only the holder extends its claim.
_RENEW: Final = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
return 0
"""

# A live handler renews its claim three times per lease, so one late renewal does not lose it.
_RENEWALS_PER_LEASE: Final = 3


# The longest expiry taken: the longest a timedelta holds (some 2.7 billion years). The server
# refuses a longer one only when a message is handled, after its handler ran.
_MOST_MS: Final = round(timedelta.max.total_seconds() * 1000)

# A claim renewed no less often than daily, however long its lease: a thread's wait and an event
# loop's timer take no longer wait than the platform's time_t allows.
_LONGEST_RENEWAL: Final = 86_400.0


def _ms(value: timedelta | float, name: str) -> int:
    """``value`` (a timedelta, or seconds) in whole milliseconds, checked against the bounds.

    Raises:
        TypeError: for anything but a timedelta or a real number (a bool, a string).
        ValueError: for a value that is not finite, under 1 ms, or over ``timedelta.max``.
    """
    if isinstance(value, timedelta):
        millis = round(value.total_seconds() * 1000)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if not isfinite(value):
            raise ValueError(f"{name} must be a finite number of seconds, not {value!r}")
        millis = round(value * 1000)
    else:
        raise TypeError(
            f"{name} must be a timedelta or a number of seconds, not {type(value).__name__}"
        )
    if millis < 1:
        raise ValueError(f"{name} must be at least 1 ms, not {value!r}")
    if millis > _MOST_MS:
        raise ValueError(f"{name} must be at most timedelta.max, not {value!r}")
    return millis


# What a store is given: a client, not the URL it is built from.
_CLIENT = "a redis-py client ({0}, such as {0}.from_url(url))"


class _Keys:
    """The key layout and settings both stores share."""

    def __init__(
        self, prefix: str, ttl: timedelta | float | None, lease: timedelta | float | None
    ) -> None:
        self.prefix = prefix
        self.ttl_ms = None if ttl is None else _ms(ttl, "ttl")
        self.lease_ms = None if lease is None else _ms(lease, "lease")

    def seen_key(self, message_id: str) -> str:
        return f"{self.prefix}seen:{message_id}"

    def claim_key(self, message_id: str) -> str:
        return f"{self.prefix}claim:{message_id}"

    def claim_args(self, message_id: str) -> tuple[str, str, str, str]:
        token = secrets.token_hex(16)
        lease = str(self.lease_ms or 0)
        return self.seen_key(message_id), self.claim_key(message_id), token, lease

    def verdict(self, reply: Any, message_id: str, token: str) -> Lease | Literal["seen", "held"]:
        answer = reply.decode() if isinstance(reply, bytes) else str(reply)
        if answer == "seen":
            return "seen"
        if answer == "held":
            return "held"
        if answer != "claimed" or self.lease_ms is None:
            return Lease(message_id, None)
        every = min(self.lease_ms / 1000 / _RENEWALS_PER_LEASE, _LONGEST_RENEWAL)
        return Lease(message_id, token, every)

    def renew_args(self, lease: Lease) -> tuple[list[str], list[str]]:
        return [self.claim_key(lease.message_id)], [lease.token or "", str(self.lease_ms or 0)]


class _Store(Generic[ClientT, ScriptT]):
    """What both stores hold: the client, the key layout, and the three scripts on the client.

    ``ScriptT`` is what ``register`` (the client's ``register_script``) makes: a script called
    as it is on a ``redis.Redis``, awaited on a ``redis.asyncio.Redis``.
    """

    def __init__(
        self,
        client: ClientT,
        register: Callable[[str], ScriptT],
        prefix: str,
        ttl: timedelta | float | None,
        lease: timedelta | float | None,
    ) -> None:
        self.client = client
        self._keys = _Keys(prefix, ttl, lease)
        self._claim = register(_CLAIM)
        self._release = register(_RELEASE)
        self._renew = register(_RENEW)

    @property
    def prefix(self) -> str:
        """The key prefix."""
        return self._keys.prefix


class RedisSeenStore(_Store[redis.Redis, Script]):
    """:class:`~envelopekit.babelqueue.SeenStore` on a ``redis.Redis`` client.

    ```python
    from datetime import timedelta
    import redis
    from envelopekit.babelqueue import RedisSeenStore, idempotent

    url = "redis://127.0.0.1:6379/0"                 # no connection is made until a message
    store = RedisSeenStore(redis.Redis.from_url(url), lease=timedelta(seconds=30))
    on_order = idempotent(store, lambda env: None)
    assert on_order.store is store
    ```

    Args:
        client: a redis-py client (``decode_responses`` either way).
        prefix: prepended to every key (``<prefix>seen:<id>``, ``<prefix>claim:<id>``).
        ttl: how long a handled id is remembered (``None``: forever); a redelivery later than
            this runs again.
        lease: with a value, :meth:`claim` takes an in-flight claim that lapses after it unless
            renewed; the guards renew it while the handler runs, so it only bounds how long a
            dead worker's message waits. ``None``: no claim (ADR-0022 alone).
    """

    def __init__(
        self,
        client: redis.Redis,
        *,
        prefix: str = DEFAULT_PREFIX,
        ttl: timedelta | float | None = DEFAULT_TTL,
        lease: timedelta | float | None = None,
    ) -> None:
        implementing("client", client, ("register_script",), _CLIENT.format("redis.Redis"))
        super().__init__(client, client.register_script, prefix, ttl, lease)

    def seen(self, message_id: str) -> bool:
        """Whether ``message_id`` was remembered (and has not expired)."""
        try:
            return bool(self.client.exists(self._keys.seen_key(message_id)))
        except RedisError as exc:
            raise SeenStoreUnavailable("seen", message_id, exc) from exc

    def remember(self, message_id: str) -> None:
        """Record ``message_id`` as handled, with the expiry, and end any claim on it."""
        try:
            # redis-py's own annotations leave `shard_hint` untyped.
            pipe = self.client.pipeline(transaction=True)  # pyright: ignore[reportUnknownMemberType]
            pipe.set(self._keys.seen_key(message_id), b"1", px=self._keys.ttl_ms)
            pipe.delete(self._keys.claim_key(message_id))
            pipe.execute()
        except RedisError as exc:
            raise SeenStoreUnavailable("remember", message_id, exc) from exc

    def remember_on(self, pipe: Any, message_id: str) -> None:
        """Queue :meth:`remember` on the caller's ``MULTI`` pipeline (same server).

        It then commits with the caller's own writes, such as a worker's acknowledgement, so a
        crash cannot leave one without the other.
        """
        pipe.set(self._keys.seen_key(message_id), b"1", px=self._keys.ttl_ms)
        pipe.delete(self._keys.claim_key(message_id))

    def forget(self, message_id: str) -> None:
        """Evict ``message_id`` (and any claim), so it runs again."""
        try:
            self.client.delete(self._keys.seen_key(message_id), self._keys.claim_key(message_id))
        except RedisError as exc:
            raise SeenStoreUnavailable("forget", message_id, exc) from exc

    def claim(self, message_id: str) -> Lease | Literal["seen", "held"]:
        """``"seen"`` (skip it), ``"held"`` (another worker runs it now), or a :class:`Lease`.

        Without a configured lease the :class:`Lease` holds no claim (``token`` is ``None``).
        """
        seen_key, claim_key, token, lease = self._keys.claim_args(message_id)
        try:
            reply = self._claim(keys=[seen_key, claim_key], args=[token, lease])
        except RedisError as exc:
            raise SeenStoreUnavailable("claim", message_id, exc) from exc
        return self._keys.verdict(reply, message_id, token)

    def release(self, lease: Lease) -> None:
        """End ``lease`` without remembering its id (the handler failed): it may run again."""
        if lease.token is None:
            return
        try:
            self._release(keys=[self._keys.claim_key(lease.message_id)], args=[lease.token])
        except RedisError as exc:
            raise SeenStoreUnavailable("release", lease.message_id, exc) from exc

    def renew(self, lease: Lease) -> bool:
        """Extend ``lease`` by the configured lease; ``False`` when it is no longer this one's.

        The guards call it while the handler runs (every :attr:`Lease.renew_every` seconds).
        """
        if lease.token is None:
            return False
        keys, args = self._keys.renew_args(lease)
        try:
            return bool(self._renew(keys=keys, args=args))
        except RedisError as exc:
            raise SeenStoreUnavailable("renew", lease.message_id, exc) from exc


class AsyncRedisSeenStore(_Store[redis.asyncio.Redis, AsyncScript]):
    """The asyncio twin of :class:`RedisSeenStore`, on a ``redis.asyncio.Redis`` client.

    Same keys, so sync and async workers share one seen-set; use it with
    :func:`~envelopekit.babelqueue.async_idempotent`.
    """

    def __init__(
        self,
        client: redis.asyncio.Redis,
        *,
        prefix: str = DEFAULT_PREFIX,
        ttl: timedelta | float | None = DEFAULT_TTL,
        lease: timedelta | float | None = None,
    ) -> None:
        implementing("client", client, ("register_script",), _CLIENT.format("redis.asyncio.Redis"))
        super().__init__(client, client.register_script, prefix, ttl, lease)

    async def seen(self, message_id: str) -> bool:
        """Whether ``message_id`` was remembered (and has not expired)."""
        try:
            return bool(await self.client.exists(self._keys.seen_key(message_id)))
        except RedisError as exc:
            raise SeenStoreUnavailable("seen", message_id, exc) from exc

    async def remember(self, message_id: str) -> None:
        """Record ``message_id`` as handled, with the expiry, and end any claim on it."""
        try:
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.set(self._keys.seen_key(message_id), b"1", px=self._keys.ttl_ms)
                pipe.delete(self._keys.claim_key(message_id))
                await pipe.execute()
        except RedisError as exc:
            raise SeenStoreUnavailable("remember", message_id, exc) from exc

    def remember_on(self, pipe: Any, message_id: str) -> None:
        """As :meth:`RedisSeenStore.remember_on`, on an asyncio pipeline."""
        pipe.set(self._keys.seen_key(message_id), b"1", px=self._keys.ttl_ms)
        pipe.delete(self._keys.claim_key(message_id))

    async def forget(self, message_id: str) -> None:
        """Evict ``message_id`` (and any claim), so it runs again."""
        try:
            await self.client.delete(
                self._keys.seen_key(message_id), self._keys.claim_key(message_id)
            )
        except RedisError as exc:
            raise SeenStoreUnavailable("forget", message_id, exc) from exc

    async def claim(self, message_id: str) -> Lease | Literal["seen", "held"]:
        """As :meth:`RedisSeenStore.claim`."""
        seen_key, claim_key, token, lease = self._keys.claim_args(message_id)
        try:
            reply = await self._claim(keys=[seen_key, claim_key], args=[token, lease])
        except RedisError as exc:
            raise SeenStoreUnavailable("claim", message_id, exc) from exc
        return self._keys.verdict(reply, message_id, token)

    async def release(self, lease: Lease) -> None:
        """As :meth:`RedisSeenStore.release`."""
        if lease.token is None:
            return
        try:
            await self._release(keys=[self._keys.claim_key(lease.message_id)], args=[lease.token])
        except RedisError as exc:
            raise SeenStoreUnavailable("release", lease.message_id, exc) from exc

    async def renew(self, lease: Lease) -> bool:
        """As :meth:`RedisSeenStore.renew`."""
        if lease.token is None:
            return False
        keys, args = self._keys.renew_args(lease)
        try:
            return bool(await self._renew(keys=keys, args=args))
        except RedisError as exc:
            raise SeenStoreUnavailable("renew", lease.message_id, exc) from exc
