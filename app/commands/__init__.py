"""Subcommands of `stormbound` beyond check/schema/convert; each module has `register(sub)`.

`app.cli` imports each module that exists and calls its `register` with argparse's
subparsers action. A handler returns the exit code and raises `TopologyError` or
`app.cli.UsageError` for bad input (exit 2).
"""
