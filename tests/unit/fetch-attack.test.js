// fetch-attack.test.js - a checkpoint folder fetched by URL (loadModel('http…'), fetchCheckpoint;
// the element runs the same code: tests/browser/element-fetch-attack.test.js) from servers that
// attack (issue 35, findings 4 and 6): model.safetensors chunked with no length and no end (it
// grew the renderer to 6.5 GB in 32 s), a header or a Content-Length beyond wasm32's 4 GiB, shards
// that pass it together, a body shorter than its header, config.json with no end or a 100 MiB
// Content-Length, and a drip of a byte every 50 ms, which resets the stall clock at each byte
// (config.json at a byte per 20 s was still loading after 137 s). Each ends in a typed error
// naming the file, with a bounded download: the servers here, on loopback, count what they sent
// and see the client hang up. Each attack runs in a child with a heap cap and a time limit
// (array buffers are outside the heap, so the child reports their peak too).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { loadModel, fetchCheckpoint } from '../../web/model/model-node.js';
import { AttentionError } from '../../web/core/errors.js';
import { root } from '../helpers.js';

const MODEL = pathToFileURL(path.join(root, 'web/model/model-node.js')).href;
const TOY = path.join(root, 'web/models/toy-zh');
const toyFile = (name) => fs.readFileSync(path.join(TOY, name));
const MiB = 1024 * 1024, GiB = 1024 * MiB;
const HARD_STOP = 256 * MiB;     // an endless body stops here (a client without the fix would take it all)
const SLACK = 32 * MiB;          // what socket buffers hold beyond what the client read
const LIMITS = { encoding: 'utf8', timeout: 60_000, maxBuffer: 1 << 20 };   // a budget against a hang, not a timing

// ----------------------------------------------------------------------------
// servers that attack

const servers = [];
after(() => Promise.all(servers.map((s) => s.close())));

// serve({ NAME: handler(req, res, log) }) -> { url, log, close }; NAME missing: 404. log[NAME]:
// { sent, hungUp } per request of NAME (hungUp: the client closed the connection mid-body)
async function serve(routes) {
  const log = {};
  const server = http.createServer((req, res) => {
    const name = req.url.replace(/^\/m\//, '');
    if (!Object.hasOwn(routes, name)) { res.writeHead(404); res.end(); return; }
    log[name] = { sent: 0, hungUp: false };
    routes[name](req, res, log[name]);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const s = { url: `http://127.0.0.1:${server.address().port}/m/`, log, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
  servers.push(s);
  return s;
}

const file = (bytes, headers = {}) => (req, res) => { res.writeHead(200, { 'content-length': bytes.length, ...headers }); res.end(bytes); };

// head, then fill bytes for ever (chunked, no length; headers may lie), as fast as the client reads
function endless(head, fill = 0, headers = {}) {
  return async (req, res, entry) => {
    let closed = false;
    const gone = new Promise((r) => res.on('close', () => { closed = true; r(); }));
    res.writeHead(200, headers);
    res.write(head);
    entry.sent += head.length;
    const chunk = Buffer.alloc(64 * 1024, fill);
    while (!closed && entry.sent < HARD_STOP) {
      if (!res.write(chunk)) await Promise.race([new Promise((r) => res.once('drain', r)), gone]);
      entry.sent += chunk.length;
    }
    entry.hungUp = closed;
    res.destroy();
  };
}

// head, then one byte every 50 ms, for ever
function drip(head = Buffer.alloc(0), headers = {}) {
  return (req, res, entry) => {
    res.writeHead(200, headers);
    res.write(head);
    const timer = setInterval(() => { res.write(' '); entry.sent++; }, 50);
    res.on('close', () => { clearInterval(timer); entry.hungUp = true; });
  };
}

// a safetensors file's first bytes: the 8-byte length and the JSON header
function headerBytes(header) {
  const json = Buffer.from(JSON.stringify(header));
  const out = Buffer.alloc(8 + json.length);
  out.writeBigUInt64LE(BigInt(json.length));
  json.copy(out, 8);
  return out;
}

// ----------------------------------------------------------------------------
// the client, in a child

// call (an expression of m, the module, and url) in a child with a heap cap and a time limit:
// { error: { name, code, message, status } | null, peak: { arrayBuffers, rss } }
function inChild(url, call) {
  const script = `const m = await import(${JSON.stringify(MODEL)}), url = ${JSON.stringify(url)};
    const peak = { arrayBuffers: 0, rss: 0 };
    const sample = () => { const u = process.memoryUsage(); peak.arrayBuffers = Math.max(peak.arrayBuffers, u.arrayBuffers); peak.rss = Math.max(peak.rss, u.rss); };
    const timer = setInterval(sample, 5);
    let error = null;
    try { (await (${call}))?.dispose?.(); } catch (e) { error = { name: e.name, code: e.code, message: e.message, status: e.status }; }
    clearInterval(timer); sample();
    process.stdout.write(JSON.stringify({ error, peak }));
    process.exit(0);`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--max-old-space-size=256', '--input-type=module', '-e', script], LIMITS, (e, stdout, stderr) => {
      if (e) reject(new Error(`the child failed or was killed (${e.signal ?? e.code}): it hung or grew; stderr: ${stderr}`));
      else resolve(JSON.parse(stdout));
    });
  });
}

