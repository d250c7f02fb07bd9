"""The Debian packaging scripts (packaging/deb/, packaging/elf_runpath.py) without building anything.

The package build itself is tested in tests/dist/test_deb.py (slow).
"""

from __future__ import annotations

import configparser
import importlib.util
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEB = ROOT / "packaging" / "deb"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


depends = _load("depends", DEB / "depends.py")
manpage = _load("manpage", DEB / "manpage.py")
elf_runpath = _load("elf_runpath", ROOT / "packaging" / "elf_runpath.py")

LDD = """\
\tlinux-vdso.so.1 (0x00007ffd6b5f2000)
\tlibQt6Gui.so.6 => /opt/x/_internal/PySide6/Qt/lib/libQt6Gui.so.6 (0x00007f1c)
\tlibxcb-cursor.so.0 => /lib/x86_64-linux-gnu/libxcb-cursor.so.0 (0x00007f1b)
\tlibxkbcommon-x11.so.0 => not found
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f1a)
\t/lib64/ld-linux-x86-64.so.2 (0x00007f1d)
"""
READELF = """\
Dynamic section at offset 0x1d8 contains 3 entries:
  Tag        Type                         Name/Value
 0x0000000000000001 (NEEDED)             Shared library: [libQt6Gui.so.6]
 0x0000000000000001 (NEEDED)             Shared library: [libxcb-cursor.so.0]
 0x0000000000000001 (NEEDED)             Shared library: [libc.so.6]
 0x000000000000001d (RUNPATH)            Library runpath: [$ORIGIN/../lib]
"""


def test_ldd_and_readelf_output_are_read():
    resolved = depends.parse_ldd(LDD)
    assert resolved["libxcb-cursor.so.0"] == "/lib/x86_64-linux-gnu/libxcb-cursor.so.0"
    assert resolved["libxkbcommon-x11.so.0"] is None
    assert "linux-vdso.so.1" not in resolved
    assert depends.parse_needed(READELF) == ["libQt6Gui.so.6", "libxcb-cursor.so.0", "libc.so.6"]


def test_dpkg_search_output_gives_package_names():
    out = ("libxcb-cursor0:amd64: /usr/lib/x86_64-linux-gnu/libxcb-cursor.so.0\n"
           "diversion by foo from: /usr/lib/x\n")
    assert depends.parse_dpkg_search(out) == ["libxcb-cursor0"]
    assert depends.parse_dpkg_search("libgl1:amd64, libgl1:i386: /usr/lib/libGL.so.1") == ["libgl1", "libgl1"]
    assert depends.parse_dpkg_search("dpkg-query: no path found matching pattern /x") == []


def test_merged_usr_paths_are_tried_both_ways():
    variants = depends.path_variants("/lib/x86_64-linux-gnu/libz.so.1")
    assert variants[:2] == ["/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1"]
    assert "/lib/x" in depends.path_variants("/usr/lib/x")


def test_glibc_version_is_the_highest_one_named():
    assert depends.glibc_minor(b"\x00GLIBC_2.2.5\x00GLIBC_2.34\x00GLIBC_2.17\x00GLIBC_PRIVATE\x00") == 34
    assert depends.glibc_minor(b"no versions") == 0


def _fake_tree(tmp_path: Path) -> Path:
    root = tmp_path / "bundle"
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "libQt6Gui.so.6").write_bytes(b"\x7fELF carried")
    (root / "plugin.so").write_bytes(b"\x7fELF plugin")
    (root / "notes.txt").write_text("not an ELF file")
    return root


def test_libraries_the_bundle_carries_are_not_dependencies(tmp_path: Path):
    root = _fake_tree(tmp_path)
    calls: list[list[str]] = []

    def run(args: list[str]) -> str:
        calls.append(args)
        if args[0] == "readelf":
            return READELF if args[-1].endswith("plugin.so") else ""
        return LDD.replace("libxkbcommon-x11.so.0 => not found", "")

    found = depends.system_libraries(root, run)
    assert found == {"libxcb-cursor.so.0": "/lib/x86_64-linux-gnu/libxcb-cursor.so.0",
                     "libc.so.6": "/lib/x86_64-linux-gnu/libc.so.6"}
    assert not any(call[-1].endswith("notes.txt") for call in calls)


