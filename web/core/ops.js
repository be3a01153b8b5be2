// ops.js - the four operations, each a short recipe on top of memory.js: check the
// arguments (args.js), lay out one block, copy in, call C, collect the results, release.
import { ErrorCode, fail, guarded, describe, shapeStr } from './errors.js';
import {
  matrixArg, maskArg, vectorArg, optionsArg, inputsObject, headsArg, ropeOptionsArg,
  ATTENTION_INPUTS, SELF_INPUTS, MHA_INPUTS,
} from './args.js';
import {
  wasmMemory, allocate, release, writeArgs, writeAfter, writeMask, writeVector,
  checkStatus, scaleFor, readMatrices, readMatrix,
} from './memory.js';

const ATTN_OK = 0, ATTN_CAUSAL = 1, ATTN_ERR_FLAGS = 7;   // attention.h

// A fresh instance runs baseline-compiled wasm until the engine has optimised the hot
// functions, and a call in progress never switches. So the first long calls are cut into row
// ranges of growing size (same bits: rows are independent), until WARM_WORK has been done
// (m·(d_k + d_v) per row).
const WARM_WORK = 2 ** 27, FIRST_CHUNK = 2 ** 20;

export function makeApi(exports, relaxed) {
  const mem = wasmMemory(exports);
  const api = {
    attention: guarded(attentionOp(mem, exports), 'attention'),
    selfAttention: guarded(selfAttentionOp(mem, exports), 'selfAttention'),
    multiHeadAttention: guarded(multiHeadOp(mem, exports), 'multiHeadAttention'),
    rope: undefined,
    /** True when this instance runs the fused multiply-add build (relaxed SIMD, picked where the engine has it). */
    relaxed,
    /** Bytes of WebAssembly memory in use by this instance (grows, never shrinks). */
    get memoryBytes() { return exports.memory.buffer.byteLength; },
  };
  // (the one-file embed's element never rotates: scripts/build-embed.js drops this)
  FULL_API: api.rope = guarded(ropeOp(mem, exports), 'rope');
  return Object.freeze(api);
}

// ----------------------------------------------------------------------------
// rope: x (n, heads·d) -> output (n, heads·d), row r at position offset + r (c_src/attention.h)

function ropeOp(mem, exports) {
  return function rope(inputs, options) {
    inputsObject(inputs, 'rope', ['x']);
    const x = matrixArg(inputs.x, 'x'), n = x.rows;
    const { base, offset, heads } = ropeOptionsArg(options, n);
    const d = x.cols / heads;
    if (!Number.isInteger(d) || d % 2) {
      fail(ErrorCode.SHAPE_MISMATCH, `rope: each of the ${heads} heads needs an even width d (pairs (x[i], x[i + d/2])); x ${shapeStr(n, x.cols)} gives d = ${x.cols} / ${heads}`);
    }
    const block = allocate(mem, [n * x.cols, n * x.cols, d / 2], 0, () => 'rope');
    const [px, pout, ptheta] = block.offsets, args = [x], at = [px];
    try {
      writeArgs(mem, args, at);
      const status = exports.attn_rope(pout, ptheta, px, n, heads, d, base, offset);
      if (status === ATTN_ERR_FLAGS) fail(ErrorCode.INVALID_ARGUMENT, 'rope: this build of the core (attention-embed.wasm, the one-file embed\'s) has no RoPE; use the default build, attention.wasm');
      checkStatus(mem, status, 'rope', args, at);
      return { output: readMatrix(mem, pout, n, x.cols), theta: readMatrix(mem, ptheta, 1, d / 2).data };
    } finally {
      release(mem, block);
    }
  };
}

// ----------------------------------------------------------------------------
// attention: q (n, d_k), k (m, d_k), v (m, d_v)

