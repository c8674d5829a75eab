"""Tests of the skinsolve Python module against the CLI (same library, same numbers).

Run by tests/test_python.sh with Debian's python3 + numpy:
  PYTHONPATH=python SKINSOLVE_LIBRARY=BUILD/libskinsolve.so SKS_CLI=BUILD/skinsolve python3 THIS
Exit 0 = all passed, 1 = a failure, 77 = skipped (data missing)."""
import ctypes
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import skinsolve
from skinsolve import _abi

CLI = os.environ["SKS_CLI"]
DATA = os.environ.get("SKS_SHARED_DATA", "")
FOX = os.path.join(DATA, "Fox", "Fox.glb")
FOX_T = os.path.join(DATA, "fox_targets", "fox_rig_autoweights.glb")
CESIUM = os.path.join(DATA, "CesiumMan")
passed = failed = 0


def check(desc, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {desc} {detail}", file=sys.stderr)


def cli(*args, ok=(0,)):
    p = subprocess.run([CLI, *args], capture_output=True, text=True)
    if p.returncode not in ok:
        raise RuntimeError(f"{CLI} {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return p


def raises(fn, code=None, contains=None):
    try:
        fn()
    except skinsolve.SkinsolveError as e:
        return (code is None or e.code == code) and (contains is None or contains in e.message)
    return False


def test_abi():
    check("mirrors match the library", skinsolve.abi_mismatches() == [],
          str(skinsolve.abi_mismatches()))

    # a stale mirror (a field missing at the end, as when the C struct grows) is caught
    class sks_bake_options(ctypes.Structure):
        _fields_ = _abi.sks_bake_options._fields_[:-1]

    saved = list(_abi.MIRRORS)
    try:
        _abi.MIRRORS[_abi.MIRRORS.index(_abi.sks_bake_options)] = sks_bake_options
        bad = _abi.mismatches(skinsolve._lib.lib)
        check("a shorter mirror is reported", any("sks_bake_options" in b for b in bad), str(bad))
        try:
            _abi.verify(skinsolve._lib.lib, "libtest")
            check("verify raises on a mismatch", False)
        except _abi.AbiMismatch as e:
            check("AbiMismatch names the struct", "sks_bake_options" in str(e), str(e))

        # a reordered field (same size) is caught by its offset
        f = list(_abi.sks_bake_options._fields_)
        f[2], f[3] = f[3], f[2]

        class sks_bake_options2(ctypes.Structure):
            _fields_ = f
        sks_bake_options2.__name__ = "sks_bake_options"
        _abi.MIRRORS[_abi.MIRRORS.index(sks_bake_options)] = sks_bake_options2
        bad = _abi.mismatches(skinsolve._lib.lib)
        check("a moved field is reported by offset", any("offset" in b for b in bad), str(bad))
    finally:
        _abi.MIRRORS[:] = saved
    lib = skinsolve._lib.lib
    check("unknown struct gives -1", lib.sks_abi_sizeof(b"nope") == ctypes.c_size_t(-1).value)


def test_errors():
    check("missing file: io error naming it",
          raises(lambda: skinsolve.load("/nonexistent/x.glb"), "io", "/nonexistent/x.glb"))
    with tempfile.NamedTemporaryFile(suffix=".glb") as f:
        f.write(b"glTF garbage")
        f.flush()
        check("malformed file: error naming it", raises(lambda: skinsolve.load(f.name), None,
                                                        os.path.basename(f.name)))


def test_load_notes():
    # an .obj whose .mtl lies outside its folder: read without it, and the
    # load's note (the CLI's warning) names it; a clean file has none
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "model"))
        with open(os.path.join(d, "o.mtl"), "w") as f:
            f.write("newmtl mat\nKd 1 1 1\n")
        obj = os.path.join(d, "model", "up.obj")
        with open(obj, "w") as f:
            f.write("mtllib ../o.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl mat\nf 1 2 3\n")
        m = skinsolve.load(obj)
        check("load notes: the .mtl outside the folder is named",
              any("o.mtl' lies outside the model's folder: not read" in w for w in m.warnings), str(m.warnings))
    check("load notes: none for the Fox", skinsolve.load(FOX).warnings == [])


