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

/**
 * A row-major float32 matrix. Every matrix the API returns has this form and is a copy that
 * later calls never change. Small results (a call's results up to 1 KiB in all) are views into
 * an 8 KiB ArrayBuffer shared with other small results, as Node's Buffer pool does: read `data`
 * itself (it has its byteOffset), and send `data.slice()` to a worker or to storage (transferring
 * `data.buffer` would empty the other results in it; cloning `data` copies the whole buffer).
 */
export interface Matrix {
  data: Float32Array;
  shape: [rows: number, cols: number];
}

/**
 * An argument's shape, [rows, cols]. Any array of numbers passes the types, because `shape: [n, d]`
 * in an object literal that is not passed straight to a call is inferred as number[]; the call
 * checks it (two non-negative integers, else INVALID_ARGUMENT).
 */
export type ShapeInput = readonly [rows: number, cols: number] | readonly number[];

/** A matrix argument: nested rows, or flat row-major data with a shape. */
export type MatrixInput =
  | readonly ArrayLike<number>[]
  | { data: Float32Array | Float64Array | readonly number[]; shape: ShapeInput };

/** A boolean mask (n, m): true (nonzero) means "query i may attend to key j" (PyTorch SDPA polarity). */
export type MaskInput = readonly (readonly boolean[])[] | { data: Uint8Array; shape: ShapeInput };

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
  /**
   * Only query rows [begin, end), 0 <= begin < end <= n, with `weights: false`: the output is
   * (end - begin, d_v), bit for bit those rows of the whole output (causal stays aligned to
   * the full sequence). What createAttentionPool hands each worker.
   */
  rows?: [begin: number, end: number];
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

/** A vector argument (a bias): plain numbers or a float typed array. */
export type VectorInput = number[] | Float32Array | Float64Array;

/**
 * The inputs of multi-head attention (episode 06). E = d_model, h = heads, d_head = E / h,
 * d_kv = kvHeads·d_head (= E unless grouped-query attention).
 *
 * From a PyTorch `nn.MultiheadAttention(E, h, batch_first=True)` (episode layout, Q = X·W_Q + b_Q):
 * ```py
 * W, b = mha.in_proj_weight, mha.in_proj_bias
 * wq, wk, wv = W[:E].T, W[E:2*E].T, W[2*E:].T        # each (E, E)
 * bq, bk, bv = b[:E], b[E:2*E], b[2*E:]
 * wo, bo = mha.out_proj.weight.T, mha.out_proj.bias
 * ```
 */
export interface MultiHeadAttentionInputs {
  /** (n, d_model): the query tokens. */ x: MatrixInput;
  /** (m, d_model), optional: keys and values come from these tokens (cross-attention). Default: x. */ kv?: MatrixInput;
  /** (d_model, d_model): Q = X·W_Q + b_Q; head i uses columns [i·d_head, (i+1)·d_head). */ wq: MatrixInput;
  /** (d_model, d_kv): K = KV·W_K + b_K. */ wk: MatrixInput;
  /** (d_model, d_kv): V = KV·W_V + b_V. */ wv: MatrixInput;
  /** (d_model, d_model): output = concat·W_O + b_O. */ wo: MatrixInput;
  /** (d_model), optional. */ bq?: VectorInput;
  /** (d_kv), optional. */ bk?: VectorInput;
  /** (d_kv), optional. */ bv?: VectorInput;
  /** (d_model), optional. */ bo?: VectorInput;
}

export interface MultiHeadAttentionOptions extends AttentionCallOptions {
  /** The number of heads h: a positive integer dividing d_model. Each head has d_head = d_model / h columns. */
  heads: number;
  /**
   * Grouped-query attention: the number of key/value heads g, dividing `heads` (default `heads`;
   * 1 is multi-query attention). wk and wv are then (d_model, g·d_head), and query head i uses
   * kv head floor(i / (heads / g)), as PyTorch's `scaled_dot_product_attention(..., enable_gqa=True)`.
   */
  kvHeads?: number;
  /** Multiplier of each head's Q·Kᵀ. Default 1/√d_head, as in PyTorch. */
  scale?: number;
  /**
   * (n, m), shared by every head, true = MAY attend (SDPA polarity). `nn.MultiheadAttention`'s
   * boolean `attn_mask` is the opposite (true = masked out): pass its negation, e.g.
   * `mask: attnMask.map((row) => row.map((b) => !b))`. A query with no allowed key gets weights 0
   * and head outputs 0, so its output row is b_O (PyTorch gives NaN).
   */
  mask?: MaskInput;
}

