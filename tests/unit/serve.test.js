// scripts/serve.js, the static server of `npm start`, the browser tests and the Chromium bench,
// against the reproductions of issue 11: a request that kills the process, files beyond the page
// (.git, dotfiles, node_modules, symlinks out of the root), any Host header (DNS rebinding),
// every method answered, no nosniff, whole files read into memory per request.
// Set ATTNMAP_SERVE_JS=<file> to run these tests against another serve.js (e.g. an old one).
// Only loopback addresses; every wait is bounded.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { root } from '../helpers.js';

const SERVE = process.env.ATTNMAP_SERVE_JS ? path.resolve(process.env.ATTNMAP_SERVE_JS) : fileURLToPath(new URL('../../scripts/serve.js', import.meta.url));
const { startServer } = await import(pathToFileURL(SERVE).href);

const MiB = 1024 * 1024;
const BIG = 20 * MiB;
const CLIENTS = 20;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** `promise`, or `fallback()` after `ms` (its timer cleared either way, so nothing lingers). */
function within(promise, ms, fallback) {
  let timer;
  const late = new Promise((resolve, reject) => { timer = setTimeout(() => { try { resolve(fallback()); } catch (e) { reject(e); } }, ms); });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

// A temporary tree: the root served, and a folder outside it that symlinks point to.
let tmp, top, outside;
const APP_JS = 'export const app = 1;\n';
const DATA = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-serve-'));
  top = path.join(tmp, 'root');
  outside = path.join(tmp, 'outside');
  const put = (rel, body) => { fs.mkdirSync(path.dirname(path.join(tmp, rel)), { recursive: true }); fs.writeFileSync(path.join(tmp, rel), body); };
  put('outside/secret.txt', 'OUTSIDE-SECRET');
  put('outside/dir/secret.txt', 'OUTSIDE-SECRET');
  put('root/index.html', '<!doctype html><title>root</title>');
  put('root/secret.txt', 'ROOT-SECRET');
  put('root/web/app.js', APP_JS);
  put('root/web/data.bin', DATA);
  put('root/web/throw.html', 'never sent');
  put('root/web/sub/index.html', '<!doctype html><title>sub</title>');
  put('root/web/.hidden.js', 'DOT-SECRET');
  put('root/web/node_modules/z.js', 'NM-SECRET');
  put('root/.git/config', '[core]\n\tGIT-SECRET\n');
  put('root/.git/index', 'DIRC GIT-SECRET');
  put('root/.env', 'TOKEN=ENV-SECRET');
  put('root/node_modules/x/index.js', 'NM-X');
  put('root/node_modules/y/index.js', 'NM-SECRET');
  put('root/tests/t.html', '<!doctype html><title>t</title>');
  put('root/tests/.secret', 'DOT-SECRET');
  fs.symlinkSync('app.js', path.join(top, 'web/alias.js'));
  fs.symlinkSync('../../outside/secret.txt', path.join(top, 'web/escape.txt'));
  fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(top, 'web/escape-abs.txt'));
  fs.symlinkSync('../../outside/dir', path.join(top, 'web/escape-dir'));
  fs.symlinkSync('../.git/config', path.join(top, 'web/git-config'));
  fs.symlinkSync('../secret.txt', path.join(top, 'web/to-secret.txt'));
  fs.symlinkSync('../outside', path.join(top, 'docs')); // an allowed folder that is a way out
});
after(() => { if (tmp) fs.rmSync(tmp, { recursive: true, force: true }); });

