"""A man page (troff) made from the program's own --help texts, so it never drifts from them.

`stormbound --help` is the DESCRIPTION; each command's `--help` is a subsection of COMMANDS,
kept as preformatted text. Usage: python packaging/deb/manpage.py STORMBOUND_EXE > stormbound.1
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime

NAME_LINE = r"stormbound \- draw Apache Storm topologies and verify that no bolt's queue grows without bound"
_COMMANDS = re.compile(r"\{([a-z][a-z0-9,-]*)\}")


def escape(text: str) -> str:
    """One line of text made safe for troff inside .nf: backslashes, and a leading dot or quote."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text.startswith((".", "'")) else text


def commands(main_help: str) -> list[str]:
    """The command names of the `{a,b,c}` group in the usage line."""
    match = _COMMANDS.search(main_help)
    return match.group(1).split(",") if match else []


def preformatted(text: str) -> list[str]:
    return [".nf"] + [escape(line) for line in text.rstrip().splitlines()] + [".fi"]


def render(help_of: Callable[[list[str]], str], version: str, date: str) -> str:
    """The whole page; help_of(args) returns the --help output of `stormbound *args`."""
    main_help = help_of([])
    lines = [f'.TH STORMBOUND 1 "{date}" "stormbound {version}" "User Commands"', ".SH NAME", NAME_LINE,
             ".SH SYNOPSIS", r"\fBstormbound\fR [\fIOPTIONS\fR] [\fICOMMAND\fR [\fIARGS\fR]]", ".br",
             r"\fBstormbound gui\fR [\fIFILE\fR.storm.json]", ".SH DESCRIPTION",
             "Without a command, stormbound opens the desktop app. The text below is the program's own help.",
             *preformatted(main_help), ".SH COMMANDS"]
    for command in commands(main_help):
        lines += [f".SS {command}", *preformatted(help_of([command]))]
    lines += [".SH FILES", ".TP", r"\fI~/.config/Stormbound/Stormbound.conf\fR", "settings (recent files, layout)",
              ".TP", r"\fI/opt/stormbound/\fR",
              "the installed bundle, with the example topologies in _internal/models/",
              ".SH SEE ALSO", r"The user guide in README.md and docs/ of the source; \fIxdg\-open\fR(1)."]
    return "\n".join(lines) + "\n"


def help_from(executable: str) -> Callable[[list[str]], str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "LANG": "C.UTF-8", "COLUMNS": "80"}

    def help_of(args: list[str]) -> str:
        done = subprocess.run([executable, *args, "--help"], capture_output=True, text=True, env=env, timeout=120)
        if done.returncode != 0:
            raise SystemExit(f"manpage.py: {executable} {' '.join(args)} --help failed: {done.stderr.strip()}")
        return done.stdout
    return help_of


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: manpage.py STORMBOUND_EXE VERSION")
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "0")) or None
    when = datetime.fromtimestamp(epoch, UTC) if epoch else datetime.now(UTC)
    sys.stdout.write(render(help_from(sys.argv[1]), sys.argv[2], when.strftime("%Y-%m-%d")))
