// fetch-checkpoint.test.js - loadModel(url) and fetchCheckpoint against servers that misbehave as
// real ones do: a single-page app's fallback (every path answers index.html with 200), a server
// that stalls in the middle of a file, one that cuts a body short. In Node, whose fetch is the
// browser's; the element runs the same code (tests/browser/element-model.test.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadModel, fetchCheckpoint, ModelFetchError } from '../../web/model/model-node.js';
import { root, serve } from '../helpers.js';

const TOY = path.join(root, 'web/models/toy-zh');
const toyFile = (name) => fs.readFileSync(path.join(TOY, name));
const INDEX = '<!doctype html><html><body><div id="app"></div></body></html>';


// the toy folder, and index.html with 200 for anything else (Vite's dev server and preview do this)
const spa = (req, res, name) => {
  if (['config.json', 'model.safetensors', 'vocab.txt'].includes(name)) res.end(toyFile(name));
  else { res.writeHead(200, { 'content-type': 'text/html' }); res.end(INDEX); }
};

test('behind an SPA fallback: an optional file answered with index.html is absent, and the model loads', async () => {
  const s = await serve(spa);
  try {
    const model = await loadModel(s.url);
    assert.equal(model.tokenizer, 'wordpiece', 'vocab.json was index.html: absent; vocab.txt used');
    assert.deepEqual(model.encode('猫吃鱼').length, 3);
    model.dispose();
  } finally {
    await s.close();
  }
});

test('files: [...] fetches the files listed and nothing else', async () => {
  const s = await serve(spa);
  try {
    const files = await fetchCheckpoint(s.url, undefined, { files: ['config.json', 'model.safetensors', 'vocab.txt'] });
    assert.deepEqual(Object.keys(files).sort(), ['config', 'vocabTxt', 'weights']);
    assert.deepEqual(s.requests.sort(), ['/m/config.json', '/m/model.safetensors', '/m/vocab.txt']);
  } finally {
    await s.close();
  }
});

test('a required file answered with an HTML page is a ModelFetchError naming it, not a JSON error', async () => {
  const s = await serve((req, res) => { res.writeHead(200, { 'content-type': 'text/html' }); res.end(INDEX); });
  try {
    await assert.rejects(loadModel(s.url), (e) => e instanceof ModelFetchError && /m\/config\.json: the server answered with an HTML page, not the file/.test(e.message));
  } finally {
    await s.close();
  }
});

test('a server that stalls in the middle of the weights: a ModelFetchError after stallMs naming the file', async () => {
  const s = await serve((req, res, name) => {
    if (name !== 'model.safetensors') return spa(req, res, name);
    const bytes = toyFile(name);
    res.writeHead(200, { 'content-length': bytes.length });
    res.write(bytes.subarray(0, 1000));                              // then nothing, ever
  });
  try {
    await assert.rejects(loadModel(s.url, { stallMs: 300 }), (e) => e instanceof ModelFetchError && e.status === 200 &&
      /m\/model\.safetensors: the download stalled: no data for 0\.3 s after 1000 bytes of \d+/.test(e.message));
  } finally {
    await s.close();
  }
});

test('a body cut short names the file and how much came', async () => {
  const s = await serve((req, res, name) => {
    if (name !== 'model.safetensors') return spa(req, res, name);
    const bytes = toyFile(name);
    res.writeHead(200, { 'content-length': bytes.length });
    res.end(bytes.subarray(0, 5000));
    res.socket.destroy();
  });
  try {
    await assert.rejects(loadModel(s.url), (e) => e instanceof ModelFetchError && /m\/model\.safetensors: the download broke off after \d+ bytes/.test(e.message));
  } finally {
    await s.close();
  }
});

test('headers that never come: a ModelFetchError after stallMs', async () => {
  const s = await serve(() => {});                                    // never answers
  try {
    await assert.rejects(loadModel(s.url, { stallMs: 300 }), (e) => e instanceof ModelFetchError && /config\.json: no answer within 0\.3 s/.test(e.message));
  } finally {
    await s.close();
  }
});

test('a sharded LLaMA-family folder over http: the index and its shards fetched, the numbers PyTorch\'s', async () => {
  const dir = path.join(root, 'tests/golden/llama/qwen2-sharded-f32');
  const s = await serve((req, res, name) => {
    const file = path.join(dir, name);
    if (/^[\w.-]+$/.test(name) && fs.existsSync(file)) res.end(fs.readFileSync(file));
    else { res.writeHead(404); res.end(); }
  });
  try {
    const g = JSON.parse(fs.readFileSync(path.join(dir, 'expected.json'), 'utf8'));
    const model = await loadModel(s.url);
    const seq = g.sequences[1];
    const { logits } = model.forward(seq.ids);
    let d = 0;
    seq.logits.flat().forEach((x, i) => { d = Math.max(d, Math.abs(x - logits.data[i])); });
    assert.ok(d <= 1e-4, `logits differ by ${d}`);
    assert.ok(s.requests.includes('/m/model.safetensors.index.json') && s.requests.filter((r) => /model-0000\d-of-00003/.test(r)).length === 3);
    model.dispose();
  } finally {
    await s.close();
  }
});
