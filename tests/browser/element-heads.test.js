// <attention-heatmap heads="…"> (episode 06, multi-head attention) in real Chromium. The pages in
// tests/fixtures/element-heads/ are served with a strict Content-Security-Policy (no inline
// script or style, 'wasm-unsafe-eval' only), and every test fails on a CSP violation, a page error
// or a console error. Numbers are checked against tests/golden/page-mha.json (PyTorch).
// One browser for the file. Screenshots: /tmp/mha-element-*.png.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startServer } from '../../scripts/serve.js';
import { root, assertClose } from '../helpers.js';
import { launch, settled } from './browser.js';

const FIXTURES = 'tests/fixtures/element-heads/';
const STRICT_CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'";
const GOLDEN = JSON.parse(fs.readFileSync(path.join(root, 'tests/golden/page-mha.json'), 'utf8'));
const byName = (name) => GOLDEN.cases.find((c) => c.name === name);
const flat = (m) => m.flat(Infinity);

const server = await startServer({
  root,
  alias: process.env.ATTNMAP_EMBED === 'bundle' ? { 'web/element/attention-heatmap.js': 'web/dist/attention-heatmap.min.js' } : {}, // tests/browser/embed.test.js
  allow: [FIXTURES, 'tests/fixtures/element/'],
  headers: (urlPath) => (urlPath.includes('/element-heads/') ? { 'content-security-policy': STRICT_CSP } : {}),
});
const browser = await launch();
after(async () => { await browser.close(); await server.close(); });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function open(file, { viewport = { width: 820, height: 900 }, colorScheme = 'light' } = {}) {
  const page = await browser.newPage({ viewport });
  await page.emulateMedia({ colorScheme });
  const log = { pageErrors: [], consoleErrors: [], requests: [] };
  page.on('pageerror', (e) => log.pageErrors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') log.consoleErrors.push(`${m.type()}: ${m.text()}`); });
  page.on('request', (r) => log.requests.push(new URL(r.url()).pathname));
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`), true);
  });
  await page.goto(server.url + FIXTURES + file);
  await settled(page);
  return { page, log };
}


/** One element: its visible panels (title, cells), the shared caption, the message, the detail. */
function inspect(page, sel) {
  return page.evaluate((s) => {
    const el = document.querySelector(s);
    const sr = el.shadowRoot;
    const panels = [...sr.querySelectorAll('.panel')].filter((p) => !p.hidden);
    const plain = (m) => m && { data: Array.from(m.data), shape: m.shape };
    const d = el.result;
    return {
      panels: panels.map((p) => ({
        part: p.getAttribute('part'),
        title: p.querySelector('.attnmap-title')?.textContent,
        values: [...p.querySelectorAll('rect.cell')].map((r) => Number(r.dataset.value)),
        masked: [...p.querySelectorAll('rect.cell')].filter((r) => r.dataset.masked === 'true').length,
        labels: [...p.querySelectorAll('.cell-group')].map((g) => g.getAttribute('aria-label')),
        tabStops: p.querySelectorAll('[tabindex="0"]').length,
        ownCaption: getComputedStyle(p.querySelector('.caption')).display !== 'none' ? p.querySelector('.caption').textContent : null,
      })),
      shared: sr.querySelector('.root > .caption').hidden ? null : sr.querySelector('.root > .caption').textContent,
      message: sr.querySelector('[part="message"]').hidden ? null : sr.querySelector('[part="message"]').textContent,
      detail: d && {
        keys: Object.keys(d).sort(),
        weights: Array.isArray(d.weights) ? d.weights.map(plain) : plain(d.weights),
        heads: Array.isArray(d.heads) ? d.heads.map(plain) : null,
        concat: plain(d.concat), output: plain(d.output), wo: plain(d.wo), wq: plain(d.wq),
      },
      error: el.error && el.error.message,
      violations: window.__violations,
      styleAttrs: sr.querySelectorAll('[style]').length + sr.querySelectorAll('style').length,
    };
  }, sel);
}

function assertClean(page, log, what) {
  assert.deepEqual(log.pageErrors, [], `${what}: page errors`);
  assert.deepEqual(log.consoleErrors, [], `${what}: console errors`);
  return page.evaluate(() => window.__violations).then((v) => assert.deepEqual(v, [], `${what}: CSP violations`));
}

/** The element's panels against a golden case: one heatmap per head, labelled, PyTorch's numbers. */
function assertHeads(s, c, { lang = 'zh', causal = c.state.causal } = {}) {
  const heads = s.panels.filter((p) => p.part === 'heatmap');
  assert.equal(heads.length, c.heads, `${c.name}: one heatmap per head`);
  heads.forEach((p, k) => {
    const title = lang === 'zh' ? `头 ${k + 1} · d_head = ${c.d_head}${causal ? '（因果遮蔽）' : ''}`
      : `head ${k + 1} · d_head = ${c.d_head}${causal ? ' (causal)' : ''}`;
    assert.equal(p.title, title);
    assertClose(p.values, flat(c.expected_f32.weights[k]), `${c.name} head ${k + 1} in the DOM`);
    assert.equal(p.tabStops, 1, `${c.name} head ${k + 1}: one tab stop`);
    if (causal) assert.equal(p.masked, (c.n * (c.n - 1)) / 2);
  });
  const out = s.panels.find((p) => p.part === 'output');
  assertClose(out.values, flat(c.expected_f32.output), `${c.name} output in the DOM`);
  const d = s.detail;
  assert.deepEqual(d.keys, ['concat', 'heads', 'output', 'tokens', 'weights', 'wk', 'wo', 'wq', 'wv', 'x']);
  assert.equal(d.weights.length, c.heads);
  d.weights.forEach((w, k) => { assert.deepEqual(w.shape, [c.n, c.n]); assertClose(w.data, flat(c.expected_f32.weights[k]), `detail weights[${k}]`); });
  d.heads.forEach((h, k) => { assert.deepEqual(h.shape, [c.n, c.d_head]); assertClose(h.data, flat(c.expected_f32.heads[k]), `detail heads[${k}]`); });
  assertClose(d.concat.data, flat(c.expected.concat), 'detail concat');
  assertClose(d.output.data, flat(c.expected.output), 'detail output');
  assertClose(d.wo.data, flat(c.wo), 'detail wo', { atol: 0, rtol: 0 });
  assertClose(d.wq.data, flat(c.wq), 'detail wq', { atol: 0, rtol: 0 });
  assert.equal(s.message, null);
  assert.equal(s.styleAttrs, 0, 'no <style> and no style="" in the shadow root');
}

describe('<attention-heatmap heads>', { concurrency: 3 }, () => {
  test('x + seed + heads: one labelled heatmap per head, PyTorch\'s numbers, the MHA result in the event', async () => {
    const { page, log } = await open('heads.html', { viewport: { width: 820, height: 1200 } });
    const h2 = await inspect(page, '#h2');
    assertHeads(h2, byName('seed0-heads2'));
    assert.equal(h2.panels.filter((p) => p.part === 'heatmap').every((p) => p.ownCaption === null), true, 'several heads: no caption under each');
    assert.match(h2.shared, /^把鼠标移到格子上/, 'one caption line under the heads');
    const w = byName('seed0-heads2').expected_f32.weights;
    assert.equal(h2.panels[1].labels[3], `头 2 · 吃 → 猫: ${w[1][1][0].toFixed(4)}`, 'cells say which head they are in');

    const h1 = await inspect(page, '#h1');
    assertHeads(h1, byName('seed0-heads1'));
    assert.equal(h1.shared, null, 'one head: its own caption line');
    assert.match(h1.panels[0].ownCaption, /^把鼠标移到格子上/);
    assert.match(h1.panels[0].labels[0], /^猫 → 猫: /, 'one head: cells as in episode 05');

    assertHeads(await inspect(page, '#h4'), byName('seed0-heads4'), { lang: 'en' });
    const h8 = await inspect(page, '#h8');
    assert.equal(h8.panels.filter((p) => p.part === 'heatmap').length, 8);
    assert.equal(h8.panels[0].title, '头 1 · d_head = 1（因果遮蔽）');
    h8.panels.filter((p) => p.part === 'heatmap').forEach((p) => {
      assert.equal(p.masked, 3);
      assert.deepEqual([p.values[0], p.values[1], p.values[2]], [1, 0, 0], 'causal: 猫 sees only itself');
    });
    // distinct SVG ids across heads and elements
    const ids = await page.evaluate(() => [...document.querySelectorAll('attention-heatmap')]
      .flatMap((e) => [...e.shadowRoot.querySelectorAll('[id]')].map((n) => n.id)));
    assert.equal(new Set(ids).size, ids.length, 'no duplicate ids');
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.screenshot({ path: `/tmp/mha-element-heads-${scheme}.png`, fullPage: true });
    }
    await assertClean(page, log, 'heads.html');
    await page.close();
  });

  test('x + explicit wq, wk, wv, wo + heads (an edited X, causal): PyTorch\'s numbers, torch-rng.js not loaded', async () => {
    const { page, log } = await open('explicit.html');
    assertHeads(await inspect(page, '#explicit'), byName('seed7-edited-x-heads2-causal'), { lang: 'en' });
    assert.ok(!log.requests.some((p) => p.endsWith('/torch-rng.js')), 'no random generator needed');
    await page.screenshot({ path: '/tmp/mha-element-explicit.png', fullPage: true });
    await assertClean(page, log, 'explicit.html');
    await page.close();
  });

  test('the docs/EMBED.md example is the fixture, and shows seed 0 with 2 heads', async () => {
    const md = fs.readFileSync(path.join(root, 'docs/EMBED.md'), 'utf8');
    const block = md.split('### Several heads (episode 06)')[1].split('```html\n')[1].split('```')[0];
    const fixture = fs.readFileSync(path.join(root, FIXTURES, 'embed-doc.html'), 'utf8');
    assert.ok(fixture.includes(block), 'tests/fixtures/element-heads/embed-doc.html holds the documented example verbatim');
    const { page, log } = await open('embed-doc.html');
    const s = await inspect(page, 'attention-heatmap');
    assertHeads(s, byName('seed0-heads2'));
    assert.ok(md.includes(`\`${s.panels[1].labels[3]}\``), `the caption quoted in the docs is real: ${s.panels[1].labels[3]}`);
    await assertClean(page, log, 'embed-doc.html');
    await page.close();
  });

  test('messages: heads that do not divide d_model, heads without x, missing wo, seed and weights together …', async () => {
    const { page, log } = await open('errors.html', { viewport: { width: 820, height: 1400 } });
    const expect = {
      three: /SHAPE_MISMATCH: heads = 3 does not divide d_model = 8/,
      zero: /heads attribute must be an integer from 1 to 256 that divides d_model; received "0"/,
      qk: /heads needs x \(with seed, or with wq, wk, wv and wo\)/,
      'no-wo': /wo is missing: with x give wq, wk, wv and wo, or a seed instead/,
      both: /give either seed \(W_Q, W_K, W_V, W_O drawn from it\) or wq, wk, wv and wo, not both/,
      'wo-no-heads': /wo is only used with heads/,
      'w-no-x': /wq needs x: the token vectors it projects/,
      'in-proj': /SHAPE_MISMATCH: wq must have shape \(d_model, d_model\).*in_proj_weight/,
      tokens: /tokens has 2 tokens but x has 3 rows/,
    };
    for (const [id, re] of Object.entries(expect)) {
      const s = await inspect(page, `#${id}`);
      assert.ok(s.message, `#${id} shows a message`);
      assert.match(s.message, /^注意力热力图无法显示：输入有误。/, `#${id}`);
      assert.match(s.message, re, `#${id}`);
      assert.deepEqual(s.panels, [], `#${id}: no heatmap`);
      assert.equal(s.detail, null);
    }
    // fixed: a message turns into heatmaps
    await page.evaluate(() => document.querySelector('#three').setAttribute('heads', '4'));
    await sleep(100);
    const fixed = await inspect(page, '#three');
    assert.equal(fixed.message, null);
    assert.equal(fixed.panels.filter((p) => p.part === 'heatmap').length, 4);
    await page.screenshot({ path: '/tmp/mha-element-errors.png', fullPage: true });
    await assertClean(page, log, 'errors.html');
    await page.close();
  });

  test('keyboard: each head\'s heatmap is one tab stop; arrows move inside it; the shared caption follows', async () => {
    const { page, log } = await open('heads.html');
    const focused = () => page.evaluate(() => {
      const el = document.activeElement;
      const a = el.shadowRoot?.activeElement;
      return { outer: el.id, label: a?.getAttribute('aria-label') ?? null, panel: a?.closest('.panel')?.dataset.panel ?? null,
        caption: el.shadowRoot ? el.shadowRoot.querySelector('.root > .caption').textContent : null,
        stroke: a ? getComputedStyle(a.querySelector('rect.cell')).strokeWidth : null };
    });
    const w = byName('seed0-heads2').expected_f32.weights;
    await page.focus('#before');
    await page.keyboard.press('Tab');
    let f = await focused();
    assert.deepEqual([f.outer, f.panel, f.label], ['h2', 'heatmap', `头 1 · 猫 → 猫: ${w[0][0][0].toFixed(4)}`]);
    assert.equal(f.caption, f.label, 'the shared caption explains the focused cell');
    assert.equal(f.stroke, '3px');
    await page.keyboard.press('Tab');
    f = await focused();
    assert.deepEqual([f.panel, f.label], ['head2', `头 2 · 猫 → 猫: ${w[1][0][0].toFixed(4)}`], 'Tab: from head 1 to head 2');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowRight');
    f = await focused();
    assert.equal(f.label, `头 2 · 吃 → 吃: ${w[1][1][1].toFixed(4)}`);
    assert.equal(f.caption, f.label);
    await page.keyboard.press('Control+End');
    assert.equal((await focused()).label, `头 2 · 鱼 → 鱼: ${w[1][2][2].toFixed(4)}`);
    await page.keyboard.press('Tab');
    f = await focused();
    assert.equal(f.panel, 'output', 'then the output');
    await page.keyboard.press('Tab');
    assert.equal((await focused()).outer, 'after', 'then out of the element');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    f = await focused();
    assert.equal(f.label, `头 2 · 鱼 → 鱼: ${w[1][2][2].toFixed(4)}`, 'Shift+Tab comes back to the last cell of head 2');
    // pointer
    await page.hover('#h2 >> [data-panel="heatmap"] rect.cell[data-row="1"][data-col="2"]');
    assert.equal((await focused()).caption, `头 1 · 吃 → 鱼: ${w[0][1][2].toFixed(4)}`);
    await page.screenshot({ path: '/tmp/mha-element-focus.png', clip: { x: 0, y: 0, width: 820, height: 560 } });
    await assertClean(page, log, 'keyboard');
    await page.close();
  });

  test('attributes and properties: heads changes re-render; removing heads goes back to episode 05; wq…wo as properties', async () => {
    const { page, log } = await open('heads.html');
    const c2 = byName('seed0-heads2');
    const r = await page.evaluate(async ([wq, wk, wv, wo, x]) => {
      const el = document.querySelector('#h2');
      const next = () => new Promise((res) => el.addEventListener('attention-computed', (e) => res(e.detail), { once: true }));
      const visible = () => [...el.shadowRoot.querySelectorAll('[part="heatmap"]')].filter((p) => !p.hidden).length;
      const out = {};
      let got = next();
      el.heads = 8;
      out.eight = { n: (await got).weights.length, visible: visible(), attr: el.getAttribute('heads'), prop: el.heads };
      got = next();
      el.setAttribute('heads', '2');
      await got;
      out.two = visible();
      got = next();
      el.heads = null;
      const single = await got;
      out.single = { isArray: Array.isArray(single.weights), keys: Object.keys(single).sort(), visible: visible(),
        shared: el.shadowRoot.querySelector('.root > .caption').hidden, row1: Array.from(single.weights.data.subarray(3, 6)) };
      // explicit weights as properties, without seed: 2 heads again
      got = next();
      el.removeAttribute('seed');
      el.x = x; el.wq = wq; el.wk = wk; el.wv = { data: new Float32Array(wv.flat()), shape: [8, 8] }; el.wo = wo;
      el.heads = 2;
      const explicit = await got;
      out.explicit = { weights: explicit.weights.map((m) => Array.from(m.data)), output: Array.from(explicit.output.data) };
      // one change of several in one task: one render
      let renders = 0;
      el.addEventListener('attention-computed', () => renders++);
      el.heads = 4; el.causal = true; el.decimals = 3;
      await new Promise((res) => setTimeout(res, 100));
      out.renders = renders;
      out.visible4 = visible();
      return out;
    }, [c2.wq, c2.wk, c2.wv, c2.wo, c2.x]);
    assert.deepEqual(r.eight, { n: 8, visible: 8, attr: '8', prop: 8 });
    assert.equal(r.two, 2, 'fewer heads: the extra panels are hidden');
    assert.equal(r.single.isArray, false);
    assert.deepEqual(r.single.keys, ['k', 'output', 'q', 'scaled', 'scores', 'tokens', 'v', 'weights', 'wk', 'wq', 'wv', 'x']);
    assert.equal(r.single.visible, 1);
    assert.equal(r.single.shared, true);
    assertClose(r.single.row1, byName('seed0-heads1').expected_f32.weights[0][1], 'without heads: the episode-05 heatmap');
    assertClose(r.explicit.weights.flat(), flat(c2.expected_f32.weights), 'explicit weights as properties');
    assertClose(r.explicit.output, flat(c2.expected_f32.output), 'explicit weights: output');
    assert.equal(r.renders, 1);
    assert.equal(r.visible4, 4);
    await assertClean(page, log, 'properties');
    await page.close();
  });

  test('observedAttributes is exactly the set of attributes an MHA render reads (seed and explicit weights)', async () => {
    const { page, log } = await open('heads.html');
    const r = await page.evaluate(async () => {
      const read = new Set();
      const proto = Element.prototype;
      const orig = { getAttribute: proto.getAttribute, hasAttribute: proto.hasAttribute, getAttributeNode: proto.getAttributeNode };
      const els = [document.querySelector('#h2'), document.querySelector('#h8')];
      for (const [name, fn] of Object.entries(orig)) {
        proto[name] = function (attr) { if (els.includes(this)) read.add(attr); return fn.call(this, attr); };
      }
      const done = Promise.all(els.map((el) => new Promise((res) => el.addEventListener('attention-computed', res, { once: true }))));
      for (const el of els) el.setAttribute('decimals', '3');
      await done;
      Object.assign(proto, orig);
      return { read: [...read].sort(), observed: [...els[0].constructor.observedAttributes].sort() };
    });
    assert.deepEqual(r.read, r.observed);
    assert.ok(r.observed.includes('heads') && r.observed.includes('wo'));
    await assertClean(page, log, 'observedAttributes');
    await page.close();
  });

  test('a 360-px phone: the heads wrap, no horizontal page scroll', async () => {
    const { page, log } = await open('heads.html', { viewport: { width: 360, height: 740 } });
    const r = await page.evaluate(() => ({
      scrollWidth: document.scrollingElement.scrollWidth,
      rows: (() => {
        const tops = [...document.querySelector('#h8').shadowRoot.querySelectorAll('[part="heatmap"]')].filter((p) => !p.hidden)
          .map((p) => Math.round(p.getBoundingClientRect().top));
        return new Set(tops).size;
      })(),
      widest: Math.max(...[...document.querySelectorAll('attention-heatmap')].flatMap((e) =>
        [...e.shadowRoot.querySelectorAll('svg')].map((s) => s.getBoundingClientRect().right))),
    }));
    assert.ok(r.scrollWidth <= 360, `scrollWidth ${r.scrollWidth}`);
    assert.ok(r.rows >= 4, `8 heads wrap into ${r.rows} rows`);
    assert.ok(r.widest <= 360, `an SVG ends at ${r.widest}px`);
    await page.screenshot({ path: '/tmp/mha-element-phone.png', fullPage: true });
    await assertClean(page, log, 'phone');
    await page.close();
  });

  test('types: heads, wq…wo and the MHA event detail type-check (tsc)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-heads-'));
    try {
      fs.writeFileSync(path.join(dir, 'consumer.ts'), `
        import type { AttentionHeatmapElement, AttentionComputedDetail, HeadsDetail } from ${JSON.stringify(path.join(root, 'web/element/attention-heatmap.js'))};
        declare const el: AttentionHeatmapElement;
        el.heads = 2;
        el.wq = [[1, 0], [0, 1]];
        el.wo = { data: new Float32Array(4), shape: [2, 2] };
        const h: number | null = el.heads;
        el.addEventListener('attention-computed', (e) => {
          const d: AttentionComputedDetail = e.detail;
          if (Array.isArray(d.weights)) {
            const m = d as HeadsDetail;
            const n: number = m.weights.length + m.heads[0].shape[1] + m.concat.shape[1] + m.wo.shape[0] + m.output.data.length;
            return n;
          }
          return 0;
        });
        // @ts-expect-error heads is a number
        el.heads = '2';
        export { h };`);
      fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: {
        module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, lib: ['es2022', 'dom'],
      }, files: ['consumer.ts'] }));
      execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: dir, stdio: 'pipe' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

