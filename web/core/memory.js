// memory.js - the one layer between the operations and wasm memory, shared by all three:
//
//   const block = allocate(mem, [floats, ...], maskBytes, whatFor);   // one block, laid out
//   try {
//     writeArgs(mem, args, at);                                  // copy the checked arguments in
//     checkStatus(mem, exports.attn_...(...), fn, args, at);     // call C; its status as an error
//     return readMatrices(mem, block.offsets, first, dims);      // copy the results out (the slab)
//   } finally {
//     release(mem, block);
//   }
//
// The wrapper owns wasm memory: nothing returned is a view into it. A getter of an argument may
// call the API again while its call is copying in (busy): the inner call gets a block of its own.
// mem is one instance's state (wasmMemory); the functions take it first, as C functions take
// their struct. A getter's nested call may grow memory, which detaches the views mem.f32 and
// mem.u8 (views() then replaces them): the copy loops keep a view in a local, for speed, and
// check after each store that it was not detached (see restore).
import { ErrorCode, fail, describe, formatBytes, changed, badValue } from './errors.js';
import { exactView, isRow } from './args.js';

// a module's own const: an imported binding is loaded again at every use in the copy loops
const FLT_MAX = 3.4028234663852886e38;
// C statuses (attention.h)
const ATTN_OK = 0, ATTN_ERR_NON_FINITE = 4, ATTN_ERR_OVERFLOW = 5, ATTN_ERR_TOO_LARGE = 6;
const MAX_BYTES = 0xffff0000;        // wasm32 addresses (4 GiB) less a little for the heap itself

// One scratch block is kept between calls (small calls then cost no malloc); a call that
// needs more than KEEP_BYTES gets its own block, freed when it returns.
const KEEP_BYTES = 1 << 20;

// Results leave wasm memory as copies, never as views of it. A fresh ArrayBuffer costs V8
// about 1 µs, more than a tutorial-sized call's C part, so the results of small calls (up to
// POOL_MAX floats, 1 KiB, from the first result's start to the last one's end) are copied
// into a shared 8 KiB ArrayBuffer (the slab), as Node's Buffer pool does; larger ones get an
// ArrayBuffer of their own. A slab whose buffer was transferred away (length 0) is replaced.
const SLAB_FLOATS = 2048, POOL_MAX = 256;

/** One instance's memory state: the views, the scratch block, the slab, the busy flag. */
export function wasmMemory(exports) {
  const { memory } = exports, slab = new Float32Array(0);
  return {
    // wasm's i32 comes back signed: an address at or above 2 GiB would be negative, so malloc's
    // result is read as unsigned (0 still means failure); free takes either
    exports, memory, malloc: (bytes) => exports.malloc(bytes) >>> 0, free: exports.free,
    f32: new Float32Array(memory.buffer), u8: new Uint8Array(memory.buffer),
    scratch: 0, scratchBytes: 0,
    busy: false,   // a call is writing into wasm memory
    // slabBuffer is kept beside slab because the .buffer getter is a call into the engine
    slab, slabBuffer: slab.buffer, slabPos: 0,
    // 1/√d_k as the C core computes it in float, remembered for the last d_k
    lastDk: 0, lastScale: 0,
  };
}

// growth detaches old views: refresh after anything that can grow memory (malloc)
function views(mem) {
  if (mem.f32.buffer !== mem.memory.buffer) { mem.f32 = new Float32Array(mem.memory.buffer); mem.u8 = new Uint8Array(mem.memory.buffer); }
}

// A store into a view that was detached (a getter's nested call grew memory: the store was
// dropped, the length is 0) made again into the fresh view, which is returned.
function restore(mem, p, x) {
  views(mem);
  mem.f32[p] = x;
  return mem.f32;
}

function restoreByte(mem, p, b) {
  views(mem);
  mem.u8[p] = b;
  return mem.u8;
}

// ----------------------------------------------------------------------------
// the block

