# Run by tests/test_fbx_blendshape.sh in Blender (headless):
#   blender -b --factory-startup --python tests/blender/fbx_blendshape.py -- OUT.fbx OUT.json
# Builds a skinned mesh (a 2 m box of 28 vertices, two bones 'root' / 'tip',
# weights blending over z 0.6..1.4) with a shape key 'bulge' (the top half
# widened 1.6x and raised 0.1), animates the shape key 0 -> 1 over frames
# 0..12 and the tip bone 0 -> 60 degrees about X over frames 12..24 (24 fps,
# LINEAR), exports it as FBX and writes Blender's own evaluated vertex
# positions (world space, Blender's Z-up metres) at frames 0, 6, 12, 18, 24.
import sys, json, math
import bpy, bmesh
out_fbx, out_json = sys.argv[sys.argv.index('--') + 1:][:2]
bpy.ops.wm.read_factory_settings(use_empty=True)
sc = bpy.context.scene
sc.render.fps = 24
sc.frame_start, sc.frame_end = 0, 24
me = bpy.data.meshes.new('Body')
bm = bmesh.new()
bmesh.ops.create_cube(bm, size=1.0)
for v in bm.verts: v.co.x *= 0.5; v.co.y *= 0.5; v.co.z = (v.co.z + 0.5) * 2.0
bmesh.ops.subdivide_edges(bm, edges=[e for e in bm.edges if abs(e.verts[0].co.z - e.verts[1].co.z) > 1e-6],
                          cuts=5, use_grid_fill=False)
bm.to_mesh(me); bm.free()
body = bpy.data.objects.new('Body', me)
sc.collection.objects.link(body)
arm_data = bpy.data.armatures.new('Rig')
arm = bpy.data.objects.new('Rig', arm_data)
sc.collection.objects.link(arm)
bpy.context.view_layer.objects.active = arm
bpy.ops.object.mode_set(mode='EDIT')
root = arm_data.edit_bones.new('root'); root.head = (0, 0, 0); root.tail = (0, 0, 1)
tip = arm_data.edit_bones.new('tip'); tip.head = (0, 0, 1); tip.tail = (0, 0, 2); tip.parent = root
tip.use_connect = True
bpy.ops.object.mode_set(mode='OBJECT')
body.parent = arm
mod = body.modifiers.new('Armature', 'ARMATURE'); mod.object = arm
g_root, g_tip = body.vertex_groups.new(name='root'), body.vertex_groups.new(name='tip')
for v in me.vertices:
    w = min(max((v.co.z - 0.6) / 0.8, 0.0), 1.0)
    if w < 1: g_root.add([v.index], 1.0 - w, 'REPLACE')
    if w > 0: g_tip.add([v.index], w, 'REPLACE')
body.shape_key_add(name='Basis')
sk = body.shape_key_add(name='bulge', from_mix=False)
for i, v in enumerate(me.vertices):
    if v.co.z > 1.0:
        sk.data[i].co = (v.co.x * 1.6, v.co.y * 1.6, v.co.z + 0.1)
# shape key 0 -> 1 over frames 0..12, the tip bends 60 degrees over frames 12..24
sk.value = 0.0; sk.keyframe_insert('value', frame=0)
sk.value = 1.0; sk.keyframe_insert('value', frame=12)
pb = arm.pose.bones['tip']; pb.rotation_mode = 'XYZ'
pb.rotation_euler = (0, 0, 0); pb.keyframe_insert('rotation_euler', frame=0); pb.keyframe_insert('rotation_euler', frame=12)
pb.rotation_euler = (math.radians(60), 0, 0); pb.keyframe_insert('rotation_euler', frame=24)
for fc in list(arm.animation_data.action.fcurves) + list(me.shape_keys.animation_data.action.fcurves):
    for k in fc.keyframe_points: k.interpolation = 'LINEAR'
frames = {}
for f in (0, 6, 12, 18, 24):
    sc.frame_set(f)
    dg = bpy.context.evaluated_depsgraph_get()
    ev = body.evaluated_get(dg)
    m = ev.to_mesh()
    frames[str(f)] = [list(body.matrix_world @ v.co) for v in m.vertices]
    ev.to_mesh_clear()
sc.frame_set(0)
bpy.ops.export_scene.fbx(filepath=out_fbx, add_leaf_bones=False, bake_anim=True, bake_anim_use_nla_strips=False,
                         bake_anim_use_all_actions=False, bake_anim_force_startend_keying=True,
                         object_types={'ARMATURE', 'MESH'})
json.dump({'fps': 24, 'frames': frames}, open(out_json, 'w'))
print('MADE', len(me.vertices), 'vertices')
