// page-gguf.test.js - the checkpoint section takes a .gguf file (issue 38, item 5), in Chromium:
// a small LLaMA GGUF written here with scripts/gguf-writer.js (2 layers × 4 heads, GQA 2 kv heads,
// q/k/v/o in Q8_0, a SentencePiece vocabulary learnt by tests/helpers-gguf-tokenizer.js in its
// metadata), picked beside a README.md and then dropped (a DataTransfer holding it): the model
// loads with the file's own tokenizer, every layer × head map on the page equals Node's
// loadModel({ gguf }) forward for the same text within 1e-6, the heads panel comes; several .gguf
// files, or a split one, are a question in zh and en; a hostile .gguf gets its typed cause in the
// page's language, the loader's words folded after it. Node checks first: the files' names sorted,
// each hostile GGUF's cause.
//
//   node --test tests/browser/page-gguf.test.js
//
// Screenshots for a person to look at: /tmp/shots/page-gguf-{1280,390}.png
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer } from '../../scripts/serve.js';
import { ggufMetadata, rng, randomBlocks, writeGgufFile } from '../../scripts/gguf-writer.js';
import { gv } from '../gguf-writer.js';
import { trainSentencePiece, spmAsGguf } from '../helpers-gguf-tokenizer.js';
import { loadModel } from '../../web/model/model-node.js';
import { sortCheckpointFiles } from '../../web/page/page-files.js';
import { loadError } from '../../web/page/page-load-errors.js';
import { zh, en } from '../../web/page/page-strings.js';
import { root } from '../helpers.js';
import { launch, openPage } from './browser.js';

const DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-page-gguf-'));
const SHOTS = '/tmp/shots';
const TEXT = 'the cat sat on the mat and the dog ate the fish';
const CONFIG = {
  num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 8, hidden_size: 32,
  intermediate_size: 64, max_position_embeddings: 128, rms_norm_eps: 1e-5, rope_theta: 10000,
};
const SPM = trainSentencePiece([
  'the cat sat on the mat and the dog sat on the log', 'The cat ate the fish because it was hungry.',
  'a cat is not a dog; a dog is not a cat', 'hello world hello there',
], 40);

// ------------------------------------------------------------------------------------------------
// the files

const f32 = (values) => new Uint8Array(Float32Array.from(values).buffer);

/**
 * The tiny model's tensors (Hugging Face shapes, llama.cpp's names; no output.weight: tied), seeded;
 * change(tensors, metadata) may break them.
 */
function tinyGguf(name, change = () => {}) {
  const next = rng(7), C = CONFIG, V = SPM.tokens.length, D = C.head_dim;
  const floats = (n, scale) => f32(Array.from({ length: n }, () => (next() * 2 - 1) * scale));
  const norm = (n) => f32(Array.from({ length: n }, () => 0.8 + 0.4 * next()));
  const t = (tname, shape, type, data) => ({ name: tname, shape, type, data });
  const tensors = [t('token_embd.weight', [V, C.hidden_size], 'F32', floats(V * C.hidden_size, 1)), t('output_norm.weight', [C.hidden_size], 'F32', norm(C.hidden_size))];
  for (let l = 0; l < C.num_hidden_layers; l++) {
    const q8 = (part, rows, cols) => t(`blk.${l}.${part}.weight`, [rows, cols], 'Q8_0', randomBlocks('Q8_0', rows, cols, next, { scale: 2 }));
    tensors.push(t(`blk.${l}.attn_norm.weight`, [C.hidden_size], 'F32', norm(C.hidden_size)),
      q8('attn_q', C.num_attention_heads * D, C.hidden_size), q8('attn_k', C.num_key_value_heads * D, C.hidden_size),
      q8('attn_v', C.num_key_value_heads * D, C.hidden_size), q8('attn_output', C.hidden_size, C.num_attention_heads * D),
      t(`blk.${l}.ffn_norm.weight`, [C.hidden_size], 'F32', norm(C.hidden_size)),
      t(`blk.${l}.ffn_gate.weight`, [C.intermediate_size, C.hidden_size], 'F32', floats(C.intermediate_size * C.hidden_size, 0.2)),
      t(`blk.${l}.ffn_up.weight`, [C.intermediate_size, C.hidden_size], 'F32', floats(C.intermediate_size * C.hidden_size, 0.2)),
      t(`blk.${l}.ffn_down.weight`, [C.hidden_size, C.intermediate_size], 'F32', floats(C.hidden_size * C.intermediate_size, 0.2)));
  }
  const metadata = [...ggufMetadata('llama', { ...C, vocab_size: V }), ['general.name', gv.str('tiny')], ...spmAsGguf(SPM)];
  change(tensors, metadata);
  const file = path.join(DIR, name);
  writeGgufFile(file, { metadata, tensors: tensors.map((x) => ({ ...x, pieces: () => [x.data] })) });
  return file;
}

