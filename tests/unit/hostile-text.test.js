// Issue 20, the model path against hostile text: huge labels and titles in the heatmap, huge
// lines and keys in the tokenizer files (cut in the messages), byte order marks, ids that change
// as they are read, words that made WordPiece quadratic, and top-k over a large vocabulary.
// Where a fix is about work ("it is linear now"), the test counts the work, not the time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { renderHeatmap } from '../../web/heatmap/heatmap.js';
import { graphemes, fit, cut, textEm } from '../../web/heatmap/text.js';
import { createBpe, byteToUnicode } from '../../web/model/tokenizers/bpe.js';
import { createWordPiece } from '../../web/model/tokenizers/wordpiece.js';
import { createTokenizer } from '../../web/model/tokenizers/tokenizer.js';
import { topK, pickToken } from '../../web/model/sample.js';
import { expectError, root, seeded } from '../helpers.js';

const vocabTxt = fs.readFileSync(path.join(root, 'tests/fixtures/tokenizer/vocab.txt'), 'utf8');
const wp = createWordPiece(vocabTxt);
// a byte-level vocabulary: the 256 byte tokens, then 'ab' (merges: "a b")
const byteVocab = () => Object.fromEntries(byteToUnicode().map((c, b) => [c, b]));
const bpe = createBpe({ ...byteVocab(), ab: 256 }, 'a b\n');

// ----------------------------------------------------------------------------
// 6. labels: segmented a window at a time, and only as far as what can be shown

// what Intl.Segmenter is handed while fn runs: the longest string and the number of calls
function segmenterInputs(fn) {
  const proto = Intl.Segmenter.prototype, original = proto.segment;
  const seen = { longest: 0, calls: 0 };
  proto.segment = function (s) { seen.longest = Math.max(seen.longest, String(s).length); seen.calls++; return original.call(this, s); };
  try { return { result: fn(), ...seen }; } finally { proto.segment = original; }
}

const reference = (s) => Array.from(new Intl.Segmenter('en', { granularity: 'grapheme' }).segment(s), (x) => x.segment);

test('graphemes(): a window at a time, the same graphemes as segmenting the whole string', () => {
  // marks, joiners, emoji, flags (regional indicators), CR LF, Hangul jamo, a Devanagari
  // conjunct, lone surrogates, RTL: each sometimes repeated past the 256-unit window
  const parts = ['a', ' ', '\u0301', '\u200d', '🐈', '⬛', '🇫', '🇷', '\r', '\n', 'क', '्', 'ष', '\u1100', '\u1161',
    '\u11a8', '猫', '\ud800', '\udc00', '\ufe0f', '\u0600', 'ה'];
  const random = seeded(20);
  for (let t = 0; t < 150; t++) {
    let s = '';
    for (let i = Math.floor(random() * 800); i > 0; i--) {
      const p = parts[Math.floor(random() * parts.length)];
      s += random() < 0.05 ? p.repeat(Math.floor(random() * 700)) : p;
    }
    assert.deepEqual([...graphemes(s)], reference(s), `case ${t}: ${JSON.stringify(s.slice(0, 40))}… (${s.length} units)`);
  }
});

// fit, cut and textEm as they were, over the whole string segmented at once (the naive path)
const EM = (g) => {
  for (const ch of g) {
    const cp = ch.codePointAt(0);
    if (ZERO(cp)) continue;
    return cp === 0x20 ? 0.3 : WIDE(cp) ? 1 : 0.6;
  }
  return 0;
};
const ZERO = (cp) => (cp >= 0x300 && cp <= 0x36f) || (cp >= 0x200b && cp <= 0x200f) || cp === 0xfe0f || cp === 0xfeff;
const WIDE = (cp) => (cp >= 0x2e80 && cp <= 0xa4cf) || (cp >= 0x1f000 && cp <= 0x1faff);
const naiveEm = (s) => reference(s).reduce((w, g) => w + EM(g), 0);
function naiveFit(s, maxEm) {
  const gs = reference(s), total = gs.reduce((w, g) => w + EM(g), 0);
  if (total <= maxEm) return { text: s, em: total, cut: false };
  let w = 0, out = '';
  for (const g of gs) { if (w + EM(g) > maxEm - 1) break; out += g; w += EM(g); }
  out = out.replace(/\s+$/, '');
  return { text: `${out}…`, em: naiveEm(out) + 1, cut: true };
}
function naiveCut(s, max) {
  if (s.length <= max) return s;
  let out = '';
  for (const x of reference(s)) { if (out.length + x.length > max - 1) break; out += x; }
  return `${out.replace(/\s+$/, '')}…`;
}

