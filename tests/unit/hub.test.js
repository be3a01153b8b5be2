// hub.test.js - models by name in Node (issue 23) against a mock Hugging Face Hub on loopback
// (tests/fixtures/hub/mock-hub.js: the hub and a separate download host that large files
// redirect to, as huggingface.co does): the first load downloads into the cache in Python's
// layout and gives PyTorch's numbers; a second load needs no server; a cache written in Python's
// layout loads offline; the token never reaches the download host; an interrupted download
// resumes; progress adds up; bad ids, missing repos and files, gated repos and a "hub" that
// answers HTML are clear AttentionErrors; the CLI downloads with the same code and lists the cache.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadModel, hubSize, cachedModels, deleteCachedModel } from '../../web/model/model-node.js';
import { AttentionError } from '../../web/core/errors.js';
import { startMockHub } from '../fixtures/hub/mock-hub.js';
import { writePythonCache } from '../fixtures/hub/python-cache.js';
import { root } from '../helpers.js';
import { maxDiff } from '../model-helpers.js';

const GOLDEN = path.join(root, 'tests/golden/llama');
const COMMIT = 'a'.repeat(39) + '1', SHARDED_COMMIT = 'b'.repeat(39) + '2', TOKEN = 'hf_mocktoken';
const filesOf = (name, extra = {}) => ({
  ...Object.fromEntries(fs.readdirSync(path.join(GOLDEN, name)).filter((f) => f !== 'expected.json').map((f) => [f, fs.readFileSync(path.join(GOLDEN, name, f))])),
  ...extra,
});
const expected = (name) => JSON.parse(fs.readFileSync(path.join(GOLDEN, name, 'expected.json'), 'utf8'));
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-hub-'));
const temps = [];
after(() => { for (const d of temps) fs.rmSync(d, { recursive: true, force: true }); });
const cacheDir = () => { const d = tmp(); temps.push(d); return d; };

// a repo that also holds what attnmap must never fetch
const REPOS = {
  'attnmap/qwen2': { commit: COMMIT, files: filesOf('qwen2-bf16', { 'pytorch_model.bin': Buffer.alloc(20000, 7), 'model.onnx': Buffer.alloc(100, 1), 'README.md': Buffer.from('# qwen2\n') }) },
  'attnmap/sharded': { commit: SHARDED_COMMIT, files: filesOf('qwen2-sharded-f32') },
  'attnmap/gated': { commit: 'c'.repeat(40), files: filesOf('qwen2-bf16') },
};

async function golden(model, name) {
  const g = expected(name), seq = g.sequences[1];
  const { logits } = model.forward(seq.ids);
  assert.ok(maxDiff(seq.logits, logits.data) <= 1e-4, `${name}: logits as PyTorch's`);
}

async function rejects(promise, code, pattern) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof AttentionError, `${e?.name}: ${e?.message}`);
    assert.equal(e.code, code, e.message);
    assert.match(e.message, pattern);
    return true;
  });
}