/** Each hostile file: its name, and the cause the reader reads first (page-load-errors.js). */
function hostileFiles(good) {
  const bytes = fs.readFileSync(good);
  const raw = (name, b) => { const file = path.join(DIR, name); fs.writeFileSync(file, b); return file; };
  const set = (metadata, key, value) => { metadata[metadata.findIndex(([k]) => k === key)][1] = value; };
  const magic = Buffer.from(bytes);
  magic.write('GGUX', 0, 'latin1');
  return {
    notGguf: raw('not-gguf.gguf', magic),
    truncated: raw('cut.gguf', bytes.subarray(0, bytes.length - 1000)),
    'truncated (in the header)': raw('cut-header.gguf', bytes.subarray(0, 200)),
    ggufDamaged: tinyGguf('twice.gguf', (t, m) => m.push(['general.name', gv.str('again')])),
    ggufMetadata: tinyGguf('no-layers.gguf', (t, m) => m.splice(m.findIndex(([k]) => k === 'llama.block_count'), 1)),
    ggufTokenizer: tinyGguf('bad-tokenizer.gguf', (t, m) => set(m, 'tokenizer.ggml.model', gv.str('bogus'))),
    ggufUnsupported: tinyGguf('q8_1.gguf', (t) => Object.assign(t.find((x) => x.name === 'blk.0.attn_q.weight'), { type: 'Q8_1', data: new Uint8Array(32 * 32 / 32 * 36) })),
    ggufMismatch: tinyGguf('short-norm.gguf', (t) => Object.assign(t.find((x) => x.name === 'blk.1.ffn_norm.weight'), { shape: [16], data: f32(new Array(16).fill(1)) })),
    nonFinite: tinyGguf('nan.gguf', (t) => { t.find((x) => x.name === 'output_norm.weight').data = f32([NaN, ...new Array(CONFIG.hidden_size - 1).fill(1)]); }),
  };
}

let browser, server, GOOD, HOSTILE, node, shared;
before(async () => {
  GOOD = tinyGguf('tiny.gguf');
  HOSTILE = hostileFiles(GOOD);
  fs.writeFileSync(path.join(DIR, 'README.md'), '# tiny\n');
  fs.mkdirSync(SHOTS, { recursive: true });
  node = await loadModel({ gguf: new Uint8Array(fs.readFileSync(GOOD)) });
  server = await startServer({ root, port: 0 });
  browser = await launch();
  // one page for the three tests below (opening it takes most of their time): each loads its own files
  shared = await openPage(browser, `${server.url}index.html`, { viewport: { width: 1280, height: 900 } });
});
after(async () => {
  await shared?.context.close();
  node?.dispose();
  await browser?.close();
  await server?.close();
  fs.rmSync(DIR, { recursive: true, force: true });
});

// ------------------------------------------------------------------------------------------------
// Node: which file is which; the causes

