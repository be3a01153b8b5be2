// hostile-model.test.js - issue 20's attacks on the model path (config, weights file, ids, files
// in a folder, wasm memory above 2 GiB), each with the typed error it must now get. Each case
// failed on the code before: a crash (n_layer 2^31 - 1, 1e9 ids), a hang (a FIFO, /dev/zero),
// an engine error (a detached buffer), a wrong answer (forward above 2 GiB) or a silence
// (generate past the context window).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadModel, readCheckpointFolder } from '../../web/model/model-node.js';
import { loadModel as loadFiles } from '../../web/model/model.js';
import { createRuntime } from '../../web/model/runtime.js';
import { parseSafetensors, readTensor, MAX_TENSORS } from '../../web/model/load/safetensors.js';
import { matchTensors as gpt2Tensors } from '../../web/model/load/checkpoint.js';
import { readConfig } from '../../web/model/load/config.js';
import { AttentionError } from '../../web/core/errors.js';
import { expectError, root } from '../helpers.js';
import { randomGpt2, rawSafetensors, writeSafetensors } from '../model-helpers.js';

const TOY = path.join(root, 'web/models/toy-zh');

async function rejects(promise, code, pattern) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof AttentionError, `${e?.name}: ${e?.message}`);
    assert.equal(e.code, code, e.message);
    if (pattern) assert.match(e.message, pattern);
    return true;
  });
}