// Lay out buffers of the given float counts in one block, 16-byte aligned, and mark the
// memory busy until release(mem, block). Returns { offsets (bytes), extra, base, own, outer }
// or throws TOO_LARGE / OUT_OF_MEMORY; whatFor() names the block in those errors (a function:
// no string is built per call). The offsets are written over counts (a fresh array literal at
// every call site).
export function allocate(mem, counts, extraBytes, whatFor) {
  const offsets = counts;
  let total = 0;
  for (let i = 0; i < counts.length; i++) { const c = counts[i]; offsets[i] = total; total += Math.ceil(c / 4) * 16; }
  const extraAt = total;
  total += Math.ceil(extraBytes / 16) * 16;
  if (total > MAX_BYTES) tooLarge(total, whatFor());
  // no allocation: memory cannot have grown, the views are current
  if (!mem.busy && total <= mem.scratchBytes) return claim(mem, offsets, mem.scratch, extraAt, false);
  let base, own = true;
  if (mem.busy) {
    base = mem.malloc(total);   // called from inside another call (a getter): the scratch block holds that call's data
  } else if (total <= KEEP_BYTES) {
    base = renewScratch(mem, total);
    own = false;
  } else {
    base = mem.malloc(total);
  }
  if (base === 0) fail(ErrorCode.OUT_OF_MEMORY, `${whatFor()} needs ${formatBytes(total)} of WebAssembly memory and the allocation failed`);
  views(mem);
  return claim(mem, offsets, base, extraAt, own);
}

function tooLarge(total, what) {
  fail(ErrorCode.TOO_LARGE, `${what} needs ${formatBytes(total)} of WebAssembly memory; wasm32 can address at most 4 GiB` +
    (what.includes('weights') ? ' (pass { weights: false } to skip the n×m weights)' : ''));
}

// a larger scratch block (twice what is needed, at most KEEP_BYTES); 0 when malloc failed
function renewScratch(mem, total) {
  if (mem.scratch) mem.free(mem.scratch);
  mem.scratch = 0; mem.scratchBytes = 0;
  const size = Math.min(KEEP_BYTES, Math.max(total * 2, 4096));
  const base = mem.malloc(size);
  if (base !== 0) { mem.scratch = base; mem.scratchBytes = size; }
  return base;
}

function claim(mem, offsets, base, extraAt, own) {
  for (let i = 0; i < offsets.length; i++) offsets[i] += base;
  const block = { offsets, extra: base + extraAt, base, own, outer: mem.busy };
  mem.busy = true;
  return block;
}

/**
 * A block that outlives the calls (a model's parameters, its KV cache: web/model/runtime.js),
 * malloc'ed on its own and the views refreshed; freed by the owner with mem.free(base).
 * Throws TOO_LARGE or OUT_OF_MEMORY like allocate; whatFor() names the block.
 */
export function reserve(mem, bytes, whatFor) {
  if (bytes > MAX_BYTES) tooLarge(bytes, whatFor());
  const base = mem.malloc(Math.max(16, Math.ceil(bytes / 16) * 16));
  if (base === 0) fail(ErrorCode.OUT_OF_MEMORY, `${whatFor()} needs ${formatBytes(bytes)} of WebAssembly memory and the allocation failed`);
  views(mem);
  return base;
}

/** The end of a call (in its finally): the memory as the outer call left it. */
export function release(mem, block) {
  mem.busy = block.outer;
  if (block.own) mem.free(block.base);
}

// ----------------------------------------------------------------------------
// copy in

// Copy the matrix arguments in order. A Float32Array is copied without a JS pass (see
// writeMatrix): when a later argument fails its check, the earlier copies are scanned first,
// so that the error names the first bad value in argument order, as the C core would.
export function writeArgs(mem, args, at) {
  for (let i = 0; i < args.length; i++) {
    try {
      writeMatrix(mem, args[i], at[i]);
    } catch (e) {
      findNonFinite(mem, args.slice(0, i), at.slice(0, i));
      throw e;
    }
  }
}

// the mask (or biases) after the matrices: the same order of errors
export function writeAfter(mem, fn, args, at) {
  try { fn(); } catch (e) { findNonFinite(mem, args, at); throw e; }
}

