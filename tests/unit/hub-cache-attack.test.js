// hub-cache-attack.test.js - the Hugging Face cache's listing under attack (issue 35, finding 7):
// cachedModels(), scanHubCache() (web/model/hub/hub-cache-node.js) and `attnmap cache` over crafted
// cache folders. The cache is a folder anyone can write to and Python shares, so each entry may
// be hostile: a config.json that links to /dev/zero (it grew the listing past 4 GB), a FIFO, a
// dangling link at the cache root (it failed the whole listing with "ENOENT: ENOENT: …"),
// dangling and looping links inside a snapshot (the repo vanished without a word), folders named
// models--..--.. and models--a--b--c (listed as loadable "../.." and "a/b/c"), a ref that names
// no snapshot. Each must be reported as that entry's own trouble while the rest of the cache is
// listed. Everything that could hang or grow runs in a child with a time limit and a heap cap.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { writePythonCache, repoFolderName } from '../fixtures/hub/python-cache.js';
import { root } from '../helpers.js';

const POSIX = process.platform !== 'win32';       // links to /dev/zero
const mkfifo = (p) => spawnSync('mkfifo', [p]).status === 0;
const CLI = path.join(root, 'bin/attnmap.js');
const SCANNER = pathToFileURL(path.join(root, 'web/model/hub/hub-cache-node.js')).href;
const LIMITS = { encoding: 'utf8', timeout: 60_000, maxBuffer: 16 << 20 };   // a budget against a hang, not a timing
const HEAP = '--max-old-space-size=256';

