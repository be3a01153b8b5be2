// architecture.test.js - ARCHITECTURE.md's import rules, enforced. The rooms table there (after
// the "rooms" comment) says, for each folder, which other folders its JavaScript may import from;
// this test reads every relative import and import() of web/ and bin/ and fails on any other.
// The table is parsed, not copied: the document is the rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { root } from '../helpers.js';

/** The rooms table: Map(room -> Set of rooms it may import from). */
export function readRooms(markdown) {
  const at = markdown.indexOf('<!-- rooms');
  assert.ok(at >= 0, 'ARCHITECTURE.md has no rooms table (<!-- rooms … --> before it)');
  const rows = markdown.slice(at).split('\n').slice(1).filter((l, i, all) => all.slice(0, i + 1).every((x) => x.startsWith('|')));
  const rooms = new Map();
  for (const row of rows.slice(2)) {
    const cells = row.split('|').slice(1, -1).map((c) => c.trim());
    const room = /^`([^`]+)`$/.exec(cells[0])?.[1];
    assert.ok(room, `a row of the rooms table names no room: ${row}`);
    rooms.set(room, new Set([...cells[2].matchAll(/`([^`]+)`/g)].map((m) => m[1])));
  }
  return rooms;
}

/** The room of a file: the longest room that is a folder above it (null: none). */
export function roomOf(rooms, file) {
  let best = null;
  for (const room of rooms.keys()) if (path.dirname(file) === room || path.dirname(file).startsWith(`${room}/`)) if (!best || room.length > best.length) best = room;
  return best;
}

// every relative specifier of a module: import/export … from '…', import('…'), import '…'
const SPEC = /(?:^|[\s;])(?:import|export)\s[^;'"]*?from\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm;
export function importsOf(source) {
  return [...source.matchAll(SPEC)].map((m) => m[1] ?? m[2] ?? m[3]).filter((s) => s.startsWith('.'));
}

/** Every import that breaks the rules: [{ file, target, from, to }]. files: { path: source }. */
export function violations(rooms, files) {
  const out = [];
  for (const [file, source] of Object.entries(files)) {
    const from = roomOf(rooms, file);
    for (const spec of importsOf(source)) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
      const to = roomOf(rooms, target);
      if (from === null || to === from) continue;
      if (to === null || !rooms.get(from).has(to)) out.push({ file, target, from, to });
    }
  }
  return out;
}

function sources(dir) {
  const out = {};
  for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory() && rel !== 'web/dist') Object.assign(out, sources(rel));
    else if (/\.(m?js)$/.test(e.name)) out[rel] = fs.readFileSync(path.join(root, rel), 'utf8');
  }
  return out;
}

const rooms = readRooms(fs.readFileSync(path.join(root, 'ARCHITECTURE.md'), 'utf8'));
const files = { ...sources('web'), ...sources('bin') };

test('ARCHITECTURE.md: every room is a folder, every allowed room is a room', () => {
  for (const [room, allowed] of rooms) {
    assert.ok(fs.statSync(path.join(root, room), { throwIfNoEntry: false })?.isDirectory(), `room ${room} is not a folder`);
    for (const a of allowed) assert.ok(rooms.has(a), `room ${room} may import ${a}, which is not a room`);
  }
});

test('every JavaScript file of web/ and bin/ is in a room (web/dist aside)', () => {
  for (const f of Object.keys(files)) assert.ok(roomOf(rooms, f), `${f} is in no room of ARCHITECTURE.md`);
});

test('no JavaScript file imports from a room it may not', () => {
  const bad = violations(rooms, files);
  assert.deepEqual(bad.map((v) => `${v.file} imports ${v.target}: ${v.from} may not import ${v.to ?? 'outside the rooms'}`), []);
});

test('the checker sees a forbidden import, a dynamic one, an import out of the rooms, and passes allowed ones', () => {
  const fake = {
    'web/heatmap/x.js': "import { loadModel } from '../model/model.js';\nconst t = await import('../core/errors.js');\nimport '../strings/heatmap.js';",
    'web/core/y.js': "export { a } from '../../tests/helpers.js';",
    'web/page/z.js': "import { renderHeatmap } from '../heatmap/heatmap.js';",
  };
  assert.deepEqual(violations(rooms, fake).map((v) => v.target), ['web/model/model.js', 'web/core/errors.js', 'tests/helpers.js']);
});

// issue 36: a file a reader can hold in mind. Generated files aside (web/dist, the wasm's base64
// modules, the toy model's module), no JavaScript file under web/ passes 500 lines.
test('no hand-written JavaScript file under web/ is over 500 lines', () => {
  const generated = (f) => /^web\/wasm\/.*-wasm\.js$/.test(f) || /^web\/models\/[^/]+\/[^/]+\.js$/.test(f);
  const long = Object.entries(files).filter(([f]) => f.startsWith('web/') && !generated(f))
    .map(([f, src]) => [f, src.split('\n').length - (src.endsWith('\n') ? 1 : 0)]).filter(([, n]) => n > 500);
  assert.deepEqual(long.map(([f, n]) => `${f}: ${n} lines`), []);
});

// ARCHITECTURE.md's invariant "no network at run time except a load by name or URL": the one
// place that fetches data is fetch-body.js (a folder by URL, the hub); threads-browser.js fetches
// the worker's own module. Nothing else under web/ calls fetch, XMLHttpRequest or WebSocket.
test('only web/model/load/fetch-body.js fetches data (and threads-browser.js its worker module)', () => {
  const allowed = new Set(['web/model/load/fetch-body.js', 'web/model/threads/threads-browser.js']);
  const network = /\bfetch\s*\(|\bXMLHttpRequest\b|\bWebSocket\b|\bEventSource\b|sendBeacon/;
  const callers = Object.entries(files).filter(([f, src]) => f.startsWith('web/') && network.test(src.replace(/\/\/.*$/gm, ''))).map(([f]) => f);
  assert.deepEqual(callers.filter((f) => !allowed.has(f)), []);
  for (const f of allowed) assert.ok(callers.includes(f), `${f} no longer fetches: update this test and ARCHITECTURE.md`);
});
