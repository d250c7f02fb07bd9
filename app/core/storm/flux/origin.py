"""The Flux file a document was imported from: its paths (absolute, or relative to the document), the files
that are missing, the options to read it again, and the `stormbound import flux` command a Flux file needs.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.core.storm.flux.builder import import_flux
from app.core.storm.flux.yaml_text import FluxError, FluxOptions
from app.core.topology import Topology


def _absolute(stored: str, folder: Path) -> Path:
    path = Path(stored)
    return path if path.is_absolute() else folder / path


def resolved_paths(topo: Topology, document: str | os.PathLike[str] | None) -> Topology:
    """`topo` with its Flux file, properties filter and resource folders as absolute paths: a relative one is
    relative to the folder of the document it was read from (`import flux -o` writes them so, so that a folder
    moved with its document and Flux file keeps them), else to the working folder."""
    s = topo.storm
    if not (s.flux_file or s.flux_filter or s.flux_resources):
        return topo
    folder = Path(document).resolve().parent if document is not None else Path.cwd()
    update: dict[str, Any] = {
        "flux_file": str(_absolute(s.flux_file, folder)) if s.flux_file else None,
        "flux_filter": str(_absolute(s.flux_filter, folder)) if s.flux_filter else None,
        "flux_resources": [str(_absolute(r, folder)) for r in s.flux_resources],
    }
    return topo.model_copy(update={"storm": s.model_copy(update=update)})


def relative_paths(topo: Topology, document: str | os.PathLike[str]) -> Topology:
    """`topo` (its paths absolute, or relative to the working folder) as written to `document`: the Flux file,
    filter and resources relative to the document's folder where they can be (else absolute)."""
    s = resolved_paths(topo, None).storm
    folder = Path(document).resolve().parent

    def rel(path: str) -> str:
        try:
            return os.path.relpath(path, folder)
        except ValueError:  # another drive (Windows): keep it absolute
            return path

    update: dict[str, Any] = {"flux_file": rel(s.flux_file) if s.flux_file else None,
                              "flux_filter": rel(s.flux_filter) if s.flux_filter else None,
                              "flux_resources": [rel(r) for r in s.flux_resources]}
    return topo.model_copy(update={"storm": s.model_copy(update=update)})


def missing_flux_files(topo: Topology) -> list[tuple[str, str]]:
    """(field, path) of each file or folder the document was imported with that is not there (paths resolved)."""
    s = topo.storm

    def there(path: str, folder: bool) -> bool:
        try:
            return Path(path).is_dir() if folder else Path(path).is_file()
        except (OSError, ValueError):  # a name the system cannot take (too long, a NUL): not there
            return False

    out = []
    if s.flux_file and not there(s.flux_file, False):
        out.append(("storm.flux_file", s.flux_file))
    if s.flux_filter and not there(s.flux_filter, False):
        out.append(("storm.flux_filter", s.flux_filter))
    out += [("storm.flux_resources", r) for r in s.flux_resources if not there(r, True)]
    return out


_HINT_WALK_LIMIT = 5000  # folders looked at when searching a project for a resource the file includes


def find_resource_folder(flux: Path, rel: str) -> Path | None:
    """A folder under the Flux file's folder or its parent that holds the classpath resource `rel` (as a Maven
    project's src/main/resources does), searched breadth-first within a bound."""
    seen = 0
    for top in (flux.parent, flux.parent.parent):
        queue = [top]
        while queue and seen < _HINT_WALK_LIMIT:
            folder = queue.pop(0)
            seen += 1
            if (folder / rel).is_file() and folder != flux.parent:
                return folder
            try:
                queue += sorted(c for c in folder.iterdir() if c.is_dir() and not c.name.startswith("."))
            except OSError:
                continue
    return None


def import_command(path: str | os.PathLike[str]) -> str:
    """The `stormbound import flux` command a Flux file needs (the hint of `check FILE.flux`): `--resources DIR`
    for a classpath resource it includes that is not beside it (with the folder found in the project, else
    DIR), `--filter`/`--env` when a number in it comes from ${...}."""
    flux = Path(path)
    stem = flux.name.split(".")[0] or "topology"
    options = FluxOptions()
    extra: list[str] = []
    for _ in range(5):  # one missing resource folder at a time
        try:
            result = import_flux(flux, options)
        except FluxError as err:
            match = re.search(r"resource (\S+) not found", err.message)
            if match is None:  # a number from ${...} needs its properties file or the environment
                extra += ["--filter FILE.properties"] if "--filter" in err.message else []
                extra += ["--env"] if "--env" in err.message else []
                break
            rel = match.group(1).lstrip("/")
            found = find_resource_folder(flux.resolve(), rel)
            if found is None:
                extra.append(f"--resources DIR  # DIR: the folder holding the classpath resource /{rel}")
                break
            options = replace(options, resources=[*options.resources, found])
            extra.insert(len(options.resources) - 1, f"--resources {found}")
            continue
        del result  # it imports: a ${...} left in a config string is left as Flux leaves it (the import notes it)
        break
    options_text = "".join(f" {e}" for e in extra if "#" not in e)
    command = f"stormbound import flux {os.fspath(path)}{options_text} -o {stem}.storm.json"
    comments = [e.split("#", 1)[1].strip() for e in extra if "#" in e]
    if comments:
        command = f"stormbound import flux {os.fspath(path)}{options_text} --resources DIR -o {stem}.storm.json " \
                  f"({'; '.join(comments)})"
    return command


def options_of(topo: Topology) -> FluxOptions:
    """The options a document was imported with (to read its Flux file again)."""
    s = topo.storm
    return FluxOptions(filter=Path(s.flux_filter) if s.flux_filter else None, env=s.flux_env,
                       resources=[Path(r) for r in s.flux_resources])
