"""`stormbound connect-server [--port N] [--master URL] [--log FILE]`: a local Spark Connect server until Ctrl+C."""

from __future__ import annotations

import argparse
import signal
import subprocess
from typing import IO

from app.cli.common import UsageError, examples
from app.cli.options import number


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `connect-server` to the `stormbound` command line."""
    p = sub.add_parser("connect-server", help="run a local Spark Connect server (from pyspark) until Ctrl+C",
                       epilog=examples("stormbound connect-server --port 15002 --log connect.log &",
                                       "stormbound analyze runs/cfg1 --master sc://localhost:15002"))
    p.add_argument("--port", type=number(int, 1, 65535), default=15002,
                   help="gRPC port (default 15002, Spark Connect's own)")
    p.add_argument("--master", default="local[*]", help="the server's Spark master (default local[*])")
    p.add_argument("--log", metavar="FILE", help="append the server's output to FILE")
    p.set_defaults(func=cmd_connect_server, file_args=())


def cmd_connect_server(args: argparse.Namespace) -> int:
    """Run a local Spark Connect server in the foreground until Ctrl+C."""
    from app.spark.connect_server import start_connect_server, stop_connect_server, wait_until_listening
    from app.spark.session import SparkUnavailable

    if not 0 < args.port < 65536:
        raise UsageError("--port must be between 1 and 65535")

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    log: IO[str] | int = open(args.log, "a", encoding="utf-8") if args.log else subprocess.DEVNULL  # noqa: SIM115  # closed in finally, after the server
    server = None
    try:
        server = start_connect_server(args.port, args.master, log=log)
        wait_until_listening(server, args.port)
        print(f"Spark Connect server at sc://localhost:{args.port} (master {args.master}); Ctrl+C stops it", flush=True)
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):  # SIGINT too: a background job may ignore it
            signal.signal(signum, interrupt)
        code = server.wait()
        server = None  # exited by itself
        return code
    except SparkUnavailable as err:
        raise UsageError(f"Spark: {err}" + ("" if args.log else " (--log FILE keeps the server's output)")) from None
    except KeyboardInterrupt:
        return 0
    finally:
        if server is not None:
            stop_connect_server(server)
        if not isinstance(log, int):
            log.close()