def test_inspect_and_skin(fox):
    info = json.loads(cli("info", FOX, "--json").stdout)
    check("clips", [c.name for c in fox.clips] == sorted(c["name"] for c in info["clips"])
          or [c.name for c in fox.clips] == [c["name"] for c in info["clips"]])
    check("joint count", fox.joint_count == len(fox.parents) == fox.rest.shape[0])
    check("parents before children", all(p < i for i, p in enumerate(fox.parents)))
    check("vertex count 1728", fox.vertex_count == 1728, str(fox.vertex_count))
    w = fox.parts[0].weights
    check("weights sum to 1", np.abs(w.sum(1) - 1).max() < 1e-3)
    check("views share memory (no copy)", not fox.parts[0].positions.flags.owndata)
    d = info.get("diagonal", info.get("D"))
    check("D as info --json", d is not None and abs(fox.diagonal - d) < 1e-9 * d, f"{d}")
    walk = fox.clip("Walk")
    kt = walk.key_times()
    check("key times ascending", len(kt) > 1 and np.all(np.diff(kt) > 0))
    check("unknown clip lists the clips",
          raises(lambda: fox.clip("Nope"), "not_found", "Walk"))
    with tempfile.TemporaryDirectory() as d:
        for method, extra in (("lbs", []), ("dqs", ["--dqs"])):
            out = os.path.join(d, f"{method}.f32")
            cli("pose", FOX, "--clip", "Walk", "--time", "0.5", *extra, "-o", out)
            ref = np.fromfile(out, "<f4").reshape(-1, 3)
            got = fox.skin("Walk", 0.5, method=method)
            check(f"skin {method} == pose CLI", got.shape == ref.shape
                  and np.abs(got - ref).max() <= 1e-5 * fox.diagonal,
                  f"{got.shape} {ref.shape} {np.abs(got - ref).max() if got.shape == ref.shape else ''}")
        rest = fox.skin(None)
        moved = fox.skin("Walk", 0.5)
        check("a pose moves the surface", np.abs(rest - moved).max() > 1e-3 * fox.diagonal)
        loc = fox.sample("Walk", 0.5)
        check("skin(locals=sample) == skin(clip)", np.array_equal(fox.skin(locals=loc), moved))
        m = fox.model_matrices(loc)
        check("model matrices (J,4,4) column-major", m.shape == (fox.joint_count, 4, 4)
              and np.allclose(m[:, :3, 3], 0.0) and np.allclose(m[:, 3, 3], 1.0))


def test_check_repair():
    path = None
    if os.path.isdir(CESIUM):
        for n in sorted(os.listdir(CESIUM)):
            if n.endswith((".glb", ".gltf")):
                path = os.path.join(CESIUM, n)
                break
    if path is None:
        print("note: CesiumMan absent, check/repair on real bad weights skipped")
        return
    m = skinsolve.load(path)
    res = m.check()
    ref = json.loads(cli("check", path, "--json", ok=(0, 1)).stdout)
    check("check finds what the CLI finds",
          res.error_count == ref.get("errors", ref.get("error_count"))
          and res.warning_count == ref.get("warnings", ref.get("warning_count")),
          f"{res.error_count}/{res.warning_count} vs {ref.get('errors')}/{ref.get('warnings')}")
    check("findings name the file", res.findings and os.path.basename(path) in res.findings[0].message)
    check("total_by_kind matches the CLI's by_kind", res.total_by_kind == ref.get("by_kind"),
          f"{res.total_by_kind} vs {ref.get('by_kind')}")
    # every kind the library names is counted (the mirror stopped at 11 kinds)
    with tempfile.TemporaryDirectory() as d:
        inf = os.path.join(d, "inf.gltf")
        with open(inf, "w") as f:  # a skeleton whose rest translation is +inf (1e39)
            f.write('{"asset":{"version":"2.0"},"nodes":[{"name":"a","translation":[0,1e39,0]}]}')
        ri = skinsolve.load(inf).check()
        check("a kind past the 11th is counted", ri.total_by_kind.get("nonfinite_transform") == 1,
              str(ri.total_by_kind))
    rep = m.repair(max_influences=4)
    check("repair normalised vertices", rep.normalized > 0, repr(rep))
    after = m.check()
    check("no error after repair", after.error_count == 0, str(after.findings[:2]))
    check("max 4 influences after repair(max_influences=4)",
          all(p.weights.shape[1] <= 4 or np.count_nonzero(p.weights, 1).max() <= 4
              for p in m.parts if p.skin >= 0))
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "fixed.glb")
        m.write(out)
        again = skinsolve.load(out)
        check("written file loads and checks clean", again.check().error_count == 0)
        check("write to a folder that does not exist fails with io",
              raises(lambda: m.write(os.path.join(d, "no", "x.glb")), "io"))


