from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

class _Error(Exception):
    message: str
    path: deque[str | int]
    relative_path: deque[str | int]
    absolute_path: deque[str | int]
    schema_path: deque[str | int]
    relative_schema_path: deque[str | int]
    absolute_schema_path: deque[str | int]
    json_path: str
    context: list[ValidationError] | None
    cause: Exception | None
    validator: str
    validator_value: Any
    instance: Any
    schema: Any
    parent: _Error | None

class ValidationError(_Error): ...
class SchemaError(_Error): ...

def best_match(errors: Iterable[ValidationError], key: Any = ...) -> ValidationError | None: ...

__all__: Sequence[str]
