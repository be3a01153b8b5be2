// browser.js - launch Debian's Chromium through playwright-core (never a downloaded browser).
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

export function launch() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--no-first-run', '--disable-sync', '--disable-quic'],
  });
}

// The page's uncaught errors and console errors, collected as they come.
export function pageErrors(page) {
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  return errors;
}

/**
 * A new context and page at url (the page, served), waited for until the page says it is complete:
 * { page, context, errors }. options: viewport (default 1280 × 900), until: 'complete' (default:
 * every section drawn, <html data-complete="true">) or 'ready' (the hero drawn, data-ready; the
 * sections below it come in idle time, issue 24), and the context's own.
 */
export async function openPage(browser, url, { viewport = { width: 1280, height: 900 }, until = 'complete', ...contextOptions } = {}) {
  const context = await browser.newContext({ viewport, ...contextOptions });
  const page = await context.newPage();
  const errors = pageErrors(page);
  await page.goto(url);
  await page.waitForSelector(until === 'ready' ? 'html[data-ready="true"]' : 'html[data-complete="true"]', { state: 'attached', timeout: 30000 });
  return { page, context, errors };
}

/** After a change: wait until the page has drawn every section again (<html data-complete="true">). */
export const drawn = (page) => page.waitForSelector('html[data-complete="true"]', { state: 'attached', timeout: 30000 });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Wait until every <attention-heatmap> on the page has rendered or shown a message; returns how
 * many there are. Polls with evaluate (nothing is eval'd, so it works under a strict CSP). The
 * limit only stops a hang: a slow machine does not get near it.
 */
export async function settled(page, timeout = 60000) {
  const start = Date.now();
  for (;;) {
    const state = await page.evaluate(() => {
      const els = [...document.querySelectorAll('attention-heatmap')];
      return { ready: !!customElements.get('attention-heatmap') && els.every((e) => e.result || e.error), count: els.length };
    });
    if (state.ready) return state.count;
    if (Date.now() - start > timeout) throw new Error(`elements did not settle within ${timeout} ms`);
    await sleep(20);
  }
}
