// load.js - createAttention: decode the embedded build, pick the relaxed-SIMD one where the
// engine has it, and instantiate it once per build (instantiate.js), or the caller's options.wasm.
import { ErrorCode, fail, asError, describe } from './errors.js';
import { isPlain } from './args.js';
import { instantiate, decodeBase64 } from './instantiate.js';

// A module using f32x4.relaxed_madd validates only where the engine has relaxed SIMD.
const RELAXED_PROBE = (() => {
  const c = [0xfd, 12, ...new Array(16).fill(0)], body = [0, ...c, ...c, ...c, 0xfd, 0x85, 0x02, 0x0b];
  return new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 0x60, 0, 1, 0x7b, 3, 2, 1, 0, 10, body.length + 2, 1, body.length, ...body]);
})();

/** Whether this engine runs wasm relaxed SIMD (fused multiply-add), which createAttention() then uses. */
export function hasRelaxedSimd() {
  try { return WebAssembly.validate(RELAXED_PROBE); } catch { return false; }
}

// the package's own builds, compiled from their base64 modules, each imported when first used:
// the default (-O3), the relaxed-SIMD one, and the small one (-Oz: the row path alone, no tiled
// kernel, no statistics) that the element uses, whose results are the default's for calls that
// ask for the weights
const BUILDS = {
  default: () => import('../wasm/attention-wasm.js'),
  relaxed: () => import('../wasm/attention-relaxed-wasm.js'),
  small: () => import('../wasm/attention-embed-wasm.js'),
};
const embedded = (key) => async () => WebAssembly.compile(decodeBase64((await BUILDS[key]()).default));

const shared = { default: null, relaxed: null, small: null };

/**
 * The attention API on the small build, compiled once and shared (web/element: every heatmap asks
 * for the weights, which only the row path computes, so the tiled kernel would be dead weight).
 */
export function createSmallAttention() {
  shared.small ??= instantiate(undefined, false, embedded('small')).catch((e) => { shared.small = null; throw e; });
  return shared.small;
}

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
    shared[key] ??= instantiate(undefined, key === 'relaxed', embedded(key)).catch((e) => {
      if (key === 'default') { shared.default = null; throw e; }
      return createAttention({ relaxed: false }).catch((e2) => { shared.relaxed = null; throw e2; });
    });
    return shared[key];
  }
  return instantiate(wasm, false);
}
