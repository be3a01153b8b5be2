// threads-chromium.js - bench/threads.js's Chromium half (issue 26): the same checkpoint, the same
// plan, timed inside one page of Debian's Chromium (bench/threads-chromium.html) served with COOP
// and COEP as `npm start` serves it (scripts/start.js ISOLATED), so that the page is cross-origin
// isolated and both loadModel(…, { threads: 2 }) and onnxruntime-web's numThreads = 2 can share
// wasm memory with their workers.
//
// Two servers: the repository (the page, web/, onnxruntime-web's dist/) with COOP and COEP, and
// the temporary checkpoint folder bench/threads.js made, on another port with CORS (a COEP page
// reads another origin's files through CORS), so that the 500 MB files are neither copied into
// the repository nor passed through the DevTools protocol.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { startServer } from '../scripts/serve.js';
import { ISOLATED } from '../scripts/start.js';
import { launch } from '../tests/browser/browser.js';

const PAGE_FILES = ['bench/threads-chromium.html', 'bench/threads-loops.js', 'bench/lib.js', 'bench/node_modules/onnxruntime-web/dist/'];
const CHECKPOINT = ['config.json', 'model.safetensors', 'model.onnx'];
const CORS = { 'access-control-allow-origin': '*' };

/**
 * The Chromium half's measurements, shaped as bench/threads.js's ({ threads, ortThreads, forward,
 * decode }) plus { version, isolated }, or { error, version } saying why there are none.
 * dir: the checkpoint folder (config.json, model.safetensors, model.onnx); plan: threads.js's
 * PLAN entry; ids(n): the token ids of an n-token forward; prompt: the decoding's prompt (ids).
 */
export async function benchThreadsChromium({ dir, plan, ids, prompt, progress, root }) {
  let site, files, browser, version;
  try {
    site = await startServer({ root, allow: PAGE_FILES, headers: () => ISOLATED });
    files = await startServer({ root: dir, allow: CHECKPOINT, headers: () => CORS });
    browser = await launch();
    version = browser.version();
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); else if (m.type() === 'info') progress(`threads, chromium: ${m.text()}`); });
    await page.exposeFunction('cpuMs', cpuMs);
    await page.goto(`${site.url}bench/threads-chromium.html`);
    await page.waitForFunction(() => window.benchReady, null, { timeout: 30000 });
    const inputs = Object.fromEntries(plan.forwardN.map((n) => [n, ids(n)]));
    const r = await page.evaluate((args) => window.bench(args), { base: files.url, plan, inputs, prompt });
    if (errors.length) r.errors = errors;
    return { ...r, version };
  } catch (e) {
    progress(`threads, chromium: failed: ${e.stack ?? e.message}`);
    return { error: e.message.split('\n')[0], version };
  } finally {
    await browser?.close();
    await site?.close();
    await files?.close();
  }
}

// The CPU time (ms) of every process this one started and their children (Chromium's browser,
// renderer, GPU and utility processes; a page's workers are threads of its renderer), from
// /proc/<pid>/stat: the page reads it around each sample, as threads.js reads process.cpuUsage().
// NaN where there is no /proc.
let ticksPerMs;
function cpuMs() {
  try {
    ticksPerMs ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' })) / 1000;
    const stats = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map(procStat).filter(Boolean);
    const mine = new Set([process.pid]);
    // parents before children is not guaranteed by pid order (pids wrap): repeat until nothing is added
    for (let grew = true; grew;) {
      grew = false;
      for (const s of stats) if (!mine.has(s.pid) && mine.has(s.ppid)) { mine.add(s.pid); grew = true; }
    }
    return stats.reduce((sum, s) => (s.pid !== process.pid && mine.has(s.pid) ? sum + s.ticks : sum), 0) / ticksPerMs;
  } catch {
    return NaN;
  }
}

// { pid, ppid, ticks: utime + stime } from /proc/<pid>/stat, or null (the process ended meanwhile).
// The command name may hold spaces and parentheses: the fields are counted from its last ")".
function procStat(pid) {
  let text;
  try { text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8'); } catch { return null; }
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');   // f[0] is field 3 (state)
  return { pid: Number(pid), ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) };
}