// FULL_API (scripts/build-embed.js): the element passes { q, k, v } and no mask, rows or weights.
function attentionOp(mem, exports) {
  let warmWork = 0;   // work done so far, for the warm-up chunking
  return function attention(inputs, options) {
    FULL_API: inputsObject(inputs, 'attention', ATTENTION_INPUTS);
    const q = matrixArg(inputs.q, 'q'), k = matrixArg(inputs.k, 'k'), v = matrixArg(inputs.v, 'v');
    const opts = optionsArg(options, 'attention');
    const n = q.rows, m = k.rows, dk = q.cols, dv = v.cols;
    if (k.cols !== dk) {
      fail(ErrorCode.SHAPE_MISMATCH, `k must have shape (m, d_k) = (m, ${dk}) to match q ${shapeStr(n, dk)}; received k ${shapeStr(k.rows, k.cols)}`);
    }
    if (v.rows !== m) {
      fail(ErrorCode.SHAPE_MISMATCH, `v must have one row per key: shape (${m}, d_v) to match k ${shapeStr(m, dk)}; received v ${shapeStr(v.rows, v.cols)}`);
    }
    let mask = null;
    FULL_API: mask = maskArg(opts.mask, n, m);
    // rows: [begin, end) of the queries only (the output of the others is not computed)
    const [r0, r1] = opts.rows ?? [0, n];
    FULL_API: if (r1 <= r0 || r1 > n) fail(ErrorCode.INVALID_ARGUMENT, `rows must be [begin, end] with 0 <= begin < end <= n = ${n}; received [${r0}, ${r1}]`);
    // with weights: false the C core needs a workspace of O(m·d), never n×m
    const workFloats = opts.weights ? n * m : Math.ceil((exports.attn_workspace_size(n, m, dk, dv) >>> 0) / 4);   // size_t: unsigned
    const block = allocate(mem, [n * dk, m * dk, m * dv, n * dv, workFloats],
      mask ? n * m : 0, () => (opts.weights ? `attention weights of shape ${shapeStr(n, m)}` : 'attention'));
    const [pq, pk, pv, pout, pw] = block.offsets, args = [q, k, v], at = [pq, pk, pv];
    try {
      writeArgs(mem, args, at);
      FULL_API: if (mask) writeAfter(mem, () => writeMask(mem, mask, block.extra, n, m), args, at);
      const flags = opts.causal ? ATTN_CAUSAL : 0, scale = scaleFor(mem, opts.scale, dk);
      const pweights = opts.weights ? pw : 0, pwork = opts.weights ? 0 : pw, pmask = mask ? block.extra : 0;
      // the warm-up chunking (WARM_WORK)
      const rowWork = m * (dk + dv);
      let rows = r1 - r0, status;
      if (warmWork < WARM_WORK && rows * rowWork > FIRST_CHUNK) rows = Math.max(1, Math.floor(FIRST_CHUNK / rowWork));
      for (let begin = r0; begin < r1; begin += rows, rows *= 2) {
        const end = Math.min(r1, begin + rows);
        status = exports.attn_forward_rows(pout, pweights, pwork, pq, pk, pv, pmask, n, m, dk, dv, scale, flags, begin, end);
        if (status !== ATTN_OK) break;
        warmWork += (end - begin) * rowWork;
      }
      checkStatus(mem, status, 'attention', args, at);
      FULL_API: if (!opts.weights) return { output: readMatrix(mem, pout + r0 * dv * 4, r1 - r0, dv) };
      const [output, weights] = readMatrices(mem, block.offsets, 3, [n, dv, n, m]);
      return { output, weights };
    } finally {
      release(mem, block);
    }
  };
}

// ----------------------------------------------------------------------------
// selfAttention, the episode step by step: x (n, d_model), wq/wk (d_model, d_k), wv (d_model, d_v)

