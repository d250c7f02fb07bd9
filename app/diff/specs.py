"""Dependence and equality relations as data: the specs a comparison is run with.

Dependence kinds: `all` (sequences), `none` (multisets), `same_key` (fields),
`pairs`, `type_table`, `predicate` (an expression over `x` and `y`, see
:mod:`app.expr`). Equality: structural (optionally ignoring or keeping named
fields), `set_of_split`, or a predicate expression. Each spec can be given as
JSON, as `@file.json` or in a short form (`same_key:taxiId`, `ignore:ts`).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from app.core.errors import BadInput
from app.core.fileio import read_text
from app.core.formats.limits import MAX_DOCUMENT_BYTES
from app.expr import ExprError, compile_predicate
from app.expr.limits import loads, one_line, path_line


class DiffError(BadInput, ValueError):
    """Bad dependence/equality spec or bad input; the message names the field or item."""


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    description: str | None = None


class AllDependence(_Spec):
    """Every pair of items is dependent: the streams must be equal as sequences."""

    kind: Literal["all"] = "all"


class NoneDependence(_Spec):
    """No pair is dependent: the streams must be equal as multisets."""

    kind: Literal["none"] = "none"


class SameKeyDependence(_Spec):
    """Items are dependent iff they agree on the key fields (per-key order is kept)."""

    kind: Literal["same_key"] = "same_key"
    fields: list[str] = Field(default_factory=list, description="field paths forming the key, e.g. ['taxiId']")
    key: str | None = Field(default=None, description="shorthand for a single key field")

    @model_validator(mode="after")
    def _one_key(self) -> SameKeyDependence:
        if self.key is not None:
            if self.fields and self.fields != [self.key]:
                raise ValueError("give either `key` or `fields`, not both")
            self.fields = [self.key]
        if not self.fields:
            raise ValueError("same_key needs at least one key field (`key` or `fields`)")
        return self


class PairsDependence(_Spec):
    """Dependent iff the (symmetric) pair of values is listed; values are the item or its `field`."""

    kind: Literal["pairs"] = "pairs"
    pairs: list[tuple[Any, Any]]
    field: str | None = None


class TypeTableDependence(_Spec):
    """A table over the value of `field`: list the `independent` pairs (rest dependent) or the `dependent` ones."""

    kind: Literal["type_table"] = "type_table"
    field: str | None = "type"
    independent: list[tuple[Any, Any]] | None = None
    dependent: list[tuple[Any, Any]] | None = None

    @model_validator(mode="after")
    def _one_table(self) -> TypeTableDependence:
        if (self.independent is None) == (self.dependent is None):
            raise ValueError("give exactly one of `independent` or `dependent`")
        return self


class PredicateDependence(_Spec):
    """Dependent iff the expression over `x` and `y` is true (made symmetric: p(x,y) or p(y,x))."""

    kind: Literal["predicate"] = "predicate"
    expr: str

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            for alias in ("python", "expression"):
                if alias in data and "expr" not in data:
                    data["expr"] = data.pop(alias)
        return data


Dependence = (AllDependence | NoneDependence | SameKeyDependence | PairsDependence | TypeTableDependence
              | PredicateDependence)


class StructuralEquality(_Spec):
    """Equal iff equal as JSON values, after dropping `ignore` fields or keeping only `only` fields."""

    kind: Literal["structural"] = "structural"
    ignore: list[str] = Field(default_factory=list)
    only: list[str] | None = None

    @model_validator(mode="after")
    def _some_fields(self) -> StructuralEquality:
        if self.only is not None and not self.only:
            raise ValueError("`only` needs at least one field (with none, every item would be equal)")
        return self


class SetOfSplitEquality(_Spec):
    """Equal iff the sets of `sep`-separated parts of the strings (or of `field`) are equal."""

    kind: Literal["set_of_split"] = "set_of_split"
    sep: str = Field(min_length=1)
    field: str | None = None


class PredicateEquality(_Spec):
    """Equal iff the expression over `x` and `y` is true (slow path: no hashing)."""

    kind: Literal["predicate"] = "predicate"
    expr: str

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        if isinstance(data, dict) and "python" in data and "expr" not in data:
            data = dict(data)
            data["expr"] = data.pop("python")
        return data


Equality = StructuralEquality | SetOfSplitEquality | PredicateEquality

_DEPENDENCE_ADAPTER: TypeAdapter[Dependence] = TypeAdapter(Annotated[Dependence, Field(discriminator="kind")])
_EQUALITY_ADAPTER: TypeAdapter[Equality] = TypeAdapter(Annotated[Equality, Field(discriminator="kind")])
_DEPENDENCE_KINDS = ("all", "none", "same_key", "pairs", "type_table", "predicate")
_EQUALITY_KINDS = ("structural", "set_of_split", "predicate")


def _validation_message(what: str, err: ValidationError, kind: Any = None) -> str:
    first = err.errors()[0]
    parts = list(first["loc"])
    if parts and parts[0] == kind:  # the discriminator's tag
        parts = parts[1:]
    loc = ".".join(str(p) for p in parts)
    return one_line(f"{what}{'.' + loc if loc else ''}: {first['msg']}", 300)


def _spec_data(spec: Any, what: str) -> Any:
    if isinstance(spec, str):
        text = spec.strip()
        source = ""
        if text.startswith("@"):
            name = text[1:]
            source = f" in {path_line(name)}"
            text = read_text(name, lambda reason: DiffError(f"{what}: cannot read {path_line(name)}: {reason}"),
                             MAX_DOCUMENT_BYTES).strip()
        if text.startswith("{"):
            try:
                return loads(text, lambda problem: DiffError(f"{what}{source}: {problem}"))
            except json.JSONDecodeError as err:
                raise DiffError(f"{what}{source}: invalid JSON at line {err.lineno} column {err.colno}: "
                                f"{err.msg}") from None
        return text
    return spec


def parse_dependence(spec: Any) -> Dependence:
    """A dependence from JSON (dict or text), `@file.json`, or a short form.

    Short forms: `all`, `none`, `same_key:FIELD[,FIELD...]`, `type_table:FIELD`
    is not enough (needs a table, use JSON), `pairs:a-b,c-b`, `predicate:EXPR`.
    """
    if isinstance(spec, (AllDependence, NoneDependence, SameKeyDependence, PairsDependence,
                         TypeTableDependence, PredicateDependence)):
        return spec
    data = _spec_data(spec, "dependence")
    if isinstance(data, str):
        kind, _, rest = data.partition(":")
        kind, rest = kind.strip(), rest.strip()
        if kind in ("all", "none") and not rest:
            data = {"kind": kind}
        elif kind == "same_key":
            data = {"kind": kind, "fields": [f.strip() for f in rest.split(",") if f.strip()]}
        elif kind == "predicate":
            data = {"kind": kind, "expr": rest}
        elif kind == "pairs":
            pairs = []
            for part in filter(None, (p.strip() for p in rest.split(","))):
                a, sep, b = part.partition("-")
                if not sep or not a or not b:
                    raise DiffError(f"dependence.pairs: {one_line(repr(part), 40)} is not of the form a-b")
                pairs.append((a, b))
            data = {"kind": kind, "pairs": pairs}
        else:
            raise DiffError(f"dependence: unknown short form {one_line(repr(data), 60)} "
                            "(use all, none, same_key:FIELD, pairs:a-b,c-d, predicate:EXPR, or JSON)")
    if not isinstance(data, dict):
        raise DiffError("dependence: expected a JSON object with a `kind`")
    if data.get("kind") not in _DEPENDENCE_KINDS:
        raise DiffError(f"dependence.kind: {one_line(repr(data.get('kind')), 40)} is not one of "
                        f"{', '.join(_DEPENDENCE_KINDS)}")
    try:
        dep = _DEPENDENCE_ADAPTER.validate_python(data)
    except ValidationError as err:
        raise DiffError(_validation_message("dependence", err, data.get("kind"))) from None
    if isinstance(dep, PredicateDependence):
        _check_expr(dep.expr, "dependence.expr")
    return dep


def parse_equality(spec: Any) -> Equality:
    """An equality from JSON, `@file.json` or a short form: `structural`, `ignore:F1,F2`,
    `only:F1,F2`, `set_of_split:SEP`, `predicate:EXPR`. None means structural."""
    if spec is None:
        return StructuralEquality()
    if isinstance(spec, (StructuralEquality, SetOfSplitEquality, PredicateEquality)):
        return spec
    data = _spec_data(spec, "equality")
    if isinstance(data, str):
        kind, _, rest = data.partition(":")
        kind = kind.strip()
        fields = [f.strip() for f in rest.split(",") if f.strip()]
        if kind == "structural" and not rest:
            data = {"kind": "structural"}
        elif kind == "ignore":
            data = {"kind": "structural", "ignore": fields}
        elif kind == "only" and not fields:
            raise DiffError("equality: 'only:' needs at least one field, e.g. only:id,value "
                            "(with none, every item would be equal)")
        elif kind == "only":
            data = {"kind": "structural", "only": fields}
        elif kind == "set_of_split":
            data = {"kind": kind, "sep": rest}
        elif kind == "predicate":
            data = {"kind": kind, "expr": rest.strip()}
        else:
            raise DiffError(f"equality: unknown short form {one_line(repr(data), 60)} (use structural, ignore:F,..., "
                            "only:F,..., set_of_split:SEP, predicate:EXPR, or JSON)")
    if not isinstance(data, dict):
        raise DiffError("equality: expected a JSON object with a `kind`")
    if data.get("kind") not in _EQUALITY_KINDS:
        raise DiffError(f"equality.kind: {one_line(repr(data.get('kind')), 40)} is not one of "
                        f"{', '.join(_EQUALITY_KINDS)}")
    try:
        eq = _EQUALITY_ADAPTER.validate_python(data)
    except ValidationError as err:
        raise DiffError(_validation_message("equality", err, data.get("kind"))) from None
    if isinstance(eq, PredicateEquality):
        _check_expr(eq.expr, "equality.expr")
    return eq


def _check_expr(source: str, where: str) -> None:
    try:
        compile_predicate(source)
    except ExprError as err:
        raise DiffError(f"{where}: {err}") from None



def describe_dependence(dep: Dependence) -> str:
    """A short text form of a dependence (for reports)."""
    if isinstance(dep, SameKeyDependence):
        return "same_key:" + ",".join(dep.fields)
    if isinstance(dep, PredicateDependence):
        return "predicate:" + dep.expr
    if isinstance(dep, PairsDependence):
        return "pairs:" + ",".join(f"{a}-{b}" for a, b in dep.pairs)
    if isinstance(dep, TypeTableDependence):
        return f"type_table:{dep.field}"
    return dep.kind


def describe_equality(eq: Equality) -> str:
    """A short text form of an equality (for reports)."""
    if isinstance(eq, StructuralEquality):
        if eq.only is not None:
            return "only:" + ",".join(eq.only)
        return "ignore:" + ",".join(eq.ignore) if eq.ignore else "structural"
    if isinstance(eq, SetOfSplitEquality):
        return f"set_of_split:{eq.sep}"
    return "predicate:" + eq.expr

