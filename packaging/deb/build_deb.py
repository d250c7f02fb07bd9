"""Build the Debian packages from the PyInstaller bundle (dist/stormbound/), with dpkg-deb only.

- dist/stormbound_VERSION_amd64.deb: the bundle under /opt/stormbound, /usr/bin/stormbound, the
  menu entry, hicolor icons, the application/x-stormbound+json type (*.storm.json), a man page
  made from --help, copyright and changelog. `Depends:` is computed (packaging/deb/depends.py).
- dist/stormbound-spark_VERSION_amd64.deb: a Python 3.11 environment under /opt/stormbound-spark
  holding the packages of packaging/spark-requirements.txt and everything they require, copied
  from the build environment (no download); it depends on python3.11 and Java 17. The app finds
  it by itself (app/spark/session.py, PACKAGED_SPARK_PYTHON).

No maintainer script refreshes the MIME, desktop or icon caches: shared-mime-info,
desktop-file-utils and the icon cache tools do it through dpkg file triggers, as in Debian.
Usage: python packaging/deb/build_deb.py [--no-spark]   (run by packaging/build.sh with the build
environment's Python, after PyInstaller)
"""

from __future__ import annotations

import argparse
import compileall
import gzip
import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import depends  # noqa: E402  # beside this file
import manpage  # noqa: E402
import render_icons  # noqa: E402

MAINTAINER = "Stormbound maintainers <maintainers@users.noreply.a-seed-d4410690.example>"
SPARK_PREFIX = "/opt/stormbound-spark"
SPARK_SITE = f"{SPARK_PREFIX}/lib/python3.11/site-packages"
SPARK_PYTHON = "/usr/bin/python3.11"
# Not libraries: what the menu entry, the file type and a Spark run need on the user's machine.
RECOMMENDS = ["desktop-file-utils", "shared-mime-info"]

try:  # pip vendors packaging when the environment has no copy of its own
    from packaging.requirements import Requirement
except ImportError:  # pragma: no cover
    from pip._vendor.packaging.requirements import Requirement  # type: ignore[no-redef]


def changelog_version(text: str) -> str:
    match = re.match(r"^\S+ \(([^)]+)\)", text)
    if not match:
        raise SystemExit("build_deb.py: packaging/deb/changelog does not start with 'package (version) ...'")
    return match.group(1)


def control(fields: dict[str, str], description: str) -> str:
    lines = [f"{key}: {value}" for key, value in fields.items() if value]
    synopsis, _, body = description.strip().partition("\n")
    lines.append(f"Description: {synopsis}")
    for line in body.strip().splitlines():
        lines.append(" " + (line.strip() or "."))
    return "\n".join(lines) + "\n"