// FULL_API: the element passes { x, wq, wk, wv } and no mask.
function selfAttentionOp(mem, exports) {
  return function selfAttention(inputs, options) {
    FULL_API: inputsObject(inputs, 'selfAttention', SELF_INPUTS);
    const x = matrixArg(inputs.x, 'x'), wq = matrixArg(inputs.wq, 'wq'), wk = matrixArg(inputs.wk, 'wk'), wv = matrixArg(inputs.wv, 'wv');
    const opts = optionsArg(options, 'selfAttention');
    const n = x.rows, dm = x.cols, dk = wq.cols, dv = wv.cols;
    for (let i = 1; i < 4; i++) {
      const w = i === 1 ? wq : i === 2 ? wk : wv;
      if (w.rows !== dm) {
        fail(ErrorCode.SHAPE_MISMATCH, `${w.name} must have shape (d_model, ${w.name === 'wv' ? 'd_v' : 'd_k'}) with d_model = ${dm} (the columns of x ${shapeStr(n, dm)}); received ${w.name} ${shapeStr(w.rows, w.cols)}` +
          (w.cols === dm ? ` (a PyTorch nn.Linear weight is (out, in): pass its transpose)` : ''));
      }
    }
    if (wk.cols !== dk) {
      fail(ErrorCode.SHAPE_MISMATCH, `wk must have shape (${dm}, ${dk}) like wq, so that Q·Kᵀ is defined; received wk ${shapeStr(wk.rows, wk.cols)}`);
    }
    let mask = null;
    FULL_API: mask = maskArg(opts.mask, n, n);
    const block = allocate(mem,
      [n * dm, dm * dk, dm * dk, dm * dv, n * dk, n * dk, n * dv, n * n, n * n, n * n, n * dv],
      mask ? n * n : 0, () => `self-attention weights of shape ${shapeStr(n, n)}`);
    const o = block.offsets, args = [x, wq, wk, wv], at = [o[0], o[1], o[2], o[3]];
    try {
      writeArgs(mem, args, at);
      FULL_API: if (mask) writeAfter(mem, () => writeMask(mem, mask, block.extra, n, n), args, at);
      const status = exports.attn_self_forward(o[4], o[5], o[6], o[7], o[8], o[9], o[10], o[0], o[1], o[2], o[3],
        mask ? block.extra : 0, n, dm, dk, dv, scaleFor(mem, opts.scale, dk), opts.causal ? ATTN_CAUSAL : 0);
      checkStatus(mem, status, 'selfAttention', args, at);
      const r = readMatrices(mem, o, 4, [n, dk, n, dk, n, dv, n, n, n, n, n, n, n, dv]);
      return { q: r[0], k: r[1], v: r[2], scores: r[3], scaled: r[4], weights: r[5], output: r[6] };
    } finally {
      release(mem, block);
    }
  };
}

// ----------------------------------------------------------------------------
// multiHeadAttention (episode 06), as torch.nn.MultiheadAttention computes it:
// x (n, d_model), kv (m, d_model) optional, wq/wo (d_model, d_model), wk/wv (d_model, d_kv)
// with d_kv = kvHeads·d_head, biases optional; options.heads divides d_model.

