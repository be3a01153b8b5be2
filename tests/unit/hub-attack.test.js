// hub-attack.test.js - loads by name against a hostile or broken hub (issue 35, findings 1, 2, 5,
// 6, 7 (the cache reader of hub-node.js), 8, 9, 10, 14), on loopback: the mock hub
// (tests/fixtures/hub/mock-hub.js) with a test's own answers where it misbehaves, and for the
// token, an https hub whose port also speaks http. Each load runs in a child process with a time
// limit and --max-old-space-size, as a load that hangs or grows without end is what the old code
// did; the child reports what it threw (code and message) and the parent looks at the cache and
// at what the servers were asked. The browser's code (hub-browser.js) runs in Node too: it uses
// only fetch, Blob and Response, and a fake `caches` stands in for the Cache API.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startMockHub, sha256Hex } from '../fixtures/hub/mock-hub.js';
import { hubFiles, cachedModels, deleteCachedModel } from '../../web/model/hub/hub-browser.js';
import { AttentionError } from '../../web/core/errors.js';
import { root } from '../helpers.js';

const HUB_NODE = pathToFileURL(path.join(root, 'web/model/hub/hub-node.js')).href;
const HUB_BROWSER = pathToFileURL(path.join(root, 'web/model/hub/hub-browser.js')).href;
const COMMIT = 'f'.repeat(39) + '5', TOKEN = 'hf_attacktoken';
const CONFIG = Buffer.from('{"model_type":"qwen2"}');
const WEIGHTS = Buffer.from(Array.from({ length: 50_000 }, (_, i) => (i * 7 + (i >> 8)) & 255));
const REPO = 'attnmap/w', REPOS = { [REPO]: { commit: COMMIT, files: { 'config.json': CONFIG, 'model.safetensors': WEIGHTS } } };
// the clocks, shorter for the tests (budgets against a hang, not timings: each answer of the mock
// comes in milliseconds, the drip below brings 20 bytes a second)
const FAST = { stallMs: 2000, graceMs: 1000, minRate: 1000 };

const temps = [];
after(() => { for (const d of temps) fs.rmSync(d, { recursive: true, force: true }); });
const tmp = () => { const d = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-hub-attack-')); temps.push(d); return d; };

// ---------------------------------------------------------------------------------------------
// the child: MODULE[fn](...args), reported as { ok, r } or { ok: false, code, message }; a child
// killed by its time limit or out of memory is { crashed }

const CHILD = `
const [mod, fn, args] = JSON.parse(process.argv[1]);
const m = await import(mod);
try {
  const r = await m[fn](...args);
  console.log(JSON.stringify({ ok: true, r: r && { dir: r.dir, downloaded: r.downloaded, keys: Object.keys(r) } }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, code: e?.code, name: e?.name, message: String(e?.message) }));
}`;

// the child's environment: none of the host's Hugging Face settings
const ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^HF_/.test(k)));

function inChild(fn, args, { module = HUB_NODE, env = {}, timeout = 20_000 } = {}) {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--max-old-space-size=256', '--input-type=module', '-e', CHILD, JSON.stringify([module, fn, args])],
      { env: { ...ENV, ...env }, timeout, killSignal: 'SIGKILL', maxBuffer: 1 << 20 },
      (err, stdout, stderr) => {
        const line = stdout.trim().split('\n').at(-1) ?? '';
        resolve(line.startsWith('{') ? JSON.parse(line) : { ok: false, crashed: err?.signal ?? err?.code ?? 'no answer', stderr: stderr.slice(-1500) });
      });
  });
}

const snapshot = (repo, options) => inChild('hubSnapshot', [repo, { token: null, ...options }]);

function assertFailed(out, code, pattern) {
  assert.equal(out.ok, false, 'the load must fail');
  assert.ok(!out.crashed, `the child did not report: ${out.crashed} ${out.stderr ?? ''}`);
  assert.equal(out.code, code, out.message);
  assert.match(out.message, pattern);
}

function assertOk(out) {
  assert.ok(out.ok, `the load failed: ${out.crashed ?? ''} ${out.code ?? ''} ${out.message ?? out.stderr ?? ''}`);
}

// the cache's files of the repo: blobs/ and what they hold
const repoDir = (dir, repo = REPO) => path.join(dir, `models--${repo.replace('/', '--')}`);
const blobs = (dir) => { try { return fs.readdirSync(path.join(repoDir(dir), 'blobs')).sort(); } catch { return []; } };
const snapshotFile = (dir, file) => fs.readFileSync(path.join(repoDir(dir), 'snapshots', COMMIT, file));

