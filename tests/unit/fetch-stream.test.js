// fetch-stream.test.js - a checkpoint by URL whose weights are far above what is read whole
// (fetch-source.js, issue 39 item 10): its tensors go from the download into wasm memory as
// they come, and the model is the same bits as one loaded from the file's bytes.
//
// The checkpoint: a LLaMA of 105 MB (vocab 16000, 12 layers of width 512, untied), its tensors
// by name as the safetensors library writes every file (lm_head first, model.layers.10 before
// model.layers.2, model.norm last: the order the model reads them in is not the file's), in BF16,
// F16 and F32 (matrices kept as stored, norms converted to float32).
//
// How "never the file whole" is asserted, without a clock: in a child, fetch is wrapped so that
// the loader gets the body in chunks of 1 MiB which the test owns; when the loader asks for the
// next chunk, the one before is overwritten with 0xff (BF16 and F16 NaN: a loader that kept a
// chunk to copy it later would load NaN, or another model), then garbage is collected and the
// array buffers alive are counted (process.memoryUsage().arrayBuffers, which wasm memory is not
// part of). The most counted at any chunk must stay below 48 MiB, less than half the file: the
// code before this change held the file in one array of its size while the rest came (it fails
// here with 105.6 MiB).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadModel } from '../../web/model/model.js';
import { AttentionError } from '../../web/core/errors.js';
import { tensorsOf } from '../../scripts/random-checkpoint.js';
import { ggufMetadata, ggufName, randomBlocks, rng, writeGgufFile } from '../../scripts/gguf-writer.js';
import { root, serve } from '../helpers.js';

const MODEL = pathToFileURL(path.join(root, 'web/model/model.js')).href;
const MiB = 1024 * 1024;
const HELD_MOST = 48 * MiB;
const CONFIG = {
  architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: 512, intermediate_size: 1536, num_hidden_layers: 12,
  num_attention_heads: 8, num_key_value_heads: 2, max_position_embeddings: 256, vocab_size: 16000, rms_norm_eps: 1e-5,
  rope_theta: 10000, tie_word_embeddings: false, hidden_act: 'silu', attention_bias: false, mlp_bias: false, torch_dtype: 'bfloat16',
};
const IDS = [1, 20, 300, 4000, 5, 60, 700, 8000, 15999];

// ----------------------------------------------------------------------------
// the checkpoint

// xorshift32 in [0, 1)
function generator(seed) {
  let s = seed >>> 0 || 1;
  return () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s / 4294967296; };
}

// a tensor's dtype: matrices BF16 (the lm_head F16), the layer norms F32 or F16 by layer
function dtypeOf(name, shape) {
  if (name === 'lm_head.weight') return 'F16';
  if (shape.length === 2) return 'BF16';
  return /\.(\d+)\./.test(name) && Number(/\.(\d+)\./.exec(name)[1]) % 2 ? 'F16' : 'F32';
}

const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);
// x as float16 bits (round to nearest; |x| here is between 2^-14 and 2)
function f16Bits(x) {
  f32[0] = x;
  const b = u32[0], sign = (b >>> 16) & 0x8000, exp = ((b >>> 23) & 0xff) - 127 + 15, mant = (b >>> 13) & 0x3ff;
  return exp <= 0 ? sign : sign | (exp << 10) | mant;
}

// the tensor's bytes: U(±1/√fan_in) for a matrix, 1 ± 0.1 for a norm
function tensorBytes(shape, dtype, rand) {
  const count = shape.reduce((a, b) => a * b, 1), out = Buffer.alloc(count * (dtype === 'F32' ? 4 : 2));
  const scale = shape.length === 2 ? 1 / Math.sqrt(shape[1]) : 0;
  for (let i = 0; i < count; i++) {
    const x = scale ? (rand() * 2 - 1) * scale : 1 + (rand() * 2 - 1) * 0.1;
    f32[0] = x;
    if (dtype === 'F32') out.writeFloatLE(x, 4 * i);
    else out.writeUInt16LE(dtype === 'F16' ? f16Bits(x) : u32[0] >>> 16, 2 * i);
  }
  return out;
}

