// The committed build is exactly what build.sh makes from the current sources.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { root } from '../helpers.js';
import { sourcesHash, builtHash } from '../../scripts/start.js';
import wasmBase64 from '../../web/wasm/attention-wasm.js';
import relaxedBase64 from '../../web/wasm/attention-relaxed-wasm.js';
import embedBase64 from '../../web/wasm/attention-embed-wasm.js';
import modelBase64 from '../../web/wasm/attention-model-wasm.js';
import { WASM_FUNCTIONS, WASM_MODEL_FUNCTIONS } from '../../web/core/exports.js';

const hasEmcc = spawnSync('sh', ['-c', 'command -v emcc'], { stdio: 'ignore' }).status === 0;

test('web/wasm/attention-wasm.js holds exactly web/wasm/attention.wasm, and the relaxed pair likewise', () => {
  const wasm = fs.readFileSync(path.join(root, 'web/wasm/attention.wasm'));
  assert.ok(Buffer.from(wasmBase64, 'base64').equals(wasm));
  const relaxed = fs.readFileSync(path.join(root, 'web/wasm/attention-relaxed.wasm'));
  assert.ok(Buffer.from(relaxedBase64, 'base64').equals(relaxed));
  const header = (f) => fs.readFileSync(path.join(root, 'web/wasm', f), 'utf8').slice(0, 200).match(/sources sha256 ([0-9a-f]{16})/)?.[1];
  assert.equal(header('attention-relaxed-wasm.js'), header('attention-wasm.js'));
});

test('web/wasm/attention-embed-wasm.js holds exactly web/wasm/attention-embed.wasm, from the same sources', () => {
  const embed = fs.readFileSync(path.join(root, 'web/wasm/attention-embed.wasm'));
  assert.ok(Buffer.from(embedBase64, 'base64').equals(embed));
  const header = (f) => fs.readFileSync(path.join(root, 'web/wasm', f), 'utf8').slice(0, 200).match(/sources sha256 ([0-9a-f]{16})/)?.[1];
  assert.equal(header('attention-embed-wasm.js'), header('attention-wasm.js'));
});

test('web/wasm/attention-model-wasm.js holds exactly web/wasm/attention-model.wasm, from the same sources', () => {
  const model = fs.readFileSync(path.join(root, 'web/wasm/attention-model.wasm'));
  assert.ok(Buffer.from(modelBase64, 'base64').equals(model));
  const header = (f) => fs.readFileSync(path.join(root, 'web/wasm', f), 'utf8').slice(0, 200).match(/sources sha256 ([0-9a-f]{16})/)?.[1];
  assert.equal(header('attention-model-wasm.js'), header('attention-wasm.js'));
});

test('the threaded model build (attention-model-mt) imports a shared memory and env.attn_parallel, exports what the other does and stackRestore; its base64 module holds its bytes', () => {
  const bytes = fs.readFileSync(path.join(root, 'web/wasm/attention-model-mt.wasm'));
  const text = fs.readFileSync(path.join(root, 'web/wasm/attention-model-mt-wasm.js'), 'utf8');
  assert.ok(Buffer.from(text.match(/"([A-Za-z0-9+/=]+)"/)[1], 'base64').equals(bytes));
  const m = new WebAssembly.Module(bytes);
  const imports = WebAssembly.Module.imports(m).map((i) => `${i.module}.${i.name}:${i.kind}`).sort();
  assert.deepEqual(imports, ['env.attn_parallel:function', 'env.emscripten_notify_memory_growth:function', 'env.memory:memory']);
  const names = WebAssembly.Module.exports(m).map((e) => e.name);
  for (const name of ['_initialize', 'stackSave', 'stackRestore', ...WASM_MODEL_FUNCTIONS]) assert.ok(names.includes(name), `exports ${name}`);
  // a memory that is not shared is refused: the build's memory is a shared one
  const env = { attn_parallel() {}, emscripten_notify_memory_growth() {} };
  assert.throws(() => new WebAssembly.Instance(m, { env: { ...env, memory: new WebAssembly.Memory({ initial: 16, maximum: 65536 }) } }));
  assert.ok(new WebAssembly.Instance(m, { env: { ...env, memory: new WebAssembly.Memory({ initial: 16, maximum: 65536, shared: true }) } }));
});

