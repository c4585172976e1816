"""Story sequences: the rules across successive ``story.context`` snapshots of one story.

A ``story.context`` message is the complete state of a story, never a delta (SOM conformance
§6). Across the snapshots of one story the SOM Managed Bus refuses (source ``sequence``):

* ``story_id.changed``: a snapshot names another story than the first one did;
* ``sequence_number.not_increasing``: not greater than the last accepted one;
* ``updated_at.backwards``: earlier than the last accepted one (equal is allowed);
* ``snapshot.members_missing``: a member of the last snapshot is absent (omission means
  absent, not unchanged); ``lifecycle`` is exempt when the story is no longer ACTIVE, since
  the schema then forbids it;
* ``snapshot.assets_dropped``: an ``asset_id`` of the last snapshot is absent;
* ``asset.type_changed``: an asset's ``asset_type`` differs from the one it was first seen with
  (in an accepted snapshot, or earlier in this one: an ``asset_id`` may repeat);
* ``story_type.left_terminal``: the last snapshot was KILLED, SPIKED or ARCHIVED and this one
  is not;

and accepts with a warning ``sequence_number.gap`` when ``sequence_number`` skips values.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from .. import rules
from .._compat import MISSING
from .._violations import Verdict, Violation, pointer, quote, shown, violation
from ._envelope import SomEnvelope
from ._story_context import TERMINAL_STORY_TYPES, StoryContext
from ._types import instant_key

__all__ = ["StoryLedger", "check_story"]

_EXEMPT_WHEN_NOT_ACTIVE: Final = frozenset({"lifecycle"})


def _present(snapshot: StoryContext) -> list[str]:
    """The wire names of the members a snapshot carries, in schema order."""
    return [
        info.alias or name
        for name, info in type(snapshot).model_fields.items()
        if getattr(snapshot, name) is not MISSING
    ]


def _assets(snapshot: StoryContext) -> list[tuple[str, str]]:
    """Each asset's ``(asset_id, asset_type)``, in order; an id may repeat (no schema rule)."""
    if snapshot.assets is MISSING:
        return []
    return [(asset.asset_id, asset.asset_type) for asset in snapshot.assets]