// a safetensors file of these tensors ([name, shape, bytes, dtype]), laid out by name
function safetensors(list) {
  const sorted = [...list].sort((a, b) => (a[0] < b[0] ? -1 : 1)), header = { __metadata__: { format: 'pt' } };
  let at = 0;
  for (const [name, shape, bytes, dtype] of sorted) {
    header[name] = { dtype, shape, data_offsets: [at, at + bytes.length] };
    at += bytes.length;
  }
  let json = Buffer.from(JSON.stringify(header));
  json = Buffer.concat([json, Buffer.alloc((8 - (json.length % 8)) % 8, 0x20)]);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([len, json, ...sorted.map((t) => t[2])]);
}

// the folder: config.json, model.safetensors, and the same tensors as two shards and their index
function writeCheckpoint(dir) {
  const rand = generator(7);
  const list = tensorsOf(CONFIG).map(([name, shape]) => { const dtype = dtypeOf(name, shape); return [name, shape, tensorBytes(shape, dtype, rand), dtype]; });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(CONFIG));
  fs.writeFileSync(path.join(dir, 'model.safetensors'), safetensors(list));
  const shards = { 'model-00001-of-00002.safetensors': list.filter((t) => !/layers\.([6-9]|1\d)\./.test(t[0])) };
  shards['model-00002-of-00002.safetensors'] = list.filter((t) => !shards['model-00001-of-00002.safetensors'].includes(t));
  const sharded = path.join(dir, 'sharded'), weightMap = {};
  fs.mkdirSync(sharded);
  fs.writeFileSync(path.join(sharded, 'config.json'), JSON.stringify(CONFIG));
  for (const [file, tensors] of Object.entries(shards)) {
    fs.writeFileSync(path.join(sharded, file), safetensors(tensors));
    for (const [name] of tensors) weightMap[name] = file;
  }
  fs.writeFileSync(path.join(sharded, 'model.safetensors.index.json'), JSON.stringify({ metadata: {}, weight_map: weightMap }));
}

// model.gguf: the same shape as llama.cpp names it (arch llama, q and k random so not permuted), its
// matrices F16 but the odd layers' k and v in Q8_0, the norms F32, laid out by name (blk.10 before
// blk.2, token_embd last: the model reads it first)
function writeGguf(dir) {
  const rand = generator(11), next = rng(11);
  const tensors = tensorsOf(CONFIG).map(([hf, shape]) => {
    const name = ggufName(hf), layer = Number(/^blk\.(\d+)\./.exec(name)?.[1] ?? 0);
    const type = shape.length === 1 ? 'F32' : layer % 2 && /attn_[kv]\./.test(name) ? 'Q8_0' : 'F16';
    const bytes = () => (type === 'Q8_0' ? randomBlocks(type, shape[0], shape[1], next) : tensorBytes(shape, type, rand));
    return { name, shape, type, pieces: () => [bytes()] };
  }).sort((a, b) => (a.name < b.name ? -1 : 1));
  writeGgufFile(path.join(dir, 'model.gguf'), { metadata: ggufMetadata('llama', CONFIG), tensors });
}

let dir;
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-fetch-stream-'));
  writeCheckpoint(dir);
  writeGguf(dir);
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

// ----------------------------------------------------------------------------
// servers

// the files of `folder` under /m/: Range answered with 206 (ranges) or ignored (200, the whole
// file); answer(req, res, name, bytes) may answer a request itself (true: answered)
function files(folder, { ranges = true, answer = () => false } = {}) {
  const cache = new Map();
  return (req, res, name) => {
    const file = path.join(folder, name);
    if (!/^[\w.-]+$/.test(name) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) { res.writeHead(404); res.end(); return; }
    if (!cache.has(name)) cache.set(name, fs.readFileSync(file));
    const bytes = cache.get(name);
    if (answer(req, res, name, bytes)) return;
    const m = ranges ? /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '') : null;
    if (!m) { res.writeHead(200, { 'content-length': bytes.length }); res.end(bytes); return; }
    const start = Number(m[1]), end = m[2] ? Math.min(Number(m[2]), bytes.length - 1) : bytes.length - 1;
    res.writeHead(206, { 'content-length': end - start + 1, 'content-range': `bytes ${start}-${end}/${bytes.length}` });
    res.end(bytes.subarray(start, end + 1));
  };
}

const ranged = (s) => s.requests.length;

// ----------------------------------------------------------------------------
// the load in a child, its chunks watched