/** One request on its own connection; the target is sent as given (no normalisation). */
function request(port, { method = 'GET', target = '/', headers = {}, host = `127.0.0.1:${port}` } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: target, agent: false, timeout: 10000, headers: { host, connection: 'close', ...headers } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within 10 s: ${method} ${target.slice(0, 80)}`)));
    req.on('error', reject);
    req.end();
  });
}

/** Raw bytes in, everything the server sends until it closes (or `ms` passes) out: send `Connection: close` or HTTP/1.0. */
function raw(port, text, ms = 10000) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    const timer = setTimeout(() => { socket.destroy(); reject(new Error(`the server did not close within ${ms} ms`)); }, ms);
    socket.on('data', (c) => chunks.push(c));
    socket.on('close', () => { clearTimeout(timer); resolve(Buffer.concat(chunks).toString('latin1')); });
    socket.on('error', () => {}); // a reset after the answer: 'close' follows
  });
}

async function withServer(options, fn) {
  const s = await startServer({ root: top, ...options });
  try { await fn(s); } finally {
    await within(s.close(), 5000, () => {});
  }
}

const SECRETS = /SECRET/;
const refused = (r, what) => {
  assert.equal(r.status, 404, `${what}: status`);
  assert.doesNotMatch(r.body.toString('latin1'), SECRETS, `${what}: body`);
};

// A server in a child process: a request that kills it shows, and its RSS can be measured.
async function childServer(allow = []) {
  const code = `
    const { startServer } = await import(process.env.SERVE_URL);
    const fs = await import('node:fs');
    const s = await startServer({ root: process.env.ROOT, allow: JSON.parse(process.env.ALLOW),
      headers: (p) => { if (p.endsWith('/throw.html')) throw new Error('a headers hook that throws'); return {}; } });
    const fds = () => { try { return fs.readdirSync('/proc/self/fd').length; } catch { return null; } };
    process.on('message', (m) => { if (m === 'stats') process.send({ rss: process.memoryUsage().rss, fds: fds() }); });
    process.send({ port: s.port });`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    env: { ...process.env, SERVE_URL: pathToFileURL(SERVE).href, ROOT: top, ALLOW: JSON.stringify(allow) },
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((r) => child.on('exit', (code, signal) => r({ code, signal })));
  const { port } = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server child did not start within 20 s: ${stderr}`)), 20000);
    child.once('message', (m) => { clearTimeout(timer); resolve(m); });
    exited.then(({ code }) => { clearTimeout(timer); reject(new Error(`the server child exited with ${code}: ${stderr}`)); });
  });
  const stats = () => new Promise((resolve, reject) => {
    if (child.exitCode !== null || child.signalCode !== null) { reject(new Error(`the server process exited: ${stderr}`)); return; }
    const timer = setTimeout(() => reject(new Error('no stats within 5 s')), 5000);
    child.once('message', (m) => { clearTimeout(timer); resolve(m); });
    child.send('stats');
  });
  const alive = () => child.exitCode === null && child.signalCode === null;
  return { port, child, stats, alive, stderr: () => stderr, exited, stop: () => { if (alive()) child.kill(); return within(exited, 5000, () => {}); } };
}

test('a NUL byte, bad percent-encoding or an overlong path: 400/414, and the process still answers (it used to exit)', { timeout: 60000 }, async () => {
  const srv = await childServer();
  try {
    const bad = [
      ['/%00', [400]], ['/x%00', [400]], ['/web/%00.js', [400]], ['/web/app.js%00.html', [400]],
      ['/%', [400]], ['/%E0%A4%A', [400]], ['/%C0%AF', [400]], ['/%ZZ', [400]],
      ['/web%5Capp.js', [400]], ['/web/%0aapp.js', [400]],
      [`/${'a'.repeat(5000)}`, [400, 414]], [`/web/${'%41'.repeat(3000)}`, [400, 414]],
      [`/web/${'a'.repeat(300)}.js`, [404]], // one segment longer than a file name: ENAMETOOLONG → 404
      ['/web/throw.html', [500]], // a headers(urlPath) hook that throws
    ];
    for (const [target, statuses] of bad) {
      let r;
      try { r = await request(srv.port, { target }); } catch (e) {
        const exit = await within(srv.exited, 2000, () => null);
        assert.fail(`${target.slice(0, 40)}: no answer (${e.code || e.message}); the server process ${exit ? `exited (code ${exit.code}): ${srv.stderr().split('\n').find((l) => /Error/.test(l)) ?? ''}` : 'lives'}`);
      }
      assert.ok(statuses.includes(r.status), `${target.slice(0, 40)}: status ${r.status}, expected ${statuses}`);
      assert.equal(r.headers['x-content-type-options'], 'nosniff', target.slice(0, 40));
      assert.ok(srv.alive(), `the process exited after ${target.slice(0, 40)}`);
      assert.equal((await request(srv.port, { target: '/index.html' })).status, 200, `answers after ${target.slice(0, 40)}`);
    }
    // a raw NUL in the request line: the HTTP parser refuses it
    const text = await raw(srv.port, `GET /\0 HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\n\r\n`);
    assert.match(text, /^HTTP\/1\.1 400 /);
    assert.ok(srv.alive());
    assert.equal((await request(srv.port, { target: '/' })).status, 200);
  } finally { await srv.stop(); }
});