// the child's error: of this code, with a message matching re
function expectError(r, code, re) {
  assert.ok(r.error, 'the load succeeded');
  assert.equal(r.error.code, code, r.error.message);
  assert.match(r.error.message, re);
}

// the client hung up on NAME after at most most bytes
function hungUpEarly(s, name, most) {
  const e = s.log[name];
  assert.ok(e.hungUp, `${name}: the client never hung up (${e.sent} bytes sent)`);
  assert.ok(e.sent <= most, `${name}: ${e.sent} bytes were sent before the client hung up; at most ${most} expected`);
}

const toy = { 'config.json': file(toyFile('config.json')), 'vocab.txt': file(toyFile('vocab.txt')) };

// ----------------------------------------------------------------------------
// finding 4: the weights

test('model.safetensors chunked with no end after a good file: INVALID_MODEL at the size its header gives, the rest never read', async () => {
  const weights = toyFile('model.safetensors');
  const s = await serve({ ...toy, 'model.safetensors': endless(weights) });
  const r = await inChild(s.url, 'm.loadModel(url)');
  expectError(r, 'INVALID_MODEL', new RegExp(`m/model\\.safetensors: the body goes on past the ${weights.length} bytes its header describes`));
  hungUpEarly(s, 'model.safetensors', weights.length + SLACK);
  assert.ok(r.peak.arrayBuffers < 64 * MiB, `the child held ${r.peak.arrayBuffers} bytes of array buffers`);
});

test('model.safetensors of endless filler from the first byte: not a safetensors file, at once', async () => {
  const s = await serve({ ...toy, 'model.safetensors': endless(Buffer.alloc(0), 0x41) });
  const r = await inChild(s.url, 'm.loadModel(url)');
  expectError(r, 'INVALID_MODEL', /m\/model\.safetensors: not a safetensors file, or a truncated one: its first 8 bytes give a header length of 4702111234474983745 bytes/);
  hungUpEarly(s, 'model.safetensors', SLACK);
});

test('a header that describes 5 GiB: TOO_LARGE before the data, naming the file and both sizes', async () => {
  const head = headerBytes({ w: { dtype: 'F32', shape: [5 * GiB / 4], data_offsets: [0, 5 * GiB] } });
  const s = await serve({ ...toy, 'model.safetensors': endless(head) });
  const r = await inChild(s.url, 'm.loadModel(url)');
  expectError(r, 'TOO_LARGE', new RegExp(`m/model\\.safetensors: its header describes a file of 5\\.0 GiB \\(${head.length + 5 * GiB} bytes\\); the weights must fit in what wasm32 can hold, 4\\.0 GiB`));
  hungUpEarly(s, 'model.safetensors', SLACK);
});