// loads url as the element does (fetchCheckpoint then loadModel, or loadModel(url) for a .gguf:
// fetchGguf, on one thread) with fetch wrapped (above), then the same files from their bytes (local: an expression
// of them, with fs, path and read(name) at hand): { held, pulls, same, error }
function inChild(url, folder, local) {
  const script = `const m = await import(${JSON.stringify(MODEL)});
    const fs = await import('node:fs'), path = await import('node:path');
    const real = globalThis.fetch, stat = { held: 0, pulls: 0 };
    globalThis.fetch = async (url, init) => {
      const res = await real(url, init), reader = res.body.getReader();
      let prev = null, tail = null;
      const body = new ReadableStream({
        async pull(ctl) {
          if (prev) prev.fill(0xff);
          globalThis.gc();
          stat.held = Math.max(stat.held, process.memoryUsage().arrayBuffers);
          stat.pulls++;
          const parts = tail ? [tail] : [];
          let n = tail ? tail.length : 0, done = false;
          tail = null;
          while (n < ${MiB}) { const r = await reader.read(); if (r.done) { done = true; break; } parts.push(r.value); n += r.value.length; }
          if (n === 0) { ctl.close(); return; }
          prev = new Uint8Array(n);
          let at = 0;
          for (const p of parts) { prev.set(p, at); at += p.length; }
          ctl.enqueue(prev);
          if (done) ctl.close();
        },
        cancel: (why) => reader.cancel(why),
      }, { highWaterMark: 0 });
      return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
    };
    const out = { error: null };
    let a, b;
    try {
      const url = ${JSON.stringify(url)};
      a = await m.loadModel(url.endsWith('.gguf') ? url : await m.fetchCheckpoint(url), { threads: 1 });
      Object.assign(out, stat);
      const read = (name) => fs.readFileSync(path.join(${JSON.stringify(folder)}, name));
      b = await m.loadModel(${local}, { threads: 1 });
      const x = a.forward(${JSON.stringify(IDS)}).logits.data, y = b.forward(${JSON.stringify(IDS)}).logits.data;
      out.same = x.length === y.length && Buffer.from(x.buffer, x.byteOffset, x.byteLength).equals(Buffer.from(y.buffer, y.byteOffset, y.byteLength));
      out.finite = x.every(Number.isFinite);
    } catch (e) { out.error = { code: e.code, message: e.message }; }
    a?.dispose(); b?.dispose();
    process.stdout.write(JSON.stringify(out));
    process.exit(0);`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 240_000, maxBuffer: 1 << 20 }, (e, stdout, stderr) => {
      if (e) reject(new Error(`the child failed (${e.signal ?? e.code}): ${stderr}`));
      else resolve(JSON.parse(stdout));
    });
  });
}

test('a 105 MB model.safetensors by URL: no chunk kept, at most 48 MiB of arrays held at any chunk, the logits those of its bytes', async () => {
  const size = fs.statSync(path.join(dir, 'model.safetensors')).size;
  assert.ok(size > 100 * MiB && size > 2 * HELD_MOST, `the file has ${size} bytes`);
  const s = await serve(files(dir));
  try {
    const r = await inChild(s.url, dir, "{ config: read('config.json').toString(), weights: read('model.safetensors') }");
    assert.equal(r.error, null, r.error?.message);
    assert.ok(r.pulls >= 0.9 * (size / MiB), `${r.pulls} chunks of 1 MiB were read`);
    assert.ok(r.held < HELD_MOST, `array buffers held at one chunk: ${(r.held / MiB).toFixed(1)} MiB (the file: ${(size / MiB).toFixed(1)} MiB)`);
    assert.ok(r.finite, 'the logits are finite: no chunk overwritten with NaN was read late');
    assert.ok(r.same, 'the logits are the bits of a load from the file\'s bytes');
    assert.ok(ranged(s) > 3, `${ranged(s)} requests: the file's order is not the model's, so Range requests`);
  } finally {
    await s.close();
  }
});