test('.git, dotfiles, node_modules and files outside the allow-list are refused (404, no content)', async () => {
  await withServer({}, async ({ port }) => {
    for (const target of ['/.git/config', '/.git/index', '/.git/', '/.env', '/web/.hidden.js', '/tests/.secret',
      '/node_modules/x/index.js', '/node_modules/y/index.js', '/web/node_modules/z.js', '/secret.txt', '/tests/t.html',
      '/web/../secret.txt', '/web/%2e%2e/secret.txt', '/web%2F..%2Fsecret.txt', '/%2e%2e/outside/secret.txt', '/../outside/secret.txt',
      '/web/./app.js%2F..%2F..%2F.git/config']) {
      refused(await request(port, { target }), target);
    }
    const ok = await request(port, { target: '/web/app.js' });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.toString(), APP_JS);
  });
});

test('allow widens the list (prefixes, files or a function); dot segments stay refused whatever it says', async () => {
  await withServer({ allow: ['tests/', 'node_modules/x/', '.git/', '.env'] }, async ({ port }) => {
    assert.equal((await request(port, { target: '/tests/t.html' })).status, 200);
    assert.equal((await request(port, { target: '/node_modules/x/index.js' })).status, 200);
    assert.equal((await request(port, { target: '/web/app.js' })).status, 200, 'the defaults stay');
    for (const target of ['/tests/.secret', '/node_modules/y/index.js', '/.git/config', '/.env', '/secret.txt']) refused(await request(port, { target }), target);
  });
  await withServer({ allow: (rel) => rel === 'secret.txt' }, async ({ port }) => {
    assert.equal((await request(port, { target: '/secret.txt' })).status, 200);
    refused(await request(port, { target: '/tests/t.html' }), '/tests/t.html');
  });
});

test('symlinks: the real path must be inside the real root and allowed', async () => {
  await withServer({}, async ({ port }) => {
    for (const target of ['/web/escape.txt', '/web/escape-abs.txt', '/web/escape-dir/secret.txt', '/docs/secret.txt', '/docs/dir/secret.txt',
      '/web/git-config', '/web/to-secret.txt']) {
      refused(await request(port, { target }), target);
    }
    const alias = await request(port, { target: '/web/alias.js' });
    assert.equal(alias.status, 200, 'a symlink to an allowed file inside the root is served');
    assert.equal(alias.body.toString(), APP_JS);
    assert.match(alias.headers['content-type'], /text\/javascript/);
  });
});

