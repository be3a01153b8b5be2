// chromium.js - bench.js's section in a browser: attnmap's default build, its relaxed-SIMD build
// (fused multiply-add, on in Chromium) and onnxruntime-web's wasm backend (one thread), timed
// in turn on the same inputs inside one page of Debian's Chromium (bench/chromium.html).
import { startServer } from '../scripts/serve.js';
import { launch } from '../tests/browser/browser.js';
import { buildsTable } from './lib.js';

export async function benchChromium({ quick, root, progress }) {
  const sizes = quick ? [{ n: 256, rounds: 5 }, { n: 1024, rounds: 3 }]
    : [{ n: 256, rounds: 25 }, { n: 1024, rounds: 15 }, { n: 2048, rounds: 11 }, { n: 4096, rounds: 7 }];
  const server = await startServer({ root, allow: ['bench/', 'bench/node_modules/onnxruntime-web/dist/'] });
  let browser;
  try {
    browser = await launch();
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${server.url}bench/chromium.html`);
    await page.waitForFunction(() => window.benchReady, null, { timeout: 30000 });
    progress(`chromium: n = ${sizes.map((s) => s.n).join(', ')}`);
    const r = await page.evaluate((plan) => window.bench(plan), { sizes, sampleMs: quick ? 2 : 5 });
    if (errors.length) r.errors = errors;
    return r;
  } catch (e) {
    return { error: e.message.split('\n')[0] };
  } finally {
    await browser?.close();
    await server.close();
  }
}

export function chromiumReport(c) {
  if (c.error) return `Not measured: ${c.error}`;
  const v = c.userAgent.match(/Chrome\/([\d.]+)/)?.[1] ?? c.userAgent;
  return [
    `### Chromium ${v}, one page, d = 64, \`weights: false\`; median ms per forward`,
    '',
    `Relaxed SIMD in this Chromium: ${c.hasRelaxed ? 'yes' : 'no'}; \`createAttention()\` ran the ${c.relaxedUsed ? 'fused multiply-add' : '**default**'} build ("attnmap relaxed"); "attnmap" is \`createAttention({ relaxed: false })\`.`,
    '',
    buildsTable(c.sizes),
    '',
    'bench/chromium.html in Debian\'s Chromium (headless, through playwright-core), served from localhost; samples rotate between the three ' +
      'implementations each round. attnmap: `attention({ q, k, v }, { weights: false })` through the public API; onnxruntime-web: the same bare attention ' +
      'graph as above, `ort.wasm.min.mjs`, `numThreads = 1`. Differences are against attnmap\'s default build.',
  ].join('\n');
}
