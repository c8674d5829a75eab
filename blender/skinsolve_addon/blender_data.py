"""Blender data <-> skinsolve models, without files.

Spaces: a model is built in its armature's space (the bind space), so the
armature objects' world transforms (units, axes, placement) never enter the
bake. Joints = the armature's bones, parents first; rest locals = parent
bone.matrix_local^-1 @ bone.matrix_local; one skin over all bones with
inverse bind = bone.matrix_local^-1; one mesh part per mesh object deformed
by the armature (Armature modifier), positions = armature_world^-1 @
mesh_world @ co (exactly the space Blender's armature deform works in).
Clips are sampled per frame from the evaluated pose (constraints, drivers and
any F-curve interpolation included) as LINEAR keys at (frame - start) / fps."""
import bpy
import numpy as np
from mathutils import Matrix, Quaternion, Vector


def bones_in_order(arm_obj):
    """The armature's bones, every parent before its children."""
    out = []
    stack = [b for b in reversed(arm_obj.data.bones) if b.parent is None]
    while stack:
        b = stack.pop()
        out.append(b)
        stack.extend(reversed(b.children))
    return out


def _trs(m):
    t, q, s = m.decompose()
    return [t.x, t.y, t.z, q.x, q.y, q.z, q.w, s.x, s.y, s.z]


def _colmajor(m):
    return np.array(m, dtype=np.float32).T.reshape(16)


def deformed_meshes(arm_obj, scene):
    """Mesh objects of the scene an Armature modifier binds to arm_obj, by name."""
    out = []
    for o in scene.objects:
        if o.type != "MESH":
            continue
        if any(m.type == "ARMATURE" and m.object == arm_obj for m in o.modifiers):
            out.append(o)
    return sorted(out, key=lambda o: o.name)


def rig_arrays(arm_obj, scene):
    """Skeleton, skin and parts of an armature and its meshes (the from_arrays
    inputs) plus notes (list of warning strings)."""
    bones = bones_in_order(arm_obj)
    index = {b.name: i for i, b in enumerate(bones)}
    names = [b.name for b in bones]
    parents = [index[b.parent.name] if b.parent else -1 for b in bones]
    rest = np.array([_trs(b.parent.matrix_local.inverted() @ b.matrix_local if b.parent
                          else b.matrix_local) for b in bones], np.float32)
    deform = {b.name for b in bones if b.use_deform}
    skin = {"name": arm_obj.name, "joints": np.arange(len(bones), dtype=np.int32),
            "inverse_bind": np.array([_colmajor(b.matrix_local.inverted()) for b in bones])}
    parts, notes = [], []
    meshes = deformed_meshes(arm_obj, scene)
    if not meshes:
        raise ValueError(f"armature '{arm_obj.name}': no mesh object with an Armature modifier "
                         "pointing at it")
    to_arm = arm_obj.matrix_world.inverted()
    for mo in meshes:
        mesh = mo.data
        mod = next(m for m in mo.modifiers if m.type == "ARMATURE" and m.object == arm_obj)
        if mod.use_deform_preserve_volume:
            notes.append(f"mesh '{mo.name}': 'Preserve Volume' (DQS) is on; the bake solves "
                         "linear blend skinning")
        v = len(mesh.vertices)
        co = np.zeros(v * 3, np.float32)
        mesh.vertices.foreach_get("co", co)
        m = np.array(to_arm @ mo.matrix_world, np.float64)
        pos = (co.reshape(v, 3).astype(np.float64) @ m[:3, :3].T + m[:3, 3]).astype(np.float32)
        group_joint = {g.index: index[g.name] for g in mo.vertex_groups
                       if g.name in index and g.name in deform}
        k = 1
        rows = []
        unweighted = 0
        for vert in mesh.vertices:
            inf = [(g.weight, group_joint[g.group]) for g in vert.groups
                   if g.group in group_joint and g.weight > 0.0]
            inf.sort(reverse=True)
            inf = inf[:8]
            total = sum(w for w, _ in inf)
            if total <= 0.0:
                unweighted += 1
                inf, total = [(1.0, 0)], 1.0
            rows.append([(w / total, j) for w, j in inf])
            k = max(k, len(inf))
        if unweighted:
            notes.append(f"mesh '{mo.name}': {unweighted} vertices without bone weights were "
                         f"bound to '{names[0]}'")
        joints = np.zeros((v, k), np.uint16)
        weights = np.zeros((v, k), np.float32)
        for i, row in enumerate(rows):
            for s, (w, j) in enumerate(row):
                joints[i, s], weights[i, s] = j, w
        mesh.calc_loop_triangles()
        tri = np.zeros(len(mesh.loop_triangles) * 3, np.int32)
        mesh.loop_triangles.foreach_get("vertices", tri)
        parts.append({"name": mo.name, "skin": 0, "node": 0, "positions": pos,
                      "joints": joints, "weights": weights, "indices": tri.astype(np.uint32)})
    return names, parents, rest, [skin], parts, meshes, notes


