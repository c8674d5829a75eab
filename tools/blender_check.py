# Imports a glTF binary in Blender (headless) and compares what Blender shows
# with skinsolve's poses, so a file skinsolve writes is right in Blender.
#
#   blender -b --factory-startup --python tools/blender_check.py -- OUT.glb
#       --diag D --bind BIND.f32 --rest REST.f32 [--sample CLIP TIME POSE.f32]...
#       [--tol 0.0005]
#
# Checks (each within tol x D, default 0.05 % of D):
#  - Rest Position (the armature's rest = the bind pose Blender builds from
#    the skins) against `skinsolve pose --bind`; this is where a wrong
#    skins[].skeleton shows (the Wuson lying on its back). It also pairs
#    Blender's vertices with skinsolve's (Blender may merge and reorder
#    vertices): by index where Blender kept the file's order, else each
#    Blender vertex with its nearest bind vertex.
#  - Pose Position with no action (the nodes' rest TRS) against `skinsolve pose`.
#  - each --sample: the action of that clip at TIME against `skinsolve pose
#    --clip CLIP --time TIME`.
#  - every node name of the file is an object or bone name; every material is
#    there, with an image texture where the file gives a baseColorTexture;
#    every image has pixels.
#  - the importer printed no warning or error.
# --clips-not-asserted: clip mismatches print as KNOWN (measured, not
# failing).
# Prints one line per check; exits 1 on any failure, 2 on usage errors.
import sys, io, json, struct, contextlib
import numpy as np
np.bool = bool  # Debian 12's numpy vs Blender 3.4's glTF importer
import bpy

argv = sys.argv[sys.argv.index('--') + 1:] if '--' in sys.argv else []
if not argv:
    print('usage: blender -b --factory-startup --python tools/blender_check.py -- OUT.glb --diag D '
          '--bind BIND.f32 --rest REST.f32 [--sample CLIP TIME POSE.f32]...')
    sys.exit(2)
path = argv[0]
diag, bind, rest, tol, samples, clips_known = None, None, None, 0.0005, [], False
i = 1
while i < len(argv):
    a = argv[i]
    if a == '--diag': diag = float(argv[i + 1]); i += 2
    elif a == '--bind': bind = argv[i + 1]; i += 2
    elif a == '--rest': rest = argv[i + 1]; i += 2
    elif a == '--tol': tol = float(argv[i + 1]); i += 2
    elif a == '--clips-not-asserted': clips_known = True; i += 1
    elif a == '--sample': samples.append((argv[i + 1], float(argv[i + 2]), argv[i + 3])); i += 4
    else:
        print('blender_check: unknown argument', a); sys.exit(2)
if not diag or not bind:
    print('blender_check: --diag and --bind are required'); sys.exit(2)

failed = False
name = path.split('/')[-1]
def report(ok, what, extra='', known=False):
    global failed
    failed |= not ok and not known
    print(('ok   ' if ok else 'KNOWN ' if known else 'FAIL ') + name + ': ' + what + (' ' + extra if extra else ''), flush=True)

def gltf_json(p):
    d = open(p, 'rb').read()
    if d[:4] == b'glTF':
        n = struct.unpack('<I', d[12:16])[0]
        return json.loads(d[20:20 + n])
    return json.loads(d)

doc = gltf_json(path)
bpy.ops.wm.read_factory_settings(use_empty=True)
log = io.StringIO()
with contextlib.redirect_stdout(log):
    result = bpy.ops.import_scene.gltf(filepath=path)
lines = [l for l in log.getvalue().splitlines() if 'WARNING' in l.upper() or 'ERROR' in l.upper()]
report(result == {'FINISHED'} and not lines, 'import without warnings', ' | '.join(lines[:5]))

scene = bpy.context.scene
fps = scene.render.fps / scene.render.fps_base
meshes = sorted([o for o in scene.objects if o.type == 'MESH'], key=lambda o: o.name)
arms = [o for o in scene.objects if o.type == 'ARMATURE']

def surface():
    dg = bpy.context.evaluated_depsgraph_get()
    pts = []
    for o in meshes:
        ev = o.evaluated_get(dg)
        m = ev.to_mesh()
        co = np.empty(len(m.vertices) * 3, dtype=np.float64)
        m.vertices.foreach_get('co', co)
        co = co.reshape(-1, 3)
        mw = np.array(ev.matrix_world)
        co = co @ mw[:3, :3].T + mw[:3, 3]
        ev.to_mesh_clear()
        pts.append(co)
    p = np.concatenate(pts) if pts else np.zeros((0, 3))
    return np.stack([p[:, 0], p[:, 2], -p[:, 1]], axis=1)  # Blender Z-up -> glTF Y-up

def f32(p):
    return np.fromfile(p, dtype='<f4').astype(np.float64).reshape(-1, 3)