def gzip_to(text: bytes, target: Path) -> None:
    """gzip -9n: no name and no time stamp in the header (reproducible, as lintian asks)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as gz:
        gz.write(text)


def keeps_executable_bit(path: Path) -> bool:
    """A program: an ELF file that is not a shared library, or a shell script (wheels mark data files 0755 too)."""
    if re.search(r"\.so(\.|$)", path.name):
        return False
    with path.open("rb") as handle:
        head = handle.read(4)
    return head == depends.ELF_MAGIC or (head[:2] == b"#!" and path.suffix != ".py")


def normalize(stage: Path) -> None:
    """root:root (dpkg-deb --root-owner-group), folders 0755, programs 0755 (when they were), other files 0644."""
    for path in [stage, *stage.rglob("*")]:
        if path.is_symlink():
            continue
        if path.is_dir():
            path.chmod(0o755)
        elif path.relative_to(stage).parts[0] != "DEBIAN":
            executable = path.stat().st_mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
            path.chmod(0o755 if executable and keeps_executable_bit(path) else 0o644)


def installed_size(stage: Path) -> int:
    return sum((p.lstat().st_size + 1023) // 1024 for p in stage.rglob("*") if p.is_file() and "DEBIAN" not in
               p.relative_to(stage).parts[:1]) + len([p for p in stage.rglob("*") if p.is_dir()])


def write_md5sums(stage: Path) -> None:
    lines = []
    for path in sorted(stage.rglob("*")):
        rel = path.relative_to(stage)
        if rel.parts[0] == "DEBIAN" or path.is_symlink() or not path.is_file():
            continue
        lines.append(f"{hashlib.md5(path.read_bytes()).hexdigest()}  {rel.as_posix()}")  # noqa: S324  # dpkg's format
    (stage / "DEBIAN" / "md5sums").write_text("\n".join(lines) + "\n")
    (stage / "DEBIAN" / "md5sums").chmod(0o644)


def doc_files(stage: Path, package: str, copyright_file: Path) -> None:
    doc = stage / "usr" / "share" / "doc" / package
    doc.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(copyright_file, doc / "copyright")
    gzip_to((HERE / "changelog").read_bytes(), doc / "changelog.gz")


def maintainer_script(stage: Path, name: str, folder: str) -> None:
    script = stage / "DEBIAN" / name
    script.write_text((HERE / name).read_text().replace("@DIR@", folder))
    script.chmod(0o755)


def build(stage: Path, out: Path, compression: str) -> Path:
    normalize(stage)
    write_md5sums(stage)
    for script in ("prerm", "postinst", "postrm"):
        if (stage / "DEBIAN" / script).exists():
            (stage / "DEBIAN" / script).chmod(0o755)
    out.unlink(missing_ok=True)
    subprocess.run(["dpkg-deb", "--root-owner-group", f"-Z{compression}", "--build", str(stage), str(out)],
                   check=True, stdout=subprocess.DEVNULL)
    return out


def lintian_overrides(stage: Path, package: str) -> None:
    source = HERE / f"{package}.lintian-overrides"
    if source.exists():
        target = stage / "usr" / "share" / "lintian" / "overrides" / package
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)


def build_app_package(bundle: Path, version: str, dist: Path, work: Path) -> Path:
    stage = work / "stormbound"
    shutil.rmtree(stage, ignore_errors=True)
    opt = stage / "opt" / "stormbound"
    shutil.copytree(bundle, opt, symlinks=True)
    (opt / "stormbound.desktop").unlink(missing_ok=True)  # the archive's; the package installs its own
    usr = stage / "usr"
    (usr / "bin").mkdir(parents=True)
    (usr / "bin" / "stormbound").symlink_to("/opt/stormbound/stormbound")
    share = usr / "share"
    (share / "applications").mkdir(parents=True)
    shutil.copyfile(HERE / "stormbound.desktop", share / "applications" / "stormbound.desktop")
    (share / "mime" / "packages").mkdir(parents=True)
    shutil.copyfile(HERE / "stormbound-mime.xml", share / "mime" / "packages" / "stormbound.xml")
    render_icons.render(share / "icons" / "hicolor")
    page = manpage.render(manpage.help_from(str(bundle / "stormbound")), version, _build_date())
    gzip_to(page.encode(), share / "man" / "man1" / "stormbound.1.gz")
    doc_files(stage, "stormbound", HERE / "copyright")
    lintian_overrides(stage, "stormbound")
    (stage / "DEBIAN").mkdir()
    maintainer_script(stage, "prerm", "/opt/stormbound")
    needs = depends.compute(opt)
    fields = {"Package": "stormbound", "Version": version, "Architecture": "amd64", "Maintainer": MAINTAINER,
              "Installed-Size": str(installed_size(stage)), "Depends": ", ".join(needs),
              "Recommends": ", ".join(RECOMMENDS), "Suggests": "stormbound-spark, xdg-utils",
              "Section": "science", "Priority": "optional"}
    (stage / "DEBIAN" / "control").write_text(control(fields, """\
verify that Apache Storm topologies' queues stay bounded
Stormbound draws Apache Storm topologies and checks whether a bolt's input
queue can grow without bound: an exact rate check proves boundedness, and a
bounded search with the z3 solver finds certified counterexample traces.
.
This package holds the standalone app (its own Python, Qt and z3) under
/opt/stormbound, a menu entry, and opens *.storm.json files on double-click.
Measured runs on Spark need the stormbound-spark package."""))
    return build(stage, dist / f"stormbound_{version}_amd64.deb", "gzip")


def requirement_closure(requirement_lines: list[str]) -> list[metadata.Distribution]:
    """The installed distributions the requirements need, recursively (markers and extras honoured)."""
    pending = [Requirement(line) for line in requirement_lines]
    seen: dict[str, metadata.Distribution] = {}
    expanded: set[tuple[str, frozenset[str]]] = set()
    while pending:
        req = pending.pop()
        key = req.name.lower().replace("_", "-")
        if (key, frozenset(req.extras)) in expanded:
            continue
        expanded.add((key, frozenset(req.extras)))
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            raise SystemExit(f"build_deb.py: {req.name} is not installed in {sys.executable} (pip install "
                             f"-r packaging/spark-requirements.txt there, or `make setup`)") from None
        if dist.version not in req.specifier:
            raise SystemExit(f"build_deb.py: {req.name} {dist.version} does not satisfy {req}")
        seen[key] = dist
        environments = [{"extra": extra} for extra in req.extras] or [{"extra": ""}]
        for line in dist.requires or []:
            sub = Requirement(line)
            if sub.marker is None or any(sub.marker.evaluate(env) for env in environments):
                pending.append(sub)
    return [seen[k] for k in sorted(seen)]


def copy_distribution(dist: metadata.Distribution, site: Path) -> int:
    """Copy a distribution's files (its RECORD) into site; scripts outside site-packages and bytecode skipped."""
    copied = 0
    for entry in dist.files or []:
        parts = Path(entry).parts
        if ".." in parts or "__pycache__" in parts or entry.suffix == ".pyc":
            continue
        source = Path(str(dist.locate_file(entry)))
        if not source.is_file():
            continue
        target = site / entry
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
        copied += 1
    return copied