class StoryLedger:
    """Checks the snapshots of one story in publication order, as the bus does.

    ``add`` checks a snapshot against the last accepted one and records it when it passes;
    ``check`` only checks. Both take a :class:`StoryContext` or a :class:`SomEnvelope`
    carrying one (pointers then start at ``/payload``).

    Example:
        >>> ledger = StoryLedger()
        >>> verdicts = [ledger.add(snapshot) for snapshot in snapshots]  # doctest: +SKIP
    """

    def __init__(self) -> None:
        self._story_id: str | None = None
        self._last: StoryContext | None = None
        self._asset_types: dict[str, str] = {}

    @property
    def story_id(self) -> str | None:
        """The story this ledger follows (from the first accepted snapshot)."""
        return self._story_id

    @property
    def last(self) -> StoryContext | None:
        """The last accepted snapshot."""
        return self._last

    def check(self, snapshot: StoryContext | SomEnvelope) -> Verdict[StoryContext]:
        """Check ``snapshot`` against the ledger without recording it.

        Raises:
            TypeError: for anything but a :class:`StoryContext` or a :class:`SomEnvelope`
                carrying one (a dict, an envelope of another family): validate it first.
        """
        story, base = _unwrap(snapshot)
        errors, warnings = self._findings(story, base)
        return Verdict("som", None if errors else story, errors, warnings)

    def add(self, snapshot: StoryContext | SomEnvelope) -> Verdict[StoryContext]:
        """Check ``snapshot`` and, when it passes (warnings allowed), record it as the last.

        Raises:
            TypeError: as :meth:`check`.
        """
        verdict = self.check(snapshot)
        if verdict.ok and verdict.envelope is not None:
            story = verdict.envelope
            if self._story_id is None:
                self._story_id = story.story_id
            self._last = story
            for asset_id, asset_type in _assets(story):
                self._asset_types.setdefault(asset_id, asset_type)
        return verdict

    def _findings(self, story: StoryContext, base: str) -> tuple[list[Violation], list[Violation]]:
        errors: list[Violation] = []
        warnings: list[Violation] = []
        if self._story_id is not None and story.story_id != self._story_id:
            errors.append(
                violation(
                    rules.STORY_ID_CHANGED,
                    base + "/story_id",
                    f"story_id {shown(story.story_id)} is not this story's "
                    f"{shown(self._story_id)}.",
                )
            )
        prev = self._last
        if prev is None:
            return errors + self._type_changes(story, base), warnings
        if story.sequence_number <= prev.sequence_number:
            errors.append(
                violation(
                    rules.SEQUENCE_NUMBER_NOT_INCREASING,
                    base + "/sequence_number",
                    # quote(): an integer past 4,300 digits has no str() (a Python one can).
                    f"sequence_number {quote(story.sequence_number)} is not greater than the "
                    f"last accepted {quote(prev.sequence_number)}.",
                )
            )
        elif story.sequence_number > prev.sequence_number + 1:
            warnings.append(
                violation(
                    rules.SEQUENCE_NUMBER_GAP,
                    base + "/sequence_number",
                    f"sequence_number jumps from {quote(prev.sequence_number)} to "
                    f"{quote(story.sequence_number)}.",
                )
            )
        # Instants, not strings: "…00.5Z" is later than "…00Z" though it sorts first as text.
        if instant_key(story.updated_at) < instant_key(prev.updated_at):
            errors.append(
                violation(
                    rules.UPDATED_AT_BACKWARDS,
                    base + "/updated_at",
                    f"updated_at {story.updated_at} is earlier than the last {prev.updated_at}.",
                )
            )
        present = set(_present(story))
        for member in _present(prev):
            if member in present:
                continue
            if member in _EXEMPT_WHEN_NOT_ACTIVE and story.story_type != "ACTIVE":
                continue
            errors.append(
                violation(
                    rules.SNAPSHOT_MEMBERS_MISSING,
                    base + pointer(member),
                    f"{member} was in the last snapshot and is absent: a snapshot is the "
                    "complete state, never a delta.",
                )
            )
        here = {asset_id for asset_id, _ in _assets(story)}
        dropped = [
            asset_id
            for asset_id in dict.fromkeys(a for a, _ in _assets(prev))
            if asset_id not in here
        ]
        if dropped:
            errors.append(
                violation(
                    rules.SNAPSHOT_ASSETS_DROPPED,
                    base + "/assets",
                    f"assets {', '.join(dropped)} of the last snapshot are absent.",
                )
            )
        errors += self._type_changes(story, base)
        if prev.story_type in TERMINAL_STORY_TYPES and story.story_type not in TERMINAL_STORY_TYPES:
            errors.append(
                violation(
                    rules.STORY_TYPE_LEFT_TERMINAL,
                    base + "/story_type",
                    f"story_type {story.story_type} after the terminal {prev.story_type}.",
                )
            )
        return errors, warnings

    def _type_changes(self, story: StoryContext, base: str) -> list[Violation]:
        """``asset.type_changed`` for each asset of ``story`` off the type it was first seen with.

        First seen in an accepted snapshot, else earlier in this one (an ``asset_id`` may
        repeat, the first snapshot's too).
        """
        errors: list[Violation] = []
        first_here: dict[str, str] = {}
        for index, (asset_id, asset_type) in enumerate(_assets(story)):
            first = self._asset_types.get(asset_id)
            if first is None:
                first = first_here.setdefault(asset_id, asset_type)
            if first != asset_type:
                errors.append(
                    violation(
                        rules.ASSET_TYPE_CHANGED,
                        base + f"/assets/{index}/asset_type",
                        f"asset {shown(asset_id)} changed asset_type from {first} to {asset_type}.",
                    )
                )
        return errors


def _unwrap(snapshot: StoryContext | SomEnvelope) -> tuple[StoryContext, str]:
    if isinstance(snapshot, StoryContext):
        return snapshot, ""
    if isinstance(snapshot, SomEnvelope) and isinstance(snapshot.payload, StoryContext):
        return snapshot.payload, "/payload"
    raise TypeError(f"not a story.context snapshot: {type(snapshot).__name__}")


def check_story(snapshots: Iterable[StoryContext | SomEnvelope]) -> list[Verdict[StoryContext]]:
    """Run a fresh :class:`StoryLedger` over ``snapshots``; one verdict per snapshot.

    Raises:
        TypeError: for a snapshot that is no :class:`StoryContext` or :class:`SomEnvelope`
            carrying one (:meth:`StoryLedger.check`).
    """
    ledger = StoryLedger()
    return [ledger.add(snapshot) for snapshot in snapshots]
