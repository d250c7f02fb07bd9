"""Print the CLI's answers on every shipped model and D-VerT configuration, with timings masked, so two trees can be
compared byte for byte (`diff`) after a change that must not alter what the CLI says.

    PYTHONPATH=$PWD python bench/cli_outputs.py OUT_DIR [--timeout S]

Writes one file per (command, form, input): stdout, then stderr, then the exit code. Elapsed times ("(0.12 s)",
"in 0.12 s", "elapsed_s": 0.12) are replaced by "#", the random ids a D-VerT import gives its components by
"<id>" and the tree's own path by "<tree>", so two trees' runs compare with `diff -r`.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMES = [(re.compile(r"\(\d+\.\d+ s\)"), "(# s)"), (re.compile(r"\bin \d+\.\d+ s\b"), "in # s"),
         (re.compile(r'"elapsed_s": ?[0-9.e+-]+'), '"elapsed_s": #'),
         (re.compile(r'"(elapsed|seconds|wall_s|cpu_s)": ?[0-9.e+-]+'), r'"\1": #'),
         # a D-VerT import gives its components random ids, different at every run
         (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<id>")]
RUNS = [("check", []), ("check", ["--json"]), ("verify", ["--timeout", "60"]),
        ("verify", ["--timeout", "60", "--json"]), ("verify", ["--timeout", "60", "-v"])]


def inputs() -> list[str]:
    return sorted(glob.glob(os.path.join(HERE, "models", "*.storm.json"))
                  + glob.glob(os.path.join(HERE, "tests", "data", "dvert", "*-*.json")))


def masked(text: str) -> str:
    for pattern, replacement in TIMES:
        text = pattern.sub(replacement, text)
    return text.replace(HERE, "<tree>")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for path in inputs():
        if path.endswith("expected-outcomes.json"):
            continue
        for command, options in RUNS:
            done = subprocess.run([sys.executable, "-m", "app", command, "-q", *options, path], capture_output=True,
                                  text=True, cwd=HERE, timeout=600)
            name = f"{command}{''.join(options).replace('-', '_')}-{os.path.basename(path)}.txt"
            with open(os.path.join(args.out, name), "w", encoding="utf-8") as out:
                out.write(f"{masked(done.stdout)}\n--- stderr\n{masked(done.stderr)}\n--- exit {done.returncode}\n")
            print(name, done.returncode, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
