"""Sensitive fields (ADR-0030): the model mark, the schema keyword, protect/unprotect, interop."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import json
import os
from typing import Annotated, Any

import orjson
import pytest
from babelqueue.exceptions import DecryptError as OfficialDecryptError
from babelqueue.gdpr import protect as official_protect
from babelqueue.gdpr import unprotect as official_unprotect
from babelqueue.schema import sensitive_paths as official_paths
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from typing_extensions import TypedDict

from envelopekit.babelqueue import (
    BabelEnvelope,
    Cipher,
    DecryptError,
    Done,
    Retry,
    Router,
    Sensitive,
    payload_schema,
    protect,
    sensitive_paths,
    unprotect,
)
from tests.conftest import DATA

SCHEMAS = DATA / "babelqueue" / "registry" / "examples" / "schemas"
USERS = json.loads((SCHEMAS / "users-registered.json").read_text())


class SealCipher:
    """A test cipher: a keyed XOR stream and an HMAC tag (authenticated; a random nonce)."""

    def __init__(self, key: bytes, nonce: bytes | None = None) -> None:
        self.key = key
        self.nonce = nonce

    def _stream(self, nonce: bytes, size: int) -> bytes:
        out = b""
        counter = 0
        while len(out) < size:
            out += hashlib.sha256(self.key + nonce + counter.to_bytes(4, "big")).digest()
            counter += 1
        return out[:size]

    def encrypt(self, plaintext: bytes) -> str:
        nonce = self.nonce if self.nonce is not None else os.urandom(12)
        sealed = bytes(
            a ^ b for a, b in zip(plaintext, self._stream(nonce, len(plaintext)), strict=True)
        )
        tag = hmac.new(self.key, nonce + sealed, "sha256").digest()
        return base64.b64encode(nonce + tag + sealed).decode("ascii")

    def decrypt(self, ciphertext: str) -> bytes:
        raw = base64.b64decode(ciphertext, validate=True)
        nonce, tag, sealed = raw[:12], raw[12:44], raw[44:]
        if not hmac.compare_digest(tag, hmac.new(self.key, nonce + sealed, "sha256").digest()):
            raise ValueError("authentication failed")
        return bytes(a ^ b for a, b in zip(sealed, self._stream(nonce, len(sealed)), strict=True))


KEY = SealCipher(b"k" * 32)
OTHER = SealCipher(b"o" * 32)


class Address(BaseModel):
    line: Annotated[str, Sensitive()]
    country: str


class Profile(BaseModel):
    full_name: Annotated[str, Sensitive()]
    tckn: Annotated[str, Sensitive("national_id")] | None = None
    marketing_opt_in: bool = False


class UserRegistered(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_id: Annotated[int, Field(ge=1)]
    email: Annotated[str, Sensitive("email"), Field(min_length=3)]
    phone: Annotated[str | None, Sensitive()] = None
    locale: str | None = None
    profile: Profile | None = None
    addresses: list[Address] = []
    pin: Annotated[int, Sensitive("credential")] = 0


DATA_IN: dict[str, Any] = {
    "user_id": 7,
    "email": "ada@example.com",
    "phone": "+90 555",
    "locale": "tr",
    "profile": {"full_name": "Ada L.", "tckn": "12345678901", "marketing_opt_in": True},
    "addresses": [{"line": "1 Main St", "country": "TR"}, {"line": "Çarşı 2", "country": "TR"}],
    "pin": 1234,
}

USER = UserRegistered.model_validate(DATA_IN)


def test_the_test_cipher_is_a_cipher() -> None:
    assert isinstance(KEY, Cipher)
    assert KEY.decrypt(KEY.encrypt(b'"x"')) == b'"x"'
    with pytest.raises(ValueError):
        OTHER.decrypt(KEY.encrypt(b'"x"'))


# --- the mark in the model, the keyword in the schema ----------------------------------------


def test_payload_schema_carries_the_marks_where_the_registry_reads_them() -> None:
    schema = payload_schema(UserRegistered)
    props = schema["properties"]
    assert props["email"]["x-gdpr-sensitive"] == "email"
    assert props["phone"]["x-gdpr-sensitive"] is True
    assert props["profile"]["properties"]["full_name"]["x-gdpr-sensitive"] is True
    assert props["addresses"]["items"]["properties"]["line"]["x-gdpr-sensitive"] is True
    assert "$defs" not in json.dumps(schema) and "$ref" not in json.dumps(schema)
    assert schema["additionalProperties"] is False
    assert [tuple(p) for p in sensitive_paths(UserRegistered)] == [
        ("addresses[].line", ""),
        ("email", "email"),
        ("phone", ""),
        ("pin", "credential"),
        ("profile.full_name", ""),
        ("profile.tckn", "national_id"),
    ]


def test_an_optional_marked_model_carries_its_mark_up() -> None:
    class Order(BaseModel):
        ship_to: Annotated[Address, Sensitive("address")] | None = None
        tags: list[Annotated[str, Sensitive()]] = []

    paths = {p.path: p.category for p in sensitive_paths(Order)}
    assert paths == {"ship_to": "address", "ship_to.line": "", "tags[]": ""}


def test_bad_categories_and_recursive_models_are_refused() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        Sensitive("")

    class Node(BaseModel):
        name: Annotated[str, Sensitive()]
        children: list[Node] = []

    with pytest.raises(TypeError, match="recursive"):
        payload_schema(Node)


EDGE_SCHEMAS: dict[str, Any] = {
    "equal-paths": {
        "properties": {
            "a": {"properties": {"b": {"x-gdpr-sensitive": "nested"}}},
            "a.b": {"x-gdpr-sensitive": "dotted"},
            "c": {
                "items": {"x-gdpr-sensitive": "i"},
                "properties": {"d": {"x-gdpr-sensitive": 1 == 1}},
            },
        }
    },
    "deep": {"properties": {"n": {}}},
    "root-true": {"x-gdpr-sensitive": True, "type": "string"},
    "root-category": {"x-gdpr-sensitive": "blob"},
    "false-empty-number": {
        "properties": {
            "a": {"x-gdpr-sensitive": False},
            "b": {"x-gdpr-sensitive": ""},
            "c": {"x-gdpr-sensitive": 1},
            "d": {"x-gdpr-sensitive": "ok"},
        }
    },
    "nested-arrays": {
        "properties": {
            "m": {"items": {"items": {"properties": {"z": {"x-gdpr-sensitive": 1 == 1}}}}}
        }
    },
    "malformed": {"properties": {"a": 1, "b": [], "c": {"items": [{"x-gdpr-sensitive": True}]}}},
    "container-and-leaf": {
        "properties": {
            "card": {"x-gdpr-sensitive": "pci", "properties": {"pan": {"x-gdpr-sensitive": True}}}
        }
    },
    "sort-order": {
        "properties": {
            "b": {"x-gdpr-sensitive": True},
            "a.b": {"x-gdpr-sensitive": True},
            "a": {"x-gdpr-sensitive": True},
        }
    },
}


@pytest.mark.parametrize(
    "name",
    [p.name for p in sorted(SCHEMAS.glob("*.json"))] + ["generated", *EDGE_SCHEMAS],
)
def test_sensitive_paths_equal_the_official(name: str) -> None:
    if name == "generated":
        schema = payload_schema(UserRegistered)
    elif name in EDGE_SCHEMAS:
        schema = EDGE_SCHEMAS[name]
    else:
        schema = json.loads((SCHEMAS / name).read_text())
    if name == "deep":  # 300 levels: both read it (the recursion limit is 1000)
        node = schema["properties"]["n"]
        for _ in range(300):
            node["properties"] = {"n": {"x-gdpr-sensitive": True}}
            node = node["properties"]["n"]
    assert [tuple(p) for p in sensitive_paths(schema)] == [tuple(p) for p in official_paths(schema)]


def test_the_registry_schema_and_ours_mark_the_same_users_fields() -> None:
    registry = {p.path for p in sensitive_paths(USERS)}
    ours = {p.path for p in sensitive_paths(UserRegistered)}
    assert registry == ours - {"pin"}


# --- protect / unprotect, both ways with the official ----------------------------------------


def test_we_protect_and_the_official_opens_and_back() -> None:
    protected = protect(DATA_IN, KEY, USERS)
    assert DATA_IN["email"] == "ada@example.com"  # the input is never changed
    assert protected["email"] != "ada@example.com" and isinstance(protected["email"], str)
    assert protected["locale"] == "tr" and protected["addresses"][0]["country"] == "TR"
    opened = json.loads(json.dumps(protected))
    official_unprotect(opened, USERS, KEY)
    assert opened == DATA_IN
    theirs = json.loads(json.dumps(DATA_IN))
    official_protect(theirs, USERS, KEY)
    assert unprotect(theirs, KEY, USERS) == DATA_IN


def test_same_cipher_same_bytes_as_the_official() -> None:
    fixed = SealCipher(b"k" * 32, nonce=b"n" * 12)
    theirs = json.loads(json.dumps(DATA_IN))
    official_protect(theirs, payload_schema(UserRegistered), fixed)
    assert protect(DATA_IN, fixed, UserRegistered) == theirs


def test_a_typed_envelope_is_validated_before_protect_and_after_unprotect() -> None:
    env = BabelEnvelope[UserRegistered].create("urn:babel:users:registered", USER)
    sealed = protect(env, KEY)  # the model's own payload schema
    wire = orjson.loads(sealed.to_json())
    assert type(sealed.data) is dict and wire["data"]["email"] != DATA_IN["email"]
    assert wire["meta"] == orjson.loads(env.to_json())["meta"]
    # Ciphertext is not the cleartext model: the typed door refuses it loudly...
    with pytest.raises(ValidationError):
        BabelEnvelope[UserRegistered].model_validate_json(sealed.to_json())
    # ...and the natural order opens, then validates.
    received = BabelEnvelope.model_validate_json(sealed.to_json())
    typed = unprotect(received, KEY, model=UserRegistered)
    assert typed.data == USER
    assert unprotect(received, KEY, UserRegistered).data == DATA_IN
    assert unprotect(received, KEY, USERS).data["pin"] != 1234  # the registry does not mark it


def test_wrong_key_and_garbage_are_decrypt_errors_with_a_pointer() -> None:
    sealed = protect(DATA_IN, KEY, USERS)
    with pytest.raises(DecryptError) as wrong:
        unprotect(sealed, OTHER, USERS)
    assert wrong.value.violation.rule == "data.decrypt_failed"
    assert wrong.value.violation.pointer == "/data/addresses/0/line"  # the first path, sorted
    with pytest.raises(OfficialDecryptError):
        official_unprotect(json.loads(json.dumps(sealed)), USERS, OTHER)
    not_json = {"user_id": 7, "email": KEY.encrypt(b"not json")}
    with pytest.raises(DecryptError) as bad:
        unprotect(not_json, KEY, USERS)
    assert bad.value.violation.pointer == "/data/email"
    # A marked leaf that is not a string was never protected: left as it is.
    assert unprotect({"email": 5}, KEY, USERS) == {"email": 5}


def test_a_dict_envelope_needs_a_schema() -> None:
    env = BabelEnvelope.create("urn:babel:users:registered", dict(DATA_IN))
    with pytest.raises(TypeError):
        protect(env, KEY)


# --- Router: decrypt, then validate; republish the ciphertext --------------------------------


def test_router_refuses_a_sensitive_model_without_a_cipher() -> None:
    with pytest.raises(ValueError, match="cipher"):
        Router().register("urn:babel:users:registered", lambda env: None, UserRegistered)


def test_router_opens_before_the_model_and_the_schema() -> None:
    from envelopekit.babelqueue import PayloadSchemas

    seen: list[UserRegistered] = []
    router = Router(
        cipher=KEY,
        schemas=PayloadSchemas({"urn:babel:users:registered": payload_schema(UserRegistered)}),
    )
    router.register("urn:babel:users:registered", lambda env: seen.append(env.data), UserRegistered)
    env = BabelEnvelope[UserRegistered].create("urn:babel:users:registered", USER)
    sealed = protect(env, KEY).to_json()
    assert isinstance(router.dispatch(sealed), Done)
    assert seen == [USER]
    # A message sealed under another key fails as invalid data; the retry carries the bytes sent.
    outcome = router.dispatch(protect(env, OTHER).to_json())
    assert isinstance(outcome, Retry) and outcome.rule == "data.invalid"
    assert orjson.loads(outcome.envelope.to_json())["data"]["email"] != DATA_IN["email"]


def test_router_opens_for_an_untyped_route_with_a_marked_schema() -> None:
    from envelopekit.babelqueue import PayloadSchemas

    seen: list[dict[str, Any]] = []
    router = Router(cipher=KEY, schemas=PayloadSchemas({"urn:babel:users:registered": USERS}))
    router.register("urn:babel:users:registered", lambda env: seen.append(env.data))
    data = {k: v for k, v in DATA_IN.items() if k != "pin"}
    sealed = protect(BabelEnvelope.create("urn:babel:users:registered", data), KEY, USERS)
    # minLength 3 on the email holds for the ciphertext too; the schema sees the cleartext.
    assert isinstance(router.dispatch(sealed.to_json()), Done)
    assert seen == [data]


def test_a_marked_container_is_one_ciphertext_of_the_official_canonical_json() -> None:
    schema = {"properties": {"card": {"x-gdpr-sensitive": "pci"}, "n": {"type": "integer"}}}
    data = {"card": {"z": 1, "a": [1.5, {"y": "é", "b": None}]}, "n": 2}
    fixed = SealCipher(b"k" * 32, nonce=b"n" * 12)
    theirs = json.loads(json.dumps(data))
    official_protect(theirs, schema, fixed)
    ours = protect(data, fixed, schema)
    assert ours == theirs and isinstance(ours["card"], str) and ours["n"] == 2
    assert fixed.decrypt(ours["card"]) == b'{"a":[1.5,{"b":null,"y":"\\u00e9"}],"z":1}'
    assert unprotect(ours, fixed, schema) == data


def test_a_schema_of_any_depth_is_read() -> None:
    schema: dict[str, Any] = {}
    node = schema
    for _ in range(5000):
        node["items"] = {}
        node = node["items"]
    node["x-gdpr-sensitive"] = True
    ((path, category),) = sensitive_paths(schema)
    assert path == "[]" * 5000 and category == ""


def test_a_schema_holding_itself_is_read_once_along_each_path() -> None:
    cyclic: dict[str, Any] = {"x-gdpr-sensitive": True, "properties": {}}
    cyclic["properties"]["again"] = cyclic
    cyclic["items"] = cyclic
    shared = {"x-gdpr-sensitive": "email"}  # the same node in two places is read in both
    cyclic["properties"]["a"] = {"properties": {"x": shared, "y": shared}}
    assert sensitive_paths(cyclic) == [("", ""), ("a.x", "email"), ("a.y", "email")]


# --- plaintext an envelope cannot hold is a decrypt failure ------------------------------------

MARKED = {"properties": {"email": {"x-gdpr-sensitive": True}}}
NOT_JSON = {
    "nan": b"NaN",
    "infinity": b"-Infinity",
    "past-a-double": b"1e400",
    "lone-surrogate": b'"\\ud800"',
    "lone-surrogate-key": b'{"\\udc00": 1}',
    "surrogate-bytes": b'"\xed\xa0\x80"',
    "past-the-stack": b"[" * 100_000 + b"]" * 100_000,
}


@pytest.mark.parametrize("plaintext", NOT_JSON.values(), ids=NOT_JSON.keys())
@pytest.mark.parametrize("target", ["envelope", "data"])
def test_plaintext_that_is_not_json_is_a_decrypt_error(plaintext: bytes, target: str) -> None:
    data = {"email": KEY.encrypt(plaintext)}
    sealed: Any = data
    if target == "envelope":
        sealed = BabelEnvelope.create("urn:babel:users:registered", data)
    with pytest.raises(DecryptError, match="not JSON") as raised:
        unprotect(sealed, KEY, MARKED)
    assert raised.value.violation.rule == "data.decrypt_failed"
    assert raised.value.violation.pointer == "/data/email"


def test_plaintext_nesting_past_the_message_is_a_decrypt_error() -> None:
    deep = b"[" * 199 + b"]" * 199  # JSON, but at /data/email past the parser's 200 levels
    sealed = BabelEnvelope.create("urn:babel:users:registered", {"email": KEY.encrypt(deep)})
    with pytest.raises(DecryptError, match="does not fit the message") as raised:
        unprotect(sealed, KEY, MARKED)
    assert raised.value.violation.rule == "data.decrypt_failed"
    assert raised.value.violation.pointer.startswith("/data/email/0/0/")


@pytest.mark.parametrize("plaintext", NOT_JSON.values(), ids=NOT_JSON.keys())
def test_router_fails_plaintext_that_is_not_json_as_invalid_data(plaintext: bytes) -> None:
    router = Router(cipher=KEY)
    router.register("urn:babel:users:registered", lambda env: None, Contact)
    body = BabelEnvelope.create("urn:babel:users:registered", {"email": KEY.encrypt(plaintext)})
    outcome = router.dispatch(body.to_json())
    assert isinstance(outcome, Retry) and outcome.rule == "data.invalid"
    assert outcome.envelope.data == body.data  # the ciphertext as received


class Contact(BaseModel):
    email: Annotated[str, Sensitive("email")]


class LossyCipher:
    """A cipher whose ``encrypt`` returns something other than the string the protocol asks."""

    def __init__(self, sealed: object) -> None:
        self.sealed = sealed

    def encrypt(self, plaintext: bytes) -> Any:
        return self.sealed

    def decrypt(self, ciphertext: str) -> bytes:
        raise AssertionError("never called")


@pytest.mark.parametrize("sealed", [5, b"c2VhbGVk", None], ids=repr)
def test_a_cipher_that_returns_no_string_is_refused_not_written(sealed: object) -> None:
    with pytest.raises(TypeError, match="not a str"):
        protect({"email": "a@example.com"}, LossyCipher(sealed), MARKED)


# A mark below a marked container: sealed inside the container's one ciphertext.
NESTED_MARKS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "array-and-items": (
        {"properties": {"n": {"x-gdpr-sensitive": True, "items": {"x-gdpr-sensitive": True}}}},
        {"n": ["a", "b"], "m": 1},
    ),
    "object-and-property": (
        {
            "properties": {
                "p": {"x-gdpr-sensitive": True, "properties": {"q": {"x-gdpr-sensitive": "pii"}}}
            }
        },
        {"p": {"q": "secret", "r": 2}},
    ),
    "object-in-items-and-property": (
        {
            "properties": {
                "lines": {
                    "items": {
                        "properties": {
                            "card": {
                                "x-gdpr-sensitive": "pci",
                                "properties": {"pan": {"x-gdpr-sensitive": "pci"}},
                            }
                        }
                    }
                }
            }
        },
        {"lines": [{"card": {"pan": "4111"}}, {"qty": 1}]},
    ),
}


@pytest.mark.parametrize("name", NESTED_MARKS)
def test_a_mark_below_a_marked_container_round_trips(name: str) -> None:
    schema, data = NESTED_MARKS[name]
    fixed = SealCipher(b"k" * 32, nonce=b"n" * 12)
    theirs = json.loads(json.dumps(data))
    official_protect(theirs, schema, fixed)
    ours = protect(data, fixed, schema)
    assert ours == theirs  # the same bytes: the container is one ciphertext
    assert unprotect(ours, fixed, schema) == data
    env = BabelEnvelope.create("urn:babel:users:registered", data)
    assert unprotect(protect(env, KEY, schema), KEY, schema).data == data


def test_items_sealed_one_by_one_still_open_under_a_marked_container() -> None:
    # A producer whose schema marks only the items: the container arrives as a list, not sealed.
    producer = {"properties": {"n": {"items": {"x-gdpr-sensitive": True}}}}
    consumer = NESTED_MARKS["array-and-items"][0]
    sealed = protect({"n": ["a", "b"]}, KEY, producer)
    assert unprotect(sealed, KEY, consumer) == {"n": ["a", "b"]}


# --- Router: the marks of any data type, found before anything is inlined ----------------------


class Opaque:
    """A field type pydantic validates by isinstance and cannot write a JSON Schema for."""


class WithOpaque(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    handle: Opaque | None = None


class WithOpaqueAndEmail(WithOpaque):
    email: Annotated[str, Sensitive("email")]


@dataclasses.dataclass
class EmailRecord:
    email: Annotated[str, Sensitive("email")]


class EmailDict(TypedDict):
    email: Annotated[str, Sensitive("email")]


class Thread(BaseModel):
    email: Annotated[str, Sensitive("email")]
    reply: Thread | None = None


MARKED_TYPES = {"dataclass": EmailRecord, "typed-dict": EmailDict, "opaque": WithOpaqueAndEmail}


@pytest.mark.parametrize("data_type", MARKED_TYPES.values(), ids=MARKED_TYPES.keys())
def test_any_data_type_marking_fields_needs_a_cipher(data_type: Any) -> None:
    with pytest.raises(ValueError, match=r"cipher="):
        Router().register("urn:babel:users:registered", lambda env: None, data_type)


@pytest.mark.parametrize("data_type", MARKED_TYPES.values(), ids=MARKED_TYPES.keys())
def test_any_data_type_marking_fields_is_handled_in_cleartext(data_type: Any) -> None:
    seen: list[Any] = []
    router = Router(cipher=KEY)
    router.register("urn:babel:users:registered", lambda env: seen.append(env.data), data_type)
    sent = BabelEnvelope.create("urn:babel:users:registered", {"email": "a@example.com"})
    assert isinstance(router.dispatch(protect(sent, KEY, MARKED).to_json()), Done)
    email = seen[0]["email"] if isinstance(seen[0], dict) else seen[0].email
    assert email == "a@example.com"


@pytest.mark.parametrize("cipher", [None, KEY], ids=["no-cipher", "cipher"])
def test_a_recursive_model_marking_fields_is_refused(cipher: Cipher | None) -> None:
    # Its marks were never found: the handler got the ciphertext as if it were the cleartext.
    with pytest.raises(ValueError, match="recursive"):
        Router(cipher=cipher).register("urn:babel:users:registered", lambda env: None, Thread)


def test_a_model_with_a_field_no_json_schema_describes_registers() -> None:
    route = Router().register("urn:babel:users:registered", lambda env: None, WithOpaque)
    assert route.model is WithOpaque
