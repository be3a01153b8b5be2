// shipped.js - the shipped size: what attnmap and each peer make a page download, gzip level 9,
// each file compressed on its own.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { root } from './plan.js';

// What the one-script-tag embed loads: web/element/attention-heatmap.js and every module it imports,
// followed through relative static imports; the brief's list when the element is absent.
function embedFiles() {
  const entry = 'web/element/attention-heatmap.js';
  if (!fs.existsSync(path.join(root, entry))) return ['web/core/attention.js', 'web/wasm/attention-wasm.js', 'web/heatmap/heatmap.js'];
  const seen = new Set([entry]);
  for (const file of seen) {
    const src = fs.readFileSync(path.join(root, file), 'utf8');
    for (const [, spec] of src.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]/gm)) {
      seen.add(path.relative(root, path.resolve(root, path.dirname(file), spec)));
    }
  }
  return [...seen];
}

export function gzipSizes() {
  const gz = (file) => {
    const buf = fs.readFileSync(file);
    return { file: path.relative(root, file).replace(/^(bench\/)?node_modules\//, ''), raw: buf.length, gzip: zlib.gzipSync(buf, { level: 9 }).length };
  };
  const existing = (files) => files.map((f) => path.join(root, f)).filter((f) => fs.existsSync(f)).map(gz);
  const sum = (files) => ({ raw: files.reduce((s, f) => s + f.raw, 0), gzip: files.reduce((s, f) => s + f.gzip, 0) });
  const groups = [
    { name: 'attnmap embed (JS + inlined wasm + heatmap + element)', files: existing(embedFiles()) },
    { name: 'attnmap core only (attention.js + attention-wasm.js)', files: existing(['web/core/attention.js', 'web/wasm/attention-wasm.js']) },
    { name: 'attnmap raw wasm', files: existing(['web/wasm/attention.wasm']) },
    { name: 'onnxruntime-web, wasm only (ort.wasm.min.mjs + its loader + wasm)', files: existing([
      'bench/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs', 'bench/node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.mjs',
      'bench/node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm']) },
    { name: 'TF.js core + wasm backend (SIMD wasm)', files: existing([
      'bench/node_modules/@tensorflow/tfjs-core/dist/tf-core.min.js', 'bench/node_modules/@tensorflow/tfjs-backend-wasm/dist/tf-backend-wasm.min.js',
      'bench/node_modules/@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm']) },
  ];
  return groups.map((g) => ({ ...g, ...sum(g.files) }));
}
