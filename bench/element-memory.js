// element-memory.js - the peak memory of a model loaded by URL as <attention-heatmap model="…">
// loads it (issue 39 item 10): web/model/element-support.js openModel(url), which is
// fetchCheckpoint and loadModel(files, { threads: 1 }), in a fresh Node process, from a local
// http server in this one.
//
//   node bench/element-memory.js [--quick] [--print]   this section alone (about 20 s; --quick:
//                                   the first case only, printed); a full run of bench.js runs it last
//   taskset -c 1 node bench/element-memory.js --print   on one core, as issue 39's figures were taken
//
// The checkpoint: SmolLM2-135M's shape (BF16, 270 MB, random weights: scripts/random-checkpoint.js),
// its tensors in two orders: by name, as the safetensors library writes every file (a file from
// the hub: model.layers.10 before model.layers.2, model.norm last), and in the state dict's order
// (random-checkpoint.js's, the order the model reads them). Served with Range requests answered
// (206), and by a server that ignores them (200 and the whole file: python -m http.server).
//
// Measured, in the child (`node --expose-gc bench/element-memory.js --child URL`): the baseline,
// VmRSS of an idle process that has imported the element's model code and instantiated the model
// wasm once (createRuntime; then a GC); the kernel's peak mark reset (5 into /proc/self/clear_refs);
// openModel(url); the peak, VmHWM. Over = peak − baseline − the weights' bytes (the file's size):
// what the load holds beyond the weights themselves (target ≤ 64 MiB). Also the RSS after the load
// and a GC, the requests and bytes the server sent, and a hash of the logits of 8 tokens (the
// same bits in every case). No figure is asserted: a measurement, not a test.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, fmtBytes, table } from './lib.js';
import { writeRandomCheckpoint } from '../scripts/random-checkpoint.js';

export const ELEMENT_MEMORY_HEADING = '## A model by URL: the element\'s peak memory';
const here = path.dirname(fileURLToPath(import.meta.url)), root = path.resolve(here, '..');
const SHAPE = 'smollm2-135m';
const CASES = [
  { order: 'name', ranges: true, what: 'tensors by name (as safetensors writes them), Range answered' },
  { order: 'state', ranges: true, what: 'tensors in the state dict\'s order, Range answered' },
  { order: 'name', ranges: false, what: 'tensors by name, a server that ignores Range' },
];
const say = (msg) => process.stderr.write(`bench: element-memory: ${msg}\n`);
const status = (key) => Number(fs.readFileSync('/proc/self/status', 'utf8').match(new RegExp(`${key}:\\s+(\\d+) kB`))[1]) * 1024;

/** `node bench/bench.js` (a full run, last) and `node bench/element-memory.js`: measure, print, and rewrite the section. */
export async function elementMemoryOnly(r, { quick, write = !quick }) {
  const res = await benchElementMemory({ quick });
  const text = `${report(res)}\n\nWritten by \`node bench/element-memory.js\` on ${new Date().toISOString().slice(0, 16)}Z; ` +
    `${r.machine?.cpu ?? os.cpus()[0]?.model}, Node ${process.versions.node}.`;
  console.log(`\n${ELEMENT_MEMORY_HEADING}\n\n${text}\n`);
  if (write && !res.failed) {
    const { writeSection } = await import('./sections.js');
    writeSection(path.join(root, 'docs/BENCHMARKS.md'), ELEMENT_MEMORY_HEADING, text);
  }
  return res;
}