// Copy a checked matrix argument into wasm memory at byte offset `at`.
function writeMatrix(mem, arg, at) {
  const { name, rows, cols, nested, src } = arg;
  let p = at >>> 2;
  const count = rows * cols;
  if (!nested) {
    // exactly the checked rows·cols values (a getter may have resized or detached data since)
    if (arg.kind === 'Float32Array' || arg.kind === 'Float64Array') {
      const view = exactView(src, arg.kind === 'Float32Array' ? Float32Array : Float64Array, count);
      if (view === null) changed(name);
      // float32 values are copied as is: NaN or ±inf among them makes the C core answer
      // NON_FINITE, and findNonFinite then names the value
      if (arg.kind === 'Float64Array') {
        for (let i = 0; i < count; i++) {
          const x = view[i];
          if (!(Math.abs(x) <= FLT_MAX)) badValue(name, x, Math.floor(i / cols), i % cols);
        }
      }
      mem.f32.set(view, p);
      return;
    }
    // an array or an array-like (a Proxy): each value read once, so an index getter cannot
    // swap a checked number afterwards, and never past the checked count
    if (src.length !== count) changed(name);
    let f32 = mem.f32;
    for (let i = 0; i < count; i++) {
      const x = src[i];
      if (typeof x !== 'number' || !(Math.abs(x) <= FLT_MAX)) badValue(name, x, Math.floor(i / cols), i % cols);
      f32[p + i] = x;
      if (f32.length === 0) f32 = restore(mem, p + i, x);
    }
    return;
  }
  let f32 = mem.f32;
  for (let i = 0; i < rows; i++) {
    const row = src[i];
    if (!isRow(row) || row.length !== cols) changed(name);
    for (let j = 0; j < cols; j++, p++) {
      const x = row[j];
      if (typeof x !== 'number' || !(Math.abs(x) <= FLT_MAX)) badValue(name, x, i, j);
      f32[p] = x;
      if (f32.length === 0) f32 = restore(mem, p, x);
    }
  }
}

/** Copy a checked vector argument into wasm memory at byte offset `at`. */
export function writeVector(mem, arg, at) {
  const { name, src, length } = arg;
  if (src.length !== length) changed(name);
  const p = at >>> 2;
  let f32 = mem.f32;
  for (let i = 0; i < length; i++) {
    const x = src[i];   // read once (see writeMatrix)
    if (typeof x !== 'number' || !(Math.abs(x) <= FLT_MAX)) badValue(name, x, i);
    f32[p + i] = x;
    if (f32.length === 0) f32 = restore(mem, p + i, x);
  }
}

/** Copy a checked mask (n, m) into wasm memory at byte offset `at`, one byte per entry. */
export function writeMask(mem, mask, at, n, m) {
  if (!mask.nested) {
    if (mask.kind === 'Uint8Array') {
      const view = exactView(mask.src, Uint8Array, n * m);
      if (view === null) changed('mask');
      mem.u8.set(view, at);
      return;
    }
    const src = mask.src;   // an array-like (a Proxy): read once each, never past n·m
    if (src.length !== n * m) changed('mask');
    let u8 = mem.u8;
    for (let i = 0; i < n * m; i++) {
      const b = src[i] ? 1 : 0;
      u8[at + i] = b;
      if (u8.length === 0) u8 = restoreByte(mem, at + i, b);
    }
    return;
  }
  let p = at, u8 = mem.u8;
  for (let i = 0; i < n; i++) {
    const row = mask.src[i];
    if (!Array.isArray(row) || row.length !== m) changed('mask');
    for (let j = 0; j < m; j++, p++) {
      const b = row[j];
      if (typeof b !== 'boolean') fail(ErrorCode.INVALID_ARGUMENT, `mask[${i}][${j}] must be true or false (true = may attend); received ${describe(b)}`);
      u8[p] = b ? 1 : 0;
      if (u8.length === 0) u8 = restoreByte(mem, p, b ? 1 : 0);
    }
  }
}

// ----------------------------------------------------------------------------
// the C call