function multiHeadOp(mem, exports) {
  const fn = 'multiHeadAttention';
  return function multiHeadAttention(inputs, options) {
    const a = mhaArgs(inputs, options, fn), { x, kv, bq, bk, bv, bo, mask, opts, n, m, dm, dh, dkv, heads, kvHeads } = a;
    const workBytes = exports.attn_mha_workspace_size(n, m, dm, heads, kvHeads) >>> 0;
    if (workBytes === 0) fail(ErrorCode.TOO_LARGE, `${fn}: the sizes (n = ${n}, m = ${m}, d_model = ${dm}) are too large`);
    const block = allocate(mem,
      [n * dm, kv ? m * dm : 0, dm * dm, dm * dkv, dm * dkv, dm * dm,
        bq ? dm : 0, bk ? dkv : 0, bv ? dkv : 0, bo ? dm : 0,
        n * dm, n * dm, opts.weights ? heads * n * m : 0, Math.ceil(workBytes / 4)],
      mask ? n * m : 0, () => (opts.weights ? `multi-head attention weights of shape (${heads}, ${n}, ${m})` : 'multi-head attention'));
    const [px, pkv, pwq, pwk, pwv, pwo, pbq, pbk, pbv, pbo, pout, pcat, pw, pwork] = block.offsets;
    try {
      const args = kv ? [x, kv, a.wq, a.wk, a.wv, a.wo] : [x, a.wq, a.wk, a.wv, a.wo], at = kv ? [px, pkv, pwq, pwk, pwv, pwo] : [px, pwq, pwk, pwv, pwo];
      writeArgs(mem, args, at);
      FULL_API: writeAfter(mem, () => {
        for (const [b, p] of [[bq, pbq], [bk, pbk], [bv, pbv], [bo, pbo]]) if (b) writeVector(mem, b, p);
        if (mask) writeMask(mem, mask, block.extra, n, m);
      }, args, at);
      const status = exports.attn_mha_forward(pout, pcat, opts.weights ? pw : 0, pwork,
        px, kv ? pkv : 0, pwq, pwk, pwv, pwo, bq ? pbq : 0, bk ? pbk : 0, bv ? pbv : 0, bo ? pbo : 0,
        mask ? block.extra : 0, n, m, dm, heads, kvHeads, scaleFor(mem, opts.scale, dh), opts.causal ? ATTN_CAUSAL : 0);
      checkStatus(mem, status, fn, args, at);
      return mhaResults(readMatrices(mem, block.offsets, 10, opts.weights ? [n, dm, n, dm, heads * n, m] : [n, dm, n, dm]), n, m, dm, dh, heads);
    } finally {
      release(mem, block);
    }
  };
}

// The checked arguments of multiHeadAttention, with the sizes they imply. (The element passes
// { x, wq, wk, wv, wo } and { causal, scale?, heads }: no kv, biases, mask or kvHeads.)
function mhaArgs(inputs, options, fn) {
  FULL_API: checkMhaInputs(inputs, fn);
  const [x, wq, wk, wv, wo] = ['x', 'wq', 'wk', 'wv', 'wo'].map((name) => matrixArg(inputs[name], name));
  let kv = null;
  FULL_API: if (inputs.kv !== undefined && inputs.kv !== null) kv = matrixArg(inputs.kv, 'kv');
  FULL_API: if (options === undefined || options === null) {
    fail(ErrorCode.INVALID_ARGUMENT, `${fn}: options.heads is missing: pass { heads }, the number of heads (a positive integer dividing d_model)`);
  }
  const opts = optionsArg(options, fn);
  FULL_API: if (options.heads === undefined) fail(ErrorCode.INVALID_ARGUMENT, `${fn}: options.heads is missing: the number of heads, a positive integer dividing d_model`);
  const heads = headsArg(options.heads, 'heads');
  const kvHeads = options.kvHeads === undefined ? heads : headsArg(options.kvHeads, 'kvHeads');
  const n = x.rows, dm = x.cols, m = kv ? kv.rows : n;
  if (dm % heads !== 0) {
    fail(ErrorCode.SHAPE_MISMATCH, `heads = ${heads} does not divide d_model = ${dm} (the columns of x ${shapeStr(n, dm)}): each head takes d_model / heads columns`);
  }
  FULL_API: if (heads % kvHeads !== 0) {
    fail(ErrorCode.SHAPE_MISMATCH, `kvHeads = ${kvHeads} does not divide heads = ${heads}: each kv head serves heads / kvHeads query heads`);
  }
  const dh = dm / heads, dkv = kvHeads * dh;
  FULL_API: if (kv && kv.cols !== dm) {
    fail(ErrorCode.SHAPE_MISMATCH, `kv must have shape (m, d_model) = (m, ${dm}) like x ${shapeStr(n, dm)}; received kv ${shapeStr(kv.rows, kv.cols)}`);
  }
  mhaWeightShapes(wq, wk, wv, wo, n, dm, dh, dkv, heads, kvHeads);
  // all null in the one-file embed, which drops the FULL_API block
  const optional = { bq: null, bk: null, bv: null, bo: null, mask: null };
  FULL_API: {
    optional.bq = vectorArg(inputs.bq, 'bq', dm, 'd_model, one per column of wq');
    optional.bk = vectorArg(inputs.bk, 'bk', dkv, 'one per column of wk');
    optional.bv = vectorArg(inputs.bv, 'bv', dkv, 'one per column of wv');
    optional.bo = vectorArg(inputs.bo, 'bo', dm, 'd_model, one per column of wo');
    optional.mask = maskArg(opts.mask, n, m);
  }
  return { x, kv, wq, wk, wv, wo, ...optional, opts, n, m, dm, dh, dkv, heads, kvHeads };
}