// ---------------------------------------------------------------------------------------------
// issue 6: the 65,536-cell cap was per heatmap, not per element: x 256×256 with seed="0" and
// heads="8" took 18.7 s of main thread and 1.77 M shadow-DOM nodes, heads="64" did not answer in
// 100 s. Now all heatmaps of one element share one budget, checked before anything is computed.

/**
 * Append an <attention-heatmap> with these attributes (values built here, not in the page: no
 * eval under the CSP) and wait until it answers; fails after `limit` ms instead of hanging.
 */
async function answer(page, attrs, limit = 60000) {
  let timer;
  const late = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${limit} ms`)), limit); });
  try {
    return await Promise.race([late, page.evaluate(async (a) => {
      const el = document.createElement('attention-heatmap');
      for (const [name, value] of Object.entries(a)) el.setAttribute(name, value);
      let computed = 0;
      el.addEventListener('attention-computed', () => computed++);
      document.body.append(el);
      while (!el.result && !el.error) await new Promise((r) => setTimeout(r, 5));
      const sr = el.shadowRoot, message = sr.querySelector('[part="message"]');
      const out = { computed, error: el.error?.message ?? null, message: message.hidden ? null : message.textContent,
        heatmaps: [...sr.querySelectorAll('[part="heatmap"]')].filter((p) => !p.hidden).length, nodes: sr.querySelectorAll('*').length };
      el.id = `el${document.querySelectorAll('attention-heatmap').length}`;
      return out;
    }, attrs)]);
  } finally {
    clearTimeout(timer);
  }
}

/** x (n, d) as a JSON attribute: short numbers, no two rows alike. */
const xAttr = (n, d) => JSON.stringify(Array.from({ length: n }, (_, i) => Array.from({ length: d }, (_, j) => ((i * 7 + j * 3) % 11) / 10 - 0.5)));

describe('<attention-heatmap heads>: the budget of one element', () => {
  test('x 256×256 with seed="0" and heads="8" (or "64") answers at once with the budget message, before torch-rng.js loads', async () => {
    const { page, log } = await open('budget.html');
    const x = xAttr(256, 256);
    for (const [heads, cells] of [['8', 589824], ['64', 4259840]]) {
      // "at once": refused before any work, not timed (no event, no heatmap, torch-rng.js never asked for)
      const r = await answer(page, { x, seed: '0', heads, tokens: '' });
      assert.match(r.message, /^注意力热力图无法显示：输入有误。/);
      assert.ok(r.message.includes(`this would draw ${cells} cells (${heads} heads × 256×256 weights + 256×256 output); ` +
        'the budget is 65536 cells per element, all heatmaps together'), r.message);
      assert.equal(r.error, r.message.slice('注意力热力图无法显示：输入有误。'.length));
      assert.deepEqual([r.computed, r.heatmaps], [0, 0], 'no event, no heatmap');
      assert.ok(r.nodes < 40, `${r.nodes} shadow-DOM nodes`);
    }
    assert.ok(!log.requests.some((p) => p.endsWith('/torch-rng.js')), 'refused before the random generator is even loaded');
    await assertClean(page, log, 'budget.html');
    await page.close();
  });

  test('under the budget the heads are drawn; growing past it shows the message, shrinking draws again', async () => {
    const { page, log } = await open('budget.html');
    // 8 heads × 64×64 + the 64×64 output = 36,864 cells
    const r = await answer(page, { x: xAttr(64, 64), seed: '0', heads: '8' });
    assert.equal(r.message, null, r.error);
    assert.deepEqual([r.computed, r.heatmaps], [1, 8]);
    const s = await page.evaluate(async () => {
      const el = document.querySelector('attention-heatmap');
      const state = () => ({ message: el.shadowRoot.querySelector('[part="message"]').hidden ? null : el.error.message,
        heatmaps: [...el.shadowRoot.querySelectorAll('[part="heatmap"]')].filter((p) => !p.hidden).length });
      // the next answer: an event or a message (a render that neither computes nor fails: 30 s)
      const next = (heads) => new Promise((res) => {
        const done = () => { clearInterval(poll); clearTimeout(limit); res(state()); };
        el.addEventListener('attention-computed', done, { once: true });
        const poll = setInterval(() => { if (el.error) done(); }, 5);
        const limit = setTimeout(done, 30000);
        el.heads = heads;
      });
      return { over: await next(16), back: await next(4) };
    });
    assert.equal(s.over.message, 'this would draw 69632 cells (16 heads × 64×64 weights + 64×64 output); the budget is 65536 cells per element, all heatmaps together');
    assert.equal(s.over.heatmaps, 0);
    assert.deepEqual(s.back, { message: null, heatmaps: 4 });
    await assertClean(page, log, 'budget.html, under the budget');
    await page.close();
  });
});
