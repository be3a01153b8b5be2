// The same wasm in Chromium and in Node gives the same bits on every golden case.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createAttention } from '../../web/core/attention.js';
import { startServer } from '../../scripts/serve.js';
import { root, golden, caseOptions, bitsHex } from '../helpers.js';
import { launch, pageErrors } from './browser.js';

const data = golden();
const server = await startServer({ root, allow: ['tests/fixtures/core/'] });
const browser = await launch();
after(async () => { await browser.close(); await server.close(); });

test('Chromium and Node compute bit-identical results on every golden case', async () => {
  const page = await browser.newPage();
  const errors = pageErrors(page);
  await page.goto(`${server.url}tests/fixtures/core/index.html`);
  await page.waitForFunction(() => window.attnReady);
  await page.evaluate(() => window.attnReady);
  const inBrowser = await page.evaluate((cases) => {
    const hex = (f) => Array.from(new Uint8Array(f.buffer, f.byteOffset, f.byteLength), (b) => b.toString(16).padStart(2, '0')).join('');
    return cases.map(({ c, o }) => {
      const r = c.kind === 'sdpa' ? window.attn.attention({ q: c.q, k: c.k, v: c.v }, o)
        : window.attn.selfAttention({ x: c.x, wq: c.wq, wk: c.wk, wv: c.wv }, o);
      return Object.fromEntries(Object.entries(r).map(([key, m]) => [key, hex(m.data)]));
    });
  }, data.cases.map((c) => ({ c, o: caseOptions(c) })));
  const attn = await createAttention();
  data.cases.forEach((c, i) => {
    const r = c.kind === 'sdpa' ? attn.attention({ q: c.q, k: c.k, v: c.v }, caseOptions(c))
      : attn.selfAttention({ x: c.x, wq: c.wq, wk: c.wk, wv: c.wv }, caseOptions(c));
    for (const key of Object.keys(r)) assert.equal(inBrowser[i][key], bitsHex(r[key].data), `${c.name} ${key}`);
  });
  assert.deepEqual(errors, []);
  const err = await page.evaluate(() => { try { window.attn.attention({ q: [[NaN]], k: [[1]], v: [[1]] }); } catch (e) { return [e.name, e.code, e.message]; } });
  assert.deepEqual(err.slice(0, 2), ['AttentionError', 'NON_FINITE']);
});
