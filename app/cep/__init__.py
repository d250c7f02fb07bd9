"""Complex event patterns over run logs: parse (text or JSON), compile to automata, match.

`nodes` holds the AST and the JSON form, `syntax` reads the compact text form and pattern files, `compiler` turns them
into automata, `engine` matches them over events, `events` reads events from run
logs or JSON files, `monitors` holds the shipped Storm monitor patterns. The
`stormbound cep` command is :mod:`app.cli.cep`. No Qt, no Spark here.
"""

from __future__ import annotations

from app.cep.compiler import Automaton, compile_ast, compile_pattern
from app.cep.engine import CepEngine, Match, PatternMatcher, find_matches
from app.cep.events import events_from_log, load_events
from app.cep.nodes import CONTEXTS, Pattern, PatternError, parse_ast, to_ast, to_text
from app.cep.syntax import load_patterns, parse_pattern_json, parse_pattern_text, parse_text, read_text

__all__ = [
    "CONTEXTS", "Automaton", "CepEngine", "Match", "Pattern", "PatternError", "PatternMatcher",
    "compile_ast", "compile_pattern", "events_from_log", "find_matches", "load_events", "load_patterns",
    "parse_ast", "parse_pattern_json", "parse_pattern_text", "parse_text", "read_text", "to_ast", "to_text",
]