test('a Content-Length of 5 GiB: TOO_LARGE at once, before a byte is waited for', async () => {
  const s = await serve({ ...toy, 'model.safetensors': drip(Buffer.alloc(0), { 'content-length': String(5 * GiB) }) });
  const r = await inChild(s.url, 'm.loadModel(url, { stallMs: 30_000, graceMs: 30_000 })');
  expectError(r, 'TOO_LARGE', /m\/model\.safetensors: the server announces 5\.0 GiB \(Content-Length 5368709120\); the weights must fit in what wasm32 can hold, 4\.0 GiB/);
});

test('two shards that pass 4 GiB together: TOO_LARGE at the second, by its header, before its data', async () => {
  // the second alone would fit: 2 KiB short of 4 GiB, less than the first shard's 4 KiB
  const small = Buffer.concat([headerBytes({ a: { dtype: 'F32', shape: [1024], data_offsets: [0, 4096] } }), Buffer.alloc(4096)]);
  const big = headerBytes({ b: { dtype: 'U8', shape: [4 * GiB - 2048], data_offsets: [0, 4 * GiB - 2048] } });
  const index = JSON.stringify({ weight_map: { a: 'model-00001-of-00002.safetensors', b: 'model-00002-of-00002.safetensors' } });
  const s = await serve({ ...toy, 'model.safetensors.index.json': file(Buffer.from(index)), 'model-00001-of-00002.safetensors': file(small), 'model-00002-of-00002.safetensors': endless(big) });
  const r = await inChild(s.url, 'm.fetchCheckpoint(url)');
  expectError(r, 'TOO_LARGE', /m\/model-00002-of-00002\.safetensors: its header describes a file of 4\.0 GiB \(\d+ bytes\); the weights must fit in what wasm32 can hold, 4\.0 GiB \(4\.0 GiB after the 4\.1 KiB of the shards before it\)/);
  hungUpEarly(s, 'model-00002-of-00002.safetensors', SLACK);
});

test('a body that ends before the size its header gives: INVALID_MODEL, a truncated file', async () => {
  const weights = toyFile('model.safetensors');
  const s = await serve({ ...toy, 'model.safetensors': (req, res) => { res.writeHead(200); res.end(weights.subarray(0, weights.length - 100)); } });
  const r = await inChild(s.url, 'm.loadModel(url)');
  expectError(r, 'INVALID_MODEL', new RegExp(`m/model\\.safetensors: the file ends after ${weights.length - 100} bytes; its header describes ${weights.length} \\(a truncated file\\?\\)`));
});

// ----------------------------------------------------------------------------
// finding 4: the text files

test('config.json chunked with no end: TOO_LARGE at 64 MiB, the download stopped there', async () => {
  const s = await serve({ 'config.json': endless(Buffer.from('{"model_type": "gpt2"'), 0x20) });
  const r = await inChild(s.url, 'm.loadModel(url)');
  expectError(r, 'TOO_LARGE', /m\/config\.json: more than 64\.0 MiB came \(\d+ bytes, and the body went on\); a config, tokenizer or index file is read up to 64\.0 MiB/);
  hungUpEarly(s, 'config.json', 64 * MiB + SLACK);
  assert.ok(r.peak.arrayBuffers < 160 * MiB, `the child held ${r.peak.arrayBuffers} bytes of array buffers`);
});

test('config.json with a Content-Length of 100 MiB: TOO_LARGE at once', async () => {
  const s = await serve({ 'config.json': drip(Buffer.alloc(0), { 'content-length': String(100 * MiB) }) });
  const r = await inChild(s.url, 'm.loadModel(url, { stallMs: 30_000, graceMs: 30_000 })');
  expectError(r, 'TOO_LARGE', /m\/config\.json: the server announces 100\.0 MiB \(Content-Length 104857600\); a config, tokenizer or index file is read up to 64\.0 MiB/);
});

// ----------------------------------------------------------------------------
// finding 6: a drip

test('config.json at a byte every 50 ms: a ModelFetchError once graceMs have passed below minRate, though no stall ever came', async () => {
  const s = await serve({ 'config.json': drip(Buffer.from('{')) });
  const r = await inChild(s.url, 'm.loadModel(url, { stallMs: 10_000, minRate: 100, graceMs: 500 })');
  expectError(r, 'FETCH_FAILED', /m\/config\.json: the download is too slow: \d+ bytes in [\d.]+ s, less than 100 bytes\/s on average after the first 0\.5 s \(options\.minRate\): the server stalled, or drips/);
  assert.equal(r.error.name, 'ModelFetchError');
  assert.equal(r.error.status, 200);
});

