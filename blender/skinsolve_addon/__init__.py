"""skinsolve — Bake surface motion between armatures.

Object > Animation > Bake Surface Motion, or the "skinsolve" panel in an
armature's Object Data properties: select the source armature, then the
target (active), and run. For every chosen action of the source the add-on
plays it, records the skinned surface of the source's meshes and solves per
frame the target bones' transforms so that the target's own skinning
reproduces that surface (libskinsolve's surface-solve bake). The result is one
new Action per clip on the target, keyed at every frame, with the clip's
quality / mean / worst error as custom properties (skinsolve_quality_pct, ...).
Everything is read from Blender data; no file is written.
"""
import os
import time

bl_info = {
    "name": "skinsolve: Bake Surface Motion",
    "author": "skinsolve",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "Object > Animation > Bake Surface Motion; Properties > Armature > skinsolve",
    "description": "Re-target actions between armatures by solving the target's bones so its "
                   "own skinning reproduces the source's surface motion",
    "category": "Animation",
}

_here = os.path.dirname(os.path.abspath(__file__))
_bundled = os.path.join(_here, "lib", "libskinsolve.so.0")
if os.path.exists(_bundled) and not os.environ.get("SKINSOLVE_LIBRARY"):
    os.environ["SKINSOLVE_LIBRARY"] = _bundled

try:
    from . import skinsolve as sks  # the copy the zip carries
except ImportError as e:
    if "No module named" not in str(e):
        raise
    import skinsolve as sks  # installed (cmake --install) or on PYTHONPATH

import bpy  # noqa: E402
from bpy.props import EnumProperty, FloatProperty, IntProperty, StringProperty  # noqa: E402

from . import blender_data as bd  # noqa: E402

# Results of the last bake per target armature name (for scripts and tests):
# {"result": skinsolve.BakeResult, "actions": [...], "meshes": [...]}.
last_bake = {}


def _source_actions(arm_obj):
    """Actions that animate bones of arm_obj (by F-curve data paths), except
    actions this add-on baked (they carry skinsolve_clip)."""
    names = {b.name for b in arm_obj.data.bones}
    out = []
    for a in bpy.data.actions:
        if "skinsolve_clip" in a:
            continue
        for fc in a.fcurves:
            p = fc.data_path
            if p.startswith('pose.bones["'):
                if p[12:p.index('"]')] in names:
                    out.append(a)
                    break
    return out


class BakeSet:
    """The per-clip bake results of one run: clips (skinsolve.BakedClip),
    results (skinsolve.BakeResult, one per clip), diagonal, target_vertices."""

    def __init__(self, results):
        self.results = results
        self.clips = [c for r in results for c in r.clips]
        self.diagonal = results[0].diagonal if results else float("nan")
        self.target_vertices = results[0].target_vertices if results else 0

    def clip(self, name):
        for c in self.clips:
            if c.name == name:
                return c
        raise KeyError(name)