export interface MultiHeadAttentionResult {
  /** (n, d_model) = concat·W_O + b_O */ output: Matrix;
  /** One (n, m) matrix per head (PyTorch's `average_attn_weights=False`); absent with `weights: false`. */ weights?: Matrix[];
  /** One (n, d_head) matrix per head: head i's attention output, columns [i·d_head, (i+1)·d_head) of concat. */ heads: Matrix[];
  /** (n, d_model): the heads side by side, before W_O. */ concat: Matrix;
}

/** RoPE's input: one matrix of rows to rotate, e.g. Q or K (not V). */
export interface RopeInputs {
  /** (n, heads·d): row r is the token at position offset + r; each head's d values (d even) are d/2 pairs (x[i], x[i + d/2]). */ x: MatrixInput;
}

export interface RopeOptions {
  /** θ_i = base^(-2i/d): LLaMA's `rope_theta`. A finite number >= 1; default 10000 (LLaMA 2; Qwen2 uses 1e6, LLaMA 3 500000). */
  base?: number;
  /** The position of the first row: an integer >= 0 with offset + n <= 2^20. Default 0. */
  offset?: number;
  /** The heads side by side in each row (a positive integer dividing the columns into even widths). Default 1. */
  heads?: number;
}

export interface RopeResult {
  /** (n, heads·d): pair i of the row at position p turned by the angle p·θ_i. */ output: Matrix;
  /** (d/2): θ_i = base^(-2i/d) as the core uses it (float32). */ theta: Float32Array;
}

export interface Attention {
  /** Scaled dot-product attention. @throws {AttentionError} */
  attention(inputs: AttentionInputs, options?: AttentionCallOptions & { weights?: true }): Required<AttentionResult>;
  attention(inputs: AttentionInputs, options: AttentionCallOptions & { weights: false }): { output: Matrix };
  attention(inputs: AttentionInputs, options?: AttentionCallOptions): AttentionResult;
  /** Self-attention with projections, every intermediate exposed. @throws {AttentionError} */
  selfAttention(inputs: SelfAttentionInputs, options?: AttentionOptions): SelfAttentionResult;
  /**
   * Multi-head attention (episode 06), as `torch.nn.MultiheadAttention` computes it: project,
   * split into heads, attend per head, concatenate, project with W_O. @throws {AttentionError}
   *
   * @example
   * ```ts
   * // 猫吃鱼, d_model = 8, two heads of 4
   * const r = attn.multiHeadAttention({ x, wq, wk, wv, wo, bq, bk, bv, bo }, { heads: 2, causal: true });
   * r.weights[0];   // (3, 3): what head 0 looks at
   * r.heads[1];     // (3, 4): head 1's output
   * r.concat;       // (3, 8): the heads side by side, before W_O
   * r.output;       // (3, 8)
   * // nn.MultiheadAttention's attn_mask (true = masked out) -> mask (true = may attend):
   * attn.multiHeadAttention(inputs, { heads: 2, mask: attnMask.map((row) => row.map((b) => !b)) });
   * ```
   */
  multiHeadAttention(inputs: MultiHeadAttentionInputs, options: MultiHeadAttentionOptions & { weights?: true }): Required<MultiHeadAttentionResult>;
  multiHeadAttention(inputs: MultiHeadAttentionInputs, options: MultiHeadAttentionOptions & { weights: false }): Omit<MultiHeadAttentionResult, 'weights'>;
  multiHeadAttention(inputs: MultiHeadAttentionInputs, options: MultiHeadAttentionOptions): MultiHeadAttentionResult;
  /**
   * RoPE, rotary position embedding, in the rotate-half layout of Hugging Face's LLaMA
   * (`apply_rotary_pos_emb`): for the row at position p and each pair i,
   * out[i] = x[i]·cos(p·θ_i) − x[i+d/2]·sin(p·θ_i), out[i+d/2] = x[i+d/2]·cos(p·θ_i) + x[i]·sin(p·θ_i).
   * Rotate Q and K and the scores Q·Kᵀ depend on positions only through j − i. @throws {AttentionError}
   *
   * @example
   * ```ts
   * const q = attn.rope({ x: Q }, { base: 10000 }).output;      // positions 0 .. n-1
   * const k = attn.rope({ x: K }, { base: 10000 }).output;
   * attn.attention({ q, k, v: V }, { causal: true });
   * attn.rope({ x: Q }, { offset: 1 });                         // the same rows at 1 .. n
   * ```
   */
  rope(inputs: RopeInputs, options?: RopeOptions): RopeResult;
  /** Bytes of WebAssembly memory this instance holds (it grows, never shrinks). */
  readonly memoryBytes: number;
  /** True when this instance runs the fused multiply-add build (relaxed SIMD, picked where the engine has it). */
  readonly relaxed: boolean;
}