function folder(files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-hostile-'));
  for (const [name, content] of Object.entries(files)) {
    if (typeof content === 'function') content(path.join(dir, name));
    else fs.writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

// ----------------------------------------------------------------------------
// 1. config sizes against the tensors, before anything is allocated or looped over

test('a config with n_layer 2147483647 over a 2-layer file: INVALID_MODEL naming both counts (it killed Node)', async () => {
  const { config, bytes } = randomGpt2({ L: 2 });
  await rejects(loadModel({ config: { ...config, n_layer: 2147483647 }, weights: bytes }), 'INVALID_MODEL',
    /n_layer = 2147483647 but the file has tensors for 2 layers \(none for layers 2, 3, 4, 5, 6, 7, 8, 9, …\)/);
  for (const [key, value, pattern] of [['n_embd', 2 ** 30, /has shape \[16, 8\] but the config needs \[16, 1073741824\]/],
    ['vocab_size', 2147483647, /wte\.weight" has shape \[16, 8\] but the config needs \[2147483647, 8\]/],
    ['n_positions', 2147483647, /wpe\.weight" has shape \[8, 8\]/], ['n_head', 2147483647, /not a multiple of n_head/]]) {
    await rejects(loadModel({ config: { ...config, [key]: value }, weights: bytes }), 'INVALID_MODEL', pattern);
  }
});

test('the CLI with that config: exit 2 and one line, not a fatal error', () => {
  const { config, bytes } = randomGpt2({ L: 2 });
  const dir = folder({ 'config.json': JSON.stringify({ ...config, n_layer: 2147483647 }), 'model.safetensors': bytes });
  let out;
  try {
    execFileSync(process.execPath, [path.join(root, 'bin/attnmap.js'), 'model', dir, '--ids', '1,2'], { stdio: 'pipe' });
  } catch (e) { out = e; }
  assert.equal(out?.status, 2, String(out?.stderr));
  assert.match(String(out.stderr), /^attnmap: the config says n_layer = 2147483647 but the file has tensors for 2 layers[^\n]*\n$/);
});

// ----------------------------------------------------------------------------
// 2. huge or lying ids: refused by their count before any element is read

test('ids of a billion, a lying Proxy, a fake length: refused by count, no element read', async () => {
  const model = await loadModel(TOY);
  try {
    let reads = 0;
    const liar = new Proxy([], { get: (t, k) => (k === 'length' ? 1e9 : (reads++, 1)) });
    expectError(() => model.forward(new Array(1e9)), 'INVALID_ARGUMENT', /positions 0 \.\. 999999999 go past the model's n_positions = 32/);
    expectError(() => model.forward(liar), 'INVALID_ARGUMENT', /go past the model's n_positions = 32/);
    expectError(() => model.generate(new Array(1e9)), 'INVALID_ARGUMENT', /1000000000 ids go past the model's n_positions = 32/);
    expectError(() => model.generate(liar), 'INVALID_ARGUMENT', /n_positions = 32/);
    expectError(() => model.generate({ length: 2 ** 32 - 1 }), 'INVALID_ARGUMENT', /ids must be an array of token ids/);
    expectError(() => model.forward(new Int32Array(1e7).fill(1)), 'INVALID_ARGUMENT', /positions 0 \.\. 9999999 go past/);
    assert.equal(reads, 0, 'no element of a too-long list is read');
  } finally {
    model.dispose();
  }
});

test('ids are read once each: a Proxy that answers differently the second time gets one answer', async () => {
  const model = await loadModel(TOY);
  try {
    const ids = model.encode('猫吃鱼');
    const counts = new Map();
    const once = new Proxy(ids, { get: (t, k) => { counts.set(k, (counts.get(k) ?? 0) + 1); return counts.get(k) > 1 && k !== 'length' ? 9999 : t[k]; } });
    const a = model.forward(once).logits.data, b = model.forward(ids).logits.data;
    assert.deepEqual(a, b);
    for (const [k, n] of counts) assert.equal(n, 1, `ids[${String(k)}] read ${n} times`);
  } finally {
    model.dispose();
  }
});

// ----------------------------------------------------------------------------
// 3. special files in a folder: never read forever, never block

test('model.safetensors linked to /dev/zero or /dev/urandom, or a FIFO: INVALID_MODEL "not a regular file"', async () => {
  const { config } = randomGpt2();
  for (const [what, make] of [['a character device', (p) => fs.symlinkSync('/dev/zero', p)], ['a character device', (p) => fs.symlinkSync('/dev/urandom', p)],
    ['a FIFO', (p) => execFileSync('mkfifo', [p])], ['a folder', (p) => fs.mkdirSync(p)]]) {
    const dir = folder({ 'config.json': JSON.stringify(config), 'model.safetensors': make });
    await rejects(loadModel(dir), 'INVALID_MODEL', new RegExp(`model\\.safetensors: is ${what}, not a regular file`));
  }
  const dir = folder({ 'config.json': (p) => execFileSync('mkfifo', [p]) });
  await rejects(loadModel(dir), 'INVALID_MODEL', /config\.json: is a FIFO, not a regular file/);
  const big = folder({ 'config.json': (p) => fs.writeFileSync(p, '{}') });
  fs.truncateSync(path.join(big, 'config.json'), 65 * 1024 * 1024);   // sparse: no disk used
  await rejects(loadModel(big), 'TOO_LARGE', /config\.json: 65\.0 MiB; a config or tokenizer file is read up to 64\.0 MiB/);
});

test('a weights file shorter than its header promises (it shrank after the open) is INVALID_MODEL', async () => {
  const { config, bytes } = randomGpt2();
  const dir = folder({ 'config.json': JSON.stringify(config), 'model.safetensors': bytes });
  // the size is taken when the file is opened; cut it afterwards
  const { files, close } = readCheckpointFolder(dir);
  fs.truncateSync(path.join(dir, 'model.safetensors'), parseSafetensors(bytes).tensors.get('wte.weight').begin + 4);
  try {
    await rejects(loadFiles(files), 'INVALID_MODEL', /model\.safetensors: ended at byte \d+, before the \d+ its size and header promised/);
  } finally {
    close();
  }
});

// ----------------------------------------------------------------------------
// 4 and 12. the header: nesting, counts, duplicates at every level

test('a header nested deeper than the format (3 levels) is refused while scanning, before JSON.parse', () => {
  const deep = '{"a":' + '['.repeat(5_000_000) + ']'.repeat(5_000_000) + '}';
  expectError(() => parseSafetensors(rawSafetensors(deep)), 'INVALID_MODEL', /nests deeper than the format's 3 levels \(header, entry, shape\) at byte 7/);
  expectError(() => parseSafetensors(rawSafetensors('{"a":{"dtype":"F32","shape":[[1]],"data_offsets":[0,4]}}', [new Uint8Array(4)])),
    'INVALID_MODEL', /nests deeper/);
});

test(`more than ${MAX_TENSORS} tensors (zero-size ones cost no data) are refused`, () => {
  const parts = [];
  for (let i = 0; i <= MAX_TENSORS; i++) parts.push(`"t${i}":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}`);
  expectError(() => parseSafetensors(rawSafetensors(`{${parts.join(',')}}`)), 'INVALID_MODEL', new RegExp(`lists more than ${MAX_TENSORS} tensors`));
  parts.length = MAX_TENSORS;
  assert.equal(parseSafetensors(rawSafetensors(`{${parts.join(',')}}`)).tensors.size, MAX_TENSORS, 'exactly the limit parses');
});

test('a key twice inside a tensor entry or __metadata__ is refused (the last one used to win)', () => {
  const data = [new Uint8Array(12416)];
  expectError(() => parseSafetensors(rawSafetensors('{"w":{"dtype":"F32","shape":[3104],"data_offsets":[999999999,1],"data_offsets":[0,12416]}}', data)),
    'INVALID_MODEL', /the key "data_offsets" twice inside one entry/);
  expectError(() => parseSafetensors(rawSafetensors('{"w":{"dtype":"I8","dtype":"F32","shape":[3104],"data_offsets":[0,12416]}}', data)),
    'INVALID_MODEL', /the key "dtype" twice/);
  expectError(() => parseSafetensors(rawSafetensors('{"__metadata__":{"format":"pt","format":"tf"},"w":{"dtype":"F32","shape":[3104],"data_offsets":[0,12416]}}', data)),
    'INVALID_MODEL', /the key "format" twice/);
  expectError(() => parseSafetensors(rawSafetensors('{"w":{"dtype":"F32","shape":[3104],"data_offsets":[0,12416]},"w":{"dtype":"F32","shape":[3104],"data_offsets":[0,12416]}}', data)),
    'INVALID_MODEL', /the key "w" twice \(/);
  // the same key in two entries, and a key named like a value, are fine
  const ok = parseSafetensors(writeSafetensors({ a: { shape: [1], data: Float32Array.of(1) }, dtype: { shape: [1], data: Float32Array.of(2) } }));
  assert.deepEqual([...ok.tensors.keys()], ['a', 'dtype']);
});

// ----------------------------------------------------------------------------
// 8. wasm memory above 2 GiB

test('forward with its buffers above 3.5 GiB of wasm memory gives the bits it gives low in memory', async () => {
  // 480 layers, C = 8, 125,000 positions: a 4 MB checkpoint whose KV cache reserves 3.84 GB
  // (untouched pages: no RSS); the forward's own buffers then sit above 3.84 GB
  const { config, bytes } = randomGpt2({ L: 480, H: 1, C: 8, V: 16, P: 125_000, seed: 3 });
  const cfg = readConfig(config), tensors = gpt2Tensors(cfg, parseSafetensors(bytes));
  const fill = (kind, layer, view) => readTensor(bytes, tensors.get(kind, layer).info, view);
  const low = await createRuntime(), high = await createRuntime();
  low.upload(cfg, fill, { maxPositions: 8 });
  const info = high.upload(cfg, fill, { reserve: 125_000 });
  assert.ok(info.bytes > 3.5 * 2 ** 30, `${info.bytes} bytes reserved`);
  const ids = [1, 5, 9, 2, 15];
  const a = low.forward(ids, { attention: true }), b = high.forward(ids, { attention: true });
  assert.deepEqual(b.logits.data, a.logits.data);
  assert.deepEqual(b.attention.data, a.attention.data);
  const step = high.forward([7], { pos: 5, lastOnly: true }), ref = low.forward([7], { pos: 5, lastOnly: true });
  assert.deepEqual(step.logits.data, ref.logits.data, 'a KV step reads the cache rows above 2 GiB');
  high.dispose(); low.dispose();
});

test('a model.safetensors over 2 GiB loads from its folder (read in pieces) and runs', { timeout: 300_000 }, async () => {
  // wte (2^23, 64) float32 is 2 GiB of zeros: a sparse file, written as holes
  const V = 2 ** 23, C = 64, small = randomGpt2({ L: 1, H: 2, C, V: 4, P: 4, seed: 9 });
  const header = {}, chunks = [];
  let at = 0;
  const parsed = parseSafetensors(small.bytes);
  for (const [name, t] of parsed.tensors) {
    const n = name === 'wte.weight' ? V * C * 4 : t.end - t.begin;
    header[name] = { dtype: 'F32', shape: name === 'wte.weight' ? [V, C] : t.shape, data_offsets: [at, at + n] };
    chunks.push(name === 'wte.weight' ? n : small.bytes.subarray(t.begin, t.end));
    at += n;
  }
  let head = new TextEncoder().encode(JSON.stringify(header));
  head = Uint8Array.from([...head, ...new Array((8 - (head.length % 8)) % 8).fill(0x20)]);
  const dir = folder({ 'config.json': JSON.stringify({ ...small.config, vocab_size: V }) });
  const fd = fs.openSync(path.join(dir, 'model.safetensors'), 'w');
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(head.length));
  let pos = 0;
  for (const part of [len, head, ...chunks]) {
    if (typeof part === 'number') pos += part;                  // a hole
    else { fs.writeSync(fd, part, 0, part.length, pos); pos += part.length; }
  }
  fs.ftruncateSync(fd, pos);
  fs.closeSync(fd);
  assert.ok(fs.statSync(path.join(dir, 'model.safetensors')).size > 2 ** 31);
  const model = await loadModel(dir);
  try {
    const { logits } = model.forward([0, 3, V - 1]);
    assert.deepEqual(logits.shape, [3, V]);
    assert.ok(logits.data.every((x) => x === 0), 'wte is zero: every logit is 0');
  } finally {
    model.dispose();
    fs.rmSync(dir, { recursive: true });
  }
});

// ----------------------------------------------------------------------------
// 9 and 15. generate and forward: typed errors, no silence

test('generate past the context window says so; a full prompt gives one token, done: "context"', async () => {
  const model = await loadModel(TOY);
  try {
    expectError(() => model.generate(new Array(33).fill(3)), 'INVALID_ARGUMENT', /33 ids go past the model's n_positions = 32/);
    expectError(() => model.generate(new Array(37).fill(-7)), 'INVALID_ARGUMENT', /37 ids go past/);
    expectError(() => model.generate([3, -7]), 'INVALID_ARGUMENT', /ids\[1\] must be an integer token id in \[0, vocab_size = 43\); received number -7/);
    const steps = [];
    for await (const s of model.generate(new Array(32).fill(3), { stop: false })) steps.push(s);
    assert.equal(steps.length, 1);
    assert.equal(steps[0].done, 'context');
  } finally {
    model.dispose();
  }
});

test('generate and forward: every bad argument a typed error at the call', async () => {
  const model = await loadModel(TOY);
  try {
    for (const x of [null, undefined, 5, 'abc', { length: 3 }]) {
      expectError(() => model.generate(x), 'INVALID_ARGUMENT', /model\.generate: ids must be an array of token ids/);
    }
    expectError(() => model.forward([1, 2], { atention: true }), 'INVALID_ARGUMENT', /unknown option "atention"; expected attention/);
    expectError(() => model.forward([1, 2], { get attention() { throw new Error('a getter'); } }), 'INVALID_ARGUMENT', /model\.forward: a getter/);
    expectError(() => model.forward([1, 2], { attention: { layers: [2] } }), 'INVALID_ARGUMENT', /attention\.layers\[0\] must be an integer .* \[0, vocab_size = 2\)|layers/);
    expectError(() => model.forward([1, 2], { attention: { layer: 1 } }), 'INVALID_ARGUMENT', /unknown key "layer" in attention/);
    expectError(() => model.forward([1, 2], { attention: 'yes' }), 'INVALID_ARGUMENT', /attention must be true, false or \{ layers, heads \}/);
    expectError(() => model.forward(new Proxy([1, 2], { get: (t, k) => { if (k === '1') throw new Error('trap'); return t[k]; } })), 'INVALID_ARGUMENT', /ids\[1\] cannot be read \(trap\)/);
  } finally {
    model.dispose();
  }
});

test('forward({ attention: { layers, heads } }) returns those maps, equal to the full pass, and null elsewhere', async () => {
  const model = await loadModel(TOY);
  try {
    const ids = model.encode('我看见那只猫在吃鱼');
    const full = model.forward(ids, { attention: true }), one = model.forward(ids, { attention: { layers: [1], heads: [3, 0] } });
    assert.deepEqual(one.logits.data, full.logits.data);
    for (let l = 0; l < 2; l++) for (let h = 0; h < 4; h++) {
      if (l === 1 && (h === 3 || h === 0)) assert.deepEqual(one.attention[l][h], full.attention[l][h]);
      else assert.equal(one.attention[l][h], null, `layer ${l} head ${h}`);
    }
  } finally {
    model.dispose();
  }
});

// ----------------------------------------------------------------------------
// 14. messages

test('messages: epsilon that underflows, a Proxy of bytes, detached bytes, a config with a BOM', async () => {
  const { config, bytes } = randomGpt2();
  await rejects(loadModel({ config: { ...config, layer_norm_epsilon: 1e-50 }, weights: bytes }), 'INVALID_MODEL', /layer_norm_epsilon = 1e-50 underflows to 0 in float32/);
  await rejects(loadModel({ config, weights: new Proxy(bytes, {}) }), 'INVALID_ARGUMENT', /looks like a Uint8Array but is not one \(a Proxy/);
  const gone = bytes.slice();
  structuredClone(gone.buffer, { transfer: [gone.buffer] });
  await rejects(loadModel({ config, weights: gone.buffer }), 'INVALID_ARGUMENT', /detached/);
  await rejects(loadModel({ config, weights: gone }), 'INVALID_ARGUMENT', /the file has 0 bytes|detached/);
  const model = await loadModel({ config: '\ufeff' + JSON.stringify(config), weights: bytes });
  assert.equal(model.config.n_layer, 2);
  model.dispose();
});
