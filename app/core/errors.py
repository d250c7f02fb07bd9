"""The one error hierarchy: every exception class Stormbound defines derives from `StormboundError`, in one of
three groups (tests/unit/test_errors.py fails on a class defined outside it).

- `BadInput`: a refusal the user can act on. Bad input (a malformed file, an impossible parameter, an unknown
  option), a setting that cannot be used, a file that cannot be written or a tool that is missing: one line
  saying what is wrong, naming the file and the field when known. The CLI turns any of them into that line and
  exit 2, the GUI into a message.
- `Cancelled`: not a refusal but how a long computation stops when its caller asks it to (`cancelled()` said so);
  the search's encoding, the certifier's replay and a measured run raise it, and their callers turn it into the
  verdict `unknown`, the certificate's "cancelled" or a stopped run.
- `InternalError`: something failed that is not the user's doing (a self-test step, a picture the toolkit could
  not render) and the signals one module raises and catches itself (a simulation that stops, a redirect not
  followed, a field an item lacks while matching). Reaching the CLI, it is exit 3 (internal error), as every
  exception that is not a `BadInput` is.

A class that reports a peer's error with the peer's own kind (`app.spark.client.HostError`: 'input',
'cancelled' or 'internal') derives from the root itself. Each subclass keeps its own second base (ValueError,
RuntimeError, OSError, ...) for the callers that catch by kind.
"""

from __future__ import annotations


class StormboundError(Exception):
    """The root of every exception Stormbound defines."""


class BadInput(StormboundError):
    """A refusal the user can act on; `file` and `field` name what it is about, when known (CLI: exit 2)."""

    file: str | None = None
    field: str | None = None


class Cancelled(StormboundError):
    """A long computation (building an encoding, replaying a trace) was abandoned because its caller asked."""


class InternalError(StormboundError):
    """A failure that is not the user's doing, or a signal one module raises and catches itself (CLI: exit 3)."""
