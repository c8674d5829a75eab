# Prints what Blender's glTF importer (headless) makes of glTF binaries, one
# JSON line per mesh object: file, object name, shape keys (name, value),
# UV maps, the UV map an image texture node samples, and the Principled
# BSDF's emission strength. Used by tests/test_assimp_uv1_morph.sh (UV set
# 1, morph targets, emissive strength as Blender shows them).
#
#   blender -b --factory-startup --python tools/blender_attrs.py -- FILE.glb...
# Lines start with "ATTRS "; exit 1 when a file cannot be imported.
import sys, json
import numpy as np
np.bool = bool  # Debian 12's numpy vs Blender 3.4's glTF importer
import bpy

files = sys.argv[sys.argv.index('--') + 1:] if '--' in sys.argv else []
status = 0
for f in files:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    try:
        bpy.ops.import_scene.gltf(filepath=f)
    except Exception as e:  # the importer raises on a file it cannot read
        print('ATTRS ' + json.dumps({'file': f, 'error': str(e)}))
        status = 1
        continue
    for o in bpy.data.objects:
        if o.type != 'MESH':
            continue
        me = o.data
        keys = [[k.name, round(k.value, 6)] for k in me.shape_keys.key_blocks] if me.shape_keys else []
        uv_map, strength = None, None
        for m in me.materials:
            if not m or not m.use_nodes:
                continue
            for n in m.node_tree.nodes:
                if n.type == 'UVMAP':
                    uv_map = n.uv_map
                if n.type == 'BSDF_PRINCIPLED':
                    strength = round(n.inputs['Emission Strength'].default_value, 6)
        print('ATTRS ' + json.dumps({'file': f.split('/')[-1], 'object': o.name, 'shape_keys': keys,
                                     'uv_layers': [u.name for u in me.uv_layers], 'texture_uv_map': uv_map,
                                     'emission_strength': strength}))
sys.exit(status)