test('a sharded checkpoint by URL (two shards of 69 and 36 MB): the same, shard by shard', async () => {
  const folder = path.join(dir, 'sharded');
  const s = await serve(files(folder));
  try {
    const shards = "Object.fromEntries(['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'].map((n) => [n, read(n)]))";
    const r = await inChild(s.url, folder, `{ config: read('config.json').toString(), weights: { index: read('model.safetensors.index.json').toString(), shards: ${shards} } }`);
    assert.equal(r.error, null, r.error?.message);
    assert.ok(r.held < HELD_MOST, `array buffers held at one chunk: ${(r.held / MiB).toFixed(1)} MiB`);
    assert.ok(r.finite && r.same, 'the logits are the bits of a load from the shards\' bytes');
  } finally {
    await s.close();
  }
});

test('a 103 MB .gguf by URL (fetchGguf): the header read, then the same as a safetensors file, at most 48 MiB held', async () => {
  const size = fs.statSync(path.join(dir, 'model.gguf')).size;
  assert.ok(size > 2 * HELD_MOST, `the file has ${size} bytes`);
  const s = await serve(files(dir));
  try {
    const r = await inChild(`${s.url}model.gguf`, dir, "{ gguf: read('model.gguf') }");
    assert.equal(r.error, null, r.error?.message);
    // the memory was sampled all through the download (about one pull a MiB: 99-102 here, as the
    // requests' ends fall); what fails a load that holds the file whole is the next line
    assert.ok(r.pulls >= 0.9 * (size / MiB), `${r.pulls} chunks of 1 MiB were read`);
    assert.ok(r.held < HELD_MOST, `array buffers held at one chunk: ${(r.held / MiB).toFixed(1)} MiB (the file: ${(size / MiB).toFixed(1)} MiB)`);
    assert.ok(r.finite && r.same, 'the logits are the bits of a load from the file\'s bytes');
    assert.ok(ranged(s) > 3, `${ranged(s)} requests: token_embd is the file's last tensor and the model's first`);
  } finally {
    await s.close();
  }
});

test('a .gguf by URL from a server that ignores Range, and one cut short: the same logits, onProgress to its size; an error naming the URL', async () => {
  const bytes = fs.readFileSync(path.join(dir, 'model.gguf'));
  const local = await loadModel({ gguf: bytes }, { threads: 1 }), expected = logitsOf(local);
  local.dispose();
  const whole = await serve(files(dir, { ranges: false }));
  try {
    const seen = [], model = await loadModel(`${whole.url}model.gguf`, { threads: 1, onProgress: (e) => seen.push(e) });
    assert.ok(logitsOf(model).equals(expected));
    assert.ok(seen.length > 10 && seen.every((e, i) => e.total === bytes.length && e.loaded <= e.total && (i === 0 || e.loaded >= seen[i - 1].loaded)), 'onProgress counts the download forward');
    assert.equal(seen.at(-1).loaded, bytes.length);
    model.dispose();
  } finally {
    await whole.close();
  }
  const cut = await serve(files(dir, { answer: (req, res, name, b) => {   // every answer announces the whole file and stops at 60 %
    const m = /^bytes=(\d+)-/.exec(req.headers.range ?? ''), start = m ? Number(m[1]) : 0;
    res.writeHead(m ? 206 : 200, { 'content-length': b.length - start, ...(m ? { 'content-range': `bytes ${start}-${b.length - 1}/${b.length}` } : {}) });
    res.end(b.subarray(start, Math.max(start, Math.floor(b.length * 0.6))));
    return true;
  } }));
  try {
    await assert.rejects(loadModel(`${cut.url}model.gguf`, { threads: 1 }), (e) => {
      assert.ok(e.code === 'INVALID_MODEL' || e.name === 'ModelFetchError', `${e.name} ${e.code}: ${e.message}`);
      assert.match(e.message, /m\/model\.gguf: /);
      return true;
    });
  } finally {
    await cut.close();
  }
});

// ----------------------------------------------------------------------------
// in this process: the servers that do not answer Range as asked

const logitsOf = (model) => Buffer.from(model.forward(IDS).logits.data.buffer);
let expected;
async function bytesLogits() {
  if (expected) return expected;
  const read = (name) => fs.readFileSync(path.join(dir, name));
  const model = await loadModel({ config: read('config.json').toString(), weights: read('model.safetensors') }, { threads: 1 });
  expected = logitsOf(model);
  model.dispose();
  return expected;
}

