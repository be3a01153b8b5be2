// load.js - from wasm bytes to the API: decode the embedded build, pick the relaxed-SIMD one
// where the engine has it, compile, instantiate once per build, check the exports (exports.js).
import wasmBase64 from '../wasm/attention-wasm.js';
import { ErrorCode, AttentionError, fail, asError, describe } from './errors.js';
import { isPlain } from './args.js';
import { WASM_FUNCTIONS } from './exports.js';
import { makeApi } from './ops.js';

function decodeBase64(s) {
  if (typeof Buffer === 'function') return new Uint8Array(Buffer.from(s, 'base64'));
  const bin = atob(s), out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

// A module using f32x4.relaxed_madd validates only where the engine has relaxed SIMD.
const RELAXED_PROBE = (() => {
  const c = [0xfd, 12, ...new Array(16).fill(0)], body = [0, ...c, ...c, ...c, 0xfd, 0x85, 0x02, 0x0b];
  return new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 0x60, 0, 1, 0x7b, 3, 2, 1, 0, 10, body.length + 2, 1, body.length, ...body]);
})();

/** Whether this engine runs wasm relaxed SIMD (fused multiply-add), which createAttention() then uses. */
export function hasRelaxedSimd() {
  try { return WebAssembly.validate(RELAXED_PROBE); } catch { return false; }
}

async function toModule(source, relaxed) {
  if ((source === undefined || source === null) && relaxed) {
    return WebAssembly.compile(decodeBase64((await import('../wasm/attention-relaxed-wasm.js')).default));
  }
  if (source === undefined || source === null) return WebAssembly.compile(decodeBase64(wasmBase64));
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

const shared = { default: null, relaxed: null };

/**
 * Load the WebAssembly core and return the attention API. Without options, the wasm
 * embedded in the package is compiled and instantiated once and shared by every caller.
 * options.wasm: a WebAssembly.Module, the .wasm bytes, or a Response, for hosts that fetch it.
 * options.relaxed (default true): the build with fused multiply-add (wasm relaxed SIMD) where
 * the engine has it (api.relaxed tells), else the default build. It changes the last bits of
 * long weights-free calls only, and may give other last bits on other CPUs; false gives the
 * same bits on every engine and CPU.
 */
export function createAttention(options = {}) {
  let wasm, relaxed;
  try {
    if (options === null || typeof options !== 'object' || !isPlain(options)) {
      fail(ErrorCode.INVALID_ARGUMENT, `createAttention: options must be a plain object like { wasm }; received ${describe(options)}`);
    }
    ({ wasm, relaxed } = options);
    if (relaxed !== undefined && typeof relaxed !== 'boolean') fail(ErrorCode.INVALID_ARGUMENT, `createAttention: relaxed must be true or false; received ${describe(relaxed)}`);
    // options.wasm is one build: only an explicit relaxed: true conflicts with it
    if (relaxed === true && wasm !== undefined) fail(ErrorCode.INVALID_ARGUMENT, 'createAttention: pass either wasm or relaxed, not both (the relaxed build is attnmap/attention-relaxed.wasm)');
  } catch (e) {
    return Promise.reject(asError(e, 'createAttention: reading options failed'));
  }
  if (wasm === undefined) {
    const key = relaxed !== false && hasRelaxedSimd() ? 'relaxed' : 'default';
    // the relaxed build is a file of its own (attention-relaxed-wasm.js): a host that did not
    // copy it gets the default build, and api.relaxed says so; later calls reuse that answer
    // (no second request for the missing file), unless the default build failed too
    shared[key] ??= instantiate(undefined, key === 'relaxed').catch((e) => {
      if (key === 'default') { shared.default = null; throw e; }
      return createAttention({ relaxed: false }).catch((e2) => { shared.relaxed = null; throw e2; });
    });
    return shared[key];
  }
  return instantiate(wasm, false);
}

// what the wrapper calls: the C functions of exports.js, the memory and the C runtime's start
const missingExports = (exports) => ['memory', '_initialize', ...WASM_FUNCTIONS]
  .filter((name) => (name === 'memory' ? !(exports.memory instanceof WebAssembly.Memory) : typeof exports[name] !== 'function'));

async function instantiate(source, relaxed) {
  let module, instance;
  try {
    module = await toModule(source, relaxed);
    instance = await WebAssembly.instantiate(module, { env: { emscripten_notify_memory_growth() {} } });
  } catch (e) {
    // the embedded core failing is the host's doing (a CSP without 'wasm-unsafe-eval', no
    // WebAssembly at all): the engine's own error says so; a bad options.wasm is an argument error
    if (source === undefined) throw e;
    throw asError(e, 'createAttention: options.wasm is not a usable WebAssembly module');
  }
  const missing = missingExports(instance.exports);
  if (missing.length) {
    throw new AttentionError(ErrorCode.INVALID_ARGUMENT,
      `createAttention: options.wasm is not the attnmap core (it lacks ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', …' : ''}); pass attnmap/attention.wasm`);
  }
  instance.exports._initialize();
  return makeApi(instance.exports, relaxed);
}
