// model-threads.test.js - the model on threads in Chromium (issue 26): served with COOP and COEP
// (what npm start sends, scripts/start.js ISOLATED) the page is cross-origin isolated, and
// loadModel(…, { threads: 2 }) runs on two module Web Workers over one shared memory
// (web/model/threads/threads-browser.js) with the bits of one thread; without the headers it runs on one
// thread and says so. The teaching page loads a checkpoint on the cores (loadModel's default for a
// model of 4 M parameters or more) and says how many.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer } from '../../scripts/serve.js';
import { writeRandomCheckpoint } from '../../scripts/random-checkpoint.js';
import { ISOLATED } from '../../scripts/start.js';
import { root } from '../helpers.js';
import { launch } from './browser.js';

const GOLDEN = 'tests/golden/llama/qwen2-bf16/';
const EXPECTED = JSON.parse(fs.readFileSync(path.join(root, GOLDEN, 'expected.json'), 'utf8'));
// a Qwen2-shaped checkpoint of 5 M parameters (random, BF16): above SMALL_MODEL (model.js), so
// loadModel's default runs it on the cores
const BIGGER = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-threads-'));
let browser, isolated, plain;

before(async () => {
  writeRandomCheckpoint({
    architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2', hidden_size: 32, intermediate_size: 64, num_hidden_layers: 2,
    num_attention_heads: 4, num_key_value_heads: 2, max_position_embeddings: 64, vocab_size: 151936,
    rms_norm_eps: 1e-6, rope_theta: 1000000, tie_word_embeddings: true, hidden_act: 'silu',
  }, BIGGER);
  isolated = await startServer({ root, port: 0, allow: ['tests/golden/'], headers: () => ISOLATED });
  plain = await startServer({ root, port: 0, allow: ['tests/golden/'] });
  browser = await launch();
});
after(async () => { await browser?.close(); await isolated?.close(); await plain?.close(); fs.rmSync(BIGGER, { recursive: true, force: true }); });

// in a page of `server`: the golden folder loaded with 1 and with 2 threads, a forward with every
// map on each, and the bytes compared there
async function runInPage(server) {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  await page.goto(`${server.url}index.html`);
  const r = await page.evaluate(async ({ folder, ids }) => {
    const { loadModel } = await import('/web/model/model.js');
    const files = ['config.json', 'model.safetensors'];
    const bytes = (m) => { const r = m.forward(ids, { attention: true }); return [r.logits.data, ...r.attention.flat().map((a) => a.data)]; };
    const one = await loadModel(folder, { files }), two = await loadModel(folder, { files, threads: 2 });
    const a = bytes(one), b = bytes(two);
    const same = a.length === b.length && a.every((x, i) => new Uint8Array(x.buffer).every((v, j) => v === new Uint8Array(b[i].buffer)[j]));
    const out = { isolated: crossOriginIsolated, threads: [one.threads, two.threads], same, maps: a.length - 1, logit0: a[0][0] };
    one.dispose(); two.dispose();
    return out;
  }, { folder: `/${GOLDEN}`, ids: EXPECTED.sequences[0].ids });
  await page.close();
  return { ...r, problems };
}

test('cross-origin isolated (COOP + COEP): 2 threads on Web Workers, the bits of one thread', async () => {
  const r = await runInPage(isolated);
  assert.equal(r.isolated, true);
  assert.deepEqual(r.threads, [1, 2]);
  assert.equal(r.same, true, 'logits and every map byte for byte');
  assert.equal(r.maps, EXPECTED.config.layers * EXPECTED.config.heads);
  assert.ok(Math.abs(r.logit0 - EXPECTED.sequences[0].logits[0][0]) <= 1e-4, 'and PyTorch\'s logits');
  assert.deepEqual(r.problems, []);
});

test('not isolated: { threads: 2 } runs on one thread and says so, with the same numbers', async () => {
  const r = await runInPage(plain);
  assert.equal(r.isolated, false);
  assert.deepEqual(r.threads, [1, 1]);
  assert.equal(r.same, true);
  assert.deepEqual(r.problems, []);
});

test('the page, served as npm start serves it, loads a checkpoint of 5 M parameters on the cores and says how many (zh, en)', async () => {
  const page = await browser.newPage();
  try {
    await page.goto(`${isolated.url}index.html`);
    await page.waitForSelector('html[data-complete="true"]', { state: 'attached', timeout: 60000 });
    const cores = await page.evaluate(() => Math.min(8, navigator.hardwareConcurrency || 2));
    await page.setInputFiles('#checkpoint-files', ['config.json', 'model.safetensors'].map((f) => path.join(BIGGER, f)));
    await page.waitForSelector('#checkpoint-model:not([hidden])', { timeout: 30000 });
    const status = await page.textContent('#checkpoint-status');
    if (cores > 1) assert.match(status, new RegExp(`在 ${cores} 个线程上运行`));
    else assert.doesNotMatch(status, /线程/);
    await page.click('#lang');
    await page.waitForFunction(() => document.documentElement.lang === 'en');
    const en = await page.textContent('#checkpoint-status');
    if (cores > 1) assert.match(en, new RegExp(`running on ${cores} threads`));
    // the golden checkpoint (a few thousand parameters): one thread, and the status says nothing of threads
    await page.setInputFiles('#checkpoint-files', ['config.json', 'model.safetensors'].map((f) => path.join(root, GOLDEN, f)));
    await page.waitForFunction(() => /vocabulary 64,/.test(document.querySelector('#checkpoint-status').textContent), null, { timeout: 30000 });
    assert.doesNotMatch(await page.textContent('#checkpoint-status'), /thread/);
  } finally {
    await page.close();
  }
});
