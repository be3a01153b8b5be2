// A seeded property test of the model loader (web/model/): thousands of broken .safetensors files
// and config.json texts, made by mutating valid ones (flipped bytes, cut or grown files, lying
// header lengths, edited header JSON). Every outcome must be a parse or an AttentionError
// (INVALID_MODEL or TOO_LARGE: the argument types are always right here), never another
// exception, a hang or a huge allocation; what parses must be laid out as the format says and
// read through readTensor and gpt2Tensors without anything else going wrong.
//   MODEL_FUZZ_SEED=123 MODEL_FUZZ_CASES=20000 node --test tests/fuzz/model-load.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AttentionError } from '../../web/core/errors.js';
import { parseSafetensors, readTensor, READABLE_DTYPES } from '../../web/model/load/safetensors.js';
import { readConfig } from '../../web/model/load/config.js';
import { matchTensors as gpt2Tensors } from '../../web/model/load/checkpoint.js';
import { seeded } from '../helpers.js';
import { randomGpt2, writeSafetensors, rawSafetensors } from '../model-helpers.js';

const SEED = Number(process.env.MODEL_FUZZ_SEED || 15);
const CASES = Number(process.env.MODEL_FUZZ_CASES || 3000);
const ALLOWED = new Set(['INVALID_MODEL', 'TOO_LARGE']);

const rand = seeded(SEED);
const int = (n) => Math.floor(rand() * n);
const pick = (xs) => xs[int(xs.length)];

// ----------------------------------------------------------------------------
// valid files to start from

const SEEDS = [
  ...['F32', 'F16', 'BF16'].flatMap((dtype, i) => [
    randomGpt2({ L: 1, H: 2, C: 4, V: 5, P: 3, dtype, seed: i + 1 }),
    randomGpt2({ L: 2, H: 1, C: 4, V: 3, P: 2, dtype, prefix: 'transformer.', hf: true, seed: i + 10 }),
  ]),
  { config: null, bytes: writeSafetensors({ e: { shape: [0, 3], data: [] }, s: { shape: [], data: [1] }, h: { shape: [2], data: [1, -2], dtype: 'F16' } }, { metadata: { a: 'b' } }) },
];
const CONFIGS = SEEDS.filter((s) => s.config).map((s) => s.config);

const headerOf = (bytes) => {
  const n = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0, true);
  return { n, text: new TextDecoder().decode(bytes.subarray(8, 8 + n)), data: bytes.subarray(8 + n) };
};

// ----------------------------------------------------------------------------
// mutations

const DTYPES = ['F32', 'F16', 'BF16', 'I64', 'BOOL', 'F4', 'F6_E2M3', 'U8', 'f32', '', 'F32 ', 3, null];
const NUMBERS = () => pick([0, 1, -1, 2, 3, 4, 7, 8, 0.5, 2 ** 31, 2 ** 32, 2 ** 53, 2 ** 53 + 2, 1e300, -0, '4', null, true, [], {}]);
const JSON_CHARS = '{}[],:"0123456789-.eE \\tnul';

function flipBytes(bytes) {
  const out = bytes.slice(), n = headerOf(bytes).n;
  for (let k = 1 + int(4); k > 0; k--) {
    const at = rand() < 0.7 ? 8 + int(Math.max(1, n)) : int(out.length);
    if (at < out.length) out[at] ^= 1 << int(8);
  }
  return out;
}

// in the data section only: the file still parses, readTensor meets NaN, Inf and subnormals
function flipData(bytes) {
  const out = bytes.slice(), start = 8 + headerOf(bytes).n;
  if (start >= out.length) return out;
  for (let k = 1 + int(8); k > 0; k--) {
    const at = start + int(out.length - start);
    out[at] = rand() < 0.5 ? out[at] ^ (1 << int(8)) : pick([0x7f, 0xff, 0x80, 0x00, 0x7c, 0xfc]);
  }
  return out;
}

function cutOrGrow(bytes) {
  if (rand() < 0.6) return bytes.slice(0, int(bytes.length + 1));
  const out = new Uint8Array(bytes.length + 1 + int(16));
  out.set(bytes);
  for (let i = bytes.length; i < out.length; i++) out[i] = int(256);
  return out;
}