const temps = [];
after(() => { for (const d of temps) fs.rmSync(d, { recursive: true, force: true }); });
const tmp = () => { const d = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-cache-attack-')); temps.push(d); return d; };

const commit = (c) => c.repeat(40);
const CONFIG = '{"model_type":"qwen2"}';
const WEIGHTS = Buffer.alloc(3000, 1);
const good = (extra = {}) => ({ 'config.json': CONFIG, 'model.safetensors': WEIGHTS, ...extra });
const snapshotOf = (dir, repo, c) => path.join(dir, repoFolderName(repo), 'snapshots', c);

/** A file of a snapshot replaced by a link to target (absolute, or relative to the snapshot). */
function relink(dir, repo, c, file, target) {
  const p = path.join(snapshotOf(dir, repo, c), file);
  fs.rmSync(p, { force: true });
  fs.symlinkSync(target, p);
}

/** `attnmap cache --dir dir` in a child with a heap cap and a time limit: { status, stdout, stderr, lines }. */
function listCli(dir) {
  const r = spawnSync(process.execPath, [HEAP, CLI, 'cache', '--dir', dir], LIMITS);
  assert.equal(r.signal, null, `attnmap cache was killed (${r.signal}): it hung or grew; stderr: ${r.stderr}`);
  return { ...r, lines: r.stdout.split('\n').filter(Boolean) };
}

/** scanHubCache and cachedModels in a child with the same limits: { scan, cached }. */
function scanInChild(dir) {
  const script = `const m = await import(${JSON.stringify(SCANNER)});
    const dir = ${JSON.stringify(dir)};
    process.stdout.write(JSON.stringify({ scan: await m.scanHubCache(dir), cached: await m.cachedModels({ cacheDir: dir, ollamaDir: dir + '/no-ollama', lmstudioDir: dir + '/no-lmstudio' }) }));`;
  const r = spawnSync(process.execPath, [HEAP, '--input-type=module', '-e', script], LIMITS);
  assert.equal(r.signal, null, `the scan was killed (${r.signal}): it hung or grew`);
  assert.equal(r.status, 0, `the scan failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const lineOf = (lines, start) => {
  const found = lines.filter((l) => l.startsWith(`${start}  `));
  assert.equal(found.length, 1, `one line for ${start}; the listing:\n${lines.join('\n')}`);
  return found[0];
};

test('config.json -> /dev/zero is reported, never read (it grew the listing past 4 GB)', { skip: !POSIX }, () => {
  const dir = tmp();
  writePythonCache(dir, 'org/fine', { commit: commit('1'), files: good() });
  writePythonCache(dir, 'org/zero', { commit: commit('2'), files: good() });
  relink(dir, 'org/zero', commit('2'), 'config.json', '/dev/zero');
  const cli = listCli(dir);
  assert.equal(cli.status, 0, cli.stderr);
  assert.match(lineOf(cli.lines, 'org/fine'), /main {2}\d+\.\d MB {2}qwen2$/);
  assert.match(lineOf(cli.lines, 'org/zero'), /^org\/zero {2}main {2}\d+\.\d MB {2}\(not loadable: config\.json: is a character device, not a regular file\)$/);
  assert.deepEqual(scanInChild(dir).cached.map((m) => m.repo), ['org/fine']);
});

test('FIFOs are reported, never read: tokenizer.json a FIFO, refs/main a FIFO', { skip: !POSIX }, (t) => {
  const dir = tmp();
  writePythonCache(dir, 'org/fine', { commit: commit('1'), files: good() });
  writePythonCache(dir, 'org/fifo', { commit: commit('3'), files: good() });
  if (!mkfifo(path.join(snapshotOf(dir, 'org/fifo', commit('3')), 'tokenizer.json'))) return t.skip('no mkfifo here');
  writePythonCache(dir, 'org/fiforef', { commit: commit('4'), files: good() });
  const ref = path.join(dir, repoFolderName('org/fiforef'), 'refs', 'main');
  fs.rmSync(ref);
  assert.ok(mkfifo(ref));

  const cli = listCli(dir);
  assert.equal(cli.status, 0, cli.stderr);
  assert.match(lineOf(cli.lines, 'org/fine'), /main {2}\d+\.\d MB {2}qwen2$/);
  assert.match(lineOf(cli.lines, 'org/fifo'), /\(not loadable: tokenizer\.json: is a FIFO, not a regular file\)$/);
  // refs/main a FIFO: that ref is reported; its snapshot is still listed (by commit)
  const fiforef = cli.lines.filter((l) => l.startsWith('org/fiforef  '));
  assert.ok(fiforef.some((l) => /^org\/fiforef {2}main {2}0\.0 MB {2}\(not loadable: refs\/main: is a FIFO, not a regular file\)$/.test(l)), fiforef.join('\n'));
  assert.ok(fiforef.some((l) => /^org\/fiforef {2}444444444444 {2}\d+\.\d MB {2}qwen2$/.test(l)), fiforef.join('\n'));

  const { cached } = scanInChild(dir);
  assert.deepEqual(cached.map((m) => `${m.repo}@${m.revision}`), [`org/fiforef@${commit('4')}`, 'org/fine@main'], 'only the snapshots attnmap can load');
});

test('a dangling link at the cache root: that entry is reported, the rest listed, exit 0', { skip: !POSIX }, () => {
  const dir = tmp();
  writePythonCache(dir, 'org/fine', { commit: commit('1'), files: good(), extras: true });
  fs.symlinkSync(path.join(dir, 'nowhere'), path.join(dir, 'models--org--gone'));
  fs.symlinkSync(path.join(dir, 'nowhere'), path.join(dir, 'stray-link'));              // not a model folder: not listed
  fs.symlinkSync('models--org--loop', path.join(dir, 'models--org--loop'));             // a link to itself
  fs.writeFileSync(path.join(dir, 'models--org--file'), 'not a folder');
  const cli = listCli(dir);
  assert.equal(cli.status, 0, cli.stderr);
  assert.equal(cli.stderr, '');
  assert.match(lineOf(cli.lines, 'org/fine'), /main {2}\d+\.\d MB {2}qwen2$/);
  assert.equal(lineOf(cli.lines, 'org/gone'), 'org/gone  -  0.0 MB  (not loadable: models--org--gone is a dangling link)');
  assert.equal(lineOf(cli.lines, 'org/loop'), 'org/loop  -  0.0 MB  (not loadable: models--org--loop is a link loop)');
  assert.equal(lineOf(cli.lines, 'org/file'), 'org/file  -  0.0 MB  (not loadable: models--org--file is not a folder)');
  assert.equal(cli.lines.length, 4, cli.stdout);
});

test('dangling and looping links inside a snapshot: the repo is listed with the reason, not dropped', { skip: !POSIX }, () => {
  const dir = tmp();
  writePythonCache(dir, 'org/dangling', { commit: commit('1'), files: good() });
  relink(dir, 'org/dangling', commit('1'), 'config.json', '../../blobs/deleted');
  writePythonCache(dir, 'org/loop', { commit: commit('2'), files: good() });
  relink(dir, 'org/loop', commit('2'), 'config.json', 'config.json');
  writePythonCache(dir, 'org/loop2', { commit: commit('3'), files: good({ 'a.txt': 'a' }) });
  relink(dir, 'org/loop2', commit('3'), 'a.txt', 'model.safetensors');
  relink(dir, 'org/loop2', commit('3'), 'model.safetensors', 'a.txt');
  writePythonCache(dir, 'org/sharded', {
    commit: commit('4'),
    files: { 'config.json': CONFIG, 'model.safetensors.index.json': JSON.stringify({ weight_map: { a: 'model-1.safetensors', b: 'model-2.safetensors' } }), 'model-1.safetensors': WEIGHTS },
  });
  // a file attnmap never reads may dangle: the snapshot still loads (and that link counts nothing)
  writePythonCache(dir, 'org/readme', { commit: commit('5'), files: good({ 'README.md': '# hi' }) });
  relink(dir, 'org/readme', commit('5'), 'README.md', '../../blobs/gone');

  const cli = listCli(dir);
  assert.equal(cli.status, 0, cli.stderr);
  assert.match(lineOf(cli.lines, 'org/dangling'), /\(not loadable: config\.json is a dangling link\)$/);
  assert.match(lineOf(cli.lines, 'org/loop'), /\(not loadable: config\.json is a link loop\)$/);
  assert.match(lineOf(cli.lines, 'org/loop2'), /\(not loadable: model\.safetensors is a link loop\)$/);
  assert.match(lineOf(cli.lines, 'org/sharded'), /\(not loadable: no model-2\.safetensors \(named by model\.safetensors\.index\.json\)\)$/);
  assert.match(lineOf(cli.lines, 'org/readme'), /^org\/readme {2}main {2}0\.0 MB {2}qwen2$/);
  const { scan } = scanInChild(dir);
  assert.equal(scan.find((s) => s.repo === 'org/readme').bytes, CONFIG.length + WEIGHTS.length);
});

test('folders whose names are not repo ids (models--..--.., models--a--b--c) are reported as not a repo, never loadable', () => {
  const dir = tmp();
  writePythonCache(dir, '../..', { commit: commit('1'), files: good() });               // models--..--..
  writePythonCache(dir, 'a/b', { commit: commit('2'), files: good() });
  fs.renameSync(path.join(dir, 'models--a--b'), path.join(dir, 'models--a--b--c'));
  writePythonCache(dir, 'org/fine', { commit: commit('3'), files: good() });
  fs.mkdirSync(path.join(dir, 'models--evil\u001b[31m--x'));                               // a terminal escape in a name
  const { scan, cached } = scanInChild(dir);
  assert.deepEqual(cached.map((m) => m.repo), ['org/fine']);
  assert.equal(scan.find((s) => s.repo === 'models--..--..')?.why, 'not a repo: "../.." is not a repo id (ORG/NAME)');
  assert.equal(scan.find((s) => s.repo === 'models--a--b--c')?.why, 'not a repo: "a/b/c" is not a repo id (ORG/NAME)');
  assert.ok(!scan.some((s) => ['../..', 'a/b/c'].includes(s.repo)), 'never under the parsed name');
  const cli = listCli(dir);
  assert.equal(cli.status, 0, cli.stderr);
  assert.ok(!cli.stdout.includes('\u001b'), 'no raw escape reaches the terminal');
  assert.ok(cli.lines.includes('models--evil\\u001b[31m--x  -  0.0 MB  (not loadable: not a repo: "evil\\u001b[31m/x" is not a repo id (ORG/NAME))'), cli.stdout);
  assert.ok(!cli.lines.some((l) => /^(\.\.\/\.\.|a\/b\/c) /.test(l)), cli.stdout);
});

test('bytes: each blob once, links out of the repo\'s folder and special files count nothing; a ref to a missing snapshot is reported', { skip: !POSIX }, () => {
  const dir = tmp(), outside = path.join(tmp(), 'big.bin');
  fs.writeFileSync(outside, Buffer.alloc(100_000));
  writePythonCache(dir, 'org/sizes', { commit: commit('1'), files: good({ 'copy.safetensors': WEIGHTS, 'sub/dir/vocab.txt': 'a\nb\n' }) });
  writePythonCache(dir, 'org/sizes', { commit: commit('2'), files: good(), revision: 'v2' });   // shares the blobs
  relink(dir, 'org/sizes', commit('2'), 'outside.bin', outside);
  relink(dir, 'org/sizes', commit('2'), 'zero.bin', '/dev/zero');
  fs.writeFileSync(path.join(dir, repoFolderName('org/sizes'), 'refs', 'pr-gone'), commit('9'));
  const { scan, cached } = scanInChild(dir);
  const of = (c) => scan.find((s) => s.commit === c);
  assert.equal(of(commit('1')).bytes, CONFIG.length + WEIGHTS.length + 4, 'copy.safetensors shares model.safetensors\'s blob: counted once; sub/dir counted');
  assert.equal(of(commit('2')).bytes, CONFIG.length + WEIGHTS.length, 'the link to /tmp and /dev/zero count nothing');
  assert.deepEqual(cached.map((m) => m.revision), ['main', 'v2']);
  const gone = scan.find((s) => s.refs.includes('pr-gone'));
  assert.equal(gone.why, `refs/pr-gone names "${commit('9')}", which has no snapshot`);
  assert.equal(gone.commit, null);
});

test('a bad snapshot entry and an unreadable ref are per entry; a file as the cache folder is a usage error', () => {
  const dir = tmp();
  writePythonCache(dir, 'org/mixed', { commit: commit('1'), files: good() });
  fs.writeFileSync(path.join(snapshotOf(dir, 'org/mixed', commit('2'))), 'a file, not a snapshot folder');
  fs.writeFileSync(path.join(dir, repoFolderName('org/mixed'), 'refs', 'huge'), Buffer.alloc(10_000, 0x61));
  fs.mkdirSync(path.join(dir, repoFolderName('org/nosnap')));
  const { scan } = scanInChild(dir);
  const mixed = scan.filter((s) => s.repo === 'org/mixed');
  assert.match(mixed[0].why, /^refs\/huge: 9\.8 KiB; .* read up to 4\.0 KiB$/, 'a ref is read up to 4 KiB');
  assert.deepEqual(mixed.map((s) => [s.refs, s.commit, s.why && s.why.replace(/: 9\.8 KiB; .*/, ': too large')]), [
    [['huge'], null, 'refs/huge: too large'],
    [['main'], commit('1'), null],
    [[], commit('2'), `snapshots/${commit('2')} is not a folder`],
  ]);
  assert.equal(scan.find((s) => s.repo === 'org/nosnap').why, 'no models--org--nosnap/snapshots');
  const file = path.join(dir, 'CACHE-FILE');
  fs.writeFileSync(file, 'x');
  const cli = listCli(file);
  assert.equal(cli.status, 2, cli.stderr);
  assert.match(cli.stderr, /^attnmap: the Hugging Face cache .*CACHE-FILE cannot be listed \(ENOTDIR\); expected a folder\n$/);
});