// ---------------------------------------------------------------------------------------------
// answers of a misbehaving server

const isGet = (req) => req.method === 'GET';
const resolveCache = (url, file) => url.pathname.startsWith('/api/resolve-cache/') && url.pathname.endsWith(`/${file}`);

// bytes without end, as fast as the client takes them, until it goes away
function endless(res, headers, chunk = Buffer.alloc(1 << 20, 0x20), first = '') {
  res.writeHead(200, headers);
  if (first) res.write(first);
  const pump = () => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once('drain', pump);
  };
  res.on('error', () => {});
  pump();
}

// the mock's own answer to the requests pred picks, without the headers named (exactly as the
// mock writes them): a HEAD with no size, as an honest mirror may give
function strip(pred, names) {
  return (e) => {
    if (!pred(e)) return false;
    const { res } = e, writeHead = res.writeHead;
    res.writeHead = function (status, headers) {
      for (const n of names) delete headers?.[n];
      return writeHead.call(this, status, headers);
    };
    return false;
  };
}
const headOf = (file) => ({ host, req, url }) => host === 'hub' && req.method === 'HEAD' &&
  (resolveCache(url, file) || url.pathname.endsWith(`/resolve/main/${file}`));
const headWithoutSize = (file) => strip(headOf(file), ['Content-Length', 'X-Linked-Size']);

// the tree without sizes (or with the sizes given)
function treeOf(sizes = {}) {
  return ({ host, req, res, url }) => {
    if (host !== 'hub' || !isGet(req) || !url.pathname.startsWith('/api/models/attnmap/w/tree/')) return false;
    const list = ['config.json', 'model.safetensors'].map((p) => ({ type: 'file', path: p, ...(sizes[p] !== undefined && { size: sizes[p] }) }));
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(list));
    return true;
  };
}

const either = (...fns) => (e) => fns.some((f) => f(e));

// ---------------------------------------------------------------------------------------------
// 1. the token over http

// a key and a self-signed certificate for 127.0.0.1, made now; null when openssl is not there
function certificate(dir) {
  const key = path.join(dir, 'key.pem'), cert = path.join(dir, 'cert.pem');
  const r = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { encoding: 'utf8' });
  return r.status === 0 ? { key: fs.readFileSync(key), cert: fs.readFileSync(cert), certFile: cert } : null;
}

// One port that speaks https and http (the first byte of a TLS handshake is 0x16): the hub on
// https, whose resolve answers redirect to http on the same host and port, where the bytes are.
// The origins differ (the scheme) while URL.host does not.
async function startDowngradingHub(tls) {
  const seen = [], files = { 'config.json': CONFIG, 'model.safetensors': WEIGHTS };
  let port;
  const handler = (scheme) => (req, res) => {
    const url = new URL(req.url, 'http://x');
    seen.push({ scheme, method: req.method, path: url.pathname, authorization: req.headers.authorization ?? null });
    if (scheme === 'https' && url.pathname === `/api/models/${REPO}/tree/main`) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify(Object.entries(files).map(([p, b]) => ({ type: 'file', path: p, size: b.length }))));
    }
    const m = /^\/attnmap\/w\/resolve\/[^/]+\/(.+)$/.exec(url.pathname);
    if (scheme === 'https' && m && files[m[1]]) {
      res.writeHead(302, { Location: `http://127.0.0.1:${port}/cdn/${m[1]}`, 'X-Repo-Commit': COMMIT,
        'X-Linked-Etag': `"${sha256Hex(files[m[1]])}"`, 'X-Linked-Size': files[m[1]].length, 'Content-Length': 0 });
      return res.end();
    }
    const cdn = /^\/cdn\/(.+)$/.exec(url.pathname);
    if (scheme === 'http' && cdn && files[cdn[1]]) {
      res.writeHead(200, { 'Content-Length': files[cdn[1]].length });
      return res.end(req.method === 'HEAD' ? undefined : files[cdn[1]]);
    }
    res.writeHead(404, { 'Content-Length': 0 });
    res.end();
  };
  // the two servers on ports of their own, and one port in front that passes each connection
  // to one of them by its first byte (a TLS socket reads its handle, so a byte put back on the
  // stream would be lost: a pipe, not an emitted 'connection')
  const secure = https.createServer({ key: tls.key, cert: tls.cert }, handler('https'));
  const plain = http.createServer(handler('http'));
  const listen = (server) => new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
  const [securePort, plainPort] = [await listen(secure), await listen(plain)];
  const server = net.createServer((socket) => {
    socket.on('error', () => {});
    socket.once('data', (first) => {
      const to = net.connect(first[0] === 0x16 ? securePort : plainPort, '127.0.0.1');
      to.on('error', () => socket.destroy());
      to.write(first);
      socket.pipe(to).pipe(socket);
    });
  });
  port = await listen(server);
  return {
    url: `https://127.0.0.1:${port}`, seen,
    stop: () => Promise.all([secure, plain, server].map((srv) => new Promise((resolve) => { srv.closeAllConnections?.(); srv.close(() => resolve()); }))),
  };
}

