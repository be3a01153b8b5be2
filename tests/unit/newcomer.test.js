// newcomer.test.js - what a new user met (issue 39, items 1 and 5): messages that name the wrong
// thing or come as a stack trace. Each test reproduces the report's command.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { loadModel } from '../../web/model/model-node.js';
import { root } from '../helpers.js';

const toy = await loadModel('toy-zh');   // 2 layers, 4 heads, a decoder
const failure = (fn) => { try { fn(); } catch (e) { return e; } assert.fail('expected an error'); };

test('forward: a layer or head out of range is named as a layer or head, with the config key (not a token id)', () => {
  const layer = failure(() => toy.forward([1, 2], { attention: { layers: [5] } }));
  assert.equal(layer.code, 'INVALID_ARGUMENT');
  assert.equal(layer.message, 'model.forward: attention.layers[0] must be an integer layer index in [0, n_layer = 2); received number 5');
  const head = failure(() => toy.forward([1, 2], { attention: { heads: [0, -1] } }));
  assert.equal(head.message, 'model.forward: attention.heads[1] must be an integer head index in [0, n_head = 4); received number -1');
  assert.match(failure(() => toy.forward([1, 2], { attention: { layers: [] } })).message, /at least one layer index$/);
  assert.match(failure(() => toy.forward([1, 2], { attention: { heads: [0, 1, 2, 3, 0] } })).message, /5 heads; the model has n_head = 4/);
  // token ids keep their own words
  assert.match(failure(() => toy.forward([1, 1e6])).message, /ids\[1\] must be an integer token id in \[0, vocab_size = \d+\)/);
});

test('fillMask on a decoder: a typed INVALID_ARGUMENT, as the CLI says, not "is not a function"', () => {
  const e = failure(() => toy.fillMask('猫吃[MASK]'));
  assert.equal(e.name, 'AttentionError');
  assert.equal(e.code, 'INVALID_ARGUMENT');
  assert.match(e.message, /^model\.fillMask is for BERT encoders; this checkpoint is gpt2, a decoder/);
});

test('attnmap model --head -1 and --layer -3: the range, not parseArgs\' "ambiguous"', () => {
  const run = (...args) => spawnSync(process.execPath, [path.join(root, 'bin/attnmap.js'), 'model', 'toy-zh', '--text', '猫吃鱼', ...args], { encoding: 'utf8' });
  const head = run('--head', '-1');
  assert.equal(head.status, 2);
  assert.equal(head.stdout, '');
  assert.equal(head.stderr, 'attnmap: --head must be a whole number from 0 to 3; received "-1"\n');
  assert.equal(run('--layer', '-3', '--summary').stderr, 'attnmap: --layer must be a whole number from 0 to 1; received "-3"\n');
  assert.equal(run('--head=-2').stderr, 'attnmap: --head must be a whole number from 0 to 3; received "-2"\n');
  const good = run('--head', '1');
  assert.equal(good.status, 0, good.stderr);
  assert.match(good.stdout, /^<svg /);
});

test('npm start on a busy port: one line naming the port and what to do, exit 1; a PORT that is not a number: exit 2', async () => {
  const busy = net.createServer();
  const port = await new Promise((r) => busy.listen(0, '127.0.0.1', () => r(busy.address().port)));
  try {
    const env = { ...process.env, PORT: String(port) };
    const r = spawnSync(process.execPath, [path.join(root, 'scripts/start.js')], { encoding: 'utf8', env, timeout: 60000 });
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stderr, `attnmap: port ${port} on 127.0.0.1 is in use; try another, e.g. PORT=9000 npm start\n`);
    const bad = spawnSync(process.execPath, [path.join(root, 'scripts/start.js')], { encoding: 'utf8', env: { ...env, PORT: 'eighty' }, timeout: 60000 });
    assert.equal(bad.status, 2);
    assert.equal(bad.stderr, 'attnmap: PORT must be a port number from 0 to 65535; received "eighty"\n');
  } finally {
    busy.close();
  }
});

test('the page\'s byte counts: a size the hub did not give shows as "?", not "null B" (issue 35, finding 5)', async () => {
  const { formatBytes } = await import('../../web/page/page-files.js');
  assert.equal(formatBytes(null), '?');
  assert.equal(formatBytes(undefined), '?');
  assert.equal(formatBytes(999), '999 B');
  assert.equal(formatBytes(548e6), '548 MB');
});

// issue 39, item 2: a folder on disk, or a load by name from the Hugging Face cache, reported no
// progress at all, while the same weights as a Blob gave one event per slice read
test('onProgress fires for a folder and for a Hugging Face cache hit: forward only, ending at the file\'s size', async () => {
  const fs = await import('node:fs');
  const os = await import('node:os');
  const { writePythonCache } = await import('../fixtures/hub/python-cache.js');
  const folder = path.join(root, 'tests/golden/gpt2/tiny-f32');
  const size = fs.statSync(path.join(folder, 'model.safetensors')).size;
  const check = (events, how) => {
    const weights = events.filter((e) => e.file === 'model.safetensors');
    assert.ok(weights.length >= 2, `${how}: ${weights.length} progress events for model.safetensors`);
    for (let i = 1; i < weights.length; i++) assert.ok(weights[i].loaded > weights[i - 1].loaded, `${how}: event ${i} goes back`);
    assert.deepEqual(weights.at(-1), { file: 'model.safetensors', loaded: size, total: size }, how);
  };
  const fromFolder = [];
  (await loadModel(folder, { onProgress: (e) => fromFolder.push(e) })).dispose();
  check(fromFolder, 'a folder');
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-progress-'));
  try {
    const files = Object.fromEntries(fs.readdirSync(folder).filter((f) => /\.(json|safetensors|txt)$/.test(f) && f !== 'expected.json').map((f) => [f, fs.readFileSync(path.join(folder, f))]));
    writePythonCache(cacheDir, 'attnmap/tiny', { commit: 'a'.repeat(40), files });
    const fromCache = [];
    (await loadModel('attnmap/tiny', { cacheDir, offline: true, onProgress: (e) => fromCache.push(e) })).dispose();
    check(fromCache, 'the cache');
  } finally {
    fs.rmSync(cacheDir, { recursive: true, force: true });
  }
});