def build_spark_package(version: str, dist: Path, work: Path) -> Path:
    if sys.version_info[:2] != (3, 11):
        raise SystemExit(f"build_deb.py: stormbound-spark needs a Python 3.11 build environment, not {sys.version}")
    stage = work / "stormbound-spark"
    shutil.rmtree(stage, ignore_errors=True)
    prefix = stage / SPARK_PREFIX.lstrip("/")
    site = stage / SPARK_SITE.lstrip("/")
    site.mkdir(parents=True)
    lines = [line.split("#", 1)[0].strip() for line in (ROOT / "packaging" / "spark-requirements.txt").read_text()
             .splitlines()]
    for dist_ in requirement_closure([line for line in lines if line]):
        copy_distribution(dist_, site)
    # Byte-compiled once here, checked never (unchecked-hash): Python run as root writes no
    # __pycache__ into /opt, and a user's first run does not compile pyspark again.
    compileall.compile_dir(str(site), ddir=SPARK_SITE, quiet=2, workers=os.cpu_count() or 1,
                           invalidation_mode=compileall.py_compile.PycInvalidationMode.UNCHECKED_HASH)
    (prefix / "bin").mkdir()
    (prefix / "bin" / "python3.11").symlink_to(SPARK_PYTHON)
    (prefix / "bin" / "python3").symlink_to("python3.11")
    (prefix / "bin" / "python").symlink_to("python3.11")
    # A virtual environment by hand (what `python3.11 -m venv` writes), without needing python3-venv.
    (prefix / "pyvenv.cfg").write_text(f"home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11\n"
                                       f"executable = {SPARK_PYTHON}\n")
    doc_files(stage, "stormbound-spark", HERE / "copyright-spark")
    lintian_overrides(stage, "stormbound-spark")
    (stage / "DEBIAN").mkdir()
    maintainer_script(stage, "prerm", SPARK_PREFIX)
    needs = depends.compute(prefix, extra=["python3.11", "openjdk-17-jre-headless", f"stormbound (= {version})"])
    fields = {"Package": "stormbound-spark", "Version": version, "Architecture": "amd64", "Maintainer": MAINTAINER,
              "Installed-Size": str(installed_size(stage)), "Depends": ", ".join(needs),
              "Section": "science", "Priority": "optional"}
    (stage / "DEBIAN" / "control").write_text(control(fields, """\
measured runs on Spark for Stormbound
A Python 3.11 environment with pyspark (and its Spark Connect client), pydantic
and networkx under /opt/stormbound-spark, and a Java 17 runtime through its
dependencies: with it installed, Stormbound's Runs panel and `stormbound run`
attach a local Spark session without any setting."""))
    return build(stage, dist / f"stormbound-spark_{version}_amd64.deb", "gzip")


def _build_date() -> str:
    from datetime import UTC, datetime
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "0")) or None
    return (datetime.fromtimestamp(epoch, UTC) if epoch else datetime.now(UTC)).strftime("%Y-%m-%d")


def main() -> int:
    parser = argparse.ArgumentParser(description="Build the Debian packages from dist/stormbound/.")
    parser.add_argument("--no-spark", action="store_true", help="only the app package")
    args = parser.parse_args()
    dist = ROOT / "dist"
    bundle = dist / "stormbound"
    if not (bundle / "stormbound").is_file():
        raise SystemExit("build_deb.py: dist/stormbound/ is not built; run packaging/build.sh")
    version = subprocess.run([str(bundle / "stormbound"), "--version"], capture_output=True, text=True,
                             check=True).stdout.split()[-1]
    if changelog_version((HERE / "changelog").read_text()) != version:
        raise SystemExit(f"build_deb.py: packaging/deb/changelog has no entry for {version}: add one at the top")
    for tool in ("dpkg-deb", "dpkg", "ldd", "readelf"):
        if shutil.which(tool) is None:
            raise SystemExit(f"build_deb.py: {tool} is not installed (dpkg-deb, dpkg, ldd, readelf: Debian/Ubuntu)")
    work = ROOT / "build" / "deb"
    work.mkdir(parents=True, exist_ok=True)
    try:
        built = [build_app_package(bundle, version, dist, work)]
        if not args.no_spark:
            built.append(build_spark_package(version, dist, work))
    except depends.DependsError as err:
        raise SystemExit(f"build_deb.py: {err}") from None
    for path in built:
        print(f"package: {path.relative_to(ROOT)} ({path.stat().st_size / 1e6:.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
