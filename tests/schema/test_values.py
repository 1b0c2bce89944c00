"""paidtwice.schema.value_for: every value it makes is validated by jsonschema, over hand-written schemas and
the ones pydantic, dataclasses (through pydantic) and msgspec produce; the same seed gives the same value in
another process; a schema no value satisfies raises UnsatisfiableSchema naming the path."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import json
import os
import subprocess
import sys
import uuid
from typing import Annotated, Any, Literal

import jsonschema
import msgspec
import pydantic
import pytest

from paidtwice import UnsatisfiableSchema
from paidtwice.schema import value_for

SEEDS = range(25)


def assert_valid(schema: Any, value: Any) -> None:
    validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    validator_class(schema, format_checker=validator_class.FORMAT_CHECKER).validate(value)


HANDWRITTEN: dict[str, Any] = {
    "string": {"type": "string"},
    "bounded string": {"type": "string", "minLength": 30, "maxLength": 31},
    "short string": {"type": "string", "maxLength": 2},
    "pattern": {"type": "string", "pattern": r"^[A-Z]{2}\d{3}-[a-f0-9]{4}$"},
    "unanchored pattern": {"type": "string", "pattern": r"ab+c"},
    "negated class": {"type": "string", "pattern": r"^[^aeiou\s]{4,6}$"},
    "pattern and length": {"type": "string", "pattern": r"^x+$", "minLength": 3, "maxLength": 5},
    "alternation": {"type": "string", "pattern": r"^(red|green|blue)-\w{2}$"},
    "email": {"type": "string", "format": "email"},
    "formats": {
        "type": "object",
        "properties": {
            f: {"type": "string", "format": f}
            for f in ("date-time", "date", "time", "uuid", "ipv4", "ipv6", "hostname", "uri", "duration")
        },
        "required": ["date", "uuid", "ipv4", "ipv6"],
    },
    "integer": {"type": "integer"},
    "integer bounds": {"type": "integer", "minimum": -3, "maximum": 3},
    "integer exclusive": {"type": "integer", "exclusiveMinimum": 10, "exclusiveMaximum": 12},
    "integer multiple": {"type": "integer", "multipleOf": 7, "minimum": 50, "maximum": 80},
    "number": {"type": "number"},
    "number exclusive": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    "number multiple": {"type": "number", "multipleOf": 0.01, "minimum": 0.5, "maximum": 0.6},
    "negative only": {"type": "number", "maximum": -1000.5},
    "draft4 exclusive": {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "integer",
        "minimum": 0,
        "exclusiveMinimum": True,
        "maximum": 2,
        "exclusiveMaximum": True,
    },
    "boolean": {"type": "boolean"},
    "null": {"type": "null"},
    "enum": {"enum": ["north", "south", 3, None]},
    "typed enum": {"type": "string", "enum": ["a", 1, "b"]},
    "const": {"const": {"kind": "fixed"}},
    "true": True,
    "empty": {},
    "nullable openapi": {"type": "string", "nullable": True, "minLength": 2},
    "type list": {"type": ["null", "integer"], "minimum": 4},
    "object": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 3},
            "address": {
                "type": "object",
                "properties": {"zip": {"type": "string", "pattern": r"^\d{5}$"}, "city": {"type": "string"}},
                "required": ["zip"],
                "additionalProperties": False,
            },
        },
        "required": ["name", "address"],
        "additionalProperties": False,
    },
    "object only extras": {"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 2},
    "object max properties": {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}, "c": {"type": "string"}},
        "required": ["b"],
        "maxProperties": 1,
    },
    "dependent required": {
        "type": "object",
        "properties": {"card": {"type": "string"}, "billing": {"type": "string"}},
        "dependentRequired": {"card": ["billing"]},
    },
    "array unique enum": {
        "type": "array",
        "items": {"enum": ["a", "b", "c", "d"]},
        "uniqueItems": True,
        "minItems": 4,
    },
    "array unique ints": {"type": "array", "items": {"type": "integer"}, "uniqueItems": True, "minItems": 6},
    "array contains": {"type": "array", "items": {"type": "integer"}, "contains": {"const": 5}},
    "tuple prefixItems": {
        "type": "array",
        "prefixItems": [{"type": "string"}, {"type": "integer"}],
        "items": False,
        "minItems": 2,
    },
    "tuple draft4 items": {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "array",
        "items": [{"type": "boolean"}, {"type": "number"}],
        "minItems": 2,
        "maxItems": 2,
    },
    "ref defs": {
        "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}},
        "type": "object",
        "properties": {"points": {"type": "array", "items": {"$ref": "#/$defs/Point"}, "minItems": 2}},
        "required": ["points"],
    },
    "ref definitions": {
        "definitions": {"Name": {"type": "string", "pattern": "^[a-z]+$"}},
        "$ref": "#/definitions/Name",
    },
    "recursive": {
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                },
                "required": ["value", "children"],
            }
        },
        "$ref": "#/$defs/Node",
    },
    "allOf": {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "integer", "minimum": 10}}, "required": ["a"]},
            {"properties": {"a": {"maximum": 12}, "b": {"type": "string"}}, "required": ["b"]},
        ]
    },
    "allOf numbers": {"allOf": [{"type": "number"}, {"type": "integer", "minimum": 3, "maximum": 4}]},
    "anyOf": {"anyOf": [{"type": "string", "pattern": "^(?!x)y$"}, {"type": "integer", "minimum": 5}]},
    "oneOf overlapping": {"oneOf": [{"type": "integer"}, {"type": "number"}]},
    "oneOf discriminated": {
        "oneOf": [
            {
                "type": "object",
                "properties": {"kind": {"const": "cat"}, "lives": {"type": "integer"}},
                "required": ["kind", "lives"],
            },
            {
                "type": "object",
                "properties": {"kind": {"const": "dog"}, "bark": {"type": "string"}},
                "required": ["kind", "bark"],
            },
        ]
    },
    "optional field": {
        "type": "object",
        "properties": {"note": {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}]}},
        "required": ["note"],
    },
    "not": {"type": "integer", "minimum": 1, "maximum": 2, "not": {"const": 0}},
    "openai strict tool": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city"},
            "unit": {"type": "string", "enum": ["c", "f"]},
            "days": {"type": ["integer", "null"]},
        },
        "required": ["city", "unit", "days"],
        "additionalProperties": False,
    },
}


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 5


class Address(pydantic.BaseModel):
    street: str
    zip_code: Annotated[str, pydantic.StringConstraints(pattern=r"^\d{5}(-\d{4})?$")]
    country: Literal["US", "CA"] = "US"


class Cat(pydantic.BaseModel):
    pet: Literal["cat"]
    meows: int


class Dog(pydantic.BaseModel):
    pet: Literal["dog"]
    barks: Annotated[float, pydantic.Field(gt=0, le=1)]


class Order(pydantic.BaseModel):
    id: uuid.UUID
    placed: datetime.datetime
    due: datetime.date | None = None
    quantity: Annotated[int, pydantic.Field(ge=1, le=99, multiple_of=3)]
    price: decimal.Decimal
    ratio: Annotated[float, pydantic.Field(gt=0, lt=1)]
    colour: Colour
    priority: Priority
    tags: Annotated[list[str], pydantic.Field(min_length=1, max_length=4)]
    unique: set[int]
    coords: tuple[float, float]
    extra: dict[str, int]
    address: Address
    alternates: list[Address] = []
    pet: Annotated[Cat | Dog, pydantic.Field(discriminator="pet")]
    code: Annotated[str, pydantic.StringConstraints(min_length=3, max_length=8, to_upper=True)]
    note: str | None


class Tree(pydantic.BaseModel):
    name: str
    children: list[Tree] = []


@dataclasses.dataclass
class Booking:
    guest: str
    nights: int
    breakfast: bool = False
    room: Literal["single", "double"] = "single"
    notes: list[str] = dataclasses.field(default_factory=list)


class MsgAddress(msgspec.Struct):
    street: str
    unit: int | None = None


class MsgUser(msgspec.Struct):
    name: Annotated[str, msgspec.Meta(min_length=2, max_length=10, pattern="^[A-Za-z]+$")]
    age: Annotated[int, msgspec.Meta(ge=0, lt=130)]
    score: Annotated[float, msgspec.Meta(gt=0.0, multiple_of=0.5)]
    colour: Colour
    addresses: list[MsgAddress]
    kind: Literal["admin", "user"] = "user"
    created: datetime.datetime = datetime.datetime(2026, 1, 1)


def generated_schemas() -> dict[str, Any]:
    return {
        "pydantic Order": Order.model_json_schema(),
        "pydantic Order (serialization)": Order.model_json_schema(mode="serialization"),
        "pydantic Tree": Tree.model_json_schema(),
        "pydantic primitive": pydantic.TypeAdapter(Annotated[int, pydantic.Field(gt=0)]).json_schema(),
        "pydantic list of str": pydantic.TypeAdapter(list[str]).json_schema(),
        "dataclass Booking": pydantic.TypeAdapter(Booking).json_schema(),
        "msgspec MsgUser": msgspec.json.schema(MsgUser),
        "msgspec list": msgspec.json.schema(list[MsgAddress]),
    }


ALL = {**HANDWRITTEN, **generated_schemas()}


@pytest.mark.parametrize("name", list(ALL))
def test_every_value_is_valid(name: str) -> None:
    schema = ALL[name]
    for seed in SEEDS:
        value = value_for(schema, seed=seed)
        json.dumps(value)  # plain JSON, no Python objects
        assert_valid(schema, value)


def test_values_parse_into_the_models() -> None:
    for seed in SEEDS:
        Order.model_validate(value_for(Order.model_json_schema(), seed=seed))
        Tree.model_validate(value_for(Tree.model_json_schema(), seed=seed))
        pydantic.TypeAdapter(Booking).validate_python(value_for(pydantic.TypeAdapter(Booking).json_schema()))
        msgspec.convert(value_for(msgspec.json.schema(MsgUser), seed=seed), MsgUser)


def test_the_same_seed_gives_the_same_value_in_another_process() -> None:
    schema = ALL["pydantic Order"]
    program = (
        "import json, sys; from paidtwice.schema import value_for; "
        "print(json.dumps(value_for(json.loads(sys.stdin.read()), seed='s1'), sort_keys=True))"
    )
    outputs = set()
    for hash_seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", program],
            input=json.dumps({**schema, "properties": {**schema["properties"], "x": ALL["negated class"]}}),
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            check=True,
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
    assert value_for(schema, seed="s1") == value_for(schema, seed="s1")


def test_seeds_vary_the_values() -> None:
    values = {json.dumps(value_for(ALL["object"], seed=seed), sort_keys=True) for seed in SEEDS}
    assert len(values) > 5


def test_a_field_keeps_its_value_when_another_field_is_added() -> None:
    base = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    grown = {**base, "properties": {"z": {"type": "integer"}, **base["properties"]}}
    assert value_for(base, seed=3)["a"] == value_for(grown, seed=3)["a"]


@pytest.mark.parametrize(
    ("schema", "path", "words"),
    [
        (False, "$", "`false`"),
        ({"type": "integer", "minimum": 5, "maximum": 4}, "$", "no integer between 5 and 4"),
        (
            {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"enum": []}}}}},
            "$.a.b",
            "enum",
        ),
        (
            {"type": "array", "items": {"type": "string", "minLength": 3, "maxLength": 1}, "minItems": 3},
            "$[0]",
            "minLength 3 is above maxLength 1",
        ),
        (
            {"type": "array", "items": {"enum": [1, 2]}, "uniqueItems": True, "minItems": 3},
            "$[2]",
            "uniqueItems",
        ),
        ({"type": "string", "minLength": 5, "maxLength": 2}, "$", "minLength 5 is above maxLength 2"),
        ({"type": "string", "pattern": "^(?!a)a$"}, "$", "pattern"),
        ({"type": "string", "pattern": "[unclosed"}, "$", "not a regex"),
        ({"type": "integer", "multipleOf": 10, "minimum": 1, "maximum": 9}, "$", "multiple of 10"),
        ({"$ref": "#/$defs/Missing"}, "$", "points at nothing"),
        ({"$ref": "https://example.com/other.json"}, "$", "only references into this document"),
        ({"$defs": {"Loop": {"$ref": "#/$defs/Loop"}}, "$ref": "#/$defs/Loop"}, "$", "cannot follow"),
        ({"allOf": [{"type": "string"}, {"type": "integer"}]}, "$", "type"),
        ({"oneOf": [{"type": "integer"}, {"type": "integer", "minimum": 0}]}, "$", "oneOf"),
        (
            {
                "type": "object",
                "properties": {
                    "list": {"type": "array", "items": {"type": "number", "maximum": 0, "minimum": 1}}
                },
                "required": ["list"],
            },
            "$.list[0]",
            "no number between 1 and 0",
        ),
    ],
)
def test_an_unsatisfiable_schema_names_the_path(schema: Any, path: str, words: str | None) -> None:
    with pytest.raises(UnsatisfiableSchema) as raised:
        value_for(schema, seed=1)
    assert raised.value.path == path
    assert str(raised.value).startswith(f"cannot make a value for {path}: ")
    if words is not None:
        assert words in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_default_is_the_value_where_the_schema_lists_it_required_too() -> None:
    """zod's schema (as @restatedev/restate-sdk's serde.schema gives it) of `z.object({...}).default(...)`
    fields: each field required and with its default. The input is the author's example, not made up."""
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "claim": {"default": "Claim 7731", "type": "string"},
            "amount": {"default": 540, "type": "number"},
            "clinic": {"type": "string"},
        },
        "required": ["claim", "amount", "clinic"],
        "additionalProperties": False,
    }
    made = value_for(schema, seed="zod")
    assert made["claim"] == "Claim 7731" and made["amount"] == 540
    assert isinstance(made["clinic"], str) and made["clinic"]
    jsonschema.validate(made, schema)
