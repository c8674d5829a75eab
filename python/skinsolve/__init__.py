"""skinsolve — Python bindings of libskinsolve (ctypes, numpy in and out).

    import skinsolve
    fox = skinsolve.load("Fox.glb")
    print(fox.joint_names, [c.name for c in fox.clips], fox.diagonal)
    pos = fox.skin("Walk", 0.5, method="dqs")          # (N, 3) float32
    res = skinsolve.bake(fox, skinsolve.load("fox_rig_autoweights.glb"), fps=24)
    for c in res.clips:
        print(c.name, c.quality, c.mean_error_pct, c.worst_error_pct)
    res.write("baked.glb")

Arrays the library owns are returned as numpy views without copies (they stay
valid while the owning Model / BakeResult lives). Matrices are column-major as
in the C API: an (n, 4, 4) array is indexed [i, column, row]; transforms are
(n, 10) float32 rows: translation xyz, rotation quaternion xyzw, scale xyz.
Errors raise SkinsolveError carrying the library's message (file and place).
"""
import ctypes as C
import math

import numpy as np

from . import _abi as A
from ._lib import lib, libc, library_path, cli_path

__all__ = ["SkinsolveError", "Model", "Part", "Skin", "Clip", "Finding", "CheckResult",
           "RepairReport", "BakedClip", "BakeResult", "load", "bake", "abi_mismatches",
           "library_path", "cli_path", "__version__"]
__version__ = "0.1.0"

_RESULT_NAMES = ["ok", "argument", "io", "parse", "unsupported", "invalid", "out_of_memory",
                 "not_found"]
_MODES = {"free": 0, "rotation-only": 1, "both": 2}
_MODE_NAMES = {0: "free", 1: "rotation-only"}
_SOLVERS = {"default": 0, "bcd": 1}
_CORRESPOND = {"auto": 0, "nearest-vertex": 1, "closest-point": 2}
_ALIGN = {"auto": 0, "none": 1}
_PATHS = {"translation": 0, "rotation": 1, "scale": 2}
_COMPS = {0: 3, 1: 4, 2: 3}


