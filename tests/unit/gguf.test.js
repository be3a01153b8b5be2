// gguf.test.js - the GGUF reader (web/model/load/gguf.js) and the config from its metadata
// (web/model/load/gguf-config.js), issue 38 item 1, on files written by tests/gguf-writer.js:
// - every metadata value type round-trips, versions 2 and 3, alignments other than 32, tensor
//   infos (PyTorch shape, absolute offsets, bytes from ggml's type table);
// - the type table against ggml's numbers (ggml.h's ids, ggml-common.h's block structs);
// - the header is read through a growing window: a 2 GiB file's data is never read;
// - Qwen2.5-0.5B-, Llama-3.2-1B-, Qwen3-0.6B- and GPT-2-shaped metadata give the config that
//   readConfig gives for the same models' config.json; what attnmap cannot run is refused by name;
// - hostile files: cut at every byte, counts and lengths of 2^60 (in a child with a 128 MB heap
//   and a time limit), offsets past the end or misaligned or overlapping, dims overflowing,
//   unknown and removed types, duplicates: each a typed error naming what lied.
// tests/fuzz/gguf.test.js flips bytes of a valid file at random.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { parseGguf, openGguf, GGML_TYPES, SUPPORTED_TYPES, MAX_HEADER_BYTES, MAX_TENSORS } from '../../web/model/load/gguf.js';
import { ggufConfig } from '../../web/model/load/gguf-config.js';
import { readConfig } from '../../web/model/load/config.js';
import { makeSource } from '../../web/model/load/safetensors.js';
import { writeGguf, gv, tensorBytes, smallFile } from '../gguf-writer.js';
import { expectError, root } from '../helpers.js';

const bad = (fn, pattern) => expectError(fn, 'INVALID_MODEL', pattern);

// ----------------------------------------------------------------------------
// the type table

// ggml.h enum ggml_type, and each block's bytes as ggml-common.h's static_asserts write them
// (ggml_half 2 bytes, QK_K 256, K_SCALE_SIZE 12, IQ3S_N_SCALE QK_K/64); 0: removed from GGUF
const K = 256;
const GGML = {
  F32: [0, 1, 4], F16: [1, 1, 2], Q4_0: [2, 32, 2 + 16], Q4_1: [3, 32, 4 + 16], Q5_0: [6, 32, 2 + 4 + 16],
  Q5_1: [7, 32, 4 + 4 + 16], Q8_0: [8, 32, 2 + 32], Q8_1: [9, 32, 4 + 32], Q2_K: [10, K, 4 + K / 16 + K / 4],
  Q3_K: [11, K, 2 + K / 4 + K / 8 + 12], Q4_K: [12, K, 4 + 12 + K / 2], Q5_K: [13, K, 4 + 12 + K / 2 + K / 8],
  Q6_K: [14, K, 2 + K / 16 + 3 * K / 4], Q8_K: [15, K, 4 + K + K / 16 * 2], IQ2_XXS: [16, K, 2 + K / 8 * 2],
  IQ2_XS: [17, K, 2 + K / 8 * 2 + K / 32], IQ3_XXS: [18, K, 2 + 3 * (K / 8)], IQ1_S: [19, K, 2 + K / 8 + K / 16],
  IQ4_NL: [20, 32, 2 + 16], IQ3_S: [21, K, 2 + 13 * (K / 32) + K / 64], IQ2_S: [22, K, 2 + K / 4 + K / 16],
  IQ4_XS: [23, K, 2 + 2 + K / 64 + K / 2], I8: [24, 1, 1], I16: [25, 1, 2], I32: [26, 1, 4], I64: [27, 1, 8],
  F64: [28, 1, 8], IQ1_M: [29, K, K / 8 + K / 16 + K / 32], BF16: [30, 1, 2], TQ1_0: [34, K, 2 + K / 64 + (K - 4 * K / 64) / 5],
  TQ2_0: [35, K, 2 + K / 4], MXFP4: [39, 32, 1 + 16], NVFP4: [40, 64, 4 + 32], Q1_0: [41, 128, 2 + 16], Q2_0: [42, 64, 2 + 16],
};
const REMOVED = [4, 5, 31, 32, 33, 36, 37, 38];
const ISSUE_TYPES = ['F32', 'F16', 'BF16', 'Q8_0', 'Q4_0', 'Q4_1', 'Q5_0', 'Q5_1', 'Q2_K', 'Q3_K', 'Q4_K', 'Q5_K', 'Q6_K', 'IQ4_NL', 'IQ4_XS'];

test('the type table: ggml\'s ids, block sizes and bytes per block, and the issue\'s 15 types marked supported', () => {
  assert.equal(GGML_TYPES.length, 43);                              // GGML_TYPE_COUNT
  for (const [name, [id, block, bytes]] of Object.entries(GGML)) {
    const t = GGML_TYPES[id];
    assert.deepEqual([t.name, t.blockSize, t.blockBytes, t.removed], [name, block, bytes, false], name);
  }
  for (const id of REMOVED) assert.equal(GGML_TYPES[id].removed, true, `type ${id}`);
  assert.equal(Object.keys(GGML).length + REMOVED.length, 43);
  assert.deepEqual([...SUPPORTED_TYPES].sort(), [...ISSUE_TYPES].sort());
});

