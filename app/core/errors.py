"""The one root of every refusal a user can act on.

Bad input (a malformed file, an impossible parameter, an unknown option), a setting that cannot be used or a
tool that is missing raises a subclass of `StormboundError`: one line saying what is wrong, naming the file
and the field when known. The CLI turns any of them into that line and exit 2, the GUI into a message; every
other exception is an internal error (exit 3). Each subclass keeps its own second base (ValueError,
RuntimeError, ...) for the callers that catch by kind.

The other root is `Cancelled`: not a refusal but how a long computation stops when its caller asks it to
(`cancelled()` said so); the search's encoding and the certifier's replay raise the one class, and their
callers turn it into the verdict `unknown` or the certificate's "cancelled".
"""

from __future__ import annotations


class StormboundError(Exception):
    """A refusal the user can act on; `file` and `field` name what it is about, when known."""

    file: str | None = None
    field: str | None = None


class Cancelled(Exception):
    """A long computation (building an encoding, replaying a trace) was abandoned because its caller asked."""