def iter_bake(context, source, target, action_name="", mode="FREE", alignment="AUTO",
              frame_start=0, frame_end=0, max_residual_pct=0.0):
    """The bake as a generator of steps: first yields the step count, then once
    per step (a sampled frame, a baked clip); returns (list of (Action,
    BakedClip), BakeSet, notes). Closing it early (Esc) leaves Blender as it
    was: no action is written before the last step. Raises ValueError /
    skinsolve.SkinsolveError with a message naming what is wrong."""
    scene = context.scene
    fps = scene.render.fps / scene.render.fps_base
    if source.type != "ARMATURE" or target.type != "ARMATURE":
        raise ValueError("source and target must be armature objects")
    if source == target:
        raise ValueError(f"source and target are the same armature '{source.name}'")
    if action_name:
        act = bpy.data.actions.get(action_name)
        if act is None:
            raise ValueError(f"no action '{action_name}' (actions: "
                             + ", ".join(a.name for a in _source_actions(source)) + ")")
        actions = [act]
    else:
        actions = _source_actions(source)
        if not actions:
            raise ValueError(f"source '{source.name}' has no action animating its bones")
    plan = [(a, bd.action_frames(a, frame_start, frame_end)) for a in actions]
    s_names, s_par, s_rest, s_skins, s_parts, _, notes = bd.rig_arrays(source, scene)
    t_names, t_par, t_rest, t_skins, t_parts, t_meshes, t_notes = bd.rig_arrays(target, scene)
    notes += t_notes
    yield sum(len(f) for _, f in plan) + len(plan)
    clips = []
    for a, frames in plan:
        clips.append((yield from bd.iter_sample_action(source, a, frames, fps, scene)))
    src = sks.Model.from_arrays(s_names, s_par, s_rest, s_skins, s_parts, clips,
                                source_path=f"blender:{source.name}")
    tgt = sks.Model.from_arrays(t_names, t_par, t_rest, t_skins, t_parts, [],
                                source_path=f"blender:{target.name}")
    align = alignment.lower() if "align" in dict(sks._abi.sks_bake_options._fields_) else None
    extra = {}
    if max_residual_pct and "max_residual_pct" in dict(sks._abi.sks_bake_options._fields_):
        extra["max_residual_pct"] = float(max_residual_pct)
    results = []
    for a, _ in plan:  # one clip per call: Esc is honoured between clips
        results.append(sks.bake(src, tgt, clips=[a.name], align=align, keep_surfaces=True,
                                mode="rotation-only" if mode == "ROTATION_ONLY" else "free", **extra))
        yield len(results)
    al = getattr(results[0], "alignment", None) if results else None
    if al and al.get("over_default_limit"):
        notes.append(f"the target's vertices are on average {al['mean_distance_pct']:.3g} % D from the "
                     "source surface, over the default refusal line (baked under the Refusal line "
                     "setting): the two bodies differ that much")
    if al and al.get("mirrored"):
        notes.append("the two meshes' data are mirror images (an export between left- and right-handed "
                     "axes): the alignment is a mirror")
    bakes = BakeSet(results)
    out = []
    start = {a.name: frames[0] for a, frames in plan}
    for c in bakes.clips:
        act = bd.write_action(target, f"{c.name}|{target.name}", c, start[c.name], fps)
        act["skinsolve_source"] = source.name
        act["skinsolve_clip"] = c.name
        act["skinsolve_mode"] = c.mode
        act["skinsolve_quality_pct"] = float("nan") if c.quality is None else c.quality
        act["skinsolve_mean_error_pct"] = c.mean_error_pct
        act["skinsolve_worst_error_pct"] = c.worst_error_pct
        act["skinsolve_frames"] = c.frames
        act.use_fake_user = True
        out.append((act, c))
    if out:
        ad = target.animation_data or target.animation_data_create()
        ad.action = out[0][0]
    last_bake[target.name] = {"result": bakes, "actions": [a for a, _ in out],
                              "meshes": [m.name for m in t_meshes], "notes": notes}
    return out, bakes, notes


def bake_surface(context, source, target, action_name="", mode="FREE", alignment="AUTO",
                 frame_start=0, frame_end=0, max_residual_pct=0.0):
    """Runs iter_bake to the end with Blender's progress bar; returns its result."""
    wm = context.window_manager
    it = iter_bake(context, source, target, action_name, mode, alignment, frame_start, frame_end,
                   max_residual_pct)
    total = next(it)
    wm.progress_begin(0, max(total, 1))
    done = 0
    try:
        while True:
            try:
                next(it)
            except StopIteration as stop:
                return stop.value
            done += 1
            wm.progress_update(done)
    finally:
        wm.progress_end()


