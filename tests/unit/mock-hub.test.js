// mock-hub.test.js - the fixtures of issue 23 against what the real Hugging Face Hub does, so that
// the client's tests can trust them: tests/fixtures/hub/mock-hub.js (the hub and its download
// host) and python-cache.js (the Python client's cache layout). The expected values are the real
// hub's, as file_download.py, huggingface.js and live header dumps give them (mock-hub.js names
// each source); the last tests run huggingface.js's own download functions against the mock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { startMockHub, gitBlobSha1, lfsPointer } from '../fixtures/hub/mock-hub.js';
import { writePythonCache } from '../fixtures/hub/python-cache.js';

const COMMIT = '0123456789abcdef0123456789abcdef01234567';
const TOKEN = 'hf_mocktoken0123456789';
const CONFIG = Buffer.from('hello world\n');                       // git hash-object: 3b18e512…
const CONFIG_SHA1 = '3b18e512dba79e4c8300dd08aeb37f8e728b8dad';
const WEIGHTS = crypto.createHash('sha512').update('weights').digest();       // 64 bytes, LFS by name
const BIG = Buffer.alloc(12 * 1024, 0x41);                         // LFS by size (> 10 KB)
const sha256 = (b) => crypto.createHash('sha256').update(b).digest('hex');
const FILES = { 'config.json': CONFIG, 'model.safetensors': WEIGHTS, 'tokenizer.json': BIG, 'sub/dir/vocab.txt': 'a\nb\n' };

const start = (options = {}) => startMockHub({
  repos: { 'org/model': { commit: COMMIT, files: FILES }, 'org/gated': { commit: COMMIT, files: { 'config.json': CONFIG } } },
  token: TOKEN, gated: ['org/gated'], ...options,
});
const bearer = { authorization: `Bearer ${TOKEN}` };

async function withHub(options, fn) {
  const hub = await start(options);
  try { await fn(hub); } finally { await hub.stop(); }
}

test('hashes: git blob sha1 as git hash-object, the LFS pointer as git-lfs writes it', () => {
  assert.equal(gitBlobSha1(CONFIG), CONFIG_SHA1);
  // bert-base-uncased's tf_model.h5 on the real hub: size 536063208, lfs.pointerSize 134 (huggingface.js spec)
  assert.equal(Buffer.byteLength(lfsPointer('a'.repeat(64), 536063208)), 134);
});

test('resolve, small file: 307 to a relative /api/resolve-cache/ URL, which serves it with ETag = git sha1', async () => {
  await withHub({}, async (hub) => {
    for (const method of ['HEAD', 'GET']) {
      const r = await fetch(`${hub.url}/org/model/resolve/main/config.json`, { method, redirect: 'manual' });
      assert.equal(r.status, 307, method);
      assert.equal(r.headers.get('location'), `/api/resolve-cache/models/org/model/${COMMIT}/config.json` +
        `?%2Forg%2Fmodel%2Fresolve%2Fmain%2Fconfig.json=&etag=%22${CONFIG_SHA1}%22`);
      assert.equal(r.headers.get('x-repo-commit'), COMMIT);
      await r.arrayBuffer();
    }
    for (const method of ['HEAD', 'GET']) {
      const r = await fetch(`${hub.url}/org/model/resolve/main/config.json`, { method });
      assert.equal(r.status, 200);
      assert.match(r.url, /\/api\/resolve-cache\/models\/org\/model\//);
      assert.equal(r.headers.get('etag'), `"${CONFIG_SHA1}"`);
      assert.equal(r.headers.get('x-repo-commit'), COMMIT);
      assert.equal(r.headers.get('content-length'), String(CONFIG.length));
      assert.equal(r.headers.get('accept-ranges'), 'bytes');
      assert.equal(r.headers.get('x-linked-etag'), null);
      assert.equal(r.headers.get('x-linked-size'), null);
      assert.deepEqual(Buffer.from(await r.arrayBuffer()), method === 'GET' ? CONFIG : Buffer.alloc(0));
    }
    // Python follows the relative redirect with its path only (no query): the same answer
    const r = await fetch(`${hub.url}/api/resolve-cache/models/org/model/${COMMIT}/sub/dir/vocab.txt`);
    assert.equal(await r.text(), 'a\nb\n');
    // the commit works as a revision; { resolveCache: false } serves small files on resolve itself
    assert.equal((await fetch(`${hub.url}/org/model/resolve/${COMMIT}/config.json`)).status, 200);
  });
  await withHub({ resolveCache: false }, async (hub) => {
    const r = await fetch(`${hub.url}/org/model/resolve/main/config.json`, { redirect: 'manual' });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('etag'), `"${CONFIG_SHA1}"`);
    assert.deepEqual(Buffer.from(await r.arrayBuffer()), CONFIG);
  });
});

