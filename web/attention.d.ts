/**
 * attnmap — scaled dot-product self-attention in C, compiled to WebAssembly.
 *
 * @example
 * ```ts
 * import { createAttention, AttentionError } from 'attnmap';
 *
 * const attn = await createAttention();
 * // the hand calculation of episode 05, section 5 (d_k = 4)
 * const { weights } = attn.attention({
 *   q: [[1.0, 0.2, 0.1, 0.0], [0.3, 0.8, 0.2, 0.1], [0.1, 0.1, 0.9, 0.3]],
 *   k: [[0.9, 0.1, 0.0, 0.2], [0.2, 0.7, 0.3, 0.0], [0.0, 0.2, 1.0, 0.1]],
 *   v: [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
 * });
 * weights.data.subarray(3, 6); // row of 吃: 0.3157, 0.3686, 0.3157
 *
 * try {
 *   attn.attention({ q: [[1, 2]], k: [[1, 2, 3]], v: [[1]] });
 * } catch (e) {
 *   if (e instanceof AttentionError) console.log(e.code, e.message); // SHAPE_MISMATCH ...
 * }
 * ```
 */

/** A row-major float32 matrix. Every matrix the API returns has this form and owns its buffer. */
export interface Matrix {
  data: Float32Array;
  shape: [rows: number, cols: number];
}

/** A matrix argument: nested rows, or flat row-major data with a shape. */
export type MatrixInput =
  | ArrayLike<number>[]
  | { data: Float32Array | Float64Array | number[]; shape: [rows: number, cols: number] };

/** A boolean mask (n, m): true (nonzero) means "query i may attend to key j" (PyTorch SDPA polarity). */
export type MaskInput = boolean[][] | { data: Uint8Array; shape: [rows: number, cols: number] };

export interface AttentionOptions {
  /** Query i sees keys j <= i, aligned top-left (PyTorch's is_causal), also when n != m. Default false. */
  causal?: boolean;
  /** Multiplier of Q·Kᵀ, a finite number >= 0. Default 1/√d_k. */
  scale?: number;
  /** (n, m), true = may attend. Combined with `causal`, a key must pass both. */
  mask?: MaskInput;
}

export interface AttentionCallOptions extends AttentionOptions {
  /** Return the (n, m) weights. Default true. With false, nothing of size n×m is returned. */
  weights?: boolean;
}

export interface AttentionInputs {
  /** (n, d_k) */ q: MatrixInput;
  /** (m, d_k) */ k: MatrixInput;
  /** (m, d_v) */ v: MatrixInput;
}

export interface SelfAttentionInputs {
  /** (n, d_model): the token vectors (embedding + positional encoding). */ x: MatrixInput;
  /** (d_model, d_k), Q = X·W_Q. A PyTorch nn.Linear weight is (d_k, d_model): pass its transpose. */ wq: MatrixInput;
  /** (d_model, d_k), K = X·W_K. */ wk: MatrixInput;
  /** (d_model, d_v), V = X·W_V. */ wv: MatrixInput;
}

export interface AttentionResult {
  /** (n, d_v) = weights · V */ output: Matrix;
  /** (n, m), rows sum to 1; masked entries are exactly 0; a fully masked row is all 0. */ weights?: Matrix;
}

/** Every step of the episode: Q, K, V, QKᵀ, ÷√d_k, softmax, ×V. */
export interface SelfAttentionResult {
  /** (n, d_k) */ q: Matrix;
  /** (n, d_k) */ k: Matrix;
  /** (n, d_v) */ v: Matrix;
  /** (n, n) = Q·Kᵀ */ scores: Matrix;
  /** (n, n) = scores · scale, before masking */ scaled: Matrix;
  /** (n, n) = softmax(scaled) per row, masked entries 0 */ weights: Matrix;
  /** (n, d_v) = weights · V */ output: Matrix;
}

export interface Attention {
  /** Scaled dot-product attention. @throws {AttentionError} */
  attention(inputs: AttentionInputs, options?: AttentionCallOptions & { weights?: true }): Required<AttentionResult>;
  attention(inputs: AttentionInputs, options: AttentionCallOptions & { weights: false }): { output: Matrix };
  attention(inputs: AttentionInputs, options?: AttentionCallOptions): AttentionResult;
  /** Self-attention with projections, every intermediate exposed. @throws {AttentionError} */
  selfAttention(inputs: SelfAttentionInputs, options?: AttentionOptions): SelfAttentionResult;
  /** Bytes of WebAssembly memory this instance holds (it grows, never shrinks). */
  readonly memoryBytes: number;
}

export interface CreateAttentionOptions {
  /**
   * The core's wasm, for hosts that fetch it themselves (`attnmap/attention.wasm`).
   * Default: the copy embedded in the package, compiled once and shared by every caller.
   */
  wasm?: WebAssembly.Module | BufferSource | Response | PromiseLike<Response>;
}

/** Load the WebAssembly core. Without options, every call returns the same shared instance. */
export function createAttention(options?: CreateAttentionOptions): Promise<Attention>;

export type AttentionErrorCode =
  | 'INVALID_ARGUMENT'  // not a matrix, empty, ragged, bad option, missing argument
  | 'SHAPE_MISMATCH'    // dimensions that disagree, data length != rows·cols
  | 'NON_FINITE'        // NaN or ±Infinity in an input, or a result that overflows float32
  | 'TOO_LARGE'         // the buffers cannot fit in 4 GiB of wasm32 memory
  | 'OUT_OF_MEMORY';    // the engine refused to grow memory

export const ErrorCode: Readonly<{ [K in AttentionErrorCode]: K }>;

/** Thrown for every bad input; the instance stays usable afterwards. */
export class AttentionError extends Error {
  constructor(code: AttentionErrorCode, message: string);
  readonly name: 'AttentionError';
  /** Stable across versions. */
  readonly code: AttentionErrorCode;
}

/** A returned matrix as nested arrays, for printing or JSON. */
export function toRows(matrix: Matrix): number[][];