def set_rest(on):
    for a in arms:
        a.data.pose_position = 'REST' if on else 'POSE'
    bpy.context.view_layer.update()

# Rest Position vs skinsolve's bind pose; nearest-neighbour pairing
set_rest(True)
scene.frame_set(0)
got = surface()
want = f32(bind)
pair = np.empty(len(got), dtype=np.int64)
dist = np.empty(len(got))
for s in range(0, len(got), 512):
    d2 = ((got[s:s + 512, None, :] - want[None, :, :]) ** 2).sum(axis=2)
    pair[s:s + 512] = d2.argmin(axis=1)
    dist[s:s + 512] = np.sqrt(d2.min(axis=1))
# Where Blender kept the file's vertex order (same count, vertex i at file
# vertex i's bind position), pair by index: a nearest bind vertex is
# ambiguous where vertices coincide (seams) with different weights
# (X/Testwuson.X: 34 % of the nearest pairs were a coincident vertex of
# another weighting, which then moves elsewhere: 0.155 %D of false error).
if len(got) == len(want):
    same = np.sqrt(((got - want) ** 2).sum(axis=1))
    keep = same <= dist + 1e-7 * diag
    pair[keep] = np.arange(len(got))[keep]
    dist[keep] = same[keep]
worst = float(dist.max()) if len(dist) else 0.0
report(len(got) > 0 and worst <= tol * diag, 'Rest Position = skinsolve pose --bind',
       '(%d Blender vertices, worst %.2e %%D)' % (len(got), 100 * worst / diag))

def compare(what, f, known=False):
    w = f32(f)
    g = surface()
    if len(g) != len(pair) or pair.max(initial=0) >= len(w):
        report(False, what, 'vertex counts differ'); return
    d = np.sqrt(((g - w[pair]) ** 2).sum(axis=1))
    worst = float(d.max()) if len(d) else 0.0
    report(worst <= tol * diag, what, '(worst %.2e %%D)' % (100 * worst / diag), known)

set_rest(False)
for a in arms:
    if a.animation_data: a.animation_data.action = None
for a in arms:
    for b in a.pose.bones:
        b.location = (0, 0, 0); b.rotation_quaternion = (1, 0, 0, 0); b.scale = (1, 1, 1)
if rest:
    scene.frame_set(0)
    compare('Pose Position, no action = skinsolve pose (rest)', rest)

for clip, t, f in samples:
    acts = [act for act in bpy.data.actions if act.name == clip or act.name.startswith(clip + '_')]
    arm_acts = [(a, act) for a in arms for act in acts if act.name in (clip, clip + '_' + a.name)]
    if not arm_acts and acts and arms:
        arm_acts = [(arms[0], acts[0])]
    if not arm_acts:
        report(False, '%s t=%g' % (clip, t), 'no action named %s (%s)' % (clip, [x.name for x in bpy.data.actions]))
        continue
    for a in arms:
        if not a.animation_data: a.animation_data_create()
        a.animation_data.action = None
        for b in a.pose.bones:
            b.location = (0, 0, 0); b.rotation_quaternion = (1, 0, 0, 0); b.scale = (1, 1, 1)
    for a, act in arm_acts:
        a.animation_data.action = act
    frame = t * fps
    scene.frame_set(int(np.floor(frame)), subframe=float(frame - np.floor(frame)))
    compare('%s t=%g' % (clip, t), f, clips_known)

# names, materials, textures
objnames = set(o.name for o in bpy.data.objects)
for a in arms:
    objnames |= set(b.name for b in a.data.bones)
missing = [n.get('name') for n in doc.get('nodes', []) if n.get('name') and n['name'][:63] not in objnames]
report(not missing, 'node names are object / bone names', str(missing[:5]))
mat_missing, tex_missing = [], []
for m in doc.get('materials', []):
    bm = bpy.data.materials.get(m.get('name', ''))
    if bm is None:
        mat_missing.append(m.get('name')); continue
    if 'baseColorTexture' in m.get('pbrMetallicRoughness', {}):
        imgs = [n for n in bm.node_tree.nodes if n.type == 'TEX_IMAGE' and n.image is not None]
        if not imgs: tex_missing.append(m.get('name'))
report(not mat_missing and not tex_missing, 'materials and base colour textures',
       'missing materials %s, textures %s' % (mat_missing, tex_missing))
bad_img = [im.name for im in bpy.data.images if im.type == 'IMAGE' and (im.size[0] == 0 or im.size[1] == 0)]
report(len(bpy.data.images) >= len(doc.get('images', [])) and not bad_img, 'images have pixels',
       '%d images, %d in the file, empty: %s' % (len(bpy.data.images), len(doc.get('images', [])), bad_img))
sys.exit(1 if failed else 0)
