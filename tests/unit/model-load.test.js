// Loading a GPT-2 checkpoint (issue 15): safetensors parsing and reading, config.json, and the
// tensor set of a checkpoint. Every hostile file gets its own test, asserting the error code and
// what the message says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSafetensors, readTensor, makeSource, MAX_HEADER_BYTES } from '../../web/model/load/safetensors.js';
import { readConfig } from '../../web/model/load/config.js';
import { matchTensors as gpt2Tensors } from '../../web/model/load/checkpoint.js';
import { expectError } from '../helpers.js';
import { writeSafetensors, rawSafetensors, randomGpt2, gpt2Shapes, toF16Bits, toBF16Bits, fromF16Bits } from '../model-helpers.js';

// little-endian bytes of 16-bit patterns, written by hand (not by the helpers' encoders)
const u16le = (...bits) => Uint8Array.from(bits.flatMap((b) => [b & 0xff, b >> 8]));
const f32le = (...xs) => new Uint8Array(Float32Array.from(xs).buffer);   // the test machine is little-endian
const header = (obj) => JSON.stringify(obj);
const file = (obj, ...chunks) => rawSafetensors(header(obj), chunks);
const parseErr = (bytes, code, pattern) => expectError(() => parseSafetensors(bytes), code, pattern);
const readAll = (bytes, parsed, name) => {
  const info = parsed.tensors.get(name);
  const out = new Float32Array(info.shape.reduce((a, b) => a * b, 1));
  readTensor(bytes, info, out);
  return out;
};

// ----------------------------------------------------------------------------
// safetensors: the happy paths

test('F32: offsets are absolute, values exact, metadata kept', () => {
  const bytes = file({ __metadata__: { format: 'pt' }, a: { dtype: 'F32', shape: [2, 2], data_offsets: [0, 16] }, b: { dtype: 'F32', shape: [1], data_offsets: [16, 20] } },
    f32le(1, -2, 0.1, 3e38), f32le(-0));
  const p = parseSafetensors(bytes);
  const start = bytes.length - 20;
  assert.deepEqual(p.tensors.get('a'), { name: 'a', dtype: 'F32', shape: [2, 2], begin: start, end: start + 16 });
  assert.deepEqual({ ...p.metadata }, { format: 'pt' });
  assert.deepEqual(Array.from(readAll(bytes, p, 'a')), [1, -2, Math.fround(0.1), Math.fround(3e38)]);
  assert.ok(Object.is(readAll(bytes, p, 'b')[0], -0));
});

test('F32 at an unaligned offset, from an ArrayBuffer and from a view into a larger buffer', () => {
  let head = '{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}}';
  while ((8 + head.length) % 4 !== 1) head += ' ';
  const inner = rawSafetensors(head, [f32le(1.5, -7, 2 ** -149)], { pad: false });
  assert.equal((inner.length - 12) % 4, 1, 'the data starts at an odd offset');
  const big = new Uint8Array(inner.length + 3);
  big.set(inner, 3);
  for (const bytes of [inner, inner.slice().buffer, big.subarray(3)]) {
    const p = parseSafetensors(bytes);
    assert.deepEqual(Array.from(readAll(bytes, p, 'w')), [1.5, -7, 2 ** -149]);
  }
});

test('F16: normals, subnormals, ±0 and the extremes, against hand-computed bit patterns', () => {
  const bits = [0x0000, 0x8000, 0x0001, 0x03ff, 0x0400, 0x3c00, 0x3c01, 0xc000, 0x3555, 0x7bff, 0xfbff];
  const want = [0, -0, 2 ** -24, 1023 * 2 ** -24, 2 ** -14, 1, 1.0009765625, -2, 0.333251953125, 65504, -65504];
  const bytes = file({ h: { dtype: 'F16', shape: [bits.length], data_offsets: [0, 2 * bits.length] } }, u16le(...bits));
  const got = readAll(bytes, parseSafetensors(bytes), 'h');
  want.forEach((w, i) => assert.ok(Object.is(got[i], w), `0x${bits[i].toString(16)}: got ${got[i]}, want ${w}`));
});

test('BF16: the top half of a float32, subnormals and ±0 included', () => {
  const bits = [0x3f80, 0xbf80, 0x4049, 0x3eab, 0x0001, 0x0080, 0x7f7f, 0x8000, 0x0000];
  const want = [1, -1, 3.140625, 0.333984375, 2 ** -133, 2 ** -126, 255 * 2 ** 120, -0, 0];
  const bytes = file({ b: { dtype: 'BF16', shape: [3, 3], data_offsets: [0, 18] } }, u16le(...bits));
  const got = readAll(bytes, parseSafetensors(bytes), 'b');
  want.forEach((w, i) => assert.ok(Object.is(got[i], w), `0x${bits[i].toString(16)}: got ${got[i]}, want ${w}`));
});

