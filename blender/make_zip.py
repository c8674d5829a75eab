"""Builds the installable Blender add-on zip: blender/skinsolve_addon/*.py, a
copy of python/skinsolve/ as skinsolve_addon/skinsolve/, and the shared library
as skinsolve_addon/lib/libskinsolve.so.0 (found by the add-on first).

usage: python3 blender/make_zip.py OUT.zip PATH/TO/libskinsolve.so
The zip is written to a temporary file beside OUT.zip and renamed into place."""
import os
import sys
import zipfile


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    out, lib = argv[1], argv[2]
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.dirname(here)
    if not os.path.isfile(lib):
        sys.stderr.write(f"make_zip: {lib}: no such library\n")
        return 1
    tmp = out + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for d, prefix in ((os.path.join(here, "skinsolve_addon"), "skinsolve_addon"),
                          (os.path.join(src, "python", "skinsolve"), "skinsolve_addon/skinsolve")):
            for name in sorted(os.listdir(d)):
                if name.endswith(".py") and name != "_install_paths.py":
                    z.write(os.path.join(d, name), f"{prefix}/{name}")
        z.write(os.path.realpath(lib), "skinsolve_addon/lib/libskinsolve.so.0")
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
