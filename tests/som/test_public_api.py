"""The public names of envelopekit.som: complete, importable, documented."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import envelopekit.som as som
from envelopekit._model import WireModel

MODULES = [
    importlib.import_module(f"envelopekit.som.{info.name}")
    for info in pkgutil.iter_modules(som.__path__)
]


def test_api_md_names_are_exported() -> None:
    from envelopekit.som import OriginatingSystem, SomEnvelope

    assert SomEnvelope.__module__ == "envelopekit.som._envelope"
    assert OriginatingSystem.__module__ == "envelopekit.som._envelope"


def test_every_name_in_all_is_importable_and_unique() -> None:
    assert len(som.__all__) == len(set(som.__all__))
    for name in som.__all__:
        assert getattr(som, name) is not None, name


def test_every_public_model_and_function_of_the_modules_is_exported() -> None:
    exported = set(som.__all__)
    for module in MODULES:
        for name in getattr(module, "__all__", []):
            if module.__name__.endswith("._types"):
                continue  # building blocks of the models, not user API
            if module.__name__.endswith("._spec"):
                continue  # reached through envelopekit.check(spec="som")
            assert name in exported, f"{module.__name__}.{name}"
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, WireModel)
                and value.__module__ == module.__name__
                and not module.__name__.endswith("._types")  # the abstract bases
                and not name.startswith("_")
            ):
                assert name in exported, f"{module.__name__}.{name} is a model but not exported"


def test_every_module_declares_all() -> None:
    for module in MODULES:
        assert isinstance(getattr(module, "__all__", None), list), module.__name__


def test_public_classes_have_docstrings() -> None:
    for name in som.__all__:
        value = getattr(som, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), name