test('Host: only localhost, 127.0.0.1 and [::1] (with this port or none); anything else refused (DNS rebinding)', async () => {
  await withServer({}, async ({ port }) => {
    const other = port === 65535 ? 1 : port + 1;
    for (const host of ['evil.example', `evil.example:${port}`, `localhost.evil.example:${port}`, `127.0.0.1.nip.io:${port}`,
      `localhost:${other}`, `127.0.0.2:${port}`, `[::2]:${port}`, `localhost:${port}@evil.example`, `localhost:${port}, evil.example`]) {
      const r = await request(port, { host, target: '/web/app.js' });
      assert.ok([403, 421].includes(r.status), `Host: ${JSON.stringify(host)} → ${r.status}`);
      assert.notEqual(r.body.toString(), APP_JS);
      assert.equal(r.headers['x-content-type-options'], 'nosniff');
    }
    for (const host of ['localhost', `localhost:${port}`, `LocalHost:${port}`, '127.0.0.1', `127.0.0.1:${port}`, '[::1]', `[::1]:${port}`]) {
      assert.equal((await request(port, { host, target: '/web/app.js' })).status, 200, `Host: ${host}`);
    }
    // HTTP/1.0 without a Host header, and an empty one
    assert.match(await raw(port, 'GET /web/app.js HTTP/1.0\r\n\r\n'), /^HTTP\/1\.[01] (403|421) /);
    assert.match(await raw(port, 'GET /web/app.js HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n'), /^HTTP\/1\.1 (400|403|421) /);
  });
});

test('only GET and HEAD: other methods get 405 with Allow: GET, HEAD', async () => {
  await withServer({}, async ({ port }) => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const r = await request(port, { method, target: '/web/app.js' });
      assert.equal(r.status, 405, method);
      assert.equal(r.headers.allow, 'GET, HEAD', method);
      assert.notEqual(r.body.toString(), APP_JS, method);
      assert.equal(r.headers['x-content-type-options'], 'nosniff', method);
    }
    assert.equal(fs.readFileSync(path.join(top, 'web/app.js'), 'utf8'), APP_JS);
  });
});

test('X-Content-Type-Options: nosniff and Cache-Control: no-store on every response; the headers(urlPath) hook still applies', async () => {
  const seen = [];
  await withServer({ headers: (p) => { seen.push(p); return { 'x-hook': 'yes' }; } }, async ({ port }) => {
    const cases = [
      [{ target: '/web/app.js?v=1' }, 200], [{ target: '/missing.js' }, 404], [{ target: '/.git/config' }, 404],
      [{ target: '/%E0%A4%A' }, 400], [{ method: 'POST', target: '/' }, 405], [{ host: 'evil.example', target: '/' }, 421],
      [{ target: '/web/data.bin', headers: { range: 'bytes=0-9' } }, 206], [{ target: '/web/data.bin', headers: { range: 'bytes=5000-' } }, 416],
    ];
    for (const [opts, status] of cases) {
      const r = await request(port, opts);
      const label = `${opts.method ?? 'GET'} ${opts.target} ${JSON.stringify(opts.headers ?? {})}`;
      if (status === 421) assert.ok([403, 421].includes(r.status), label); else assert.equal(r.status, status, label);
      assert.equal(r.headers['x-content-type-options'], 'nosniff', label);
      assert.equal(r.headers['cache-control'], 'no-store', label);
    }
    const r = await request(port, { target: '/web/sub/' });
    assert.equal(r.headers['x-hook'], 'yes');
    assert.ok(seen.includes('/web/app.js') && seen.includes('/web/sub/'), `the hook gets the decoded path without the query: ${seen}`);
  });
});

