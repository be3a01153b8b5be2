// hub-gguf.test.js - a GGUF repo of the Hugging Face Hub by name (issue 38, item 6):
// loadModel('ORG/REPO-GGUF', { file }) fetches that one .gguf (no config.json, no tokenizer: the
// file holds them) into the cache in Python's layout, with the downloader's checks (sha256,
// resume, progress, the token kept from the download host), against the mock hub of
// tests/fixtures/hub/mock-hub.js; the repo's one .gguf without { file }; several: an error naming
// them; a bad or missing file: typed errors before anything is fetched; a second load, and a cache
// Python wrote, load with the servers gone; cachedModels and `attnmap cache` list the GGUF repo.
// The GGUF is the golden Qwen2 checkpoint as convert_hf_to_gguf.py writes it, so the loaded
// model's logits are checked against PyTorch's (tests/golden/llama/qwen2-bf16/expected.json).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadModel, cachedModels, hubSize } from '../../web/model/model-node.js';
import { AttentionError } from '../../web/core/errors.js';
import { goldenGguf } from '../golden-gguf.js';
import { startMockHub } from '../fixtures/hub/mock-hub.js';
import { writePythonCache } from '../fixtures/hub/python-cache.js';
import { root } from '../helpers.js';
import { maxDiff } from '../model-helpers.js';

const GOLDEN = path.join(root, 'tests/golden/llama/qwen2-bf16');
const COMMIT = 'e'.repeat(39) + '1', MULTI_COMMIT = 'f'.repeat(39) + '2', ST_COMMIT = 'a'.repeat(39) + '3', TOKEN = 'hf_mocktoken';

const GGUF = goldenGguf();
const SHA256 = crypto.createHash('sha256').update(GGUF).digest('hex');

// twelve .gguf files (the error names ten), a projector, a README
const MULTI_NAMES = Array.from({ length: 12 }, (_, i) => `tiny-q${String(i).padStart(2, '0')}.gguf`);
const REPOS = {
  'attnmap/tiny-GGUF': { commit: COMMIT, files: { 'tiny-q4_0.gguf': GGUF, 'mmproj-tiny-f16.gguf': Buffer.alloc(64, 3), 'README.md': '# tiny\n', 'LICENSE': 'MIT\n' } },
  'attnmap/multi-GGUF': { commit: MULTI_COMMIT, files: { ...Object.fromEntries(MULTI_NAMES.map((n) => [n, GGUF])), 'README.md': '# multi\n' } },
  'attnmap/qwen2': { commit: ST_COMMIT, files: Object.fromEntries(['config.json', 'model.safetensors'].map((f) => [f, fs.readFileSync(path.join(GOLDEN, f))])) },
  'attnmap/gated-GGUF': { commit: COMMIT, files: { 'tiny-q4_0.gguf': GGUF } },
};

const temps = [];
after(() => { for (const d of temps) fs.rmSync(d, { recursive: true, force: true }); });
const cacheDir = () => { const d = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-hub-gguf-')); temps.push(d); return d; };
const noStores = (dir) => ({ ollamaDir: path.join(dir, 'no-ollama'), lmstudioDir: path.join(dir, 'no-lmstudio') });

// PyTorch's logits for the golden sequence, from the model loaded
function golden(model) {
  const seq = JSON.parse(fs.readFileSync(path.join(GOLDEN, 'expected.json'), 'utf8')).sequences[1];
  const { logits } = model.forward(seq.ids);
  assert.ok(maxDiff(seq.logits, logits.data) <= 1e-4, 'logits as PyTorch\'s');
  model.dispose();
}

async function rejects(promise, code, pattern) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof AttentionError, `${e?.name}: ${e?.message}`);
    assert.equal(e.code, code, e.message);
    assert.match(e.message, pattern);
    return true;
  });
}