def test_a_library_missing_on_the_build_machine_stops_the_build(tmp_path: Path):
    root = _fake_tree(tmp_path)
    readelf = READELF + " 0x0000000000000001 (NEEDED)             Shared library: [libxkbcommon-x11.so.0]\n"

    def run(args: list[str]) -> str:
        if args[0] == "readelf":
            return readelf if args[-1].endswith("plugin.so") else ""
        return LDD

    with pytest.raises(depends.DependsError, match=r"libxkbcommon-x11\.so\.0 \(needed by plugin\.so\)"):
        depends.system_libraries(root, run)


def test_depends_line_is_one_entry_per_package_with_a_libc_minimum():
    owners = {"/a/libxcb-cursor.so.0": "libxcb-cursor0", "/a/libc.so.6": "libc6", "/a/libxcb.so.1": "libxcb1",
              "/a/libxcb-shm.so.0": "libxcb-shm0", "/a/libxcb-shm.so.0.0.0": "libxcb-shm0"}
    libraries = {"libxcb-cursor.so.0": "/a/libxcb-cursor.so.0", "libc.so.6": "/a/libc.so.6",
                 "libxcb.so.1": "/a/libxcb.so.1", "libxcb-shm.so.0": "/a/libxcb-shm.so.0"}
    entries = depends.depends(libraries, 35, owners.get, extra=["python3.11"])
    assert entries == ["libc6 (>= 2.35)", "libxcb-cursor0", "libxcb-shm0", "libxcb1", "python3.11"]
    with pytest.raises(depends.DependsError, match="no installed package holds libfoo.so.1"):
        depends.depends({"libfoo.so.1": "/a/libfoo.so.1"}, 0, owners.get)


def test_desktop_entry_opens_storm_files_through_gui():
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read(DEB / "stormbound.desktop")
    entry = parser["Desktop Entry"]
    assert entry["Type"] == "Application" and entry["Icon"] == "stormbound"
    assert entry["Exec"] == "stormbound gui %f"
    assert "application/x-stormbound+json" in entry["MimeType"].split(";")
    if shutil.which("desktop-file-validate"):
        done = subprocess.run(["desktop-file-validate", str(DEB / "stormbound.desktop")], capture_output=True,
                              text=True)
        assert done.returncode == 0 and not done.stdout.strip(), done.stdout


def test_mime_type_claims_storm_json_only(tmp_path: Path):
    ns = {"m": "http://www.freedesktop.org/standards/shared-mime-info"}
    mime = ET.parse(DEB / "stormbound-mime.xml").getroot().find("m:mime-type", ns)
    assert mime is not None and mime.get("type") == "application/x-stormbound+json"
    assert [g.get("pattern") for g in mime.findall("m:glob", ns)] == ["*.storm.json"]
    assert mime.find("m:sub-class-of", ns).get("type") == "application/json"  # type: ignore[union-attr]
    if shutil.which("update-mime-database") is None:
        pytest.skip("shared-mime-info is not installed: the XML was only parsed")
    (tmp_path / "packages").mkdir()
    shutil.copyfile(DEB / "stormbound-mime.xml", tmp_path / "packages" / "stormbound.xml")
    done = subprocess.run(["update-mime-database", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0 and "error" not in done.stderr.lower(), done.stderr
    globs = (tmp_path / "globs2").read_text().splitlines()
    assert "50:application/x-stormbound+json:*.storm.json" in globs
    assert not any(line.endswith(":*.json") for line in globs), "plain .json (D-VerT) must stay application/json"


def _fake_help(args: list[str]) -> str:
    if not args:
        return "usage: stormbound [-h] {check,gui} ...\n\n.hidden dot\n  check  a \\ backslash\n"
    return f"usage: stormbound {args[0]} [-h]\n\n'quoted first\n"


def test_man_page_is_made_from_each_help_text(tmp_path: Path):
    page = manpage.render(_fake_help, "9.9", "2026-01-02")
    assert page.startswith('.TH STORMBOUND 1 "2026-01-02" "stormbound 9.9"')
    assert ".SS check" in page and ".SS gui" in page
    assert "\\&.hidden dot" in page and "\\&'quoted first" in page and "a \\e backslash" in page
    if shutil.which("man"):
        (tmp_path / "stormbound.1").write_text(page)
        page_file = str(tmp_path / "stormbound.1")
        done = subprocess.run(["man", "--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z", page_file],
                              capture_output=True, text=True, env={"LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"})
        assert done.returncode == 0 and not done.stderr.strip(), done.stderr


def _elf_with_runpaths(*runpaths: str) -> bytes:
    """A minimal ELF64 file: one PT_LOAD over the whole file, a PT_DYNAMIC, a string table."""
    strings = b"\0libc.so.6\0" + b"".join(p.encode() + b"\0" for p in runpaths)
    offsets, at = [], len(b"\0libc.so.6\0")
    for path in runpaths:
        offsets.append(at)
        at += len(path) + 1
    dyn_entries = [(5, 0), (1, 1)] + [(29, o) for o in offsets] + [(0, 0), (0, 0)]
    phoff, phnum = 64, 2
    dyn_off = phoff + phnum * 56
    str_off = dyn_off + len(dyn_entries) * 16
    dyn_entries[0] = (5, 0x1000 + str_off)  # DT_STRTAB is an address: vaddr 0x1000 maps file offset 0
    header = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9) + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, phoff, 0, 0, 64,
                                                                     56, phnum, 64, 0, 0)
    total = str_off + len(strings)
    load = struct.pack("<IIQQQQQQ", 1, 5, 0, 0x1000, 0x1000, total, total, 0x1000)
    dynamic = struct.pack("<IIQQQQQQ", 2, 6, dyn_off, 0x1000 + dyn_off, 0x1000 + dyn_off, len(dyn_entries) * 16,
                          len(dyn_entries) * 16, 8)
    body = b"".join(struct.pack("<qQ", tag, value) for tag, value in dyn_entries)
    return header + load + dynamic + body + strings


