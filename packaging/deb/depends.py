"""Which Debian packages a bundle needs: `Depends:` computed from `ldd`, never written by hand.

For every ELF file of a folder (the PyInstaller bundle, the Spark environment), the
libraries it names (its NEEDED entries, from `readelf -d`) that the folder does not
carry itself come from the system; `ldd` says which file each one resolves to, and
`dpkg -S` which installed package holds that file. The sorted package names are the
`Depends:` line; libc6 gets the highest `GLIBC_2.x` symbol version the files ask for.

The build machine must have every such library installed (docs/install.md lists
them): a library `ldd` cannot find stops the build with its name, rather than
shipping a package that would not start.
Usage: python packaging/deb/depends.py FOLDER   (prints the Depends line)
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

ELF_MAGIC = b"\x7fELF"
_NEEDED = re.compile(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]")
_LDD_LINE = re.compile(r"^\s*(\S+)\s+=>\s+(not found|\S+)")
_GLIBC = re.compile(rb"GLIBC_2\.(\d+)(?:\.\d+)?\x00")


class DependsError(RuntimeError):
    """A library the bundle needs is not on the build machine, or no package holds it."""


def elf_files(root: Path) -> list[Path]:
    """Regular (non-symlink) ELF files under root, sorted."""
    found = []
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        with path.open("rb") as handle:
            if handle.read(4) == ELF_MAGIC:
                found.append(path)
    return found


def parse_needed(readelf_output: str) -> list[str]:
    """The NEEDED library names of `readelf -d` output."""
    return _NEEDED.findall(readelf_output)


def parse_ldd(ldd_output: str) -> dict[str, str | None]:
    """name -> resolved path (None when `not found`) from `ldd` output."""
    resolved: dict[str, str | None] = {}
    for line in ldd_output.splitlines():
        match = _LDD_LINE.match(line)
        if match:
            resolved[match.group(1)] = None if match.group(2) == "not found" else match.group(2)
    return resolved


def parse_dpkg_search(output: str) -> list[str]:
    """Package names (architecture qualifier dropped) of `dpkg -S` output; diversion lines ignored."""
    packages = []
    for line in output.splitlines():
        if line.startswith("diversion by") or ": /" not in line:
            continue
        for name in line.split(": /", 1)[0].split(", "):
            packages.append(name.split(":", 1)[0].strip())
    return packages


def path_variants(path: str) -> list[str]:
    """The path, its real path, and each with or without /usr (merged-/usr systems register either)."""
    variants: list[str] = []
    for candidate in (path, os.path.realpath(path)):
        for form in (candidate, candidate[4:] if candidate.startswith("/usr/") else "/usr" + candidate):
            if form not in variants:
                variants.append(form)
    return variants


def glibc_minor(data: bytes) -> int:
    """The highest GLIBC_2.x symbol version named in an ELF file's bytes (0 when none)."""
    return max((int(m) for m in _GLIBC.findall(data)), default=0)


def _run(args: list[str]) -> str:
    done = subprocess.run(args, capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"})
    return done.stdout


def default_package_of(path: str) -> str | None:
    for candidate in path_variants(path):
        packages = parse_dpkg_search(_run(["dpkg", "-S", candidate]))
        if packages:
            return packages[0]
    return None


def system_libraries(root: Path, run: Callable[[list[str]], str] = _run) -> dict[str, str]:
    """soname -> resolved path of every library the ELF files under root need and root does not carry."""
    files = elf_files(root)
    carried = {p.name for p in root.rglob("*") if p.is_file() or p.is_symlink()}
    wanted: dict[str, str] = {}
    missing: dict[str, str] = {}
    for elf in files:
        outside = [name for name in parse_needed(run(["readelf", "-d", str(elf)])) if name not in carried]
        if not outside:
            continue
        resolved = parse_ldd(run(["ldd", str(elf)]))
        for name in outside:
            if name.startswith(("ld-linux", "linux-vdso")):
                continue
            path = resolved.get(name)
            if path is None:
                missing.setdefault(name, str(elf.relative_to(root)))
            else:
                wanted[name] = path
    if missing:
        listed = ", ".join(f"{name} (needed by {where})" for name, where in sorted(missing.items()))
        raise DependsError(f"not installed on the build machine: {listed}; install them (docs/install.md) "
                           "and build again")
    return wanted


def depends(libraries: dict[str, str], glibc: int, package_of: Callable[[str], str | None] = default_package_of,
            extra: Iterable[str] = ()) -> list[str]:
    """The Depends entries: one per package holding a needed library, libc6 with its minimum version."""
    packages: set[str] = set(extra)
    unowned = []
    for name, path in sorted(libraries.items()):
        package = package_of(path)
        if package is None:
            unowned.append(f"{name} ({path})")
        else:
            packages.add(package)
    if unowned:
        raise DependsError("no installed package holds " + ", ".join(unowned) + " (dpkg -S); install it from a package")
    entries = []
    for package in sorted(packages):
        entries.append(f"{package} (>= 2.{glibc})" if package == "libc6" and glibc else package)
    return entries


def glibc_needed(root: Path) -> int:
    return max((glibc_minor(path.read_bytes()) for path in elf_files(root)), default=0)


def compute(root: Path, extra: Iterable[str] = ()) -> list[str]:
    """The Depends entries of a folder (see the module's docstring)."""
    return depends(system_libraries(root), glibc_needed(root), extra=extra)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: depends.py FOLDER")
    try:
        print(", ".join(compute(Path(sys.argv[1]))))
    except DependsError as err:
        sys.exit(f"depends.py: {err}")
