#!/usr/bin/env node
// Prints what three.js's GLTFLoader makes of a glTF binary, one JSON line
// per mesh: name, geometry attributes, morphTargetDictionary,
// morphTargetInfluences, the base colour map's UV channel, emissive colour
// and emissiveIntensity, plus any console warning of the import. Used by
// tests/test_assimp_uv1_morph.sh (UV set 1, morph targets, emissive
// strength as three.js shows them).
//
//   node tools/three_attrs.mjs FILE.glb
// Exit 0 = loaded, 2 = usage / cannot load.
import { readFileSync } from 'node:fs';
import * as THREE from 'three';
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';

const file = process.argv[2];
if (!file) { console.log('usage: node tools/three_attrs.mjs FILE.glb'); process.exit(2); }
const warnings = [];
const keep = { warn: console.warn, error: console.error };
console.warn = (...a) => warnings.push(a.join(' '));
console.error = (...a) => warnings.push(a.join(' '));
try {
  const d = readFileSync(file);
  const loader = new GLTFLoader();
  // Node has no image decoder: a stub texture per image (the bytes are checked elsewhere).
  loader.register((parser) => {
    parser.loadImageSource = async () => new THREE.Texture({ width: 1, height: 1 });
    return { name: 'skinsolve_image_stub' };
  });
  const gltf = await loader.parseAsync(d.buffer.slice(d.byteOffset, d.byteOffset + d.byteLength), '');
  Object.assign(console, keep);
  gltf.scene.traverse((o) => {
    if (!o.isMesh) return;
    const m = o.material;
    console.log(JSON.stringify({
      name: o.name, attributes: Object.keys(o.geometry.attributes).sort(),
      morphTargets: o.morphTargetDictionary || null, influences: o.morphTargetInfluences || null,
      mapChannel: m.map ? m.map.channel : null, emissive: m.emissive ? m.emissive.toArray() : null,
      emissiveIntensity: m.emissiveIntensity,
    }));
  });
  console.log(JSON.stringify({ warnings }));
} catch (e) {
  Object.assign(console, keep);
  console.error(`three_attrs: ${file}: ${e.message}`);
  process.exit(2);
}
