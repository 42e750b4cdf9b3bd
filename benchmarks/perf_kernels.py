"""Run one simulation under Linux ``perf`` with the compiled kernels' names, so that samples land
on the kernels (and the functions they call that are not inlined) instead of bare addresses.

Numba loads its kernels from its cache at run time, where ``perf`` sees no symbols. After the
run this script writes ``/tmp/perf-<pid>.map`` (the map ``perf report`` reads for code without
an object file): the functions of every object file in the package's Numba cache folder, each at
the address the process loaded it at.

    perf record -F 999 -o perf.data python benchmarks/perf_kernels.py \
        experiment=fig10_load workload.n_flows=5000 engine=fluid_fast scheme=uno_ecmp
    perf report -i perf.data --sort sym
    perf script -i perf.data -F ip | sort | uniq -c | sort -rn | head   # hottest instructions

For the instructions around a hot address, ``--dump NAME`` writes the code of each mapped
function whose name holds ``NAME`` (e.g. ``take_feedback``) to ``<dir>/<function>.bin``, with its
load address in the file name, for ``objdump -D -b binary -mi386:x86-64
--adjust-vma=<address>``. Only the kernels loaded from the cache are named (run ``python -m
uno.warmup`` first; kernels compiled during the run are not in it). Prints the run's wall time
and the functions mapped.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import struct
import time
from collections import Counter
from pathlib import Path

import uno
import uno.api
from uno.build import build_simulation
from uno.warmup import cache_folder

SHT_SYMTAB = 2
STT_FUNC = 2


def elf_objects(blob: bytes):
    """The ELF object files inside a Numba cache entry (``.nbc``: a pickle holding them)."""
    start = 0
    while (i := blob.find(b"\x7fELF", start)) >= 0:
        e_shoff = struct.unpack_from("<Q", blob, i + 0x28)[0]
        e_shentsize, e_shnum = struct.unpack_from("<HH", blob, i + 0x3A)
        end = i + e_shoff + e_shentsize * e_shnum
        yield blob[i:end]
        start = end


def elf_functions(obj: bytes) -> list[tuple[str, int, int, int]]:
    """(name, offset in its section, size in bytes, section index) of the functions an ELF64
    little-endian object file defines."""
    e_shoff = struct.unpack_from("<Q", obj, 0x28)[0]
    e_shentsize, e_shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, e_shoff + n * e_shentsize)
                for n in range(e_shnum)]  # fmt: skip
    out = []
    for sh in sections:
        if sh[1] != SHT_SYMTAB:
            continue
        str_off = sections[sh[6]][4]  # (sh_link: its string table)
        for at in range(sh[4], sh[4] + sh[5], 24):
            st_name, st_info, _, st_shndx, st_value, st_size = struct.unpack_from(
                "<IBBHQQ", obj, at
            )
            if st_info & 0xF != STT_FUNC or st_shndx == 0 or st_size == 0:
                continue
            name_end = obj.index(b"\0", str_off + st_name)
            out.append((obj[str_off + st_name : name_end].decode(), st_value, st_size, st_shndx))
    return out


def loaded_functions(folder: Path) -> dict[int, tuple[int, str]]:
    """{address: (size, name)} of the cached functions this process has loaded.

    A kernel's object file holds copies of the functions it calls, and the same name may come
    with other sizes in other kernels' files; the engine resolves a name to one loaded copy.
    So an object file names only the functions that lie where its own layout puts them: at one
    offset from their places in their section, the offset most of its resolved functions
    share; and where two files place a function at the same address, the one with more of its
    functions there wins (a file of which one copied function resolves agrees with any
    address)."""
    from numba.core.registry import cpu_target

    # (Numba's JIT engine resolves a loaded symbol's address; a private attribute, read only)
    engine = cpu_target.target_context.codegen()._engine._ee
    found = {}
    for entry in folder.rglob("*.nbc"):
        for obj in elf_objects(entry.read_bytes()):
            placed = []
            for name, offset, size, section in elf_functions(obj):
                address = engine.get_function_address(name)
                if address:
                    placed.append((address - offset, section, address, size, name))
            if not placed:
                continue
            (base, section), support = Counter((p[0], p[1]) for p in placed).most_common(1)[0]
            for delta, sec, address, size, name in placed:
                if delta == base and sec == section and support > found.get(address, (0,))[0]:
                    found[address] = (support, size, name)
    return {address: (size, name) for address, (_, size, name) in found.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("overrides", nargs="*", help="the run's config overrides")
    ap.add_argument("--dump", action="append", default=[], metavar="NAME",
                    help="write the code of the functions whose names hold NAME")  # fmt: skip
    ap.add_argument("--dump-dir", default="perf_kernels", help="where --dump writes")
    args = ap.parse_args()
    folder = cache_folder()
    if folder is None:
        ap.error("no Numba cache folder of uno's: nothing to name")
    cfg = uno.api.to_run_config(uno.compose(["engine.progress=false", *args.overrides]))
    sim = build_simulation(cfg)
    t0 = time.perf_counter()
    sim.run()
    print(f"perf_kernels: run took {time.perf_counter() - t0:.2f} s")
    found = loaded_functions(folder)
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as out:
        for address in sorted(found):
            size, name = found[address]
            out.write(f"{address:x} {size:x} {name}\n")
    print(f"perf_kernels: {len(found)} functions mapped in /tmp/perf-{os.getpid()}.map")
    for key in args.dump:
        Path(args.dump_dir).mkdir(exist_ok=True)
        for address, (size, name) in found.items():
            if key in name:
                path = Path(args.dump_dir) / f"{name[:80]}-{address:x}.bin"
                path.write_bytes(ctypes.string_at(address, size))
                print(f"perf_kernels: {path} (load address 0x{address:x})")


if __name__ == "__main__":
    main()
