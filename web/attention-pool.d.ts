// Types for attention-pool.js: attention on several cores (workers, no SharedArrayBuffer).
import type { AttentionInputs, AttentionOptions, Matrix } from './attention.js';

export interface AttentionPoolOptions {
  /** Number of workers, 1 to 64. Default: one per core (navigator.hardwareConcurrency), at most 8. */
  workers?: number;
  /** Where attention-worker.js is served, for hosts or bundlers that move it. Default: next to attention-pool.js. */
  workerUrl?: string | URL;
  /** Workers use the fused multiply-add build where the engine has relaxed SIMD (see createAttention). Default true; false gives the same bits on every engine. */
  relaxed?: boolean;
}

export interface PoolAttentionOptions extends AttentionOptions {
  /** Only `false` (or absent): the pool returns the output only. */
  weights?: false;
  /** Only query rows [begin, end); the pool splits this range instead of [0, n). */
  rows?: [begin: number, end: number];
}

export interface AttentionPool {
  /** The number of workers. */
  readonly size: number;
  /** Whether the workers run the fused multiply-add build. */
  readonly relaxed: boolean;
  /**
   * Scaled dot-product attention with `weights: false`, query rows split across the workers so
   * that each gets the same work. Bit for bit what `createAttention().attention` returns.
   * Rejects with an AttentionError (the same code and message as attention() for bad inputs).
   */
  attention(inputs: AttentionInputs, options?: PoolAttentionOptions): Promise<{ output: Matrix }>;
  /** Stop the workers; calls still running are rejected. */
  close(): Promise<void>;
}

/** Start the workers, each loading its own copy of the core. An idle pool does not keep Node running. */
export function createAttentionPool(options?: AttentionPoolOptions): Promise<AttentionPool>;

/** Rows [r0, r1) cut into at most `parts` contiguous ranges of about equal work (exported for tests). */
export function splitRows(r0: number, r1: number, m: number, causal: boolean, parts: number): Array<[number, number]>;