// an object whose own keys are all inputs of multiHeadAttention
function checkMhaInputs(inputs, fn) {
  if (inputs === null || typeof inputs !== 'object' || Array.isArray(inputs)) {
    fail(ErrorCode.INVALID_ARGUMENT, `${fn}: the first argument must be an object { x, wq, wk, wv, wo, bq?, bk?, bv?, bo?, kv? }; received ${describe(inputs)}`);
  }
  for (const key of Object.keys(inputs)) {
    if (!MHA_INPUTS.includes(key)) fail(ErrorCode.INVALID_ARGUMENT, `${fn}: unknown input "${key}"; expected ${MHA_INPUTS.join(', ')}`);
  }
}

// wq, wo (d_model, d_model) and wk, wv (d_model, d_kv), with a hint for PyTorch's layouts
function mhaWeightShapes(wq, wk, wv, wo, n, dm, dh, dkv, heads, kvHeads) {
  const inProjHint = (w) => (w.rows === 3 * dm && w.cols === dm
    ? ` (nn.MultiheadAttention's in_proj_weight is (3·E, E): pass in_proj_weight[:E].T as wq, [E:2E].T as wk, [2E:].T as wv)` : '');
  for (const w of [wq, wo]) {
    if (w.rows !== dm || w.cols !== dm) {
      fail(ErrorCode.SHAPE_MISMATCH, `${w.name} must have shape (d_model, d_model) = ${shapeStr(dm, dm)} with d_model = ${dm} (the columns of x ${shapeStr(n, dm)}); received ${w.name} ${shapeStr(w.rows, w.cols)}` + inProjHint(w));
    }
  }
  for (const w of [wk, wv]) {
    if (w.rows !== dm || w.cols !== dkv) {
      const expected = kvHeads === heads ? `(d_model, d_model) = ${shapeStr(dm, dm)}` : `(d_model, kvHeads·d_head) = ${shapeStr(dm, dkv)}`;
      const gqaHint = kvHeads === heads && w.rows === dm && w.cols < dm && w.cols % dh === 0 && heads % (w.cols / dh) === 0
        ? ` (for grouped-query attention pass { kvHeads: ${w.cols / dh} })` : '';
      fail(ErrorCode.SHAPE_MISMATCH, `${w.name} must have shape ${expected} with d_model = ${dm}, heads = ${heads}, kvHeads = ${kvHeads}; received ${w.name} ${shapeStr(w.rows, w.cols)}` + (gqaHint || inProjHint(w)));
    }
  }
}

// The results of multiHeadAttention from the copied-out [output, concat, all weights?].
function mhaResults([output, concat, all], n, m, dm, dh, heads) {
  // head h is columns [h·d_head, (h+1)·d_head) of concat: copied out, one matrix each
  const headOutputs = new Array(heads);
  for (let h = 0; h < heads; h++) {
    const data = new Float32Array(n * dh);
    for (let i = 0; i < n; i++) data.set(concat.data.subarray(i * dm + h * dh, i * dm + (h + 1) * dh), i * dh);
    headOutputs[h] = { data, shape: [n, dh] };
  }
  if (!all) return { output, heads: headOutputs, concat };
  const weights = new Array(heads);
  for (let h = 0; h < heads; h++) weights[h] = { data: all.data.subarray(h * n * m, (h + 1) * n * m), shape: [n, m] };
  return { output, weights, heads: headOutputs, concat };
}