test('files: one .gguf is the checkpoint and the rest is not used; several, or a split one, are a question', () => {
  const f = (name) => ({ name });
  const one = sortCheckpointFiles([f('README.md'), f('Tiny-Q8_0.GGUF'), f('config.json'), f('model.safetensors')]);
  assert.equal(one.problem, null);
  assert.equal(one.gguf.name, 'Tiny-Q8_0.GGUF');
  assert.deepEqual(one.ignored, ['README.md', 'config.json', 'model.safetensors']);
  assert.equal(one.weights, null, 'the folder beside it is not read');
  const many = sortCheckpointFiles([f('a-Q4_K_M.gguf'), f('README.md'), f('a-Q8_0.gguf')]);
  assert.deepEqual([many.problem, many.gguf, many.ggufs], ['manyGguf', null, ['a-Q4_K_M.gguf', 'a-Q8_0.gguf']]);
  assert.equal(sortCheckpointFiles([f('m-00001-of-00002.gguf'), f('m-00002-of-00002.gguf')]).problem, 'ggufSplit');
  assert.equal(sortCheckpointFiles([f('m-00001-of-00002.gguf')]).problem, 'ggufSplit', 'one part alone');
  assert.equal(sortCheckpointFiles([f('m-00001-of-00001.gguf')]).gguf.name, 'm-00001-of-00001.gguf', 'a "split" of one part is whole');
  assert.equal(sortCheckpointFiles([f('config.json'), f('pytorch_model.bin')]).problem, 'binOnly', 'PyTorch weights: as before');
});

test('each hostile .gguf gets its cause, in zh and en; without the gguf flag the safetensors causes are unchanged', async () => {
  for (const [name, file] of Object.entries(HOSTILE)) {
    const want = name.split(' ')[0];
    const e = await loadModel({ gguf: new Blob([fs.readFileSync(file)]) }).then((m) => { m.dispose(); return null; }, (x) => x);
    assert.ok(e, `${name}: loadModel refused it`);
    assert.equal(e.name, 'AttentionError', `${name}: ${e.stack}`);
    assert.deepEqual(loadError(e, { gguf: true }), { key: 'invalid', cause: want }, `${name}: ${e.message}`);
    assert.ok(zh.models.ckpt.causes[want] && en.models.ckpt.causes[want], `${name}: words in both languages`);
  }
  const safetensors = Object.assign(new Error('tensor "h.0.attn.c_attn.weight" is missing: expected shape [8, 24]'), { name: 'AttentionError', code: 'INVALID_MODEL' });
  assert.deepEqual(loadError(safetensors), { key: 'invalid', cause: 'mismatch' });
  assert.deepEqual(loadError(safetensors, { gguf: true }), { key: 'invalid', cause: 'ggufMismatch' });
});

// ------------------------------------------------------------------------------------------------
// the page

/** The shared page at width px, in zh. */
async function open(width) {
  const { page, errors } = shared;
  await page.setViewportSize({ width, height: 900 });
  if (!(await page.evaluate(() => document.documentElement.lang.startsWith('zh')))) await switchTo(page, 'zh');
  return { page, errors };
}
const text = (page, sel) => page.textContent(sel);
/** The language button, until the page is in lang ('zh' or 'en'). */
const switchTo = async (page, lang) => {
  await page.click('#lang');
  await page.waitForFunction((l) => document.documentElement.lang.startsWith(l), lang);
};

/** Every thumbnail's cells as n × n matrices by [layer][head], and the ids it was drawn for. */
const gridMaps = (page) => page.$$eval('#checkpoint-grid button.thumb', (bs) => bs.map((b) => ({
  layer: Number(b.dataset.layer), head: Number(b.dataset.head), ids: b.querySelector('svg').dataset.ids,
  cells: [...b.querySelectorAll('rect.cell')].map((r) => [Number(r.dataset.row), Number(r.dataset.col), Number(r.dataset.value)]),
})));