function lieAboutLength(bytes) {
  const out = bytes.slice(), view = new DataView(out.buffer), n = view.getUint32(0, true);
  const choice = int(5);
  if (choice === 0) view.setUint32(0, Math.max(0, n + int(33) - 16), true);
  else if (choice === 1) view.setUint32(4, int(2 ** 32), true);
  else if (choice === 2) view.setUint32(0, int(2 ** 32), true);
  else if (choice === 3) view.setUint32(0, 100_000_000 + int(3) - 1, true);
  else { view.setUint32(0, 0, true); view.setUint32(4, 0, true); }
  return out;
}

function editText(bytes) {
  const { text, data } = headerOf(bytes);
  let t = text;
  for (let k = 1 + int(3); k > 0; k--) {
    const at = int(t.length + 1), choice = int(3);
    if (choice === 0) t = t.slice(0, at) + t.slice(at + 1 + int(3));
    else if (choice === 1) t = t.slice(0, at) + pick(JSON_CHARS) + t.slice(at);
    else t = t.slice(0, at) + pick(JSON_CHARS) + t.slice(at + 1);
  }
  return rawSafetensors(t, [data], { pad: rand() < 0.5 });
}

function editHeader(bytes) {
  const { text, data } = headerOf(bytes);
  let h;
  try { h = JSON.parse(text); } catch { return editText(bytes); }    // after another mutation
  if (h === null || typeof h !== 'object' || Array.isArray(h)) return editText(bytes);
  const names = Object.keys(h).filter((k) => k !== '__metadata__');
  const name = pick(names.length ? names : ['x']);
  if (h[name] === null || typeof h[name] !== 'object' || Array.isArray(h[name])) h[name] = {};
  const entry = h[name];
  if (!Array.isArray(entry.data_offsets)) entry.data_offsets = [0, 4];
  switch (int(12)) {
    case 0: entry.dtype = pick(DTYPES); break;
    case 1: if (Array.isArray(entry.shape) && entry.shape.length) entry.shape[int(entry.shape.length)] = NUMBERS(); break;
    case 2: entry.shape = pick([[], [0], [2 ** 30, 2 ** 30, 2 ** 30], [2 ** 26, 2 ** 26], 5, null, [1, 2, 3, 4, 5, 6]]); break;
    case 3: entry.data_offsets[int(2)] = NUMBERS(); break;
    case 4: entry.data_offsets = [entry.data_offsets[1], entry.data_offsets[0]]; break;
    case 5: entry.data_offsets = entry.data_offsets.map((o) => o + int(9) - 4); break;
    case 6: delete h[name]; break;
    case 7: delete entry[pick(['dtype', 'shape', 'data_offsets'])]; break;
    case 8: h.__metadata__ = pick([{ a: 1 }, 'x', null, [], { a: 'b' }]); break;
    case 9: h[pick(names.length ? names : ['x']) + pick(['', '.x'])] = { ...entry }; break;
    case 10: h[name] = pick([[], 1, null, 'F32']); break;
    default: entry.shape = Array.isArray(entry.shape) ? entry.shape.slice().reverse() : entry.shape;
  }
  const out = rawSafetensors(JSON.stringify(h), [data], { pad: rand() < 0.5 });
  return rand() < 0.2 ? rawSafetensors(JSON.stringify(h), [data.subarray(0, int(data.length + 1))]) : out;
}

// brackets inserted deep into the header (the format nests 3 levels), sometimes millions deep
function deepNest(bytes) {
  const { text, data } = headerOf(bytes);
  const at = int(text.length + 1), depth = rand() < 0.05 ? 200_000 + int(200_000) : 1 + int(6);
  const open = rand() < 0.5 ? '[' : '{"k":';
  const nest = open.repeat(depth) + '0' + (open === '[' ? ']' : '}').repeat(depth);
  return rawSafetensors(text.slice(0, at) + nest + text.slice(at), [data]);
}

// a key repeated inside an entry or __metadata__ (JSON.parse would keep the last)
function duplicateInnerKey(bytes) {
  const { text, data } = headerOf(bytes);
  const m = /"(dtype|shape|data_offsets|format|a)":/.exec(text.slice(int(text.length)));
  if (!m) return editText(bytes);
  const at = text.indexOf(m[0], int(text.length / 2)) >= 0 ? text.indexOf(m[0], int(text.length / 2)) : text.indexOf(m[0]);
  const value = pick(['"F32"', '[0,4]', '[1]', '"pt"', '[999999999,1]']);
  return rawSafetensors(text.slice(0, at) + `${m[0]}${value},` + text.slice(at), [data]);
}

