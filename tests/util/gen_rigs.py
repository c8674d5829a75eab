#!/usr/bin/env python3
"""Small generated glTF rigs for the bounds tests (issue 11): each file is
tiny on disk (a few KB to < 1 MB, one .gltf with its buffer as a data URI)
but asks for a lot of work or memory. Nothing here is a third-party model.

usage: gen_rigs.py OUTDIR [NAME ...]   (no NAME: every rig below)

  ribbon   a subdivided ribbon (60 x 40 = 2,400 vertices), two bones, one
           10 s clip of two keys: `bake --fps 60` gives 602 frames x 2,400
           vertices (the report budget test)
  far      a ribbon plus one vertex 1e30 away (stretches every grid)
  keys     one clip of 30,000 key times (bake at key times: 30,001 frames)
  clips    2,000 clips of two keys each
  parts    1,000 mesh parts of one triangle each, one skin
  joints   a 6,000-joint chain, every vertex on one joint
  long     a clip lasting 3e38 s (frame counts overflow a size_t)
  bigtris  5,800 tiny triangles spread over a box plus 5,800 distinct ones
           that span it (on the tiny ones' corners): every one near every
           closest-point query
  dense    an 11,600-vertex ribbon (the 10 s bend): work grows with --fps
"""
import base64
import json
import math
import os
import struct
import sys


