"""DiffStream: are two streams equivalent up to a dependence relation?

`specs` holds the dependence and equality relations, `matcher` the online
matcher, `strategies` its loops (one per fast path and the general one),
`streams` connecting two sides and reading stream files, `results` what a
comparison reports. No Qt and no Spark here.
"""

from app.diff.matcher import Matcher, diff_connected, diff_streams
from app.diff.results import Difference, DiffResult, StreamItem
from app.diff.specs import (
    Dependence,
    DiffError,
    Equality,
    describe_dependence,
    describe_equality,
    parse_dependence,
    parse_equality,
)
from app.diff.streams import (
    LEFT,
    RIGHT,
    SIDE_NAMES,
    from_pattern,
    interleave,
    looks_like_json_lines,
    read_connected,
    read_stream,
    side_index,
)
from app.diff.values import field_getter, freeze, short_json

__all__ = [
    "LEFT", "RIGHT", "SIDE_NAMES", "Dependence", "DiffError", "DiffResult", "Difference", "Equality", "Matcher",
    "StreamItem", "describe_dependence", "describe_equality", "diff_connected", "diff_streams", "field_getter",
    "freeze", "from_pattern", "interleave", "looks_like_json_lines", "parse_dependence", "parse_equality",
    "read_connected", "read_stream", "short_json", "side_index",
]