const MUTATIONS = [flipBytes, flipData, cutOrGrow, lieAboutLength, editText, editHeader, deepNest, duplicateInnerKey];

// ----------------------------------------------------------------------------
// the property

function expectAllowed(e, what) {
  if (!(e instanceof AttentionError)) {
    assert.fail(`${what}: threw ${e?.name}: ${e?.message}\n${e?.stack}`);
  }
  assert.ok(ALLOWED.has(e.code), `${what}: code ${e.code} (${e.message})`);
  assert.ok(typeof e.message === 'string' && e.message.length > 10, `${what}: message ${e.message}`);
}

// everything that parsed is laid out as the format says, and readable without surprises
function checkParsed(bytes, parsed) {
  const n = headerOf(bytes).n, dataStart = 8 + n;
  let total = 0;
  for (const [name, info] of parsed.tensors) {
    assert.ok(info.begin >= dataStart && info.begin <= info.end && info.end <= bytes.length, `${name} [${info.begin}, ${info.end})`);
    total += info.end - info.begin;
    if (!READABLE_DTYPES.includes(info.dtype)) continue;
    const out = new Float32Array(info.shape.reduce((a, b) => a * b, 1));
    try { readTensor(bytes, info, out); } catch (e) { expectAllowed(e, `readTensor ${name}`); }
  }
  assert.equal(total, bytes.length - dataStart, 'the tensors tile the data section');
}

test(`fuzz: ${CASES} mutated .safetensors files give a parse or an AttentionError (seed ${SEED})`, () => {
  const outcomes = { parsed: 0, loaded: 0, refused: 0, notLoaded: 0 };
  const messages = new Set();
  for (let i = 0; i < CASES; i++) {
    const seed = pick(SEEDS);
    let bytes = seed.bytes;
    for (let k = 1 + (rand() < 0.3 ? 1 : 0); k > 0; k--) bytes = pick(MUTATIONS)(bytes.length >= 8 ? bytes : seed.bytes);
    const what = `case ${i}`;
    let parsed;
    try {
      parsed = parseSafetensors(rand() < 0.5 ? bytes : bytes.buffer);
    } catch (e) {
      expectAllowed(e, `${what}: parseSafetensors`);
      outcomes.refused++;
      messages.add(e.message.replace(/\d+/g, 'N').slice(0, 60));
      continue;
    }
    outcomes.parsed++;
    checkParsed(bytes, parsed);
    if (!seed.config) continue;
    try {
      const g = gpt2Tensors(readConfig(seed.config), parsed);
      for (const e of g.list) readTensor(bytes, e.info, new Float32Array(e.shape.reduce((a, b) => a * b, 1)));
      outcomes.loaded++;
    } catch (e) {
      expectAllowed(e, `${what}: gpt2Tensors/readTensor`);
      outcomes.notLoaded++;
      messages.add(e.message.replace(/\d+/g, 'N').slice(0, 60));
    }
  }
  // the mutations reach both sides and many different refusals
  assert.ok(outcomes.parsed > CASES / 10, `only ${outcomes.parsed} parsed`);
  assert.ok(outcomes.loaded > 0 && outcomes.notLoaded > 0, `loaded ${outcomes.loaded}, refused after parsing ${outcomes.notLoaded}`);
  assert.ok(outcomes.refused > CASES / 4, `only ${outcomes.refused} refused`);
  assert.ok(messages.size >= 15, `only ${messages.size} kinds of refusal:\n${[...messages].join('\n')}`);
});

// sizes a config can lie with: each must be refused against the file's tensors, at once
const HUGE = () => pick([2 ** 31 - 1, 2 ** 30, 2 ** 24 + 1, 65_536, 4097, 2 ** 31, 1e15]);

