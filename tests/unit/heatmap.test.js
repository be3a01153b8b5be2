// Tests of web/heatmap/heatmap.js: snapshots of several renderings, plus structural checks that can fail
// without looking at a picture.
//
// Snapshot rule (STYLE.md): tests/snapshots/NAME.svg is written only when it is missing and CI
// is unset; under CI a missing snapshot fails. On a mismatch the new rendering is written to
// tests/snapshots/NAME-changed.svg and the test fails: look at both, then either fix the code or
// replace NAME.svg with NAME-changed.svg.
//
//   node --test tests/heatmap.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { renderHeatmap } from '../../web/heatmap/heatmap.js';

const SNAPSHOTS = fileURLToPath(new URL('../snapshots/', import.meta.url));

// ---------------------------------------------------------------------------------------------
// fixtures (inputs, not outputs)

// 猫吃鱼: softmax(Q·Kᵀ/2) of section 5, rounded to 4 decimals (tests/golden/attention.json, case
// section5-hand, has the full values from PyTorch).
const CAT = [[0.4104, 0.3117, 0.2779], [0.3157, 0.3686, 0.3157], [0.2786, 0.3079, 0.4135]];
const TOKENS = ['猫', '吃', '鱼'];
// causal: query i sees keys j <= i
const causalMask = (n) => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => j > i));
const CAT_CAUSAL = [[1, 0, 0], [0.4613, 0.5387, 0], [0.2786, 0.3079, 0.4135]];

// 16×16 causal weights with exact rational values: row i gives key j <= i weight (j+1) / Σ(j+1).
const N16 = 16;
const W16 = Array.from({ length: N16 }, (_, i) =>
  Array.from({ length: N16 }, (_, j) => (j <= i ? (j + 1) / (((i + 1) * (i + 2)) / 2) : 0)));
const T16 = 'The cat sat on the mat and then 猫 吃 鱼 , a fish 🐟 !'.split(' ');

// tokens are user input
const LONG = 'x'.repeat(200);
const HOSTILE = ['<img src=x onerror=alert(1)>', '"', '&', '</svg>', '\u200fשלום', '🐈‍⬛ 猫', LONG, "'", 'a\u0000b\ud800'];
const HOSTILE_SCORES = HOSTILE.map((_, i) => HOSTILE.map((_, j) => (i - j) * 1.5));

const CASES = {
  'cat-zh': () => renderHeatmap(CAT, { rowLabels: TOKENS, colLabels: TOKENS }),
  'cat-en-standalone': () => renderHeatmap(CAT, { rowLabels: TOKENS, colLabels: TOKENS, lang: 'en', decimals: 4, standalone: true }),
  'cat-causal-zh': () => renderHeatmap(CAT_CAUSAL, { rowLabels: TOKENS, colLabels: TOKENS, masked: causalMask(3), title: '因果遮蔽：猫吃鱼' }),
  'one-by-one': () => renderHeatmap([[1]], { rowLabels: ['猫'], colLabels: ['猫'], idPrefix: 'one' }),
  'causal-16-en': () => renderHeatmap(W16, { rowLabels: T16, colLabels: T16, masked: causalMask(N16), lang: 'en', standalone: true }),
  'hostile-diverging': () => renderHeatmap(HOSTILE_SCORES, {
    rowLabels: HOSTILE, colLabels: HOSTILE, scale: 'diverging', standalone: true,
    title: 'Raw scores <script>alert("t")</script> & more', idPrefix: 'hostile' }),
};

// ---------------------------------------------------------------------------------------------
// snapshots

function matchSnapshot(name, svg) {
  const file = `${SNAPSHOTS}${name}.svg`, changed = `${SNAPSHOTS}${name}-changed.svg`;
  if (!existsSync(file)) {
    if (process.env.CI !== undefined) {
      assert.fail(`snapshot tests/snapshots/${name}.svg is missing; under CI snapshots are never written. ` +
        'Run the tests once without CI set and commit the new file.');
    }
    mkdirSync(SNAPSHOTS, { recursive: true });
    writeFileSync(file, svg);
    return;
  }
  const expected = readFileSync(file, 'utf8').replace(/\r\n/g, '\n');
  if (svg === expected) { rmSync(changed, { force: true }); return; }
  writeFileSync(changed, svg);
  const a = expected.split('\n'), b = svg.split('\n');
  let line = 0;
  while (line < Math.max(a.length, b.length) && a[line] === b[line]) line++;
  const ea = String(a[line] ?? ''), eb = String(b[line] ?? '');
  let col = 0;
  while (col < Math.min(ea.length, eb.length) && ea[col] === eb[col]) col++;
  const around = (x) => (col > 60 ? '…' : '') + x.slice(Math.max(0, col - 60), col + 120);
  assert.fail(`tests/snapshots/${name}.svg differs from the rendering, first at line ${line + 1}, column ${col + 1}:\n` +
    `  expected: ${around(ea)}\n  actual:   ${around(eb)}\n` +
    `The new rendering is in tests/snapshots/${name}-changed.svg; if it is right, move it over ${name}.svg.`);
}

for (const [name, render] of Object.entries(CASES)) {
  test(`snapshot ${name}`, () => {
    const svg = render();
    parseXml(svg); // well-formed before it is compared
    matchSnapshot(name, svg);
  });
}

// ---------------------------------------------------------------------------------------------
// a small XML parser: enough to prove well-formedness (balanced tags, quoted attributes, no
// duplicate attributes, valid entity references, legal characters, one root) and to query the tree