/**
 * A compiled `WebAssembly.Module`. Declared from the global, not named, so that a project without
 * the DOM lib (Node with `lib: ["es2022"]` and `@types/node`, which declare no WebAssembly) still
 * type-checks: there it is any object.
 */
export type WasmModule = typeof globalThis extends { WebAssembly: { Module: { prototype: infer M } } } ? M : object;
/** Bytes: what the DOM lib calls `BufferSource`. */
export type WasmBytes = ArrayBuffer | ArrayBufferView;

export interface CreateAttentionOptions {
  /**
   * The core's wasm, for hosts that fetch it themselves (`attnmap/attention.wasm`).
   * Default: the copy embedded in the package, compiled once and shared by every caller.
   */
  wasm?: WasmModule | WasmBytes | Response | PromiseLike<Response>;
  /**
   * Use the build with fused multiply-add (wasm relaxed SIMD, `attnmap/attention-relaxed.wasm`)
   * where the engine has it, else the default build; `Attention.relaxed` tells which runs. Only
   * the tiled kernel (`weights: false`, m >= 32) uses it: faster there, one rounding instead of
   * two, but its last bits may differ between CPUs. Default true (where the engine has relaxed
   * SIMD: Chrome 114+, Node 22+). `false`: the default build, the same bits everywhere.
   */
  relaxed?: boolean;
}

/** Whether this engine has wasm relaxed SIMD (Chrome 114+, Node 22+, or Node 20 with --experimental-wasm-relaxed-simd). */
export function hasRelaxedSimd(): boolean;

/** Load the WebAssembly core. Without options, every call returns the same shared instance. */
export function createAttention(options?: CreateAttentionOptions): Promise<Attention>;

export type AttentionErrorCode =
  | 'INVALID_ARGUMENT'  // not a matrix, empty, ragged, bad option, missing argument
  | 'SHAPE_MISMATCH'    // dimensions that disagree, data length != rows·cols
  | 'NON_FINITE'        // NaN or ±Infinity in an input, or a result that overflows float32
  | 'TOO_LARGE'         // the buffers cannot fit in 4 GiB of wasm32 memory
  | 'OUT_OF_MEMORY'     // the engine refused to grow memory
  | 'INVALID_MODEL'     // attnmap/model: a checkpoint (config, tensors, vocabulary) that is broken or not supported
  | 'FETCH_FAILED'      // attnmap/model: a file that could not be fetched (an HTTP status, the network, the hub)
  | 'THREAD_FAILED';    // attnmap/model: a model thread trapped or did not finish its part in time (it is ended; the model goes on with the threads left)

export const ErrorCode: Readonly<{ [K in AttentionErrorCode]: K }>;

/** Thrown for every bad input; the instance stays usable afterwards. */
export class AttentionError extends Error {
  constructor(code: AttentionErrorCode, message: string);
  readonly name: 'AttentionError' | 'ModelFetchError';
  /** Stable across versions. */
  readonly code: AttentionErrorCode;
}

/** A returned matrix as nested arrays, for printing or JSON. */
export function toRows(matrix: Matrix): number[][];