test('fuzz: mutated config.json texts give a config or an AttentionError', () => {
  let read = 0;
  for (let i = 0; i < 1500; i++) {
    let text = JSON.stringify(pick(CONFIGS));
    if (rand() < 0.5) {
      for (let k = 1 + int(3); k > 0; k--) {
        const at = int(text.length + 1);
        text = text.slice(0, at) + (rand() < 0.5 ? pick(JSON_CHARS) : '') + text.slice(at + (rand() < 0.5 ? 1 : 0));
      }
    } else {
      const c = JSON.parse(text), keys = Object.keys(c);
      const key = rand() < 0.8 ? pick(keys) : pick(['hidden_size', 'n_inner', 'pruned_heads', 'max_position_embeddings', 'tie_word_embeddings']);
      if (rand() < 0.2) delete c[key]; else c[key] = pick([NUMBERS(), pick(DTYPES), 'gelu_new', 1e-5, 1e-50, false, true, c.n_embd * 4, { 0: [1] }, HUGE()]);
      text = JSON.stringify(c);
    }
    try {
      const c = readConfig(rand() < 0.5 ? text : JSON.parse(text));
      assert.ok(c.n_embd % c.n_head === 0 && c.layer_norm_epsilon > 0);
      read++;
    } catch (e) {
      if (e instanceof SyntaxError) continue;                      // JSON.parse in this test, before readConfig
      expectAllowed(e, `config case ${i}`);
    }
  }
  assert.ok(read > 100, `only ${read} configs read`);
});

test('fuzz: configs with huge sizes over real files are refused against the tensors, never allocated or looped over', () => {
  let refused = 0;
  for (let i = 0; i < 600; i++) {
    const seed = pick(SEEDS.filter((x) => x.config));
    const c = { ...seed.config };
    for (let k = 1 + int(2); k > 0; k--) c[pick(['n_layer', 'n_head', 'n_embd', 'vocab_size', 'n_positions', 'num_hidden_layers', 'hidden_size'])] = HUGE();
    try {
      gpt2Tensors(readConfig(c), parseSafetensors(seed.bytes));
    } catch (e) {
      expectAllowed(e, `huge config case ${i}`);
      refused++;
    }
  }
  assert.equal(refused, 600, 'no huge size matches a small file');
});

// ids a caller can get wrong: lying lengths, holes, wrong element types, getters that throw or
// change, typed arrays of every kind. forward and generate answer each at the call with a
// result or an INVALID_ARGUMENT, reading no element of a list longer than the model takes.
test('fuzz: ids with lying lengths and odd elements give a result or INVALID_ARGUMENT at the call', async () => {
  const { loadModel } = await import('../../web/model/model.js');
  const seed = SEEDS[0];
  const model = await loadModel({ config: { ...seed.config, n_positions: seed.config.n_positions }, weights: seed.bytes });
  const P = seed.config.n_positions, V = seed.config.vocab_size;
  const element = () => pick([0, 1, V - 1, V, -1, 0.5, NaN, '1', null, undefined, 2 ** 31, 1n, {}]);
  const make = () => {
    const n = pick([0, 1, P, P + 1, 2 ** 32 - 1, 1e9, int(P + 2)]);
    switch (int(5)) {
      case 0: return { ids: Array.from({ length: Math.min(n, P + 2) }, () => (rand() < 0.9 ? int(V) : element())) };
      case 1: return { ids: new Proxy([], { get: (t, k) => (k === 'length' ? n : rand() < 0.95 ? int(V) : element()) }), liar: n };
      case 2: return { ids: { length: n, 0: 1 } };
      case 3: return { ids: new (pick([Int32Array, Uint8Array, Float64Array, Float32Array, Uint32Array]))(Math.min(n, P + 2)).map(() => int(V)) };
      default: return { ids: new Proxy([1, 2], { get: (t, k) => { if (k !== 'length' && rand() < 0.5) throw new Error('trap'); return k === 'length' ? 2 : 1; } }) };
    }
  };
  let ok = 0, refused = 0;
  try {
    for (let i = 0; i < 400; i++) {
      const made = make();
      let reads = 0;
      const counted = made.liar > P ? new Proxy([], { get: (t, k) => (k === 'length' ? made.liar : (reads++, 0)) }) : made.ids;
      for (const call of [() => model.forward(counted), () => model.generate(counted, { maxTokens: 1 })]) {
        try { call(); ok++; } catch (e) {
          assert.ok(e instanceof AttentionError && e.code === 'INVALID_ARGUMENT', `case ${i}: ${e?.name} ${e?.code}: ${e?.message}`);
          refused++;
        }
      }
      assert.equal(reads, 0, `case ${i}: elements of a list of ${made.liar} were read`);
    }
  } finally {
    model.dispose();
  }
  assert.ok(ok > 20 && refused > 100, `${ok} results, ${refused} refusals`);
});
