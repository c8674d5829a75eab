#!/usr/bin/env python3
"""Writes a GLB whose skinned meshes' data are mirrored, as an export between
left- and right-handed axes does: x of every skinned primitive's POSITION,
NORMAL, TANGENT (and its w) and morph deltas negated, each triangle's winding
reversed, inverse bind matrices IBM' = IBM F (F = diag(-1, 1, 1, 1)); the
nodes (the scene) untouched. --turn: the data turned 90 degrees about x
instead ((x, y, z) -> (x, -z, y), IBM' = IBM R^-1, winding kept), as an
export that bakes a Z-up conversion into the vertices does. --half: the
data turned a half turn about y ((x, y, z) -> (-x, y, -z), IBM' = IBM R^-1,
winding kept): the body faces the other way.
Usage: mirror_glb.py [--turn | --half] IN.glb OUT.glb"""
import json
import os
import struct
import sys
import tempfile


def main(src, dst, turn=False, half=False):
    if os.path.exists(dst) and os.path.samefile(src, dst):
        sys.exit(f"{dst}: is the input; name another output")
    data = open(src, "rb").read()
    magic, version, _ = struct.unpack_from("<4sII", data, 0)
    if magic != b"glTF" or version != 2:
        sys.exit(f"{src}: not a GLB 2.0 file")
    off, doc, binc = 12, None, None
    while off + 8 <= len(data):
        n, kind = struct.unpack_from("<II", data, off)
        chunk = data[off + 8:off + 8 + n]
        if kind == 0x4E4F534A:
            doc = json.loads(chunk)
        elif kind == 0x004E4942:
            binc = bytearray(chunk)
        off += 8 + n
    if doc is None or binc is None:
        sys.exit(f"{src}: no JSON or BIN chunk")
    acc, views = doc["accessors"], doc["bufferViews"]
    done = set()
    fmt = {5126: ("f", 4), 5125: ("I", 4), 5123: ("H", 2), 5121: ("B", 1)}

    def elements(i):
        a = acc[i]
        v = views[a["bufferView"]]
        code, size = fmt[a["componentType"]]
        comps = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}[a["type"]]
        stride = v.get("byteStride") or size * comps
        base = v.get("byteOffset", 0) + a.get("byteOffset", 0)
        return code, size, comps, [base + k * stride for k in range(a["count"])]

    def remap(i, f):
        """each element's components v <- f(v), once per accessor; min / max recomputed"""
        if i in done:
            return
        done.add(i)
        code, size, comps, starts = elements(i)
        lo, hi = [None] * comps, [None] * comps
        for s in starts:
            v = f([struct.unpack_from("<" + code, binc, s + c * size)[0] for c in range(comps)])
            for c in range(comps):
                struct.pack_into("<" + code, binc, s + c * size, v[c])
                lo[c] = v[c] if lo[c] is None else min(lo[c], v[c])
                hi[c] = v[c] if hi[c] is None else max(hi[c], v[c])
        a = acc[i]
        if "min" in a and "max" in a and starts:
            a["min"], a["max"] = lo, hi

    def negate(i, comps_to_negate):
        remap(i, lambda v: [-x if c in comps_to_negate else x for c, x in enumerate(v)])

    def turn_x(i, pairs):
        """each (j, k) in pairs: (v_j, v_k) <- (-v_k, v_j)"""
        def f(v):
            for j, k in pairs:
                v[j], v[k] = -v[k], v[j]
            return v
        remap(i, f)

    for mesh in doc.get("meshes", []):
        for prim in mesh["primitives"]:
            at = prim["attributes"]
            if "JOINTS_0" not in at:
                continue
            if half:
                for k in ("POSITION", "NORMAL", "TANGENT"):
                    if k in at:
                        negate(at[k], [0, 2])
                for t in prim.get("targets", []):
                    for k in ("POSITION", "NORMAL"):
                        if k in t:
                            negate(t[k], [0, 2])
                continue
            if turn:
                for k in ("POSITION", "NORMAL", "TANGENT"):
                    if k in at:
                        turn_x(at[k], [(1, 2)])
                for t in prim.get("targets", []):
                    for k in ("POSITION", "NORMAL"):
                        if k in t:
                            turn_x(t[k], [(1, 2)])
                continue
            negate(at["POSITION"], [0])
            if "NORMAL" in at:
                negate(at["NORMAL"], [0])
            if "TANGENT" in at:
                negate(at["TANGENT"], [0, 3])
            for t in prim.get("targets", []):
                for k in ("POSITION", "NORMAL"):
                    if k in t:
                        negate(t[k], [0])
            ix = prim.get("indices")
            if ix is not None and ix not in done and prim.get("mode", 4) == 4:
                done.add(ix)
                code, size, _, starts = elements(ix)
                for k in range(0, len(starts) - 2, 3):
                    b, c = starts[k + 1], starts[k + 2]
                    (vb,) = struct.unpack_from("<" + code, binc, b)
                    (vc,) = struct.unpack_from("<" + code, binc, c)
                    struct.pack_into("<" + code, binc, b, vc)
                    struct.pack_into("<" + code, binc, c, vb)
    for skin in doc.get("skins", []):
        if "inverseBindMatrices" in skin and half:
            # IBM R^-1 (R^-1 = R): columns 0 and 2 negated (column-major)
            negate(skin["inverseBindMatrices"], [0, 1, 2, 3, 8, 9, 10, 11])
        elif "inverseBindMatrices" in skin and turn:
            # IBM R^-1: column 1 <- -column 2, column 2 <- column 1 (column-major)
            turn_x(skin["inverseBindMatrices"], [(4, 8), (5, 9), (6, 10), (7, 11)])
        elif "inverseBindMatrices" in skin:
            negate(skin["inverseBindMatrices"], [0, 1, 2, 3])  # column 0 of each (column-major) matrix
    js = json.dumps(doc, separators=(",", ":")).encode()
    js += b" " * (-len(js) % 4)
    binc += b"\0" * (-len(binc) % 4)
    out = struct.pack("<4sII", b"glTF", 2, 12 + 8 + len(js) + 8 + len(binc))
    out += struct.pack("<II", len(js), 0x4E4F534A) + js + struct.pack("<II", len(binc), 0x004E4942) + bytes(binc)
    # a temp file of its own beside dst (a fixed name like dst + ".tmp" could be the input)
    fd, tmp = tempfile.mkstemp(prefix=".mirror_glb.", suffix=".tmp", dir=os.path.dirname(os.path.abspath(dst)))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(out)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600: the mode a plain open would give
        os.replace(tmp, dst)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


if __name__ == "__main__":
    args = sys.argv[1:]
    turn = bool(args) and args[0] == "--turn"
    half = bool(args) and args[0] == "--half"
    if turn or half:
        args = args[1:]
    if len(args) != 2:
        sys.exit(__doc__)
    main(args[0], args[1], turn, half)