const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
function unescapeXml(s, where) {
  return s.replace(/&([^;]*);?/g, (m, body) => {
    if (!m.endsWith(';')) throw new SyntaxError(`bare "&" in ${where}: ${JSON.stringify(s.slice(0, 80))}`);
    if (body in ENTITIES) return ENTITIES[body];
    if (/^#[0-9]+$/.test(body)) return String.fromCodePoint(Number(body.slice(1)));
    if (/^#x[0-9a-fA-F]+$/.test(body)) return String.fromCodePoint(parseInt(body.slice(2), 16));
    throw new SyntaxError(`unknown entity &${body}; in ${where}`);
  });
}

function parseXml(xml) {
  // eslint-disable-next-line no-control-regex
  const illegal = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.exec(xml);
  if (illegal) throw new SyntaxError(`character U+${illegal[0].charCodeAt(0).toString(16)} is not allowed in XML (at ${illegal.index})`);
  const root = { name: '#document', attrs: {}, children: [] };
  const stack = [root];
  let i = 0, roots = 0;
  const NAME = '[A-Za-z_:][A-Za-z0-9_:.-]*';
  const open = new RegExp(`<(${NAME})`, 'y');
  const attr = new RegExp(`\\s+(${NAME})\\s*=\\s*(?:"([^"<]*)"|'([^'<]*)')`, 'y');
  const end = /\s*(\/?)>/y;
  const close = new RegExp(`</(${NAME})\\s*>`, 'y');
  while (i < xml.length) {
    const top = stack[stack.length - 1];
    if (xml.startsWith('<!--', i)) {
      const e = xml.indexOf('-->', i + 4);
      if (e < 0) throw new SyntaxError('unterminated comment');
      i = e + 3;
    } else if (xml.startsWith('<?', i)) {
      const e = xml.indexOf('?>', i + 2);
      if (e < 0) throw new SyntaxError('unterminated processing instruction');
      i = e + 2;
    } else if (xml.startsWith('<![CDATA[', i)) {
      const e = xml.indexOf(']]>', i);
      if (e < 0 || stack.length === 1) throw new SyntaxError('bad CDATA section');
      top.children.push(xml.slice(i + 9, e));
      i = e + 3;
    } else if (xml.startsWith('</', i)) {
      close.lastIndex = i;
      const m = close.exec(xml);
      if (!m) throw new SyntaxError(`bad closing tag at ${i}: ${JSON.stringify(xml.slice(i, i + 40))}`);
      if (stack.length === 1 || top.name !== m[1]) {
        throw new SyntaxError(`</${m[1]}> at ${i} does not close <${top.name}>`);
      }
      stack.pop();
      i = close.lastIndex;
    } else if (xml[i] === '<') {
      open.lastIndex = i;
      const m = open.exec(xml);
      if (!m) throw new SyntaxError(`bad tag at ${i}: ${JSON.stringify(xml.slice(i, i + 40))}`);
      const el = { name: m[1], attrs: {}, children: [] };
      let p = open.lastIndex;
      for (;;) {
        attr.lastIndex = p;
        const a = attr.exec(xml);
        if (!a) break;
        if (Object.hasOwn(el.attrs, a[1])) throw new SyntaxError(`duplicate attribute ${a[1]} on <${el.name}>`);
        el.attrs[a[1]] = unescapeXml(a[2] ?? a[3], `attribute ${a[1]} of <${el.name}>`);
        p = attr.lastIndex;
      }
      end.lastIndex = p;
      const e = end.exec(xml);
      if (!e) throw new SyntaxError(`malformed tag <${el.name}> at ${i}: ${JSON.stringify(xml.slice(p, p + 40))}`);
      if (stack.length === 1 && ++roots > 1) throw new SyntaxError(`second root element <${el.name}>`);
      top.children.push(el);
      if (!e[1]) stack.push(el);
      i = end.lastIndex;
    } else {
      const e = xml.indexOf('<', i) < 0 ? xml.length : xml.indexOf('<', i);
      const text = xml.slice(i, e);
      if (stack.length === 1) {
        if (text.trim()) throw new SyntaxError(`text outside the root element: ${JSON.stringify(text.slice(0, 40))}`);
      } else {
        if (text.includes(']]>')) throw new SyntaxError('"]]>" in text');
        top.children.push(unescapeXml(text, `text inside <${top.name}>`));
      }
      i = e;
    }
  }
  if (stack.length > 1) throw new SyntaxError(`<${stack[stack.length - 1].name}> is never closed`);
  if (roots !== 1) throw new SyntaxError('no root element');
  return root.children.find((c) => typeof c !== 'string');
}

function findAll(node, pred, out = []) {
  if (typeof node === 'string') return out;
  if (pred(node)) out.push(node);
  for (const c of node.children) findAll(c, pred, out);
  return out;
}
const textOf = (node) => (typeof node === 'string' ? node : node.children.map(textOf).join(''));
const classes = (el) => (el.attrs.class ?? '').split(/\s+/);
const cells = (svg) => findAll(parseXml(svg), (e) => e.name === 'rect' && classes(e).includes('cell'));
const ALLOWED = new Set(['svg', 'title', 'desc', 'style', 'defs', 'pattern', 'linearGradient', 'stop',
  'g', 'rect', 'line', 'text']);

test('the parser in this file rejects what it should (so a pass means something)', () => {
  for (const bad of ['<svg><g></svg>', '<svg a="1" a="2"/>', '<svg>&nbsp;</svg>', '<svg>a & b</svg>',
    '<svg x="<"/>', '<svg/><svg/>', '<svg>\u0000</svg>', '<svg x=1/>', '<svg><img src=x onerror=alert(1)></svg>']) {
    assert.throws(() => parseXml(bad), SyntaxError, bad);
  }
  assert.equal(parseXml('<svg a="&lt;&amp;&#39;"><t>x &gt; y</t></svg>').attrs.a, "<&'");
});

// ---------------------------------------------------------------------------------------------
// structure

test('every rendering is well-formed XML and uses only the expected SVG elements', () => {
  for (const [name, render] of Object.entries(CASES)) {
    const root = parseXml(render());
    assert.equal(root.name, 'svg', name);
    const names = new Set(findAll(root, () => true).map((e) => e.name));
    for (const el of names) assert.ok(ALLOWED.has(el), `${name}: unexpected element <${el}>`);
  }
});

test('xmllint agrees that every rendering is well-formed', (t) => {
  const probe = spawnSync('xmllint', ['--version'], { encoding: 'utf8' });
  if (probe.error) {
    t.skip(`xmllint is not installed (${probe.error.code}); the parser in this file still checked well-formedness`);
    return;
  }
  for (const [name, render] of Object.entries(CASES)) {
    const r = spawnSync('xmllint', ['--noout', '-'], { input: render(), encoding: 'utf8' });
    assert.equal(r.status, 0, `${name}: xmllint says ${r.stderr}`);
  }
});

test('one <rect class="cell"> per matrix entry, with data-row and data-col', () => {
  for (const [matrix, rows, cols, opts] of [
    [CAT, 3, 3, { rowLabels: TOKENS, colLabels: TOKENS }],
    [[[1]], 1, 1, {}],
    [W16, 16, 16, { masked: causalMask(16) }],
    [[[1, 2, 3, 4]], 1, 4, {}],
    [{ data: new Float32Array(10), shape: [5, 2] }, 5, 2, {}],
  ]) {
    const rects = cells(renderHeatmap(matrix, opts));
    assert.equal(rects.length, rows * cols);
    const seen = new Set(rects.map((r) => `${r.attrs['data-row']},${r.attrs['data-col']}`));
    assert.equal(seen.size, rows * cols, 'every (row, col) exactly once');
    for (const r of rects) {
      assert.ok(Number(r.attrs['data-row']) < rows && Number(r.attrs['data-col']) < cols);
    }
  }
});

test('data-value round-trips the full-precision value', () => {
  const data = new Float32Array([0.31571677, 1 / 3, 1e-7, 0.99999994, 0, 123.456]);
  const f64 = [[Math.PI, -0.1 - 0.2, 5e-324], [1e21, -1e-10, 0.30000000000000004]];
  for (const [matrix, values] of [
    [{ data, shape: [2, 3] }, Array.from(data)],
    [f64, f64.flat()],
    [CAT, CAT.flat()],
  ]) {
    for (const r of cells(renderHeatmap(matrix))) {
      const p = Number(r.attrs['data-row']) * 3 + Number(r.attrs['data-col']);
      assert.equal(Number(r.attrs['data-value']), values[p], `cell ${p}`);
      assert.equal(r.attrs['data-value'], String(values[p]));
    }
  }
});

test('each cell has a <title> and an aria-label like "吃 → 猫: 0.3157" (row = query, column = key)', () => {
  const root = parseXml(CASES['cat-zh']());
  const groups = findAll(root, (e) => e.name === 'g' && classes(e).includes('cell-group'));
  assert.equal(groups.length, 9);
  const g = groups.find((x) => x.children.some((c) => c.name === 'rect' && c.attrs['data-row'] === '1' && c.attrs['data-col'] === '0'));
  assert.equal(g.attrs['aria-label'], '吃 → 猫: 0.3157');
  assert.equal(textOf(g.children.find((c) => c.name === 'title')), '吃 → 猫: 0.3157');
  // issue 24 item 17: the number drawn in the cell is not text of the cell, whose one name is its
  // aria-label (axe's label-content-name-mismatch): it is in the hidden group of numbers
  assert.ok(!findAll(g, (e) => e.name === 'text').length, 'no text inside the cell group');
  const numbers = findAll(root, (e) => e.name === 'g' && classes(e).includes('cell-values'));
  assert.equal(numbers.length, 1);
  assert.equal(numbers[0].attrs['aria-hidden'], 'true');
  const v = numbers[0].children.find((c) => c.name === 'text' && c.attrs['data-row'] === '1' && c.attrs['data-col'] === '0');
  assert.equal(textOf(v), '0.32', 'decimals defaults to 2');
});

test('the root has viewBox, width, height, role="img", an aria-label with the size, <title> and <desc>', () => {
  for (const [lang, title, caption] of [['zh', '注意力权重', '查询（谁在看）'], ['en', 'Attention weights', 'query (who is looking)']]) {
    const root = parseXml(renderHeatmap(CAT, { rowLabels: TOKENS, colLabels: TOKENS, lang }));
    assert.equal(root.attrs.role, 'img');
    assert.match(root.attrs.viewBox, /^-?\d+ -?\d+ \d+ \d+$/);
    const [, , w, h] = root.attrs.viewBox.split(' ');
    assert.equal(root.attrs.width, w);
    assert.equal(root.attrs.height, h);
    assert.ok(root.attrs.class.split(' ').includes('attnmap'));
    assert.ok(root.attrs['aria-label'].includes(title) && root.attrs['aria-label'].includes('3×3'));
    assert.equal(textOf(root.children.find((c) => c.name === 'title')), title);
    assert.ok(textOf(root.children.find((c) => c.name === 'desc')).length > 20);
    const captions = findAll(root, (e) => classes(e).includes('axis-caption')).map(textOf);
    assert.ok(captions.includes(caption), `${lang}: ${captions}`);
  }
});

test('no <style> and no style="" unless standalone; standalone has xmlns, a font stack and a background', () => {
  for (const [name, render] of Object.entries(CASES)) {
    const svg = render();
    if (svg.includes('attnmap-standalone')) continue;
    assert.doesNotMatch(svg, /<style|style=/i, name);
  }
  const inline = renderHeatmap(CAT, { rowLabels: TOKENS, colLabels: TOKENS, masked: causalMask(3) });
  assert.doesNotMatch(inline, /<style|style=/i);
  const file = renderHeatmap(CAT, { rowLabels: TOKENS, colLabels: TOKENS, standalone: true });
  const root = parseXml(file);
  assert.equal(root.attrs.xmlns, 'http://www.w3.org/2000/svg');
  const style = textOf(findAll(root, (e) => e.name === 'style')[0]);
  assert.ok(style.includes('system-ui, "PingFang SC", "Noto Sans CJK SC", "Microsoft YaHei", sans-serif'), style);
  assert.ok(findAll(root, (e) => classes(e).includes('attnmap-bg')).length === 1);
});

test('labels and captions use currentColor; cell numbers contrast with their fill', () => {
  const root = parseXml(renderHeatmap([[0, 1, 0.5]], { rowLabels: ['猫'], colLabels: ['a', 'b', 'c'] }));
  for (const el of findAll(root, (e) => ['row-label', 'col-label', 'axis-caption', 'attnmap-title'].some((c) => classes(e).includes(c)))) {
    assert.equal(el.attrs.fill, 'currentColor', el.attrs.class);
  }
  const valueFill = (col) => findAll(root, (e) => classes(e).includes('cell-value') && e.attrs['data-col'] === String(col))[0].attrs.fill;
  assert.equal(valueFill(0), '#ffffff', 'light text on viridis dark purple (0)');
  assert.equal(valueFill(1), '#111111', 'dark text on viridis yellow (1)');
  const div = parseXml(renderHeatmap([[-4, 0, 4]], { scale: 'diverging' }));
  const fills = findAll(div, (e) => classes(e).includes('cell-value')).map((e) => e.attrs.fill);
  assert.deepEqual(fills, ['#ffffff', '#111111', '#ffffff'], 'dark blue, white, dark red');
});

test('hostile labels are escaped everywhere and kept in full in titles', () => {
  const svg = CASES['hostile-diverging']();
  assert.ok(!svg.includes('<img'), 'no <img element');
  assert.ok(!svg.includes('<script'), 'no <script element');
  assert.equal(svg.match(/<\/svg>/g).length, 1, 'the only </svg> is the real one');
  const root = parseXml(svg);
  const titles = findAll(root, (e) => e.name === 'title').map(textOf);
  // the 200-character token is cut in the label, whole in the titles
  const longLabel = findAll(root, (e) => classes(e).includes('row-label'))[6];
  const shown = longLabel.children.filter((c) => typeof c === 'string').join('');
  assert.ok(shown.length < 30 && shown.endsWith('…'), `shown as ${JSON.stringify(shown)}`);
  assert.equal(textOf(longLabel.children.find((c) => c.name === 'title')), LONG);
  assert.ok(titles.some((x) => x.startsWith(`${LONG} → <img src=x onerror=alert(1)>: `)));
  assert.ok(titles.includes('\u2068\u200fשלום\u2069 → ": 4.5000'), 'an RTL token is isolated with FSI…PDI');
  assert.ok(titles.some((x) => x.startsWith("' → &: ")));
  assert.ok(titles.some((x) => x.startsWith('a\ufffdb\ufffd → ')), 'NUL and a lone surrogate become U+FFFD');
  assert.ok(textOf(root.children.find((c) => c.name === 'title')).startsWith('Raw scores <script>'));
});

test('layout adapts to label length: long labels widen the margin, short CJK labels stay compact', () => {
  const width = (labels) => Number(parseXml(renderHeatmap([[1, 0], [0, 1]], { rowLabels: labels, colLabels: ['a', 'b'] })).attrs.width);
  const cjk = width(['猫', '鱼']);
  const latin = width(['elephant', 'giraffe']);
  const long = width([LONG, 'b']);
  const cjkLong = width(['一二三四五六七八', '鱼']);
  assert.ok(cjk < latin && latin < long, `${cjk} < ${latin} < ${long}`);
  assert.ok(cjkLong > latin, 'eight CJK characters are wider than eight latin letters');
  assert.ok(long < 600, `a 200-character label is cut, not laid out in full (width ${long})`);
});

test('masked cells are hatched, keep data-value, and show no number', () => {
  const root = parseXml(CASES['cat-causal-zh']());
  const groups = findAll(root, (e) => classes(e).includes('cell-group'));
  const masked = groups.filter((g) => classes(g).includes('masked'));
  assert.equal(masked.length, 3);
  for (const g of masked) {
    const rect = g.children.find((c) => c.name === 'rect');
    assert.ok(Number(rect.attrs['data-col']) > Number(rect.attrs['data-row']));
    assert.match(rect.attrs.fill, /^url\(#attnmap-[a-z0-9]+-hatch\)$/);
    assert.equal(rect.attrs['data-value'], '0');
    assert.equal(rect.attrs['data-masked'], 'true');
    assert.ok(!g.children.some((c) => c.name === 'text'));
    assert.ok(g.attrs['aria-label'].endsWith('（已遮蔽）'), g.attrs['aria-label']);
  }
  assert.ok(findAll(root, (e) => classes(e).includes('masked-key')).length === 1);
  const typed = renderHeatmap(CAT_CAUSAL, { masked: { data: new Uint8Array([0, 1, 1, 0, 0, 1, 0, 0, 0]), shape: [3, 3] } });
  assert.equal(findAll(parseXml(typed), (e) => classes(e).includes('masked')).length, 3);
});

test('a small causal map: the masked key goes below the legend\'s lowest label instead of running under it', () => {
  const keyAndLegend = (svg) => {
    const root = parseXml(svg);
    const key = findAll(root, (e) => classes(e).includes('masked-key'))[0].children.find((c) => c.name === 'rect');
    const legend = findAll(root, (e) => classes(e).includes('legend'))[0];
    const labelYs = findAll(legend, (e) => e.name === 'text').map((e) => Number(e.attrs.y));
    const ramp = legend.children.find((c) => c.name === 'rect');
    return { keyY: Number(key.attrs.y), legendX: Number(ramp.attrs.x), lowest: Math.max(...labelYs) };
  };
  for (const lang of ['zh', 'en']) {
    // 3 tokens at 20 px: a 60 px grid beside a 100 px legend; the key's text is wider than the grid
    const small = keyAndLegend(renderHeatmap(CAT_CAUSAL, { masked: 'causal', cellSize: 20, lang }));
    assert.ok(small.keyY >= small.lowest + 11 / 2 + 4, `${lang}: key at y ${small.keyY}, the legend's lowest label at ${small.lowest}`);
    // a grid taller than the legend: the key stays 14 px under the grid, as before
    const big = keyAndLegend(renderHeatmap(CAT_CAUSAL, { masked: 'causal', cellSize: 56, lang }));
    assert.equal(big.keyY, 3 * 56 + 14, `${lang}: the key under a tall grid`);
  }
});

test('ids are unique, use idPrefix, and differ by default between different heatmaps', () => {
  const ids = (svg) => findAll(parseXml(svg), (e) => 'id' in e.attrs).map((e) => e.attrs.id);
  const a = ids(renderHeatmap(CAT, { masked: causalMask(3), idPrefix: 'head-1' }));
  assert.deepEqual(a, ['head-1-hatch', 'head-1-ramp']);
  const b = ids(renderHeatmap(CAT)), c = ids(renderHeatmap(CAT_CAUSAL));
  assert.notEqual(b[0], c[0]);
  assert.equal(ids(renderHeatmap(CAT, { legend: false })).length, 0, 'no legend, no mask: no ids');
});

test('the legend has tick labels over the colour domain; min/max and scale change it', () => {
  const ticks = (svg) => findAll(parseXml(svg), (e) => classes(e).includes('legend'))
    .flatMap((g) => findAll(g, (e) => e.name === 'text')).map(textOf);
  assert.deepEqual(ticks(renderHeatmap(CAT)), ['0', '0.25', '0.5', '0.75', '1']);
  assert.deepEqual(ticks(renderHeatmap([[-3, 1], [2, 0]], { scale: 'diverging' })), ['-2', '0', '2']);
  assert.deepEqual(ticks(renderHeatmap(CAT, { min: 0.2, max: 0.5 })), ['0.2', '0.3', '0.4', '0.5']);
  assert.deepEqual(ticks(renderHeatmap([[2, 7]])), ['2', '4', '6'], 'raw values outside [0, 1]: data extent');
  assert.deepEqual(ticks(renderHeatmap(CAT, { legend: false })), []);
});

test('the output is deterministic', () => {
  for (const render of Object.values(CASES)) assert.equal(render(), render());
});

test('decimals sets the printed precision; cell values never read "-0.00"', () => {
  const vals = (svg) => findAll(parseXml(svg), (e) => classes(e).includes('cell-value')).map(textOf);
  assert.deepEqual(vals(renderHeatmap(CAT, { decimals: 4 })).slice(0, 3), ['0.4104', '0.3117', '0.2779']);
  assert.deepEqual(vals(renderHeatmap(CAT, { decimals: 0 })).slice(0, 3), ['0', '0', '0']);
  assert.deepEqual(vals(renderHeatmap([[-0.001, -0]], { scale: 'diverging' })), ['0.00', '0.00']);
});

test('bad input throws TypeError or RangeError naming what was expected and what came', () => {
  const cases = [
    [() => renderHeatmap([[1, 2], [3]]), RangeError, /ragged: matrix\[0\] has 2 columns but matrix\[1\] has 1/],
    [() => renderHeatmap([]), RangeError, /no rows/],
    [() => renderHeatmap([[]]), RangeError, /no columns/],
    [() => renderHeatmap('[[1]]'), TypeError, /number\[\]\[\] or \{ data.*received the string/],
    [() => renderHeatmap([[1, NaN]]), RangeError, /matrix\[0\]\[1\] is NaN; every value must be a finite number/],
    [() => renderHeatmap([[Infinity]]), RangeError, /matrix\[0\]\[0\] is Infinity/],
    [() => renderHeatmap([[1, '2']]), TypeError, /matrix\[0\]\[1\] must be a number; received the string "2"/],
    [() => renderHeatmap([[1], 2]), TypeError, /matrix\[1\] must be an array of numbers; received number 2/],
    [() => renderHeatmap({ data: new Float32Array(8), shape: [3, 3] }), RangeError, /8 values but shape \[3, 3\] needs 9/],
    [() => renderHeatmap({ data: [], shape: [0, 3] }), TypeError, /shape must be \[rows, cols\] of positive integers; received \[0,3\]/],
    [() => renderHeatmap({ data: new Float32Array([NaN]), shape: [1, 1] }), RangeError, /\[0\]\[0\] is NaN/],
    [() => renderHeatmap(CAT, { rowLabels: ['猫', '吃'] }), RangeError, /rowLabels has 2 labels but the matrix has 3 rows/],
    [() => renderHeatmap(CAT, { colLabels: ['a', 'b', 'c', 'd'] }), RangeError, /colLabels has 4 labels but the matrix has 3 columns/],
    [() => renderHeatmap(CAT, { rowLabels: '猫 吃 鱼' }), TypeError, /rowLabels must be an array of strings; received the string/],
    [() => renderHeatmap(CAT, { rowLabels: ['猫', 2, '鱼'] }), TypeError, /rowLabels\[1\] must be a string; received number 2/],
    [() => renderHeatmap(CAT, { masked: causalMask(2) }), RangeError, /masked has 2 rows but the matrix has 3/],
    [() => renderHeatmap(CAT, { masked: [[0, 1, 'x'], [0, 0, 0], [0, 0, 0]] }), TypeError, /masked\[0\]\[2\] must be true or false/],
    [() => renderHeatmap(CAT, { masked: { data: new Uint8Array(9), shape: [9, 1] } }), RangeError, /masked.shape must be \[3, 3\]/],
    [() => renderHeatmap(CAT, { lang: 'fr' }), RangeError, /lang must be "zh" or "en"; received the string "fr"/],
    [() => renderHeatmap(CAT, { decimals: 2.5 }), RangeError, /decimals must be an integer from 0 to 10; received number 2.5/],
    [() => renderHeatmap(CAT, { scale: 'log' }), RangeError, /scale must be "sequential" or "diverging"/],
    [() => renderHeatmap(CAT, { min: 1, max: 0 }), RangeError, /min must be less than max; received min 1, max 0/],
    [() => renderHeatmap(CAT, { max: NaN }), RangeError, /max must be a finite number; received number NaN/],
    [() => renderHeatmap(CAT, { idPrefix: 'a b"' }), TypeError, /idPrefix must be a letter/],
    [() => renderHeatmap(CAT, { cellSize: 0 }), RangeError, /cellSize must be a number from 8 to 200/],
    [() => renderHeatmap(CAT, { rowlabels: TOKENS }), TypeError, /unknown option "rowlabels"; expected one of rowLabels/],
    [() => renderHeatmap(CAT, null), TypeError, /options must be an object; received null/],
    [() => renderHeatmap({ data: new Float32Array(1), shape: [300, 300] }), RangeError, /300×300 matrix has 90000 cells; at most 65536/],
  ];
  for (const [fn, type, message] of cases) assert.throws(fn, (e) => e instanceof type && message.test(e.message), String(fn));
});

test('the package exports it as "attnmap/heatmap" (what ships)', async () => {
  const pkg = await import('attnmap/heatmap');
  assert.equal(pkg.renderHeatmap, renderHeatmap);
});

// ---------------------------------------------------------------------------------------------
// issue 5: extreme finite ranges. Rendered in a child process with a time and memory limit, so
// that a renderer that never returns (the legend's tick loop once stopped advancing past 2^53 and
// grew its array until V8 died) fails this test instead of hanging the run.

/** Run `body` (an ES module; renderHeatmap is imported) in a child; returns its JSON output. */
function inChild(body, { timeout = 30000 } = {}) {
  const url = new URL('../../web/heatmap/heatmap.js', import.meta.url).href;
  const code = `import { renderHeatmap } from ${JSON.stringify(url)};\n${body}`;
  const started = Date.now();
  const r = spawnSync(process.execPath, ['--max-old-space-size=512', '--input-type=module', '-e', code],
    { encoding: 'utf8', timeout, maxBuffer: 64 * 1024 * 1024 });
  const ms = Date.now() - started;
  if (r.error?.code === 'ETIMEDOUT') assert.fail(`the child did not finish within ${timeout} ms: the renderer hangs`);
  assert.equal(r.signal, null, `the child died of ${r.signal} after ${ms} ms (SIGABRT: V8 ran out of its 512 MB):\n${r.stderr.slice(0, 600)}`);
  assert.equal(r.status, 0, `the child failed (status ${r.status}) after ${ms} ms:\n${r.stderr.slice(-1500)}`);
  return { out: JSON.parse(r.stdout), ms };
}

const M = Number.MAX_VALUE;
const EXTREMES = {
  'issue 5: data 1e15 to 1e15 + 0.2': [[[1e15, 1e15 + 0.2]]],
  'issue 5: min 1e16, max 1e16 + 4': [[[0.5]], { min: 1e16, max: 1e16 + 4 }],
  'a span of one ulp: 1 to 1 + 2^-52': [[[1, 1 + 2 ** -52]]],
  'a 1e-30 span: min 1e-30, max 2e-30': [[[0.5]], { min: 1e-30, max: 2e-30 }],
  'a 1e-30 span, diverging': [[[-1e-30, 1e-30]], { scale: 'diverging' }],
  // (the data was written [1e-300, 1e-300 + 1e-330]: 1e-330 is below the smallest double, 5e-324, so it was this)
  'a 1e-30 span around 1e-300': [[[1e-300, 1e-300]], { min: 1e-300, max: 1.0000000000001e-300 }],
  '±3e38 (float32 max)': [[[-3e38, 3e38]]],
  '±3e38, diverging': [[[-3e38, 3e38], [0, 1]], { scale: 'diverging' }],
  '±Number.MAX_VALUE (the span overflows)': [[[-M, M]]],
  '±Number.MAX_VALUE, diverging': [[[-M, M]], { scale: 'diverging' }],
  'min == max: one value 7': [[[7, 7], [7, 7]]],
  'min == max: one value 0, diverging': [[[0]], { scale: 'diverging' }],
  'min == max: 1.5e308 (widening overflows)': [[[1.5e308]]],
  'min == max: -1.5e308': [[[-1.5e308]]],
  'huge negative: -1e300 to -5e299': [[[-1e300, -5e299]]],
  'huge negative: -MAX_VALUE to -1e308': [[[-M, -1e308]], { scale: 'diverging' }],
  'huge negative near 2^53: -1e16 - 4 to -1e16': [[[-1e16 - 4, -1e16]]],
  'min = MAX_VALUE alone': [[[0.5]], { min: M }],
  'max = -MAX_VALUE alone': [[[0.5]], { max: -M }],
  'subnormal: ±5e-324, diverging': [[[5e-324]], { scale: 'diverging' }],
  'subnormal span: min 0, max 5e-324': [[[0]], { min: 0, max: 5e-324 }],
  'a 1e-200 span (beyond toFixed)': [[[1e-200]], { scale: 'diverging' }],
  'adjacent doubles, diverging': [[[1e16, 1e16 + 2]], { scale: 'diverging', min: 1e16, max: 1e16 + 2 }],
};

// (that each returns at all is the child's to say: a renderer that hangs or runs out of memory
// fails inChild; how fast it returns is not asserted)
test('extreme finite ranges return well-formed SVG, with a sensible legend (issue 5)', (t) => {
  const { out, ms } = inChild(`
    const cases = ${JSON.stringify(Object.entries(EXTREMES))};   // JSON keeps every double exactly
    const out = {};
    for (const [name, [matrix, options]] of cases) out[name] = { svg: renderHeatmap(matrix, options) };
    process.stdout.write(JSON.stringify(out));`);
  t.diagnostic(`${Object.keys(out).length} renderings in a child of ${ms} ms`);
  const xmllint = !spawnSync('xmllint', ['--version']).error;
  for (const [name, { svg }] of Object.entries(out)) {
    const root = parseXml(svg);
    assert.equal(root.name, 'svg', name);
    assert.doesNotMatch(svg, /NaN|Infinity|undefined/, `${name}: no NaN, Infinity or undefined anywhere`);
    const legend = findAll(root, (e) => classes(e).includes('legend'))[0];
    const labels = findAll(legend, (e) => e.name === 'text').map(textOf);
    const ys = findAll(legend, (e) => e.name === 'line').map((l) => Number(l.attrs.y1));
    const height = Number(findAll(legend, (e) => e.name === 'rect')[0].attrs.height);
    assert.ok(labels.length >= 2 && labels.length <= 12, `${name}: ${labels.length} ticks`);
    assert.equal(new Set(labels).size, labels.length, `${name}: tick labels differ: ${labels.join(' | ')}`);
    for (const l of labels) assert.ok(Number.isFinite(Number(l)), `${name}: tick label ${l} is a number`);
    for (let k = 1; k < labels.length; k++) {
      assert.ok(Number(labels[k]) > Number(labels[k - 1]) && ys[k] < ys[k - 1], `${name}: ticks go up: ${labels.join(' | ')}`);
    }
    assert.ok(ys.every((y) => y >= -0.01 && y <= height + 0.01), `${name}: ticks on the ramp (${ys}, height ${height})`);
    const domain = /色标范围 (\S+) 到 (\S+?)。/.exec(textOf(root.children.find((c) => c.name === 'desc')));
    assert.ok(domain && domain[1] !== domain[2], `${name}: the description names two different ends: ${domain?.slice(1)}`);
    if (xmllint) {
      const r = spawnSync('xmllint', ['--noout', '-'], { input: svg, encoding: 'utf8' });
      assert.equal(r.status, 0, `${name}: xmllint says ${r.stderr}`);
    }
  }
  const ticks = (name) => findAll(parseXml(out[name].svg), (e) => classes(e).includes('legend'))
    .flatMap((g) => findAll(g, (e) => e.name === 'text')).map(textOf);
  // below the precision of the numbers: the two ends, printed as short as they still differ
  assert.deepEqual(ticks('issue 5: data 1e15 to 1e15 + 0.2'), ['1000000000000000', '1000000000000000.2']);
  assert.deepEqual(ticks('issue 5: min 1e16, max 1e16 + 4'), ['10000000000000000', '10000000000000004']);
  // where round steps still work they are kept
  assert.deepEqual(ticks('a 1e-30 span, diverging'), ['-1e-30', '-5e-31', '0', '5e-31', '1e-30']);
  assert.deepEqual(ticks('±Number.MAX_VALUE (the span overflows)'), ['-1e+308', '0', '1e+308']);
  assert.deepEqual(ticks('min == max: one value 7'), ['0', '5', '10']);
});

// issue 6: each cell repeats its row and column labels (title and aria-label), so the SVG grew
// with cells × label length: 256 tokens of 470 characters made 137 MB. In the cells a label is now
// cut to 1,048,576 / cells characters; the axis keeps the full text in its tooltip.
test('labels in the cells are cut to 1,048,576 / cells characters; the axis keeps them whole (issue 6)', () => {
  const { out } = inChild(`
    const run = (n, len) => {
      const labels = Array.from({ length: n }, (_, i) => String(i).padEnd(len, i % 2 ? 'x' : '猫'));
      const m = { data: new Float32Array(n * n).fill(1 / n), shape: [n, n] };
      const svg = renderHeatmap(m, { rowLabels: labels, colLabels: labels, standalone: true });
      const cell = /<g class="cell-group" aria-label="([^"]*)"><title>([^<]*)<\\/title><rect class="cell"[^>]*data-row="1" data-col="2"/.exec(svg);
      const axis = /<text class="row-label"[^>]*><title>([^<]*)<\\/title>/.exec(svg);
      return { bytes: Buffer.byteLength(svg), aria: cell[1], title: cell[2], axisTitle: axis[1], labels: labels.slice(0, 3) };
    };
    process.stdout.write(JSON.stringify({ big: run(256, 4096), mid: run(64, 1000), small: run(9, 200) }));`);
  const { big, mid, small } = out;
  // 256×256: 1,048,576 / 65,536 = 16 characters, "…" included
  assert.equal(big.aria, `1xxxxxxxxxxxxxx… → ${big.labels[2].slice(0, 15)}…: 0.0039`);
  assert.equal(big.title, big.aria);
  assert.equal(big.axisTitle, big.labels[0], 'the axis tooltip keeps all 4096 characters');
  assert.ok(big.bytes < 40e6, `256 tokens of 4096 characters: ${(big.bytes / 1e6).toFixed(1)} MB (was over 1 GB)`);
  // 64×64: 1,048,576 / 4,096 = 256 characters
  assert.equal(mid.aria, `${mid.labels[1].slice(0, 255)}… → ${mid.labels[2].slice(0, 255)}…: 0.0156`);
  assert.equal(mid.axisTitle, mid.labels[0]);
  // small heatmaps are as before: 200 characters whole
  assert.equal(small.aria, `${small.labels[1]} → ${small.labels[2]}: 0.1111`);
});

// ---------------------------------------------------------------------------------------------
// issue 12: options for callers that insert the SVG as it is. The page and the element once
// rewrote the rendered SVG (roles, row groups, tab stops, a focus ring, cell labels, captions,
// <desc>); now they pass these options and nobody patches the output.

const attr = (name, value) => (e) => e.attrs?.[name] === value;
const groupsOf = (root) => findAll(root, (e) => e.name === 'g' && classes(e).includes('cell-group'));
const rectOf = (g) => g.children.find((c) => c.name === 'rect');

test('issue 12: the new options at their defaults give the same bytes as no options', () => {
  const base = { rowLabels: TOKENS, colLabels: TOKENS };
  const plain = renderHeatmap(CAT, base);
  assert.equal(renderHeatmap(CAT, { ...base, role: 'img', focusRing: false, rowCaption: '查询（谁在看）', colCaption: '键（被看的词）' }), plain);
  assert.equal(renderHeatmap(CAT, { ...base, activeCell: undefined, cellLabel: undefined, description: undefined }), plain);
  assert.equal(renderHeatmap(CAT, { ...base, lang: 'en', rowCaption: 'query (who is looking)', colCaption: 'key (who is looked at)' }),
    renderHeatmap(CAT, { ...base, lang: 'en' }));
  assert.doesNotMatch(plain, /tabindex|role="(grid|group|row|gridcell)"|class="ring"/);
});

test('issue 12: masked: "causal" is the mask of j > i, for square and non-square matrices', () => {
  assert.equal(renderHeatmap(CAT_CAUSAL, { rowLabels: TOKENS, colLabels: TOKENS, masked: 'causal' }),
    renderHeatmap(CAT_CAUSAL, { rowLabels: TOKENS, colLabels: TOKENS, masked: causalMask(3) }));
  for (const [rows, cols] of [[2, 5], [5, 2], [1, 1]]) {
    const m = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i + j) / 10));
    const mask = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => j > i));
    assert.equal(renderHeatmap(m, { masked: 'causal' }), renderHeatmap(m, { masked: mask }), `${rows}×${cols}`);
  }
});