// ----------------------------------------------------------------------------
// round trips

const EVERY_VALUE = [
  ['u8', gv.u8(255)], ['i8', gv.i8(-128)], ['u16', gv.u16(65535)], ['i16', gv.i16(-32768)],
  ['u32', gv.u32(2 ** 32 - 1)], ['i32', gv.i32(-(2 ** 31))], ['f32', gv.f32(0.1)], ['bool.t', gv.bool(true)],
  ['bool.f', gv.bool(false)], ['string', gv.str('héllo, 世界 🙂')], ['string.empty', gv.str('')],
  ['u64', gv.u64(2n ** 64n - 1n)], ['i64', gv.i64(-(2n ** 63n))], ['f64', gv.f64(Math.PI)],
  ['a.u8', gv.arr('u8', [0, 1, 255])], ['a.i8', gv.arr('i8', [-1, 127])], ['a.u16', gv.arr('u16', [7])],
  ['a.i16', gv.arr('i16', [-7, 7])], ['a.u32', gv.arr('u32', [1, 2 ** 32 - 1])], ['a.i32', gv.arr('i32', [-5])],
  ['a.f32', gv.arr('f32', [1.5, -0])], ['a.bool', gv.arr('bool', [true, false, true])],
  ['a.string', gv.arr('string', ['a', '', 'Ġthe', '<|im_end|>'])], ['a.u64', gv.arr('u64', [2n ** 63n])],
  ['a.i64', gv.arr('i64', [-1n])], ['a.f64', gv.arr('f64', [1e300])], ['a.empty', gv.arr('string', [])],
  ['a.nested', gv.arr('array', [gv.arr('u8', [1, 2]), gv.arr('string', ['x']), gv.arr('array', [gv.arr('bool', [true])])])],
];

const EXPECTED = {
  u8: [255, 'u8'], i8: [-128, 'i8'], u16: [65535, 'u16'], i16: [-32768, 'i16'], u32: [2 ** 32 - 1, 'u32'],
  i32: [-(2 ** 31), 'i32'], f32: [Math.fround(0.1), 'f32'], 'bool.t': [true, 'bool'], 'bool.f': [false, 'bool'],
  string: ['héllo, 世界 🙂', 'string'], 'string.empty': ['', 'string'], u64: [2n ** 64n - 1n, 'u64'],
  i64: [-(2n ** 63n), 'i64'], f64: [Math.PI, 'f64'],
  'a.u8': [new Uint8Array([0, 1, 255]), 'array<u8>'], 'a.i8': [new Int8Array([-1, 127]), 'array<i8>'],
  'a.u16': [new Uint16Array([7]), 'array<u16>'], 'a.i16': [new Int16Array([-7, 7]), 'array<i16>'],
  'a.u32': [new Uint32Array([1, 2 ** 32 - 1]), 'array<u32>'], 'a.i32': [new Int32Array([-5]), 'array<i32>'],
  'a.f32': [new Float32Array([1.5, -0]), 'array<f32>'], 'a.bool': [[true, false, true], 'array<bool>'],
  'a.string': [['a', '', 'Ġthe', '<|im_end|>'], 'array<string>'], 'a.u64': [new BigUint64Array([2n ** 63n]), 'array<u64>'],
  'a.i64': [new BigInt64Array([-1n]), 'array<i64>'], 'a.f64': [new Float64Array([1e300]), 'array<f64>'],
  'a.empty': [[], 'array<string>'], 'a.nested': [[new Uint8Array([1, 2]), ['x'], [[true]]], 'array<array>'],
};

test('every metadata value type round-trips: scalars, arrays of each, nested arrays, empty ones', () => {
  const { bytes } = writeGguf({ metadata: EVERY_VALUE });
  const g = parseGguf(bytes);
  assert.deepEqual([...g.metadata.keys()], EVERY_VALUE.map(([k]) => k));
  for (const [key, [value, type]] of Object.entries(EXPECTED)) {
    assert.deepEqual(g.metadata.get(key), value, key);
    assert.equal(g.types.get(key), type, key);
  }
  assert.deepEqual(g.tensors, []);
  assert.equal(g.dataOffset, bytes.length);              // no tensors: nothing after the metadata
});

