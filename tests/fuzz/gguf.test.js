// A seeded property test of the GGUF reader (web/model/load/gguf.js) and of the config from its
// metadata (web/model/load/gguf-config.js), issue 38: small valid files (tests/gguf-writer.js)
// with bytes flipped, u64 fields overwritten with lies (0, 2^32, 2^60, 2^64 - 1, the file's
// size), cut, or with a piece doubled. Every outcome must be a result whose tensors lie inside
// the file, aligned and apart, or an AttentionError INVALID_MODEL or TOO_LARGE; never another
// exception or a hang.
//   GGUF_FUZZ_SEED=7 GGUF_FUZZ_CASES=20000 node --test tests/fuzz/gguf.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AttentionError } from '../../web/core/errors.js';
import { parseGguf } from '../../web/model/load/gguf.js';
import { ggufConfig } from '../../web/model/load/gguf-config.js';
import { writeGguf, gv, smallFile } from '../gguf-writer.js';
import { seeded } from '../helpers.js';

const SEED = Number(process.env.GGUF_FUZZ_SEED || 38);
const CASES = Number(process.env.GGUF_FUZZ_CASES || 4000);
const ALLOWED = new Set(['INVALID_MODEL', 'TOO_LARGE']);

const rand = seeded(SEED);
const int = (n) => Math.floor(rand() * n);
const pick = (xs) => xs[int(xs.length)];

// a small Qwen2-shaped model file: the config can be read from it
const qwen = () => writeGguf({
  version: 2,
  alignment: 64,
  metadata: [
    ['general.architecture', gv.str('qwen2')], ['qwen2.block_count', gv.u32(1)], ['qwen2.context_length', gv.u32(64)],
    ['qwen2.embedding_length', gv.u32(64)], ['qwen2.feed_forward_length', gv.u32(128)], ['qwen2.attention.head_count', gv.u32(4)],
    ['qwen2.attention.head_count_kv', gv.u32(2)], ['qwen2.rope.freq_base', gv.f32(1e6)], ['qwen2.attention.layer_norm_rms_epsilon', gv.f32(1e-6)],
    ['tokenizer.ggml.tokens', gv.arr('string', ['a', 'b', 'c', 'd'])], ['tokenizer.ggml.token_type', gv.arr('i32', [1, 1, 3, 3])],
  ],
  tensors: [
    { name: 'token_embd.weight', ne: [64, 4], type: 'Q8_0' }, { name: 'blk.0.attn_q.weight', ne: [256, 1], type: 'Q4_K' },
    { name: 'blk.0.attn_q.bias', ne: [64], type: 'F32' }, { name: 'output_norm.weight', ne: [64], type: 'BF16' },
  ],
});
const BASES = [smallFile().bytes, qwen().bytes];
const LIES = [0n, 1n, 31n, 2n ** 32n, 2n ** 60n, 2n ** 63n, 2n ** 64n - 1n];

function mutate(base) {
  const b = base.slice();
  const v = new DataView(b.buffer);
  switch (int(5)) {
    case 0: for (let k = 1 + int(8); k > 0; k--) b[int(b.length)] ^= 1 << int(8); return b;
    case 1: {
      const at = int(b.length - 8);
      v.setBigUint64(at, pick([...LIES, BigInt(b.length), BigInt(b.length - at)]), true);
      return b;
    }
    case 2: return b.subarray(0, int(b.length));
    case 3: {
      const at = int(b.length), n = 1 + int(32);
      return Uint8Array.from([...b.subarray(0, at), ...b.subarray(at, at + n), ...b.subarray(at)]);
    }
    default: b[int(Math.min(b.length, 200))] = pick([0, 1, 9, 12, 13, 0x7f, 0xff]); return b;
  }
}

function expectAllowed(e, what) {
  if (!(e instanceof AttentionError)) assert.fail(`${what}: threw ${e?.name}: ${e?.message}\n${e?.stack}`);
  assert.ok(ALLOWED.has(e.code), `${what}: code ${e.code} (${e.message})`);
}

// what a result promises: every tensor inside the file, aligned, in order and apart
function checkResult(g, size, what) {
  let end = g.dataOffset;
  for (const t of g.tensors) {
    assert.ok(t.offset >= end && (t.offset - g.dataOffset) % g.alignment === 0, `${what}: ${t.name} at ${t.offset}`);
    assert.ok(t.offset + t.bytes <= size, `${what}: ${t.name} ends past the file`);
    end = t.offset + t.bytes;
  }
}

test(`${CASES} mutated GGUF files: a result inside the file, or INVALID_MODEL / TOO_LARGE`, () => {
  const outcomes = { parsed: 0, config: 0, refused: 0 };
  for (let i = 0; i < CASES; i++) {
    const bytes = mutate(pick(BASES)), what = `case ${i} (seed ${SEED})`;
    let g;
    try {
      g = parseGguf(bytes);
    } catch (e) {
      expectAllowed(e, what);
      outcomes.refused++;
      continue;
    }
    outcomes.parsed++;
    checkResult(g, bytes.length, what);
    try {
      ggufConfig(g.metadata, g.tensors);
      outcomes.config++;
    } catch (e) {
      expectAllowed(e, `${what}, its config`);
    }
  }
  // the mutations reach past the first check: some files parse, some configs are read
  assert.ok(outcomes.parsed > CASES / 20 && outcomes.config > 0 && outcomes.refused > CASES / 4, JSON.stringify(outcomes));
});

// strings are decoded by hand when short (gguf.js shortUtf8): the same string as TextDecoder
// gives, or INVALID_MODEL where TextDecoder refuses, on bytes drawn from UTF-8's edge cases
// (overlong forms, surrogates, past U+10FFFF, cut sequences)
test('short strings decode as TextDecoder decodes them, and invalid UTF-8 is INVALID_MODEL', () => {
  const EDGES = [0x41, 0x7f, 0x80, 0xbf, 0xc0, 0xc2, 0xc3, 0xa9, 0xdf, 0xe0, 0xe4, 0xb8, 0xad, 0xed, 0xa0, 0xef, 0xf0, 0x9f, 0x90, 0xf4, 0x8f, 0xf5, 0xff];
  const td = new TextDecoder('utf-8', { fatal: true });
  const { bytes: head } = writeGguf({ metadata: [['s', gv.str('')]] });
  const prefix = head.subarray(0, head.length - 8);
  for (let i = 0; i < CASES * 5; i++) {
    const s = Uint8Array.from({ length: 1 + int(10) }, () => (rand() < 0.3 ? int(256) : pick(EDGES)));
    const file = new Uint8Array(prefix.length + 8 + s.length);
    file.set(prefix);
    new DataView(file.buffer).setBigUint64(prefix.length, BigInt(s.length), true);
    file.set(s, prefix.length + 8);
    let want = null;
    try { want = td.decode(s); } catch { /* not UTF-8 */ }
    let got;
    try { got = parseGguf(file).metadata.get('s'); } catch (e) { expectAllowed(e, `bytes [${s}]`); got = null; }
    assert.equal(got, want, `bytes [${s}]`);
  }
});