test('1: an https hub that redirects to http on its own host and port: the token goes to the hub, never over http', async (t) => {
  const tls = certificate(tmp());
  if (!tls) return t.skip('openssl could not make a certificate');
  const hub = await startDowngradingHub(tls);
  try {
    const out = await inChild('hubSnapshot', [REPO, { cacheDir: tmp(), hubUrl: hub.url, token: TOKEN }], { env: { NODE_EXTRA_CA_CERTS: tls.certFile } });
    const secure = hub.seen.filter((r) => r.scheme === 'https'), plain = hub.seen.filter((r) => r.scheme === 'http');
    assert.deepEqual(plain.filter((r) => r.authorization !== null), [], 'no Authorization header over http');
    assertOk(out);
    assert.ok(secure.length > 0 && secure.every((r) => r.authorization === `Bearer ${TOKEN}`), 'the https hub got the token');
    assert.ok(plain.length > 0, 'the files came over http, as the redirect said');
  } finally {
    await hub.stop();
  }
});

// ---------------------------------------------------------------------------------------------
// 2. a resume from the wrong offset, a blob that is not its sha256

test('2: a resumed download answered with a 206 from another offset starts again from zero; the blob is whole', async () => {
  const hub = await startMockHub({ repos: REPOS });
  const dir = tmp();
  try {
    hub.setDrop('model.safetensors', 4096);
    assertFailed(await snapshot(REPO, { cacheDir: dir, hubUrl: hub.url }), 'FETCH_FAILED', /broke off after 4096 bytes/);
    let lied = false;
    hub.setIntercept(({ host, req, res }) => {
      if (lied || host !== 'cdn' || !isGet(req) || !req.headers.range) return false;
      lied = true;          // once: 206 from byte 0 with filler, as long as what was asked for
      const n = WEIGHTS.length - 4096;
      res.writeHead(206, { 'Content-Range': `bytes 0-${n - 1}/${WEIGHTS.length}`, 'Content-Length': n });
      res.end(Buffer.alloc(n, 0x41));
      return true;
    });
    assertOk(await snapshot(REPO, { cacheDir: dir, hubUrl: hub.url }));
    assert.ok(lied, 'the server answered the resume from the wrong offset');
    assert.ok(snapshotFile(dir, 'model.safetensors').equals(WEIGHTS), 'the weights are the hub\'s, not the filler');
    const cdnGets = hub.requests.filter((r) => r.host === 'cdn' && r.method === 'GET').map((r) => r.range);
    assert.deepEqual(cdnGets, [null, 'bytes=4096-', null], 'the cut, the resume, then the whole file again');
  } finally {
    await hub.stop();
  }
});

test('2: LFS bytes that are not the sha256 their ETag names: FETCH_FAILED naming both hashes, nothing kept', async () => {
  const hub = await startMockHub({ repos: REPOS });
  const dir = tmp(), etag = hub.file(REPO, 'model.safetensors').etag, filler = Buffer.alloc(WEIGHTS.length, 0x42);
  try {
    hub.setIntercept(({ host, req, res }) => {
      if (host !== 'cdn' || !isGet(req)) return false;
      res.writeHead(200, { 'Content-Length': filler.length });
      res.end(filler);
      return true;
    });
    const out = await snapshot(REPO, { cacheDir: dir, hubUrl: hub.url });
    assertFailed(out, 'FETCH_FAILED', new RegExp(`model\\.safetensors is not the file the hub named: its sha256 is ${sha256Hex(filler)}, expected ${etag}`));
    assert.ok(!blobs(dir).some((b) => b.startsWith(etag)), `no blob nor part for ${etag}: ${blobs(dir)}`);
  } finally {
    await hub.stop();
  }
});