test('resolve, LFS file: 302 to the other origin, signed; X-Linked-Etag = sha256, X-Linked-Size; the cdn needs no token', async () => {
  await withHub({}, async (hub) => {
    assert.notEqual(new URL(hub.url).origin, new URL(hub.cdnUrl).origin);
    for (const [file, bytes] of [['model.safetensors', WEIGHTS], ['tokenizer.json', BIG]]) {
      for (const method of ['HEAD', 'GET']) {
        const r = await fetch(`${hub.url}/org/model/resolve/main/${file}`, { method, redirect: 'manual' });
        assert.equal(r.status, 302, `${method} ${file}`);
        const location = new URL(r.headers.get('location'));
        assert.equal(location.origin, hub.cdnUrl);
        assert.equal(location.searchParams.get('X-Amz-Signature'), 'mock');
        assert.equal(r.headers.get('x-linked-etag'), `"${sha256(bytes)}"`);
        assert.equal(r.headers.get('x-linked-size'), String(bytes.length));
        assert.equal(r.headers.get('x-repo-commit'), COMMIT);
        assert.equal(r.headers.get('accept-ranges'), 'bytes');
        await r.arrayBuffer();
        const c = await fetch(location, { method });               // no token
        assert.equal(c.status, 200);
        assert.equal(c.headers.get('content-length'), String(bytes.length));
        assert.notEqual(c.headers.get('etag'), `"${sha256(bytes)}"`, 'the cdn\'s ETag is its own, not the sha256');
        if (method === 'GET') assert.deepEqual(Buffer.from(await c.arrayBuffer()), bytes);
      }
    }
    // followed with a token: the hub sees it, the cdn does not (fetch drops Authorization across origins)
    hub.requests.length = 0;
    const r = await fetch(`${hub.url}/org/gated/resolve/main/config.json`, { headers: bearer });
    assert.equal(r.status, 200);
    const big = await fetch(`${hub.url}/org/model/resolve/main/tokenizer.json`, { headers: bearer });
    assert.deepEqual(Buffer.from(await big.arrayBuffer()), BIG);
    assert.ok(hub.requests.filter((q) => q.host === 'hub').every((q) => q.authorization === `Bearer ${TOKEN}`));
    const cdn = hub.requests.filter((q) => q.host === 'cdn');
    assert.equal(cdn.length, 1);
    assert.equal(cdn[0].authorization, null);
    // an unsigned cdn URL: S3's 403
    const unsigned = new URL(big.url);
    unsigned.search = '';
    assert.equal((await fetch(unsigned)).status, 403);
  });
});