test('model.safetensors that drips after its first bytes, with a Content-Length: the same, naming the file and how much of it came', async () => {
  const weights = toyFile('model.safetensors');
  const s = await serve({ ...toy, 'model.safetensors': drip(weights.subarray(0, 2000), { 'content-length': String(weights.length) }) });
  const r = await inChild(s.url, 'm.loadModel(url, { stallMs: 10_000, minRate: 10_000, graceMs: 500 })');
  expectError(r, 'FETCH_FAILED', new RegExp(`m/model\\.safetensors: the download is too slow: \\d+ bytes of ${weights.length} in [\\d.]+ s, less than 9\\.8 KiB/s on average`));
});

// ----------------------------------------------------------------------------
// what still loads, and the options

test('the toy served chunked (no Content-Length) in pieces of 1,000 bytes loads', async () => {
  const chunked = (bytes) => (req, res) => {
    res.writeHead(200);
    for (let i = 0; i < bytes.length; i += 1000) res.write(bytes.subarray(i, i + 1000));
    res.end();
  };
  const s = await serve({ 'config.json': chunked(toyFile('config.json')), 'model.safetensors': chunked(toyFile('model.safetensors')), 'vocab.txt': chunked(toyFile('vocab.txt')) });
  const model = await loadModel(s.url);
  assert.equal(model.encode('猫吃鱼').length, 3);
  model.dispose();
});

test('a header whose length starts with byte 0x3c ("<") is a header, not an HTML page', async () => {
  // the toy's header padded with spaces (the format allows them) to a length of 0x3c mod 256
  const weights = toyFile('model.safetensors'), n = Number(weights.readBigUInt64LE(0));
  const json = Buffer.concat([weights.subarray(8, 8 + n), Buffer.alloc((256 + 0x3c - (n % 256)) % 256, 0x20)]);
  const out = Buffer.concat([Buffer.alloc(8), json, weights.subarray(8 + n)]);
  out.writeBigUInt64LE(BigInt(json.length));
  assert.equal(out[0], 0x3c);
  const s = await serve({ ...toy, 'model.safetensors': file(out) });
  const model = await loadModel(s.url);
  assert.equal(model.encode('猫吃鱼').length, 3);
  model.dispose();
});

test('stallMs, minRate and graceMs of the wrong kind: INVALID_ARGUMENT naming the option, before any request', async () => {
  const s = await serve(toy);
  for (const [options, name] of [[{ minRate: -1 }, 'minRate'], [{ minRate: NaN }, 'minRate'], [{ stallMs: Infinity }, 'stallMs'], [{ stallMs: 0 }, 'stallMs'], [{ graceMs: '60s' }, 'graceMs']]) {
    await assert.rejects(fetchCheckpoint(s.url, undefined, options), (e) => e instanceof AttentionError && e.code === 'INVALID_ARGUMENT' &&
      e.message.startsWith(`fetchCheckpoint: options.${name} must be`), name);
  }
  assert.deepEqual(s.log, {}, 'no request was made');
});

// finding 10 for a folder by URL: an index naming 5,000 shards was fetched shard by shard before
// weights.js refused it; the limit now comes first, as the hub applies it
test('an index naming 5,000 shards: INVALID_MODEL before any shard is asked for', async () => {
  const weightMap = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`t${i}`, `model-${String(i).padStart(5, '0')}-of-05000.safetensors`]));
  const asked = [];
  const routes = { ...toy, 'model.safetensors.index.json': file(Buffer.from(JSON.stringify({ weight_map: weightMap }))) };
  for (const name of Object.values(weightMap)) routes[name] = (req, res) => { asked.push(name); res.writeHead(404); res.end(); };
  const s = await serve(routes);
  const r = await inChild(s.url, 'm.fetchCheckpoint(url)');
  expectError(r, 'INVALID_MODEL', /m\/model\.safetensors\.index\.json: names 5000 shards; at most 4096 are read, and none was fetched/);
  assert.deepEqual(asked, []);
});