test('fit, cut and textEm: as the naive path on ordinary text; a 100,000-character string is segmented in windows', () => {
  const random = seeded(6), parts = ['a', 'x ', ' ', '猫', '🐈', '\u0301', '\u200b', 'é', '  '];
  for (let t = 0; t < 300; t++) {
    let s = '';
    for (let i = Math.floor(random() * 60); i > 0; i--) s += parts[Math.floor(random() * parts.length)];
    const maxEm = 1 + random() * 20, max = 1 + Math.floor(random() * 40);
    assert.deepEqual(fit(s, maxEm), naiveFit(s, maxEm), `fit(${JSON.stringify(s)}, ${maxEm})`);
    assert.equal(cut(s, max), naiveCut(s, max), `cut(${JSON.stringify(s)}, ${max})`);
    assert.equal(textEm(s), naiveEm(s), `textEm(${JSON.stringify(s)})`);
  }
  const huge = 'x'.repeat(1e5);
  const { result, longest } = segmenterInputs(() => [fit(huge, 12), cut(huge, 5000), textEm(huge)]);
  assert.equal(result[0].text, `${'x'.repeat(18)}…`);
  assert.equal(result[1], `${'x'.repeat(4999)}…`);
  assert.ok(Math.abs(result[2] - 60000) < 1e-3, `textEm: ${result[2]}`);
  // the whole string at once made every step of the segmenter cost its length: minutes
  assert.ok(longest <= 512, `Intl.Segmenter was handed ${longest} units at once`);
  // a grapheme longer than the window (one letter and 300,000 marks) is one grapheme, then on
  const marks = `a${'\u0301'.repeat(300000)}${'y'.repeat(100000)}`;
  const g = graphemes(marks);
  assert.equal(g.next().value.length, 300001);
  assert.equal(g.next().value, 'y');
});

test('renderHeatmap with a 100,000-character label, title and captions: cut where drawn, whole in <title>, segmented in windows', () => {
  const token = 'x'.repeat(100000), title = 't'.repeat(90000);
  const { result: svg, longest } = segmenterInputs(() => renderHeatmap([[0.5, 0.5], [0.2, 0.8]], {
    rowLabels: [token, 'b'], colLabels: ['a', token], title, rowCaption: 'r'.repeat(100000), colCaption: 'c'.repeat(100000),
  }));
  assert.ok(longest <= 512, `Intl.Segmenter was handed ${longest} units at once (it took seconds per label before)`);
  const drawn = [...svg.matchAll(/<text class="row-label"[^>]*>(?:<title>([^<]*)<\/title>)?([^<]*)<\/text>/g)];
  assert.equal(drawn.length, 2);
  assert.equal(drawn[0][1], token, 'the whole label in its <title>');
  assert.match(drawn[0][2], /^x{10,30}…$/, 'the drawn label is cut');
  assert.ok(svg.includes(`aria-label="${title}`), 'the whole title in the root\'s aria-label');
});

// ----------------------------------------------------------------------------
// 13. a huge line or key of a tokenizer file is quoted in 80 characters

const huge = (c, n = 1e6) => c.repeat(n);
const cutQuoted = (e) => {
  assert.ok(e.message.length < 400, `the message has ${e.message.length} characters`);
  assert.match(e.message, /"[^"]{80}…"/, 'the input quoted, cut at 80 characters with …');
};

