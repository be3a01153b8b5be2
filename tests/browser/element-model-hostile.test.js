// element-model-hostile.test.js - <attention-heatmap model="…"> against what issue 20 found: a
// wide checkpoint with a long text (it blocked the page 91 s and took 6 GB before the renderer
// refused), names that are Object.prototype's keys, URL schemes that are not a folder, and the
// one-file embed under the Trusted Types policy docs/EMBED.md documents. The pages and the
// checkpoint are written at test time into test-results/ (git-ignored).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startServer } from '../../scripts/serve.js';
import { root } from '../helpers.js';
import { randomGpt2 } from '../model-helpers.js';
import { launch, settled } from './browser.js';

const DIR = 'test-results/element-model-hostile/';
const TT = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'; require-trusted-types-for 'script'; trusted-types attnmap";

function page(name, body, script = '<script type="module" src="../../web/element/attention-heatmap.js"></script>') {
  fs.writeFileSync(path.join(root, DIR, name), `<!doctype html><html lang="en"><head><meta charset="utf-8">${script}</head><body>${body}</body></html>\n`);
}

fs.mkdirSync(path.join(root, DIR, 'wide'), { recursive: true });
{
  // 12 layers × 64 heads, n_embd 64: 1.35 MB, as in the report
  const { config, bytes } = randomGpt2({ L: 12, H: 64, C: 64, V: 300, P: 1024, seed: 4 });
  fs.writeFileSync(path.join(root, DIR, 'wide/config.json'), JSON.stringify(config));
  fs.writeFileSync(path.join(root, DIR, 'wide/model.safetensors'), bytes);
  fs.writeFileSync(path.join(root, DIR, 'wide/vocab.txt'), ['[PAD]', '[UNK]', '[CLS]', '[SEP]', 'a', 'b', ...Array.from({ length: 294 }, (_, i) => `w${i}`)].join('\n'));
}
const ids = JSON.stringify(Array.from({ length: 1100 }, (_, i) => 4 + (i % 2)));   // past the context (1,024): up to it, a canvas (element-long.test.js)
page('budget.html', `<attention-heatmap id="text" model="wide/" text="${'a'.repeat(20000)}"></attention-heatmap>
<attention-heatmap id="ids" model="wide/" ids="${ids}" layer="11" head="63"></attention-heatmap>
<attention-heatmap id="ok" model="wide/" ids="[4,5,4,5,4]" layer="11" head="63"></attention-heatmap>`);
page('names.html', ['constructor', '__proto__', 'toString', 'hasOwnProperty'].map((n, i) => `<attention-heatmap id="n${i}" model="${n}" text="猫"></attention-heatmap>`).join('\n') +
  '\n<attention-heatmap id="data" model="data:text/plain,{}" text="猫"></attention-heatmap>\n<attention-heatmap id="js" model="javascript:alert(1)" text="猫"></attention-heatmap>');
page('spa.html', '<attention-heatmap id="good" model="spa/" text="猫吃鱼" layer="1" head="3"></attention-heatmap><attention-heatmap id="none" model="nothing/" text="猫吃鱼"></attention-heatmap>');
page('tt.html', '<attention-heatmap id="a" model="toy-zh" text="猫吃鱼" layer="1" head="3"></attention-heatmap>', '<script src="../../web/dist/attention-heatmap.min.js"></script>');

const server = await startServer({ root, allow: [DIR], headers: (p) => (p.endsWith('/tt.html') ? { 'content-security-policy': TT } : {}) });
const browser = await launch();
after(async () => { await browser.close(); await server.close(); fs.rmSync(path.join(root, DIR), { recursive: true, force: true }); });

async function open(name, route) {
  const p = await browser.newPage();
  if (route) await p.route(...route);
  const log = { pageErrors: [], violations: [] };
  p.on('pageerror', (e) => log.pageErrors.push(e.message));
  p.on('console', (m) => { if (/Trusted Type|TrustedScriptURL|violat/i.test(m.text())) log.violations.push(m.text()); });
  await p.goto(server.url + DIR + name);
  await settled(p, 20000);
  return { page: p, log };
}

const shown = (p, id) => p.evaluate((id) => {
  const sr = document.getElementById(id).shadowRoot, m = sr.querySelector('[part="message"]');
  return { message: m.hidden ? null : [...m.querySelectorAll('p')].map((x) => x.textContent), svg: sr.querySelector('svg[data-model]')?.dataset.head ?? null };
}, id);

test('a wide checkpoint with a long text or 1,100 ids (context 1,024): the budget and context messages, before any forward pass; one head shown costs one head', async () => {
  const { page: p, log } = await open('budget.html');
  assert.match((await shown(p, 'text')).message[1], /the text has 20000 characters; the budget is 16384/);
  assert.match((await shown(p, 'ids')).message[1], /1100 tokens are more than this model reads: its context is 1024 tokens/);
  assert.equal((await shown(p, 'ok')).svg, '63', 'layer 11, head 63 of the same model is drawn');
  assert.deepEqual(log.pageErrors, []);
  await p.close();
});

test('model="constructor", "__proto__", "toString": a folder like any other name (404), never a shipped model; data: and javascript: refused by name', async () => {
  const { page: p, log } = await open('names.html');
  for (const [i, n] of ['constructor', '__proto__', 'toString', 'hasOwnProperty'].entries()) {
    const r = await shown(p, `n${i}`);
    assert.match(r.message[1], new RegExp(`${n}/config\\.json: HTTP 404`), `${n}: ${r.message}`);
  }
  assert.match((await shown(p, 'data')).message[1], /model: a folder URL must be http: or https:; "data:" URLs are not fetched/);
  assert.match((await shown(p, 'js')).message[1], /"javascript:" URLs are not fetched/);
  assert.deepEqual(log.pageErrors, []);
  await p.close();
});

test('the one-file embed with model="toy-zh" under require-trusted-types-for \'script\'; trusted-types attnmap', async () => {
  const { page: p, log } = await open('tt.html');
  const r = await shown(p, 'a');
  assert.equal(r.message, null, String(r.message));
  assert.equal(r.svg, '3');
  assert.deepEqual(log.violations, []);
  assert.deepEqual(log.pageErrors, []);
  await p.close();
});

test('behind a single-page app\'s fallback (index.html, 200, for every missing path): the folder loads; a folder that is not there gets the fallback hint', async () => {
  const TOY = path.join(root, 'web/models/toy-zh');
  const { page: p, log } = await open('spa.html', ['**/{spa,nothing}/*', (route) => {
    const name = new URL(route.request().url()).pathname.split('/').pop();
    const real = route.request().url().includes('/spa/') && ['config.json', 'model.safetensors', 'vocab.txt'].includes(name);
    return real ? route.fulfill({ status: 200, body: fs.readFileSync(path.join(TOY, name)) })
      : route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><div id="app"></div>' });
  }]);
  assert.equal((await shown(p, 'good')).svg, '3', 'vocab.json answered with HTML is absent: vocab.txt used');
  const none = await shown(p, 'none');
  assert.match(none.message[1], /nothing\/config\.json: the server answered with an HTML page, not the file/);
  assert.match(none.message[2], /单页应用的回退页/);
  assert.deepEqual(log.pageErrors, []);
  await p.close();
});