class Rig:
    def __init__(self):
        self.buf = bytearray()
        self.views, self.accessors = [], []

    def blob(self, data, comp, count, typ, minmax=None):
        while len(self.buf) % 4:
            self.buf += b"\0"
        self.views.append({"buffer": 0, "byteOffset": len(self.buf), "byteLength": len(data)})
        self.buf += data
        acc = {"bufferView": len(self.views) - 1, "componentType": comp, "count": count, "type": typ}
        if minmax:
            acc["min"], acc["max"] = minmax
        self.accessors.append(acc)
        return len(self.accessors) - 1

    def floats(self, vals, typ, n, minmax=False):
        mm = None
        if minmax:
            mm = ([min(vals[i::n]) for i in range(n)], [max(vals[i::n]) for i in range(n)])
        return self.blob(struct.pack("<%df" % len(vals), *vals), 5126, len(vals) // n, typ, mm)

    def u16(self, vals, typ, n):
        return self.blob(struct.pack("<%dH" % len(vals), *vals), 5123, len(vals) // n, typ)

    def u32(self, vals):
        return self.blob(struct.pack("<%dI" % len(vals), *vals), 5125, len(vals), "SCALAR")


def ribbon(nx, ny, length=2.0, width=0.5):
    pos, tri = [], []
    for j in range(ny):
        for i in range(nx):
            pos += [length * i / (nx - 1), width * j / (ny - 1) - width / 2, 0.0]
    for j in range(ny - 1):
        for i in range(nx - 1):
            a = j * nx + i
            tri += [a, a + 1, a + nx, a + 1, a + nx + 1, a + nx]
    return pos, tri


def two_bone_weights(pos):
    jw, ww = [], []
    for v in range(len(pos) // 3):
        t = min(1.0, max(0.0, pos[3 * v] / 2.0))
        jw += [0, 1, 0, 0]
        ww += [1.0 - t, t, 0.0, 0.0]
    return jw, ww


def write(path, pos, tri, joints, jw, ww, clips, parts=1):
    """joints: [(name, parent, translation)]; clips: [(name, [(joint, times, quats)])]."""
    r = Rig()
    nodes, prims = [], []
    for k, (name, parent, t) in enumerate(joints):
        nodes.append({"name": name, "translation": t})
    for k, (_, parent, _) in enumerate(joints):
        if parent >= 0:
            nodes[parent].setdefault("children", []).append(k)
    ibm = []
    world = []
    for k, (_, parent, t) in enumerate(joints):
        w = list(t) if parent < 0 else [world[parent][i] + t[i] for i in range(3)]
        world.append(w)
        ibm += [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, -w[0], -w[1], -w[2], 1]
    nv = len(pos) // 3
    per = nv // parts
    for p in range(parts):
        v0, v1 = p * per, (nv if p == parts - 1 else (p + 1) * per)
        # one part: the given triangles; many parts: each part's own vertices in order
        sub = tri if parts == 1 else list(range(v1 - v0))[: (v1 - v0) // 3 * 3]
        a_pos = r.floats(pos[3 * v0:3 * v1], "VEC3", 3, minmax=True)
        a_j = r.u16(jw[4 * v0:4 * v1], "VEC4", 4)
        a_w = r.floats(ww[4 * v0:4 * v1], "VEC4", 4)
        a_i = r.u32(sub)
        prims.append({"attributes": {"POSITION": a_pos, "JOINTS_0": a_j, "WEIGHTS_0": a_w}, "indices": a_i})
    a_ibm = r.floats(ibm, "MAT4", 16)
    anims = []
    for name, tracks in clips:
        samplers, channels = [], []
        for joint, times, quats in tracks:
            a_t = r.floats(times, "SCALAR", 1, minmax=True)
            a_q = r.floats(quats, "VEC4", 4)
            samplers.append({"input": a_t, "output": a_q, "interpolation": "LINEAR"})
            channels.append({"sampler": len(samplers) - 1, "target": {"node": joint, "path": "rotation"}})
        anims.append({"name": name, "samplers": samplers, "channels": channels})
    mesh_node = len(nodes)
    nodes.append({"name": "mesh", "mesh": 0, "skin": 0})
    doc = {
        "asset": {"version": "2.0", "generator": "skinsolve tests/util/gen_rigs.py"},
        "scene": 0,
        "scenes": [{"nodes": [0, mesh_node]}],
        "nodes": nodes,
        "skins": [{"joints": list(range(len(joints))), "inverseBindMatrices": a_ibm}],
        "meshes": [{"name": "m", "primitives": prims}],
        "animations": anims,
        "buffers": [{"byteLength": len(r.buf),
                     "uri": "data:application/octet-stream;base64," + base64.b64encode(bytes(r.buf)).decode()}],
        "bufferViews": r.views,
        "accessors": r.accessors,
    }
    if parts > 1:  # one mesh per part, as separate nodes sharing the skin
        doc["meshes"] = [{"name": "m%d" % p, "primitives": [prims[p]]} for p in range(parts)]
        nodes.pop()
        first = len(nodes)
        for p in range(parts):
            nodes.append({"name": "mesh%d" % p, "mesh": p, "skin": 0})
        doc["scenes"] = [{"nodes": [0] + list(range(first, first + parts))}]
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))


def bend(angle):
    return [0.0, 0.0, math.sin(angle / 2), math.cos(angle / 2)]


TWO = [("root", -1, [0, 0, 0]), ("elbow", 0, [1.0, 0, 0])]


def gen(out, name):
    path = os.path.join(out, name + ".gltf")
    if name in ("ribbon", "far", "keys", "clips", "long", "dense"):
        nx, ny = (60, 40) if name == "ribbon" else (116, 100) if name == "dense" else (12, 6)
        pos, tri = ribbon(nx, ny)
        if name == "far":
            pos += [1e30, 0.0, 0.0]
        jw, ww = two_bone_weights(pos)
        clip = [("bend", [(1, [0.0, 10.0], bend(0) + bend(1.2))])]
        if name == "keys":
            n = 30000
            times = [i * 0.01 for i in range(n)]
            qs = []
            for i in range(n):
                qs += bend(0.6 * math.sin(i * 0.01))
            clip = [("many_keys", [(1, times, qs)])]
        elif name == "clips":
            clip = [("c%d" % k, [(1, [0.0, 1.0], bend(0) + bend(0.1 + k * 1e-4))]) for k in range(2000)]
        elif name == "long":
            clip = [("forever", [(1, [0.0, 3e38], bend(0) + bend(1.0))])]
        write(path, pos, tri, TWO, jw, ww, clip)
    elif name == "parts":
        n = 1000
        pos = []
        for p in range(n):
            x = (p % 60) * 0.05
            y = (p // 60) * 0.05
            pos += [x, y, 0, x + 0.04, y, 0, x, y + 0.04, 0]
        jw, ww = two_bone_weights(pos)
        write(path, pos, [], TWO, jw, ww, [("bend", [(1, [0.0, 1.0], bend(0) + bend(0.8))])], parts=n)
    elif name == "joints":
        n = 6000
        joints = [("j0", -1, [0, 0, 0])] + [("j%d" % k, k - 1, [0.001, 0, 0]) for k in range(1, n)]
        pos, tri = ribbon(8, 4)
        jw, ww = [], []
        for v in range(len(pos) // 3):
            jw += [min(n - 1, v * 180), 0, 0, 0]
            ww += [1.0, 0, 0, 0]
        write(path, pos, tri, joints, jw, ww, [("bend", [(n // 2, [0.0, 1.0], bend(0) + bend(0.5))])])
    elif name == "bigtris":
        n = 5800
        pos, tri = [], []
        side = 18
        for k in range(n):  # tiny triangles on a lattice filling the box
            x, y, z = (k % side) / side * 2, (k // side % side) / side * 2, (k // side // side) / side * 2
            b = len(pos) // 3
            pos += [x, y, z, x + 0.01, y, z, x, y + 0.01, z]
            tri += [b, b + 1, b + 2]
        # 5,800 distinct triangles spanning the box, on the tiny triangles'
        # corners (no repeated vertex set: de-duplication cannot drop them)
        for k in range(n):
            tri += [3 * k, 3 * ((k + n // 3) % n) + 1, 3 * ((k + 2 * n // 3 + 7) % n) + 2]
        jw, ww = two_bone_weights(pos)
        write(path, pos, tri, TWO, jw, ww, [("bend", [(1, [0.0, 1.0], bend(0) + bend(0.8))])])
    else:
        raise SystemExit("gen_rigs.py: unknown rig '%s'" % name)
    return path


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    out = sys.argv[1]
    names = sys.argv[2:] or ["ribbon", "far", "keys", "clips", "parts", "joints", "long", "bigtris", "dense"]
    for n in names:
        p = gen(out, n)
        print("%s %d" % (p, os.path.getsize(p)))


if __name__ == "__main__":
    main()