test('the model build exports WASM_MODEL_FUNCTIONS (and memory, _initialize); the references, kernels and the core API stay out', () => {
  const names = WebAssembly.Module.exports(new WebAssembly.Module(fs.readFileSync(path.join(root, 'web/wasm/attention-model.wasm')))).map((e) => e.name);
  for (const name of ['memory', '_initialize', ...WASM_MODEL_FUNCTIONS]) assert.ok(names.includes(name), `web/wasm/attention-model.wasm exports ${name}`);
  for (const name of ['attn_forward_naive', 'attn_matmul', 'attn_linear', 'attn_linear_naive', 'attn_linear_t_naive', 'attn_mha_forward']) {
    assert.ok(!names.includes(name), `web/wasm/attention-model.wasm does not export ${name}`);
  }
  // and the three core builds have no gpt2.c
  for (const f of ['attention.wasm', 'attention-embed.wasm']) {
    const core = WebAssembly.Module.exports(new WebAssembly.Module(fs.readFileSync(path.join(root, 'web/wasm', f)))).map((e) => e.name);
    assert.ok(!core.some((name) => name.startsWith('attn_gpt2')), `web/wasm/${f} has no attn_gpt2_*`);
  }
});

test('every core build exports the list of web/core/exports.js (and memory, _initialize); the C reference and matmul stay out', () => {
  for (const f of ['attention.wasm', 'attention-embed.wasm']) {
    const names = WebAssembly.Module.exports(new WebAssembly.Module(fs.readFileSync(path.join(root, 'web/wasm', f)))).map((e) => e.name);
    for (const name of ['memory', '_initialize', ...WASM_FUNCTIONS]) assert.ok(names.includes(name), `web/wasm/${f} exports ${name}`);
    for (const name of ['attn_forward_naive', 'attn_matmul']) assert.ok(!names.includes(name), `web/wasm/${f} does not export ${name}`);
  }
  // the relaxed build validates only where the engine has relaxed SIMD: its export section, read as bytes
  const relaxed = fs.readFileSync(path.join(root, 'web/wasm/attention-relaxed.wasm')).toString('latin1');
  for (const name of WASM_FUNCTIONS) assert.ok(relaxed.includes(name), `web/wasm/attention-relaxed.wasm exports ${name}`);
  for (const name of ['attn_forward_naive', 'attn_matmul']) assert.ok(!relaxed.includes(name), `web/wasm/attention-relaxed.wasm does not export ${name}`);
});

test('the committed build records the hash of the current c_src/ and build.sh', () => {
  assert.equal(builtHash(), sourcesHash(), 'c_src/, build.sh or web/core/exports.js changed: run `bash build.sh` and commit web/wasm/');
});

test('build.sh from the current sources reproduces the committed bytes', { skip: !hasEmcc && !process.env.CI && 'emcc is not installed here (apt-get install -y emscripten); under CI this test runs' }, () => {
  assert.ok(hasEmcc, 'emcc is required under CI: apt-get install -y emscripten');
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-build-'));
  try {
    execFileSync('bash', [path.join(root, 'build.sh'), out], { stdio: 'pipe' });
    for (const f of ['attention.wasm', 'attention-wasm.js', 'attention-relaxed.wasm', 'attention-relaxed-wasm.js', 'attention-embed.wasm', 'attention-embed-wasm.js',
      'attention-model.wasm', 'attention-model-wasm.js', 'attention-model-mt.wasm', 'attention-model-mt-wasm.js']) {
      const fresh = fs.readFileSync(path.join(out, f)), committed = fs.readFileSync(path.join(root, 'web/wasm', f));
      assert.ok(fresh.equals(committed), `web/wasm/${f} differs from a fresh build (${fresh.length} vs ${committed.length} bytes): run bash build.sh and commit it`);
    }
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});

test('build.sh without emcc fails with a message saying how to install it', () => {
  const r = spawnSync('/bin/bash', [path.join(root, 'build.sh'), os.tmpdir()], { env: { ...process.env, PATH: '/nonexistent' }, encoding: 'utf8' });
  // bash itself is found by absolute path through spawnSync's lookup of the parent PATH
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /emcc not found.*apt-get install -y emscripten/);
});