test('versions 2 and 3 read alike; 1, 4 and a big-endian file are refused by version', () => {
  const meta = [['general.architecture', gv.str('llama')]];
  const tensors = [{ name: 'a', ne: [64, 2], type: 'Q4_0' }];
  const v2 = parseGguf(writeGguf({ version: 2, metadata: meta, tensors }).bytes);
  const v3 = parseGguf(writeGguf({ version: 3, metadata: meta, tensors }).bytes);
  assert.equal(v2.version, 2);
  assert.deepEqual({ ...v2, version: 3 }, v3);
  bad(() => parseGguf(writeGguf({ version: 1 }).bytes), /version 1 is no longer read.*expected version 2 or 3/);
  bad(() => parseGguf(writeGguf({ version: 4 }).bytes), /GGUF version 4; expected 2 or 3/);
  bad(() => parseGguf(writeGguf({ version: 3 << 24 }).bytes), /big-endian/);
  bad(() => parseGguf(new TextEncoder().encode('GGML and then some bytes to fill 24')), /not a GGUF file: it starts with 0x47 0x47 0x4d 0x4c, expected "GGUF"/);
  bad(() => parseGguf(new TextEncoder().encode('{"a": 1}')), /not a GGUF file: it starts with 0x7b 0x22 0x61 0x22/);      // short, and not GGUF
  bad(() => parseGguf(new Uint8Array(0)), /the file ends at byte 0, 0 bytes after the GGUF header .* begins at byte 0, which needs 24/);
});

test('tensor infos: ggml\'s ne, PyTorch\'s shape, absolute offsets, bytes from the type table, every type', () => {
  const tensors = GGML_TYPES.filter((t) => !t.removed).map((t, i) => ({ name: `t${i}.${t.name}`, ne: [2 * t.blockSize, 3], type: t.id }));
  tensors.push({ name: 'scalar', ne: [], type: 'F32' }, { name: 'four', ne: [32, 2, 3, 4], type: 'Q8_0' }, { name: 'empty', ne: [64, 0], type: 'Q4_0' });
  const f = writeGguf({ tensors });
  const g = parseGguf(f.bytes);
  assert.equal(g.dataOffset, f.dataOffset);
  assert.equal(g.dataOffset % 32, 0);
  let expectedOffset = f.dataOffset;
  tensors.forEach((t, i) => {
    const r = g.tensors[i], type = GGML_TYPES.find((x) => x.id === t.type || x.name === t.type);
    assert.equal(r.name, t.name);
    assert.deepEqual(r.ne, t.ne);
    assert.deepEqual(r.shape, [...t.ne].reverse());
    assert.equal(r.typeName, type.name);
    assert.equal(r.type, type.id);
    assert.equal(r.supported, ISSUE_TYPES.includes(type.name), type.name);
    assert.equal(r.bytes, tensorBytes(type.id, t.ne), t.name);
    assert.equal(r.offset, expectedOffset, t.name);
    expectedOffset += Math.ceil(r.bytes / 32) * 32;
  });
  const q4k = g.tensors.find((t) => t.typeName === 'Q4_K');
  assert.equal(q4k.bytes, 2 * 144 * 3);                 // ne0 / 256 blocks · 144 bytes · ne1
  assert.deepEqual(g.tensors.find((t) => t.name === 'four').shape, [4, 3, 2, 32]);
  assert.equal(g.tensors.find((t) => t.name === 'scalar').bytes, 4);
});

test('general.alignment other than 32 lays the data out on it; not a u32 power of two is refused', () => {
  for (const alignment of [1, 8, 64, 4096]) {
    const f = writeGguf({ alignment, tensors: [{ name: 'a', ne: [32], type: 'Q8_0' }, { name: 'b', ne: [3], type: 'F16' }, { name: 'c', ne: [5], type: 'F32' }] });
    const g = parseGguf(f.bytes);
    assert.equal(g.alignment, alignment);
    assert.equal(g.metadata.get('general.alignment'), alignment);
    assert.equal(g.dataOffset, f.dataOffset);
    assert.deepEqual(g.tensors.map((t) => t.offset - g.dataOffset), [0, Math.ceil(34 / alignment) * alignment, Math.ceil(34 / alignment) * alignment + Math.ceil(6 / alignment) * alignment]);
    for (const t of g.tensors) assert.equal((t.offset - g.dataOffset) % alignment, 0);
  }
  bad(() => parseGguf(writeGguf({ alignment: 48 }).bytes), /general\.alignment is 48; it must be a power of two/);
  bad(() => parseGguf(writeGguf({ alignment: 0 }).bytes), /general\.alignment is 0; it must be a power of two/);
  bad(() => parseGguf(writeGguf({ metadata: [['general.alignment', gv.u64(64)]] }).bytes), /general\.alignment must be a u32; it is a u64/);
});

// ----------------------------------------------------------------------------
// sources read by ranges

// a source over a file's header bytes followed by `dataBytes` bytes that are never there
function rangeSource(header, size, log) {
  return makeSource(size, (begin, end) => {
    log.push([begin, end]);
    if (end > header.length + 8 * 1024 * 1024) throw new Error(`read [${begin}, ${end}) of the data section`);
    const out = new Uint8Array(end - begin);
    out.set(header.subarray(Math.min(begin, header.length), Math.min(end, header.length)));
    return out;
  });
}

