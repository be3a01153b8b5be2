// fetch-gguf.test.js - a .gguf file by URL (issue 38, item 5): loadModel('http://…/model.gguf')
// fetches the one file (fetchGguf in web/model/load/fetch-checkpoint.js) and gives the model that
// its bytes give; a file that is not GGUF fails on its first bytes, a Content-Length over wasm32's
// 4 GiB before the body, an HTML page and a 404 as ModelFetchErrors naming the URL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { loadModel, ModelFetchError } from '../../web/model/model-node.js';
import { root, serve } from '../helpers.js';


// the golden LLaMA as convert_hf_to_gguf.py writes it (gguf-load.test.js's goldenAsGguf), made in
// a child process: importing that test file here would run its tests too
const FILE = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-fetch-gguf-')), 'tiny.gguf');
spawnSync(process.execPath, ['--input-type=module', '-e',
  `const { goldenAsGguf } = await import(${JSON.stringify(pathToFileURL(path.join(root, 'tests/unit/gguf-load.test.js')).href)});
   (await import('node:fs')).writeFileSync(${JSON.stringify(FILE)}, goldenAsGguf('llama-f32'));`], { stdio: 'ignore' });
const GGUF = new Uint8Array(fs.readFileSync(FILE));
fs.rmSync(path.dirname(FILE), { recursive: true, force: true });
const IDS = [1, 5, 9, 2, 7];

test('loadModel(URL of a .gguf): the file fetched once, in chunks, the model of its bytes', async () => {
  const s = await serve((req, res, name) => {
    if (name !== 'tiny.gguf') { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'content-type': 'application/octet-stream' });   // no Content-Length: read by doubling
    for (let at = 0; at < GGUF.length; at += 7000) res.write(GGUF.subarray(at, at + 7000));
    res.end();
  });
  const fetched = await loadModel(`${s.url}tiny.gguf`), local = await loadModel({ gguf: GGUF });
  try {
    assert.deepEqual(s.requests, ['/m/tiny.gguf'], 'one request, for the file');
    const a = fetched.forward(IDS, { attention: true }), b = local.forward(IDS, { attention: true });
    assert.deepEqual(Array.from(a.logits.data), Array.from(b.logits.data));
    assert.deepEqual(Array.from(a.attention[1][0].data), Array.from(b.attention[1][0].data));
  } finally {
    fetched.dispose(); local.dispose();
    await s.close();
  }
});

test('a .gguf URL that is not GGUF, too large, an HTML page or missing: typed errors naming the URL', async () => {
  let wrote = 0;
  const s = await serve((req, res, name) => {
    if (name === 'safetensors.gguf') {   // another format: refused on its first bytes, the rest never read
      res.writeHead(200);
      res.write(Buffer.from([8, 0, 0, 0, 0, 0, 0, 0, 0x7b, 0x7d]));
      const more = setInterval(() => { if (!res.destroyed) { res.write(Buffer.alloc(65536)); wrote++; } }, 5);
      res.on('close', () => clearInterval(more));
    } else if (name === 'huge.gguf') {
      res.writeHead(200, { 'content-length': String(2 ** 33) });
      res.write(Buffer.from('GGUF'));
    } else if (name === 'page.gguf') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><p>not here');
    } else { res.writeHead(404, 'Not Found'); res.end(); }
  });
  try {
    await assert.rejects(loadModel(`${s.url}safetensors.gguf`), (e) => e.code === 'INVALID_MODEL' &&
      e.message.includes(`${s.url}safetensors.gguf: not a GGUF file: it starts with bytes 08 00 00 00, not "GGUF"`));
    assert.ok(wrote < 50, `the body was left after its first bytes (${wrote} more chunks written)`);
    await assert.rejects(loadModel(`${s.url}huge.gguf`), (e) => e.code === 'TOO_LARGE' && /huge\.gguf: the server announces 8\.0 GiB \(Content-Length 8589934592\); a GGUF file is read up to 4\.0 GiB/.test(e.message));
    await assert.rejects(loadModel(`${s.url}page.gguf`), (e) => e instanceof ModelFetchError && /page\.gguf: the server answered with an HTML page/.test(e.message));
    await assert.rejects(loadModel(`${s.url}none.gguf`), (e) => e instanceof ModelFetchError && e.status === 404 && /none\.gguf: HTTP 404/.test(e.message));
  } finally {
    await s.close();
  }
});
