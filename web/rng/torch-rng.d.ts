/**
 * PyTorch's CPU random generator, bit for bit: "re-draw the random weights from a seed" so that
 * the episode's snippet, run after `torch.manual_seed(seed)`, prints the same numbers as the page.
 *
 * Reproduces PyTorch 1.13 on x86-64 with AVX2 (the usual case; AVX-512 machines use the same
 * kernels): `torch.randn` below and above 16 elements, `nn.Linear`'s default init and the cached
 * Box-Muller value of the generator. Only the low 32 bits of the seed matter, as in torch.
 *
 * @example
 * ```js
 * import { episodeWeights, manualSeed } from 'attnmap/torch-rng';
 *
 * // torch.manual_seed(0); X = torch.randn(3, 8); W_q/W_k/W_v = nn.Linear(8, 8, bias=False)
 * const { x, wq, wk, wv } = episodeWeights(0, 3, 8);
 * x.data[0];            // -1.1258398294448853, as torch prints X[0, 0]
 * wq.shape;             // [8, 8]: W_q.weight.T, so Q = X · wq
 *
 * const g = manualSeed(42n);
 * const X = g.randn(3, 8);
 * const { weight, T } = g.linear(8, 4);
 * ```
 *
 * Bad arguments throw a `TypeError` (wrong type) or `RangeError` (negative, fractional or too large
 * sizes; a seed outside 0..2**53-1 as a number or 0..2**64-1 as a BigInt). A call that throws
 * draws nothing.
 */

/** A seed: an integer 0..2**53-1, or a BigInt 0n..2n**64n-1n. */
export type Seed = number | bigint;

/** Row-major float32 data with its shape. */
export interface Matrix {
  data: Float32Array;
  shape: [rows: number, cols: number];
}

export interface LinearWeights {
  /** `nn.Linear(inFeatures, outFeatures, bias=False).weight`: (outFeatures, inFeatures), row-major. */
  weight: Float32Array;
  /** The transpose, (inFeatures, outFeatures): the episode's layout (Q = X · W_Q). */
  T: Float32Array;
}

/** The state of torch's default CPU generator; every call advances it exactly as torch does. */
export interface TorchGenerator {
  /** The seed given to `manualSeed`. */
  readonly initialSeed: Seed;
  /** `torch.randn(rows, cols)` (row-major). `cols` defaults to 1, the stream of `torch.randn(rows)`. Sizes 0..4096. */
  randn(rows: number, cols?: number): Float32Array;
  /** `nn.Linear(inFeatures, outFeatures, bias=False)` with its default (kaiming uniform) init. Sizes 1..4096. */
  linear(inFeatures: number, outFeatures: number): LinearWeights;
  /** `torch.empty(count).uniform_(from, to)` in float32. */
  uniform(count: number, from: number, to: number): Float32Array;
  /** One raw 32-bit draw of the MT19937 engine (0..2**32-1). */
  random(): number;
}

/** `torch.manual_seed(seed)`: a fresh generator in the state of torch's default generator after it. */
export function manualSeed(seed: Seed): TorchGenerator;

export interface EpisodeWeights {
  /** X: (n, dModel) = `torch.randn(n, d_model)`. */
  x: Matrix;
  /** W_Q: (dModel, dK) = `W_q.weight.T`. */
  wq: Matrix;
  /** W_K: (dModel, dK) = `W_k.weight.T`. */
  wk: Matrix;
  /** W_V: (dModel, dV) = `W_v.weight.T`. */
  wv: Matrix;
}

/**
 * The episode's snippet after `torch.manual_seed(seed)`: `X = torch.randn(n, d_model)`, then
 * `nn.Linear(d_model, d_k)` for W_q and W_k and `nn.Linear(d_model, d_v)` for W_v, in that order.
 * Sizes 1..4096.
 */
export function episodeWeights(seed: Seed, n: number, dModel: number, dK?: number, dV?: number): EpisodeWeights;