test('issue 12: role "grid": rows of gridcells with their indices; the text around them is aria-hidden', () => {
  const root = parseXml(renderHeatmap(CAT_CAUSAL, { rowLabels: ['猫', '<吃>', '鱼'], colLabels: TOKENS, masked: 'causal', role: 'grid' }));
  assert.equal(root.attrs.role, 'grid');
  assert.equal(root.attrs['aria-rowcount'], '3');
  assert.equal(root.attrs['aria-colcount'], '3');
  const cellsGroup = findAll(root, (e) => classes(e).includes('cells'))[0];
  const rows = cellsGroup.children.filter((c) => typeof c !== 'string');
  assert.deepEqual(rows.map((r) => [r.attrs.role, r.attrs['aria-rowindex'], r.attrs['aria-label']]),
    [['row', '1', '猫'], ['row', '2', '<吃>'], ['row', '3', '鱼']]);
  rows.forEach((r, i) => {
    const gs = r.children.filter((c) => typeof c !== 'string');
    assert.equal(gs.length, 3);
    gs.forEach((g, j) => {
      assert.ok(classes(g).includes('cell-group'));
      assert.equal(g.attrs.role, 'gridcell');
      assert.equal(g.attrs['aria-colindex'], String(j + 1));
      assert.deepEqual([rectOf(g).attrs['data-row'], rectOf(g).attrs['data-col']], [String(i), String(j)]);
    });
  });
  assert.equal(groupsOf(root)[3].attrs['aria-label'], '<吃> → 猫: 0.4613', 'the cells keep their labels');
  for (const cls of ['attnmap-title', 'col-caption', 'row-caption', 'row-labels', 'col-labels', 'legend', 'masked-key']) {
    const [el] = findAll(root, (e) => classes(e).includes(cls));
    assert.equal(el?.attrs['aria-hidden'], 'true', cls);
  }
});