test('HEAD: the headers (Content-Length of the file) and no body', async () => {
  await withServer({}, async ({ port }) => {
    const text = await raw(port, `HEAD /web/data.bin HTTP/1.1\r\nHost: localhost:${port}\r\nConnection: close\r\n\r\n`);
    const [head, body] = text.split('\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 200 /);
    assert.match(head, /\r\ncontent-length: 1000\r\n/i);
    assert.match(head, /\r\nx-content-type-options: nosniff\r\n/i);
    assert.equal(body, '', 'no body after the headers');
    const missing = (await raw(port, `HEAD /nope HTTP/1.1\r\nHost: localhost:${port}\r\nConnection: close\r\n\r\n`)).split('\r\n\r\n');
    assert.match(missing[0], /^HTTP\/1\.1 404 /);
    assert.equal(missing[1], '');
  });
});

test('a directory serves its index.html; a file asked for as a folder is not found', async () => {
  await withServer({}, async ({ port }) => {
    for (const target of ['/', '/web/sub/', '/web/sub']) {
      const r = await request(port, { target });
      assert.equal(r.status, 200, target);
      assert.match(r.headers['content-type'], /^text\/html/, target);
    }
    assert.equal((await request(port, { target: '/web/' })).status, 404, 'no web/index.html');
    assert.equal((await request(port, { target: '/web/app.js/' })).status, 404);
  });
});

test('Range: one byte range gives 206 with Content-Range; past the end 416; several ranges the whole file', async () => {
  await withServer({}, async ({ port }) => {
    const get = (range) => request(port, { target: '/web/data.bin', headers: { range } });
    let r = await get('bytes=0-9');
    assert.equal(r.status, 206);
    assert.equal(r.headers['content-range'], 'bytes 0-9/1000');
    assert.equal(r.headers['content-length'], '10');
    assert.deepEqual(r.body, DATA.subarray(0, 10));
    r = await get('bytes=990-');
    assert.equal(r.headers['content-range'], 'bytes 990-999/1000');
    assert.deepEqual(r.body, DATA.subarray(990));
    r = await get('bytes=-5');
    assert.deepEqual(r.body, DATA.subarray(995));
    r = await get('bytes=995-5000');
    assert.equal(r.headers['content-range'], 'bytes 995-999/1000');
    assert.deepEqual(r.body, DATA.subarray(995));
    r = await get('bytes=1000-');
    assert.equal(r.status, 416);
    assert.equal(r.headers['content-range'], 'bytes */1000');
    r = await get('bytes=0-1,5-6');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, DATA);
    assert.equal((await request(port, { target: '/web/data.bin' })).headers['accept-ranges'], 'bytes');
  });
});

test('the default allow-list on the repository: the page, web/, docs/, README.md, LICENSE, and nothing else', async () => {
  const s = await startServer({ root });
  try {
    const get = (target) => request(s.port, { target, host: `localhost:${s.port}` });
    for (const target of ['/package.json', '/package-lock.json', '/scripts/serve.js', '/tests/helpers.js', '/bench/chromium.html',
      '/c_src/attention.c', '/build.sh', '/.gitignore', '/.git/config', '/.git/HEAD', '/.git/index',
      '/node_modules/playwright-core/package.json', '/web/../package.json', '/tests/fixtures/core/index.html']) {
      const r = await get(target);
      assert.equal(r.status, 404, target);
    }
    for (const target of ['/', '/index.html']) {
      const r = await get(target);
      assert.equal(r.status, 200, target);
      assert.match(r.headers['content-type'], /^text\/html/);
      assert.deepEqual(r.body, fs.readFileSync(path.join(root, 'index.html')));
    }
    const wasm = await get('/web/wasm/attention.wasm');
    assert.equal(wasm.status, 200);
    assert.equal(wasm.headers['content-type'], 'application/wasm');
    const bytes = fs.readFileSync(path.join(root, 'web/wasm/attention.wasm'));
    assert.equal(Number(wasm.headers['content-length']), bytes.length);
    assert.deepEqual(wasm.body, bytes);
    assert.match((await get('/web/core/attention.js')).headers['content-type'], /^text\/javascript/);
    assert.match((await get('/web/page/page.css')).headers['content-type'], /^text\/css/);
    for (const target of ['/web/dist/page.js', '/docs/EMBED.md', '/README.md', '/LICENSE']) assert.equal((await get(target)).status, 200, target);
  } finally { await within(s.close(), 5000, () => {}); }
});

