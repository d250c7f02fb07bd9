"""Messages of the core in the app's words: where a message names a command-line option, the app names the
dialog or field that does the same.

The core words its hints for the command line ("give --filter FILE.properties"); every text of the core
the app shows (import notes and errors, verdicts and notes, capacity lines) passes through `in_app_words`,
which replaces each hint by what the app offers (`APP_WORDS`, one row per hint; `tests/gui/test_glance.py`
finds every option-like word left in what the crawler's import and verification show).
"""

from __future__ import annotations

import re

FLUX_DIALOG = "File ▸ Import ▸ Flux…"
STORM_UI_DIALOG = "File ▸ Import ▸ From Storm UI…"
VERIFICATION = "the Inspector's Verification settings"

# (a command-line hint as the core words it, a regular expression; the app's words, with \1 for its figures)
APP_WORDS: tuple[tuple[str, str], ...] = (
    (r"give --filter FILE\.properties", f"import it again with {FLUX_DIALOG}, which asks for a properties file"),
    (r"\(none was given with --filter\)", f"(none was chosen in {FLUX_DIALOG})"),
    (r"needs --env \(environment variable substitution\)",
     f"needs the environment's variables ({FLUX_DIALOG} offers to substitute them)"),
    (r"give --resources DIR", f"{FLUX_DIALOG} asks for the folder of classpath resources"),
    (r"set one with --storm-version or stormbound\.storm_version",
     "set stormbound.storm_version in the Flux file, or import from the Storm UI, which reads it"),
    (r"\(import with --lag-interval S to add the lag's growth\)",
     f"({STORM_UI_DIALOG} with a lag interval adds the lag's growth)"),
    (r"give --lag-interval S to", f"set a lag interval in {STORM_UI_DIALOG} to"),
    (r"give --user \(password in \$\S+\) or --token \(or \$\S+\)", f"give a user and password or a token in "
                                                                   f"{STORM_UI_DIALOG}"),
    (r"give --cacert FILE", "trust its certificate authority on this machine"),
    (r"; --timeout S\)", f"; the timeout of {STORM_UI_DIALOG})"),
    (r"use --window 600", "the Storm UI's 10-minute window is used"),
    (r"\(e\.g\. --k-max (\d+)\)", rf"(e.g. k max \1 in {VERIFICATION})"),
    (r"\(--k-max (\d+)", rf"(k max \1 in {VERIFICATION}"),
    (r"raise it with verify --max-k N or STORMBOUND_MAX_K", "raise it with the STORMBOUND_MAX_K variable"),
    (r"give --force to replace it", "choose another name or confirm the replacement"),
)
_COMPILED = [(re.compile(pattern), words) for pattern, words in APP_WORDS]
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z-]+")  # what is left that reads as a command-line option


def in_app_words(text: str) -> str:
    """`text` with every command-line hint of `APP_WORDS` replaced by what the app offers."""
    for pattern, words in _COMPILED:
        text = pattern.sub(words, text)
    return text


def cli_words(text: str) -> list[str]:
    """The command-line options still named in `text` (for tests: none should reach the app)."""
    return OPTION.findall(text)