test('issue 12: role "group": a labelled group whose cells are images; no tab stops unless asked', () => {
  const root = parseXml(renderHeatmap(CAT, { rowLabels: TOKENS, colLabels: TOKENS, role: 'group' }));
  assert.equal(root.attrs.role, 'group');
  assert.ok(groupsOf(root).every((g) => g.attrs.role === 'img' && g.attrs['aria-label'] && !('tabindex' in g.attrs)));
  assert.equal(findAll(root, attr('role', 'row')).length, 0);
  assert.deepEqual(findAll(root, attr('aria-hidden', 'true')).map((e) => e.attrs.class), ['cell-values', 'legend'],
    'only the legend and the numbers the cells\' names hold are hidden, as with role "img"');
});

test('issue 12: activeCell is the one tab stop (roving tabindex); each cell group names its cell', () => {
  for (const role of ['img', 'group', 'grid']) {
    const root = parseXml(renderHeatmap(W16, { masked: 'causal', role, activeCell: [7, 3] }));
    const groups = groupsOf(root);
    assert.equal(groups.length, 256);
    for (const g of groups) {
      const { 'data-row': r, 'data-col': c } = rectOf(g).attrs;
      assert.deepEqual([g.attrs['data-row'], g.attrs['data-col']], [r, c], role);
      assert.equal(g.attrs.tabindex, r === '7' && c === '3' ? '0' : '-1', `${role} ${r},${c}`);
    }
    assert.equal(findAll(root, attr('tabindex', '0')).length, 1, role);
  }
});