def test_build_machine_runpath_is_dropped_and_origin_kept(tmp_path: Path):
    path = tmp_path / "lib.so"
    path.write_bytes(_elf_with_runpaths("/root/.pyenv/versions/3.11.7/lib", "$ORIGIN/../lib"))
    assert elf_runpath.drop_outside_runpaths(path) == ["/root/.pyenv/versions/3.11.7/lib"]
    _, outside, entries = elf_runpath.outside_runpaths(path.read_bytes())
    assert outside == []
    assert [tag for tag, _ in entries] == [5, 1, 29, 0]  # the $ORIGIN entry moved up, DT_NULL still ends it
    assert elf_runpath.drop_outside_runpaths(path) == []  # nothing more to do


def test_non_elf_files_are_left_alone(tmp_path: Path):
    path = tmp_path / "notes.so"
    path.write_bytes(b"not an ELF file at all, just text" * 4)
    assert elf_runpath.drop_outside_runpaths(path) == []
    assert path.read_bytes().startswith(b"not an ELF")


def test_frozen_entry_opens_a_document_handed_over_by_macos(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    entry = _load("stormbound_entry", ROOT / "packaging" / "stormbound_entry.py")
    document = tmp_path / "t.storm.json"
    document.write_text("{}")
    monkeypatch.setattr(sys, "argv", ["stormbound", str(document)])
    monkeypatch.setattr(sys, "platform", "linux")
    assert entry._argv() == [str(document)]  # Linux: the command line as typed
    monkeypatch.setattr(sys, "platform", "darwin")
    assert entry._argv() == ["gui", str(document)]
    monkeypatch.setattr(sys, "argv", ["stormbound", "check", str(document)])
    assert entry._argv() == ["check", str(document)]


def test_make_dist_installs_the_libraries_docs_install_lists():
    """`make dist` on a fresh machine: build.sh runs packaging/build_deps.sh first, whose list holds every
    library of docs/install.md's apt command (the ones `ldd` on the bundled Qt names), and the tools."""
    import re

    listed = subprocess.run(["bash", str(ROOT / "packaging" / "build_deps.sh"), "--list"], capture_output=True,
                            text=True, check=True).stdout.split()
    text = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    command = re.search(r"sudo apt install (libxcb-cursor0.*?)\n```", text, re.S)
    assert command is not None
    documented = command.group(1).replace("\\", " ").split()
    assert set(documented) <= set(listed), set(documented) - set(listed)
    assert {"binutils", "dpkg-dev"} <= set(listed)
    build = (ROOT / "packaging" / "build.sh").read_text(encoding="utf-8")
    assert build.index("packaging/build_deps.sh") < build.index("PyInstaller --noconfirm")
