# Re-exports a glTF rig through Blender's FBX exporter, as a user would
# (tests/test_blender_fbx_reexport.sh). Args after "--": IN.glb, then pairs
# KIND OUT.fbx with KIND one of:
#   default   the exporter's defaults (-Z forward, Y up, scale 1, leaf bones)
#   zup_cm    Y forward, Z up, global scale 100, leaf bones off
# Blender's FBX export stores the pose of its current frame in every bone
# (the bind pose goes to the clusters), so the rest pose of the output is a
# pose: the case the bake's bind-space placement must not count as motion.
import sys
import numpy as np
np.bool = bool  # Debian 12's Blender 3.4 glTF importer on numpy 1.24
import bpy

argv = sys.argv[sys.argv.index("--") + 1:]
src, jobs = argv[0], argv[1:]
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.import_scene.gltf(filepath=src)
for kind, out in zip(jobs[0::2], jobs[1::2]):
    if kind == "default":
        bpy.ops.export_scene.fbx(filepath=out, bake_anim=True)
    elif kind == "zup_cm":
        bpy.ops.export_scene.fbx(filepath=out, axis_forward='Y', axis_up='Z', global_scale=100.0,
                                 add_leaf_bones=False, bake_anim=True)
    else:
        raise SystemExit("unknown kind " + kind)
    print("EXPORTED", kind, out)
