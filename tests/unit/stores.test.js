// stores.test.js - the GGUF files Ollama and LM Studio keep, by name and offline (issue 38, item 6;
// web/model/hub/stores-node.js): crafted stores in temporary folders, in the layouts those tools
// write, pointed to by OLLAMA_MODELS and LMSTUDIO_MODELS (set for a test and restored, or set in a
// child). A small valid GGUF (the golden llama-f32 checkpoint as convert_hf_to_gguf.py writes it)
// loads by name with the logits of the same file loaded by path: the default tag, a namespace, a
// host, LM Studio with and without FILE. Then hostile stores and names: names that climb out of
// the store, manifests that are not JSON, lack the model layer, name a digest that is not hex, a
// missing blob or one of another size, a FIFO as manifest (in a child with a time limit), link
// loops and links out of Ollama's store. cachedModels and `attnmap cache` list both stores with
// their source; deleteCachedModel refuses their names; nothing in a store is ever changed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadModel, cachedModels, deleteCachedModel } from '../../web/model/model-node.js';
import { AttentionError } from '../../web/core/errors.js';
import { ollamaDir, lmstudioDir } from '../../web/model/hub/stores-node.js';
import { writePythonCache } from '../fixtures/hub/python-cache.js';
import { root } from '../helpers.js';

const POSIX = process.platform !== 'win32';       // FIFOs and links
const mkfifo = (p) => spawnSync('mkfifo', [p]).status === 0;
const CLI = path.join(root, 'bin/attnmap.js');
const MODEL_NODE = pathToFileURL(path.join(root, 'web/model/model-node.js')).href;
const LIMITS = { encoding: 'utf8', timeout: 60_000, maxBuffer: 16 << 20 };   // a budget against a hang, not a timing
const HEAP = '--max-old-space-size=256';
const MODEL_MEDIA = 'application/vnd.ollama.image.model';

const temps = [];
after(() => { for (const d of temps) fs.rmSync(d, { recursive: true, force: true }); });
const tmp = () => { const d = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-stores-')); temps.push(d); return d; };

// the golden llama-f32 checkpoint as a GGUF file, written by gguf-load.test.js's goldenAsGguf in a
// child (importing that test file here would run its tests a second time)
let GGUF, GGUF_FILE;
before(() => {
  GGUF_FILE = path.join(tmp(), 'llama-f32.gguf');
  const script = `const { goldenAsGguf } = await import(${JSON.stringify(pathToFileURL(path.join(root, 'tests/unit/gguf-load.test.js')).href)});
    (await import('node:fs')).writeFileSync(${JSON.stringify(GGUF_FILE)}, goldenAsGguf('llama-f32'));`;
  const r = spawnSync(process.execPath, ['--test-name-pattern=^$', '--input-type=module', '-e', script], LIMITS);
  assert.equal(r.status, 0, r.stderr);
  GGUF = fs.readFileSync(GGUF_FILE);
});

const sha = (bytes) => crypto.createHash('sha256').update(bytes).digest('hex');
const IDS = [1, 5, 9, 2, 7, 3, 11, 4];
const logitsOf = async (source) => {
  const model = await loadModel(source);
  try {
    const { data } = model.forward(IDS).logits;
    return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  } finally {
    model.dispose();
  }
};

/** Ollama's manifest for a model blob, as `ollama pull` writes it (config, model, template and params layers). */
function manifestOf(hex, size, { model = true } = {}) {
  const layer = (mediaType, h, n) => ({ mediaType, digest: `sha256:${h}`, size: n });
  return JSON.stringify({
    schemaVersion: 2, mediaType: 'application/vnd.docker.distribution.manifest.v2+json',
    config: layer('application/vnd.docker.container.image.v1+json', 'c'.repeat(64), 487),
    layers: [...(model ? [layer(MODEL_MEDIA, hex, size)] : []), layer('application/vnd.ollama.image.template', 'd'.repeat(64), 120),
      layer('application/vnd.ollama.image.params', 'e'.repeat(64), 30)],
  });
}

/** An Ollama store: { dir, hex, manifest(rel, text) } with the GGUF as a blob and manifests for names (HOST/NAMESPACE/NAME/TAG). */
function ollamaStore(names = ['registry.ollama.ai/library/tiny/latest']) {
  const dir = tmp(), hex = sha(GGUF);
  fs.mkdirSync(path.join(dir, 'blobs'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'blobs', `sha256-${hex}`), GGUF);
  const manifest = (rel, text = manifestOf(hex, GGUF.length)) => {
    const p = path.join(dir, 'manifests', rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, text);
    return p;
  };
  for (const n of names) manifest(n);
  return { dir, hex, manifest };
}

/** An LM Studio store: files { 'PUB/REPO/FILE': bytes }. */
function lmStore(files) {
  const dir = tmp();
  for (const [rel, bytes] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), bytes);
  }
  return dir;
}

