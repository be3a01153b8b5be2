// firefox.js - launch Debian's Firefox ESR (apt-get install -y firefox-esr) through puppeteer-core's
// WebDriver BiDi (never a downloaded browser; playwright-core cannot drive a stock Firefox).
// Beside browser.js, which does the same for Chromium. Used by tests/browser/firefox.test.js.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';

export const FIREFOX = process.env.FIREFOX_PATH || '/usr/bin/firefox-esr';
export const FIREFOX_PACKAGE = 'firefox-esr';
export const INSTALL = `apt-get install -y ${FIREFOX_PACKAGE}`;

/** null when FIREFOX is an executable file, else why not (naming the Debian package). */
export function firefoxMissing() {
  try {
    fs.accessSync(FIREFOX, fs.constants.X_OK);
    if (!fs.statSync(FIREFOX).isFile()) throw new Error('not a file');
    return null;
  } catch {
    return `Firefox ESR is not installed at ${FIREFOX} (Debian package ${FIREFOX_PACKAGE}: ${INSTALL})`;
  }
}

// Nothing phones home, nothing is updated, no first-run page: the test sees only its own server.
const PREFS = {
  'app.update.disabledForTesting': true,
  'browser.shell.checkDefaultBrowser': false,
  'browser.startup.homepage_override.mstone': 'ignore',
  'datareporting.policy.dataSubmissionEnabled': false,
  'toolkit.telemetry.enabled': false,
  'network.captive-portal-service.enabled': false,
  'network.connectivity-service.enabled': false,
  'extensions.update.enabled': false,
  'browser.safebrowsing.update.enabled': false,
  'browser.safebrowsing.downloads.remote.enabled': false,
  'network.dns.disablePrefetch': true,
  'network.prefetch-next': false,
};

/**
 * The processes still running of the Firefox started as `pid` (pids): its process group (the browser
 * and its content processes: puppeteer starts it detached, in a group of its own), and its crash
 * helper, which leaves the group (`crashhelper PID …`, a session of its own, parent init).
 */
export function leftovers(pid) {
  const found = [];
  let entries;
  try { entries = fs.readdirSync('/proc'); } catch { return found; }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // state ppid pgrp ...
      if (fields[0] === 'Z') continue;
      const args = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (Number(fields[2]) === pid || (path.basename(args[0]) === 'crashhelper' && args[1] === String(pid))) found.push(Number(name));
    } catch { /* gone meanwhile */ }
  }
  return found;
}

/**
 * Start Firefox ESR headless with a fresh profile in a temporary directory. Resolves to
 * { browser, version, pid, profile, close() }; close() closes the browser, ends what is left of it
 * (leftovers(pid)) and removes the profile;
 * it resolves to the pids it had to kill (none when Firefox quit by itself). Throws, naming the package, when Firefox is not installed.
 */
// the start's budget: Firefox took over 30 s to start once while the machine ran the rest of the
// suite (a CI run on 2 cores); a budget, not a timing assertion
export async function launchFirefox({ timeout = 90000 } = {}) {
  const missing = firefoxMissing();
  if (missing) throw new Error(missing);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'attnmap-firefox-'));
  let browser;
  try {
    browser = await puppeteer.launch({
      browser: 'firefox',
      executablePath: FIREFOX,
      headless: true,
      userDataDir: profile,
      extraPrefsFirefox: PREFS,
      env: { ...process.env, MOZ_HEADLESS: '1', MOZ_CRASHREPORTER_DISABLE: '1' },
      timeout,
      protocolTimeout: timeout,
    });
  } catch (e) {
    fs.rmSync(profile, { recursive: true, force: true });
    throw new Error(`could not start ${FIREFOX} through WebDriver BiDi: ${e.message}`, { cause: e });
  }
  const pid = browser.process()?.pid;
  let closed;
  const killed = [];
  const close = () => (closed ??= (async () => {
    let timer;
    try {
      await Promise.race([browser.close(), new Promise((r) => { timer = setTimeout(r, 10000); })]);
    } catch { /* ended below */ } finally { clearTimeout(timer); }
    if (pid) {
      // content processes and the crash helper follow the browser out within about 2 s; what is
      // left after 5 s is ended here (only processes of this Firefox, by pid)
      for (let i = 0; i < 50 && leftovers(pid).length; i++) await new Promise((r) => setTimeout(r, 100));
      for (const p of leftovers(pid)) {
        try { process.kill(p, 'SIGKILL'); killed.push(p); } catch { /* gone */ }
      }
    }
    fs.rmSync(profile, { recursive: true, force: true });
    return killed;
  })());
  let version;
  try {
    version = await browser.version();
  } catch (e) {
    await close();
    throw e;
  }
  return { browser, version, pid, profile, close };
}

/** The page's uncaught errors, console errors and failed requests, collected as they come. */
export function pageProblems(page) {
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
  return problems;
}