// the files a load asked the hub for (HEAD or GET of /resolve/, /api/resolve-cache/), each once, sorted
const resolved = (hub) => [...new Set(hub.requests.filter((r) => r.host === 'hub' && /\/resolve(-cache)?\//.test(r.path))
  .map((r) => decodeURIComponent(r.path.split('?')[0].split('/').pop())))].sort();
const snapshotFiles = (dir, repo, commit) => fs.readdirSync(path.join(dir, `models--${repo.replace('/', '--')}`, 'snapshots', commit)).sort();

test('{ file }: that one file into blobs/snapshots/refs as huggingface_hub writes it, progress to its size, PyTorch\'s logits; then offline with the servers gone', async () => {
  const hub = await startMockHub({ repos: REPOS });
  const dir = cacheDir(), events = [], file = 'tiny-q07.gguf';
  try {
    golden(await loadModel('attnmap/multi-GGUF', { file, cacheDir: dir, hubUrl: hub.url, onProgress: (e) => events.push(e) }));
    const repoDir = path.join(dir, 'models--attnmap--multi-GGUF');
    assert.equal(fs.readFileSync(path.join(repoDir, 'refs/main'), 'utf8'), MULTI_COMMIT, 'refs/main names the commit, no newline');
    assert.deepEqual(snapshotFiles(dir, 'attnmap/multi-GGUF', MULTI_COMMIT), [file], 'the snapshot holds the file asked for, nothing else');
    const link = path.join(repoDir, 'snapshots', MULTI_COMMIT, file);
    assert.equal(fs.readlinkSync(link), path.join('..', '..', 'blobs', SHA256), 'a relative link to ../../blobs/SHA256 (an LFS file\'s ETag)');
    assert.deepEqual(fs.readdirSync(path.join(repoDir, 'blobs')), [SHA256], 'one blob, no .incomplete left');
    assert.ok(fs.readFileSync(link).equals(GGUF));
    assert.deepEqual(resolved(hub), [file], 'one file fetched: no config.json, no tokenizer, no other .gguf');
    assert.deepEqual(hub.requests.filter((r) => r.host === 'cdn').map((r) => r.method), ['GET'], 'the bytes came from the download host, once');
    const of = events.filter((e) => e.file === file);
    assert.deepEqual(of[0], { file, loaded: 0, total: GGUF.length }, 'the first event: 0 of the size the hub announced');
    assert.deepEqual(of.at(-1), { file, loaded: GGUF.length, total: GGUF.length }, 'the last: all of it');
    for (let i = 1; i < of.length; i++) assert.ok(of[i].loaded > of[i - 1].loaded, 'progress only moves forward');
  } finally {
    await hub.stop();
  }
  golden(await loadModel('attnmap/multi-GGUF', { file, cacheDir: dir, hubUrl: hub.url }));          // the servers are gone
  golden(await loadModel('attnmap/multi-GGUF', { cacheDir: dir, hubUrl: hub.url, offline: true }));  // the snapshot's one .gguf
  process.env.HF_HUB_OFFLINE = '1';
  try {
    golden(await loadModel('attnmap/multi-GGUF', { file, cacheDir: dir, hubUrl: hub.url }));
    await rejects(loadModel('attnmap/multi-GGUF', { file: 'tiny-q03.gguf', cacheDir: dir, hubUrl: hub.url }), 'FETCH_FAILED',
      /^tiny-q03\.gguf of attnmap\/multi-GGUF \(revision main\) is not in the Hugging Face cache at .*offline is set \(HF_HUB_OFFLINE\): nothing was downloaded/);
  } finally {
    delete process.env.HF_HUB_OFFLINE;
  }
});

test('no { file }: the repo\'s one .gguf (a projector and a README left alone); several: INVALID_ARGUMENT naming ten of them, nothing fetched', async () => {
  const hub = await startMockHub({ repos: REPOS });
  const dir = cacheDir();
  try {
    golden(await loadModel('attnmap/tiny-GGUF', { cacheDir: dir, hubUrl: hub.url }));
    assert.deepEqual(resolved(hub), ['tiny-q4_0.gguf'], 'never the mmproj file, the README or the LICENSE');
    assert.deepEqual(snapshotFiles(dir, 'attnmap/tiny-GGUF', COMMIT), ['tiny-q4_0.gguf']);
    hub.requests.length = 0;
    const e = await loadModel('attnmap/multi-GGUF', { cacheDir: dir, hubUrl: hub.url }).catch((err) => err);
    assert.ok(e instanceof AttentionError && e.code === 'INVALID_ARGUMENT', `${e?.code}: ${e?.message}`);
    assert.equal(e.message, `loadModel: attnmap/multi-GGUF holds 12 GGUF files; say which with { file } (the CLI: --file): ${MULTI_NAMES.slice(0, 10).join(', ')}, and 2 more`);
    assert.deepEqual(resolved(hub), [], 'nothing downloaded');
    assert.ok(!fs.existsSync(path.join(dir, 'models--attnmap--multi-GGUF', 'blobs')), 'no blob written');
    // hubSize: the choice, not an error (the page's hub panel offers the files); with { file }, that one
    const several = await hubSize('attnmap/multi-GGUF', { hubUrl: hub.url });
    assert.deepEqual(several, { files: [], total: 0, gguf: MULTI_NAMES.map((p) => ({ path: p, size: GGUF.length })) });
    const one = await hubSize('attnmap/multi-GGUF', { hubUrl: hub.url, file: MULTI_NAMES[3] });
    assert.deepEqual([one.files.map((f) => f.path), one.total], [[MULTI_NAMES[3]], GGUF.length]);
    assert.deepEqual((await hubSize('attnmap/tiny-GGUF', { hubUrl: hub.url })).files.map((f) => f.path), ['tiny-q4_0.gguf']);
  } finally {
    await hub.stop();
  }
});

test('a bad { file }: INVALID_ARGUMENT before any request; a file the repo lacks, or { file } for a safetensors repo: INVALID_ARGUMENT naming what it holds', async () => {
  const hub = await startMockHub({ repos: REPOS });
  const dir = cacheDir();
  try {
    for (const file of ['../tiny-q00.gguf', '/etc/tiny.gguf', 'sub/tiny.gguf', 'sub\\tiny.gguf', 'a..b.gguf', '.hidden.gguf', 'tiny.bin', 'tiny.gguf.part', '', 42, null]) {
      await rejects(loadModel('attnmap/multi-GGUF', { file, cacheDir: dir, hubUrl: hub.url }), 'INVALID_ARGUMENT', /^loadModel: file must name a \.gguf file at the top of the repo/);
    }
    assert.deepEqual(hub.requests, [], 'no request for a bad name');
    await rejects(loadModel('attnmap/multi-GGUF', { file: 'tiny-q99.gguf', cacheDir: dir, hubUrl: hub.url }), 'INVALID_ARGUMENT',
      new RegExp(`^loadModel: attnmap/multi-GGUF has no file tiny-q99\\.gguf; its GGUF files: ${MULTI_NAMES.slice(0, 10).join(', ').replace(/\./g, '\\.')}, and 2 more$`));
    await rejects(loadModel('attnmap/qwen2', { file: 'model.gguf', cacheDir: dir, hubUrl: hub.url }), 'INVALID_ARGUMENT',
      /^loadModel: attnmap\/qwen2 has no file model\.gguf; it holds no \.gguf file \(a safetensors checkpoint: load it without \{ file \}\)$/);
    assert.deepEqual(resolved(hub), [], 'nothing downloaded');
    golden(await loadModel('attnmap/qwen2', { cacheDir: dir, hubUrl: hub.url }));   // a safetensors repo: as before
    assert.deepEqual(resolved(hub).sort(), ['config.json', 'model.safetensors']);
  } finally {
    await hub.stop();
  }
});

test('the downloader\'s checks hold for a .gguf: bytes that are not the sha256 the hub named are deleted; a broken download resumes; the token never reaches the download host', async () => {
  const hub = await startMockHub({ repos: REPOS, token: TOKEN, gated: ['attnmap/gated-GGUF'] });
  const dir = cacheDir();
  try {
    const filler = Buffer.alloc(GGUF.length, 0x41);
    hub.setIntercept(({ host, req, res }) => {
      if (host !== 'cdn' || req.method !== 'GET') return false;
      res.writeHead(200, { 'Content-Length': filler.length });
      res.end(filler);
      return true;
    });
    await rejects(loadModel('attnmap/tiny-GGUF', { cacheDir: dir, hubUrl: hub.url, token: TOKEN }), 'FETCH_FAILED',
      new RegExp(`tiny-q4_0\\.gguf is not the file the hub named: its sha256 is [0-9a-f]{64}, expected ${SHA256}`));
    assert.deepEqual(fs.readdirSync(path.join(dir, 'models--attnmap--tiny-GGUF', 'blobs')), [], 'no blob nor part');
    hub.setIntercept(null);
    hub.setDrop('tiny-q4_0.gguf', 4000);
    await rejects(loadModel('attnmap/tiny-GGUF', { cacheDir: dir, hubUrl: hub.url, token: TOKEN }), 'FETCH_FAILED', /the download of tiny-q4_0\.gguf broke off after 4000 bytes.*the next load resumes it/);
    golden(await loadModel('attnmap/tiny-GGUF', { cacheDir: dir, hubUrl: hub.url, token: TOKEN }));
    assert.ok(hub.requests.some((r) => r.host === 'cdn' && r.range === 'bytes=4000-'), 'the second load asked for bytes=4000-');
    hub.requests.length = 0;
    await rejects(loadModel('attnmap/gated-GGUF', { cacheDir: dir, hubUrl: hub.url, token: null }), 'FETCH_FAILED', /attnmap\/gated-GGUF is gated or private/);
    golden(await loadModel('attnmap/gated-GGUF', { cacheDir: dir, hubUrl: hub.url, token: TOKEN }));
    const cdn = hub.requests.filter((r) => r.host === 'cdn');
    assert.ok(cdn.length > 0 && cdn.every((r) => r.authorization === null), 'no Authorization header on the download host');
    assert.ok(hub.requests.some((r) => r.host === 'hub' && r.authorization === `Bearer ${TOKEN}`), 'the hub got the token');
  } finally {
    await hub.stop();
  }
});

test('a cache Python wrote for a GGUF repo loads offline; several .gguf there: say which; cachedModels and `attnmap cache` list the files and the size', async () => {
  const dir = cacheDir();
  const py = writePythonCache(dir, 'Qwen/tiny-GGUF', { commit: 'd'.repeat(40), files: { 'tiny-q4_0.gguf': GGUF, 'tiny-q8_0.gguf': GGUF, 'README.md': '# tiny\n' } });
  const offline = { cacheDir: dir, offline: true, hubUrl: 'http://127.0.0.1:9' };
  golden(await loadModel('Qwen/tiny-GGUF', { ...offline, file: 'tiny-q8_0.gguf' }));
  await rejects(loadModel('Qwen/tiny-GGUF', offline), 'INVALID_ARGUMENT',
    /^loadModel: Qwen\/tiny-GGUF holds 2 GGUF files in its cached snapshot; say which with \{ file \} \(the CLI: --file\): tiny-q4_0\.gguf, tiny-q8_0\.gguf$/);
  // the CLI: --file picks the file; without it, the error says to use --file
  const env = { ...process.env, HF_HUB_CACHE: dir, HF_HUB_OFFLINE: '1' };
  const heads = (...more) => spawnSync(process.execPath, [path.join(root, 'bin/attnmap.js'), 'heads', 'Qwen/tiny-GGUF', '--ids', '1,2,3,4', '--json', ...more], { encoding: 'utf8', env });
  const picked = heads('--file', 'tiny-q8_0.gguf');
  assert.equal(picked.status, 0, picked.stderr);
  assert.equal(JSON.parse(picked.stdout).n, 4, 'attnmap heads read the file --file named');
  const unsaid = heads();
  assert.notEqual(unsaid.status, 0);
  assert.match(unsaid.stderr, /holds 2 GGUF files in its cached snapshot; say which with \{ file \} \(the CLI: --file\)/);
  const model = spawnSync(process.execPath, [path.join(root, 'bin/attnmap.js'), 'model', 'Qwen/tiny-GGUF', '--file', 'tiny-q4_0.gguf', '--ids', '1,2,3'], { encoding: 'utf8', env });
  assert.equal(model.status, 0, model.stderr);
  assert.match(model.stdout, /^<svg/, 'attnmap model too');
  writePythonCache(dir, 'Qwen/many-GGUF', { commit: 'c'.repeat(40), files: Object.fromEntries(MULTI_NAMES.map((n) => [n, GGUF])) });
  const listed = await cachedModels({ cacheDir: dir, ...noStores(dir) });
  assert.deepEqual(listed, [
    { source: 'huggingface', name: 'Qwen/many-GGUF', repo: 'Qwen/many-GGUF', revision: 'main', commit: 'c'.repeat(40), bytes: GGUF.length, modelType: null, gguf: MULTI_NAMES },
    { source: 'huggingface', name: 'Qwen/tiny-GGUF', repo: 'Qwen/tiny-GGUF', revision: 'main', commit: 'd'.repeat(40), bytes: GGUF.length + 7, modelType: null, gguf: ['tiny-q4_0.gguf', 'tiny-q8_0.gguf'] },
  ], 'one blob counted once (the two files are the same bytes), the README\'s 7 bytes');
  assert.equal(py.etags['tiny-q4_0.gguf'], SHA256, 'Python\'s cache names the blob by its sha256 too');
  const cli = spawnSync(process.execPath, [path.join(root, 'bin/attnmap.js'), 'cache', '--dir', dir],
    { encoding: 'utf8', env: { ...process.env, OLLAMA_MODELS: path.join(dir, 'no-ollama'), LMSTUDIO_MODELS: path.join(dir, 'no-lmstudio') } });
  assert.equal(cli.status, 0, cli.stderr);
  const mb = `${(GGUF.length / 1e6).toFixed(1)} MB`;
  assert.equal(cli.stdout, `Qwen/many-GGUF  main  ${mb}  gguf: ${MULTI_NAMES.slice(0, 10).join(', ')}, and 2 more\n` +
    `Qwen/tiny-GGUF  main  ${((GGUF.length + 7) / 1e6).toFixed(1)} MB  gguf: tiny-q4_0.gguf, tiny-q8_0.gguf\n`);
  // a blob deleted under a snapshot's link: that entry says so, and loading it fails clearly
  fs.rmSync(path.join(dir, 'models--Qwen--many-GGUF', 'blobs', SHA256));
  const broken = spawnSync(process.execPath, [path.join(root, 'bin/attnmap.js'), 'cache', '--dir', dir],
    { encoding: 'utf8', env: { ...process.env, OLLAMA_MODELS: path.join(dir, 'no-ollama'), LMSTUDIO_MODELS: path.join(dir, 'no-lmstudio') } });
  assert.match(broken.stdout, /^Qwen\/many-GGUF {2}main {2}0\.0 MB {2}\(not loadable: tiny-q00\.gguf is a dangling link\)$/m);
  assert.deepEqual((await cachedModels({ cacheDir: dir, ...noStores(dir) })).map((m) => m.repo), ['Qwen/tiny-GGUF']);
  await rejects(loadModel('Qwen/many-GGUF', { ...offline, file: 'tiny-q00.gguf' }), 'FETCH_FAILED', /tiny-q00\.gguf of Qwen\/many-GGUF \(revision main\) is not in the Hugging Face cache/);
});
