// gguf-writer.js - writes small GGUF files for the tests (not a test file itself), laid out as
// ggml's gguf_write_to_buf does: header, metadata, tensor infos, padding to the alignment, each
// tensor's bytes padded to the alignment. It also says where each count, length and offset went,
// so that a test can make a file lie about one of them.
//
//   writeGguf({ version = 3, metadata = [], tensors = [], alignment = null, padEnd = true })
//     metadata: [[key, value]], value made by gv.u8(1), gv.str('x'), gv.arr('string', ['a']),
//       gv.arr('array', [gv.arr('u8', [1])]) (nested) …; alignment: written as general.alignment
//       (u32) first when given
//     tensors: [{ name, ne (ggml order) | shape (PyTorch order), type: 'Q8_0' | id, data?: Uint8Array }]
//       data defaults to seeded bytes of the type's size
//     -> { bytes: Uint8Array, at: { version, tensorCount, keyCount, keys: Map<key, { length, type,
//          value, count? }>, tensors: Map<name, { length, nDims, dims, type, offset }> }, dataOffset }
import { GGML_TYPES } from '../web/model/load/gguf.js';

const VALUE_TYPES = ['u8', 'i8', 'u16', 'i16', 'u32', 'i32', 'f32', 'bool', 'string', 'array', 'u64', 'i64', 'f64'];

/** Typed metadata values. */
export const gv = Object.fromEntries(VALUE_TYPES.filter((t) => t !== 'array').map((t) => [t, (value) => ({ type: t, value })]));
gv.str = gv.string;
gv.arr = (itemType, value) => ({ type: 'array', itemType, value });

class Out {
  constructor() { this.buf = new Uint8Array(1024); this.view = new DataView(this.buf.buffer); this.n = 0; }
  room(k) {
    if (this.n + k <= this.buf.length) return;
    const b = new Uint8Array(Math.max(this.buf.length * 2, this.n + k));
    b.set(this.buf);
    this.buf = b;
    this.view = new DataView(b.buffer);
  }
  put(setter, k, v) { this.room(k); this.view[setter](this.n, v, true); this.n += k; }
  u8(v) { this.put('setUint8', 1, v); }
  u32(v) { this.put('setUint32', 4, v); }
  u64(v) { this.put('setBigUint64', 8, BigInt(v)); }
  raw(b) { this.room(b.length); this.buf.set(b, this.n); this.n += b.length; }
  str(s) { const b = new TextEncoder().encode(s); this.u64(b.length); this.raw(b); }
  pad(a) { while (this.n % a !== 0) this.u8(0); }
  bytes() { return this.buf.slice(0, this.n); }
}

function scalar(out, type, v) {
  switch (type) {
    case 'u8': return out.put('setUint8', 1, v);
    case 'i8': return out.put('setInt8', 1, v);
    case 'u16': return out.put('setUint16', 2, v);
    case 'i16': return out.put('setInt16', 2, v);
    case 'u32': return out.put('setUint32', 4, v);
    case 'i32': return out.put('setInt32', 4, v);
    case 'f32': return out.put('setFloat32', 4, v);
    case 'bool': return out.u8(v ? 1 : 0);
    case 'string': return out.str(v);
    case 'u64': return out.put('setBigUint64', 8, BigInt(v));
    case 'i64': return out.put('setBigInt64', 8, BigInt(v));
    case 'f64': return out.put('setFloat64', 8, v);
    default: throw new Error(`gguf-writer: no value type ${type}`);
  }
}

// a value's body (after its type); returns where an array's count went
function body(out, value) {
  if (value.type !== 'array') return scalar(out, value.type, value.value);
  out.u32(VALUE_TYPES.indexOf(value.itemType));
  const count = out.n;
  out.u64(value.value.length);
  for (const item of value.value) {
    if (value.itemType === 'array') body(out, item);
    else scalar(out, value.itemType, item);
  }
  return count;
}

const typeOf = (t) => (typeof t === 'number' ? GGML_TYPES[t] : GGML_TYPES.find((x) => x.name === t));

/** Bytes of a tensor of ggml type `type` and dimensions ne (ggml's order). */
export function tensorBytes(type, ne) {
  const t = typeOf(type);
  return ne.reduce((a, d) => a * d, 1) / t.blockSize * t.blockBytes;
}

// deterministic filler bytes
function filler(n, seed) {
  const b = new Uint8Array(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; b[i] = x & 0xff; }
  return b;
}

