"""Exceptions raised by envelopekit itself.

Bad *input* never raises anything but ``pydantic.ValidationError`` (from ``model_validate_json``)
and never raises at all from :func:`envelopekit.check`. What is here is for *programming* errors
on the producing side:

* ``EnvelopekitError``: the base of everything below.
    * ``ProducerError`` (also a ``ValueError``): a message cannot be produced as asked, such as
      a blank BabelQueue URN or a SOM topic outside ``som.``.
"""

from __future__ import annotations

__all__ = ["EnvelopekitError", "ProducerError"]


class EnvelopekitError(Exception):
    """Base class of the exceptions envelopekit raises."""


class ProducerError(EnvelopekitError, ValueError):
    """A message cannot be produced as asked (a programming error, found before sending)."""
