// Types for attnmap/model: a GPT-2-family checkpoint run by the C core in WebAssembly.
import type { AttentionError } from '../core/attention.js';

export { AttentionError };

/** config.json as GPT-2 checkpoints write it (other keys are read too: unsupported maths is refused by name). */
export interface GPT2Config {
  n_layer: number;
  n_head: number;
  n_embd: number;
  vocab_size: number;
  n_positions: number;
  layer_norm_epsilon?: number;
  [key: string]: unknown;
}

/** What loadModel reads: the checkpoint's files, as text or bytes. */
export interface CheckpointFiles {
  /** config.json: its text or the parsed object. */
  config: string | GPT2Config;
  /** model.safetensors: F32, F16 or BF16 tensors (converted to float32 when loaded). */
  weights: Uint8Array | ArrayBuffer;
  /** GPT-2's byte-level BPE: vocab.json (text or object) and merges.txt (text). */
  vocab?: string | Record<string, number>;
  merges?: string;
  /** A BERT vocabulary (vocab.txt), for checkpoints such as uer/gpt2-chinese-cluecorpussmall. */
  vocabTxt?: string;
  /** WordPiece only: lower-case the text first (default true). */
  lowercase?: boolean;
  /** The model build of the core (attention-model.wasm) as a Module or bytes; default: the one in the package. */
  wasm?: WebAssembly.Module | BufferSource;
}

export interface Matrix {
  data: Float32Array;
  shape: [rows: number, cols: number];
}

export interface ForwardResult {
  /** (n, vocab_size): row i scores the token after position i. */
  logits: Matrix;
  /** attention[layer][head]: (n, n), row i = where position i looks (0 right of the diagonal). Only with { attention: true }. */
  attention?: Matrix[][];
}

export interface GenerateOptions {
  /** New tokens at most (default 20); generation also stops when the context reaches n_positions. */
  maxTokens?: number;
  /** 0 (default): greedy. Otherwise softmax(logits / temperature) is sampled. */
  temperature?: number;
  /** Sample among the k most likely tokens only (0, the default: all). */
  topK?: number;
  /** The sampler's seed, 0 to 2^32 - 1 (default 0): one seed, one text. */
  seed?: number;
  /** Each step's attention rows (default false). */
  attention?: boolean;
  /** Token ids that end the generation (the stop id is yielded). */
  stop?: number[];
}

export interface GenerateStep {
  id: number;
  /** The token decoded, when the model has a tokenizer. */
  text?: string;
  /** [layer][head]: the row of the query that chose this token, over every position so far. */
  attention?: Float32Array[][];
}

export interface Model {
  readonly config: Readonly<{ n_layer: number; n_head: number; n_embd: number; vocab_size: number; n_positions: number; layer_norm_epsilon: number }>;
  /** 'bpe', 'wordpiece' or null (ids only). */
  readonly tokenizer: 'bpe' | 'wordpiece' | null;
  encode(text: string): number[];
  decode(ids: ArrayLike<number>): string;
  /** Each token as readable text for labels (▁ marks a space, <0xE7> a byte of a split character). */
  tokens(ids: ArrayLike<number>): string[];
  /** The full pass from position 0. */
  forward(ids: ArrayLike<number>, options?: { attention?: boolean }): ForwardResult;
  /** One token at a time with the KV cache. */
  generate(ids: ArrayLike<number>, options?: GenerateOptions): AsyncGenerator<GenerateStep, void, undefined>;
  /** Frees the model's wasm memory; later calls throw. */
  dispose(): void;
}

/**
 * Load a checkpoint. In Node a folder's path works too (config.json, model.safetensors, and
 * vocab.json + merges.txt or vocab.txt). Rejects with an AttentionError: INVALID_MODEL (a broken
 * or unsupported checkpoint, naming the file and the field or tensor), TOO_LARGE, INVALID_ARGUMENT.
 */
export function loadModel(files: CheckpointFiles | string): Promise<Model>;