test('readTensor writes into a view of a larger memory and nothing around it', () => {
  const bytes = file({ h: { dtype: 'F16', shape: [2], data_offsets: [0, 4] } }, u16le(0x3c00, 0xc000));
  const memory = new Float32Array(8).fill(7);
  readTensor(bytes, parseSafetensors(bytes).tensors.get('h'), memory.subarray(3, 5));
  assert.deepEqual(Array.from(memory), [7, 7, 7, 1, -2, 7, 7, 7]);
});

test('empty and 0-rank tensors are allowed, as the format says', () => {
  const bytes = file({ e: { dtype: 'F32', shape: [0, 5], data_offsets: [0, 0] }, s: { dtype: 'F32', shape: [], data_offsets: [0, 4] } }, f32le(2.5));
  const p = parseSafetensors(bytes);
  assert.equal(readAll(bytes, p, 'e').length, 0);
  assert.deepEqual(Array.from(readAll(bytes, p, 's')), [2.5]);
  assert.equal(p.metadata, null);
});

test('an empty header {} with no data parses; trailing space padding is allowed', () => {
  assert.equal(parseSafetensors(rawSafetensors('{}', [], { pad: false })).tensors.size, 0);
  assert.equal(parseSafetensors(rawSafetensors('{}      ', [], { pad: false })).tensors.size, 0);
});

test('a file of any safetensors dtype parses; readTensor refuses what it cannot convert', () => {
  const bytes = file({ m: { dtype: 'BOOL', shape: [2, 2], data_offsets: [0, 4] }, i: { dtype: 'I64', shape: [1], data_offsets: [4, 12] } },
    Uint8Array.of(1, 0, 1, 1), new Uint8Array(8));
  const p = parseSafetensors(bytes);
  expectError(() => readTensor(bytes, p.tensors.get('i'), new Float32Array(1)), 'INVALID_MODEL', /tensor "i" has dtype I64; attnmap reads F32, F16, BF16/);
  expectError(() => readTensor(bytes, p.tensors.get('m'), new Float32Array(4)), 'INVALID_MODEL', /tensor "m" has dtype BOOL/);
});

// ----------------------------------------------------------------------------
// safetensors: hostile or broken files, one test each

test('hostile: a file shorter than the 8-byte header length', () => {
  parseErr(new Uint8Array(5), 'INVALID_MODEL', /the file has 5 bytes; a safetensors file starts with an 8-byte header length/);
  parseErr(new Uint8Array(0), 'INVALID_MODEL', /has 0 bytes/);
});

test('hostile: the header cut short (length beyond the file)', () => {
  const whole = file({ a: { dtype: 'F32', shape: [1], data_offsets: [0, 4] } }, f32le(1));
  parseErr(whole.subarray(0, 20), 'INVALID_MODEL', /a truncated one: its first 8 bytes give a header length of 56 bytes but the file has only 12 bytes after them/);
});

test('hostile: a header length above 100 MB in a file that long is refused before the header is read', () => {
  const head = new Uint8Array(8), reads = [];
  new DataView(head.buffer).setUint32(0, MAX_HEADER_BYTES + 1, true);
  const big = makeSource(2e9, (begin, end) => { reads.push([begin, end]); return head.subarray(begin, end); });
  parseErr(big, 'TOO_LARGE', /header length says 100000001 bytes; at most 100000000/);
  assert.deepEqual(reads, [[0, 8]], 'only the 8-byte length was read');
});

test('hostile: a header length beyond the file (garbage, HTML, a 19-byte text) is not a safetensors file; the length printed exactly', () => {
  const lie = new Uint8Array(16);
  new DataView(lie.buffer).setUint32(0, MAX_HEADER_BYTES + 1, true);
  parseErr(lie, 'INVALID_MODEL', /not a safetensors file, or a truncated one: its first 8 bytes give a header length of 100000001 bytes but the file has only 8/);
  new DataView(lie.buffer).setUint32(4, 0xffffffff, true);
  parseErr(lie, 'INVALID_MODEL', /header length of 18446744069514584321 bytes/);
  parseErr(new TextEncoder().encode('<!DOCTYPE html><html><body>not found</body></html>'), 'INVALID_MODEL', /not a safetensors file/);
  // 'hello, s' little-endian is 8295679370688488808 exactly (through a float it printed 8295679370688489000)
  parseErr(new TextEncoder().encode('hello, safetensors!'), 'INVALID_MODEL', /header length of 8295679370688488808 bytes but the file has only 11 bytes/);
});