test(`a ${BIG / MiB} MiB file to ${CLIENTS} clients that do not read: streamed, the server's RSS does not grow by the file per client`, { timeout: 180000 }, async () => {
  fs.writeFileSync(path.join(top, 'web/big.bin'), Buffer.alloc(BIG, 0x5a));
  const srv = await childServer();
  const sockets = [];
  try {
    // warm up the paths a request takes, then the baseline
    assert.equal((await request(srv.port, { target: '/web/big.bin', method: 'HEAD' })).status, 200);
    assert.equal((await request(srv.port, { target: '/index.html' })).status, 200);
    await sleep(200);
    const base = await srv.stats();

    // each client sends its request, takes the first chunk of the answer and then stops reading
    const started = [];
    for (let i = 0; i < CLIENTS; i++) {
      started.push(new Promise((resolve, reject) => {
        const s = net.connect(srv.port, '127.0.0.1', () => s.write(`GET /web/big.bin HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\n\r\n`));
        sockets.push(s);
        s.once('data', (chunk) => { s.pause(); resolve(chunk.toString('latin1', 0, 12)); });
        s.on('error', reject);
      }));
    }
    const firstLines = await within(Promise.all(started), 30000, () => { throw new Error('not every client got an answer within 30 s'); });
    for (const l of firstLines) assert.equal(l, 'HTTP/1.1 200');
    // let the server fill what it fills; take the largest RSS over a second
    await sleep(500);
    let peak = 0;
    for (let i = 0; i < 5; i++) { peak = Math.max(peak, (await srv.stats()).rss); await sleep(200); }
    const growth = peak - base.rss;
    console.log(`# server RSS ${(base.rss / MiB).toFixed(0)} → ${(peak / MiB).toFixed(0)} MiB (+${(growth / MiB).toFixed(1)} MiB) with ${CLIENTS} stalled clients of a ${BIG / MiB} MiB file`);
    // reading the file whole per request costs CLIENTS × BIG = 400 MiB; streaming costs ~100 KiB a client
    assert.ok(growth < 100 * MiB, `RSS grew by ${(growth / MiB).toFixed(0)} MiB (whole-file reads would be ${CLIENTS * BIG / MiB} MiB)`);

    // the clients go away: their file streams are destroyed (the descriptors come back) and the server answers
    for (const s of sockets) s.destroy();
    if (base.fds !== null) {
      // that they come back, not how soon: the 60 s limit only stops a leak from hanging the test
      let fds = Infinity;
      for (let i = 0; i < 600 && fds > base.fds + 2; i++) { await sleep(100); fds = (await srv.stats()).fds; }
      assert.ok(fds <= base.fds + 2, `open descriptors: ${fds}, before the clients: ${base.fds}`);
    }
    assert.equal((await request(srv.port, { target: '/web/data.bin', headers: { range: 'bytes=0-0' } })).status, 206);
  } finally {
    for (const s of sockets) s.destroy();
    await srv.stop();
    fs.rmSync(path.join(top, 'web/big.bin'), { force: true });
  }
});

test('close() resolves even while a client holds a response open', { timeout: 90000 }, async () => {
  fs.writeFileSync(path.join(top, 'web/big2.bin'), Buffer.alloc(8 * MiB, 1));
  const s = await startServer({ root: top });
  const socket = net.connect(s.port, '127.0.0.1', () => socket.write(`GET /web/big2.bin HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\n\r\n`));
  socket.on('error', () => {});
  try {
    // the response has started, and the client stops reading it (30 s: a limit that only stops a hang)
    const started = await within(new Promise((r) => socket.once('data', () => { socket.pause(); r(true); })), 30000, () => false);
    assert.ok(started, 'the response never started');
    // that close() resolves, not how soon: 30 s only stops a hang (which would keep this process alive)
    const closed = await within(s.close().then(() => true), 30000, () => false);
    assert.ok(closed, 'close() did not resolve (hung for 30 s)');
  } finally {
    socket.destroy();
    fs.rmSync(path.join(top, 'web/big2.bin'), { force: true });
  }
});

// issue 20: a body is never waited for, and two Host headers are one too many

/** Request head, then a body dripped a byte at a time (every `every` ms, `bytes` of them): what the
 * server sent, whether it closed the connection, and how many body bytes had gone out by then. */
