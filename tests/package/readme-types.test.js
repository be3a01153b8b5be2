// readme-types.test.js - issue 39, item 4: every ```js block of README.md compiles under
// TypeScript's strict mode as written. Each block becomes a .ts file in a temporary project whose
// node_modules/attnmap links to this checkout, so `import … from 'attnmap/model'` resolves through
// package.json's exports and the published .d.ts files, as in a user's project (nodenext, lib
// es2022 + dom, @types/node, skipLibCheck false). A failure names the README line and tsc's words.
//
// A block that goes on from an earlier one says so in an HTML comment on the line just before its
// fence (invisible on GitHub and npm), which the test puts before the block:
//   <!-- ts: import type { Attention } from 'attnmap'; declare const attn: Attention; -->
//   <!-- ts: continues the block above -->      (that block's code, compiled together with this one)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { root } from '../helpers.js';

const TSC = path.join(root, 'node_modules/typescript/bin/tsc');
const PRELUDE = /^<!-- ts: (.*) -->$/, CONTINUES = 'continues the block above';

/**
 * The ```js blocks of a Markdown text: { fence (its 1-based line), lines: [{ text, at }] }, each
 * line with where it comes from (a README line, or the ts: comment's line), preludes and
 * continued blocks included.
 */
function jsBlocks(markdown) {
  const text = markdown.split('\n'), blocks = [];
  for (let i = 0; i < text.length; i++) {
    const open = /^(\s*)```(\S*)/.exec(text[i]);
    if (!open) {
      if (text[i].includes('<!-- ts:') && !/^\s*```js\s*$/.test(text[i + 1] ?? '')) {
        throw new Error(`line ${i + 1}: a <!-- ts: … --> comment must be on the line just before a \`\`\`js fence`);
      }
      continue;
    }
    let end = i + 1;
    while (end < text.length && !/^\s*```\s*$/.test(text[end])) end++;
    if (end === text.length) throw new Error(`line ${i + 1}: a \`\`\`${open[2]} block that never closes`);
    if (open[2] === 'js') blocks.push(block(text, i, end, blocks));
    i = end;
  }
  return blocks;
}

function block(text, fence, end, earlier) {
  const lines = [];
  const comment = PRELUDE.exec(text[fence - 1] ?? '');
  if (comment && comment[1].trim() === CONTINUES) {
    if (earlier.length === 0) throw new Error(`line ${fence}: "${CONTINUES}", but no \`\`\`js block comes before it`);
    lines.push(...earlier.at(-1).lines);
  } else if (comment) {
    lines.push({ text: comment[1], at: fence });
  }
  for (let l = fence + 1; l < end; l++) lines.push({ text: text[l], at: l + 1 });
  return { fence: fence + 1, lines };
}

/**
 * Type-checks the blocks; returns tsc's errors, each as "README.md:line:col (the block at line
 * N): error TSxxxx: …" with tsc's further lines under it.
 */
function typeErrors(blocks, name = 'README.md') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-readme-types-'));
  try {
    fs.mkdirSync(path.join(dir, 'node_modules'));
    fs.symlinkSync(root, path.join(dir, 'node_modules/attnmap'), 'dir');
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    const files = blocks.map((b) => {
      const file = `block-${b.fence}.ts`;
      // line 1 makes every block a module (its own scope, top-level await) whatever it imports
      fs.writeFileSync(path.join(dir, file), ['export {};', ...b.lines.map((l) => l.text)].join('\n') + '\n');
      return file;
    });
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: {
      strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2022', 'dom'],
      types: ['node'], typeRoots: [path.join(root, 'node_modules/@types')], skipLibCheck: false, noEmit: true,
    }, files }));
    const r = spawnSync(process.execPath, [TSC, '-p', dir, '--pretty', 'false'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    if (r.error) throw r.error;
    if (r.status === 0) return [];
    const errors = [];
    for (const line of `${r.stdout}${r.stderr}`.split('\n')) {
      const m = /^block-(\d+)\.ts\((\d+),(\d+)\): (.*)$/.exec(line);
      if (m) {
        const b = blocks.find((x) => x.fence === Number(m[1]));
        const at = b.lines[Number(m[2]) - 2]?.at ?? b.fence;
        errors.push(`${name}:${at}:${m[3]} (the block at line ${b.fence}): ${m[4]}`);
      } else if (line.trim()) {
        if (errors.length === 0) errors.push(`tsc: ${line}`);
        else errors[errors.length - 1] += `\n    ${line.trim()}`;
      }
    }
    return errors.length ? errors : [`tsc exited with ${r.status} and said nothing`];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('every ```js block of README.md compiles under TypeScript strict, through the package\'s exports and types', () => {
  const blocks = jsBlocks(fs.readFileSync(path.join(root, 'README.md'), 'utf8'));
  assert.ok(blocks.length >= 10, `README.md has ${blocks.length} \`\`\`js blocks; expected the API's examples`);
  const errors = typeErrors(blocks);
  assert.equal(errors.length, 0, `README.md's blocks do not compile (tsc, strict):\n${errors.join('\n')}`);
});

// the test itself: an error is reported at its README line, through a prelude and a continued block
test('the extraction reports a wrong block at its README line, and takes preludes and continued blocks', () => {
  const md = [
    '# x',                                                       // 1
    '<!-- ts: declare const attn: import(\'attnmap\').Attention; -->', // 2
    '```js',                                                     // 3
    'const r = attn.rope({ x: [[1, 0]] });',                     // 4
    '```',                                                       // 5
    '',                                                          // 6
    '<!-- ts: continues the block above -->',                    // 7
    '```js',                                                     // 8
    'const t = r.theta;',                                        // 9
    'const s = t.nope;',                                         // 10
    '```',                                                       // 11
  ].join('\n');
  const blocks = jsBlocks(md);
  assert.deepEqual(blocks.map((b) => b.fence), [3, 8]);
  const errors = typeErrors(blocks, 'x.md');
  assert.equal(errors.length, 1, errors.join('\n'));
  assert.match(errors[0], /^x\.md:10:13 \(the block at line 8\): error TS2339: Property 'nope' does not exist on type 'Float32Array/);
  assert.throws(() => jsBlocks('<!-- ts: declare const a: number; -->\n\ntext\n'), /line 1: a <!-- ts: … --> comment must be on the line just before/);
});