export async function benchElementMemory({ quick = false } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-bench-element-'));
  try {
    say(`${SHAPE}'s shape, BF16 (scripts/random-checkpoint.js), and the same tensors by name`);
    const state = path.join(dir, 'state'), byName = path.join(dir, 'name');
    const { parameters } = writeRandomCheckpoint(SHAPE, state, { dtype: 'BF16' });
    reorderByName(state, byName);
    const weights = fs.statSync(path.join(state, 'model.safetensors')).size;
    const runs = [];
    for (const c of quick ? CASES.slice(0, 1) : CASES) {
      say(c.what);
      runs.push({ ...c, ...await measure(c.order === 'name' ? byName : state, c.ranges) });
    }
    return { parameters, weights, runs };
  } catch (e) {
    say(`failed: ${e.stack ?? e.message}`);
    return { failed: e.message.split('\n')[0] };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// the checkpoint of `from` with its tensors sorted by name, as safetensors' serializer lays a file out
function reorderByName(from, to) {
  fs.mkdirSync(to, { recursive: true });
  fs.copyFileSync(path.join(from, 'config.json'), path.join(to, 'config.json'));
  const src = fs.openSync(path.join(from, 'model.safetensors'), 'r'), len = Buffer.alloc(8);
  fs.readSync(src, len, 0, 8, 0);
  const n = Number(len.readBigUInt64LE(0)), head = Buffer.alloc(n);
  fs.readSync(src, head, 0, n, 8);
  const header = JSON.parse(head.toString('utf8')), names = Object.keys(header).filter((k) => k !== '__metadata__').sort();
  const out = { __metadata__: header.__metadata__ };
  let at = 0;
  for (const name of names) {
    const [b, e] = header[name].data_offsets;
    out[name] = { ...header[name], data_offsets: [at, at + e - b] };
    at += e - b;
  }
  let json = Buffer.from(JSON.stringify(out));
  json = Buffer.concat([json, Buffer.alloc((8 - (json.length % 8)) % 8, 0x20)]);
  const dst = fs.openSync(path.join(to, 'model.safetensors'), 'w'), lenOut = Buffer.alloc(8);
  lenOut.writeBigUInt64LE(BigInt(json.length));
  fs.writeSync(dst, lenOut);
  fs.writeSync(dst, json);
  for (const name of names) {
    const [b, e] = header[name].data_offsets, piece = Buffer.alloc(e - b);
    fs.readSync(src, piece, 0, e - b, 8 + n + b);
    fs.writeSync(dst, piece);
  }
  fs.closeSync(src);
  fs.closeSync(dst);
}

// a static server of dir under /m/: Range answered (206) or ignored (200, the whole file); counts what it sent
async function serveDir(dir, ranges) {
  const sent = { requests: 0, bytes: 0 };
  const server = http.createServer((req, res) => {
    const name = decodeURIComponent(new URL(req.url, 'http://x').pathname).replace(/^\/m\//, ''), file = path.join(dir, name);
    if (!/^[\w.-]+$/.test(name) || !fs.existsSync(file)) { res.writeHead(404); res.end(); return; }
    sent.requests++;
    const size = fs.statSync(file).size, m = ranges ? /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '') : null;
    const [start, end] = m ? [Number(m[1]), m[2] ? Math.min(Number(m[2]), size - 1) : size - 1] : [0, size - 1];
    res.writeHead(m ? 206 : 200, { 'content-length': end - start + 1, ...(ranges ? { 'accept-ranges': 'bytes' } : {}),
      ...(m ? { 'content-range': `bytes ${start}-${end}/${size}` } : {}) });
    const stream = fs.createReadStream(file, { start, end });
    stream.on('data', (b) => { sent.bytes += b.length; });
    stream.pipe(res);
    res.on('close', () => stream.destroy());
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}/m/`, sent, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
}

// one case: the child loads the folder's URL while this process serves it
async function measure(dir, ranges) {
  const s = await serveDir(dir, ranges);
  try {
    const child = spawn(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child', s.url], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    child.stdout.on('data', (b) => { out += b; });
    child.stderr.on('data', (b) => { err += b; });
    const code = await new Promise((r) => child.on('close', r));
    if (code !== 0) return { error: err.trim().split('\n').slice(-2).join(' ') || `exit ${code}` };
    return { ...JSON.parse(out.trim().split('\n').pop()), requests: s.sent.requests, sentBytes: s.sent.bytes };
  } finally {
    await s.close();
  }
}

// the child: the baseline, then the element's load of url, its peak, and the logits of 8 tokens
async function child(url) {
  const { openModel } = await import('../web/model/element-support.js');
  const { createRuntime } = await import('../web/model/runtime.js');
  (await createRuntime()).dispose();
  globalThis.gc?.();
  const baseline = status('VmRSS');
  fs.writeFileSync('/proc/self/clear_refs', '5');
  const t0 = performance.now();
  const model = await openModel(url);
  const ms = performance.now() - t0, peak = status('VmHWM');
  globalThis.gc?.();
  const after = status('VmRSS');
  const { logits } = model.forward([1, 20, 300, 4000, 5, 60, 700, 8000], { logits: 'last' });
  const hash = crypto.createHash('sha256').update(new Uint8Array(logits.data.buffer, logits.data.byteOffset, logits.data.byteLength)).digest('hex').slice(0, 16);
  model.dispose();
  console.log(JSON.stringify({ baseline, peak, after, ms, hash }));
}

function report(r) {
  if (r.failed) return `Failed: ${r.failed}.`;
  const rows = r.runs.map((x) => (x.error ? [x.what, `not measured: ${x.error}`, '', '', '']
    : [x.what, fmtBytes(x.peak), `weights + **${fmtBytes(x.peak - x.baseline - r.weights)}**`, '≤ weights + 64 MiB',
      `${x.requests} requests, ${fmtBytes(x.sentBytes)} sent; after the load ${fmtBytes(x.after)}; ${fmt(x.ms / 1000)} s; logits ${x.hash}`]));
  return `SmolLM2-135M's shape (${fmt(r.parameters / 1e6)} M parameters, BF16, random weights; model.safetensors ${fmtBytes(r.weights)}) loaded by URL as the element loads it ` +
    '(element-support.js openModel: fetchCheckpoint, then loadModel on one thread) in a fresh Node process, from a local http server. ' +
    'Peak: VmHWM of /proc/self/status, reset after the baseline; baseline: VmRSS of the same process idle, with the model code imported and the model wasm instantiated once ' +
    `(${r.runs.filter((x) => !x.error).map((x) => fmtBytes(x.baseline)).join(', ')}). Over = peak − baseline − the weights' bytes.\n\n` +
    table(['', 'peak RSS', 'over the baseline', 'target', 'checked'], rows, [':--', '--:', '--:', '--:', ':--']);
}

// run directly: the child, or this section alone
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--child');
  if (at >= 0) {
    await child(process.argv[at + 1]);
    process.exit(0);
  }
  const quick = process.argv.includes('--quick');
  await elementMemoryOnly({}, { quick, write: !quick && !process.argv.includes('--print') });
}