class SkinsolveError(Exception):
    """A libskinsolve call failed. `code` is the sks_result name ("io", "parse",
    "invalid", "not_found", ...), `message` the library's one-line message."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def _raise(rc, err):
    name = _RESULT_NAMES[rc] if 0 <= rc < len(_RESULT_NAMES) else str(rc)
    msg = err.message.decode("utf-8", "replace") if err is not None else ""
    raise SkinsolveError(name, msg or lib.sks_result_string(rc).decode())


def _call(fn, *args):
    err = A.sks_error()
    rc = fn(*args, C.byref(err))
    if rc != 0:
        _raise(rc, err)


def _view(ptr, n, dtype, shape, owner):
    """numpy view of n C elements at ptr (no copy); keeps owner alive."""
    if not ptr or n == 0:
        return np.zeros(shape, dtype)
    ct = np.ctypeslib.as_ctypes_type(np.dtype(dtype))
    buf = (ct * n).from_address(C.cast(ptr, C.c_void_p).value)
    buf._owner = owner
    return np.frombuffer(buf, dtype).reshape(shape)


def abi_mismatches():
    """Differences between the module's struct mirrors and the loaded library
    (empty when they agree; import already refuses a mismatching library)."""
    return A.mismatches(lib)


# ---- model ------------------------------------------------------------------

class Skin:
    """A skin: `joints` (skeleton joint indices, int32) and `inverse_bind`
    ((n, 4, 4) float32, column-major [i, col, row]); views into the model."""

    def __init__(self, model, s):
        self.name = s.name.decode() if s.name else ""
        self.joints = _view(s.joints, s.joint_count, np.int32, (s.joint_count,), model)
        self.inverse_bind = _view(s.inverse_bind, s.joint_count * 16, np.float32,
                                  (s.joint_count, 4, 4), model)


class Part:
    """A mesh part (views into the model): positions (V, 3), normals (V, 3) or
    None, uvs (V, 2) or None, joints (V, K) uint16 skin joint indices, weights
    (V, K), indices (T, 3) uint32; skin index (-1 = rigid), node joint."""

    def __init__(self, model, p):
        v, k = p.vertex_count, p.influence_count
        self.name = p.name.decode() if p.name else ""
        self.skin, self.node, self.material = p.skin, p.node, p.material
        self.vertex_count = v
        self.positions = _view(p.positions, 3 * v, np.float32, (v, 3), model)
        self.normals = _view(p.normals, 3 * v, np.float32, (v, 3), model) if p.normals else None
        self.uvs = _view(p.uvs, 2 * v, np.float32, (v, 2), model) if p.uvs else None
        self.joints = _view(p.joints, k * v, np.uint16, (v, k), model)
        self.weights = _view(p.weights, k * v, np.float32, (v, k), model)
        self.indices = _view(p.indices, p.index_count, np.uint32, (p.index_count // 3, 3), model)


class Clip:
    """A keyframe clip: name, duration (s), track_count."""

    def __init__(self, model, index, c):
        self._model, self._index = model, index
        self.name = c.name.decode() if c.name else ""
        self.duration = c.duration
        self.track_count = c.track_count

    def key_times(self):
        """Sorted union of every key time (the bake's default frame times), float32."""
        p = C.POINTER(C.c_float)()
        n = C.c_size_t()
        _call(lib.sks_clip_key_times, C.byref(self._model._m.clips[self._index]), C.byref(p),
              C.byref(n))
        try:
            return np.ctypeslib.as_array(p, (n.value,)).copy() if n.value else np.zeros(0, np.float32)
        finally:
            libc.free(C.cast(p, C.c_void_p))


class Finding:
    """One check finding: kind ("weight_sum", ...), severity ("error"/"warning"),
    part, vertex, joint (-1 = none) and the message naming file and place."""

    def __init__(self, f):
        self.kind = lib.sks_finding_kind_name(f.kind).decode()
        self.severity = "error" if f.severity == 1 else "warning"
        self.part, self.vertex, self.joint = f.part, f.vertex, f.joint
        self.message = f.message.decode("utf-8", "replace")

    def __repr__(self):
        return f"Finding({self.severity}: {self.message})"


class CheckResult:
    """`findings` (list of Finding, capped at max_items), `error_count`,
    `warning_count` (all, even when capped), `total_by_kind` {kind: count}."""

    def __init__(self, fs):
        self.findings = [Finding(fs.items[i]) for i in range(fs.count)]
        self.error_count, self.warning_count = fs.error_count, fs.warning_count
        # every kind the library names (total_by_kind has 16 slots; was range(11),
        # which missed nonfinite_transform, nonfinite_key and rest_singular)
        self.total_by_kind = {lib.sks_finding_kind_name(k).decode(): fs.total_by_kind[k]
                              for k in range(16)
                              if fs.total_by_kind[k] and lib.sks_finding_kind_name(k).decode() != "unknown"}

    @property
    def ok(self):
        return self.error_count == 0


class RepairReport:
    """What repair changed: normalized, negatives_clamped, nans_zeroed,
    out_of_range_dropped, zero_weight_vertices, influences_limited."""

    def __init__(self, r):
        for name, _ in A.sks_repair_report._fields_:
            setattr(self, name, getattr(r, name))

    def __repr__(self):
        return "RepairReport(" + ", ".join(f"{n}={getattr(self, n)}"
                                           for n, _ in A.sks_repair_report._fields_) + ")"


class Model:
    """A rig: skeleton (joint_names, parents, rest), skins, parts, clips, and
    the load's notes (warnings: list of str).

    Create with skinsolve.load(path) or Model.from_arrays(...). Array attributes
    are views into the C model (no copies) valid while the Model lives."""

    def __init__(self):
        self._m = A.sks_model()
        self._refresh()

    def _refresh(self):
        m = self._m
        sk = m.skeleton
        j = sk.joint_count
        self.path = m.source_path.decode() if m.source_path else ""
        self.joint_names = [sk.names[i].decode() for i in range(j)]
        self.parents = _view(sk.parents, j, np.int32, (j,), self)
        self.rest = _view(sk.rest, 10 * j, np.float32, (j, 10), self)
        self.skins = [Skin(self, m.skins[i]) for i in range(m.skin_count)]
        self.parts = [Part(self, m.parts[i]) for i in range(m.part_count)]
        self.clips = [Clip(self, i, m.clips[i]) for i in range(m.clip_count)]
        # the load's notes, one line each naming the file: what was left out
        # and why, or how the file was read (a Draco glTF through Assimp);
        # the CLI prints them as warnings
        self.warnings = [m.warnings[i].decode("utf-8", "replace") if m.warnings[i] else ""
                         for i in range(m.warning_count)]

    def close(self):
        """Frees the C model now (views taken from it become invalid)."""
        if getattr(self, "_m", None) is not None:
            lib.sks_model_free(C.byref(self._m))
            self._m = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _ptr(self):
        if self._m is None:
            raise SkinsolveError("argument", "model was closed")
        return C.byref(self._m)

    @property
    def joint_count(self):
        return len(self.joint_names)

    @property
    def vertex_count(self):
        """Vertices over skinned parts (the surface the bake sees)."""
        return lib.sks_model_vertex_count(self._ptr())

    @property
    def total_vertex_count(self):
        """Vertices over all parts (the rows skin() returns)."""
        return lib.sks_model_total_vertex_count(self._ptr())

    @property
    def diagonal(self):
        """D: bounding-box diagonal of the bind pose (MISSION.md)."""
        return lib.sks_bake_diagonal(self._ptr())

    def joint(self, name):
        """Index of the joint called name; KeyError if none."""
        i = lib.sks_skeleton_find(C.byref(self._m.skeleton), name.encode())
        if i < 0:
            raise KeyError(f"{self.path}: no joint '{name}'")
        return i

    def clip(self, name):
        """The Clip called name; SkinsolveError('not_found') listing the clips."""
        for c in self.clips:
            if c.name == name:
                return c
        raise SkinsolveError("not_found", f"{self.path}: no clip '{name}' (clips: "
                             + ", ".join(c.name for c in self.clips) + ")")

    def sample(self, clip, time, loop=False, nlerp=False):
        """Local joint transforms of clip (name or Clip) at time seconds, (J, 10)
        float32; joints without tracks keep the rest pose. clip=None: the rest."""
        j = self.joint_count
        out = np.zeros((j, 10), np.float32)
        if clip is None:
            out[:] = self.rest
            return out
        c = self.clip(clip) if isinstance(clip, str) else clip
        job = A.sks_sampling_job(
            clip=C.pointer(self._m.clips[c._index]),
            rest=self._m.skeleton.rest, joint_count=j, time=float(time), loop=int(bool(loop)),
            nlerp=int(bool(nlerp)),
            output=out.ctypes.data_as(C.POINTER(A.sks_transform)))
        if not lib.sks_sampling_job_run(C.byref(job)):
            raise SkinsolveError("argument", f"{self.path}: sampling clip '{c.name}' failed")
        return out

    def model_matrices(self, locals_):
        """Model-space matrices (J, 4, 4) float32 column-major from local
        transforms (J, 10) (forward kinematics)."""
        loc = np.ascontiguousarray(locals_, np.float32)
        j = self.joint_count
        if loc.shape != (j, 10):
            raise SkinsolveError("argument", f"locals must be ({j}, 10), got {loc.shape}")
        out = np.zeros((j, 4, 4), np.float32)
        job = A.sks_local_to_model_job(
            parents=self._m.skeleton.parents,
            locals=loc.ctypes.data_as(C.POINTER(A.sks_transform)), joint_count=j,
            models=out.ctypes.data_as(C.POINTER(A.sks_mat4)))
        if not lib.sks_local_to_model_job_run(C.byref(job)):
            raise SkinsolveError("invalid", f"{self.path}: local-to-model failed (bad hierarchy)")
        return out

    def skin(self, clip=None, time=0.0, method="lbs", loop=False, normals=False, locals=None):
        """Skins every part (skinned and rigid, part order) at clip/time, or with
        given local transforms (J, 10); method "lbs" or "dqs". Returns positions
        (N, 3) float32, or (positions, normals) with normals=True."""
        if method not in ("lbs", "dqs"):
            raise SkinsolveError("argument", f"method must be 'lbs' or 'dqs', not '{method}'")
        loc = self.sample(clip, time, loop) if locals is None else locals
        models = self.model_matrices(loc)
        n = self.total_vertex_count
        pos = np.zeros((n, 3), np.float32)
        nrm = np.zeros((n, 3), np.float32) if normals else None
        fp = C.POINTER(C.c_float)
        _call(lib.sks_skin_model, self._ptr(), models.ctypes.data_as(C.POINTER(A.sks_mat4)),
              1 if method == "dqs" else 0, pos.ctypes.data_as(fp),
              nrm.ctypes.data_as(fp) if normals else None)
        return (pos, nrm) if normals else pos

    def check(self, max_influences=0, tolerance=0.0, max_items=0):
        """Weight hygiene (as `skinsolve check`): returns CheckResult. tolerance:
        allowed |sum - 1| (0 = 1e-3); max_influences: kernel limit (0 = 8)."""
        opt = A.sks_check_options(sum_tolerance=tolerance, max_influences=max_influences,
                                  max_items=max_items)
        fs = A.sks_findings()
        try:
            _call(lib.sks_check, self._ptr(), C.byref(opt), C.byref(fs))
            return CheckResult(fs)
        finally:
            lib.sks_findings_free(C.byref(fs))

    def repair(self, max_influences=0):
        """Fixes the weights in place (as `skinsolve repair`): NaN/negative -> 0,
        out-of-range joints dropped, renormalised, all-zero vertices bound to their
        node; max_influences > 0 also keeps the K largest. Returns RepairReport."""
        r = A.sks_repair_report()
        _call(lib.sks_repair, self._ptr(), C.byref(r))
        if max_influences:
            _call(lib.sks_limit_influences, self._ptr(), int(max_influences))
        self._refresh()
        return RepairReport(r)

    def write(self, path):
        """Writes binary glTF (.glb) atomically (temp file + rename)."""
        opt = A.sks_gltf_write_options()
        _call(lib.sks_write_glb, str(path).encode(), self._ptr(), C.byref(opt))

    def copy(self):
        """Deep copy."""
        out = Model.__new__(Model)
        out._m = A.sks_model()
        _call(lib.sks_model_clone, self._ptr(), C.byref(out._m))
        out._refresh()
        return out

    @classmethod
    def from_arrays(cls, joint_names, parents, rest, skins, parts, clips=(),
                    source_path="<arrays>", check=True):
        """Builds a model from arrays (copied into C memory the library owns).

        joint_names: J names; parents: J ints (parent before child, -1 = root);
        rest: (J, 10) local rest transforms (t xyz, q xyzw, s xyz);
        skins: list of dicts {name, joints: (n,) skeleton indices,
        inverse_bind: (n, 4, 4) column-major [i, col, row]};
        parts: list of dicts {name, skin (index, -1 = rigid), node, positions
        (V, 3), normals (V, 3) optional, joints (V, K) skin joint indices,
        weights (V, K), indices (T, 3)};
        clips: list of dicts {name, tracks: [{joint, path "translation" |
        "rotation" | "scale", times (k,), values (k, 3 or 4)}]} (LINEAR).
        check=True runs check() and raises SkinsolveError on its first error."""
        self = cls.__new__(cls)
        self._m = m = A.sks_model()
        try:
            _fill(m, joint_names, parents, rest, skins, parts, clips, source_path)
            self._refresh()
        except BaseException:
            lib.sks_model_free(C.byref(m))
            self._m = None
            raise
        if check:
            res = self.check()
            if res.error_count:
                first = next(f for f in res.findings if f.severity == "error")
                raise SkinsolveError("invalid", f"{first.message} ({res.error_count} error(s))")
        return self


def _calloc(n, ctype):
    p = libc.calloc(max(n, 1), C.sizeof(ctype))
    if not p:
        raise MemoryError("calloc failed")
    return C.cast(p, C.POINTER(ctype))


def _cstr(s):
    b = str(s).encode("utf-8")
    p = _calloc(len(b) + 1, C.c_char)
    C.memmove(p, b, len(b))
    return C.cast(p, C.c_char_p)


def _carray(arr, dtype, ctype, shape_check, what):
    a = np.ascontiguousarray(arr, dtype)
    if shape_check is not None and a.shape != shape_check:
        raise SkinsolveError("argument", f"{what}: shape {a.shape}, expected {shape_check}")
    p = _calloc(a.size, ctype)
    if a.size:
        C.memmove(p, a.ctypes.data, a.nbytes)
    return p


def _fill(m, joint_names, parents, rest, skins, parts, clips, source_path):
    j = len(joint_names)
    m.source_path = _cstr(source_path)
    m.skeleton.joint_count = 0
    names = _calloc(j, C.c_char_p)
    m.skeleton.names = names
    m.skeleton.joint_count = j
    for i, n in enumerate(joint_names):
        names[i] = _cstr(n)
    m.skeleton.parents = _carray(parents, np.int32, C.c_int32, (j,), "parents")
    m.skeleton.rest = C.cast(_carray(rest, np.float32, C.c_float, (j, 10), "rest"),
                             C.POINTER(A.sks_transform))
    m.skins = _calloc(len(skins), A.sks_skin)
    m.skin_count = len(skins)
    for i, s in enumerate(skins):
        js = np.asarray(s["joints"])
        n = len(js)
        m.skins[i].name = _cstr(s.get("name", f"skin{i}"))
        m.skins[i].joint_count = n
        m.skins[i].joints = _carray(js, np.int32, C.c_int32, (n,), f"skin {i} joints")
        ib = np.asarray(s["inverse_bind"], np.float32).reshape(n, 16)
        m.skins[i].inverse_bind = C.cast(_carray(ib, np.float32, C.c_float, None, ""),
                                         C.POINTER(A.sks_mat4))
    m.parts = _calloc(len(parts), A.sks_mesh_part)
    m.part_count = len(parts)
    for i, p in enumerate(parts):
        dst = m.parts[i]
        pos = np.asarray(p["positions"], np.float32)
        v = pos.shape[0]
        dst.name = _cstr(p.get("name", f"part{i}"))
        dst.material = -1
        dst.skin = int(p.get("skin", -1))
        dst.node = int(p.get("node", 0))
        dst.vertex_count = v
        dst.positions = _carray(pos, np.float32, C.c_float, (v, 3), f"part {i} positions")
        if p.get("normals") is not None:
            dst.normals = _carray(p["normals"], np.float32, C.c_float, (v, 3), f"part {i} normals")
        if dst.skin >= 0:
            w = np.asarray(p["weights"], np.float32)
            k = w.shape[1] if w.ndim == 2 else 0
            if not 1 <= k <= 8:
                raise SkinsolveError("argument", f"part {i}: weights must be (V, 1..8), got {w.shape}")
            dst.influence_count = k
            dst.joints = _carray(p["joints"], np.uint16, C.c_uint16, (v, k), f"part {i} joints")
            dst.weights = _carray(w, np.float32, C.c_float, (v, k), f"part {i} weights")
        idx = np.asarray(p.get("indices", np.zeros((0, 3))), np.uint32).reshape(-1)
        dst.index_count = idx.size
        dst.indices = _carray(idx, np.uint32, C.c_uint32, None, "")
    m.clips = _calloc(len(clips), A.sks_clip)
    m.clip_count = len(clips)
    for i, c in enumerate(clips):
        dst = m.clips[i]
        dst.name = _cstr(c["name"])
        tracks = c["tracks"]
        dst.tracks = _calloc(len(tracks), A.sks_track)
        dst.track_count = len(tracks)
        dur = 0.0
        for t, tr in enumerate(tracks):
            tt = dst.tracks[t]
            path = _PATHS[tr["path"]]
            comps = _COMPS[path]
            times = np.asarray(tr["times"], np.float32)
            k = times.size
            if k and np.any(np.diff(times) < 0):
                raise SkinsolveError("argument", f"clip '{c['name']}' track {t}: times not ascending")
            tt.joint = int(tr["joint"])
            if not 0 <= tt.joint < j:
                raise SkinsolveError("argument", f"clip '{c['name']}' track {t}: joint {tt.joint} "
                                     f"out of range (0..{j - 1})")
            tt.path = path
            tt.interpolation = 0
            tt.key_count = k
            tt.times = _carray(times, np.float32, C.c_float, (k,), "times")
            tt.values = _carray(tr["values"], np.float32, C.c_float, (k, comps),
                                f"clip '{c['name']}' track {t} values")
            if k:
                dur = max(dur, float(times[-1]))
        dst.duration = dur


def load(path, force_assimp=False):
    """Loads a rig (glTF natively; FBX, Collada, X, BVH ... through Assimp) as
    a Model. Raises SkinsolveError naming the file and the problem."""
    opt = A.sks_load_options(force_assimp=int(bool(force_assimp)))
    m = Model.__new__(Model)
    m._m = A.sks_model()
    try:
        _call(lib.sks_load, str(path).encode(), C.byref(opt), C.byref(m._m))
    except SkinsolveError:
        lib.sks_model_free(C.byref(m._m))
        m._m = None
        raise
    m._refresh()
    return m


# ---- bake -------------------------------------------------------------------

class BakedClip:
    """One baked clip. Numbers as `skinsolve bake --json`: quality in percent
    (None when the clip does not move), mean_error_pct / worst_error_pct in % of
    D, solve_ms, sweeps_per_frame, mean_motion_pct, suspect (the numbers
    contradict each other), bcd_polished_frames / bcd_unconverged_frames
    (solver "bcd": frames the default LM finished / left unconverged),
    retried_frames (frames solved again from per-bone fits). Arrays (views): times (F,), locals (F, J, 10)
    solved local transforms, frame_mean_error_pct / frame_worst_error_pct (F,);
    with keep_surfaces: target_surface / solved_surface (F, V, 3), vertex_error
    (F, V) in model units (V: the skinned parts' vertices), and the same for the
    rigid parts' R vertices as rigid_target_surface / rigid_solved_surface
    (F, R, 3), rigid_vertex_error (F, R) (None when R = 0). joints: the residual per dominant joint (as
    `bake --json`'s "joints"), largest share first."""

    def __init__(self, owner, c, v, joint_names=(), rv=0):
        f, j = c.frame_count, c.joint_count
        self.name = c.name.decode()
        self.mode = _MODE_NAMES.get(c.mode, str(c.mode))
        self.frames = f
        self.quality_fraction = c.quality
        self.quality = None if math.isnan(c.quality) else c.quality * 100.0
        self.mean_error_pct = c.mean_error_pct
        self.worst_error_pct = c.worst_error_pct
        self.solve_ms = c.solve_ms
        self.sweeps_per_frame = c.sweeps_per_frame
        self.mean_motion_pct = c.mean_motion_pct
        self.suspect = bool(c.suspect)
        self.bcd_polished_frames = c.bcd_polished_frames
        self.bcd_unconverged_frames = c.bcd_unconverged_frames
        self.retried_frames = c.retried_frames
        self.times = _view(c.times, f, np.float32, (f,), owner)
        self.locals = _view(c.locals, f * j * 10, np.float32, (f, j, 10), owner)
        self.frame_mean_error_pct = _view(c.frame_mean_error_pct, f, np.float32, (f,), owner)
        self.frame_worst_error_pct = _view(c.frame_worst_error_pct, f, np.float32, (f,), owner)
        self.target_surface = (_view(c.target_surface, f * v * 3, np.float32, (f, v, 3), owner)
                               if c.target_surface else None)
        self.solved_surface = (_view(c.solved_surface, f * v * 3, np.float32, (f, v, 3), owner)
                               if c.solved_surface else None)
        self.vertex_error = (_view(c.vertex_error, f * v, np.float32, (f, v), owner)
                             if c.vertex_error else None)
        self.rigid_target_surface = (_view(c.rigid_target_surface, f * rv * 3, np.float32, (f, rv, 3), owner)
                                     if c.rigid_target_surface and rv else None)
        self.rigid_solved_surface = (_view(c.rigid_solved_surface, f * rv * 3, np.float32, (f, rv, 3), owner)
                                     if c.rigid_solved_surface and rv else None)
        self.rigid_vertex_error = (_view(c.rigid_vertex_error, f * rv, np.float32, (f, rv), owner)
                                   if c.rigid_vertex_error and rv else None)
        d = c.diagnosis
        self.joints = [_joint_json(d.joints[k], joint_names) for k in range(d.joint_count)]
        self.unattributed_share_pct = d.unattributed_share * 100.0

    def to_json(self):
        return {"name": self.name, "frames": self.frames, "quality": self.quality,
                "mean_error_pct": self.mean_error_pct, "worst_error_pct": self.worst_error_pct,
                "solve_ms": self.solve_ms, "mode": self.mode,
                "sweeps_per_frame": self.sweeps_per_frame,
                "mean_motion_pct": self.mean_motion_pct, "suspect": self.suspect,
                "bcd_polished_frames": self.bcd_polished_frames,
                "bcd_unconverged_frames": self.bcd_unconverged_frames,
                "retried_frames": self.retried_frames,
                "frame_mean_error_pct": [float(x) for x in self.frame_mean_error_pct],
                "frame_worst_error_pct": [float(x) for x in self.frame_worst_error_pct],
                "joints": self.joints, "unattributed_share_pct": self.unattributed_share_pct}


def _joint_json(j, names):
    """One entry of a clip's "joints" (README "Diagnosis")."""
    return {"joint": j.joint,
            "name": names[j.joint] if 0 <= j.joint < len(names) else f"joint {j.joint}",
            "vertices": j.vertex_count, "share_pct": j.share * 100.0,
            "mean_error_pct": j.mean_error_pct, "worst_error_pct": j.worst_error_pct,
            "worst_vertex": j.worst_vertex, "worst_frame": j.worst_frame}


class BakeResult:
    """Result of bake(): clips (list of BakedClip), constraints,
    target_vertices, target_joints, diagonal (D of the target bind pose),
    alignment (dict: what `bake --json` prints as "alignment").
    to_json() gives the dict `skinsolve bake --json` prints; apply() the target
    Model with the baked clips appended; write(path) writes it as .glb."""

    def __init__(self, source, target, r):
        self._r = r
        self._source = source
        self._target = target
        self.constraints = r.constraint_count
        self.target_vertices = r.target_vertex_count
        self.target_joints = r.target_joint_count
        self.diagonal = r.diagonal
        a = r.alignment
        nf = min(int(a.finalists), 4)  # SKS_BAKE_FINALISTS (solve.h), as _abi.py's arrays
        # what `skinsolve bake --json` prints as "alignment" (README "Align")
        self.alignment = {
            "applied": bool(a.applied), "scale": a.scale, "angle_deg": a.angle_deg,
            "offset": [a.offset[k] for k in range(3)], "same_mesh": bool(r.correspondence_identity),
            "same_surface": bool(a.same_surface), "subset": bool(a.subset),
            "mean_distance_pct": r.correspondence_mean_pct, "registered": bool(a.registered),
            "similarity_distance_pct": a.similarity_residual_pct, "limb_rematched": a.limb_rematched,
            "over_default_limit": bool(a.over_default_limit), "mirrored": bool(a.mirrored),
            "label_agreement": None if a.label_agreement != a.label_agreement else a.label_agreement,
            "head_agreement": None if a.head_agreement != a.head_agreement else a.head_agreement,
            "up_deg": None if a.up_deg != a.up_deg else a.up_deg,
            "facing_deg": None if a.facing_deg != a.facing_deg else a.facing_deg,
            "facing_by": (lambda b: None if b is None else b.decode())(lib.sks_bake_facing_by(C.byref(a))),
            "finalists": [{"registered": bool(a.finalist_registered[k]), "scale": a.finalist_scale[k],
                           "angle_deg": a.finalist_angle_deg[k],
                           "trial_quality_pct": None if a.trial_quality[k] != a.trial_quality[k]
                           else 100.0 * a.trial_quality[k],
                           "label_agreement": None if a.finalist_label_agreement[k] != a.finalist_label_agreement[k]
                           else a.finalist_label_agreement[k],
                           "head_agreement": None if a.finalist_head_agreement[k] != a.finalist_head_agreement[k]
                           else a.finalist_head_agreement[k],
                           "up_deg": None if a.finalist_up_deg[k] != a.finalist_up_deg[k] else a.finalist_up_deg[k],
                           "facing_deg": None if a.finalist_facing_deg[k] != a.finalist_facing_deg[k]
                           else a.finalist_facing_deg[k],
                           "registration_choice": k == a.finalist_registration, "kept": k == a.finalist_chosen}
                          for k in range(nf)],
            "seconds": a.seconds}
        self.clips = [BakedClip(self, r.clips[i], r.target_vertex_count, target.joint_names,
                                r.rigid_vertex_count)
                      for i in range(r.clip_count)]

    def __del__(self):
        try:
            if self._r is not None:
                lib.sks_bake_result_free(C.byref(self._r))
                self._r = None
        except Exception:
            pass

    def clip(self, name, mode=None):
        for c in self.clips:
            if c.name == name and (mode is None or c.mode == mode):
                return c
        raise KeyError(name)

    def to_json(self):
        return {"clips": [c.to_json() for c in self.clips], "constraints": self.constraints,
                "target_vertices": self.target_vertices, "target_joints": self.target_joints,
                "diagonal": self.diagonal, "alignment": self.alignment}

    def apply(self):
        """A copy of the target with the baked clips appended (keyed T/R/S per joint)."""
        out = Model.__new__(Model)
        out._m = A.sks_model()
        _call(lib.sks_bake_apply, self._target._ptr(), C.byref(self._r), C.byref(out._m))
        out._refresh()
        return out

    def write(self, path):
        """Writes the target with the baked clips as binary glTF (`bake -o`)."""
        self.apply().write(path)

    def write_report(self, path, title="skinsolve bake", max_mb=0):
        """Writes the self-contained HTML report with the viewer (`bake --report`);
        needs bake(..., keep_surfaces=True). max_mb: the file's budget
        (`--report-max-mb`; 0: 64 MB); over it the viewer shows every k-th
        frame (the numbers stay all frames'); refused when nothing fits."""
        if self._source is None or any(c.target_surface is None for c in self.clips):
            raise SkinsolveError("argument", "write_report needs bake(..., keep_surfaces=True)")
        r = self._r
        views, keep = [], []
        for m in (0, 1):  # one result per mode, side by side (as the CLI)
            idx = [i for i in range(r.clip_count) if r.clips[i].mode == m]
            if not idx:
                continue
            arr = (A.sks_baked_clip * len(idx))(*[r.clips[i] for i in idx])
            keep.append(arr)
            v = A.sks_bake_result.from_buffer_copy(r)
            v.clips = C.cast(arr, C.POINTER(A.sks_baked_clip))
            v.clip_count = len(idx)
            views.append(v)
        ptrs = (C.POINTER(A.sks_bake_result) * len(views))(*[C.pointer(v) for v in views])
        inp = A.sks_report_input(title=title.encode(), source=C.pointer(self._source._m),
                                 target=C.pointer(self._target._m),
                                 results=C.cast(ptrs, C.POINTER(C.POINTER(A.sks_bake_result))),
                                 result_count=len(views), max_bytes=int(max_mb * 1048576))
        _call(lib.sks_report_write_html, str(path).encode(), C.byref(inp))


def _choice(table, value, what):
    if value not in table:
        raise SkinsolveError("argument", f"{what} must be one of {', '.join(table)}, not '{value}'")
    return table[value]


def bake(source, target, clips=None, mode="free", max_constraints=0, fps=0.0,
         solver="default", correspondence="auto", align=None, keep_surfaces=False,
         progress=None, threads=0, max_residual_pct=0.0):
    """Surface-solve bake: plays each clip of `source`, records its skinned
    surface, and solves per frame the transforms of `target`'s joints so that
    target's own skinning reproduces that surface (`skinsolve bake`).

    source, target   Model (or a path, loaded with load()) (CLI --source SRC,
                     --target TGT)
    clips            clip name or list of names (CLI --clip NAME, repeatable);
                     None = every clip of the source
    mode             "free" (default): rotation + translation per joint;
                     "rotation-only": local translations fixed to the target's
                     rest offsets (roots free); "both": run both, side by side
                     (CLI --mode)
    max_constraints  solve on at most N target vertices (default 0 = 5000), but
                     at least 4 per weighted joint; metrics always use all of
                     them (CLI --max-constraints N)
    fps              resample each clip uniformly at F frames per second
                     (default 0: its key times) (CLI --fps F)
    solver           "default" (Levenberg-Marquardt over all joints) or "bcd"
                     (the seed's block coordinate descent with Horn fits)
                     (CLI --solver S)
    correspondence   "auto" (identical rest vertices -> identity, else closest
                     point), "nearest-vertex", "closest-point"
    align            "auto" (find the similarity between the two bind
                     surfaces) or "none" (CLI --align); None = "auto"
    max_residual_pct refusal limit: a pair whose target vertices are on
                     average farther than this (% D) from the aligned source
                     surface is refused (default 0 = 8); a larger one bakes it
                     and alignment["over_default_limit"] says so (CLI
                     --max-residual PCT)

    The models are already loaded: the CLI's load limits for non-glTF files
    (--max-memory, --timeout: Assimp runs in a child process under them)
    belong to load() here. So do the CLI's file-level choices: --clips
    ANIM_FILE... (clips taken from animation-only files onto the source's
    skeleton by joint name), --keep-clips / --replace-clips (what -o does with
    the target's own clips: BakeResult.apply() keeps them) and --quiet.
    keep_surfaces    True: fill per-frame target_surface / solved_surface /
                     vertex_error arrays (CLI --report needs them)
    progress         callable(clip_name, frame, frame_count), called per frame
                     and once with frame == frame_count at a clip's end
                     (always on the calling thread)
    threads          threads each clip's frames are solved on (default 0 =
                     every online CPU, 1 = serial; results agree to 1e-6 %D)
                     (CLI --threads N)

    Returns BakeResult; its clips carry the numbers `skinsolve bake --json`
    prints: quality % (None when a clip does not move), mean error %D, worst
    vertex %D (D = bounding-box diagonal of the target's bind pose), solve ms.
    Write the target with the baked clips with result.write("OUT.glb") (CLI -o),
    the HTML report with result.write_report("OUT.html") (CLI --report; bake
    with keep_surfaces=True; its max_mb is CLI --report-max-mb); result.to_json() is what CLI --json prints.
    Raises SkinsolveError with the library's message (e.g. an unknown clip lists
    the available ones)."""
    if isinstance(source, str):
        source = load(source)
    if isinstance(target, str):
        target = load(target)
    if isinstance(clips, str):
        clips = [clips]
    opt = A.sks_bake_options()
    keep = []
    if clips:
        arr = (C.c_char_p * len(clips))(*[c.encode() for c in clips])
        keep.append(arr)
        opt.clip_names = C.cast(arr, C.POINTER(C.c_char_p))
        opt.clip_name_count = len(clips)
    opt.mode = _choice(_MODES, mode, "mode")
    opt.max_constraints = int(max_constraints)
    opt.fps = float(fps)
    opt.solver = _choice(_SOLVERS, solver, "solver")
    opt.correspondence = _choice(_CORRESPOND, correspondence, "correspondence")
    if align is not None:
        v = _choice(_ALIGN, align, "align")
        if "align" not in dict(A.sks_bake_options._fields_):
            raise SkinsolveError("unsupported", "this libskinsolve has no alignment option "
                                 "(sks_bake_options.align); leave align=None")
        opt.align = v
    opt.keep_surfaces = int(bool(keep_surfaces))
    opt.threads = int(threads)
    opt.max_residual_pct = float(max_residual_pct)
    failure = []
    if progress is not None:
        def cb(user, name, frame, count):
            if failure:
                return
            try:
                progress(name.decode(), frame, count)
            except BaseException as e:  # cannot unwind through C: re-raised after the bake
                failure.append(e)
        opt.progress = A.sks_progress_fn(cb)
        keep.append(opt.progress)
    r = A.sks_bake_result()
    err = A.sks_error()
    rc = lib.sks_bake(source._ptr(), target._ptr(), C.byref(opt), C.byref(r), C.byref(err))
    if rc != 0:
        lib.sks_bake_result_free(C.byref(r))
        _raise(rc, err)
    res = BakeResult(source, target, r)
    if failure:
        raise failure[0]
    return res