test('a 2 GiB file is read by ranges: only its header, through a small window', () => {
  const ne = [2048, 1024 * 1024];                      // Q8_0: 2048 / 32 · 34 · 2^20 bytes = 2.125 GiB
  const f = writeGguf({ metadata: [['general.architecture', gv.str('llama')]], tensors: [{ name: 'big', ne, type: 'Q8_0', data: new Uint8Array(0) }], padEnd: false });
  const bytesOfBig = tensorBytes('Q8_0', ne);
  // the writer wrote no data (its offset is 0 all the same): the source claims the bytes
  const size = f.dataOffset + bytesOfBig, log = [];
  const g = parseGguf(rangeSource(f.bytes, size, log));
  assert.equal(g.tensors[0].bytes, bytesOfBig);
  assert.ok(bytesOfBig > 2 ** 31);
  assert.equal(g.size, size);
  const read = log.reduce((a, [b, e]) => a + e - b, 0);
  assert.ok(read <= 64 * 1024, `read ${read} bytes of a ${size}-byte file: ${JSON.stringify(log)}`);
  // and a plain { size, read } object is a source too
  const plain = parseGguf({ size, read: (b, e) => rangeSource(f.bytes, size, []).read(b, e) });
  assert.deepEqual(plain.tensors, g.tensors);
});

test('a header larger than the first window is read in growing windows, each byte about once', () => {
  const tokens = Array.from({ length: 100000 }, (_, i) => `token-${i}`);
  const f = writeGguf({ metadata: [['tokenizer.ggml.tokens', gv.arr('string', tokens)]], tensors: [{ name: 'a', ne: [32], type: 'F32' }] });
  const log = [];
  const g = parseGguf(rangeSource(f.bytes, f.bytes.length, log));
  assert.deepEqual(g.metadata.get('tokenizer.ggml.tokens'), tokens);
  const read = log.reduce((a, [b, e]) => a + e - b, 0);
  assert.ok(log.length < 12 && read < 2 * f.bytes.length, `${log.length} reads of ${read} bytes for a ${f.bytes.length}-byte file`);
});

test('openGguf reads a source whose reads are promises; parseGguf refuses one; a short read is INVALID_ARGUMENT', async () => {
  const { bytes } = smallFile();
  const asyncSource = makeSource(bytes.length, async (b, e) => bytes.slice(b, e), undefined, true);
  const g = await openGguf(asyncSource);
  assert.deepEqual(g, parseGguf(bytes));
  assert.deepEqual(parseGguf(bytes.buffer.slice(0)), g);               // an ArrayBuffer too
  expectError(() => parseGguf(asyncSource), 'INVALID_ARGUMENT', /reads asynchronously.*openGguf/);
  expectError(() => parseGguf(makeSource(bytes.length, () => new Uint8Array(3))), 'INVALID_ARGUMENT', /read\(0, \d+\) returned a Uint8Array of length 3; expected a Uint8Array of \d+ bytes/);
  expectError(() => parseGguf('model.gguf'), 'INVALID_ARGUMENT');
  expectError(() => parseGguf({ size: -1, read() {} }), 'INVALID_ARGUMENT', /source\.size must be a non-negative integer/);
});

// ----------------------------------------------------------------------------
// the config

