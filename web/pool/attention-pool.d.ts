// Types for attention-pool.js: attention on several cores (workers, no SharedArrayBuffer).
import type { AttentionInputs, AttentionOptions, Matrix } from '../core/attention.js';

export interface AttentionPoolOptions {
  /** Number of workers, 1 to 64. Default: one per core (navigator.hardwareConcurrency), at most 8. */
  workers?: number;
  /**
   * Where the worker script is, for hosts or bundlers that move it. Default: attention-worker.js
   * beside the module (browsers; Vite and webpack bundle and rename it themselves; with esbuild
   * and Rollup build `attnmap/pool/worker` as attention-worker.js beside the bundle), or
   * attention-worker-node.js in Node. A worker that fails to load rejects with its URL.
   */
  workerUrl?: string | URL;
  /** Workers use the fused multiply-add build where the engine has relaxed SIMD (see createAttention). Default true; false gives the same bits on every engine. */
  relaxed?: boolean;
  /**
   * The default time limit of every `pool.attention` call, in milliseconds (more than 0, at most
   * 2147483647, or Infinity): see {@link PoolAttentionOptions.timeout}. It also bounds the
   * workers' start unless `startTimeout` is given. Default: no limit.
   */
  timeout?: number;
  /**
   * The time limit of the workers' start, in milliseconds (more than 0, at most 2147483647, or
   * Infinity for none): createAttentionPool rejects with a `DOMException` named `'TimeoutError'`
   * when they have not all loaded the core by then. Default: `timeout` (no limit without one).
   * `{ timeout: 200, startTimeout: Infinity }` bounds the calls only.
   */
  startTimeout?: number;
  /**
   * A call with less work than this many multiply-adds (query rows × keys each sees × (d_k + d_v))
   * is computed in the calling thread, where the workers would cost more than they save: the
   * same bits, no copies. 0 splits every call, Infinity none. Default: `INLINE_BELOW`, the
   * crossover measured on 2 workers by the package's benchmark.
   */
  inlineBelow?: number;
}

export interface PoolAttentionOptions extends AttentionOptions {
  /** Only `false` (or absent): the pool returns the output only. */
  weights?: false;
  /** Only query rows [begin, end); the pool splits this range instead of [0, n). */
  rows?: [begin: number, end: number];
  /**
   * Stops the call when aborted: it rejects with `signal.reason`, as `fetch()` does (a
   * `DOMException` named `'AbortError'` for `controller.abort()`, `'TimeoutError'` for
   * `AbortSignal.timeout(ms)`, or the reason given to `abort(reason)`). An already aborted signal
   * rejects the call at once (after its arguments are checked). The workers still computing the
   * call are terminated and replaced; calls queued behind it go on in the new workers.
   */
  signal?: AbortSignal | null;
  /**
   * Time limit of this call in milliseconds, from the call: more than 0, at most 2147483647, or
   * Infinity for none. Default: the pool's `timeout` (none unless createAttentionPool got one).
   * A call still running then rejects with a `DOMException` named `'TimeoutError'`, its workers
   * terminated and replaced as for `signal`.
   */
  timeout?: number | null;
}

export interface AttentionPool {
  /** The number of workers. */
  readonly size: number;
  /** Whether the workers run the fused multiply-add build. */
  readonly relaxed: boolean;
  /**
   * Scaled dot-product attention with `weights: false`, query rows split across the workers so
   * that each gets the same work. Bit for bit what `createAttention().attention` returns.
   *
   * Each input and each option is read once, and the values read are the ones checked and sent
   * (a getter or a Proxy is not asked twice). Never throws: it rejects, with
   * - an AttentionError for bad arguments: the same code and message as attention() (unknown
   *   options, `signal` and `timeout` are INVALID_ARGUMENT too), and INVALID_ARGUMENT naming what
   *   was being read when a getter or a Proxy trap of the caller throws (`cause`: what it threw);
   * - `signal.reason` when `signal` aborts, a `DOMException` named `'TimeoutError'` after `timeout`;
   * - an AttentionError (INVALID_ARGUMENT) when the pool is closed or closes during the call, or
   *   when a worker failed (crashed, or a replacement could not start): create a new pool then.
   */
  attention(inputs: AttentionInputs, options?: PoolAttentionOptions): Promise<{ output: Matrix; /** How many workers computed it: 0 when it ran in the calling thread (inlineBelow). */ workers: number }>;
  /** Stop the workers; calls still running are rejected. */
  close(): Promise<void>;
}

/**
 * Start the workers, each loading its own copy of the core. An idle pool does not keep Node
 * running. Rejects with an AttentionError (INVALID_ARGUMENT) for bad or unknown options or a
 * worker that cannot start, and a `DOMException` named `'TimeoutError'` after
 * `options.startTimeout` (default: `options.timeout`).
 *
 * @example
 * ```ts
 * import { createAttentionPool } from 'attnmap/pool';
 * import { AttentionError } from 'attnmap';
 *
 * // every call gets at most 10 s unless it says otherwise
 * const pool = await createAttentionPool({ workers: 4, timeout: 10_000 });
 * const controller = new AbortController();
 * document.querySelector('#cancel')!.addEventListener('click', () => controller.abort());
 * try {
 *   const { output } = await pool.attention({ q, k, v }, { causal: true, signal: controller.signal });
 * } catch (e) {
 *   if (e instanceof AttentionError) console.log(e.code, e.message);        // bad inputs: as attention() says
 *   else if (e instanceof DOMException && e.name === 'TimeoutError') { }     // took longer than 10 s
 *   else if (e instanceof DOMException && e.name === 'AbortError') { }       // controller.abort()
 * }
 * // the pool is still usable: the workers that were computing the stopped call were replaced
 * await pool.close();
 * ```
 */
export function createAttentionPool(options?: AttentionPoolOptions): Promise<AttentionPool>;

/** Rows [r0, r1) cut into at most `parts` contiguous ranges of about equal work (exported for tests). */
export function splitRows(r0: number, r1: number, m: number, causal: boolean, parts: number): Array<[number, number]>;

/** The default `inlineBelow`: multiply-adds below which a call runs in the calling thread (24,000,000). */
export const INLINE_BELOW: number;