test('hostile: a header that is not JSON', () => {
  parseErr(rawSafetensors('{"a": {"dtype": "F32",'), 'INVALID_MODEL', /the header is not valid JSON/);
});

test('hostile: a header that is not a JSON object', () => {
  parseErr(rawSafetensors('[1, 2]'), 'INVALID_MODEL', /must be a JSON object starting with "\{"; it starts with byte 0x5b/);
  parseErr(rawSafetensors('  {}'), 'INVALID_MODEL', /starting with "\{"; it starts with byte 0x20/);
  parseErr(rawSafetensors('', [], { pad: false }), 'INVALID_MODEL', /starts with nothing/);
});

test('hostile: a header that is not UTF-8', () => {
  const head = Uint8Array.from([...new TextEncoder().encode('{"'), 0xff, 0xfe, ...new TextEncoder().encode('": 1}')]);
  parseErr(rawSafetensors(head), 'INVALID_MODEL', /the header is not valid UTF-8/);
});

test('hostile: a key given twice', () => {
  parseErr(rawSafetensors('{"a":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},"b\\"":{},"a":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}'),
    'INVALID_MODEL', /the header has the key "a" twice/);
});

test('hostile: an unknown dtype', () => {
  parseErr(file({ 'h.0.attn.c_attn.weight': { dtype: 'float32', shape: [1], data_offsets: [0, 4] } }, f32le(1)),
    'INVALID_MODEL', /tensor "h\.0\.attn\.c_attn\.weight" has dtype "float32", which is not a safetensors dtype/);
  parseErr(file({ a: { dtype: 7, shape: [1], data_offsets: [0, 4] } }, f32le(1)), 'INVALID_MODEL', /has dtype number 7/);
});

test('hostile: a shape that is not an array of non-negative safe integers', () => {
  for (const [shape, shown] of [[4, 'number 4'], [[-1], '\\[-1\\]'], [[1.5], '\\[1\\.5\\]'], [['2'], '\\["2"\\]'], [[2 ** 53], '\\[9007199254740992\\]'], [null, 'null']]) {
    parseErr(file({ a: { dtype: 'F32', shape, data_offsets: [0, 4] } }, f32le(1)), 'INVALID_MODEL',
      new RegExp(`tensor "a" has shape ${shown}; expected an array of non-negative integers`));
  }
});

test('hostile: data_offsets not two non-negative integers', () => {
  for (const offsets of [[0], [0, '4'], [0, 4, 8], null, [-4, 0], [0.5, 4]]) {
    parseErr(file({ a: { dtype: 'F32', shape: [1], data_offsets: offsets } }, f32le(1)), 'INVALID_MODEL',
      /tensor "a" has data_offsets .*; expected \[begin, end\], two non-negative integers/);
  }
  parseErr(file({ a: { dtype: 'F32', shape: [1] } }, f32le(1)), 'INVALID_MODEL', /data_offsets undefined/);
});

test('hostile: begin after end', () => {
  parseErr(file({ a: { dtype: 'F32', shape: [1], data_offsets: [8, 4] } }, f32le(1, 2)), 'INVALID_MODEL', /tensor "a" has data_offsets \[8, 4\]: begin is after end/);
});

test('hostile: offsets past the data section', () => {
  parseErr(file({ a: { dtype: 'F32', shape: [100], data_offsets: [0, 400] } }, f32le(1, 2, 3, 4)), 'INVALID_MODEL',
    /tensor "a" has data_offsets \[0, 400\] but the data section has only 16 bytes/);
});

test('hostile: two tensors overlapping', () => {
  parseErr(file({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] }, b: { dtype: 'F32', shape: [2], data_offsets: [4, 12] } }, f32le(1, 2, 3)),
    'INVALID_MODEL', /tensors "a" \[0, 8\] and "b" \[4, 12\] overlap/);
  parseErr(file({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] }, b: { dtype: 'F32', shape: [2], data_offsets: [0, 8] } }, f32le(1, 2)),
    'INVALID_MODEL', /overlap/);
});

test('hostile: data_offsets that disagree with shape × dtype', () => {
  parseErr(file({ 'h.0.attn.c_attn.weight': { dtype: 'F32', shape: [8, 24], data_offsets: [0, 100] } }, new Uint8Array(100)),
    'INVALID_MODEL', /tensor "h\.0\.attn\.c_attn\.weight" has data_offsets \[0, 100\] \(100 bytes\) but shape \[8, 24\] × F32 needs 768 bytes/);
  parseErr(file({ a: { dtype: 'BF16', shape: [3], data_offsets: [0, 4] } }, new Uint8Array(4)), 'INVALID_MODEL', /shape \[3\] × BF16 needs 6 bytes/);
});