def action_frames(action, frame_start=0, frame_end=0):
    """Integer frames to sample: the action's range unless start/end given (end >= start)."""
    a, b = action.frame_range
    s = int(round(a)) if frame_start == frame_end == 0 else int(frame_start)
    e = int(round(b)) if frame_start == frame_end == 0 else int(frame_end)
    if e < s:
        raise ValueError(f"frame range {s}..{e} is empty")
    return list(range(s, e + 1))


def sample_action(arm_obj, action, frames, fps, scene):
    """Clip dict (from_arrays) of arm_obj playing action at frames: per frame,
    each bone's local = parent_pose^-1 @ pose (armature space)."""
    it = iter_sample_action(arm_obj, action, frames, fps, scene)
    while True:
        try:
            next(it)
        except StopIteration as stop:
            return stop.value


def iter_sample_action(arm_obj, action, frames, fps, scene):
    """sample_action as a generator: yields after every frame (so a modal
    operator can stop it; closing it restores the action and frame) and
    returns the clip dict."""
    bones = bones_in_order(arm_obj)
    pbs = [arm_obj.pose.bones[b.name] for b in bones]
    parent_index = {b.name: i for i, b in enumerate(bones)}
    par = [parent_index[b.parent.name] if b.parent else -1 for b in bones]
    f_count, j = len(frames), len(bones)
    vals = np.zeros((f_count, j, 10), np.float32)
    ad = arm_obj.animation_data or arm_obj.animation_data_create()
    saved_action, saved_frame = ad.action, scene.frame_current
    try:
        ad.action = action
        for fi, f in enumerate(frames):
            scene.frame_set(f)
            mats = [pb.matrix.copy() for pb in pbs]
            for i in range(j):
                m = mats[i] if par[i] < 0 else mats[par[i]].inverted() @ mats[i]
                vals[fi, i] = _trs(m)
            yield fi
    finally:
        ad.action = saved_action
        scene.frame_set(saved_frame)
    # one hemisphere per track so LINEAR interpolation between frames is short-path
    for i in range(j):
        for fi in range(1, f_count):
            if np.dot(vals[fi, i, 3:7], vals[fi - 1, i, 3:7]) < 0:
                vals[fi, i, 3:7] *= -1
    times = (np.array(frames, np.float64) - frames[0]) / fps
    tracks = []
    for i in range(j):
        for path, sl in (("translation", slice(0, 3)), ("rotation", slice(3, 7)),
                         ("scale", slice(7, 10))):
            tracks.append({"joint": i, "path": path, "times": times, "values": vals[:, i, sl]})
    return {"name": action.name, "tracks": tracks}


def write_action(arm_obj, name, baked, frame_start, fps):
    """New Action on arm_obj keyed at every baked frame with the solved locals
    (matrix_basis = rest_local^-1 @ solved_local). Returns the Action."""
    bones = bones_in_order(arm_obj)
    act = bpy.data.actions.new(name)
    act.id_root = "OBJECT"
    frames = frame_start + np.round(np.asarray(baked.times, np.float64) * fps)
    f_count = len(frames)
    for i, b in enumerate(bones):
        rest = b.parent.matrix_local.inverted() @ b.matrix_local if b.parent else b.matrix_local
        rest_inv = rest.inverted()
        loc = np.zeros((f_count, 3))
        rot = np.zeros((f_count, 4))
        scl = np.zeros((f_count, 3))
        prev = None
        for fi in range(f_count):
            t = baked.locals[fi, i]
            m = (Matrix.Translation(Vector(t[0:3])) @
                 Quaternion((t[6], t[3], t[4], t[5])).to_matrix().to_4x4() @
                 Matrix.Diagonal(Vector((t[7], t[8], t[9], 1.0))))
            lt, lq, ls = (rest_inv @ m).decompose()
            q = np.array([lq.w, lq.x, lq.y, lq.z])
            if prev is not None and np.dot(prev, q) < 0:
                q = -q
            prev = q
            loc[fi], rot[fi], scl[fi] = lt, q, ls
        arm_obj.pose.bones[b.name].rotation_mode = "QUATERNION"
        for prop, data in (("location", loc), ("rotation_quaternion", rot), ("scale", scl)):
            path = f'pose.bones["{bpy.utils.escape_identifier(b.name)}"].{prop}'
            for c in range(data.shape[1]):
                fc = act.fcurves.new(path, index=c, action_group=b.name)
                fc.keyframe_points.add(f_count)
                co = np.empty(f_count * 2)
                co[0::2], co[1::2] = frames, data[:, c]
                fc.keyframe_points.foreach_set("co", co)
                fc.keyframe_points.foreach_set("interpolation", [1] * f_count)  # LINEAR
                fc.update()
    return act