test('issue 12: focusRing surrounds the active cell, above everything, and hides from assistive technology', () => {
  const root = parseXml(renderHeatmap(CAT, { rowLabels: TOKENS, colLabels: TOKENS, activeCell: [1, 2], focusRing: true, cellSize: 40 }));
  const last = root.children.filter((c) => typeof c !== 'string').at(-1);
  assert.ok(classes(last).includes('ring'), 'the ring is drawn last');
  assert.equal(last.attrs['aria-hidden'], 'true');
  assert.equal(last.attrs['pointer-events'], 'none');
  const rect = rectOf(groupsOf(root).find((g) => g.attrs.tabindex === '0')).attrs;
  const [outer, inner] = last.children.filter((c) => typeof c !== 'string');
  for (const [r, cls, pad] of [[outer, 'ring-outer', 2.5], [inner, 'ring-inner', 0.5]]) {
    assert.ok(classes(r).includes(cls));
    assert.equal(r.attrs.fill, 'none', 'the cell shows through');
    assert.equal(Number(r.attrs.x), Number(rect.x) - pad);
    assert.equal(Number(r.attrs.y), Number(rect.y) - pad);
    assert.equal(Number(r.attrs.width), Number(rect.width) + 2 * pad);
    assert.equal(Number(r.attrs.height), Number(rect.height) + 2 * pad);
  }
  assert.doesNotMatch(renderHeatmap(CAT, { activeCell: [1, 2] }), /class="ring"/, 'no ring unless asked');
});

