#!/usr/bin/env node
// Loads a glTF binary in three.js (GLTFLoader, AnimationMixer,
// SkinnedMesh.getVertexPosition) under Node and compares what three.js shows
// with skinsolve's own poses, so a file skinsolve writes plays the same in a
// three.js app.
//
//   node tools/three_check.mjs OUT.glb --diag D [--ref IN.glb]
//        [--rest REST.f32] [--sample CLIP TIME POSE.f32]... [--tol 0.0005]
//
// Vertices are taken mesh by mesh in glTF node order, then primitive order
// (skinsolve's part order), in the scene root's space (three.js's
// getVertexPosition is mesh-local: multiplied by mesh.matrixWorld). Each
// --rest / --sample must match within tol x D (default 0.05 % of D).
// --ref: node names, mesh names, material names and which materials have a
// base colour texture must equal the reference file's. Textures: each image
// must decode as PNG / JPEG / WebP / KTX2 bytes (three.js cannot decode
// images in Node: the check reads the bytes and their dimensions instead).
// Any console warning or error from three.js during the import fails.
// Exit 0 = all match, 1 = a mismatch or warning, 2 = usage / cannot load.
import { readFileSync } from 'node:fs';
import * as THREE from 'three';
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';

const args = process.argv.slice(2);
if (args.length === 0 || args.includes('--help')) {
  console.log('usage: node tools/three_check.mjs OUT.glb --diag D [--ref IN.glb] [--rest REST.f32] ' +
    '[--sample CLIP TIME POSE.f32]... [--tol 0.0005]');
  process.exit(args.length === 0 ? 2 : 0);
}
const file = args[0];
let diag = NaN, ref = null, rest = null, tol = 0.0005;
const samples = [];
for (let i = 1; i < args.length; ++i) {
  if (args[i] === '--diag') diag = Number(args[++i]);
  else if (args[i] === '--ref') ref = args[++i];
  else if (args[i] === '--rest') rest = args[++i];
  else if (args[i] === '--tol') tol = Number(args[++i]);
  else if (args[i] === '--sample') { samples.push({ clip: args[i + 1], time: Number(args[i + 2]), f32: args[i + 3] }); i += 3; }
  else { console.error(`three_check: unknown argument ${args[i]}`); process.exit(2); }
}
if (!(diag > 0)) { console.error('three_check: --diag D (> 0) is required'); process.exit(2); }

const warnings = [];
const origWarn = console.warn, origError = console.error;
console.warn = (...a) => warnings.push(a.join(' '));
console.error = (...a) => warnings.push(a.join(' '));

