// head-view.test.js - renderHeadView (web/heatmap/head-view.js), BertViz's head view, against the
// numbers it draws: the toy model's layer 1 (PyTorch-exact, tests/unit/toy-model.test.js) through
// attnmap/model; every line's weight is the map's value at its row and column, its opacity that
// weight; a zero weight (the causal mask) has no line; hidden heads and focus leave out what they
// say; tokens are focusable buttons named in zh and en; the output is well-formed XML; a layer
// where forward computed only some heads (the others null) draws those, in their own colours.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { renderHeadView, HEAD_COLOURS } from '../../web/heatmap/head-view.js';
import { loadModel } from '../../web/model/model-node.js';

const model = await loadModel('toy-zh');
const ids = model.encode('我看见小狗在追猫');
const tokens = model.tokens(ids), n = ids.length;
const { attention } = model.forward(ids, { attention: { layers: [1] } });
const maps = attention[1];
const H = maps.length;

// every <line> as { head, row, col, value, opacity } and its <g>'s colour
function linesOf(svg) {
  const out = [];
  for (const g of svg.matchAll(/<g class="hv-head" data-head="([^"]+)" stroke="([^"]+)"[^>]*>([\s\S]*?)<\/g>/g)) {
    for (const m of g[3].matchAll(/<line class="hv-line" data-head="([^"]+)" data-row="(\d+)" data-col="(\d+)" data-value="([^"]+)"[^>]*stroke-opacity="([^"]+)"\/>/g)) {
      assert.equal(m[1], g[1], 'a line sits in its head\'s group');
      out.push({ head: Number(m[1]), colour: g[2], row: Number(m[2]), col: Number(m[3]), value: Number(m[4]), opacity: Number(m[5]) });
    }
  }
  return out;
}

test('every line is the weight of its head, row and column; zeros (the causal mask) draw nothing; a colour per head', () => {
  const svg = renderHeadView(maps, { tokens, heads: maps.map((_, h) => h) });
  const lines = linesOf(svg);
  let nonZero = 0;
  for (let h = 0; h < H; h++) {
    for (let r = 0; r < n; r++) {
      for (let c = 0; c < n; c++) {
        const v = maps[h].data[r * n + c];
        const line = lines.find((l) => l.head === h && l.row === r && l.col === c);
        if (v > 0) {
          nonZero++;
          assert.ok(line, `head ${h}: ${tokens[r]} -> ${tokens[c]} (${v}) has a line`);
          assert.equal(line.value, v, 'data-value is the weight as given');
          assert.equal(line.opacity, Math.round(v * 1000) / 1000, 'opacity is the weight');
          assert.equal(line.colour, HEAD_COLOURS[h]);
        } else {
          assert.equal(line, undefined, `head ${h}: no line above the diagonal (${r}, ${c})`);
          assert.ok(c > r, 'only the causal mask is zero here');
        }
      }
    }
  }
  assert.equal(lines.length, nonZero);
  assert.equal(nonZero, H * n * (n + 1) / 2, 'causal: each row sees itself and those before');
});

test('hidden heads are not drawn; focus on a query keeps its row, on a key its column; min drops the faint lines', () => {
  const only = linesOf(renderHeadView(maps, { tokens, hidden: [0, 2] }));
  assert.deepEqual([...new Set(only.map((l) => l.head))].sort(), [1, 3]);
  const chase = tokens.indexOf('追');
  assert.ok(chase > 0, `追 is a token: ${tokens.join(' ')}`);
  const q = linesOf(renderHeadView(maps, { tokens, focus: { side: 'query', index: chase } }));
  assert.ok(q.length === H * (chase + 1) && q.every((l) => l.row === chase), 'the query\'s lines alone, to every key it sees');
  const k = linesOf(renderHeadView(maps, { tokens, focus: { side: 'key', index: 0 } }));
  assert.ok(k.length === H * n && k.every((l) => l.col === 0), 'the key\'s lines alone, from every query');
  const strong = linesOf(renderHeadView(maps, { tokens, min: 0.5 }));
  assert.ok(strong.length > 0 && strong.every((l) => l.value > 0.5));
  assert.equal(strong.length, maps.reduce((s, m) => s + Array.from(m.data).filter((v) => v > 0.5).length, 0));
});