/** The page's maps for text against Node's loadModel({ gguf }) forward: every head, every cell within 1e-6. */
async function assertMaps(page, words) {
  const ids = node.encode(words);
  await page.waitForFunction((want) => document.querySelector('#checkpoint-grid')?.dataset.state === 'ready' &&
    document.querySelector('#checkpoint-grid button.thumb svg')?.dataset.ids === want, JSON.stringify(ids), { timeout: 15000 });
  const { attention } = node.forward(ids, { attention: true });
  const maps = await gridMaps(page);
  const { n_layer: L, n_head: H } = node.config;
  assert.equal(maps.length, L * H, `${L} × ${H} maps`);
  const n = ids.length;
  let worst = 0;
  for (const m of maps) {
    assert.equal(m.ids, JSON.stringify(ids));
    const want = attention[m.layer][m.head].data;
    const seen = new Set();
    for (const [i, j, v] of m.cells) {
      seen.add(i * n + j);
      const d = Math.abs(v - want[i * n + j]);
      worst = Math.max(worst, d);
      assert.ok(d <= 1e-6, `layer ${m.layer} head ${m.head} [${i}][${j}]: page ${v}, Node ${want[i * n + j]}`);
    }
    assert.equal(seen.size, n * (n + 1) / 2, `layer ${m.layer} head ${m.head}: every cell of the causal triangle`);
  }
  // the enlarged map's labels are the file's tokenizer's
  assert.deepEqual(await page.$$eval('#checkpoint-big svg .row-label', (ts) => ts.map((t) => t.textContent)), node.tokens(ids));
  return worst;
}

/** The heads panel ran on the model: its thumbnails drawn for the text's tokens. */
async function assertHeads(page) {
  await page.waitForSelector('#roles:not([hidden])', { timeout: 15000 });
  await page.waitForFunction(() => document.querySelector('#roles-thumbs')?.dataset.state === 'ready' &&
    document.querySelector('#roles-thumbs button.roles-thumb'), null, { timeout: 15000 });
  const n = await page.$eval('#roles-thumbs button.roles-thumb', (b) => Number(b.dataset.n));
  assert.ok(n >= 1, `the heads panel drew maps of ${n} tokens`);
}

test('a .gguf picked beside a README: its tokenizer, its maps equal to Node\'s, the heads panel; the words say .gguf; 1280 px', async () => {
  const { page, errors } = await open(1280);
  assert.match(await text(page, '#checkpoint-files-label'), /\.gguf/);
  assert.match(await text(page, '#checkpoint-drop-hint'), /\.gguf/);
  assert.match(await text(page, '#checkpoint-text'), /\.gguf/);
  await page.setInputFiles('#checkpoint-files', [GOOD, path.join(DIR, 'README.md')]);
  await page.waitForSelector('#checkpoint-model:not([hidden])', { timeout: 15000 });
  const status = await text(page, '#checkpoint-status');
  assert.match(status, /^已加载 tiny\.gguf：2 层 × 4 个头，d_model = 32，词表 \d+/);
  assert.ok(status.includes('GGUF 文件里的分词器') && status.includes('没有用到：README.md'), status);
  assert.equal(await page.$eval('#checkpoint-progress', (p) => p.hidden), true, 'the bar goes when the file is read');
  assert.equal(await page.inputValue('#model-text'), 'The cat ate the fish because it was hungry', 'a vocabulary without 猫: the English example');
  await assertMaps(page, 'The cat ate the fish because it was hungry');
  await page.fill('#model-text', TEXT);
  const worst = await assertMaps(page, TEXT);
  assert.ok(worst <= 1e-6);
  assert.match(await text(page, '#checkpoint-grid-hint'), /分组查询注意力（GQA）：每层 4 个查询头分成 2 组/);
  await assertHeads(page);
  await switchTo(page, 'en');
  assert.match(await text(page, '#checkpoint-status'), /^Loaded tiny\.gguf: 2 layers × 4 heads, .*the tokenizer in the GGUF file\. Not used: README\.md\.$/);
  assert.match(await text(page, '#checkpoint-files-label'), /\.gguf/);
  await page.locator('#checkpoint').screenshot({ path: `${SHOTS}/page-gguf-1280.png` });
  assert.deepEqual(errors, []);
});