test('hostile: a shape whose product overflows', () => {
  parseErr(file({ a: { dtype: 'F32', shape: [2 ** 30, 2 ** 30, 2 ** 30], data_offsets: [0, 4] } }, f32le(1)), 'INVALID_MODEL',
    /tensor "a" has shape \[1073741824, 1073741824, 1073741824\], more than 2\^53 elements/);
  // within 2^53 elements but not bytes: still only a mismatch, no allocation
  parseErr(file({ a: { dtype: 'F32', shape: [2 ** 26, 2 ** 26], data_offsets: [0, 4] } }, f32le(1)), 'INVALID_MODEL', /needs 18014398509481984 bytes/);
});

test('hostile: bytes that belong to no tensor (a hole, or data after the last tensor)', () => {
  parseErr(file({ a: { dtype: 'F32', shape: [1], data_offsets: [0, 4] }, b: { dtype: 'F32', shape: [1], data_offsets: [8, 12] } }, f32le(1, 2, 3)),
    'INVALID_MODEL', /bytes \[4, 8\) of the data section belong to no tensor/);
  parseErr(file({ a: { dtype: 'F32', shape: [1], data_offsets: [4, 8] } }, f32le(1, 2)), 'INVALID_MODEL', /bytes \[0, 4\) of the data section belong to no tensor/);
  parseErr(file({ a: { dtype: 'F32', shape: [1], data_offsets: [0, 4] } }, f32le(1, 2)), 'INVALID_MODEL',
    /the tensors end at byte 4 of the data section but it has 8 bytes \(the format allows nothing after the last tensor\)/);
});

test('hostile: a tensor entry or __metadata__ of the wrong form', () => {
  parseErr(file({ a: [1, 2] }), 'INVALID_MODEL', /tensor "a" must be an object \{ dtype, shape, data_offsets \}/);
  parseErr(file({ __metadata__: { format: 1 } }), 'INVALID_MODEL', /"__metadata__" values must be strings; "format" is number 1/);
  parseErr(file({ __metadata__: 'pt' }), 'INVALID_MODEL', /"__metadata__" must be an object of strings/);
});

test('hostile: a non-finite weight names the tensor and the index', () => {
  const bytes = file({
    f: { dtype: 'F32', shape: [2, 3], data_offsets: [0, 24] },
    h: { dtype: 'F16', shape: [3], data_offsets: [24, 30] },
    b: { dtype: 'BF16', shape: [2], data_offsets: [30, 34] },
    n: { dtype: 'F16', shape: [1], data_offsets: [34, 36] },
  }, f32le(0, 1, 2, 3, NaN, 5), u16le(0x3c00, 0x7c00, 0xfc00), u16le(0x3f80, 0xff80), u16le(0x7e00));
  const p = parseSafetensors(bytes);
  const at = (name, n) => () => readTensor(bytes, p.tensors.get(name), new Float32Array(n));
  expectError(at('f', 6), 'INVALID_MODEL', /tensor "f" has a non-finite value \(NaN\) at index 4 \(\[1, 1\]\): weights must be finite/);
  expectError(at('h', 3), 'INVALID_MODEL', /tensor "h" has a non-finite value \(Infinity\) at index 1:/);
  expectError(at('b', 2), 'INVALID_MODEL', /tensor "b" has a non-finite value \(-Infinity\) at index 1/);
  expectError(at('n', 1), 'INVALID_MODEL', /tensor "n" has a non-finite value \(NaN\) at index 0/);
});

test('wrong argument types are INVALID_ARGUMENT', () => {
  expectError(() => parseSafetensors('model.safetensors'), 'INVALID_ARGUMENT', /bytes must be a Uint8Array or an ArrayBuffer/);
  expectError(() => parseSafetensors(new Uint16Array(8)), 'INVALID_ARGUMENT', /Uint16Array/);
  expectError(() => parseSafetensors([0, 0, 0, 0, 0, 0, 0, 0]), 'INVALID_ARGUMENT', /an array of length 8/);
  const bytes = file({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] } }, f32le(1, 2));
  const info = parseSafetensors(bytes).tensors.get('a');
  expectError(() => readTensor(bytes, info, new Float32Array(3)), 'INVALID_ARGUMENT', /out must be a Float32Array of 2 elements \(shape \[2\]\); received a Float32Array of length 3/);
  expectError(() => readTensor(bytes, info, new Float64Array(2)), 'INVALID_ARGUMENT', /out must be a Float32Array/);
  expectError(() => readTensor(bytes, { ...info, end: info.end + 4 }, new Float32Array(2)), 'INVALID_ARGUMENT', /info must be an entry of parseSafetensors/);
  expectError(() => readTensor(bytes.subarray(0, 10), info, new Float32Array(2)), 'INVALID_ARGUMENT', /info must be an entry/);
  expectError(() => readTensor(bytes, null, new Float32Array(2)), 'INVALID_ARGUMENT', /info must be/);
  const detached = new ArrayBuffer(16);
  structuredClone(detached, { transfer: [detached] });
  expectError(() => parseSafetensors(detached), 'INVALID_ARGUMENT', /detached/);
});

