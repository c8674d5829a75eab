# Run by tests/test_fbx_uv_mapping.sh in Blender (headless):
#   blender -b --factory-startup --python tests/blender/fbx_uv_mapping.py -- OUT_DIR
# Two planes, each with a Principled material whose base colour is an image
# texture (an 8x8 PNG written next to the files) sampled through a Mapping
# node on the UV coordinates: 'placed' (location 0.25, 0.1, scale 2 x 1,
# rotation 0.5 rad) and 'tiled' (location 0, 0.5, scale 1 x 3, no rotation).
# Exports OUT_DIR/mapping.fbx and, as the reference, Blender's own glTF
# (OUT_DIR/mapping_blender.gltf), whose KHR_texture_transform is how Blender
# itself says those Mapping nodes look in glTF.
import os, sys
import bpy
out = sys.argv[sys.argv.index('--') + 1]
bpy.ops.wm.read_factory_settings(use_empty=True)
img = bpy.data.images.new('grid', 8, 8)
img.generated_type = 'COLOR_GRID'
img.filepath_raw = os.path.join(out, 'grid.png')
img.file_format = 'PNG'
img.save()
for k, (name, loc, scale, rot) in enumerate((('placed', (0.25, 0.1, 0), (2, 1, 1), 0.5),
                                              ('tiled', (0, 0.5, 0), (1, 3, 1), 0.0))):
    bpy.ops.mesh.primitive_plane_add(size=2, location=(3 * k, 0, 0))
    ob = bpy.context.active_object
    ob.name = name
    mat = bpy.data.materials.new(name)
    mat.use_nodes = True
    nt = mat.node_tree
    bsdf = nt.nodes['Principled BSDF']
    tex = nt.nodes.new('ShaderNodeTexImage')
    tex.image = img
    mp = nt.nodes.new('ShaderNodeMapping')
    mp.inputs['Location'].default_value = loc
    mp.inputs['Scale'].default_value = scale
    mp.inputs['Rotation'].default_value = (0, 0, rot)
    tc = nt.nodes.new('ShaderNodeTexCoord')
    nt.links.new(tc.outputs['UV'], mp.inputs['Vector'])
    nt.links.new(mp.outputs['Vector'], tex.inputs['Vector'])
    nt.links.new(tex.outputs['Color'], bsdf.inputs['Base Color'])
    ob.data.materials.append(mat)
bpy.ops.export_scene.fbx(filepath=os.path.join(out, 'mapping.fbx'), path_mode='RELATIVE')
bpy.ops.export_scene.gltf(filepath=os.path.join(out, 'mapping_blender.gltf'), export_format='GLTF_SEPARATE')