// ---------------------------------------------------------------------------------------------
// 5. sizes: unknown is not 0, and nothing is written past the size

test('5: a hub that gives no size, in the HEAD or the file list: the files load (an unknown size, not 0)', async () => {
  const hub = await startMockHub({ repos: REPOS });
  const dir = tmp();
  try {
    hub.setIntercept(either(headWithoutSize('config.json'), headWithoutSize('model.safetensors'), treeOf({})));
    assertOk(await snapshot(REPO, { cacheDir: dir, hubUrl: hub.url }));
    assert.ok(snapshotFile(dir, 'config.json').equals(CONFIG));
    assert.ok(snapshotFile(dir, 'model.safetensors').equals(WEIGHTS));
  } finally {
    await hub.stop();
  }
});

test('5: config.json without end and without a size: stopped at 64 MiB (TOO_LARGE), the part deleted; in the browser\'s code too', async () => {
  const hub = await startMockHub({ repos: REPOS });
  const dir = tmp();
  try {
    hub.setIntercept(either(headWithoutSize('config.json'), treeOf({}), ({ host, req, res, url }) => {
      if (host !== 'hub' || !isGet(req) || !resolveCache(url, 'config.json')) return false;
      endless(res, { ETag: `"${hub.file(REPO, 'config.json').etag}"`, 'X-Repo-Commit': COMMIT });
      return true;
    }));
    assertFailed(await snapshot(REPO, { cacheDir: dir, hubUrl: hub.url }), 'TOO_LARGE',
      /config\.json went past 64\.0 MiB \(67108864 bytes\) and the hub announced no size; a config, tokenizer or index file is read up to that; the partial file was deleted/);
    assert.deepEqual(blobs(dir), [], 'no blob, no .incomplete');
    const browser = await inChild('hubFiles', [REPO, { hubUrl: hub.url, cache: false }], { module: HUB_BROWSER });
    assertFailed(browser, 'TOO_LARGE', /config\.json went past 64\.0 MiB/);
  } finally {
    await hub.stop();
  }
});

test('5: a file longer than the listing says: stopped at that size, the part deleted', async () => {
  const hub = await startMockHub({ repos: REPOS });
  const dir = tmp();
  try {
    hub.setIntercept(either(headWithoutSize('config.json'), treeOf({ 'config.json': CONFIG.length, 'model.safetensors': WEIGHTS.length }), ({ host, req, res, url }) => {
      if (host !== 'hub' || !isGet(req) || !resolveCache(url, 'config.json')) return false;
      endless(res, { ETag: `"${hub.file(REPO, 'config.json').etag}"`, 'X-Repo-Commit': COMMIT }, Buffer.alloc(1000, 0x20));
      return true;
    }));
    assertFailed(await snapshot(REPO, { cacheDir: dir, hubUrl: hub.url }), 'FETCH_FAILED',
      new RegExp(`more than the ${CONFIG.length} bytes the hub announced for config\\.json came; the partial file was deleted`));
    assert.deepEqual(blobs(dir), []);
    const browser = await inChild('hubFiles', [REPO, { hubUrl: hub.url, cache: false }], { module: HUB_BROWSER });
    assertFailed(browser, 'FETCH_FAILED', new RegExp(`more than the ${CONFIG.length} bytes the hub announced for config\\.json`));
  } finally {
    await hub.stop();
  }
});

// ---------------------------------------------------------------------------------------------
// 6. the clocks