// Qwen2.5-0.5B-Instruct: its GGUF metadata (as llama.cpp's convert_hf_to_gguf.py writes it) and
// its config.json; Llama-3.2-1B-Instruct, Qwen3-0.6B and GPT-2 the same
const QWEN25 = {
  gguf: [['general.architecture', gv.str('qwen2')], ['general.name', gv.str('Qwen2.5 0.5B Instruct')],
    ['qwen2.block_count', gv.u32(24)], ['qwen2.context_length', gv.u32(32768)], ['qwen2.embedding_length', gv.u32(896)],
    ['qwen2.feed_forward_length', gv.u32(4864)], ['qwen2.attention.head_count', gv.u32(14)], ['qwen2.attention.head_count_kv', gv.u32(2)],
    ['qwen2.rope.freq_base', gv.f32(1000000)], ['qwen2.attention.layer_norm_rms_epsilon', gv.f32(1e-6)], ['general.file_type', gv.u32(15)],
    ['tokenizer.ggml.model', gv.str('gpt2')], ['tokenizer.ggml.pre', gv.str('qwen2')],
    ['tokenizer.ggml.tokens', gv.arr('string', Array.from({ length: 151936 }, (_, i) => `t${i}`))],
    ['general.quantization_version', gv.u32(2)]],
  tensors: ['token_embd.weight', 'output_norm.weight', 'blk.0.attn_q.bias'],
  hf: { model_type: 'qwen2', num_hidden_layers: 24, max_position_embeddings: 32768, hidden_size: 896, intermediate_size: 4864,
    num_attention_heads: 14, num_key_value_heads: 2, rope_theta: 1000000, rms_norm_eps: 1e-6, vocab_size: 151936, tie_word_embeddings: true },
};
const LLAMA32 = {
  gguf: [['general.architecture', gv.str('llama')], ['llama.block_count', gv.u32(16)], ['llama.context_length', gv.u32(131072)],
    ['llama.embedding_length', gv.u32(2048)], ['llama.feed_forward_length', gv.u32(8192)], ['llama.attention.head_count', gv.u32(32)],
    ['llama.attention.head_count_kv', gv.u32(8)], ['llama.rope.freq_base', gv.f32(500000)], ['llama.attention.layer_norm_rms_epsilon', gv.f32(1e-5)],
    ['llama.attention.key_length', gv.u32(64)], ['llama.attention.value_length', gv.u32(64)], ['llama.vocab_size', gv.u32(128256)],
    ['llama.rope.dimension_count', gv.u32(64)]],
  tensors: ['token_embd.weight', 'rope_freqs.weight', 'output_norm.weight'],
  hf: { model_type: 'llama', num_hidden_layers: 16, max_position_embeddings: 131072, hidden_size: 2048, intermediate_size: 8192,
    num_attention_heads: 32, num_key_value_heads: 8, head_dim: 64, rope_theta: 500000, rms_norm_eps: Math.fround(1e-5), vocab_size: 128256,
    tie_word_embeddings: true },
};
const QWEN3 = {
  gguf: [['general.architecture', gv.str('qwen3')], ['qwen3.block_count', gv.u32(28)], ['qwen3.context_length', gv.u32(40960)],
    ['qwen3.embedding_length', gv.u32(1024)], ['qwen3.feed_forward_length', gv.u32(3072)], ['qwen3.attention.head_count', gv.u32(16)],
    ['qwen3.attention.head_count_kv', gv.u32(8)], ['qwen3.rope.freq_base', gv.f32(1000000)], ['qwen3.attention.layer_norm_rms_epsilon', gv.f32(1e-6)],
    ['qwen3.attention.key_length', gv.u32(128)], ['qwen3.attention.value_length', gv.u32(128)], ['qwen3.vocab_size', gv.u32(151936)]],
  tensors: ['token_embd.weight', 'output.weight'],
  hf: { model_type: 'qwen3', num_hidden_layers: 28, max_position_embeddings: 40960, hidden_size: 1024, intermediate_size: 3072,
    num_attention_heads: 16, num_key_value_heads: 8, head_dim: 128, rope_theta: 1000000, rms_norm_eps: Math.fround(1e-6), vocab_size: 151936,
    tie_word_embeddings: false },
};
const GPT2 = {
  gguf: [['general.architecture', gv.str('gpt2')], ['gpt2.block_count', gv.u32(12)], ['gpt2.context_length', gv.u32(1024)],
    ['gpt2.embedding_length', gv.u32(768)], ['gpt2.feed_forward_length', gv.u32(3072)], ['gpt2.attention.head_count', gv.u32(12)],
    ['gpt2.attention.layer_norm_epsilon', gv.f32(1e-5)], ['tokenizer.ggml.tokens', gv.arr('string', Array.from({ length: 50257 }, (_, i) => `t${i}`))]],
  tensors: ['token_embd.weight', 'output.weight'],
  hf: { model_type: 'gpt2', n_layer: 12, n_positions: 1024, n_embd: 768, n_head: 12, vocab_size: 50257, layer_norm_epsilon: Math.fround(1e-5) },
};

const metadataOf = (entries) => parseGguf(writeGguf({ metadata: entries }).bytes).metadata;
const withoutRaw = ({ raw, ...c }) => c;

test('real-shaped metadata gives the config readConfig gives for the same model\'s config.json', () => {
  for (const [name, m, extra] of [['Qwen2.5-0.5B', QWEN25, { permutedQK: false, ropeFreqs: false }], ['Llama-3.2-1B', LLAMA32, { permutedQK: true, ropeFreqs: true }],
    ['Qwen3-0.6B', QWEN3, { permutedQK: false, ropeFreqs: false }], ['GPT-2', GPT2, { permutedQK: false, ropeFreqs: false }]]) {
    const c = ggufConfig(metadataOf(m.gguf), m.tensors);
    const expected = withoutRaw(readConfig(m.hf));
    for (const [key, value] of Object.entries(expected)) {
      if (key === 'eps' || key === 'layer_norm_epsilon' || key === 'ropeTheta') assert.equal(Math.fround(c[key]), Math.fround(value), `${name}: ${key}`);
      else assert.deepEqual(c[key], value, `${name}: ${key}`);
    }
    assert.equal(c.format, 'gguf');
    assert.equal(c.architecture, m.hf.model_type);
    assert.deepEqual({ permutedQK: c.permutedQK, ropeFreqs: c.ropeFreqs }, extra, name);
    assert.ok(Object.isFrozen(c));
  }
  const q = ggufConfig(metadataOf(QWEN25.gguf), QWEN25.tensors);
  assert.deepEqual([q.n_layer, q.n_head, q.kvHeads, q.headDim, q.n_embd, q.intermediate, q.vocab_size, q.n_positions, q.qkvBias, q.qkNorm, q.tied],
    [24, 14, 2, 64, 896, 4864, 151936, 32768, true, false, true]);
  assert.equal(ggufConfig(metadataOf(QWEN3.gguf)).qkNorm, true);
  assert.equal(ggufConfig(Object.fromEntries(metadataOf(QWEN3.gguf))).headDim, 128);   // a plain object too
});