function drip(port, head, { bytes = 60, every = 100, chunked = false } = {}) {
  return new Promise((resolve) => {
    const chunks = [];
    let sent = 0, timer = null, closed = false;
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(head);
      timer = setInterval(() => {
        if (sent === bytes) { clearInterval(timer); finish(); return; }
        socket.write(chunked ? '1\r\nx\r\n' : 'x');
        sent++;
      }, every);
    });
    const finish = () => { clearInterval(timer); socket.destroy(); resolve({ text: Buffer.concat(chunks).toString('latin1'), closed, sent }); };
    socket.on('data', (c) => chunks.push(c));
    socket.on('end', () => { closed = true; finish(); });
    socket.on('close', () => { closed = true; finish(); });
    socket.on('error', () => {}); // a reset after the answer: 'close' follows
  });
}

test('a request with a body: 405 (or 413 for GET) at once, and the connection closed before the body is sent (it stayed open 330 s)', { timeout: 60000 }, async () => {
  await withServer({}, async ({ port }) => {
    const host = `Host: 127.0.0.1:${port}\r\n`;
    const cases = [
      [`POST /web/app.js HTTP/1.1\r\n${host}Content-Length: 60\r\n\r\n`, 405, {}],
      [`PUT /web/app.js HTTP/1.1\r\n${host}Transfer-Encoding: chunked\r\n\r\n`, 405, { chunked: true }],
      [`GET /web/app.js HTTP/1.1\r\n${host}Content-Length: 60\r\n\r\n`, 413, {}],
    ];
    for (const [head, status, opts] of cases) {
      const r = await drip(port, head, opts);
      const what = head.split('\r\n')[0];
      assert.match(r.text, new RegExp(`^HTTP/1\\.1 ${status} `), `${what}: ${r.text.slice(0, 40)}`);
      assert.doesNotMatch(r.text, new RegExp(APP_JS.trim().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), what);
      assert.match(r.text, /\r\nconnection: close\r\n/i, what);
      assert.ok(r.closed && r.sent < 60, `${what}: the connection was ${r.closed ? 'closed' : 'still open'} after ${r.sent} of 60 body bytes`);
    }
    assert.equal((await request(port, { target: '/web/app.js' })).status, 200, 'and the server answers');
    // POST without a body: 405, the connection kept as asked
    assert.match(await raw(port, `POST / HTTP/1.1\r\n${host}Content-Length: 0\r\nConnection: close\r\n\r\n`), /^HTTP\/1\.1 405 /);
  });
});

test('time limits: headers within 20 s, a whole request within 30 s (Node\'s defaults: 60 s and 300 s)', async () => {
  await withServer({}, async ({ server }) => {
    assert.ok(server.headersTimeout > 0 && server.headersTimeout <= 20000, `headersTimeout ${server.headersTimeout}`);
    assert.ok(server.requestTimeout > 0 && server.requestTimeout <= 30000, `requestTimeout ${server.requestTimeout}`);
  });
});

test('two Host headers: 400, whichever comes first (it answered 200 with the first)', async () => {
  await withServer({}, async ({ port }) => {
    for (const hosts of [[`127.0.0.1:${port}`, 'evil.example'], ['evil.example', `127.0.0.1:${port}`], [`localhost:${port}`, `localhost:${port}`]]) {
      const text = await raw(port, `GET /web/app.js HTTP/1.1\r\n${hosts.map((h) => `Host: ${h}\r\n`).join('')}Connection: close\r\n\r\n`);
      assert.match(text, /^HTTP\/1\.1 400 /, `Host: ${hosts.join(', Host: ')}`);
      assert.ok(!text.includes(APP_JS), 'no file');
      assert.match(text, /\r\nx-content-type-options: nosniff\r\n/i);
    }
    assert.match(await raw(port, `GET /web/app.js HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`), /^HTTP\/1\.1 200 /);
  });
});