export function writeGguf({ version = 3, metadata = [], tensors = [], alignment = null, padEnd = true } = {}) {
  const out = new Out(), at = { keys: new Map(), tensors: new Map() };
  const align = alignment ?? 32;
  const entries = alignment === null ? metadata : [['general.alignment', gv.u32(alignment)], ...metadata];
  out.raw(new TextEncoder().encode('GGUF'));
  at.version = out.n; out.u32(version);
  at.tensorCount = out.n; out.u64(tensors.length);
  at.keyCount = out.n; out.u64(entries.length);
  for (const [key, value] of entries) {
    const where = { length: out.n };
    out.str(key);
    where.type = out.n;
    out.u32(VALUE_TYPES.indexOf(value.type));
    where.value = out.n;
    const count = body(out, value);
    if (value.type === 'array') where.count = count;
    at.keys.set(key, where);
  }
  const datas = [];
  let offset = 0;
  tensors.forEach((t, i) => {
    const ne = t.ne ?? [...t.shape].reverse();
    const data = t.data ?? filler(tensorBytes(t.type, ne), i + 1);
    const where = { length: out.n };
    out.str(t.name);
    where.nDims = out.n; out.u32(ne.length);
    where.dims = out.n; for (const d of ne) out.u64(d);
    where.type = out.n; out.u32(typeOf(t.type)?.id ?? t.type);
    where.offset = out.n; out.u64(offset);
    at.tensors.set(t.name, where);
    datas.push(data);
    offset += Math.ceil(data.length / align) * align;
  });
  if (tensors.length) out.pad(align);
  const dataOffset = out.n;
  datas.forEach((d, i) => { out.raw(d); if (padEnd || i < datas.length - 1) out.pad(align); });
  return { bytes: out.bytes(), at, dataOffset };
}

// ----------------------------------------------------------------------------
// files that lie

/** A small valid file with one of each kind of length and count, for the lies below. */
export function smallFile() {
  return writeGguf({
    metadata: [
      ['general.architecture', gv.str('qwen2')],
      ['general.name', gv.str('tiny')],
      ['tokenizer.ggml.tokens', gv.arr('string', ['a', 'b', 'c'])],
      ['tokenizer.ggml.scores', gv.arr('f32', [0, -1, -2])],
      ['flags', gv.arr('bool', [true, false])],
      ['nested', gv.arr('array', [gv.arr('u8', [1, 2]), gv.arr('u8', [3])])],
    ],
    tensors: [
      { name: 'token_embd.weight', ne: [32, 3], type: 'Q8_0' },      // 3 blocks of 34 bytes: padded to 128
      { name: 'output_norm.weight', ne: [32], type: 'F32' },        // 128 bytes: the file ends with it
    ],
  });
}

const LIE = 1n << 60n;

/**
 * Small files, each with one count, length or offset set to a lie (2^60 or a dims product past
 * 2^53): [{ name, bytes }]. Each must be refused (INVALID_MODEL) without allocating what it claims.
 */
export function lyingFiles() {
  const set = (patch) => {
    const { bytes, at } = smallFile();
    const v = new DataView(bytes.buffer);
    patch(v, at);
    return bytes;
  };
  const u64 = (where, value = LIE) => set((v, at) => v.setBigUint64(where(at), value, true));
  const key = (k) => (at) => at.keys.get(k);
  const tensor = (t) => (at) => at.tensors.get(t);
  return [
    { name: 'tensor count 2^60', bytes: u64((at) => at.tensorCount) },
    { name: 'tensor count 2^64 - 1', bytes: u64((at) => at.tensorCount, 2n ** 64n - 1n) },
    { name: 'metadata count 2^60', bytes: u64((at) => at.keyCount) },
    { name: 'key length 2^60', bytes: u64((at) => key('general.name')(at).length) },
    { name: 'string value length 2^60', bytes: u64((at) => key('general.name')(at).value) },
    { name: 'string array count 2^60', bytes: u64((at) => key('tokenizer.ggml.tokens')(at).count) },
    { name: 'string in an array of length 2^60', bytes: u64((at) => key('tokenizer.ggml.tokens')(at).count + 8) },
    { name: 'f32 array count 2^60', bytes: u64((at) => key('tokenizer.ggml.scores')(at).count) },
    { name: 'bool array count 2^60', bytes: u64((at) => key('flags')(at).count) },
    { name: 'array of arrays count 2^60', bytes: u64((at) => key('nested')(at).count) },
    { name: 'inner array count 2^60', bytes: u64((at) => key('nested')(at).count + 12) },
    { name: 'tensor name length 2^60', bytes: u64((at) => tensor('output_norm.weight')(at).length) },
    { name: 'dimension 2^60', bytes: u64((at) => tensor('token_embd.weight')(at).dims + 8) },
    { name: 'negative dimension', bytes: u64((at) => tensor('token_embd.weight')(at).dims + 8, 2n ** 64n - 1n) },
    {
      name: 'dimensions whose product passes 2^53',
      bytes: set((v, at) => {
        v.setUint32(tensor('token_embd.weight')(at).nDims, 2, true);
        v.setBigUint64(tensor('token_embd.weight')(at).dims, 2n ** 40n, true);
        v.setBigUint64(tensor('token_embd.weight')(at).dims + 8, 2n ** 40n, true);
      }),
    },
    { name: 'offset 2^60', bytes: u64((at) => tensor('output_norm.weight')(at).offset) },
  ];
}
