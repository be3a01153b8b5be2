// The package as a user gets it: through its name and `exports`, packed, installed, typed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { root } from '../helpers.js';

const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

test('self-import through the package name and exports map', async () => {
  const { createAttention, AttentionError } = await import('attnmap');
  const attn = await createAttention();
  const { weights } = attn.attention({ q: [[0.3, 0.8, 0.2, 0.1]], k: [[0.9, 0.1, 0.0, 0.2], [0.2, 0.7, 0.3, 0.0], [0.0, 0.2, 1.0, 0.1]], v: [[1], [2], [3]] });
  assert.deepEqual(Array.from(weights.data, (x) => x.toFixed(4)), ['0.3157', '0.3686', '0.3157']);
  assert.equal(typeof AttentionError, 'function');
});

test('exports map: "types" first in each condition, wasm exported', () => {
  for (const [key, value] of Object.entries(pkg.exports)) {
    if (typeof value === 'object') assert.equal(Object.keys(value)[0], 'types', `exports["${key}"]`);
  }
  assert.equal(pkg.exports['./attention.wasm'].default, './web/wasm/attention.wasm');
  assert.equal(pkg.type, 'module');
});

test('npm pack ships only the whitelist; installed in a fresh folder it runs and type-checks', { timeout: 120000 }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-pack-'));
  try {
    const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const [info] = JSON.parse(out);
    const files = info.files.map((f) => f.path).sort();
    for (const f of files) {
      assert.ok(['package.json', 'README.md', 'LICENSE'].includes(f) || pkg.files.some((w) => f === w || f.startsWith(w.replace(/\/?$/, '/'))),
        `${f} is packed but not in the files whitelist`);
      assert.ok(!/^(tests|bench|scripts|node_modules|\.ci|build)\//.test(f), `${f} should not be packed`);
    }
    for (const f of ['web/core/attention.js', 'web/core/attention.d.ts', 'web/wasm/attention-wasm.js', 'web/wasm/attention.wasm']) assert.ok(files.includes(f), `${f} missing`);
    console.log(`# packed ${files.length} files, ${info.size} bytes (${info.unpackedSize} unpacked)`);

    const app = path.join(dir, 'app');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', path.join(dir, info.filename)], { cwd: app, stdio: 'pipe' });
    fs.writeFileSync(path.join(app, 'main.js'), `
      import { createAttention } from 'attnmap';
      const attn = await createAttention();
      const r = attn.attention({ q: [[0.3, 0.8, 0.2, 0.1]], k: [[0.9, 0.1, 0.0, 0.2], [0.2, 0.7, 0.3, 0.0], [0.0, 0.2, 1.0, 0.1]], v: [[1], [2], [3]] });
      console.log(Array.from(r.weights.data, (x) => x.toFixed(4)).join(' '));`);
    assert.equal(execFileSync(process.execPath, ['main.js'], { cwd: app, encoding: 'utf8' }).trim(), '0.3157 0.3686 0.3157');

    fs.writeFileSync(path.join(app, 'consumer.ts'), `
      import { createAttention, AttentionError, type Matrix } from 'attnmap';
      const attn = await createAttention();
      const r = attn.attention({ q: [[1, 2]], k: [[1, 2]], v: [[3]] });
      const w: Matrix = r.weights;
      const o = attn.attention({ q: [[1, 2]], k: [[1, 2]], v: [[3]] }, { weights: false });
      // @ts-expect-error weights are omitted with weights: false
      o.weights.data;
      const s = attn.selfAttention({ x: { data: new Float32Array(4), shape: [2, 2] }, wq: [[1], [1]], wk: [[1], [1]], wv: [[1], [1]] }, { causal: true });
      const e = new AttentionError('SHAPE_MISMATCH', 'x');
      const code: 'INVALID_ARGUMENT' | 'SHAPE_MISMATCH' | 'NON_FINITE' | 'TOO_LARGE' | 'OUT_OF_MEMORY' | 'INVALID_MODEL' | 'FETCH_FAILED' | 'THREAD_FAILED' = e.code;
      // @ts-expect-error unknown option
      attn.attention({ q: [[1]], k: [[1]], v: [[1]] }, { casual: true });
      const I = [[1, 0], [0, 1]];
      const mh = attn.multiHeadAttention({ x: [[1, 2]], wq: I, wk: I, wv: I, wo: I, bq: [0, 0], bo: new Float32Array(2) }, { heads: 2, causal: true });
      const perHead: Matrix[] = mh.weights, headOut: Matrix[] = mh.heads, concat: Matrix = mh.concat;
      const gq = attn.multiHeadAttention({ x: [[1, 2]], kv: [[1, 2], [3, 4]], wq: I, wk: [[1], [0]], wv: [[1], [0]], wo: I }, { heads: 2, kvHeads: 1, weights: false });
      // @ts-expect-error weights are omitted with weights: false
      gq.weights.length;
      // @ts-expect-error heads is required
      attn.multiHeadAttention({ x: [[1, 2]], wq: I, wk: I, wv: I, wo: I }, { causal: true });
      // @ts-expect-error wo is required
      attn.multiHeadAttention({ x: [[1, 2]], wq: I, wk: I, wv: I }, { heads: 1 });
      export { w, s, code, perHead, headOut, concat };`);
    fs.writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions: {
      module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, lib: ['es2022', 'dom'], skipLibCheck: false,
    }, files: ['consumer.ts'] }));
    execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', app], { cwd: app, stdio: 'pipe' });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
