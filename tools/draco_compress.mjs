#!/usr/bin/env node
// Writes a Draco-compressed copy of a glTF / GLB (KHR_draco_mesh_compression,
// marked required), as web pipelines ship characters: glTF-Transform's I/O
// with the draco3dgltf encoder, default quantization (positions 14 bits,
// normals 10, texture coordinates 12, generic attributes such as weights
// 12), edgebreaker (vertices re-ordered, seams welded). An output ending in
// .gltf gets its buffer as a separate .bin beside it. Used by
// tests/test_draco.sh to make the test variants; not part of the library.
//
//   node tools/draco_compress.mjs IN.glb|IN.gltf OUT.glb|OUT.gltf
import { NodeIO } from '@gltf-transform/core';
import { ALL_EXTENSIONS, KHRDracoMeshCompression } from '@gltf-transform/extensions';
import draco3d from 'draco3dgltf';

const args = process.argv.slice(2);
if (args.length !== 2 || args.includes('-h') || args.includes('--help')) {
  console.log('usage: node tools/draco_compress.mjs IN.glb|IN.gltf OUT.glb|OUT.gltf\n' +
    'Writes a Draco-compressed copy (KHR_draco_mesh_compression, required).');
  process.exit(args.length === 2 ? 0 : 2);
}
const [input, output] = args;
try {
  const io = new NodeIO().registerExtensions(ALL_EXTENSIONS).registerDependencies({
    'draco3d.encoder': await draco3d.createEncoderModule(),
    'draco3d.decoder': await draco3d.createDecoderModule(),
  });
  const doc = await io.read(input);
  doc.createExtension(KHRDracoMeshCompression).setRequired(true)
    .setEncoderOptions({ method: KHRDracoMeshCompression.EncoderMethod.EDGEBREAKER });
  await io.write(output, doc);
  console.log(`${input} -> ${output} (Draco)`);
} catch (e) {
  console.error(`draco_compress: ${input}: ${e.message}`);
  process.exit(1);
}