// ----------------------------------------------------------------------------
// the helpers' own rounding (other tests rely on it), against hand-computed bits

test('model-helpers: float16 and bfloat16 round to nearest, ties to even', () => {
  assert.equal(toF16Bits(1 + 2 ** -11), 0x3c00);          // tie between 0x3c00 and 0x3c01: even
  assert.equal(toF16Bits(1 + 3 * 2 ** -11), 0x3c02);      // tie between 0x3c01 and 0x3c02: even
  assert.equal(toF16Bits(1 + 2 ** -11 + 2 ** -20), 0x3c01);
  assert.equal(toF16Bits(2 ** -25), 0x0000);              // half the smallest subnormal: to 0
  assert.equal(toF16Bits(3 * 2 ** -25), 0x0002);
  assert.equal(toF16Bits(65519), 0x7bff);
  assert.equal(toF16Bits(65520), 0x7c00);
  assert.equal(toF16Bits(-0), 0x8000);
  assert.equal(toF16Bits(1 / 3), 0x3555);
  assert.equal(toBF16Bits(1 + 2 ** -8), 0x3f80);          // tie: even
  assert.equal(toBF16Bits(1 + 3 * 2 ** -8), 0x3f82);
  assert.equal(toBF16Bits(Math.PI), 0x4049);
  assert.equal(toBF16Bits(NaN), 0x7fc0);
  for (let h = 0; h < 0x7c00; h += 7) assert.equal(toF16Bits(fromF16Bits(h)), h);
});

// ----------------------------------------------------------------------------
// config.json

const baseConfig = () => randomGpt2().config;

test('config: a GPT-2 config.json, as an object and as text', () => {
  for (const input of [baseConfig(), JSON.stringify(baseConfig())]) {
    const c = readConfig(input);
    assert.deepEqual({ ...c, raw: undefined }, { family: 'gpt2', n_layer: 2, n_head: 2, n_embd: 8, vocab_size: 16, n_positions: 8, layer_norm_epsilon: 1e-5,
      layers: 2, heads: 2, kvHeads: 2, headDim: 4, hidden: 8, raw: undefined }, 'the sizes, and the normalised fields every family has');
    assert.equal(c.raw.model_type, 'gpt2');
    assert.ok(Object.isFrozen(c));
  }
  const real = { activation_function: 'gelu_new', architectures: ['GPT2LMHeadModel'], attn_pdrop: 0.1, bos_token_id: 50256, embd_pdrop: 0.1, eos_token_id: 50256,
    initializer_range: 0.02, layer_norm_epsilon: 1e-05, model_type: 'gpt2', n_ctx: 1024, n_embd: 768, n_head: 12, n_layer: 12, n_positions: 1024,
    resid_pdrop: 0.1, summary_activation: null, summary_first_dropout: 0.1, summary_proj_to_labels: true, summary_type: 'cls_index', summary_use_proj: true,
    task_specific_params: { 'text-generation': { do_sample: true, max_length: 50 } }, vocab_size: 50257 };
  const c = readConfig(real);
  assert.deepEqual([c.n_layer, c.n_head, c.n_embd, c.vocab_size, c.n_positions], [12, 12, 768, 50257, 1024]);
});

test('config: HF aliases (hidden_size, num_attention_heads, num_hidden_layers, max_position_embeddings); n_ctx is not one', () => {
  const c = readConfig({ hidden_size: 16, num_attention_heads: 4, num_hidden_layers: 3, max_position_embeddings: 32, vocab_size: 10 });
  assert.deepEqual([c.n_embd, c.n_head, c.n_layer, c.n_positions, c.layer_norm_epsilon], [16, 4, 3, 32, 1e-5]);
  expectError(() => readConfig({ ...baseConfig(), hidden_size: 16 }), 'INVALID_MODEL', /n_embd = number 8 and its alias hidden_size = number 16 disagree/);
  const { n_positions, ...noPositions } = baseConfig();
  expectError(() => readConfig({ ...noPositions, n_ctx: n_positions }), 'INVALID_MODEL', /n_positions is missing \(nor is its alias max_position_embeddings given\)/);
  assert.equal(readConfig({ ...baseConfig(), n_ctx: 4 }).n_positions, 8);   // ignored, as GPT2Config ignores it
});