class SKINSOLVE_OT_bake_surface(bpy.types.Operator):
    """Solve the target armature's bones per frame so its own skinning reproduces the source's
    surface motion (one new Action per clip)"""
    bl_idname = "skinsolve.bake_surface"
    bl_label = "Bake Surface Motion"
    bl_options = {"REGISTER", "UNDO"}

    source: StringProperty(name="Source", description="Source armature object (empty: the "
                           "selected armature that is not active)")
    target: StringProperty(name="Target", description="Target armature object (empty: the "
                           "active object)")
    action: StringProperty(name="Action", description="One source action to bake (empty: every "
                           "action animating the source's bones)")
    mode: EnumProperty(name="Mode", items=[
        ("FREE", "Free", "Rotation + translation per bone"),
        ("ROTATION_ONLY", "Rotation only", "Local translations fixed to the target's rest "
         "offsets (roots free)")], default="FREE")
    alignment: EnumProperty(name="Alignment", items=[
        ("AUTO", "Auto", "Find the similarity between the two bind surfaces (libraries with the "
         "alignment stage; identity when they agree)"),
        ("NONE", "None", "Take both armatures' bind spaces as they are")], default="AUTO")
    max_residual: FloatProperty(name="Refusal line (% D)", default=0.0, min=0.0, max=100.0,
                                description="Refuse a pair whose target vertices lie on average farther "
                                "than this from the aligned source surface (0: the library's default, 8; "
                                "bake --max-residual)")
    frame_start: IntProperty(name="Start", default=0, description="First frame (0 and 0: each "
                             "action's own range)")
    frame_end: IntProperty(name="End", default=0, description="Last frame")

    def _pair(self, context):
        objs = bpy.data.objects
        tgt = objs.get(self.target) if self.target else context.active_object
        if self.source:
            src = objs.get(self.source)
        else:
            sel = [o for o in context.selected_objects if o.type == "ARMATURE" and o != tgt]
            src = sel[0] if len(sel) == 1 else None
        return src, tgt

    def execute(self, context):
        src, tgt = self._pair(context)
        if src is None or tgt is None:
            self.report({"ERROR"}, "select the source armature, then the target armature "
                        "(active), or set the source and target properties")
            return {"CANCELLED"}
        t0 = time.perf_counter()
        try:
            out, _, notes = bake_surface(context, src, tgt, self.action, self.mode,
                                         self.alignment, self.frame_start, self.frame_end,
                                         self.max_residual)
        except (ValueError, sks.SkinsolveError) as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self._report_done(out, notes, src, tgt, t0)
        return {"FINISHED"}

    def _report_done(self, out, notes, src, tgt, t0):
        for n in notes:
            self.report({"WARNING"}, n)
        for act, c in out:
            q = "n/a" if c.quality is None else f"{c.quality:.4f} %"
            self.report({"INFO"}, f"{act.name}: {c.frames} frames, quality {q}, mean "
                        f"{c.mean_error_pct:.4f} %D, worst {c.worst_error_pct:.4f} %D")
        self.report({"INFO"}, f"skinsolve: baked {len(out)} clip(s) from '{src.name}' onto "
                    f"'{tgt.name}' in {time.perf_counter() - t0:.1f} s")

    # Interactive runs are modal: one step per timer event, Esc cancels (between
    # sampled frames / baked clips; nothing is written until the last step).
    def invoke(self, context, event):
        src, tgt = self._pair(context)
        if src is None or tgt is None:
            return self.execute(context)  # reports the selection error
        try:
            self._it = iter_bake(context, src, tgt, self.action, self.mode, self.alignment,
                                 self.frame_start, self.frame_end, self.max_residual)
            total = next(self._it)
        except (ValueError, sks.SkinsolveError) as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self._pair_objs, self._t0, self._done = (src, tgt), time.perf_counter(), 0
        wm = context.window_manager
        wm.progress_begin(0, max(total, 1))
        self._timer = wm.event_timer_add(0.001, window=context.window)
        wm.modal_handler_add(self)
        return {"RUNNING_MODAL"}

    def _end(self, context):
        wm = context.window_manager
        wm.event_timer_remove(self._timer)
        wm.progress_end()

    def modal(self, context, event):
        if event.type == "ESC":
            self._it.close()
            self._end(context)
            self.report({"WARNING"}, "skinsolve: bake cancelled, nothing written")
            return {"CANCELLED"}
        if event.type != "TIMER":
            return {"RUNNING_MODAL"}
        try:
            next(self._it)
        except StopIteration as stop:
            self._end(context)
            out, _, notes = stop.value
            self._report_done(out, notes, *self._pair_objs, self._t0)
            return {"FINISHED"}
        except (ValueError, sks.SkinsolveError) as e:
            self._end(context)
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        self._done += 1
        context.window_manager.progress_update(self._done)
        return {"RUNNING_MODAL"}

    @classmethod
    def poll(cls, context):
        return context.mode == "OBJECT"


class SKINSOLVE_PT_panel(bpy.types.Panel):
    bl_label = "skinsolve"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "data"

    @classmethod
    def poll(cls, context):
        return context.object is not None and context.object.type == "ARMATURE"

    def draw(self, context):
        col = self.layout.column()
        col.label(text="Select the source armature, then this one (active)")
        col.operator(SKINSOLVE_OT_bake_surface.bl_idname, text="Bake Surface Motion")
        ad = context.object.animation_data
        act = ad.action if ad else None
        if act is not None and "skinsolve_quality_pct" in act:
            col.label(text=f"{act.name}: quality {act['skinsolve_quality_pct']:.3f} %")
            col.label(text=f"mean {act['skinsolve_mean_error_pct']:.4f} %D, worst "
                      f"{act['skinsolve_worst_error_pct']:.4f} %D")


def _menu(self, context):
    self.layout.operator(SKINSOLVE_OT_bake_surface.bl_idname, text="Bake Surface Motion")


_classes = (SKINSOLVE_OT_bake_surface, SKINSOLVE_PT_panel)


def register():
    for c in _classes:
        bpy.utils.register_class(c)
    bpy.types.VIEW3D_MT_object_animation.append(_menu)


def unregister():
    bpy.types.VIEW3D_MT_object_animation.remove(_menu)
    for c in reversed(_classes):
        bpy.utils.unregister_class(c)