test('6: a HEAD with no answer, a body that stops, a body that drips: each fails on its clock (options.stallMs, minRate, graceMs)', async () => {
  const hub = await startMockHub({ repos: REPOS });
  const drips = new Set();
  try {
    hub.setIntercept(({ host, req, url }) => host === 'hub' && req.method === 'HEAD' && resolveCache(url, 'config.json'));   // never answered
    assertFailed(await snapshot(REPO, { cacheDir: tmp(), hubUrl: hub.url, ...FAST }), 'FETCH_FAILED', /config\.json\?.*: no answer within 2 s \(options\.stallMs\)/);

    hub.setIntercept(({ host, req, res, url }) => {
      if (host !== 'hub' || !isGet(req) || !resolveCache(url, 'config.json')) return false;
      res.writeHead(200, { 'Content-Length': CONFIG.length });
      res.write(CONFIG.subarray(0, 10));                       // and then nothing
      return true;
    });
    const dir = tmp();
    assertFailed(await snapshot(REPO, { cacheDir: dir, hubUrl: hub.url, ...FAST, minRate: 0 }), 'FETCH_FAILED',
      /the download of config\.json stalled: no data for 2 s after 10 bytes of 22; the next load resumes it/);
    assert.equal(blobs(dir).filter((b) => b.endsWith('.incomplete')).length, 1, 'the part is kept, to resume');

    hub.setIntercept(({ host, req, res, url }) => {
      if (host !== 'hub' || !isGet(req) || !resolveCache(url, 'config.json')) return false;
      res.writeHead(200, { 'Content-Length': 100_000 });
      const drip = setInterval(() => { if (!res.destroyed) res.write('x'); }, 50);   // a byte now and then: never a stall
      drips.add(drip);
      res.on('close', () => clearInterval(drip));
      return true;
    });
    assertFailed(await snapshot(REPO, { cacheDir: tmp(), hubUrl: hub.url, ...FAST }), 'FETCH_FAILED',
      /the download of config\.json is too slow: \d+ bytes (of \d+ )?in [\d.]+ s, less than 1000 bytes\/s on average after the first 1 s \(options\.minRate\)/);
    const browser = await inChild('hubFiles', [REPO, { hubUrl: hub.url, cache: false, ...FAST }], { module: HUB_BROWSER });
    assertFailed(browser, 'FETCH_FAILED', /the download of config\.json is too slow/);
  } finally {
    for (const d of drips) clearInterval(d);
    await hub.stop();
  }
});

test('6: the caller\'s signal still cancels a download under the clocks (the browser\'s code): its AbortError, not a clock\'s', async () => {
  const hub = await startMockHub({ repos: REPOS });
  const drips = new Set(), ctl = new AbortController();
  try {
    hub.setIntercept(({ host, req, res, url }) => {
      if (host !== 'hub' || !isGet(req) || !resolveCache(url, 'config.json')) return false;
      res.writeHead(200, { 'Content-Length': 100_000 });
      const drip = setInterval(() => { if (!res.destroyed) res.write('x'); }, 50);
      drips.add(drip);
      res.on('close', () => clearInterval(drip));
      ctl.abort();                                   // the reader cancels once the body has begun
      return true;
    });
    await assert.rejects(hubFiles(REPO, { hubUrl: hub.url, cache: false, signal: ctl.signal, ...FAST }), (e) => e.name === 'AbortError');
  } finally {
    for (const d of drips) clearInterval(d);
    await hub.stop();
  }
});

test('6: clocks of the wrong kind are INVALID_ARGUMENT', async () => {
  for (const bad of [{ stallMs: 0 }, { stallMs: '5' }, { minRate: -1 }, { graceMs: 1e300 }]) {   // JSON-safe: they go to a child
    assertFailed(await snapshot(REPO, { cacheDir: tmp(), hubUrl: 'http://127.0.0.1:9', ...bad }), 'INVALID_ARGUMENT', /options\.(stallMs|minRate|graceMs) must be a number/);
  }
});

// ---------------------------------------------------------------------------------------------
// 7. the cache reader: special files are not cached files

test('7: refs/main as a FIFO does not hang the load: offline it is not cached, online the download replaces it', async () => {
  const dir = tmp(), ref = path.join(repoDir(dir), 'refs', 'main');
  fs.mkdirSync(path.dirname(ref), { recursive: true });
  assert.equal(spawnSync('mkfifo', [ref]).status, 0, 'mkfifo');
  assertFailed(await snapshot(REPO, { cacheDir: dir, offline: true }), 'FETCH_FAILED', /attnmap\/w \(revision main\) is not in the Hugging Face cache/);
  const hub = await startMockHub({ repos: REPOS });
  try {
    assertOk(await snapshot(REPO, { cacheDir: dir, hubUrl: hub.url }));
  } finally {
    await hub.stop();
  }
  assert.ok(fs.lstatSync(ref).isFile(), 'refs/main is a regular file now');
  assert.equal(fs.readFileSync(ref, 'utf8'), COMMIT);
  assertOk(await snapshot(REPO, { cacheDir: dir, offline: true }));
});