test('issue 12: cellLabel sets each cell\'s aria-label and <title> from what the cell is', () => {
  const seen = [];
  const svg = renderHeatmap(CAT_CAUSAL, {
    rowLabels: ['猫', 'שלום', '<b>'], colLabels: TOKENS, masked: 'causal', decimals: 1,
    cellLabel: (c) => { seen.push(c); return `${c.rowLabel} · ${c.col}: ${c.valueText}${c.masked ? ' ×' : ''} <&>`; },
  });
  assert.equal(seen.length, 9);
  const c = seen.find((x) => x.row === 1 && x.col === 2);
  assert.deepEqual(c, { row: 1, col: 2, value: 0, masked: true, rowLabel: '\u2068שלום\u2069', colLabel: '鱼',
    valueText: '0.0000', label: '\u2068שלום\u2069 → 鱼: 0.0000（已遮蔽）' });
  assert.equal(seen.find((x) => x.row === 2 && x.col === 0).label, '<b> → 猫: 0.2786');
  const root = parseXml(svg);
  for (const g of groupsOf(root)) {
    const { 'data-row': r, 'data-col': col } = rectOf(g).attrs;
    const e = seen.find((x) => String(x.row) === r && String(x.col) === col);
    const want = `${e.rowLabel} · ${e.col}: ${e.valueText}${e.masked ? ' ×' : ''} <&>`;
    assert.equal(g.attrs['aria-label'], want);
    assert.equal(textOf(g.children.find((x) => x.name === 'title')), want);
  }
  assert.ok(!svg.includes('<&>') && !svg.includes('<b>'), 'escaped');
  assert.match(groupsOf(parseXml(renderHeatmap([[1]], { cellLabel: () => 'a\u0000b\tc' })))[0].attrs['aria-label'], /^a\ufffdb c$/,
    'cleaned like a label');
  assert.throws(() => renderHeatmap([[1]], { cellLabel: () => 5 }), /cellLabel must return a string; for cell \[0, 0\] it returned number/);
});

