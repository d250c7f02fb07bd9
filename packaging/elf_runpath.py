"""Drop RUNPATH/RPATH entries that point at the build machine (a pyenv Python carries
`/root/.pyenv/versions/X/lib`) from the bundle's ELF files, without patchelf.

The entry is removed from the dynamic section and the entries after it move up one slot
(the array ends with DT_NULL either way), as `patchelf --remove-rpath` does. `$ORIGIN`
paths stay: they point inside the bundle. The bundle's loader finds libpython by its
own path, so nothing needs the build machine's folder.
Usage: python packaging/elf_runpath.py FILE...   (packaging/build.sh runs it on Python's own files)
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

DT_NULL, DT_STRTAB, DT_RPATH, DT_RUNPATH = 0, 5, 15, 29
PT_LOAD, PT_DYNAMIC = 1, 2


def _file_offset(loads: list[tuple[int, int, int]], address: int) -> int:
    for offset, vaddr, size in loads:
        if vaddr <= address < vaddr + size:
            return address - vaddr + offset
    raise ValueError(f"address {address:#x} is in no PT_LOAD segment")


def outside_runpaths(data: bytes) -> tuple[int, list[tuple[int, str]], list[tuple[int, int]]] | None:
    """(dynamic offset, [(entry index, path)] of RUNPATH/RPATH entries not based on $ORIGIN, all entries)."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:  # 64-bit little-endian only
        return None
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    loads, dynamic = [], None
    for index in range(phnum):
        header = struct.unpack_from("<IIQQQQQQ", data, phoff + index * phentsize)
        p_type, p_offset, p_vaddr, p_filesz = header[0], header[2], header[3], header[5]
        if p_type == PT_LOAD:
            loads.append((p_offset, p_vaddr, p_filesz))
        elif p_type == PT_DYNAMIC:
            dynamic = (p_offset, p_filesz)
    if dynamic is None:
        return None
    entries = []
    for index in range(dynamic[1] // 16):
        tag, value = struct.unpack_from("<qQ", data, dynamic[0] + index * 16)
        entries.append((tag, value))
        if tag == DT_NULL:
            break
    strtab = next((value for tag, value in entries if tag == DT_STRTAB), None)
    if strtab is None:
        return None
    table = _file_offset(loads, strtab)
    found = []
    for index, (tag, value) in enumerate(entries):
        if tag in (DT_RPATH, DT_RUNPATH):
            start = table + value
            path = data[start:data.index(b"\0", start)].decode(errors="replace")
            if not path.startswith("$ORIGIN"):
                found.append((index, path))
    return dynamic[0], found, entries


def drop_outside_runpaths(path: Path) -> list[str]:
    """Remove the outside RUNPATH/RPATH entries of one file in place; the paths removed."""
    data = bytearray(path.read_bytes())
    parsed = outside_runpaths(bytes(data))
    if parsed is None or not parsed[1]:
        return []
    offset, found, entries = parsed
    drop = {index for index, _ in found}
    kept = [entry for index, entry in enumerate(entries) if index not in drop]
    for index in range(len(entries)):
        tag, value = kept[index] if index < len(kept) else (DT_NULL, 0)
        struct.pack_into("<qQ", data, offset + index * 16, tag, value)
    path.write_bytes(bytes(data))
    return [found_path for _, found_path in found]


if __name__ == "__main__":
    for name in sys.argv[1:]:
        for removed in drop_outside_runpaths(Path(name)):
            print(f"{name}: dropped RUNPATH {removed}")
