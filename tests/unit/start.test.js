// `npm start`: serves the page from the committed build and prints the address; rebuilds
// first only when emcc is present and c_src/ changed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { root } from '../helpers.js';

const hasEmcc = spawnSync('sh', ['-c', 'command -v emcc'], { stdio: 'ignore' }).status === 0;

// Run scripts/start.js in `dir`; resolve with { url, output } once it prints the address.
function start(dir, env = {}) {
  const child = spawn(process.execPath, [path.join(dir, 'scripts/start.js')], { cwd: dir, env: { ...process.env, ...env } });
  let output = '';
  const done = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no address printed within 60 s:\n${output}`)), 60000);
    const onData = (d) => {
      output += d;
      const m = /serving the page at (http:\/\/localhost:\d+\/)/.exec(output);
      if (m) { clearTimeout(timer); resolve({ url: m[1], output }); }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`exited with ${code}:\n${output}`)));
  });
  return { child, done };
}

test('npm start prints the address and serves the page, the wasm and the bundle; PORT overrides the port', async () => {
  const probe = (await import('node:net')).createServer();
  const port = await new Promise((r) => probe.listen(0, '127.0.0.1', () => r(probe.address().port)));
  await new Promise((r) => probe.close(r));
  const { child, done } = start(root, { PORT: String(port) });
  try {
    const { url, output } = await done;
    assert.equal(url, `http://localhost:${port}/`);
    assert.doesNotMatch(output, /rebuilding/);
    const page = await fetch(url);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type'), /text\/html/);
    assert.match(await page.text(), /猫吃鱼|猫|attention/);
    const wasm = await fetch(`${url}web/wasm/attention.wasm`);
    assert.equal(wasm.headers.get('content-type'), 'application/wasm');
    assert.equal((await fetch(`${url}../../etc/passwd`)).status, 404);
  } finally {
    child.kill();
  }
});

test('npm start rebuilds when emcc is present and c_src/ changed', { skip: !hasEmcc && !process.env.CI && 'emcc is not installed here; under CI this test runs', timeout: 120000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-start-'));
  try {
    for (const f of ['c_src', 'web', 'scripts', 'build.sh', 'index.html', 'package.json']) {
      if (fs.existsSync(path.join(root, f))) fs.cpSync(path.join(root, f), path.join(dir, f), { recursive: true });
    }
    fs.appendFileSync(path.join(dir, 'c_src/attention.c'), '\n// a change\n');
    const before = fs.readFileSync(path.join(dir, 'web/wasm/attention-wasm.js'), 'utf8').slice(0, 120);
    const { child, done } = start(dir, { PORT: '0' });
    try {
      const { output } = await done;
      assert.match(output, /rebuilding/);
      const after = fs.readFileSync(path.join(dir, 'web/wasm/attention-wasm.js'), 'utf8').slice(0, 120);
      assert.notEqual(after, before, 'the recorded sources hash changed');
    } finally {
      child.kill();
    }
    // a second start with nothing changed does not rebuild
    const again = start(dir, { PORT: '0' });
    try { assert.doesNotMatch((await again.done).output, /rebuilding/); } finally { again.child.kill(); }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
