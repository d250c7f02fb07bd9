"""The Debian packages built by `make dist` (packaging/deb/build_deb.py): metadata, contents, lintian,
and the unpacked packages working together as a user's installation would.

Slow: run by `make test-dist`. Installing for real (`apt install ./dist/stormbound_*.deb`) needs
root and changes the machine, so it is done by hand (docs/install.md); here the packages are
unpacked with `dpkg-deb -x` instead.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from app import __version__

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
APP_DEB = f"stormbound_{__version__}_amd64.deb"
SPARK_DEB = f"stormbound-spark_{__version__}_amd64.deb"

if shutil.which("dpkg-deb") is None:
    pytest.skip("dpkg-deb is not installed (not a Debian/Ubuntu machine)", allow_module_level=True)


def _field(deb: Path, name: str) -> str:
    return subprocess.run(["dpkg-deb", "-f", str(deb), name], capture_output=True, text=True, check=True).stdout.strip()


def _contents(deb: Path) -> dict[str, str]:
    """path -> mode string (symlinks as 'l... -> target')."""
    out = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True, check=True).stdout
    listing = {}
    for line in out.splitlines():
        parts = line.split(None, 5)
        name = parts[5]
        if " -> " in name:
            name, target = name.split(" -> ", 1)
            listing[name.lstrip(".")] = f"{parts[0]} -> {target}"
        else:
            listing[name.lstrip(".").rstrip("/") or "/"] = parts[0]
    return listing


def _docs_apt_packages() -> set[str]:
    """The packages of the `sudo apt install ...` line under 'What the system must provide' in docs/install.md."""
    text = (ROOT / "docs" / "install.md").read_text()
    block = text.split("## What the system must provide", 1)[1]
    command = re.search(r"sudo apt install (.+?)```", block, re.S)
    assert command, "docs/install.md lost its apt install line"
    return set(command.group(1).replace("\\", " ").split())


@pytest.fixture(scope="module")
def app_deb(built_dist: Path) -> Path:
    deb = built_dist / APP_DEB
    assert deb.is_file(), f"{deb} was not built"
    return deb


@pytest.fixture(scope="module")
def spark_deb(built_dist: Path) -> Path:
    deb = built_dist / SPARK_DEB
    assert deb.is_file(), f"{deb} was not built"
    return deb


def test_app_package_metadata(app_deb: Path):
    assert _field(app_deb, "Package") == "stormbound"
    assert _field(app_deb, "Version") == __version__
    assert _field(app_deb, "Architecture") == "amd64"
    depends = [entry.strip() for entry in _field(app_deb, "Depends").split(",")]
    names = {entry.split()[0] for entry in depends}
    assert re.fullmatch(r"libc6 \(>= 2\.\d+\)", next(e for e in depends if e.startswith("libc6")))
    # computed from ldd: every library package docs/install.md lists (the reference) is there
    assert _docs_apt_packages() <= names | {"libglib2.0-0t64"}, _docs_apt_packages() - names
    assert "stormbound-spark" in _field(app_deb, "Suggests")
    assert int(_field(app_deb, "Installed-Size")) > 100_000  # KiB: the whole bundle


def test_app_package_contents(app_deb: Path):
    files = _contents(app_deb)
    assert files["/opt/stormbound/stormbound"].startswith("-rwxr-xr-x")
    assert files["/usr/bin/stormbound"].endswith("-> /opt/stormbound/stormbound")
    assert "/opt/stormbound/_internal/models/simple-DIA-cfg-1.storm.json" in files
    assert "/opt/stormbound/_internal/app/spark/host.py" in files  # sources for the outside Spark Python
    for path in ("/usr/share/applications/stormbound.desktop", "/usr/share/mime/packages/stormbound.xml",
                 "/usr/share/man/man1/stormbound.1.gz", "/usr/share/doc/stormbound/copyright",
                 "/usr/share/doc/stormbound/changelog.gz", "/usr/share/icons/hicolor/scalable/apps/stormbound.svg"):
        assert path in files, path
    sizes = [p for p in files if re.fullmatch(r"/usr/share/icons/hicolor/\d+x\d+/apps/stormbound\.png", p)]
    assert len(sizes) >= 6, sizes
    assert "/opt/stormbound/stormbound.desktop" not in files  # the archive's; the package has its own
    assert not [p for p in files if "__pycache__" in p or p.endswith(".pyc")]


def test_app_package_installs_as_a_user_would_see_it(app_deb: Path, tmp_path: Path):
    subprocess.run(["dpkg-deb", "-x", str(app_deb), str(tmp_path)], check=True)
    desktop = (tmp_path / "usr/share/applications/stormbound.desktop").read_text()
    assert "Exec=stormbound gui %f" in desktop and "MimeType=application/x-stormbound+json;" in desktop
    man = subprocess.run(["gzip", "-dc", str(tmp_path / "usr/share/man/man1/stormbound.1.gz")], capture_output=True,
                         text=True, check=True).stdout
    assert man.startswith(".TH STORMBOUND 1") and ".SS verify" in man and f"stormbound {__version__}" in man
    changelog = subprocess.run(["gzip", "-dc", str(tmp_path / "usr/share/doc/stormbound/changelog.gz")],
                               capture_output=True, text=True, check=True).stdout
    assert changelog.startswith(f"stormbound ({__version__})")
    # no build-machine folder left as a library search path
    internal = tmp_path / "opt/stormbound/_internal"
    for elf in [next(internal.glob("libpython3*.so*")), *internal.glob("python3*/lib-dynload/_json*.so")]:
        dynamic = subprocess.run(["readelf", "-d", str(elf)], capture_output=True, text=True).stdout
        assert "RUNPATH" not in dynamic and "RPATH" not in dynamic, f"{elf.name}: {dynamic}"
    done = subprocess.run([str(tmp_path / "opt/stormbound/stormbound"), "--version"], capture_output=True, text=True,
                          timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"})
    assert done.stdout.strip() == f"stormbound {__version__}", done.stderr


def test_spark_package_metadata_and_contents(spark_deb: Path):
    assert _field(spark_deb, "Package") == "stormbound-spark"
    depends = [entry.strip() for entry in _field(spark_deb, "Depends").split(",")]
    for needed in ("python3.11", "openjdk-17-jre-headless", f"stormbound (= {__version__})"):
        assert needed in depends, depends
    files = _contents(spark_deb)
    assert files["/opt/stormbound-spark/bin/python"].endswith("-> python3.11")
    assert files["/opt/stormbound-spark/bin/python3.11"].endswith("-> /usr/bin/python3.11")
    assert "/opt/stormbound-spark/pyvenv.cfg" in files
    site = "/opt/stormbound-spark/lib/python3.11/site-packages"
    for package in ("pyspark/__init__.py", "py4j/__init__.py", "pyarrow/__init__.py", "pydantic/__init__.py",
                    "networkx/__init__.py", "grpc/__init__.py"):
        assert f"{site}/{package}" in files, package
    assert f"{site}/pyspark/__pycache__/__init__.cpython-311.pyc" in files  # compiled here, never in /opt later


def test_spark_package_environment_runs_a_measured_run_with_the_unpacked_app(app_deb: Path, spark_deb: Path,
                                                                             tmp_path: Path):
    """The two packages unpacked side by side: the app starts its Spark host with the packaged Python."""
    if not Path("/usr/bin/python3.11").exists() or shutil.which("java") is None:
        pytest.skip("needs /usr/bin/python3.11 and Java (the package's dependencies)")
    root = tmp_path / "root"
    for deb in (app_deb, spark_deb):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    python = root / "opt/stormbound-spark/bin/python"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TMPDIR": str(tmp_path), "LANG": "C.UTF-8"}
    probe = subprocess.run([str(python), "-c", "import pyspark, pydantic, networkx; print(pyspark.__file__)"],
                           capture_output=True, text=True, timeout=120, env=env)
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip().startswith(str(root / "opt/stormbound-spark")), "pyspark came from elsewhere"
    example = root / "opt/stormbound/_internal/models/simple-DIA-cfg-1.storm.json"
    compiled = sorted((root / "opt/stormbound-spark").rglob("*.pyc"))
    done = subprocess.run([str(root / "opt/stormbound/stormbound"), "run", str(example), "--duration", "3",
                           "--out", str(tmp_path / "run")], capture_output=True, text=True, timeout=300,
                          env=env | {"STORMBOUND_SPARK_PYTHON": str(python), "STORMBOUND_SPARK_MASTER": "local[2]"})
    assert done.returncode == 0, f"stdout: {done.stdout}\nstderr: {done.stderr}"
    assert "ran simple-DIA-cfg-1" in done.stdout
    assert (tmp_path / "run" / "events.jsonl").stat().st_size > 0
    assert sorted((root / "opt/stormbound-spark").rglob("*.pyc")) == compiled, "a run wrote bytecode into /opt"


@pytest.mark.parametrize("deb_name", [APP_DEB, SPARK_DEB])
def test_lintian_is_clean_with_the_documented_overrides(built_dist: Path, deb_name: str):
    if shutil.which("lintian") is None:
        pytest.skip("lintian is not installed")
    done = subprocess.run(["lintian", "--tag-display-limit", "0", str(built_dist / deb_name)], capture_output=True,
                          text=True, timeout=1800)
    tags = [line for line in done.stdout.splitlines() if re.match(r"^[EW]: ", line)]
    assert not tags, "\n".join(tags[:30])
    overrides = (ROOT / "packaging" / "deb" / f"{deb_name.split('_')[0]}.lintian-overrides").read_text()
    documented = (ROOT / "docs" / "install.md").read_text()
    for tag in re.findall(r"^\S+: (\S+)", overrides, re.M):
        assert f"`{tag}`" in documented, f"lintian override {tag} is not explained in docs/install.md"