test('llama.cpp\'s defaults: head_count_kv = head_count, key_length = embedding / heads, rope.freq_base 10000, per-layer arrays of one value', () => {
  const keep = (m, drop) => m.gguf.filter(([k]) => !drop.includes(k));
  const c = ggufConfig(metadataOf(keep(LLAMA32, ['llama.attention.head_count_kv', 'llama.attention.key_length', 'llama.attention.value_length',
    'llama.rope.freq_base', 'llama.rope.dimension_count'])));
  assert.deepEqual([c.kvHeads, c.headDim, c.ropeTheta, c.tied, c.qkvBias], [32, 64, 10000, false, false]);
  const perLayer = ggufConfig(metadataOf([...keep(LLAMA32, ['llama.attention.head_count_kv']), ['llama.attention.head_count_kv', gv.arr('i32', Array(16).fill(8))]]));
  assert.equal(perLayer.kvHeads, 8);
  const big = ggufConfig(metadataOf([...keep(LLAMA32, ['llama.context_length']), ['llama.context_length', gv.u64(4096)]]));
  assert.equal(big.n_positions, 4096);
});

test('what attnmap cannot run is refused by name: the architecture, experts, RoPE scaling, partial RoPE, per-layer shapes', () => {
  const edit = (m, key, value) => metadataOf([...m.gguf.filter(([k]) => k !== key), ...(value ? [[key, value]] : [])]);
  bad(() => ggufConfig(edit(LLAMA32, 'general.architecture', gv.str('gemma2'))), /the architecture "gemma2" is not supported; supported: llama, qwen2, qwen3, gpt2/);
  bad(() => ggufConfig(edit(LLAMA32, 'general.architecture')), /general\.architecture is missing/);
  bad(() => ggufConfig(edit(LLAMA32, 'general.architecture', gv.u32(1))), /general\.architecture must be a string/);
  bad(() => ggufConfig(edit(LLAMA32, 'llama.expert_count', gv.u32(8))), /llama\.expert_count is 8: a mixture of experts/);
  bad(() => ggufConfig(edit(LLAMA32, 'llama.rope.scaling.type', gv.str('yarn'))), /llama\.rope\.scaling\.type is the string "yarn"; only "none"/);
  bad(() => ggufConfig(edit(LLAMA32, 'llama.rope.scaling.factor', gv.f32(4))), /llama\.rope\.scaling\.factor is number 4: linear RoPE scaling/);
  bad(() => ggufConfig(edit(LLAMA32, 'llama.rope.dimension_count', gv.u32(32))), /llama\.rope\.dimension_count = 32 but the heads are 64 wide: partial RoPE/);
  bad(() => ggufConfig(edit(LLAMA32, 'llama.attention.value_length', gv.u32(128))), /llama\.attention\.value_length = 128 differs from llama\.attention\.key_length = 64/);
  bad(() => ggufConfig(edit(LLAMA32, 'llama.attention.head_count_kv', gv.arr('u32', [8, 8, 4]))), /llama\.attention\.head_count_kv varies by layer \(8 in layer 0, 4 in layer 2\)/);
  bad(() => ggufConfig(edit(LLAMA32, 'llama.attention.head_count_kv', gv.u32(5))), /head_count = 32 is not a multiple of llama\.attention\.head_count_kv = 5/);
  bad(() => ggufConfig(edit(LLAMA32, 'llama.attention.layer_norm_rms_epsilon')), /llama\.attention\.layer_norm_rms_epsilon is missing/);
  bad(() => ggufConfig(edit(LLAMA32, 'llama.block_count')), /llama\.block_count is missing; expected a positive integer/);
  bad(() => ggufConfig(edit(LLAMA32, 'llama.block_count', gv.str('16'))), /llama\.block_count must be an integer; received the string "16"/);
  bad(() => ggufConfig(edit(LLAMA32, 'llama.rope.freq_base', gv.f32(NaN))), /llama\.rope\.freq_base must be a finite number above 1/);
  bad(() => ggufConfig(edit(QWEN25, 'tokenizer.ggml.tokens')), /the vocabulary size is unknown: neither qwen2\.vocab_size nor tokenizer\.ggml\.tokens/);
  expectError(() => ggufConfig(edit(LLAMA32, 'llama.block_count', gv.u64(2n ** 40n))), 'TOO_LARGE', /llama\.block_count = 1099511627776 is above 2147483647/);
  expectError(() => ggufConfig(null), 'INVALID_ARGUMENT', /metadata must be/);
});