test('a .gguf dropped (a DataTransfer holding it): the same maps as Node\'s; 390 px, no sideways scroll', async () => {
  const { page, errors } = await open(390);
  const bytes = Array.from(fs.readFileSync(GOOD));
  await page.evaluate((b) => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(b)], 'dropped.gguf', { type: 'application/octet-stream' }));
    document.querySelector('#checkpoint-drop').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, bytes);
  // (a name of its own: the model before it, the same file picked, is on the page until this one comes)
  await page.waitForFunction(() => document.querySelector('#checkpoint-status').textContent.startsWith('已加载 dropped.gguf'), null, { timeout: 15000 });
  assert.match(await text(page, '#checkpoint-status'), /^已加载 dropped\.gguf：2 层 × 4 个头，.*GGUF 文件里的分词器。$/);
  assert.equal(await page.$eval('#checkpoint-model', (m) => m.hidden), false);
  await page.fill('#model-text', TEXT);
  await assertMaps(page, TEXT);
  await assertHeads(page);
  await page.locator('#checkpoint').screenshot({ path: `${SHOTS}/page-gguf-390.png` });
  assert.ok(await page.evaluate(() => document.scrollingElement.scrollWidth) <= 390, 'no sideways scroll at 390 px');
  assert.deepEqual(errors, []);
});

test('several .gguf files, or a split one: the page asks for one, naming them, in zh and en; a hostile .gguf: its typed cause in zh and en', async () => {
  const { page, errors } = await open(1280);
  const C = { zh: zh.models.ckpt, en: en.models.ckpt };
  const msg = () => text(page, '#checkpoint-msg');
  const lead = () => text(page, '#checkpoint-msg .error-lead');
  const second = path.join(DIR, 'tiny-Q8_0.gguf');
  fs.copyFileSync(GOOD, second);
  await page.setInputFiles('#checkpoint-files', [GOOD, second]);
  await page.waitForFunction(() => document.querySelector('#checkpoint-msg').textContent.length > 0);
  assert.equal(await msg(), C.zh.errors.manyGguf('tiny.gguf, tiny-Q8_0.gguf'));
  assert.match(await msg(), /好几个 \.gguf 文件（tiny\.gguf, tiny-Q8_0\.gguf）：一次只加载一个/);
  assert.equal(await page.$eval('#checkpoint-model', (m) => m.hidden), true, 'nothing loaded');

  // a corrupt one, then the page's language switched: the same error in the other language
  const corrupt = HOSTILE.notGguf;
  await page.setInputFiles('#checkpoint-files', [corrupt]);
  await page.waitForSelector('#checkpoint-msg .error-lead', { timeout: 15000 });
  assert.equal(await lead(), C.zh.errors.invalid(C.zh.causes.notGguf));
  assert.match(await lead(), /^这不是一个能用的检查点：文件不是 attnmap 能读的 GGUF 文件/);
  const detail = await text(page, '#checkpoint-msg details code');
  assert.match(detail, /^not-gguf\.gguf: not a GGUF file: it starts with 0x47 0x47 0x55 0x58/, 'the loader\'s words, unchanged');
  assert.equal(await page.$eval('#checkpoint-msg details', (d) => d.open), false, 'folded');
  assert.equal(await page.$eval('#checkpoint-model', (m) => m.hidden), true);
  await switchTo(page, 'en');
  assert.equal(await lead(), C.en.errors.invalid(C.en.causes.notGguf));
  assert.match(await lead(), /^This is not a usable checkpoint: the file is not a GGUF file attnmap reads/);

  // in English now: a truncated file, a broken tokenizer in the metadata, a split file
  for (const [cause, file] of [['truncated', HOSTILE.truncated], ['ggufTokenizer', HOSTILE.ggufTokenizer]]) {
    await page.setInputFiles('#checkpoint-files', [file]);
    await page.waitForFunction((want) => document.querySelector('#checkpoint-msg .error-lead')?.textContent === want,
      C.en.errors.invalid(C.en.causes[cause]), { timeout: 15000 });
  }
  await page.setInputFiles('#checkpoint-files', [{ name: 'big-00001-of-00003.gguf', mimeType: 'application/octet-stream', buffer: Buffer.from('GGUF') }]);
  await page.waitForFunction((want) => document.querySelector('#checkpoint-msg').textContent === want,
    C.en.errors.ggufSplit('big-00001-of-00003.gguf'), { timeout: 15000 });
  await switchTo(page, 'zh');   // what was said follows the switch
  assert.equal(await msg(), C.zh.errors.ggufSplit('big-00001-of-00003.gguf'));
  assert.deepEqual(errors, []);
});
