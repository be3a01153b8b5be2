// fetch-body.js - what every download of attnmap's shares (a folder by URL, fetch-checkpoint.js;
// a repo by name, hub/): the caps on what a server can make us hold, the clocks on how long it
// can make us wait, and the typed error a failed file gives.
//
//   const clocks = clocksOf(options, 'loadModel');            // { stallMs, minRate, graceMs }, checked
//   const res = await fetchWithin(url, init, clocks, signal);  // the answer within stallMs
//   const body = bodyOf(res, url, clocks, { what, from, after, signal });
//   for (let chunk; (chunk = await body.next()) !== null;) …   // then body.ended()
//
// The clocks: no answer, or no bytes, for stallMs (default 30 s) fails the file; and once graceMs
// (default 60 s) have passed since the answer, the file must average minRate bytes/s (default 64
// KiB/s; 0 for none): a server that drips a byte now and then resets the stall clock every time,
// not this one. At 64 KiB/s a 500 MB model may take up to 2 h.
import { AttentionError, ErrorCode, fail, describe, formatBytes } from '../../core/errors.js';

/** An AttentionError (code FETCH_FAILED) with the file's URL and the HTTP status (0: no answer). */
export class ModelFetchError extends AttentionError {
  constructor(message, url, status) {
    super(ErrorCode.FETCH_FAILED, message);
    this.name = 'ModelFetchError';
    this.url = url;
    this.status = status;       // 0: no HTTP answer
  }
}

// a config, tokenizer or index file, downloaded or read from disk (files-node.js): tokenizer.json
// is a few MB
export const MAX_TEXT_BYTES = 64 * 1024 * 1024;
// what wasm32 can hold (families/table.js, WASM32_BYTES): all of a model's weights together
export const MAX_WEIGHTS_BYTES = 2 ** 32;
const CLOCKS = { stallMs: 30_000, minRate: 64 * 1024, graceMs: 60_000 };
const MAX_TIMER_MS = 2 ** 31 - 1;     // setTimeout's limit: a longer delay fires at once

/** options.stallMs, minRate and graceMs, checked (undefined or null: the default); fn names the caller. */
export function clocksOf(options, fn) {
  const out = { ...CLOCKS };
  const rules = [['stallMs', (x) => x > 0 && x <= MAX_TIMER_MS, `a number of milliseconds above 0, at most ${MAX_TIMER_MS}`],
    ['minRate', (x) => x >= 0 && Number.isFinite(x), 'a number of bytes per second, 0 or more (0: no minimum)'],
    ['graceMs', (x) => x >= 0 && x <= MAX_TIMER_MS, `a number of milliseconds from 0 to ${MAX_TIMER_MS}`]];
  for (const [key, ok, what] of rules) {
    const v = options?.[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !ok(v)) fail(ErrorCode.INVALID_ARGUMENT, `${fn}: options.${key} must be ${what}; received ${describe(v)}`);
    out[key] = v;
  }
  return out;
}

// a signal that aborts when either does: AbortSignal.any, which holds no listener on the caller's
// signal past the request (a load makes one request a file); else a listener
function anyOf(a, b) {
  if (typeof AbortSignal.any === 'function') return AbortSignal.any([a, b]);
  const ctl = new AbortController(), stop = (s) => () => ctl.abort(s.reason);
  for (const s of [a, b]) if (s.aborted) ctl.abort(s.reason); else s.addEventListener('abort', stop(s), { once: true });
  return ctl.signal;
}

/**
 * fetch(url, init) whose answer must come within clocks.stallMs (a ModelFetchError "no answer
 * within"); signal, the caller's, cancels it (its AbortError as it is). hint ends the message of
 * a request that could not be made at all.
 */
export async function fetchWithin(url, init, clocks, signal, hint = '') {
  const ctl = new AbortController(), timer = setTimeout(() => ctl.abort(), clocks.stallMs);
  try {
    return await fetch(url, { ...init, signal: signal ? anyOf(signal, ctl.signal) : ctl.signal });
  } catch (e) {
    if (signal?.aborted) throw e;
    if (ctl.signal.aborted) throw new ModelFetchError(`${url}: no answer within ${clocks.stallMs / 1000} s (options.stallMs)`, url, 0);
    // unreachable: the request could not be made at all (no server, CSP, CORS), not a slow one
    throw Object.assign(new ModelFetchError(`${url}: could not be fetched (${e.cause?.code ?? e.message}${hint})`, url, 0), { unreachable: true });
  } finally {
    clearTimeout(timer);
  }
}

// the Content-Length as a number, or undefined (none, or not a length)
export function lengthOf(res) {
  const v = res.headers.get('content-length');
  return v !== null && /^\s*\d{1,16}\s*$/.test(v) ? Number(v) : undefined;
}

/**
 * A response's body, chunk by chunk under the two clocks: next() -> the next chunk, or null at
 * the end; ended() throws when it ended short of its Content-Length; total: that length, or
 * undefined. A stall, a drip or a cut is a ModelFetchError "URL: WHAT …" counting bytes from
 * `from` (a resumed download's offset) and ending with `after`; the caller's signal gives its
 * AbortError as it is. clock: { start, received }, the rate's clock, shared by the requests of one
 * file (fetch-source.js: a file read by ranges averages minRate over all of them); by default this
 * body's own, from now. body.clock is the one used.
 */
export function bodyOf(res, url, { stallMs, minRate, graceMs }, { what = 'the download', from = 0, after = '', signal, clock = { start: performance.now(), received: 0 } } = {}) {
  const reader = res.body?.getReader(), total = lengthOf(res);   // performance.now(): a monotonic clock
  let received = 0;
  const came = () => `${from + received} bytes${total === undefined ? '' : ` of ${from + total}`}`;
  const error = (why) => new ModelFetchError(`${url}: ${what} ${why}${after}`, url, res.status);
  const slow = () => error(`is too slow: ${came()} in ${((performance.now() - clock.start) / 1000).toFixed(1)} s, less than ` +
    `${formatBytes(minRate)}/s on average after the first ${graceMs / 1000} s (options.minRate): the server stalled, or drips`);
  async function next() {
    if (!reader) return null;
    const rateDue = minRate > 0 ? Math.max(graceMs, (clock.received / minRate) * 1000) - (performance.now() - clock.start) : Infinity;
    const stall = stallMs <= rateDue, wait = Math.min(MAX_TIMER_MS, Math.max(0, Math.min(stallMs, rateDue)));
    let timer, step;
    const timeout = new Promise((resolve, reject) => {
      timer = setTimeout(() => reject(stall ? error(`stalled: no data for ${stallMs / 1000} s after ${came()}`) : slow()), wait);
    });
    try {
      step = await Promise.race([reader.read(), timeout]);
    } catch (e) {
      reader.cancel().catch(() => {});
      if (signal?.aborted || e instanceof ModelFetchError) throw e;
      throw error(`broke off after ${came()} (${e.cause?.code ?? e.message})`);
    } finally {
      clearTimeout(timer);
    }
    if (step.done) return null;
    received += step.value.length;
    clock.received += step.value.length;
    return step.value;
  }
  // a body that ended short of its Content-Length broke off (a fetch usually says so itself)
  function ended() {
    if (total !== undefined && received < total) throw error(`broke off after ${came()}`);
  }
  return { next, ended, total, clock, cancel: () => { reader?.cancel().catch(() => {}); } };
}
