// Issue 20, the model path against hostile text: huge labels and titles in the heatmap.
// Where a fix is about work ("it is linear now"), the test counts the work, not the time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderHeatmap } from '../../web/heatmap/heatmap.js';
import { graphemes, fit, cut, textEm } from '../../web/heatmap/text.js';
import { seeded } from '../helpers.js';

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
