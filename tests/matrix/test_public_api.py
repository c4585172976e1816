"""`envelopekit.matrix.__all__` is complete and every name in it imports."""

from __future__ import annotations

import importlib

import envelopekit.matrix as matrix

API = {"MxRequest", "MxResponse", "MxErrorPayload", "MxErrorCode"}


def test_all_is_importable_and_complete() -> None:
    module = importlib.import_module("envelopekit.matrix")
    for name in matrix.__all__:
        assert getattr(module, name) is not None, name
    public = {n for n in vars(module) if not n.startswith("_") and n != "annotations"}
    assert public == set(matrix.__all__)
    assert set(matrix.__all__) >= API
    assert len(matrix.__all__) == len(set(matrix.__all__))


def test_spec_is_registered() -> None:
    from envelopekit._check import spec_named

    spec = spec_named("matrix")
    assert spec.name == "matrix"
    assert spec.looks_like({"op": "x"})