test('first load: downloaded into the cache in Python\'s layout, PyTorch\'s numbers, progress that adds up, nothing else fetched; then no server needed', async () => {
  const hub = await startMockHub({ repos: REPOS });
  const dir = cacheDir(), events = [];
  try {
    const model = await loadModel('attnmap/qwen2', { cacheDir: dir, hubUrl: hub.url, onProgress: (e) => events.push(e) });
    await golden(model, 'qwen2-bf16');
    model.dispose();
    const repoDir = path.join(dir, 'models--attnmap--qwen2');
    assert.equal(fs.readFileSync(path.join(repoDir, 'refs/main'), 'utf8'), COMMIT, 'refs/main names the commit, no newline');
    for (const f of ['config.json', 'model.safetensors']) {
      const link = path.join(repoDir, 'snapshots', COMMIT, f), target = fs.readlinkSync(link);
      assert.equal(target, path.join('..', '..', 'blobs', hub.file('attnmap/qwen2', f).etag), `${f}: a relative link to ../../blobs/ETAG`);
      assert.deepEqual(fs.readFileSync(link), REPOS['attnmap/qwen2'].files[f]);
    }
    const fetched = hub.requests.filter((r) => r.method === 'GET' && /\/resolve\//.test(r.path)).map((r) => r.path.split('/').pop());
    assert.ok(!fetched.some((f) => /\.(bin|onnx|md)$/.test(f)), `never a .bin, .onnx or README: ${fetched}`);
    assert.ok(hub.requests.some((r) => r.host === 'cdn'), 'the weights came from the download host');
    for (const f of ['config.json', 'model.safetensors']) {
      const last = events.filter((e) => e.file === f).at(-1);
      assert.deepEqual([last.loaded, last.total], [REPOS['attnmap/qwen2'].files[f].length, REPOS['attnmap/qwen2'].files[f].length], `${f}: progress ends at its size`);
      const of = events.filter((e) => e.file === f);
      for (let i = 1; i < of.length; i++) assert.ok(of[i].loaded > of[i - 1].loaded, `${f}: progress only moves forward (the download, then the reading, counted once)`);
    }
  } finally {
    await hub.stop();
  }
  const again = await loadModel('attnmap/qwen2', { cacheDir: dir, hubUrl: hub.url });   // the servers are gone
  await golden(again, 'qwen2-bf16');
  again.dispose();
});

test('a cache written by Python\'s huggingface_hub loads offline, from HF_HUB_CACHE too', async () => {
  const dir = cacheDir();
  writePythonCache(dir, 'Qwen/qwen3-mini', { commit: 'd'.repeat(40), files: filesOf('qwen3-f16-headdim') });
  const model = await loadModel('Qwen/qwen3-mini', { cacheDir: dir, offline: true, hubUrl: 'http://127.0.0.1:9' });
  await golden(model, 'qwen3-f16-headdim');
  model.dispose();
  const cli = spawnSync(process.execPath, [path.join(root, 'bin/attnmap.js'), 'model', 'Qwen/qwen3-mini', '--ids', '1,2,3', '--summary'],
    { encoding: 'utf8', env: { ...process.env, HF_HUB_CACHE: dir, HF_HUB_OFFLINE: '1', HF_ENDPOINT: 'http://127.0.0.1:9' } });
  assert.equal(cli.status, 0, cli.stderr);
  assert.match(cli.stdout, /^3 tokens: 1 2 3\n4 query heads per layer in 1 groups of 4/);
  const listing = spawnSync(process.execPath, [path.join(root, 'bin/attnmap.js'), 'cache', '--dir', dir], { encoding: 'utf8' });
  assert.match(listing.stdout, /^Qwen\/qwen3-mini {2}main {2}\d+\.\d MB {2}qwen3$/m);
  await rejects(loadModel('Qwen/not-cached', { cacheDir: dir, offline: true }), 'FETCH_FAILED', /Qwen\/not-cached \(revision main\) is not in the Hugging Face cache at .*offline is set: nothing was downloaded/);
});

test('a gated repo: the token goes to the hub and never to the download host; without it, a clear error', async () => {
  const hub = await startMockHub({ repos: REPOS, token: TOKEN, gated: ['attnmap/gated'] });
  try {
    await rejects(loadModel('attnmap/gated', { cacheDir: cacheDir(), hubUrl: hub.url, token: null }), 'FETCH_FAILED', /attnmap\/gated is gated or private: accept its license on the hub and give a token/);
    const model = await loadModel('attnmap/gated', { cacheDir: cacheDir(), hubUrl: hub.url, token: TOKEN });
    model.dispose();
    const cdn = hub.requests.filter((r) => r.host === 'cdn'), hubs = hub.requests.filter((r) => r.host === 'hub' && r.path.includes('gated'));
    assert.ok(cdn.length > 0 && cdn.every((r) => r.authorization === null), 'no Authorization header on the download host');
    assert.ok(hubs.some((r) => r.authorization === `Bearer ${TOKEN}`), 'the hub got the token');
  } finally {
    await hub.stop();
  }
});

test('an interrupted download resumes from where it stopped (a Range request), and the file is whole', async () => {
  const hub = await startMockHub({ repos: REPOS });
  const dir = cacheDir();
  try {
    hub.setDrop('model.safetensors', 20000);
    await rejects(loadModel('attnmap/qwen2', { cacheDir: dir, hubUrl: hub.url }), 'FETCH_FAILED', /the download of model\.safetensors broke off after 20000 bytes.*the next load resumes it/);
    const model = await loadModel('attnmap/qwen2', { cacheDir: dir, hubUrl: hub.url });
    await golden(model, 'qwen2-bf16');
    model.dispose();
    assert.ok(hub.requests.some((r) => r.host === 'cdn' && r.range === 'bytes=20000-'), 'the second load asked for bytes=20000-');
  } finally {
    await hub.stop();
  }
});

test('a sharded repo: the index, then exactly the shards it names', async () => {
  const hub = await startMockHub({ repos: REPOS });
  try {
    const model = await loadModel('attnmap/sharded', { cacheDir: cacheDir(), hubUrl: hub.url });
    await golden(model, 'qwen2-sharded-f32');
    model.dispose();
  } finally {
    await hub.stop();
  }
});

test('bad ids, a repo or revision that does not exist, a "hub" that answers HTML: clear AttentionErrors', async () => {
  await rejects(loadModel('not a repo!', { cacheDir: cacheDir() }), 'INVALID_ARGUMENT', /is not a folder, a URL, a shipped model .* or a Hugging Face repo id/);
  await rejects(loadModel('a--b/c', { cacheDir: cacheDir() }), 'INVALID_ARGUMENT', /Hugging Face repo id/);
  const hub = await startMockHub({ repos: REPOS });
  try {
    await rejects(loadModel('attnmap/missing', { cacheDir: cacheDir(), hubUrl: hub.url }), 'FETCH_FAILED', /attnmap\/missing/);
    await rejects(loadModel('attnmap/qwen2', { cacheDir: cacheDir(), hubUrl: hub.url, revision: 'v9' }), 'FETCH_FAILED', /revision v9|HTTP 404/);
    await rejects(loadModel('attnmap/qwen2', { cacheDir: cacheDir(), hubUrl: hub.url, revision: '../x' }), 'INVALID_ARGUMENT', /revision must be a branch, tag or commit/);
  } finally {
    await hub.stop();
  }
  const html = await startMockHub({ repos: REPOS, html: true });
  try {
    await rejects(loadModel('attnmap/qwen2', { cacheDir: cacheDir(), hubUrl: html.url }), 'FETCH_FAILED', /HTML page, not the hub's API/);
  } finally {
    await html.stop();
  }
});

test('hubSize, cachedModels, deleteCachedModel in Node: the hub\'s sizes before a download, the loadable snapshots of the cache, a repo removed', async () => {
  const hub = await startMockHub({ repos: REPOS });
  const dir = cacheDir();
  try {
    const { files, total } = await hubSize('attnmap/qwen2', { hubUrl: hub.url });
    // the repo also holds pytorch_model.bin, model.onnx and README.md: never counted
    const want = Object.keys(REPOS['attnmap/qwen2'].files).filter((f) => !/\.(bin|onnx|md)$/.test(f)).sort();
    assert.deepEqual(files.map((f) => f.path).sort(), want);
    assert.equal(total, files.reduce((sum, f) => sum + REPOS['attnmap/qwen2'].files[f.path].length, 0), 'total: the bytes of the files a load fetches');
    assert.deepEqual(await cachedModels({ cacheDir: dir, ollamaDir: path.join(dir, 'no-ollama'), lmstudioDir: path.join(dir, 'no-lmstudio') }), [], 'an empty cache');
    (await loadModel('attnmap/qwen2', { cacheDir: dir, hubUrl: hub.url })).dispose();
  } finally {
    await hub.stop();
  }
  writePythonCache(dir, 'Qwen/qwen3-mini', { commit: 'd'.repeat(40), files: filesOf('qwen3-f16-headdim') });
  writePythonCache(dir, 'other/not-a-model', { commit: 'e'.repeat(40), files: { 'config.json': Buffer.from('{"model_type":"whisper"}') } });
  const listed = await cachedModels({ cacheDir: dir, ollamaDir: path.join(dir, 'no-ollama'), lmstudioDir: path.join(dir, 'no-lmstudio') });
  assert.deepEqual(listed.map(({ repo, revision, commit, modelType }) => ({ repo, revision, commit, modelType })), [
    { repo: 'attnmap/qwen2', revision: 'main', commit: COMMIT, modelType: 'qwen2' },
    { repo: 'Qwen/qwen3-mini', revision: 'main', commit: 'd'.repeat(40), modelType: 'qwen3' },
  ], 'the loadable snapshots, by repo; the whisper folder left out');
  const bytesOf = (name) => Object.values(filesOf(name)).reduce((sum, b) => sum + b.length, 0);
  assert.equal(listed[1].bytes, bytesOf('qwen3-f16-headdim'), 'bytes: the snapshot\'s files');
  await deleteCachedModel('Qwen/qwen3-mini', { cacheDir: dir });
  assert.ok(!fs.existsSync(path.join(dir, 'models--Qwen--qwen3-mini')), 'the repo\'s folder is gone');
  assert.deepEqual((await cachedModels({ cacheDir: dir, ollamaDir: path.join(dir, 'no-ollama'), lmstudioDir: path.join(dir, 'no-lmstudio') })).map((m) => m.repo), ['attnmap/qwen2']);
  await rejects(deleteCachedModel('../../etc', { cacheDir: dir }), 'INVALID_ARGUMENT', /expected a Hugging Face repo id/);
  await rejects(hubSize('no such id!'), 'INVALID_ARGUMENT', /expected a Hugging Face repo id/);
});