test('7: a snapshot config.json linked to /dev/zero is not cached; online the download replaces the link', async () => {
  const dir = tmp(), snap = path.join(repoDir(dir), 'snapshots', COMMIT);
  fs.mkdirSync(snap, { recursive: true });
  fs.mkdirSync(path.join(repoDir(dir), 'refs'));
  fs.writeFileSync(path.join(repoDir(dir), 'refs', 'main'), COMMIT);
  fs.symlinkSync('/dev/zero', path.join(snap, 'config.json'));
  fs.writeFileSync(path.join(snap, 'model.safetensors'), WEIGHTS);
  assertFailed(await snapshot(REPO, { cacheDir: dir, offline: true }), 'FETCH_FAILED', /is not in the Hugging Face cache/);
  const hub = await startMockHub({ repos: REPOS });
  try {
    assertOk(await snapshot(REPO, { cacheDir: dir, hubUrl: hub.url }));
  } finally {
    await hub.stop();
  }
  assert.ok(snapshotFile(dir, 'config.json').equals(CONFIG), 'config.json is the hub\'s now');
});

// ---------------------------------------------------------------------------------------------
// 8. the file list

test('8: a file list without end: TOO_LARGE at 16 MiB, in a child of 256 MB', async () => {
  const hub = await startMockHub({ repos: REPOS });
  try {
    hub.setIntercept(({ host, req, res, url }) => {
      if (host !== 'hub' || !isGet(req) || !url.pathname.startsWith('/api/models/attnmap/w/tree/')) return false;
      endless(res, { 'Content-Type': 'application/json' }, Buffer.from('{"type":"file","path":"x.bin","size":1},'.repeat(20_000)), '[');
      return true;
    });
    assertFailed(await snapshot(REPO, { cacheDir: tmp(), hubUrl: hub.url }), 'TOO_LARGE',
      /the file list of attnmap\/w \(revision main\) goes past 16\.0 MiB, all pages together/);
    assertFailed(await inChild('hubSize', [REPO, { hubUrl: hub.url }], { module: HUB_BROWSER }), 'TOO_LARGE', /goes past 16\.0 MiB/);
  } finally {
    await hub.stop();
  }
});

test('8: a long file list under the cap (300,000 entries on one page) is read, not spread onto the stack', async () => {
  const hub = await startMockHub({ repos: REPOS });
  try {
    const list = [{ type: 'file', path: 'config.json', size: CONFIG.length }, { type: 'file', path: 'model.safetensors', size: WEIGHTS.length }];
    for (let i = 0; i < 300_000; i++) list.push({ path: `f${i}` });
    const body = JSON.stringify(list);
    assert.ok(body.length < 16 * 1024 * 1024, `${body.length} bytes: under the cap`);
    hub.setIntercept(({ host, req, res, url }) => {
      if (host !== 'hub' || !isGet(req) || !url.pathname.startsWith('/api/models/attnmap/w/tree/')) return false;
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length });
      res.end(body);
      return true;
    });
    assertOk(await snapshot(REPO, { cacheDir: tmp(), hubUrl: hub.url }));
  } finally {
    await hub.stop();
  }
});

// ---------------------------------------------------------------------------------------------
// 9. a part that cannot be resumed

test('9: an .incomplete as long as the file or longer is dropped before asking; a 416 drops a shorter one', async () => {
  const hub = await startMockHub({ repos: REPOS });
  try {
    const etag = hub.file(REPO, 'model.safetensors').etag;
    const dir = tmp(), part = path.join(repoDir(dir), 'blobs', `${etag}.incomplete`);
    fs.mkdirSync(path.dirname(part), { recursive: true });
    fs.writeFileSync(part, Buffer.alloc(WEIGHTS.length + 100, 1));
    assertOk(await snapshot(REPO, { cacheDir: dir, hubUrl: hub.url }));
    assert.ok(snapshotFile(dir, 'model.safetensors').equals(WEIGHTS));
    assert.deepEqual(hub.requests.filter((r) => r.range !== null), [], 'no Range asked past the end');

    const again = tmp(), short = path.join(repoDir(again), 'blobs', `${etag}.incomplete`);
    fs.mkdirSync(path.dirname(short), { recursive: true });
    fs.writeFileSync(short, WEIGHTS.subarray(0, 100));
    let refused = 0;
    hub.setIntercept(({ host, req, res }) => {
      if (host !== 'cdn' || !isGet(req) || !req.headers.range) return false;
      refused++;
      res.writeHead(416, { 'Content-Range': `bytes */${WEIGHTS.length}`, 'Content-Length': 0 });
      res.end();
      return true;
    });
    assertOk(await snapshot(REPO, { cacheDir: again, hubUrl: hub.url }));
    assert.equal(refused, 1, 'the resume was refused once');
    assert.ok(snapshotFile(again, 'model.safetensors').equals(WEIGHTS), 'and the file came whole');
  } finally {
    await hub.stop();
  }
});

