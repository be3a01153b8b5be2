// Types for attnmap/model: a GPT-2-family checkpoint run by the C core in WebAssembly.
import { AttentionError } from '../core/attention.js';

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
  /**
   * attention[layer][head]: (n, n), row i = where position i looks (0 right of the diagonal).
   * With { attention: true } every head; with { attention: { layers, heads } } those, and null elsewhere.
   */
  attention?: (Matrix | null)[][];
}

export interface ForwardOptions {
  /** true: every layer's and head's map; { layers, heads }: those only (each a list of indices, default all). */
  attention?: boolean | { layers?: number[]; heads?: number[] };
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
  /**
   * Token ids that end the generation (the stop id is yielded, with done: 'stop'). Default: the
   * config's eos_token_id (done: 'eos'); false: none.
   */
  stop?: number[] | false;
}

export interface GenerateStep {
  id: number;
  /**
   * The text this step adds, when the model has a tokenizer: whole characters only (a character
   * split over byte tokens comes with the step that completes it), so that the texts of all steps
   * joined equal decode() of all the new ids.
   */
  text?: string;
  /** [layer][head]: the row of the query that chose this token, over every position so far. */
  attention?: Float32Array[][];
  /** false, or why this is the last step: the eos id, a stop id, maxTokens, or the context window full. */
  done: false | 'eos' | 'stop' | 'maxTokens' | 'context';
}

export interface Model {
  /** The sizes the runtime uses, and raw: config.json as it was read. */
  readonly config: Readonly<{ n_layer: number; n_head: number; n_embd: number; vocab_size: number; n_positions: number; layer_norm_epsilon: number; raw: GPT2Config }>;
  /** 'bpe', 'wordpiece' or null (ids only). */
  readonly tokenizer: 'bpe' | 'wordpiece' | null;
  encode(text: string): number[];
  decode(ids: ArrayLike<number>): string;
  /** Each token as readable text for labels (▁ marks a space, <0xE7> a byte of a split character). */
  tokens(ids: ArrayLike<number>): string[];
  /** The full pass from position 0. Unknown options are refused (INVALID_ARGUMENT). */
  forward(ids: ArrayLike<number>, options?: ForwardOptions): ForwardResult;
  /** One token at a time with the KV cache. */
  generate(ids: ArrayLike<number>, options?: GenerateOptions): AsyncGenerator<GenerateStep, void, undefined>;
  /** Frees the model's wasm memory; later calls throw. */
  dispose(): void;
}

export interface FetchOptions {
  /** The files the folder holds: only these are fetched (no request for the optional files it lacks). */
  files?: string[];
  /** A download with no bytes for this long fails with a ModelFetchError (default 30,000 ms). */
  stallMs?: number;
}

/** A file of a checkpoint folder that could not be fetched: its URL and HTTP status (0: no answer). An AttentionError with code FETCH_FAILED. */
export class ModelFetchError extends AttentionError {
  readonly name: 'ModelFetchError';
  readonly url: string;
  readonly status: number;
}

/**
 * Load a checkpoint: its files; or a checkpoint folder's URL (fetched; relative to the page in a
 * browser: config.json, model.safetensors, and vocab.json + merges.txt or vocab.txt when there).
 * In Node also a folder's path, or the name of a model shipped in the package ('toy-zh').
 * Rejects with an AttentionError: INVALID_MODEL (a broken or unsupported checkpoint, naming the
 * file and the field or tensor), TOO_LARGE, INVALID_ARGUMENT; or a ModelFetchError.
 */
export function loadModel(files: CheckpointFiles | string, options?: FetchOptions): Promise<Model>;

/** The files of a checkpoint folder at url (relative to base), as loadModel takes them. */
export function fetchCheckpoint(url: string, base?: string, options?: FetchOptions): Promise<CheckpointFiles>;