function imageInfo(bytes) {
  const b = Buffer.from(bytes);
  if (b.length > 24 && b.readUInt32BE(0) === 0x89504e47) return { type: 'png', width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  if (b.length > 4 && b[0] === 0xff && b[1] === 0xd8) return { type: 'jpeg', width: 1, height: 1 };
  if (b.length > 12 && b.toString('ascii', 0, 4) === 'RIFF' && b.toString('ascii', 8, 12) === 'WEBP') return { type: 'webp', width: 1, height: 1 };
  if (b.length > 12 && b[1] === 0x4b && b[2] === 0x54 && b[3] === 0x58) return { type: 'ktx2', width: 1, height: 1 };
  return null;
}

async function load(path) {
  const data = readFileSync(path);
  const loader = new GLTFLoader();
  const images = [];
  loader.register((parser) => {
    // Node has no image decoder: check the image bytes, hand three.js a stub.
    parser.loadImageSource = async (index) => {
      const def = parser.json.images[index];
      if (def.bufferView === undefined) throw new Error(`image ${index} is not embedded (uri ${def.uri})`);
      const view = await parser.getDependency('bufferView', def.bufferView);
      const info = imageInfo(view);
      if (!info) throw new Error(`image ${index}: bytes are not PNG / JPEG / WebP / KTX2`);
      images.push({ index, ...info, bytes: view.byteLength });
      const tex = new THREE.Texture({ width: info.width, height: info.height });
      tex.needsUpdate = false;
      return tex;
    };
    return { name: 'skinsolve_image_stub' };
  });
  const ab = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
  const gltf = await loader.parseAsync(ab, '');
  gltf.images = images;
  return gltf;
}

// meshes in glTF node order, then primitive order
function orderedMeshes(gltf) {
  const list = [];
  gltf.scene.traverse((o) => {
    if (!o.isMesh) return;
    const a = gltf.parser.associations.get(o) || {};
    let n = o, node = a.nodes;
    while (node === undefined && n.parent) { n = n.parent; node = (gltf.parser.associations.get(n) || {}).nodes; }
    list.push({ mesh: o, node: node ?? 1e9, prim: a.primitives ?? 0 });
  });
  list.sort((x, y) => x.node - y.node || x.prim - y.prim);
  return list.map((e) => e.mesh);
}

function positions(gltf) {
  gltf.scene.updateMatrixWorld(true);
  const out = [];
  const v = new THREE.Vector3();
  for (const m of orderedMeshes(gltf)) {
    if (m.isSkinnedMesh) m.skeleton.update();
    const n = m.geometry.attributes.position.count;
    for (let i = 0; i < n; ++i) {
      m.getVertexPosition(i, v);
      v.applyMatrix4(m.matrixWorld);
      out.push(v.x, v.y, v.z);
    }
  }
  return out;
}

function compare(what, got, f32path) {
  const buf = readFileSync(f32path);
  const want = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  if (want.length !== got.length) return { what, ok: false, msg: `${got.length / 3} vertices in three.js, ${want.length / 3} in skinsolve` };
  let worst = 0, at = -1;
  for (let i = 0; i < want.length; i += 3) {
    const d = Math.hypot(got[i] - want[i], got[i + 1] - want[i + 1], got[i + 2] - want[i + 2]);
    if (d > worst) { worst = d; at = i / 3; }
  }
  return { what, ok: worst <= tol * diag, worst_pct_d: (100 * worst) / diag, vertex: at };
}

const results = [];
let failed = false;
let gltf;
try {
  gltf = await load(file);
} catch (e) {
  console.error = origError;
  console.error(`three_check: ${file}: three.js cannot load it: ${e.message}`);
  process.exit(2);
}
if (rest) results.push(compare('rest', positions(gltf), rest));
for (const s of samples) {
  const clip = gltf.animations.find((c) => c.name === s.clip);
  if (!clip) { results.push({ what: `${s.clip} t=${s.time}`, ok: false, msg: 'clip not in the file' }); continue; }
  const mixer = new THREE.AnimationMixer(gltf.scene);
  const action = mixer.clipAction(clip);
  action.play();
  mixer.setTime(s.time);
  results.push(compare(`${s.clip} t=${s.time}`, positions(gltf), s.f32));
  mixer.stopAllAction();
  mixer.uncacheRoot(gltf.scene);
}
const summary = (g) => {
  const nodes = [];
  const mats = new Map();
  g.scene.traverse((o) => {
    const a = g.parser.associations.get(o);
    if (a && a.nodes !== undefined && !o.isBone) nodes.push(o.name);
    if (o.isBone) nodes.push(o.name);
    if (o.isMesh) for (const m of [].concat(o.material)) mats.set(m.name, !!m.map);
  });
  return { nodes: [...new Set(nodes)].sort(), materials: [...mats.entries()].sort(), images: g.images.length };
};
const mine = summary(gltf);
if (ref) {
  let theirs;
  try { theirs = summary(await load(ref)); } catch (e) { theirs = null; results.push({ what: 'ref', ok: false, msg: e.message }); }
  if (theirs) {
    const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
    results.push({ what: 'node names', ok: same(mine.nodes, theirs.nodes) });
    results.push({ what: 'materials + textures', ok: same(mine.materials, theirs.materials), msg: JSON.stringify(mine.materials) });
    results.push({ what: 'images', ok: mine.images === theirs.images, msg: `${mine.images} vs ${theirs.images}` });
  }
}
console.warn = origWarn;
console.error = origError;
if (warnings.length) results.push({ what: 'three.js warnings', ok: false, msg: warnings.slice(0, 5).join(' | ') });
for (const r of results) {
  if (!r.ok) failed = true;
  const num = r.worst_pct_d !== undefined ? ` worst ${r.worst_pct_d.toExponential(2)} %D (vertex ${r.vertex})` : '';
  console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${file.split('/').pop()}: ${r.what}${num}${r.msg && !r.ok ? ': ' + r.msg : ''}`);
}
console.log(`${file.split('/').pop()}: ${mine.materials.length} materials (${mine.materials.filter((m) => m[1]).length} textured), ${mine.images} images, ${gltf.animations.length} clips`);
process.exit(failed ? 1 : 0);