test('issue 12: rowCaption, colCaption and description replace the defaults, escaped, and are laid out as drawn', () => {
  const root = parseXml(renderHeatmap(CAT, { rowLabels: TOKENS, colLabels: TOKENS, lang: 'en',
    rowCaption: 'token <i>', colCaption: 'dimension & co', description: 'Each row is an output vector.' }));
  assert.equal(textOf(findAll(root, (e) => classes(e).includes('row-caption'))[0]), 'token <i>');
  assert.equal(textOf(findAll(root, (e) => classes(e).includes('col-caption'))[0]), 'dimension & co');
  assert.equal(textOf(root.children.find((c) => c.name === 'desc')), 'Each row is an output vector.');
  // a 1×4 grid is 56 px tall: a long rotated row caption makes the picture taller, a short one does not
  const height = (rowCaption) => Number(parseXml(renderHeatmap([[1, 2, 3, 4]], { rowCaption, legend: false })).attrs.height);
  assert.ok(height('a much longer caption for the rows than the grid is tall') > height('dim'));
  assert.equal(height('x'), height('y'));
});

test('issue 12: bad values of the new options throw, naming what was expected', () => {
  const cases = [
    [{ role: 'table' }, RangeError, /role must be "img", "group" or "grid"; received the string "table"/],
    [{ activeCell: [3, 0] }, RangeError, /activeCell \[3, 0\] is outside the 3×3 matrix/],
    [{ activeCell: [0, -1] }, RangeError, /activeCell \[0, -1\] is outside/],
    [{ activeCell: '0,0' }, TypeError, /activeCell must be \[row, col\], two integers; received the string/],
    [{ activeCell: [0.5, 0] }, TypeError, /activeCell must be \[row, col\]/],
    [{ focusRing: 'yes', activeCell: [0, 0] }, TypeError, /focusRing must be true or false/],
    [{ focusRing: true }, TypeError, /focusRing needs activeCell/],
    [{ cellLabel: 'label' }, TypeError, /cellLabel must be a function \(cell\) => string; received the string/],
    [{ rowCaption: 5 }, TypeError, /rowCaption must be a string; received number 5/],
    [{ colCaption: null }, TypeError, /colCaption must be a string; received null/],
    [{ description: ['a'] }, TypeError, /description must be a string; received an array/],
    [{ masked: 'upper' }, TypeError, /masked must be "causal", boolean\[\]\[\] or/],
  ];
  for (const [options, type, message] of cases) {
    assert.throws(() => renderHeatmap(CAT, options), (e) => e instanceof type && message.test(e.message), JSON.stringify(options));
  }
});