test('config: sizes must be positive integers and n_head must divide n_embd', () => {
  const { vocab_size, ...noVocab } = baseConfig();
  expectError(() => readConfig(noVocab), 'INVALID_MODEL', /config: vocab_size is missing: expected a positive integer/);
  expectError(() => readConfig({ ...baseConfig(), n_layer: 0 }), 'INVALID_MODEL', /n_layer must be a positive integer; received number 0/);
  expectError(() => readConfig({ ...baseConfig(), n_head: 2.5 }), 'INVALID_MODEL', /n_head must be a positive integer; received number 2.5/);
  expectError(() => readConfig({ ...baseConfig(), n_embd: '8' }), 'INVALID_MODEL', /n_embd must be a positive integer; received the string "8"/);
  expectError(() => readConfig({ ...baseConfig(), n_head: 3 }), 'INVALID_MODEL', /n_embd = 8 is not a multiple of n_head = 3/);
  expectError(() => readConfig({ ...baseConfig(), vocab_size: 2 ** 40 }), 'TOO_LARGE', /vocab_size = 1099511627776 is above 2147483647/);
});

test('config: layer_norm_epsilon defaults to 1e-5 and must be positive and finite', () => {
  const { layer_norm_epsilon, ...noEps } = baseConfig();
  assert.equal(readConfig(noEps).layer_norm_epsilon, 1e-5);
  assert.equal(readConfig({ ...noEps, layer_norm_epsilon: 1e-6 }).layer_norm_epsilon, 1e-6);
  for (const bad of [0, -1e-5, '1e-5', true]) {
    expectError(() => readConfig({ ...noEps, layer_norm_epsilon: bad }), 'INVALID_MODEL', /layer_norm_epsilon must be a positive finite number/);
  }
});