test('a server that ignores Range (200 and the whole file, as python -m http.server): the file read whole, the same logits', async () => {
  const s = await serve(files(dir, { ranges: false }));
  try {
    const model = await loadModel(s.url, { threads: 1 });
    assert.ok(logitsOf(model).equals(await bytesLogits()));
    model.dispose();
    assert.ok(s.requests.filter((r) => r === '/m/model.safetensors').length >= 2, 'a request with Range, answered with the whole file');
  } finally {
    await s.close();
  }
});

test('onProgress for a URL: model.safetensors counted as it comes, never backwards, up to its size', async () => {
  const size = fs.statSync(path.join(dir, 'model.safetensors')).size, seen = [];
  const s = await serve(files(dir));
  try {
    (await loadModel(s.url, { threads: 1, onProgress: (e) => seen.push(e) })).dispose();
  } finally {
    await s.close();
  }
  const weights = seen.filter((e) => e.file === 'model.safetensors');
  assert.ok(weights.length > 10, `${weights.length} events`);
  weights.forEach((e, i) => { assert.equal(e.total, size); if (i) assert.ok(e.loaded >= weights[i - 1].loaded); });
  assert.equal(weights.at(-1).loaded, size);
});

async function rejects(s, code, re, options = {}) {
  try {
    await assert.rejects(loadModel(s.url, { threads: 1, ...options }), (e) => {
      assert.ok(e instanceof AttentionError, `${e.name}: ${e.message}`);
      assert.equal(e.code, code, e.message);
      assert.match(e.message, re);
      return true;
    });
  } finally {
    await s.close();
  }
}

test('a file shorter than its header says, served with Range: INVALID_MODEL, a truncated file, naming it', async () => {
  const bytes = fs.readFileSync(path.join(dir, 'model.safetensors')), cut = bytes.subarray(0, bytes.length - 1000);
  const s = await serve(files(dir, { answer: (req, res, name) => {
    if (name !== 'model.safetensors') return false;
    const m = /^bytes=(\d+)-/.exec(req.headers.range ?? ''), start = m ? Number(m[1]) : 0;
    res.writeHead(m ? 206 : 200, { 'content-length': cut.length - start, ...(m ? { 'content-range': `bytes ${start}-${cut.length - 1}/${cut.length}` } : {}) });
    res.end(cut.subarray(start));
    return true;
  } }));
  await rejects(s, 'INVALID_MODEL', new RegExp(`m/model\\.safetensors: the file ends after ${cut.length} bytes; its header describes ${bytes.length} \\(a truncated file\\?\\)`));
});

test('a 206 whose bytes go on past the file: INVALID_MODEL, naming the file', async () => {
  const s = await serve(files(dir, { answer: (req, res, name, bytes) => {
    const m = /^bytes=(\d+)-/.exec(req.headers.range ?? '');
    if (name !== 'model.safetensors' || !m) return false;
    const start = Number(m[1]);
    res.writeHead(206);                                               // no length: a body that does not stop
    res.end(Buffer.concat([bytes.subarray(start), Buffer.alloc(4096)]));
    return true;
  } }));
  await rejects(s, 'INVALID_MODEL', /m\/model\.safetensors: the body goes on past the \d+ bytes its header describes/);
});

test('a Range request that stalls: a ModelFetchError naming the file and where', async () => {
  const s = await serve(files(dir, { answer: (req, res, name, bytes) => {
    const m = /^bytes=(\d+)-/.exec(req.headers.range ?? '');
    if (name !== 'model.safetensors' || !m) return false;
    res.writeHead(206, { 'content-length': bytes.length - Number(m[1]) });
    res.write(bytes.subarray(Number(m[1]), Number(m[1]) + 100));       // then nothing
    return true;
  } }));
  await rejects(s, 'FETCH_FAILED', /m\/model\.safetensors: the download stalled: no data for 3 s after \d+ bytes of \d+/, { stallMs: 3000 });
});

test('a file changed on the server between two requests (another header the second time): INVALID_MODEL', async () => {
  let asked = 0;
  const s = await serve(files(dir, { ranges: false, answer: (req, res, name, bytes) => {
    if (name !== 'model.safetensors' || asked++ === 0) return false;
    const other = Buffer.from(bytes);
    other[20] ^= 1;                                                    // a byte of the JSON header
    res.writeHead(200, { 'content-length': other.length });
    res.end(other);
    return true;
  } }));
  await rejects(s, 'INVALID_MODEL', /m\/model\.safetensors: the file changed on the server: its first \d+ bytes \(the header\) differ/);
});