test('tokenizer files: a 1 MB line or key is cut to 80 characters in every message', () => {
  const v = byteVocab();
  // merges.txt: a line that is not two tokens, a token not in vocab.json, a repeated merge
  cutQuoted(expectError(() => createBpe(v, huge('z')), 'INVALID_MODEL', /^merges\.txt line 1: ".*" is not two tokens/));
  cutQuoted(expectError(() => createBpe(v, `a ${huge('b')}`), 'INVALID_MODEL', /^merges\.txt line 1: token ".*" is not in vocab\.json/));
  const long = huge('q', 1000);
  cutQuoted(expectError(() => createBpe({ ...v, [long]: 256, [`${long}${long}`]: 257 }, `${long} ${long}\n${long} ${long}`),
    'INVALID_MODEL', /^merges\.txt line 2: the merge ".*" is a repeat/));
  // vocab.json: a key whose id is wrong, two keys with one id, an id that is a huge string
  cutQuoted(expectError(() => createBpe(JSON.stringify({ [huge('k')]: -1 }), ''), 'INVALID_MODEL', /^vocab\.json entry ".*": id -1 is not/));
  cutQuoted(expectError(() => createBpe({ ...v, [huge('k')]: 0 }, ''), 'INVALID_MODEL', /^vocab\.json entries ".*" and ".*" have the same id 0/));
  cutQuoted(expectError(() => createBpe({ ...v, x: huge('9') }, ''), 'INVALID_MODEL', /^vocab\.json entry "x": id ".*" is not an integer/));
  // vocab.txt: a repeated line, an unknown token asked for that it lacks
  cutQuoted(expectError(() => createWordPiece(`[UNK]\n${huge('w')}\n${huge('w')}\n`), 'INVALID_MODEL', /^vocab\.txt line 3 repeats line 2 \(".*"\)/));
  cutQuoted(expectError(() => createWordPiece('[UNK]\n', { unk: huge('u') }), 'INVALID_MODEL', /^vocab\.txt has no line ".*" \(the unknown token\)/));
  // through createTokenizer too
  cutQuoted(expectError(() => createTokenizer({ vocab: v, merges: huge('z') }), 'INVALID_MODEL', /merges\.txt line 1/));
});

// ----------------------------------------------------------------------------
// 14. one leading byte order mark is dropped from each tokenizer file

test('tokenizer files with a leading BOM (U+FEFF) load as without it; a second BOM is text', () => {
  const json = JSON.stringify({ ...byteVocab(), ab: 256 });
  const plain = createBpe(json, '#version: 0.2\na b\n');
  const bom = createBpe(`\ufeff${json}`, '\ufeff#version: 0.2\na b\n');
  assert.deepEqual(bom.encode('abc ab'), plain.encode('abc ab'));
  assert.deepEqual(createBpe(json, '\ufeffa b\n').encode('ab'), [256], 'the first merge keeps its name');
  const wordPiece = createWordPiece(`\ufeff${vocabTxt}`);
  assert.deepEqual(wordPiece.tokens([0, 1]), ['[PAD]', '[UNK]'], 'the first token is [PAD], not "\\ufeff[PAD]"');
  assert.deepEqual(wordPiece.encode('the cat'), wp.encode('the cat'));
  expectError(() => createBpe(json, '\ufeff\ufeffa b\n'), 'INVALID_MODEL', /merges\.txt line 1: token "\ufeffa" is not in vocab\.json/);
});

// ----------------------------------------------------------------------------
// 15. decode(ids) and tokens(ids) read each id once

// a list whose elements change at every read: [first, other, first, other, ...] per index
function flipping(first, other) {
  const reads = new Array(first.length).fill(0);
  return new Proxy([...first], {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) return reads[key]++ % 2 === 0 ? first[key] : other[key];
      return Reflect.get(target, key, receiver);
    },
  });
}

