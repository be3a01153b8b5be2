// table.js - how the families whose C takes a table of typed tensors (c_src/tensor.h: llama.c,
// bert.c) get their weights into wasm memory: each tensor in a block of its own (a matrix in the
// file's dtype, BF16 staying 2 bytes, a GGUF file's quantized matrix staying in ggml's blocks; a
// vector as float32), checked finite in C (a quantized matrix: its blocks' scales), a 2-byte
// matrix put into panels of 8 rows, then the table of { pointer, dtype } in C's order, checked by
// the family's C check. One module of web/model/families/, shared.
//
//   uploadTable(rt, model, fill, tensors, spec)   a generator (runtime.js drives it)
//   spec: {
//     globals   the kinds before the layers, in C's order (ATTN_*_GLOBALS)
//     layer     each layer's kinds, in C's order (ATTN_*_PER_LAYER)
//     matrices  the kinds kept in the file's dtype (the rest become float32)
//     made      { kind: function* (rt, config, fill, tensors) -> { at, dtype, count, bytes } } slots
//               the family computes (LLaMA's RoPE frequencies) rather than reads; a generator that
//               may yield fills of tensors it computes from (a GGUF file's rope_freqs.weight)
//     check     the C function that checks the table (attn_llama_check, attn_bert_check)
//   }
// An absent optional tensor leaves its slot NULL. Failures: TOO_LARGE (over wasm32's 4 GiB, before
// anything is allocated), NON_FINITE (named, with its index), INVALID_MODEL (the C check).
import { ErrorCode, fail, formatBytes } from '../../core/errors.js';
import { reserve, cString } from '../../core/memory.js';

// c_src/tensor.h's dtype codes for F32, BF16, F16; a GGUF file's block-quantized matrix carries its
// own in info.block { size, bytes, code } (load/gguf-weights.js: ggml's type id shifted left by 8)
export const DTYPES = Object.freeze({ F32: 0, BF16: 1, F16: 2 });
const codeOf = (info, dtype) => (dtype === info.dtype && info.block ? info.block.code : DTYPES[dtype]);
const BYTES = { F32: 4, BF16: 2, F16: 2 };
const ATTN_OK = 0, WASM32_BYTES = 2 ** 32;

// the bytes a tensor takes as it is kept: a vector as float32; a matrix (rows, cols) in its dtype,
// for a quantized one rows × cols / block blocks of ggml's bytes
function keptBytes(entry, matrix) {
  const dtype = entry.info.dtype, [rows, cols] = entry.shape;
  if (matrix && entry.info.block) return rows * (cols / entry.info.block.size) * entry.info.block.bytes;
  return entry.shape.reduce((a, b) => a * b, 1) * (matrix ? BYTES[dtype] ?? 4 : 4);
}

export function* uploadTable(rt, model, fill, tensors, spec) {
  const { mem, exports } = rt, c = model.config, blocks = [];
  const slots = spec.globals.length + c.n_layer * spec.layer.length;
  fits(tensors, slots, spec);
  const table = reserve(mem, slots * 8, () => 'the tensor table');
  const params = { pointer: table, count: 0, bytes: 0, free: () => { for (const b of blocks) mem.free(b); mem.free(table); } };
  const entries = new Int32Array(slots * 2);   // written into the table at the end (memory may grow meanwhile)
  try {
    for (let i = 0; i < slots; i++) {
      const [kind, layer] = slotOf(i, spec);
      const made = spec.made?.[kind] ? yield* spec.made[kind](rt, c, fill, tensors) : yield* tensor(rt, fill, tensors, kind, layer, spec);
      if (!made) continue;
      blocks.push(made.at);
      entries.set([made.at, made.dtype], 2 * i);
      params.count += made.count;
      params.bytes += made.bytes;
    }
    new Int32Array(mem.memory.buffer, table, slots * 2).set(entries);
    const status = exports[spec.check](model.cfg, table);
    if (status !== ATTN_OK) fail(ErrorCode.INVALID_MODEL, `upload: ${cString(mem, exports.attn_status_string(status))}`);
  } catch (e) {
    params.free();
    throw e;
  }
  return params;
}