// ----------------------------------------------------------------------------
// hostile files

test('a file cut at every byte is INVALID_MODEL, never another error', () => {
  const { bytes, at } = smallFile();
  parseGguf(bytes);
  for (let n = 0; n < bytes.length; n++) {
    let err = null;
    try { parseGguf(bytes.subarray(0, n)); } catch (e) { err = e; }
    assert.ok(err, `cut at ${n} of ${bytes.length}: parsed`);
    assert.equal(err.name, 'AttentionError', `cut at ${n}: ${err.stack}`);
    assert.equal(err.code, 'INVALID_MODEL', `cut at ${n}: ${err.message}`);
  }
  bad(() => parseGguf(bytes.subarray(0, bytes.length - 1)), /tensor "output_norm\.weight" \(F32, 128 bytes\) at byte \d+ ends at byte \d+, past the file's end at \d+: a truncated file/);
  const cut = at.keys.get('tokenizer.ggml.tokens').count + 8 + 2 * (8 + 1) + 8;     // the count, "a", "b", the length of "c"
  bad(() => parseGguf(bytes.subarray(0, cut)), /the length of the value of "tokenizer\.ggml\.tokens"\[2\] is 1, which needs at least 1 bytes, but only 0 bytes are left in the file/);
});

// the lying files are made and read in a child with a 128 MB heap and a time limit: reading one
// that allocated what it claims would crash the child or run out its time
test('counts, lengths, dims and offsets that lie (2^60) are INVALID_MODEL naming them, in bounded memory and time', () => {
  const code = `
    import { lyingFiles } from ${JSON.stringify(new URL('../gguf-writer.js', import.meta.url).href)};
    import { parseGguf } from ${JSON.stringify(new URL('../../web/model/load/gguf.js', import.meta.url).href)};
    const out = lyingFiles().map(({ name, bytes }) => {
      try { parseGguf(bytes); return { name, code: 'parsed' }; } catch (e) { return { name, code: e.code, error: e.name, message: e.message }; }
    });
    console.log(JSON.stringify(out));`;
  const r = spawnSync(process.execPath, ['--max-old-space-size=128', '--input-type=module', '-e', code], { cwd: root, encoding: 'utf8', timeout: 60000 });
  assert.equal(r.error, undefined, `the child did not finish (${r.error?.code}); stderr: ${r.stderr}`);
  assert.equal(r.status, 0, `the child failed: ${r.stderr}`);
  const results = JSON.parse(r.stdout.trim().split('\n').pop());
  const expected = {
    'tensor count 2^60': /the tensor count is 1152921504606846976, which needs at least \d+ bytes, but only \d+ bytes are left/,
    'tensor count 2^64 - 1': /the tensor count is 18446744073709551615/,
    'metadata count 2^60': /the metadata count is 1152921504606846976/,
    'key length 2^60': /the length of metadata key 1 is 1152921504606846976/,
    'string value length 2^60': /the length of the value of "general\.name" is 1152921504606846976/,
    'string array count 2^60': /the element count of the value of "tokenizer\.ggml\.tokens" \(an array of string\) is 1152921504606846976/,
    'string in an array of length 2^60': /the length of the value of "tokenizer\.ggml\.tokens"\[0\] is 1152921504606846976/,
    'f32 array count 2^60': /the element count of the value of "tokenizer\.ggml\.scores" \(an array of f32\)/,
    'bool array count 2^60': /the element count of the value of "flags" \(an array of bool\)/,
    'array of arrays count 2^60': /the element count of the value of "nested" \(an array of array\)/,
    'inner array count 2^60': /the element count of the value of "nested"\[0\] \(an array of u8\)/,
    'tensor name length 2^60': /the length of the name of tensor 1 is 1152921504606846976/,
    'dimension 2^60': /tensor "token_embd\.weight" has ne\[1\] = 1152921504606846976, above 2\^53: no file can hold it/,
    'negative dimension': /tensor "token_embd\.weight" has ne\[1\] = -1; dimensions cannot be negative/,
    'dimensions whose product passes 2^53': /tensor "token_embd\.weight" has ne \[1099511627776, 1099511627776\] of type Q8_0/,
    'offset 2^60': /tensor "output_norm\.weight" has offset 1152921504606846976, past the file's end/,
  };
  assert.deepEqual(results.map((x) => x.name), Object.keys(expected));
  for (const x of results) {
    assert.equal(x.error, 'AttentionError', `${x.name}: ${JSON.stringify(x)}`);
    assert.equal(x.code, 'INVALID_MODEL', `${x.name}: ${x.message}`);
    assert.match(x.message, expected[x.name], x.name);
  }
});

test('the data layout: misaligned, overlapping, gapped and past-the-end offsets are refused by tensor', () => {
  const offsetFile = (name, value) => {
    const f = smallFile();
    new DataView(f.bytes.buffer).setBigUint64(f.at.tensors.get(name).offset, BigInt(value), true);
    return f.bytes;
  };
  bad(() => parseGguf(offsetFile('output_norm.weight', 100)), /tensor "output_norm\.weight" has offset 100, not a multiple of the alignment 32/);
  bad(() => parseGguf(offsetFile('output_norm.weight', 64)), /tensor "output_norm\.weight" at offset 64 overlaps "token_embd\.weight", which ends at 128/);
  bad(() => parseGguf(offsetFile('output_norm.weight', 160)), /tensor "output_norm\.weight" has offset 160 but the one before, "token_embd\.weight", ends at 128 .*no gap/);
  bad(() => parseGguf(offsetFile('token_embd.weight', 32)), /tensor "token_embd\.weight" has offset 32 but the first tensor starts at 0/);
  bad(() => parseGguf(offsetFile('output_norm.weight', 2 ** 40)), /tensor "output_norm\.weight" has offset 1099511627776, past the file's end/);
});

test('types, dims, names and keys: unknown, removed, too many, twice, empty, not UTF-8 — each refused by name', () => {
  const one = (t) => writeGguf({ tensors: [t] }).bytes;
  bad(() => parseGguf(one({ name: 'w', ne: [4], type: 99, data: new Uint8Array(16) })), /tensor "w" has type 99, which is not a ggml type \(ggml's types are 0 to 42\)/);
  bad(() => parseGguf(one({ name: 'w', ne: [32], type: 31, data: new Uint8Array(32) })), /tensor "w" has type 31 \(Q4_0_4_4\), which ggml removed from GGUF files/);
  bad(() => parseGguf(one({ name: 'w', ne: [48], type: 'Q4_0', data: new Uint8Array(32) })), /tensor "w" has type Q4_0, whose blocks hold 32 values, but ne\[0\] = 48 is not a multiple of 32/);
  bad(() => parseGguf(one({ name: 'w', ne: [1, 1, 1, 1, 1], type: 'F32' })), /tensor "w" has 5 dimensions; ggml tensors have at most 4/);
  bad(() => parseGguf(one({ name: 'x'.repeat(64), ne: [1], type: 'F32' })), /has a name of more than 63 bytes/);
  bad(() => parseGguf(writeGguf({ tensors: [{ name: 'w', ne: [8], type: 'F32' }, { name: 'w', ne: [8], type: 'F32' }] }).bytes), /the tensor name "w" appears twice/);
  bad(() => parseGguf(writeGguf({ metadata: [['a', gv.u8(1)], ['b', gv.u8(1)], ['a', gv.u8(2)]] }).bytes), /the metadata key "a" appears twice \(keys 0 and 2\)/);
  bad(() => parseGguf(writeGguf({ metadata: [['', gv.u8(1)]] }).bytes), /metadata key 0 is empty/);
  const f = writeGguf({ metadata: [['ok', gv.bool(true)], ['s', gv.str('ab')], ['t', gv.u8(0)]] });
  const edit = (at, value) => { const b = f.bytes.slice(); b[at] = value; return b; };
  bad(() => parseGguf(edit(f.at.keys.get('ok').value, 2)), /the value of "ok" is a bool stored as 2/);
  bad(() => parseGguf(edit(f.at.keys.get('s').value + 8, 0xff)), /the value of "s" is not valid UTF-8/);
  bad(() => parseGguf(edit(f.at.keys.get('t').type, 13)), /the value of "t" has value type 13; GGUF's types are 0 to 12/);
  let deep = gv.arr('u8', [1]);
  for (let i = 0; i < 8; i++) deep = gv.arr('array', [deep]);
  bad(() => parseGguf(writeGguf({ metadata: [['deep', deep]] }).bytes), /nests arrays deeper than 8 levels/);
});

test('an honest header beyond the limits is TOO_LARGE, decided before anything is read', () => {
  const log = [];
  // a string of MAX_HEADER_BYTES in a file that could hold it: no read of it is made
  const f = writeGguf({ metadata: [['general.name', gv.str('x')]] });
  new DataView(f.bytes.buffer).setBigUint64(f.at.keys.get('general.name').value, BigInt(MAX_HEADER_BYTES), true);
  expectError(() => parseGguf(rangeSource(f.bytes, 2 ** 31, log)), 'TOO_LARGE', /the value of "general\.name" at byte \d+ takes the header past 134217728 bytes/);
  assert.ok(log.every(([b, e]) => e - b <= 64 * 1024), JSON.stringify(log));
  const many = writeGguf({});
  new DataView(many.bytes.buffer).setBigUint64(many.at.tensorCount, BigInt(MAX_TENSORS + 1), true);
  expectError(() => parseGguf(rangeSource(many.bytes, 2 ** 31, [])), 'TOO_LARGE', /lists 1048577 tensors; at most 1048576/);
});
