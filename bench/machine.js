// machine.js - what the run ran on: the CPU, Node, gcc, the load, the peers' versions, and
// whether the committed wasm was built from the sources in c_src/ now.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sourcesHash, builtHash } from '../scripts/start.js';
import { root } from './plan.js';

export function machine() {
  const cpuinfo = fs.readFileSync('/proc/cpuinfo', 'utf8');
  const field = (name) => cpuinfo.match(new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm'))?.[1]?.trim();
  const flags = (field('flags') ?? '').split(/\s+/);
  return {
    cpu: field('model name') ?? os.cpus()[0]?.model ?? 'unknown',
    family: field('cpu family'), model: field('model'),
    mhz: field('cpu MHz'),
    simd: ['sse2', 'avx', 'avx2', 'fma', 'avx512f'].filter((f) => flags.includes(f)).join(' '),
    cores: os.cpus().length,
    memory: os.totalmem(),
    node: process.version,
    v8: process.versions.v8,
    gcc: tryRun('gcc', ['-dumpfullversion']) ?? 'not found',
    os: `${os.type()} ${os.release()}`,
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    loadStart: os.loadavg()[0],
  };
}

function tryRun(cmd, args) {
  try { return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim(); } catch { return null; }
}

// The committed wasm names the hash of the sources it was built from (build.sh): compare it
// with c_src/ now, to say whether native C and wasm measure the same code.
export function sourcesMatchWasm() {
  const built = builtHash(), now = sourcesHash();
  return { built, now, same: built === now };
}

export const versionOf = (pkg) => { try { return JSON.parse(fs.readFileSync(path.join(root, 'bench', 'node_modules', pkg, 'package.json'), 'utf8')).version; } catch { return '?'; } };
