// native.js - the C side of the run: gcc builds of bench/peak.c (the single-core peak),
// bench/native.c (attn_forward) and bench/native-mha.c (attn_mha_forward), and the child process
// that times them one sample at a time. Inputs and outputs go through files in a temporary
// folder, removed when the run exits.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { here, root } from './plan.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-bench-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

function compile(src, out, flags) {
  const srcs = (Array.isArray(src) ? src : [src]).map((f) => path.join(here, f));
  const r = spawnSync('gcc', [...flags, ...srcs, '-o', path.join(tmp, out), '-lm'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return { error: (r.error?.message ?? r.stderr).trim().split('\n').slice(0, 6).join('\n') };
  return { path: path.join(tmp, out) };
}

// attn_workspace_size's parameters as declared in attention.h, mapped to n = m, d_k = d_v = d
function workspaceMacro() {
  const h = fs.readFileSync(path.join(root, 'c_src/attention.h'), 'utf8');
  const params = h.match(/size_t\s+attn_workspace_size\s*\(([^)]*)\)/)?.[1];
  if (!params) return null;
  const map = { n: 'n', m: 'n', d_k: 'd', d_v: 'd', dk: 'd', dv: 'd' };
  const args = params.split(',').map((p) => map[p.trim().split(/[\s*]+/).pop()]);
  if (args.includes(undefined)) return null;
  return `-DWORKSPACE_SIZE(n,d)=attn_workspace_size(${args.join(',')})`;
}

export function peak() {
  const exe = compile('peak.c', 'peak', ['-O2', '-msse2', '-ffp-contract=off']);
  if (exe.error) return { error: exe.error };
  return JSON.parse(execFileSync(exe.path, { encoding: 'utf8' }));
}

// The native child (bench/native.c, interactive mode): one JSON line answers each command.
export function compileNative() {
  const macro = workspaceMacro();
  const exe = compile('native.c', 'native', ['-O3', '-march=native', '-ffp-contract=off', ...(macro ? [macro] : [])]);
  if (exe.error) return { error: `gcc: ${exe.error}` };
  return { exe: exe.path };
}

// bench/native-mha.c, linked with c_src/attention.c and c_src/mha.c (one translation unit
// each: they share static helper names)
export function compileNativeMha() {
  const exe = compile(['native-mha.c', '../c_src/attention.c', '../c_src/mha.c'], 'native-mha', ['-O3', '-march=native', '-ffp-contract=off']);
  if (exe.error) return { error: `gcc: ${exe.error}` };
  return { exe: exe.path };
}

export class NativeChild {
  constructor(exe) {
    this.waiters = [];
    this.stderr = '';
    let buf = '';
    this.proc = spawn(exe, [tmp], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stdout.setEncoding('utf8').on('data', (chunk) => {
      buf += chunk;
      for (let i; (i = buf.indexOf('\n')) >= 0; buf = buf.slice(i + 1)) this.waiters.shift()?.resolve(JSON.parse(buf.slice(0, i)));
    });
    this.proc.stderr.setEncoding('utf8').on('data', (chunk) => { this.stderr += chunk; });
    this.proc.on('exit', (code) => {
      this.exited = new Error(`native C exited (${code}): ${this.stderr.trim()}`);
      for (const w of this.waiters.splice(0)) w.reject(this.exited);
    });
  }

  ask(command) {
    if (this.exited) return Promise.reject(this.exited);
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.proc.stdin.write(`${command}\n`);
    });
  }

  close() { this.proc.stdin.end(); }
}

const bytes = (x) => Buffer.from(x.buffer, x.byteOffset, x.byteLength);
const floats = (file) => {
  const raw = fs.readFileSync(path.join(tmp, file));
  return new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
};

// single-head attention at one size: q, k, v in, the output (n, d) out
export function writeNativeInputs({ n }, inputs) {
  const { q, k, v } = inputs;
  fs.writeFileSync(path.join(tmp, `in-${n}.bin`), Buffer.concat([q, k, v].map((x) => bytes(x.data))));
}

export const readNativeOutput = (n) => floats(`out-${n}.bin`);

// the multi-head layer: x, the four weights and the four biases in, the output (n, d_model) out
export function writeMhaInputs(w) {
  fs.writeFileSync(path.join(tmp, 'mha-in.bin'), Buffer.concat(['x', 'wq', 'wk', 'wv', 'wo', 'bq', 'bk', 'bv', 'bo'].map((k) => bytes(w[k]))));
}

export const readMhaOutput = () => floats('mha-out.bin');