test('decode and tokens: ids read once (a Proxy that changes them gives the ids first read); a getter that throws is INVALID_ARGUMENT', () => {
  const cat = [6, 7], hello = [10, 11];
  assert.equal(wp.decode(flipping(cat, hello)), wp.decode(cat));
  assert.deepEqual(wp.tokens(flipping(cat, hello)), wp.tokens(cat));
  assert.equal(bpe.decode(flipping([256, 99], [104, 105])), 'abc');
  assert.deepEqual(bpe.tokens(flipping([256, 99], [104, 105])), ['ab', 'c']);
  // an id that is valid when checked and out of range when used
  assert.equal(wp.decode(flipping([6], [1e9])), 'cat');
  const throwing = new Proxy([1, 2], { get(t, k, r) { if (k === '1') throw new Error('boom'); return Reflect.get(t, k, r); } });
  for (const tok of [wp, bpe]) {
    expectError(() => tok.decode(throwing), 'INVALID_ARGUMENT', /^decode\(ids\): ids\[1\] cannot be read \(boom\)/);
    expectError(() => tok.tokens(throwing), 'INVALID_ARGUMENT', /^tokens\(ids\): ids\[1\] cannot be read \(boom\)/);
    const lying = new Proxy([], { get(t, k, r) { if (k === 'length') throw new Error('no length'); return Reflect.get(t, k, r); } });
    expectError(() => tok.decode(lying), 'INVALID_ARGUMENT', /decode\(ids\): ids: its length cannot be read/);
    assert.equal(tok.decode([]), '');
    assert.deepEqual(tok.tokens(new Int32Array(0)), []);
  }
});

// ----------------------------------------------------------------------------
// 17. WordPiece: no candidate longer than the longest token; top-k without a full sort

// the vocabulary lookups (Map.prototype.get) fn makes
function lookups(fn) {
  const original = Map.prototype.get;
  let count = 0;
  Map.prototype.get = function (key) { count++; return original.call(this, key); };
  try { return { result: fn(), count }; } finally { Map.prototype.get = original; }
}

test('WordPiece: 100-character words over an a / ##a vocabulary: one lookup per character (it was 50 per character)', () => {
  const small = createWordPiece('[UNK]\na\n##a\n');
  const text = `${'a'.repeat(100)} `.repeat(1000);
  const { result, count } = lookups(() => small.encode(text));
  assert.deepEqual(result, Array.from({ length: 1000 }, () => [1, ...Array(99).fill(2)]).flat());
  assert.ok(count <= 2 * text.length, `${count} lookups for ${text.length} characters`);
  // the longest match still wins where tokens are longer
  assert.deepEqual(wp.tokens(wp.encode('unaffable hello cats')), ['un', '##aff', '##able', 'hello', 'cat', '##s']);
});

test('topK: the ids of a full sort (ties: the lower id first), each logit read once', () => {
  const random = seeded(17);
  const values = [-Infinity, Infinity, 0, -2, 1.5, 3];
  for (let t = 0; t < 300; t++) {
    const n = 1 + Math.floor(random() * 400), k = 1 + Math.floor(random() * n);
    const logits = Float32Array.from({ length: n }, () => (random() < 0.5 ? values[Math.floor(random() * values.length)] : Math.round(random() * 8)));
    const sorted = Array.from(logits.keys()).sort((a, b) => logits[b] - logits[a] || a - b);
    assert.deepEqual(topK(logits, k), sorted.slice(0, k), `n ${n}, k ${k}`);
  }
  // pickToken reads a logit about once (a full sort read each about 2·log2(n) times: 34 here)
  const n = 100000, data = Array.from({ length: n }, () => random());
  let reads = 0;
  const counted = new Proxy(data, { get(t, key, r) { if (typeof key === 'string' && /^\d+$/.test(key)) reads++; return Reflect.get(t, key, r); } });
  const id = pickToken(counted, { temperature: 1, topK: 40, random: seeded(3) });
  assert.ok(topK(data, 40).includes(id));
  assert.ok(reads <= n + 3 * 40, `${reads} reads of ${n} logits`);
});

test('topK over a 1,000,000-token vocabulary: the 40 largest, in order', { timeout: 60000 }, () => {
  const random = seeded(5), n = 1e6;
  const logits = Float32Array.from({ length: n }, () => random());
  logits[777777] = 5; logits[3] = 5; logits[999999] = 4;
  const top = topK(logits, 40);
  assert.deepEqual(top.slice(0, 3), [3, 777777, 999999]);
  for (let i = 1; i < 40; i++) assert.ok(logits[top[i - 1]] >= logits[top[i]]);
  let bigger = 0;
  for (let i = 0; i < n; i++) if (logits[i] > logits[top[39]]) bigger++;
  assert.equal(bigger, 39);
});