test('Range: 206 with Content-Range on the cdn (and on the hub\'s own files), 416 past the end', async () => {
  await withHub({}, async (hub) => {
    const cases = [['bytes=10-19', 10, 19], ['bytes=12000-', 12000, BIG.length - 1], ['bytes=-5', BIG.length - 5, BIG.length - 1],
      ['bytes=100-999999', 100, BIG.length - 1]];
    for (const [range, a, b] of cases) {
      const r = await fetch(`${hub.url}/org/model/resolve/main/tokenizer.json`, { headers: { range } });
      assert.equal(r.status, 206, range);
      assert.equal(r.headers.get('content-range'), `bytes ${a}-${b}/${BIG.length}`);
      assert.deepEqual(Buffer.from(await r.arrayBuffer()), BIG.subarray(a, b + 1));
    }
    const past = await fetch(`${hub.url}/org/model/resolve/main/tokenizer.json`, { headers: { range: `bytes=${BIG.length}-` } });
    assert.equal(past.status, 416);
    assert.equal(past.headers.get('content-range'), `bytes */${BIG.length}`);
    assert.equal(hub.requests.at(-1).range, `bytes=${BIG.length}-`);
    const invalid = await fetch(`${hub.url}/org/model/resolve/main/tokenizer.json`, { headers: { range: 'bytes=20-10' } });
    assert.equal(invalid.status, 200, 'an invalid range is ignored: the whole file');
    assert.equal((await invalid.arrayBuffer()).byteLength, BIG.length);
    // huggingface.js probes a file with Range: bytes=0-0 (file-download-info.ts, WebBlob.ts)
    const probe = await fetch(`${hub.url}/org/model/resolve/main/config.json`, { headers: { range: 'bytes=0-0' } });
    assert.equal(probe.status, 206);
    assert.equal(probe.headers.get('content-range'), `bytes 0-0/${CONFIG.length}`);
    assert.equal(await probe.text(), 'h');
  });
});

test('paths-info (JSON and form bodies) and tree (one folder, recursive, pages): the real entries\' shapes', async () => {
  await withHub({ treePageSize: 2 }, async (hub) => {
    const api = `${hub.url}/api/models/org/model`;
    const weights = { type: 'file', oid: gitBlobSha1(Buffer.from(lfsPointer(sha256(WEIGHTS), WEIGHTS.length))), size: WEIGHTS.length,
      path: 'model.safetensors', lfs: { oid: sha256(WEIGHTS), size: WEIGHTS.length, pointerSize: lfsPointer(sha256(WEIGHTS), WEIGHTS.length).length } };
    const config = { type: 'file', oid: CONFIG_SHA1, size: CONFIG.length, path: 'config.json' };
    const json = await fetch(`${api}/paths-info/main`, { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ paths: ['model.safetensors', 'missing.bin', 'config.json', 'sub'] }) });
    const got = await json.json();
    assert.deepEqual(got.slice(0, 2), [weights, config], 'a missing path is left out');
    assert.equal(got[2].type, 'directory');
    assert.match(got[2].oid, /^[0-9a-f]{40}$/);
    const form = await fetch(`${api}/paths-info/main`, { method: 'POST', body: new URLSearchParams([['paths', 'config.json'], ['expand', 'True']]) });
    const [expanded] = await form.json();
    assert.equal(expanded.lastCommit.id, COMMIT);

    const pages = [];
    for (let url = `${api}/tree/main?recursive=true&expand=false`; url;) {
      const r = await fetch(url);
      assert.equal(r.status, 200);
      pages.push(await r.json());
      url = /<(https?:[/][/][^>]+)>;\s+rel="next"/.exec(r.headers.get('link') ?? '')?.[1];
    }
    assert.deepEqual(pages.map((p) => p.map((e) => e.path)),
      [['config.json', 'model.safetensors'], ['sub', 'sub/dir'], ['sub/dir/vocab.txt', 'tokenizer.json']]);
    assert.deepEqual(pages[0], [config, weights]);
    assert.deepEqual(pages[1].map((e) => [e.type, e.size]), [['directory', 0], ['directory', 0]]);
    const sub = await (await fetch(`${api}/tree/main/sub/dir`)).json();
    assert.deepEqual(sub, [{ type: 'file', oid: gitBlobSha1(Buffer.from('a\nb\n')), size: 4, path: 'sub/dir/vocab.txt' }]);
    const none = await fetch(`${api}/tree/main/nothing`);
    assert.equal(none.status, 404);
    assert.equal(none.headers.get('x-error-code'), 'EntryNotFound');
  });
});

