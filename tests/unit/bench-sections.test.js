// bench-sections.test.js - a full `npm run bench` rewrites docs/BENCHMARKS.md (bench/markdown.js)
// but keeps what other commands wrote (bench/sections.js withKept): the `--only` sections, a
// hand-written part of Results; a section it writes itself is not kept twice, even when its
// heading carries other figures this time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { withKept, writeSection } from '../../bench/sections.js';

const OLD = `# Benchmarks

## Results

### Median ms per forward

old table

### GFLOP/s; peak = 45.7 GFLOP/s

old figures

### Where the cycles go (a profile)

by hand

## GPT-2-small multi-head attention layer

old mha

## Reading

old reading

## GGUF files, quantized

gguf table

## drawHeatmap in Chromium

draw table
`;

const NEW = `# Benchmarks

## Results

### Median ms per forward

new table

### GFLOP/s; peak = 47.0 GFLOP/s

new figures

## GPT-2-small multi-head attention layer

new mha

## Reading

new reading
`;

test('a full run keeps the --only sections and a hand-written part of Results, in the file\'s order; nothing twice', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-bench-sections-')), file = path.join(dir, 'BENCHMARKS.md');
  try {
    fs.writeFileSync(file, OLD);
    const out = withKept(file, NEW);
    assert.equal(out, NEW.replace('new figures\n', 'new figures\n\n### Where the cycles go (a profile)\n\nby hand\n') +
      '\n## GGUF files, quantized\n\ngguf table\n\n## drawHeatmap in Chromium\n\ndraw table\n');
    assert.ok(!out.includes('old'), 'what the run writes replaces the old text');
    // then an --only run rewrites its own section in place
    fs.writeFileSync(file, out);
    writeSection(file, '## GGUF files, quantized', 'gguf table 2');
    assert.match(fs.readFileSync(file, 'utf8'), /## GGUF files, quantized\n\ngguf table 2\n\n## drawHeatmap in Chromium\n/);
    // no file yet: the run's text alone
    assert.equal(withKept(path.join(dir, 'none.md'), NEW), NEW);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