def test_bake(fox, tgt):
    ref = json.loads(cli("bake", "--source", FOX, "--target", FOX_T, "--fps", "24",
                         "--json").stdout)
    calls = []
    res = skinsolve.bake(fox, tgt, fps=24, keep_surfaces=True,
                         progress=lambda c, f, n: calls.append((c, f, n)))
    got = res.to_json()
    for k in ("constraints", "target_vertices", "target_joints", "diagonal"):
        check(f"bake {k} == --json", got[k] == ref[k], f"{got[k]} {ref[k]}")
    # the alignment as --json prints it (seconds aside: wall time)
    for k, v in ref["alignment"].items():
        if k != "seconds":
            check(f"alignment {k} == --json", got["alignment"].get(k) == v, f"{got['alignment'].get(k)} {v}")
    check("same clips", [c["name"] for c in got["clips"]] == [c["name"] for c in ref["clips"]])
    for a, b in zip(got["clips"], ref["clips"]):
        for k in ("frames", "mode", "suspect", "bcd_polished_frames", "bcd_unconverged_frames", "retried_frames"):
            check(f"{a['name']} {k}", a[k] == b[k], f"{a[k]} {b[k]}")
        for k in ("quality", "mean_error_pct", "worst_error_pct", "sweeps_per_frame", "mean_motion_pct"):
            check(f"{a['name']} {k} == --json", abs(a[k] - b[k]) <= 1e-12 * max(1, abs(b[k])),
                  f"{a[k]!r} {b[k]!r}")
        check(f"{a['name']} per-frame errors == --json",
              np.allclose(a["frame_mean_error_pct"], b["frame_mean_error_pct"], rtol=1e-6)
              and np.allclose(a["frame_worst_error_pct"], b["frame_worst_error_pct"], rtol=1e-6))
        check(f"{a['name']} joints (diagnosis) == --json",
              [(x["name"], x["vertices"], x["worst_vertex"]) for x in a["joints"]]
              == [(x["name"], x["vertices"], x["worst_vertex"]) for x in b["joints"]]
              and all(abs(x["share_pct"] - y["share_pct"]) <= 1e-9 for x, y in zip(a["joints"], b["joints"])),
              f"{a['joints'][:1]} {b['joints'][:1]}")
    c = res.clips[0]
    v, j = res.target_vertices, res.target_joints
    check("per-frame arrays", c.locals.shape == (c.frames, j, 10) and c.times.shape == (c.frames,)
          and c.solved_surface.shape == (c.frames, v, 3) and c.vertex_error.shape == (c.frames, v))
    check("no rigid parts: no rigid surfaces", c.rigid_solved_surface is None and c.rigid_vertex_error is None)
    e = np.linalg.norm(c.solved_surface - c.target_surface, axis=2)
    check("vertex_error = |solved - target|", np.allclose(e, c.vertex_error, atol=1e-4 * res.diagonal))
    check("mean error from vertex_error",
          abs(c.vertex_error.mean() / res.diagonal * 100 - c.mean_error_pct) < 1e-4)
    # the solved locals skin the target to solved_surface
    mid = c.frames // 2
    s = tgt.skin(locals=c.locals[mid])
    check("target.skin(solved locals) == solved_surface",
          np.abs(s - c.solved_surface[mid]).max() < 1e-4 * res.diagonal)
    check("progress called per frame + end",
          len(calls) == sum(x.frames for x in res.clips) + len(res.clips), str(len(calls)))
    check("unknown clip lists the clips",
          raises(lambda: skinsolve.bake(fox, tgt, clips="Nope"), "not_found", "Walk"))
    def boom(c, f, n):
        raise KeyboardInterrupt("stop")
    try:
        skinsolve.bake(fox, tgt, clips="Walk", progress=boom)
        check("an exception in progress is re-raised", False)
    except KeyboardInterrupt:
        check("an exception in progress is re-raised", True)
    check("bad mode", raises(lambda: skinsolve.bake(fox, tgt, mode="fast"), "argument", "free"))
    check("bad max_residual_pct", raises(lambda: skinsolve.bake(fox, tgt, clips="Walk", max_residual_pct=150),
                                         "argument", "max_residual_pct"))
    one = skinsolve.bake(fox, tgt, clips=["Walk"], mode="both", fps=24)
    check("mode both: free + rotation-only", [x.mode for x in one.clips] == ["free", "rotation-only"])
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "baked.glb")
        res.write(out)
        back = skinsolve.load(out)
        check("written bake has the clips", {x.name for x in back.clips} >= {"Run", "Walk"})
        html = os.path.join(d, "r.html")
        res.write_report(html)
        check("report written", os.path.getsize(html) > 10000)
        check("report needs surfaces", raises(lambda: one.write_report(html), "argument"))