test('gated: 401 GatedRepo on its files without the token, 200 with it; its file list is public; a wrong token is refused', async () => {
  await withHub({}, async (hub) => {
    const file = `${hub.url}/org/gated/resolve/main/config.json`;
    for (const method of ['HEAD', 'GET']) {
      const r = await fetch(file, { method });
      assert.equal(r.status, 401);
      assert.equal(r.headers.get('x-error-code'), 'GatedRepo');
      assert.equal(r.headers.get('x-error-message'), 'Access to model org/gated is restricted. You must have access to it and be ' +
        'authenticated to access it. Please log in.');
      if (method === 'GET') assert.equal(await r.text(), r.headers.get('x-error-message'));
    }
    assert.equal((await fetch(`${hub.url}/api/resolve-cache/models/org/gated/${COMMIT}/config.json`)).status, 401);
    const ok = await fetch(file, { headers: bearer });
    assert.equal(ok.status, 200);
    assert.deepEqual(Buffer.from(await ok.arrayBuffer()), CONFIG);
    // huggingface.js issue #945: a gated repo's files can be listed without a token
    assert.equal((await fetch(`${hub.url}/api/models/org/gated/tree/main`)).status, 200);
    const info = await (await fetch(`${hub.url}/api/models/org/gated`)).json();
    assert.equal(info.gated, 'manual');
    assert.equal(info.sha, COMMIT);
    const wrong = await fetch(file, { headers: { authorization: 'Bearer hf_wrong' } });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.headers.get('x-error-message'), 'Invalid credentials in Authorization header');
    assert.equal(wrong.headers.get('x-error-code'), null);
  });
});

test('404s and the 401 for a missing repo, with the real hub\'s codes, messages and bodies', async () => {
  await withHub({}, async (hub) => {
    const file = await fetch(`${hub.url}/org/model/resolve/main/nope.json`);
    assert.equal(file.status, 404);
    assert.equal(file.headers.get('x-error-code'), 'EntryNotFound');
    assert.equal(file.headers.get('x-repo-commit'), COMMIT, 'Python caches the absence under this commit');
    assert.equal(await file.text(), 'Entry not found');
    const rev = await fetch(`${hub.url}/org/model/resolve/v9/config.json`);
    assert.equal(rev.status, 404);
    assert.equal(rev.headers.get('x-error-code'), 'RevisionNotFound');
    assert.deepEqual(await rev.json(), { error: 'Invalid rev id: v9' });
    // a repo that does not exist: 401 without a token (no X-Error-Code), 404 RepoNotFound with one
    const anon = await fetch(`${hub.url}/nobody/nothing/resolve/main/config.json`);
    assert.equal(anon.status, 401);
    assert.equal(anon.headers.get('x-error-code'), null);
    assert.equal(anon.headers.get('x-error-message'), 'Invalid username or password.');
    assert.match(anon.headers.get('www-authenticate'), /^Bearer realm="Authentication required"/);
    // byte for byte the live answer: 29 bytes of text and Express's ETag of them
    assert.equal(anon.headers.get('etag'), 'W/"1d-DMkJvg8tpLoaQbsiq9Mz7l2CJyI"');
    assert.equal(await anon.text(), 'Invalid username or password.');
    for (const url of [`${hub.url}/api/models/nobody/nothing/tree/main`, `${hub.url}/api/models/nobody/nothing`]) {
      const r = await fetch(url);
      assert.equal(r.status, 401);
      assert.deepEqual(await r.json(), { error: 'Invalid username or password.' });
    }
    const authed = await fetch(`${hub.url}/nobody/nothing/resolve/main/config.json`, { headers: bearer });
    assert.equal(authed.status, 404);
    assert.equal(authed.headers.get('x-error-code'), 'RepoNotFound');
  });
  await withHub({ private: ['org/model'] }, async (hub) => {
    assert.equal((await fetch(`${hub.url}/api/models/org/model/tree/main`)).status, 401, 'private: as if missing');
    assert.equal((await fetch(`${hub.url}/api/models/org/model/tree/main`, { headers: bearer })).status, 200);
  });
});

