#!/usr/bin/env node
// Writes a compressed copy of a glTF / GLB, as web pipelines ship
// characters, with glTF-Transform's I/O (extension marked required):
//   draco           KHR_draco_mesh_compression (draco3dgltf encoder, default
//                   quantization: positions 14 bits, normals 10, texture
//                   coordinates 12, generic attributes such as weights 12;
//                   edgebreaker: vertices re-ordered, seams welded)
//   meshopt         EXT_meshopt_compression (meshoptimizer encoder, method
//                   QUANTIZE: every buffer view compressed, no filter)
//   meshopt-filter  EXT_meshopt_compression, method FILTER: normals
//                   octahedral (8-bit), rotations quaternion-filtered,
//                   other floats exponential (KHR_mesh_quantization types)
// An output ending in .gltf gets its buffers as .bin files beside it. Used by
// tests/test_compressed_gltf.sh to make its variants; not part of the library.
//
//   node tools/compress_gltf.mjs draco|meshopt|meshopt-filter IN.glb|IN.gltf OUT.glb|OUT.gltf
import { NodeIO } from '@gltf-transform/core';
import { ALL_EXTENSIONS, EXTMeshoptCompression, KHRDracoMeshCompression } from '@gltf-transform/extensions';
import draco3d from 'draco3dgltf';
import { MeshoptDecoder, MeshoptEncoder } from 'meshoptimizer';

const args = process.argv.slice(2);
const methods = ['draco', 'meshopt', 'meshopt-filter'];
if (args.length !== 3 || !methods.includes(args[0])) {
  console.log('usage: node tools/compress_gltf.mjs draco|meshopt|meshopt-filter IN.glb|IN.gltf OUT.glb|OUT.gltf\n' +
    'Writes a compressed copy (KHR_draco_mesh_compression or EXT_meshopt_compression, required).');
  process.exit(args.includes('-h') || args.includes('--help') ? 0 : 2);
}
const [method, input, output] = args;
try {
  await MeshoptEncoder.ready;
  await MeshoptDecoder.ready;
  const io = new NodeIO().registerExtensions(ALL_EXTENSIONS).registerDependencies({
    'draco3d.encoder': await draco3d.createEncoderModule(),
    'draco3d.decoder': await draco3d.createDecoderModule(),
    'meshopt.encoder': MeshoptEncoder,
    'meshopt.decoder': MeshoptDecoder,
  });
  const doc = await io.read(input);
  if (method === 'draco') {
    doc.createExtension(KHRDracoMeshCompression).setRequired(true)
      .setEncoderOptions({ method: KHRDracoMeshCompression.EncoderMethod.EDGEBREAKER });
  } else {
    doc.createExtension(EXTMeshoptCompression).setRequired(true).setEncoderOptions({
      method: method === 'meshopt' ? EXTMeshoptCompression.EncoderMethod.QUANTIZE
        : EXTMeshoptCompression.EncoderMethod.FILTER,
    });
  }
  await io.write(output, doc);
  console.log(`${input} -> ${output} (${method})`);
} catch (e) {
  console.error(`compress_gltf: ${input}: ${e.message}`);
  process.exit(1);
}