test('issue 12: every option at once on hostile labels is still well-formed, allowed SVG', () => {
  const svg = renderHeatmap(HOSTILE_SCORES, {
    rowLabels: HOSTILE, colLabels: HOSTILE, scale: 'diverging', masked: 'causal', role: 'grid', activeCell: [8, 8],
    focusRing: true, cellLabel: (c) => `${c.label} </svg>`, rowCaption: '<row>', colCaption: '"col"', description: '& desc',
  });
  const root = parseXml(svg);
  for (const el of new Set(findAll(root, () => true).map((e) => e.name))) assert.ok(ALLOWED.has(el), `unexpected <${el}>`);
  assert.equal(svg.match(/<\/svg>/g).length, 1);
  assert.doesNotMatch(svg, /<style|style=/i, 'still nothing for style-src to block');
  if (!spawnSync('xmllint', ['--version']).error) {
    const r = spawnSync('xmllint', ['--noout', '-'], { input: svg, encoding: 'utf8' });
    assert.equal(r.status, 0, `xmllint says ${r.stderr}`);
  }
});

test('issue 12: gridKey (grid-keys.js), the arrow keys of the page\'s and the element\'s heatmaps', async () => {
  const { gridKey } = await import('../../web/heatmap/grid-keys.js');
  const at = (key, ctrl, row, col) => gridKey(key, ctrl, row, col, 3, 4);
  assert.deepEqual(at('ArrowRight', false, 1, 1), { row: 1, col: 2 });
  assert.deepEqual(at('ArrowRight', false, 1, 3), { row: 1, col: 3 }, 'stops at the edge');
  assert.deepEqual(at('ArrowLeft', false, 1, 0), { row: 1, col: 0 });
  assert.deepEqual(at('ArrowDown', false, 2, 1), { row: 2, col: 1 });
  assert.deepEqual(at('ArrowUp', false, 1, 1), { row: 0, col: 1 });
  assert.deepEqual(at('Home', false, 2, 3), { row: 2, col: 0 });
  assert.deepEqual(at('Home', true, 2, 3), { row: 0, col: 0 });
  assert.deepEqual(at('End', false, 0, 0), { row: 0, col: 3 });
  assert.deepEqual(at('End', true, 0, 0), { row: 2, col: 3 });
  assert.deepEqual(at('PageUp', false, 2, 2), { row: 0, col: 2 });
  assert.deepEqual(at('PageDown', false, 0, 2), { row: 2, col: 2 });
  assert.equal(at('Tab', false, 0, 0), null);
  assert.equal(at('a', true, 0, 0), null);
});