test('setDrop: the next GET of the file is cut after that many bytes, the connection destroyed; the one after is whole', async () => {
  await withHub({}, async (hub) => {
    const read = async (url) => {
      const r = await fetch(url);
      const reader = r.body.getReader();
      let n = 0;
      try {
        for (;;) { const { done, value } = await reader.read(); if (done) return { n }; n += value.length; }
      } catch (error) { return { n, error }; }
    };
    hub.setDrop('tokenizer.json', 1000);                            // served by the cdn
    const cut = await read(`${hub.url}/org/model/resolve/main/tokenizer.json`);
    assert.equal(cut.n, 1000);
    assert.ok(cut.error, 'the body ends in an error, not short and clean');
    assert.deepEqual(await read(`${hub.url}/org/model/resolve/main/tokenizer.json`), { n: BIG.length });
    hub.setDrop('config.json', 0);                                   // served by the hub
    const none = await read(`${hub.url}/org/model/resolve/main/config.json`);
    assert.equal(none.n, 0);
    assert.ok(none.error);
    hub.setDrop('model.safetensors', 5);                             // HEAD does not use the drop
    assert.equal((await fetch(`${hub.url}/org/model/resolve/main/model.safetensors`, { method: 'HEAD' })).status, 200);
    assert.equal((await read(`${hub.url}/org/model/resolve/main/model.safetensors`)).n, 5);
  });
});

test('html: true answers every path with a 200 web page (a misconfigured HF_ENDPOINT)', async () => {
  await withHub({ html: true }, async (hub) => {
    for (const [url, init] of [[`${hub.url}/org/model/resolve/main/config.json`], [`${hub.url}/api/models/org/model/tree/main`],
      [`${hub.url}/api/models/org/model/paths-info/main`, { method: 'POST', body: '{}' }], [`${hub.url}/anything`]]) {
      const r = await fetch(url, init);
      assert.equal(r.status, 200, url);
      assert.match(r.headers.get('content-type'), /^text\/html/);
      assert.match(await r.text(), /^<!doctype html>/);
    }
  });
});

test('CORS: the hub reflects the page\'s origin and exposes its headers; preflights pass on both hosts', async () => {
  await withHub({}, async (hub) => {
    const origin = 'http://localhost:5173';
    const r = await fetch(`${hub.url}/org/model/resolve/main/config.json`, { headers: { origin } });
    assert.equal(r.headers.get('access-control-allow-origin'), origin);
    for (const h of ['X-Repo-Commit', 'X-Linked-Size', 'X-Linked-ETag', 'ETag', 'Content-Range', 'X-Error-Code']) {
      assert.ok(r.headers.get('access-control-expose-headers').split(',').includes(h), h);
    }
    for (const base of [hub.url, hub.cdnUrl]) {
      const p = await fetch(`${base}/org/model/resolve/main/config.json`, { method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization,range' } });
      assert.equal(p.status, 204);
      assert.equal(p.headers.get('access-control-allow-headers'), 'authorization,range');
    }
  });
});

// the tree below dir: 'path' for a file, 'path/' for a folder, 'path -> target' for a symlink
function listing(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(d, e.name), rel = path.relative(dir, p);
      if (e.isSymbolicLink()) out.push(`${rel} -> ${fs.readlinkSync(p)}`);
      else if (e.isDirectory()) { out.push(`${rel}/`); walk(p); } else out.push(rel);
    }
  };
  walk(dir);
  return out;
}

