from collections.abc import Mapping
from typing import Any

from jsonschema import _Validator

def validator_for(
    schema: Mapping[str, Any] | bool, default: type[_Validator] = ...
) -> type[_Validator]: ...
