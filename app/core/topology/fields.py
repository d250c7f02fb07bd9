"""The field types of the topology document: JSON numbers only, within the magnitudes the model takes,
and the strict base model every part of the document derives from (app/core/topology/__init__.py)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from app.core.units import magnitude_problem


def new_id() -> str:
    """A fresh uuid4 string for a document element."""
    return str(uuid.uuid4())


#: Storm takes parallelism, executor and task counts as a Java int: larger values are refused
STORM_MAX_INT = 2**31 - 1

def _plain_number(value: Any) -> Any:
    """A number field takes a JSON number: `"0.005"` or `true` is a typo, not a value (pydantic would convert)."""
    if isinstance(value, bool):
        raise ValueError("input should be a valid number, not true or false")
    if isinstance(value, str):
        raise ValueError("input should be a valid number, not a string")
    return value


def _magnitude(unit: str) -> Any:
    def check(value: float) -> float:
        problem = magnitude_problem(value, unit)
        if problem:
            raise ValueError(problem)
        return value
    return AfterValidator(check)


#: the number fields of the model: JSON numbers only; times, rates and ratios within the magnitudes
#: the model takes (0, or 1e-9 to 1e12: app/core/units.py), the one guard before the rate check and the encoding
Number = Annotated[float, BeforeValidator(_plain_number)]
Whole = Annotated[int, BeforeValidator(_plain_number)]
Seconds = Annotated[float, BeforeValidator(_plain_number), _magnitude("s")]
PerSecond = Annotated[float, BeforeValidator(_plain_number), _magnitude("/s")]
Ratio = Annotated[float, BeforeValidator(_plain_number), _magnitude("")]
# (the bounds come first where the type is optional or a dict's value, so that the schema shows them)
PositiveSeconds = Annotated[float, Field(gt=0), BeforeValidator(_plain_number), _magnitude("s")]
NonNegativeSeconds = Annotated[float, Field(ge=0), BeforeValidator(_plain_number), _magnitude("s")]
Count = Annotated[int, Field(ge=1, le=STORM_MAX_INT), BeforeValidator(_plain_number)]

StreamName = Annotated[str, Field(min_length=1, max_length=200)]
StreamValue = Annotated[float, Field(ge=0), BeforeValidator(_plain_number), _magnitude("")]


class StrictModel(BaseModel):
    """A part of the document: unknown fields refused."""

    # NaN and ±inf are refused in every number field (a rate of 1e400 decodes to inf)
    model_config = ConfigDict(extra="forbid", validate_assignment=False, allow_inf_nan=False)