test('writePythonCache: blobs named by etag, relative symlinks, refs/main holding the commit, nothing else', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-pycache-'));
  try {
    const out = writePythonCache(dir, 'org/model', { commit: COMMIT, files: FILES });
    const W = sha256(WEIGHTS), B = sha256(BIG), V = gitBlobSha1(Buffer.from('a\nb\n'));
    const snap = `models--org--model/snapshots/${COMMIT}`;
    assert.deepEqual(listing(dir), [
      'models--org--model/', 'models--org--model/blobs/',
      `models--org--model/blobs/${CONFIG_SHA1}`, `models--org--model/blobs/${V}`, `models--org--model/blobs/${W}`, `models--org--model/blobs/${B}`,
      'models--org--model/refs/', 'models--org--model/refs/main',
      'models--org--model/snapshots/', `${snap}/`,
      `${snap}/config.json -> ../../blobs/${CONFIG_SHA1}`,
      `${snap}/model.safetensors -> ../../blobs/${W}`,
      `${snap}/sub/`, `${snap}/sub/dir/`, `${snap}/sub/dir/vocab.txt -> ../../../../blobs/${V}`,
      `${snap}/tokenizer.json -> ../../blobs/${B}`,
    ].sort((a, b) => (a < b ? -1 : 1)));
    assert.equal(fs.readFileSync(path.join(out.repoDir, 'refs/main'), 'utf8'), COMMIT, 'the commit, no newline');
    for (const [file, bytes] of Object.entries(FILES)) {
      assert.deepEqual(fs.readFileSync(path.join(out.snapshotDir, file)), Buffer.from(bytes), file);
    }
    assert.deepEqual(out.etags, { 'config.json': CONFIG_SHA1, 'model.safetensors': W, 'tokenizer.json': B, 'sub/dir/vocab.txt': V });
    // a second commit shares the blobs; a revision that is the commit writes no ref
    const other = 'f'.repeat(40);
    writePythonCache(dir, 'org/model', { commit: other, files: { 'config.json': CONFIG }, revision: other });
    assert.equal(fs.readlinkSync(path.join(out.repoDir, 'snapshots', other, 'config.json')), `../../blobs/${CONFIG_SHA1}`);
    assert.deepEqual(fs.readdirSync(path.join(out.repoDir, 'refs')), ['main']);
    assert.equal(fs.readdirSync(path.join(out.repoDir, 'blobs')).length, 4);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('writePythonCache { extras: true }: the .locks and CACHEDIR.TAG a recent Python client leaves beside the repos', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-pycache-'));
  try {
    writePythonCache(dir, 'org/model', { commit: COMMIT, files: { 'config.json': CONFIG }, extras: true });
    assert.deepEqual(listing(dir).filter((p) => !p.startsWith('models--')),
      ['.locks/', '.locks/models--org--model/', `.locks/models--org--model/${CONFIG_SHA1}.lock`, 'CACHEDIR.TAG']);
    assert.match(fs.readFileSync(path.join(dir, 'CACHEDIR.TAG'), 'utf8'), /^Signature: 8a477f597d28d172789f06886806bc55\n/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('huggingface.js (@huggingface/hub) works against the mock unchanged, and caches files as writePythonCache names them', async () => {
  const hf = await import('@huggingface/hub');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-hfjs-'));
  const debug = console.debug;
  console.debug = () => {};                                        // downloadFileToCacheDir logs each download
  try {
    await withHub({}, async (hub) => {
      const p = { repo: 'org/model', hubUrl: hub.url };
      const info = await hf.fileDownloadInfo({ ...p, path: 'config.json' });
      assert.deepEqual([info.etag, info.size], [`"${CONFIG_SHA1}"`, CONFIG.length]);
      assert.equal(await hf.fileDownloadInfo({ ...p, path: 'nope.json' }), null, 'EntryNotFound is null');
      const listed = [];
      for await (const e of hf.listFiles({ ...p, recursive: true })) listed.push(e.path);
      assert.deepEqual(listed, ['config.json', 'model.safetensors', 'sub', 'sub/dir', 'sub/dir/vocab.txt', 'tokenizer.json']);
      const blob = await hf.downloadFile({ ...p, path: 'tokenizer.json', accessToken: TOKEN });
      assert.deepEqual(Buffer.from(await blob.arrayBuffer()), BIG);
      assert.ok(hub.requests.filter((q) => q.host === 'cdn').every((q) => q.authorization === null));
      await assert.rejects(hf.downloadFile({ repo: 'org/gated', hubUrl: hub.url, path: 'config.json' }), (e) => e.statusCode === 401);
      for (const file of Object.keys(FILES)) await hf.downloadFileToCacheDir({ ...p, path: file, cacheDir: path.join(dir, 'js') });
    });
    writePythonCache(path.join(dir, 'py'), 'org/model', { commit: COMMIT, files: FILES });
    // huggingface.js writes no refs/ (it names the snapshot by the file's last commit); the rest is the same
    assert.deepEqual(listing(path.join(dir, 'js')), listing(path.join(dir, 'py')).filter((p) => !p.includes('/refs/')));
  } finally {
    console.debug = debug;
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