test('config: keys that change the maths are refused by name', () => {
  const cases = [
    [{ activation_function: 'relu' }, /activation_function is the string "relu"; supported: "gelu_new", "gelu_pytorch_tanh"/],
    [{ activation_function: 'gelu' }, /activation_function is the string "gelu"/],
    [{ scale_attn_by_inverse_layer_idx: true }, /scale_attn_by_inverse_layer_idx: true is not supported \(attention scores also divided by layer \+ 1\)/],
    [{ reorder_and_upcast_attn: true }, /reorder_and_upcast_attn: true is not supported/],
    [{ scale_attn_weights: false }, /scale_attn_weights: false is not supported \(attention scores not scaled/],
    [{ scale_attn_weights: 1 }, /scale_attn_weights must be true or false; received number 1/],
    [{ n_inner: 16 }, /n_inner is number 16; supported: null or 4 · n_embd = 32/],
    [{ model_type: 'gpt_neo' }, /model_type is the string "gpt_neo"; supported: "gpt2", "llama", "qwen2", "qwen3"/],
    [{ add_cross_attention: true }, /add_cross_attention: true is not supported/],
    [{ tie_word_embeddings: false }, /tie_word_embeddings: false is not supported \(an output projection of its own/],
    [{ pruned_heads: { 0: [1] } }, /pruned_heads is an object with keys \[0\]; pruned heads are not supported/],
  ];
  for (const [extra, pattern] of cases) expectError(() => readConfig({ ...baseConfig(), ...extra }), 'INVALID_MODEL', pattern);
  // the supported values of the same keys
  const ok = readConfig({ ...baseConfig(), activation_function: 'gelu_pytorch_tanh', n_inner: 32, scale_attn_weights: true, tie_word_embeddings: true,
    add_cross_attention: false, pruned_heads: {}, reorder_and_upcast_attn: null });
  assert.equal(ok.n_embd, 8);
});

test('config: harmless keys are ignored', () => {
  const c = readConfig({ ...baseConfig(), resid_pdrop: 0.5, summary_type: 'mean', use_cache: false, torch_dtype: 'bfloat16', _attn_implementation: 'sdpa',
    id2label: { 0: 'A' }, pad_token_id: 0, layer_norm_eps: 0.1, tokenizer_class: 'GPT2Tokenizer', whatever: [1, 2] });
  assert.equal(c.layer_norm_epsilon, 1e-5);
});

test('config: broken text is INVALID_MODEL, a wrong type INVALID_ARGUMENT', () => {
  expectError(() => readConfig('{"n_layer": 2,'), 'INVALID_MODEL', /config: not valid JSON/);
  expectError(() => readConfig('[1, 2]'), 'INVALID_MODEL', /config.json must hold a JSON object; it holds an array of length 2/);
  expectError(() => readConfig('null'), 'INVALID_MODEL', /it holds null/);
  expectError(() => readConfig(42), 'INVALID_ARGUMENT', /readConfig: config must be an object .* received number 42/);
  expectError(() => readConfig(null), 'INVALID_ARGUMENT', /received null/);
  const trap = { get n_layer() { throw new Error('boom'); } };
  expectError(() => readConfig(trap), 'INVALID_ARGUMENT', /readConfig: reading the config failed: boom/);
});

// ----------------------------------------------------------------------------
// the checkpoint's tensor set

const load = (opts = {}) => {
  const m = randomGpt2(opts);
  return { ...m, parsed: parseSafetensors(m.bytes), cfg: readConfig(m.config) };
};
const KINDS = ['ln1_w', 'ln1_b', 'qkv_w', 'qkv_b', 'attproj_w', 'attproj_b', 'ln2_w', 'ln2_b', 'fc_w', 'fc_b', 'fcproj_w', 'fcproj_b'];

for (const dtype of ['F32', 'F16', 'BF16']) {
  for (const prefix of ['', 'transformer.']) {
    test(`checkpoint: a ${dtype} GPT-2 ${prefix ? 'with' : 'without'} the "transformer." prefix loads, every value as written`, () => {
      const { bytes, parsed, cfg, tensors } = load({ L: 3, H: 2, C: 8, V: 11, P: 5, dtype, prefix, seed: 7 });
      const g = gpt2Tensors(cfg, parsed);
      assert.equal(g.prefix, prefix);
      assert.deepEqual(g.list.map((e) => `${e.kind}@${e.layer}`),
        ['wte@-1', 'wpe@-1', ...[0, 1, 2].flatMap((i) => KINDS.map((k) => `${k}@${i}`)), 'lnf_w@-1', 'lnf_b@-1']);
      assert.deepEqual(g.list.map((e) => e.name), gpt2Shapes({ L: 3, C: 8, V: 11, P: 5 }).map(([n]) => prefix + n));
      assert.deepEqual(g.get('qkv_w', 1).shape, [8, 24]);
      assert.equal(g.get('wte').name, `${prefix}wte.weight`);
      for (const e of g.list) {
        const out = new Float32Array(e.shape.reduce((a, b) => a * b, 1));
        readTensor(bytes, e.info, out);
        assert.deepEqual(out, tensors.get(e.name), e.name);
      }
      assert.deepEqual(g.ignored, []);
    });
  }
}

test('checkpoint: the extra tensors HF keeps are ignored, each with a reason', () => {
  for (const prefix of ['', 'transformer.']) {
    const { parsed, cfg } = load({ hf: true, prefix, dtype: 'F16' });
    const g = gpt2Tensors(cfg, parsed);
    assert.deepEqual(g.ignored.map((x) => x.name).sort(),
      [`${prefix}h.0.attn.bias`, `${prefix}h.0.attn.masked_bias`, `${prefix}h.1.attn.bias`, `${prefix}h.1.attn.masked_bias`, 'lm_head.weight'].sort());
    assert.ok(g.ignored.every((x) => typeof x.reason === 'string' && x.reason.length > 10));
    assert.equal(g.list.length, 2 + 2 * 12 + 2);
  }
});

test('checkpoint: an ignored buffer may be of any dtype (a BOOL causal mask)', () => {
  const m = randomGpt2();
  const parsed = parseSafetensors(m.bytes);
  const file = new Map([...parsed.tensors].map(([name, info]) => [name, { shape: info.shape, dtype: info.dtype, bytes: m.bytes.subarray(info.begin, info.end) }]));
  file.set('h.0.attn.bias', { shape: [1, 1, 8, 8], dtype: 'BOOL', bytes: new Uint8Array(64).fill(1) });
  const g = gpt2Tensors(readConfig(m.config), parseSafetensors(writeSafetensors(file)));
  assert.deepEqual(g.ignored.map((x) => x.name), ['h.0.attn.bias']);
});

// a file from a random GPT-2 with some tensors replaced, renamed or removed
function edited(opts, edit) {
  const m = randomGpt2(opts);
  const parsed = parseSafetensors(m.bytes);
  const file = new Map([...parsed.tensors].map(([name, info]) => [name, { shape: info.shape, dtype: info.dtype, bytes: m.bytes.subarray(info.begin, info.end) }]));
  edit(file);
  return { parsed: parseSafetensors(writeSafetensors(file)), cfg: readConfig(m.config) };
}
const tensorErr = ({ parsed, cfg }, pattern) => expectError(() => gpt2Tensors(cfg, parsed), 'INVALID_MODEL', pattern);
const rename = (file, from, to) => { file.set(to, file.get(from)); file.delete(from); };

test('checkpoint: a mix of prefixed and unprefixed names is refused', () => {
  tensorErr(edited({ prefix: 'transformer.' }, (f) => rename(f, 'transformer.ln_f.bias', 'ln_f.bias')),
    /the tensor names mix two prefixes: "transformer\.wte\.weight" has "transformer\." and "ln_f\.bias" has none/);
});

test('checkpoint: an unexpected tensor is refused by name', () => {
  tensorErr(edited({}, (f) => f.set('h.0.crossattention.c_attn.weight', { shape: [1], data: [0] })), /unexpected tensor "h\.0\.crossattention\.c_attn\.weight": not a parameter of GPT-2/);
  tensorErr(edited({}, (f) => f.set('score.weight', { shape: [1], data: [0] })), /unexpected tensor "score\.weight"/);
  tensorErr(edited({}, (f) => rename(f, 'h.1.ln_1.bias', 'h.01.ln_1.bias')), /unexpected tensor "h\.01\.ln_1\.bias"/);
  tensorErr(edited({ prefix: 'transformer.' }, (f) => f.set('transformer.extra', { shape: [1], data: [0] })), /unexpected tensor "transformer\.extra": not a parameter of GPT-2 under the prefix "transformer\."/);
});

test('checkpoint: a missing tensor names the tensor and its expected shape', () => {
  tensorErr(edited({}, (f) => f.delete('h.1.mlp.c_fc.bias')), /tensor "h\.1\.mlp\.c_fc\.bias" is missing: expected shape \[32\] \(4·n_embd\)/);
  tensorErr(edited({ prefix: 'transformer.' }, (f) => f.delete('transformer.wpe.weight')), /tensor "transformer\.wpe\.weight" is missing: expected shape \[8, 8\] \(n_positions, n_embd\)/);
});

test('checkpoint: a wrong shape names the tensor, the shape expected and the shape found', () => {
  tensorErr(edited({}, (f) => f.set('h.0.attn.c_attn.weight', { shape: [24, 8], data: new Float32Array(192) })),
    /tensor "h\.0\.attn\.c_attn\.weight" has shape \[24, 8\] but the config needs \[8, 24\] \(n_embd, 3·n_embd\) with n_embd = 8/);
  tensorErr(edited({}, (f) => f.set('ln_f.weight', { shape: [1, 8], data: new Float32Array(8) })), /tensor "ln_f\.weight" has shape \[1, 8\] but the config needs \[8\]/);
});

test('checkpoint: a config that disagrees with the tensors says which', () => {
  const m = randomGpt2({ L: 2 });
  const parsed = parseSafetensors(m.bytes);
  expectError(() => gpt2Tensors(readConfig({ ...m.config, n_layer: 4 }), parsed), 'INVALID_MODEL',
    /the config says n_layer = 4 but the file has tensors for 2 layers \(none for layers 2, 3\)/);
  expectError(() => gpt2Tensors(readConfig({ ...m.config, n_layer: 1 }), parsed), 'INVALID_MODEL',
    /tensor "h\.1\.ln_1\.weight" is for layer 1 but the config says n_layer = 1/);
  expectError(() => gpt2Tensors(readConfig({ ...m.config, vocab_size: 50257 }), parsed), 'INVALID_MODEL',
    /tensor "wte\.weight" has shape \[16, 8\] but the config needs \[50257, 8\] \(vocab_size, n_embd\) with vocab_size = 50257, n_embd = 8/);
  expectError(() => gpt2Tensors(readConfig({ ...m.config, n_positions: 1024 }), parsed), 'INVALID_MODEL', /"wpe\.weight" has shape \[8, 8\] but the config needs \[1024, 8\] \(n_positions, n_embd\)/);
  expectError(() => gpt2Tensors(readConfig({ ...m.config, n_embd: 16, n_head: 2 }), parsed), 'INVALID_MODEL', /"wte\.weight" has shape \[16, 8\] but the config needs \[16, 16\]/);
});

test('checkpoint: lm_head.weight must have the shape of wte (it is tied)', () => {
  tensorErr(edited({}, (f) => f.set('lm_head.weight', { shape: [16, 4], data: new Float32Array(64) })),
    /tensor "lm_head\.weight" has shape \[16, 4\] but wte\.weight has \[16, 8\]: GPT-2 ties them/);
});

test('checkpoint: a parameter in a dtype that cannot be read is refused by name', () => {
  tensorErr(edited({}, (f) => f.set('ln_f.bias', { shape: [8], dtype: 'I64', bytes: new Uint8Array(64) })), /tensor "ln_f\.bias" has dtype I64; attnmap reads F32, F16, BF16/);
});

test('checkpoint: wrong argument types are INVALID_ARGUMENT', () => {
  const { parsed, cfg } = load();
  expectError(() => gpt2Tensors({}, parsed), 'INVALID_ARGUMENT', /matchTensors: config must be readConfig/);
  expectError(() => gpt2Tensors(cfg, { tensors: {} }), 'INVALID_ARGUMENT', /parsed must be parseSafetensors/);
});
