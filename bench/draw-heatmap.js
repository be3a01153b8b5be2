// draw-heatmap.js - how long drawHeatmap (attnmap/heatmap) takes in Debian's Chromium (headless,
// through playwright-core) to draw an n × n Float32Array map: 1,024² on a 1,024² canvas and
// 4,096² on a 4,096² and on a 1,024² canvas (issue 37's targets: ≤ 100 ms and ≤ 500 ms).
// A benchmark, not a test: it prints, it asserts nothing, and writes its section of
// docs/BENCHMARKS.md ("## drawHeatmap in Chromium", after the heads section; --no-write: print only).
// Not one of bench.js's sections.
//
//   node bench/draw-heatmap.js [rounds] [--no-write]   (default 7 rounds per size, after one first call)
//
// Each time is drawHeatmap(canvas, { data, shape }, { legend: false }) plus a 1-pixel getImageData,
// so that the canvas has taken the pixels; the data are random (a value per cell), made before
// the clock starts. "first" is the first call of the page at that size (cold JIT), then the median
// and the range of the rounds after it.
import os from 'node:os';
import path from 'node:path';
import { machine } from './machine.js';
import { writeSection } from './sections.js';
import { fileURLToPath } from 'node:url';
import { startServer } from '../scripts/serve.js';
import { launch } from '../tests/browser/browser.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2), write = !args.includes('--no-write');
const rounds = Number(args.find((a) => /^\d+$/.test(a)) ?? 7);
const HEADING = '## drawHeatmap in Chromium (a large map on a canvas)';
const TARGET = { 1024: '≤ 100 ms', 4096: '≤ 500 ms' };
const SIZES = [{ n: 1024, canvas: 1024 }, { n: 4096, canvas: 4096 }, { n: 4096, canvas: 1024 }];

// runs in the page
async function measure({ sizes, rounds }) {
  const { drawHeatmap } = await import('/web/heatmap/heatmap.js');
  const out = [];
  for (const { n, canvas: side } of sizes) {
    const data = new Float32Array(n * n);
    for (let p = 0; p < data.length; p++) data[p] = Math.random() ** 4;
    const canvas = Object.assign(document.createElement('canvas'), { width: side, height: side });
    const ctx = canvas.getContext('2d');
    const times = [];
    for (let r = 0; r <= rounds; r++) {
      const t0 = performance.now();
      drawHeatmap(canvas, { data, shape: [n, n] }, { legend: false });
      ctx.getImageData(0, 0, 1, 1);
      times.push(performance.now() - t0);
    }
    const rest = times.slice(1).sort((a, b) => a - b);
    out.push({ n, side, first: times[0], median: rest[Math.floor(rest.length / 2)], min: rest[0], max: rest.at(-1) });
  }
  return { results: out, userAgent: navigator.userAgent };
}

const server = await startServer({ root });
const browser = await launch();
try {
  const page = await browser.newPage();
  await page.goto(`${server.url}LICENSE`);
  const m = machine();
  const { results, userAgent } = await page.evaluate(measure, { sizes: SIZES, rounds });
  const chrome = userAgent.match(/Chrome\/[\d.]+/)?.[0] ?? userAgent, f = (x) => x.toFixed(1);
  console.log(`${chrome}; ${os.cpus()[0]?.model ?? 'cpu ?'} × ${os.cpus().length}; ${rounds} rounds`);
  for (const r of results) console.log(`${r.n}² on a ${r.side}² canvas: first ${f(r.first)} ms, median ${f(r.median)} ms (${f(r.min)}–${f(r.max)})`);
  const text = [
    `drawHeatmap(canvas, { data, shape: [n, n] }, { legend: false }) of a random Float32Array map, plus a 1-pixel getImageData (the canvas has taken the pixels), in ${chrome} (Debian's, headless, through playwright-core); the first call of the page at each size (cold JIT), then the median and range of ${rounds} rounds. Where the canvas has fewer pixels than the map has cells, each pixel shows the largest cell it covers.`,
    '',
    '| map | canvas | first call | median (range) | issue 37\'s target |',
    '| --: | --: | --: | --: | --: |',
    ...results.map((r) => `| ${r.n}² | ${r.side}² | ${f(r.first)} ms | **${f(r.median)} ms** (${f(r.min)}–${f(r.max)}) | ${r.side === r.n ? TARGET[r.n] : '–'} |`),
    '',
    `Written by \`node bench/draw-heatmap.js\` on ${new Date().toISOString().slice(0, 16)}Z; ${m.cpu}, ${m.cores} cores; load average (1 min) ${m.loadStart.toFixed(2)} at the start, ${os.loadavg()[0].toFixed(2)} at the end.`,
  ].join('\n');
  if (write) writeSection(path.join(root, 'docs/BENCHMARKS.md'), HEADING, text, { after: '## The page\'s heads panel: off the main thread' });
} finally {
  await browser.close();
  await server.close();
}