// A C status as an error. After NON_FINITE the value is named: the first NaN or ±inf in the
// copies the C core read (args: checked matrix arguments, at: their byte offsets).
export function checkStatus(mem, status, fn, args, at) {
  if (status === ATTN_OK) return;
  if (status === ATTN_ERR_NON_FINITE) {
    findNonFinite(mem, args, at);
    fail(ErrorCode.NON_FINITE, `${fn}: an input holds NaN or Infinity`);
  }
  if (status === ATTN_ERR_OVERFLOW) {
    fail(ErrorCode.NON_FINITE, `${fn}: the result overflows float32 (the inputs are finite but too large in magnitude)`);
  }
  if (status === ATTN_ERR_TOO_LARGE) fail(ErrorCode.TOO_LARGE, `${fn}: the sizes are too large`);
  // the JS checks should make every other status impossible
  fail(ErrorCode.INVALID_ARGUMENT, `${fn}: ${cString(mem, mem.exports.attn_status_string(status))}`);
}

function findNonFinite(mem, args, at) {
  views(mem);
  const f32 = mem.f32;
  for (let a = 0; a < args.length; a++) {
    const { name, rows, cols } = args[a], p = at[a] >>> 2;
    for (let i = 0; i < rows * cols; i++) {
      const x = f32[p + i];
      if (!Number.isFinite(x)) badValue(name, x, Math.floor(i / cols), i % cols);
    }
  }
}

/** The NUL-terminated UTF-8 string at ptr in wasm memory (a C status message). */
export function cString(mem, ptr) {
  ptr >>>= 0;
  views(mem);
  const u8 = mem.u8;
  let end = ptr;
  while (u8[end] !== 0) end++;
  return new TextDecoder().decode(u8.subarray(ptr, end));
}

/** The scale option, or 1/√d_k as the C core computes it in float. */
export function scaleFor(mem, scale, dk) {
  if (scale !== undefined) return scale;
  if (dk !== mem.lastDk) { mem.lastScale = mem.exports.attn_default_scale(dk); mem.lastDk = dk; }
  return mem.lastScale;
}

// ----------------------------------------------------------------------------
// copy out

// Floats [start, end) of wasm memory copied into a fresh ArrayBuffer or the slab; returns
// { buffer, at } (at: the copy's byte offset in buffer).
function copyOut(mem, start, end) {
  const count = end - start;
  if (count > POOL_MAX) return { buffer: mem.f32.slice(start, end).buffer, at: 0 };
  if (mem.slabPos + count > mem.slab.length) {   // full, or detached (length 0)
    mem.slab = new Float32Array(SLAB_FLOATS); mem.slabBuffer = mem.slab.buffer; mem.slabPos = 0;
  }
  mem.slab.set(mem.f32.subarray(start, end), mem.slabPos);
  const at = 4 * mem.slabPos;
  mem.slabPos = (mem.slabPos + count + 3) & ~3;   // the next copy 16-byte aligned
  return { buffer: mem.slabBuffer, at };
}

// Copy the matrices laid out from byte offsets[first] to offsets[last] + rows·cols floats
// out of wasm memory in one copy; each result is a view of that copy.
// dims = [rows0, cols0, rows1, cols1, ...].
export function readMatrices(mem, offsets, first, dims) {
  const count = dims.length / 2, start = offsets[first] >>> 2;
  const end = (offsets[first + count - 1] >>> 2) + dims[dims.length - 2] * dims[dims.length - 1];
  const { buffer, at } = copyOut(mem, start, end), base = at - 4 * start;
  const out = new Array(count);
  for (let i = 0; i < count; i++) {
    const rows = dims[2 * i], cols = dims[2 * i + 1];
    out[i] = { data: new Float32Array(buffer, base + offsets[first + i], rows * cols), shape: [rows, cols] };
  }
  return out;
}

/** One matrix (rows, cols) at byte offset `at`, copied out. */
export function readMatrix(mem, at, rows, cols) {
  const { buffer, at: offset } = copyOut(mem, at >>> 2, (at >>> 2) + rows * cols);
  return { data: new Float32Array(buffer, offset, rows * cols), shape: [rows, cols] };
}
