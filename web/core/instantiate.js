// instantiate.js - from a compiled wasm module (or bytes, or a Response) to the API: one
// instance, its exports checked against exports.js. No wasm of its own: load.js brings the
// package's builds; a pool worker gets its module from the pool (web/pool/worker-loop.js).
import { ErrorCode, AttentionError, fail, asError, describe } from './errors.js';
import { WASM_FUNCTIONS } from './exports.js';
import { makeApi } from './ops.js';

// api -> the WebAssembly.Module it runs, for a pool to send to its workers
const modules = new WeakMap();
export const moduleOf = (api) => modules.get(api);

/** The bytes of a base64 string (the embedded builds, web/wasm/*-wasm.js). */
export function decodeBase64(s) {
  if (typeof Buffer === 'function') return new Uint8Array(Buffer.from(s, 'base64'));
  const bin = atob(s), out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** What every build imports: memory growth is noticed by the views (memory.js), not by a hook. */
export const WASM_IMPORTS = { env: { emscripten_notify_memory_growth() {} } };

// options.wasm -> a WebAssembly.Module
async function toModule(source) {
  if (source instanceof WebAssembly.Module) return source;
  source = await source;
  if (typeof Response === 'function' && source instanceof Response) {
    if (!source.ok) fail(ErrorCode.INVALID_ARGUMENT, `createAttention: fetching the wasm failed: HTTP ${[source.status, source.statusText].filter(Boolean).join(' ')} for ${source.url || 'the response'}`);
    return WebAssembly.compile(await source.arrayBuffer());
  }
  if (source instanceof DataView) return WebAssembly.compile(new Uint8Array(source.buffer, source.byteOffset, source.byteLength));
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return WebAssembly.compile(source);
  return fail(ErrorCode.INVALID_ARGUMENT,
    `createAttention: options.wasm must be a WebAssembly.Module, an ArrayBuffer, a typed array or a Response; received ${describe(source)}`);
}

/** What a build lacks of what its wrapper calls: the C functions of an exports.js list, the memory and the C runtime's start. */
export const missingExports = (exports, functions = WASM_FUNCTIONS) => ['memory', '_initialize', ...functions]
  .filter((name) => (name === 'memory' ? !(exports.memory instanceof WebAssembly.Memory) : typeof exports[name] !== 'function'));

/**
 * The API over one instance of a build: `source` is a WebAssembly.Module, the .wasm bytes, a
 * Response or a promise of one (options.wasm), or `embedded()` for a build of the package's own.
 * `relaxed` says which build it is (api.relaxed).
 */
export async function instantiate(source, relaxed, embedded) {
  let module, instance;
  try {
    module = embedded ? await embedded() : await toModule(source);
    instance = await WebAssembly.instantiate(module, WASM_IMPORTS);
  } catch (e) {
    // the embedded core failing is the host's doing (a CSP without 'wasm-unsafe-eval', no
    // WebAssembly at all): the engine's own error says so; a bad options.wasm is an argument error
    if (embedded) throw e;
    throw asError(e, 'createAttention: options.wasm is not a usable WebAssembly module');
  }
  const missing = missingExports(instance.exports);
  if (missing.length) {
    throw new AttentionError(ErrorCode.INVALID_ARGUMENT,
      `createAttention: options.wasm is not the attnmap core (it lacks ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', …' : ''}); pass attnmap/attention.wasm`);
  }
  instance.exports._initialize();
  const api = makeApi(instance.exports, relaxed);
  modules.set(api, module);
  return api;
}
