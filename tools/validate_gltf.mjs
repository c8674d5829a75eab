#!/usr/bin/env node
// Validates a glTF/GLB file with the official Khronos glTF-Validator (npm
// "gltf-validator"). Prints a summary (errors / warnings / infos / hints and
// the first messages) and exits 1 if the file has any error, 2 on usage or
// when the validator cannot read the file.
//
//   node tools/validate_gltf.mjs FILE.glb [--max N] [--json]
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
if (args.length === 0 || args.includes('-h') || args.includes('--help')) {
  console.log('usage: node tools/validate_gltf.mjs FILE.glb|FILE.gltf [--max N] [--json]\n' +
    'Runs the Khronos glTF-Validator; exit 0 = no errors, 1 = errors, 2 = cannot validate.');
  process.exit(args.length === 0 ? 2 : 0);
}
let maxShown = 10;
let asJson = false;
const files = [];
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--max') maxShown = Number(args[++i]);
  else if (args[i] === '--json') asJson = true;
  else files.push(args[i]);
}

let validator;
try {
  validator = require('gltf-validator');
} catch (e) {
  console.error('validate_gltf: npm package gltf-validator missing — run `cd tools && npm install`');
  process.exit(2);
}

const SEVERITY = ['error', 'warning', 'info', 'hint'];
let failed = false;
for (const file of files) {
  let bytes;
  try {
    bytes = new Uint8Array(await readFile(file));
  } catch (e) {
    console.error(`validate_gltf: ${file}: cannot read: ${e.message}`);
    process.exit(2);
  }
  let report;
  try {
    report = await validator.validateBytes(bytes, {
      uri: path.basename(file),
      maxIssues: 0,
      externalResourceFunction: (uri) =>
        readFile(path.resolve(path.dirname(file), decodeURIComponent(uri))).then((b) => new Uint8Array(b)),
    });
  } catch (e) {
    console.error(`validate_gltf: ${file}: validator could not run: ${e}`);
    process.exit(2);
  }
  const iss = report.issues;
  if (asJson) {
    console.log(JSON.stringify(report, null, 2));
  } else {
    console.log(`${file}: ${iss.numErrors} errors, ${iss.numWarnings} warnings, ` +
      `${iss.numInfos} infos, ${iss.numHints} hints` +
      (report.info ? ` (${report.info.generator || 'unknown generator'}, ` +
        `${report.info.drawCallCount ?? '?'} draw calls, ${report.info.animationCount ?? 0} animations)` : ''));
    const sorted = [...iss.messages].sort((a, b) => a.severity - b.severity);
    for (const m of sorted.slice(0, maxShown))
      console.log(`  ${SEVERITY[m.severity] || m.severity} ${m.code}: ${m.message} (${m.pointer || ''})`);
    if (sorted.length > maxShown) console.log(`  ... ${sorted.length - maxShown} more`);
  }
  if (iss.numErrors > 0) failed = true;
}
process.exit(failed ? 1 : 0);