test('tokens: two columns of focusable buttons, named in zh and en; the focused one pressed', () => {
  const zh = renderHeadView(maps, { tokens, focus: { side: 'query', index: 1 } });
  const buttons = [...zh.matchAll(/<g class="hv-token( hv-focus)?" role="button" tabindex="0" data-side="(query|key)" data-index="(\d+)" aria-pressed="(true|false)" aria-label="([^"]+)">/g)];
  assert.equal(buttons.length, 2 * n);
  assert.deepEqual(buttons.filter((b) => b[4] === 'true').map((b) => [b[2], Number(b[3])]), [['query', 1]]);
  assert.match(buttons[1][5], new RegExp(`^${tokens[1]}（第 2 个词）：只看它看向别人的线$`));
  const shown = [...zh.matchAll(/<g class="hv-token[^>]*><text [^>]*>([^<]*)<\/text><\/g>/g)].map((m) => m[1]);
  assert.deepEqual(shown, [...tokens, ...tokens], 'each column shows the tokens');
  const long = renderHeadView([[[1]]], { tokens: ['一二三四五六七八九十'] });
  assert.match(long, />一二三四五六七…<\/text>/, 'a long token is cut with an ellipsis; its full text is in the button\'s name');
  assert.match(long, /aria-label="一二三四五六七八九十（第 1 个词）/);
  const en = renderHeadView(maps, { tokens, lang: 'en' });
  assert.match(en, /aria-label="[^"]+ \(token 1\): show only the lines where it looks at others"/);
  assert.match(en, /<title id="hv-title">Head view: who looks at whom<\/title>/);
  assert.equal(renderHeadView(maps, { tokens }), renderHeadView(maps, { tokens }), 'the same string for the same input');
});

test('the SVG is well-formed (xmllint) and escapes what it is given', (t) => {
  const svg = renderHeadView([[[1, 0], [0.25, 0.75]]], { tokens: ['<a>', '"&"'], title: '</svg><script>' });
  assert.ok(!svg.includes('<script>') && !svg.includes('<a>'));
  const probe = spawnSync('xmllint', ['--version'], { encoding: 'utf8' });
  if (probe.error) return t.skip('xmllint is not installed');
  for (const s of [svg, renderHeadView(maps, { tokens, lang: 'en', focus: { side: 'key', index: 2 } })]) {
    const r = spawnSync('xmllint', ['--noout', '-'], { input: s, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  }
});

test('bad input: clear TypeErrors and RangeErrors naming renderHeadView', () => {
  assert.throws(() => renderHeadView([]), /renderHeadView: maps must be a non-empty array/);
  assert.throws(() => renderHeadView([[[1, 0, 0], [0, 1, 0]]]), /renderHeadView: maps\[0\] is 2×3; a head's map is n×n/);
  assert.throws(() => renderHeadView([[[1]], [[1, 0], [0, 1]]]), /renderHeadView: maps\[1\] is 2×2 but maps\[0\] is 1×1/);
  assert.throws(() => renderHeadView([[[1]]], { tokns: ['a'] }), /renderHeadView: unknown option "tokns"/);
  assert.throws(() => renderHeadView([[[1]]], { tokens: ['a', 'b'] }), /renderHeadView: tokens must be an array of 1/);
  assert.throws(() => renderHeadView([[[1]]], { focus: { side: 'query', index: 3 } }), /renderHeadView: focus must be null or/);
  assert.throws(() => renderHeadView([[[NaN]]]), /renderHeadView: maps\[0\]/);
});

// issue 39, item 4: forward(ids, { attention: { heads } }) gives null for the heads not asked for;
// renderHeadView threw on them ("maps[0] must be a matrix"), so the README's layer could not be drawn
test('a layer with only some heads computed: those heads are drawn, each in its own colour, and the description names them', () => {
  const some = model.forward(ids, { attention: { layers: [1], heads: [1, 3] } }).attention[1];
  assert.deepEqual(some.map((m) => m !== null), [false, true, false, true], 'forward gives null for the other heads');
  const svg = renderHeadView(some, { tokens, lang: 'en' });
  const lines = linesOf(svg);
  const full = linesOf(renderHeadView(maps, { tokens, lang: 'en' })).filter((l) => l.head === 1 || l.head === 3);
  assert.deepEqual(lines, full, 'the lines of heads 1 and 3, as with every head computed');
  assert.deepEqual([...new Set(lines.map((l) => l.colour))], [HEAD_COLOURS[1], HEAD_COLOURS[3]], 'a head keeps the colour of its index');
  assert.match(svg, /<desc id="hv-desc">[^<]*\(heads 1, 3\)\.<\/desc>/, 'the description says which heads are drawn');
  assert.match(renderHeadView(some, { tokens }), /<desc id="hv-desc">[^<]*（头 1、3）。<\/desc>/);
  const named = renderHeadView(some, { tokens, heads: ['a', 'b', 'c', 'd'], colours: ['red', 'green', 'blue', 'black'], hidden: ['d'], focus: { side: 'key', index: 0 } });
  assert.deepEqual(linesOf(named).map((l) => [l.colour, l.col]), Array.from({ length: n }, () => ['green', 0]), 'labels and colours count the null heads; hidden and focus apply');
  assert.throws(() => renderHeadView([null, [[1]], [[1, 0], [0, 1]]]), /renderHeadView: maps\[2\] is 2×2 but maps\[1\] is 1×1/);
});

test('a layer with no head computed is a TypeError saying so (the renderer\'s errors, as renderHeatmap\'s)', () => {
  const none = model.forward(ids, { attention: { layers: [0] } }).attention[1];
  assert.ok(none.every((m) => m === null), 'layer 1 was not asked for');
  assert.throws(() => renderHeadView(none, { tokens }), (e) => e instanceof TypeError &&
    new RegExp(`renderHeadView: maps has ${H} heads and none was computed \\(all null\\)`).test(e.message));
});