// ---------------------------------------------------------------------------------------------
// 10. the shard limit, before any shard

test('10: an index naming 5,000 shards is refused before a shard is downloaded, in Node\'s code and the browser\'s', async () => {
  const map = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`t${i}`, `model-${String(i).padStart(5, '0')}.safetensors`]));
  const repos = { 'attnmap/many': { commit: COMMIT, files: { 'config.json': CONFIG, 'model.safetensors.index.json': JSON.stringify({ weight_map: map }),
    'model-00000.safetensors': WEIGHTS } } };
  const hub = await startMockHub({ repos });
  try {
    const shardGets = () => hub.requests.filter((r) => /\/model-\d+\.safetensors$/.test(r.path));
    assertFailed(await snapshot('attnmap/many', { cacheDir: tmp(), hubUrl: hub.url }), 'INVALID_MODEL',
      /model\.safetensors\.index\.json names 5000 shards; at most 4096 are read, and none was downloaded/);
    assert.deepEqual(shardGets(), [], 'no shard asked for');
    assertFailed(await inChild('hubFiles', ['attnmap/many', { hubUrl: hub.url, cache: false }], { module: HUB_BROWSER }), 'INVALID_MODEL', /names 5000 shards/);
    assert.deepEqual(shardGets(), [], 'no shard asked for by the browser\'s code');
  } finally {
    await hub.stop();
  }
});

// ---------------------------------------------------------------------------------------------
// 14. the browser's cache: a repo's keys, named exactly

// the Cache API as hub-browser.js uses it: open, put, match, keys, delete
function fakeCaches() {
  const caches = new Map();
  const keyOf = (k) => (typeof k === 'string' ? k : k.url);
  const cache = () => {
    const entries = new Map();
    return {
      async put(k, res) { entries.set(keyOf(k), { body: await res.arrayBuffer(), headers: [...res.headers] }); },
      async match(k) { const e = entries.get(keyOf(k)); return e && new Response(e.body.slice(0), { headers: e.headers }); },
      async keys() { return [...entries.keys()].map((u) => new Request(u)); },
      async delete(k) { return entries.delete(keyOf(k)); },
    };
  };
  return { async open(name) { if (!caches.has(name)) caches.set(name, cache()); return caches.get(name); } };
}

test('14: the browser\'s deleteCachedModel(\'gpt2\') leaves gpt2/large-thing and gpt2/resolve alone; a bad id is INVALID_ARGUMENT', async () => {
  const files = { 'config.json': CONFIG, 'model.safetensors': WEIGHTS };
  const hub = await startMockHub({ repos: { 'gpt2/large-thing': { commit: COMMIT, files }, 'gpt2/resolve': { commit: COMMIT, files } } });
  globalThis.caches = fakeCaches();
  try {
    for (const repo of ['gpt2/large-thing', 'gpt2/resolve']) await hubFiles(repo, { hubUrl: hub.url });
    const keys = async () => (await (await caches.open('attnmap-models')).keys()).map((r) => r.url).sort();
    const all = await keys(), listed = await cachedModels();
    assert.deepEqual(listed.map((m) => m.repo).sort(), ['gpt2/large-thing', 'gpt2/resolve']);
    await deleteCachedModel('gpt2');
    assert.deepEqual(await keys(), all, 'deleteCachedModel(\'gpt2\') removed no key of another repo');
    assert.deepEqual(await cachedModels(), listed);
    await deleteCachedModel('gpt2/large-thing');
    assert.deepEqual((await cachedModels()).map((m) => m.repo), ['gpt2/resolve']);
    assert.ok((await keys()).every((u) => !u.includes('large-thing')), 'every key of gpt2/large-thing is gone, none orphaned');
    for (const bad of ['../x', 'a--b', '', 42]) {
      await assert.rejects(deleteCachedModel(bad), (e) => e instanceof AttentionError && e.code === 'INVALID_ARGUMENT' &&
        /deleteCachedModel: expected a Hugging Face repo id/.test(e.message));
    }
  } finally {
    delete globalThis.caches;
    await hub.stop();
  }
});