/** fn() with process.env's vars set (undefined: unset), restored after. */
async function withEnv(vars, fn) {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const put = (v) => { for (const [k, x] of Object.entries(v)) { if (x === undefined) delete process.env[k]; else process.env[k] = x; } };
  put(vars);
  try { return await fn(); } finally { put(saved); }
}

async function rejects(promise, code, re) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof AttentionError, `an AttentionError, not ${e}`);
    assert.equal(e.code, code, e.message);
    assert.match(e.message, re);
    return true;
  });
}

// every path of a folder with its size and mtime: a store must be the same after attnmap read it
function treeOf(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name), st = fs.lstatSync(p);
      out.push(`${path.relative(dir, p)} ${st.size} ${st.mtimeMs}`);
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out.sort();
}

test('ollama:NAME loads the blob its manifest names: the default tag, a tag, a namespace, a host; the logits of the .gguf path', async () => {
  const want = await logitsOf(GGUF_FILE);
  const store = ollamaStore(['registry.ollama.ai/library/tiny/latest', 'registry.ollama.ai/library/tiny/0.5b-f32',
    'registry.ollama.ai/someone/tiny/q8', 'hf.co/user/Tiny-GGUF/F32']);
  const before = treeOf(store.dir);
  await withEnv({ OLLAMA_MODELS: store.dir }, async () => {
    for (const name of ['ollama:tiny', 'ollama:tiny:latest', 'ollama:tiny:0.5b-f32', 'ollama:someone/tiny:q8', 'ollama:hf.co/user/Tiny-GGUF:F32']) {
      assert.ok((await logitsOf(name)).equals(want), `${name}: the logits of the file loaded by path`);
    }
    await rejects(loadModel('ollama:tiny:v9'), 'INVALID_ARGUMENT', /ollama:tiny:v9 is not in Ollama's store at .*`ollama pull tiny:v9` fetches it/);
    await rejects(loadModel('ollama:other'), 'INVALID_ARGUMENT', /ollama:other:latest is not in Ollama's store/);
  });
  assert.deepEqual(treeOf(store.dir), before, 'nothing in the store changed');
});

test('lmstudio:PUBLISHER/REPO[/FILE]: one .gguf needs no FILE (a vision projector aside); several must be named', async () => {
  const want = await logitsOf(GGUF_FILE);
  const dir = lmStore({
    'pub/One-GGUF/one-f32.gguf': GGUF, 'pub/One-GGUF/mmproj-one-f16.gguf': Buffer.alloc(64), 'pub/One-GGUF/README.md': 'x',
    'pub/Two-GGUF/a-f32.gguf': GGUF, 'pub/Two-GGUF/b-f32.gguf': GGUF, 'pub/Empty/notes.txt': 'x',
  });
  const before = treeOf(dir);
  await withEnv({ LMSTUDIO_MODELS: dir }, async () => {
    for (const name of ['lmstudio:pub/One-GGUF', 'lmstudio:pub/One-GGUF/one-f32.gguf', 'lmstudio:pub/Two-GGUF/b-f32.gguf']) {
      assert.ok((await logitsOf(name)).equals(want), `${name}: the logits of the file loaded by path`);
    }
    await rejects(loadModel('lmstudio:pub/Two-GGUF'), 'INVALID_ARGUMENT', /lmstudio:pub\/Two-GGUF holds 2 GGUF files; say which, as lmstudio:pub\/Two-GGUF\/FILE: a-f32\.gguf, b-f32\.gguf$/);
    await rejects(loadModel('lmstudio:pub/Two-GGUF/c.gguf'), 'INVALID_ARGUMENT', /has no c\.gguf .*it holds a-f32\.gguf, b-f32\.gguf$/);
    await rejects(loadModel('lmstudio:pub/Empty'), 'INVALID_ARGUMENT', /holds no \.gguf file/);
    await rejects(loadModel('lmstudio:pub/Missing'), 'INVALID_ARGUMENT', /lmstudio:pub\/Missing is not in LM Studio's store/);
  });
  assert.deepEqual(treeOf(dir), before, 'nothing in the store changed');
});

test('the stores\' folders: OLLAMA_MODELS else ~/.ollama/models; LMSTUDIO_MODELS else ~/.lmstudio/models else ~/.cache/lm-studio/models', { skip: !POSIX }, async () => {
  const home = tmp();
  // os.homedir() reads HOME on each call (POSIX)
  const dirs = (env) => withEnv({ OLLAMA_MODELS: undefined, LMSTUDIO_MODELS: undefined, ...env }, () => [ollamaDir(), lmstudioDir()]);
  assert.deepEqual(await dirs({ HOME: home }), [path.join(home, '.ollama/models'), path.join(home, '.lmstudio/models')]);
  fs.mkdirSync(path.join(home, '.cache/lm-studio/models'), { recursive: true });
  assert.deepEqual((await dirs({ HOME: home }))[1], path.join(home, '.cache/lm-studio/models'), 'the older home when it alone is there');
  fs.mkdirSync(path.join(home, '.lmstudio/models'), { recursive: true });
  assert.deepEqual((await dirs({ HOME: home }))[1], path.join(home, '.lmstudio/models'), 'the newer home first');
  assert.deepEqual(await dirs({ HOME: home, OLLAMA_MODELS: '/o', LMSTUDIO_MODELS: '/l' }), ['/o', '/l']);
});

test('bad names are INVALID_ARGUMENT before any path is made: no "..", no slash where none belongs, no odd characters or lengths', async () => {
  // a store beside a decoy: names that climb out of the store would reach the decoy's manifest
  const parent = tmp(), store = path.join(parent, 'store'), decoy = path.join(parent, 'decoy');
  fs.mkdirSync(path.join(store, 'blobs'), { recursive: true });
  fs.writeFileSync(path.join(store, 'blobs', `sha256-${sha(GGUF)}`), GGUF);
  fs.mkdirSync(path.join(decoy), { recursive: true });
  fs.writeFileSync(path.join(decoy, 'latest'), manifestOf(sha(GGUF), GGUF.length));
  fs.writeFileSync(path.join(decoy, 'x.gguf'), GGUF);
  const lm = path.join(parent, 'lm');
  fs.mkdirSync(path.join(lm, 'pub', 'repo'), { recursive: true });
  const ollama = ['ollama:', 'ollama:../../../../decoy', 'ollama:../../../decoy:latest', 'ollama:a/../../../../decoy', 'ollama:tiny:../../../../../decoy/latest',
    'ollama:/etc/passwd', 'ollama:a/b/c/d', 'ollama:a:b:c', 'ollama:.hidden', 'ollama:a b', 'ollama:tiny:', 'ollama:nodot/a/b', 'ollama:-x.y/a/b',
    `ollama:${'a'.repeat(81)}`, `ollama:tiny:${'t'.repeat(81)}`, 'ollama:a\u0000b', 'ollama:a\\b', 'ollama:a..b'];
  const lmstudio = ['lmstudio:', 'lmstudio:pub', 'lmstudio:../decoy', 'lmstudio:../decoy/x.gguf', 'lmstudio:pub/repo/../../../decoy/x.gguf',
    'lmstudio:pub/repo/x.bin', 'lmstudio:pub/repo/.x.gguf', 'lmstudio:pub/repo/a/b.gguf', 'lmstudio:pub/..', 'lmstudio:pub/repo/..\\x.gguf',
    'lmstudio:pub/repo/a\nb.gguf', `lmstudio:pub/${'r'.repeat(201)}`];
  await withEnv({ OLLAMA_MODELS: store, LMSTUDIO_MODELS: lm }, async () => {
    for (const name of ollama) await rejects(loadModel(name), 'INVALID_ARGUMENT', /is not an Ollama model name: expected ollama:NAME\[:TAG\]/);
    for (const name of lmstudio) await rejects(loadModel(name), 'INVALID_ARGUMENT', /is not an LM Studio model name: expected lmstudio:PUBLISHER\/REPO/);
  });
});

test('broken manifests and blobs are INVALID_MODEL naming the file and what was expected', async () => {
  const store = ollamaStore(), { hex } = store;
  const size = GGUF.length, cases = [
    ['notjson', '{"layers": [', /notjson\/latest: not JSON \(.*\); expected Ollama's manifest/],
    ['nolayers', '{"schemaVersion": 2}', /nolayers\/latest: no "layers" array/],
    ['nomodel', manifestOf(hex, size, { model: false }), /nomodel\/latest: 0 layers of mediaType application\/vnd\.ollama\.image\.model; expected one, the GGUF weights/],
    ['twomodels', JSON.stringify({ layers: [{ mediaType: MODEL_MEDIA, digest: `sha256:${hex}`, size }, { mediaType: MODEL_MEDIA, digest: `sha256:${hex}`, size }] }), /twomodels\/latest: 2 layers of mediaType/],
    ['nothex', manifestOf('g'.repeat(64), size), /nothex\/latest: the model layer's digest is "sha256:g{64}"; expected "sha256:" and 64 hex digits/],
    ['short', manifestOf(hex.slice(1), size), /the model layer's digest is "sha256:[0-9a-f]{63}"; expected/],
    ['upper', manifestOf(hex.toUpperCase(), size), /the model layer's digest is "sha256:[0-9A-F]{64}"; expected/],
    ['climb', manifestOf(`${hex}/../../../x`, size), /the model layer's digest is .*expected "sha256:" and 64 hex digits/],
    ['digestobj', JSON.stringify({ layers: [{ mediaType: MODEL_MEDIA, digest: { a: 1 }, size }] }), /the model layer's digest is "\[object Object\]"/],
    ['sizestr', JSON.stringify({ layers: [{ mediaType: MODEL_MEDIA, digest: `sha256:${hex}`, size: String(size) }] }), /the model layer's size is ".*"; expected a count of bytes/],
    ['missing', manifestOf('0'.repeat(64), size), new RegExp(`blobs/sha256-0{64}: missing; .*missing/latest names it as the model's weights`)],
    ['bigger', manifestOf(hex, size + 1), new RegExp(`blobs/sha256-${hex}: ${size} bytes; .*bigger/latest says ${size + 1} \\(a partial or altered file`)],
    ['smaller', manifestOf(hex, size - 1), new RegExp(`sha256-${hex}: ${size} bytes; .*says ${size - 1}`)],
  ];
  for (const [name, text] of cases) store.manifest(`registry.ollama.ai/library/${name}/latest`, text);
  store.manifest('registry.ollama.ai/library/huge/latest', ' '.repeat((1 << 20) + 1));
  fs.mkdirSync(path.join(store.dir, 'manifests/registry.ollama.ai/library/folder/latest'), { recursive: true });
  const before = treeOf(store.dir);
  await withEnv({ OLLAMA_MODELS: store.dir }, async () => {
    for (const [name, , re] of cases) await rejects(loadModel(`ollama:${name}`), 'INVALID_MODEL', re);
    await rejects(loadModel('ollama:huge'), 'TOO_LARGE', /huge\/latest: 1\.0 MiB; an Ollama manifest is a few hundred bytes, read up to 1\.0 MiB/);
    await rejects(loadModel('ollama:folder'), 'INVALID_MODEL', /folder\/latest: is a folder, not a regular file/);
  });
  assert.deepEqual(treeOf(store.dir), before, 'nothing in the store changed');
});

test('a FIFO as manifest or as blob is refused, never waited on (in a child with a time limit)', { skip: !POSIX }, () => {
  const store = ollamaStore();
  const fifo = path.join(store.dir, 'manifests/registry.ollama.ai/library/fifo/latest');
  fs.mkdirSync(path.dirname(fifo), { recursive: true });
  assert.ok(mkfifo(fifo), 'mkfifo');
  const blobHex = '1'.repeat(64);
  store.manifest('registry.ollama.ai/library/fifoblob/latest', manifestOf(blobHex, 10));
  assert.ok(mkfifo(path.join(store.dir, 'blobs', `sha256-${blobHex}`)), 'mkfifo');
  const lm = lmStore({ 'pub/repo/readme.txt': 'x' });
  assert.ok(mkfifo(path.join(lm, 'pub/repo/pipe.gguf')), 'mkfifo');
  const script = `const { loadModel } = await import(${JSON.stringify(MODEL_NODE)});
    const out = [];
    for (const name of ['ollama:fifo', 'ollama:fifoblob', 'lmstudio:pub/repo/pipe.gguf']) {
      try { await loadModel(name); out.push('loaded'); } catch (e) { out.push(e.code + ' ' + e.message); }
    }
    process.stdout.write(JSON.stringify(out));`;
  const r = spawnSync(process.execPath, [HEAP, '--input-type=module', '-e', script],
    { ...LIMITS, env: { ...process.env, OLLAMA_MODELS: store.dir, LMSTUDIO_MODELS: lm } });
  assert.equal(r.signal, null, `the load was killed (${r.signal}): it hung on a FIFO`);
  assert.equal(r.status, 0, r.stderr);
  const [manifest, blob, lms] = JSON.parse(r.stdout);
  assert.match(manifest, /^INVALID_MODEL .*fifo\/latest: is a FIFO, not a regular file$/);
  assert.match(blob, new RegExp(`^INVALID_MODEL .*sha256-${blobHex}: is a FIFO, not a regular file$`));
  assert.match(lms, /^INVALID_MODEL .*pipe\.gguf: is a FIFO, not a regular file$/);
});

test('links: a loop is INVALID_MODEL; Ollama\'s manifest or blob linking out of its store is refused; LM Studio\'s links (lms import -l) are followed', { skip: !POSIX }, async () => {
  const store = ollamaStore(), outside = tmp();
  const loop = path.join(store.dir, 'manifests/registry.ollama.ai/library/loop/latest');
  fs.mkdirSync(path.dirname(loop), { recursive: true });
  fs.symlinkSync('latest', loop);
  // a manifest outside the store, naming the store's own blob: read only if links out are followed
  fs.writeFileSync(path.join(outside, 'manifest'), manifestOf(store.hex, GGUF.length));
  const out = path.join(store.dir, 'manifests/registry.ollama.ai/library/out/latest');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.symlinkSync(path.join(outside, 'manifest'), out);
  // a blob that links out of the store
  const hex = sha(Buffer.from('elsewhere'));
  fs.writeFileSync(path.join(outside, 'blob'), GGUF);
  fs.symlinkSync(path.join(outside, 'blob'), path.join(store.dir, 'blobs', `sha256-${hex}`));
  store.manifest('registry.ollama.ai/library/blobout/latest', manifestOf(hex, GGUF.length));
  // a blob that is a loop
  const loopHex = '2'.repeat(64);
  fs.symlinkSync(`sha256-${loopHex}`, path.join(store.dir, 'blobs', `sha256-${loopHex}`));
  store.manifest('registry.ollama.ai/library/blobloop/latest', manifestOf(loopHex, 10));
  // OLLAMA_MODELS itself a link (another disk): fine
  const linked = path.join(outside, 'linked-store');
  fs.symlinkSync(store.dir, linked);
  const lm = lmStore({ 'pub/repo/readme.txt': 'x' });
  fs.symlinkSync(GGUF_FILE, path.join(lm, 'pub/repo/imported.gguf'));
  fs.mkdirSync(path.join(lm, 'pub/loop'));
  fs.symlinkSync('loop.gguf', path.join(lm, 'pub/loop/loop.gguf'));
  const want = await logitsOf(GGUF_FILE);
  const before = [treeOf(store.dir), treeOf(outside), treeOf(lm)];
  await withEnv({ OLLAMA_MODELS: store.dir, LMSTUDIO_MODELS: lm }, async () => {
    await rejects(loadModel('ollama:loop'), 'INVALID_MODEL', /loop\/latest: a link loop; expected a file of Ollama's store/);
    await rejects(loadModel('ollama:out'), 'INVALID_MODEL', /out\/latest: links out of Ollama's store .* \(to .*manifest\); Ollama keeps its files inside it/);
    await rejects(loadModel('ollama:blobout'), 'INVALID_MODEL', new RegExp(`sha256-${hex}: links out of Ollama's store`));
    await rejects(loadModel('ollama:blobloop'), 'INVALID_MODEL', new RegExp(`sha256-${loopHex}: a link loop`));
    assert.ok((await logitsOf('lmstudio:pub/repo')).equals(want), 'LM Studio: a link to a file elsewhere loads');
    await rejects(loadModel('lmstudio:pub/loop/loop.gguf'), 'INVALID_MODEL', /loop\.gguf: cannot be opened \(ELOOP\)/);
  });
  await withEnv({ OLLAMA_MODELS: linked }, async () => assert.ok((await logitsOf('ollama:tiny')).equals(want), 'a store reached by a link'));
  assert.deepEqual([treeOf(store.dir), treeOf(outside), treeOf(lm)], before, 'nothing changed');
});

test('cachedModels lists the Hugging Face cache, Ollama and LM Studio with their source; `attnmap cache` too; deleteCachedModel refuses the stores\' names', async () => {
  const hf = tmp();
  const golden = path.join(root, 'tests/golden/llama/qwen2-bf16');
  writePythonCache(hf, 'Qwen/tiny', { commit: 'd'.repeat(40), files: Object.fromEntries(['config.json', 'model.safetensors'].map((f) => [f, fs.readFileSync(path.join(golden, f))])) });
  const store = ollamaStore(['registry.ollama.ai/library/tiny/latest', 'registry.ollama.ai/someone/tiny/q8']);
  store.manifest('registry.ollama.ai/library/broken/latest', manifestOf('0'.repeat(64), 5));
  const lm = lmStore({ 'pub/One-GGUF/one-f32.gguf': GGUF, 'pub/One-GGUF/mmproj-one.gguf': Buffer.alloc(8) });
  const before = [treeOf(store.dir), treeOf(lm)];
  const listed = await cachedModels({ cacheDir: hf, ollamaDir: store.dir, lmstudioDir: lm });
  assert.deepEqual(listed.map(({ source, name, bytes }) => ({ source, name, bytes })), [
    { source: 'huggingface', name: 'Qwen/tiny', bytes: listed[0].bytes },
    { source: 'ollama', name: 'ollama:someone/tiny:q8', bytes: GGUF.length },
    { source: 'ollama', name: 'ollama:tiny:latest', bytes: GGUF.length },
    { source: 'lmstudio', name: 'lmstudio:pub/One-GGUF/one-f32.gguf', bytes: GGUF.length },
  ], 'the loadable models of the three, the broken manifest and the projector left out');
  assert.equal(listed[0].repo, 'Qwen/tiny');
  await withEnv({ OLLAMA_MODELS: store.dir }, async () => assert.ok((await logitsOf(listed[1].name)).equals(await logitsOf(GGUF_FILE)), 'a listed name loads'));

  const cli = spawnSync(process.execPath, [HEAP, CLI, 'cache', '--dir', hf], { ...LIMITS, env: { ...process.env, OLLAMA_MODELS: store.dir, LMSTUDIO_MODELS: lm } });
  assert.equal(cli.status, 0, cli.stderr);
  const mb = `${(GGUF.length / 1e6).toFixed(1)} MB`;
  assert.deepEqual(cli.stdout.split('\n').filter(Boolean).slice(1), [
    'ollama:broken:latest  ollama  0.0 MB  (not loadable: ' +
      `${path.join(store.dir, 'blobs', `sha256-${'0'.repeat(64)}`)}: missing; ${path.join(store.dir, 'manifests/registry.ollama.ai/library/broken/latest')} names it as the model's weights (\`ollama pull broken:latest\` fetches it again))`,
    `ollama:someone/tiny:q8  ollama  ${mb}  gguf`,
    `ollama:tiny:latest  ollama  ${mb}  gguf`,
    `lmstudio:pub/One-GGUF/one-f32.gguf  lmstudio  ${mb}  gguf`,
  ]);
  assert.match(cli.stdout, /^Qwen\/tiny {2}main {2}\d+\.\d MB {2}qwen2\n/);

  for (const [name, re] of [['ollama:tiny', /"ollama:tiny" is in Ollama's store, which attnmap reads and never changes; `ollama rm tiny:latest` removes it/],
    ['lmstudio:pub/One-GGUF', /"lmstudio:pub\/One-GGUF" is in LM Studio's store, which attnmap reads and never changes/]]) {
    await rejects(deleteCachedModel(name, { cacheDir: hf }), 'INVALID_ARGUMENT', new RegExp(`^deleteCachedModel: ${re.source}`));
  }
  assert.deepEqual([treeOf(store.dir), treeOf(lm)], before, 'nothing in the stores changed');
});

test('a store that is not there lists nothing and changes no listing; one that is a file names the trouble when a model is asked for', async () => {
  const hf = tmp(), file = path.join(tmp(), 'a-file');
  fs.writeFileSync(file, 'x');
  const none = path.join(hf, 'no-such-store');
  assert.deepEqual(await cachedModels({ cacheDir: hf, ollamaDir: none, lmstudioDir: none }), []);
  const cli = spawnSync(process.execPath, [CLI, 'cache', '--dir', hf], { ...LIMITS, env: { ...process.env, OLLAMA_MODELS: none, LMSTUDIO_MODELS: file } });
  assert.equal(cli.stdout, `no models in the Hugging Face cache at ${hf}\n`);
  await withEnv({ OLLAMA_MODELS: none }, () => rejects(loadModel('ollama:tiny'), 'INVALID_ARGUMENT', /no Ollama store at .*no-such-store \(ENOENT\); expected a folder \(OLLAMA_MODELS, else ~\/\.ollama\/models\)/));
  await withEnv({ OLLAMA_MODELS: file }, () => rejects(loadModel('ollama:tiny'), 'INVALID_ARGUMENT', /Ollama's store .*a-file is not a folder/));
});