def test_from_arrays(fox):
    """A model rebuilt from Fox's arrays skins exactly like Fox and bakes onto itself."""
    m = fox._m
    clips = []
    for ci in range(m.clip_count):
        c = m.clips[ci]
        tracks = []
        for t in range(c.track_count):
            tr = c.tracks[t]
            if tr.interpolation != 0:
                continue
            comps = 4 if tr.path == 1 else 3
            k = tr.key_count
            tracks.append({"joint": tr.joint, "path": ["translation", "rotation", "scale"][tr.path],
                           "times": np.ctypeslib.as_array(tr.times, (k,)).copy(),
                           "values": np.ctypeslib.as_array(tr.values, (k * comps,)).reshape(k, comps)})
        clips.append({"name": c.name.decode(), "tracks": tracks})
    skins = [{"name": s.name, "joints": s.joints, "inverse_bind": s.inverse_bind} for s in fox.skins]
    parts = [{"name": p.name, "skin": p.skin, "node": p.node, "positions": p.positions,
              "normals": p.normals, "joints": p.joints, "weights": p.weights,
              "indices": p.indices} for p in fox.parts]
    b = skinsolve.Model.from_arrays(fox.joint_names, fox.parents, fox.rest, skins, parts, clips,
                                    source_path="rebuilt-fox")
    check("rebuilt skins like the original",
          np.array_equal(b.skin("Walk", 0.4), fox.skin("Walk", 0.4)))
    r = skinsolve.bake(b, b, clips="Walk")
    c = r.clips[0]
    check("control bake of the rebuilt model: quality ~100 %", c.quality > 99.99 and
          c.worst_error_pct < 0.01, f"{c.quality} {c.worst_error_pct}")
    w = parts[0]["weights"].copy()
    w[5, 0] = np.nan
    bad = dict(parts[0], weights=w)
    check("NaN weight refused naming the vertex",
          raises(lambda: skinsolve.Model.from_arrays(fox.joint_names, fox.parents, fox.rest,
                                                     skins, [bad], source_path="bad-fox"),
                 "invalid", "bad-fox"))
    check("wrong rest shape refused",
          raises(lambda: skinsolve.Model.from_arrays(fox.joint_names, fox.parents, fox.rest[:3],
                                                     skins, parts), "argument", "rest"))


def test_help_and_main():
    doc = skinsolve.bake.__doc__
    helptext = cli("bake", "--help").stdout
    opts = sorted({w.strip("[],") for w in helptext.split() if w.startswith(("--", "-o"))
                   and len(w.strip("[],")) > 1} - {"--help"})
    missing = [o for o in opts if o not in doc]
    check("help(skinsolve.bake) names every CLI bake option", opts and not missing, str(missing))
    env = dict(os.environ)
    p = subprocess.run([sys.executable, "-m", "skinsolve", "info", FOX, "--json"],
                       capture_output=True, text=True, env=env)
    q = cli("info", FOX, "--json")
    check("python3 -m skinsolve info == CLI", p.returncode == 0 and p.stdout == q.stdout,
          p.stderr[-300:])
    p = subprocess.run([sys.executable, "-m", "skinsolve", "bake", "--nope"],
                       capture_output=True, text=True, env=env)
    check("python3 -m skinsolve passes the exit code", p.returncode == 2, str(p.returncode))


def main():
    if not (os.path.exists(FOX) and os.path.exists(FOX_T)):
        print(f"SKIPPED: {FOX} / {FOX_T} not found (SKS_SHARED_DATA)")
        return 77
    fox = skinsolve.load(FOX)
    tgt = skinsolve.load(FOX_T)
    for t in (test_abi, test_errors, test_load_notes, lambda: test_inspect_and_skin(fox), test_check_repair,
              lambda: test_bake(fox, tgt), lambda: test_from_arrays(fox), test_help_and_main):
        t()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
