// npm start: serve the page on localhost and print the address.
// Needs no `npm install` and no Emscripten: it serves the committed build. When emcc is
// present and c_src/ or build.sh changed since that build, it rebuilds first.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from './serve.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// Cross-origin isolation (crossOriginIsolated in the page): a page may then share wasm memory with
// workers, and a loaded model runs on threads (web/model/threads/threads-browser.js). Every resource the
// page loads is this server's, and a model from the hub comes by CORS fetch, which COEP allows.
export const ISOLATED = Object.freeze({ 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' });

/** The hash build.sh records: sha256 of c_src/*.c, c_src/*.h, build.sh, web/core/exports.js, first 16 hex digits. */
export function sourcesHash() {
  const dir = path.join(root, 'c_src');
  const names = fs.readdirSync(dir).filter((f) => f.endsWith('.c')).sort()
    .concat(fs.readdirSync(dir).filter((f) => f.endsWith('.h')).sort());
  const h = createHash('sha256');
  for (const f of names) h.update(fs.readFileSync(path.join(dir, f)));
  h.update(fs.readFileSync(path.join(root, 'build.sh')));
  h.update(fs.readFileSync(path.join(root, 'web/core/exports.js')));   // the export list build.sh reads
  return h.digest('hex').slice(0, 16);
}

export function builtHash() {
  const head = fs.readFileSync(path.join(root, 'web/wasm/attention-wasm.js'), 'utf8').slice(0, 200);
  return /sources sha256 ([0-9a-f]{16})/.exec(head)?.[1];
}

function hasEmcc() { return spawnSync('sh', ['-c', 'command -v emcc'], { stdio: 'ignore' }).status === 0; }

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (hasEmcc() && sourcesHash() !== builtHash()) {
    console.log('attnmap: c_src/ changed since the committed build; rebuilding with emcc');
    execFileSync('bash', [path.join(root, 'build.sh')], { stdio: 'inherit' });
  }
  const port = process.env.PORT ? Number(process.env.PORT) : 8000;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`attnmap: PORT must be a port number from 0 to 65535; received ${JSON.stringify(process.env.PORT)}`);
    process.exit(2);
  }
  try {
    const { url } = await startServer({ root, port, fallback: !process.env.PORT, headers: () => ISOLATED });
    console.log(`attnmap: serving the page at ${url}  (Ctrl+C to stop)`);
  } catch (e) {
    // a busy or forbidden port is the reader's to change: one line, not a stack trace
    const why = e.code === 'EADDRINUSE' ? 'is in use' : e.code === 'EACCES' ? 'needs privileges this user lacks' : `cannot be used (${e.code ?? e.message})`;
    console.error(`attnmap: port ${port} on 127.0.0.1 ${why}; try another, e.g. PORT=${port === 9000 ? 9001 : 9000} npm start`);
    process.exit(1);
  }
}