// the kind and layer of slot i of C's table
function slotOf(i, { globals, layer }) {
  const g = globals.length;
  return i < g ? [globals[i], -1] : [layer[(i - g) % layer.length], Math.floor((i - g) / layer.length)];
}

// TOO_LARGE before anything is allocated when the weights, as they will be kept (matrices in the
// file's dtype, vectors as float32), cannot fit in wasm32's 4 GiB: an F32 Llama-3.2-1B (4.9 GB)
// would otherwise fill memory for a minute and then fail OUT_OF_MEMORY
function fits(tensors, slots, spec) {
  let bytes = 0;
  for (let i = 0; i < slots; i++) {
    const [kind, layer] = slotOf(i, spec), entry = tensors?.get(kind, layer);
    if (entry) bytes += keptBytes(entry, spec.matrices.has(kind));
  }
  if (bytes > WASM32_BYTES) {
    fail(ErrorCode.TOO_LARGE, `upload: the weights take ${formatBytes(bytes)} in WebAssembly memory as this checkpoint stores them, and wasm32 can address at most 4 GiB: use a BF16 or F16 copy of the checkpoint (half the bytes), or a quantized GGUF file (Q8_0 about a quarter of F32's bytes, Q4_K a seventh)`);
  }
}

// one tensor's block, filled; null for one the checkpoint does not have (an absent bias)
function* tensor(rt, fill, tensors, kind, layer, spec) {
  const entry = tensors?.get(kind, layer);
  if (!entry) return null;
  const { mem, exports } = rt, count = entry.shape.reduce((a, b) => a * b, 1), matrix = spec.matrices.has(kind);
  const dtype = matrix ? entry.info.dtype : 'F32', bytes = keptBytes(entry, matrix), quantized = matrix && entry.info.block !== undefined;
  if (quantized) buildReads(exports, entry);
  const at = reserve(mem, bytes, () => `tensor ${entry.name} (${bytes} bytes)`);
  try {
    const dest = dtype === entry.info.dtype && matrix ? new Uint8Array(mem.memory.buffer, at, bytes) : new Float32Array(mem.memory.buffer, at, count);
    yield fill(kind, layer, dest, entry.shape);
    const code = codeOf(entry.info, dtype), bad = exports.attn_first_non_finite(at, code, count) >>> 0;
    if (bad < count) {
      fail(ErrorCode.NON_FINITE, quantized
        ? `upload: tensor ${entry.name} (${dtype}) has a block whose scale is NaN or ±Infinity (the block of values from index ${bad}: row ${Math.floor(bad / entry.shape[1])}): parameters must be finite`
        : `upload: tensor ${entry.name} holds NaN or ±Infinity at index ${bad}: parameters must be finite`);
    }
    return { at, dtype: BYTES[dtype] === 2 ? panels(rt, at, code, entry.shape) : code, count, bytes };
  } catch (e) {
    mem.free(at);
    throw e;
  }
}

// a quantized matrix (rows, cols) of a type the C reads in the layout the file has: its blocks
// of C's size (attn_dtype_block, 0 for a type this WebAssembly build does not have), its rows of
// C's bytes (attn_row_bytes)
function buildReads(exports, entry) {
  const { name, info: { dtype, block: t }, shape: [, cols] } = entry;
  const block = exports.attn_dtype_block(t.code), row = exports.attn_row_bytes(t.code, cols) >>> 0;
  if (block !== t.size || row !== cols / t.size * t.bytes) {
    fail(ErrorCode.INVALID_MODEL, `upload: tensor ${name} is ${dtype} (blocks of ${t.size} values in ${t.bytes} bytes), which this WebAssembly build reads as blocks of ${block} values, rows of ${row} bytes: a build without ${dtype}`);
  }
}

// a 2-byte matrix (rows, cols) put into panels of 8 rows (c_src/tensor.h, attn_panel8: a decoding
// step reads 8 rows as one stream; the same sums): its dtype with the panel flag, or as it was
function panels(rt, at, dtype, [rows, cols]) {
  const { mem, exports } = rt;
  if (rows < 8 || cols % 4 !== 0) return dtype;
  const scratch = reserve(mem, 8 * cols * 2, () => 'packing a matrix into panels');
  try {
    return exports.attn_panel8(at, dtype, rows, cols, scratch);
  } finally {
    mem.free(scratch);
  }
}
