// Types for attnmap/model: a checkpoint of a family attnmap runs (GPT-2; the LLaMA family: Llama,
// Qwen2/2.5, Qwen3) run by the C core in WebAssembly.
import { AttentionError, type WasmModule, type WasmBytes } from '../core/attention.js';

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

/**
 * config.json as the LLaMA family writes it (model_type "llama", "qwen2" or "qwen3"): the keys
 * attnmap reads; others are read too, and unsupported maths (sliding windows, other RoPE
 * scalings, another hidden_act) is refused by name.
 */
export interface LlamaConfig {
  model_type: 'llama' | 'qwen2' | 'qwen3';
  hidden_size: number;
  intermediate_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  num_key_value_heads?: number;
  head_dim?: number;
  vocab_size: number;
  max_position_embeddings: number;
  rms_norm_eps?: number;
  rope_theta?: number;
  rope_scaling?: { rope_type?: 'llama3' | 'default'; type?: string; factor?: number; [key: string]: unknown } | null;
  tie_word_embeddings?: boolean;
  attention_bias?: boolean;
  [key: string]: unknown;
}

/** A sharded checkpoint: model.safetensors.index.json and the shards it names, by file name. */
export interface ShardedWeights {
  /** model.safetensors.index.json: its text, the file (a File or Blob) or the parsed object. */
  index: string | Blob | { weight_map: Record<string, string>; [key: string]: unknown };
  shards: Record<string, Uint8Array | ArrayBuffer | Blob | FetchedWeights>;
}

/**
 * What fetchCheckpoint gives for a weights file over 16 MiB: the file, its header read and checked,
 * whose tensors loadModel streams into wasm memory as they arrive (by Range requests where the
 * server answers them), never holding the file whole. Pass it to loadModel; close() ends its
 * download if it is not loaded.
 */
export interface FetchedWeights {
  readonly size: number;
  close(): void;
}

/** A load's progress: bytes of one file read (or downloaded) so far, of total (null when unknown). */
export interface LoadProgress {
  file: string;
  loaded: number;
  total: number | null;
}

/**
 * A GGUF file (llama.cpp, Ollama, LM Studio) of architecture llama, qwen2 or qwen3: its bytes, or
 * a File / Blob read slice by slice. It holds the config and the weights: F32, F16 or BF16
 * tensors, and matrices in ggml's quantized types Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K,
 * Q5_K, Q6_K, IQ4_NL and IQ4_XS (kept as the file's blocks in WebAssembly memory, dequantized
 * where they are used); any other type is refused (INVALID_MODEL naming the tensor and its type).
 * Its tokenizer is read from the metadata (tokenizer.ggml.*: byte-level BPE or SentencePiece;
 * model.tokenizer is 'gguf'). In Node, loadModel('path/to/model.gguf') too.
 */
export interface GgufFiles {
  gguf: Uint8Array | ArrayBuffer | Blob;
  /** tokenizer.json (+ tokenizer_config.json) to read instead of the file's own tokenizer. */
  tokenizer?: string | object;
  tokenizerConfig?: string | object;
  wasm?: WasmModule | WasmBytes;
}

/** What loadModel reads: the checkpoint's files, as text or bytes. */
export interface CheckpointFiles {
  /** config.json: its text or the parsed object. */
  config: string | GPT2Config | LlamaConfig;
  /**
   * model.safetensors (its bytes, or a File / Blob read slice by slice), or a sharded checkpoint.
   * F32, F16 or BF16: the LLaMA family keeps matrices in the file's dtype (BF16 stays 2 bytes).
   */
  weights: Uint8Array | ArrayBuffer | Blob | ShardedWeights | FetchedWeights;
  /** tokenizer.json (Hugging Face's tokenizers), its text or parsed object; read by loadTokenizer. */
  tokenizer?: string | object;
  /** tokenizer_config.json, beside tokenizer.json (special tokens, BOS). */
  tokenizerConfig?: string | object;
  /** GPT-2's byte-level BPE: vocab.json (text or object) and merges.txt (text). */
  vocab?: string | Record<string, number>;
  merges?: string;
  /** A BERT vocabulary (vocab.txt), for checkpoints such as uer/gpt2-chinese-cluecorpussmall. */
  vocabTxt?: string;
  /** WordPiece only: lower-case the text first (default true). */
  lowercase?: boolean;
  /** The model build of the core (attention-model.wasm) as a Module or bytes; default: the one in the package. */
  wasm?: WasmModule | WasmBytes;
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

/**
 * Every head's scores from forward's { heads } (docs/HEADS.md), computed in C without keeping the
 * maps. Each score is a Float32Array(layers · heads), head h of layer l at [l · heads + h]. With A
 * a head's map over n >= 2 tokens (an encoder's: the tokens its mask keeps) and rows R = 1 … n − 1:
 * sink = mean_R A[i, 0], previous = mean_R A[i, i − 1], self = mean_R A[i, i], next = mean over
 * i = 1 … n − 2 of A[i, i + 1] (0 in a decoder), entropy = mean_R −Σ_j A[i, j]·log2 A[i, j] (bits),
 * distance = mean_R Σ_j A[i, j]·|i − j|; with { repeat: S }, rows S … n − 1: induction =
 * mean A[i, i − S + 1], duplicate = mean A[i, i − S].
 */
export interface HeadScores {
  layers: number;
  heads: number;
  sink: Float32Array;
  previous: Float32Array;
  self: Float32Array;
  next: Float32Array;
  entropy: Float32Array;
  distance: Float32Array;
  /** With { heads: { repeat } } only. */
  induction?: Float32Array;
  /** With { heads: { repeat } } only. */
  duplicate?: Float32Array;
}

/** forward's { heads }: true, or { repeat: S } for an input that repeats with period S (1 <= S <= n − 1). */
export interface HeadsChoice {
  repeat?: number;
}

/**
 * A result with { heads }: the scores, and map(layer, head), that head's full (n, n) map computed
 * again from what the forward kept (each head's queries; the keys). Valid until the model's next
 * forward, generate or dispose(); after that map throws INVALID_ARGUMENT. mapAsync computes it off
 * this thread as forwardAsync does (the same bits).
 */
interface MapOf { map(layer: number, head: number): Matrix; mapAsync(layer: number, head: number): Promise<Matrix> }
type WithHeads<R> = R & MapOf & { heads: HeadScores };
/** A result with { logits: false }: no LM head was run. */
type WithoutLogits<R> = Omit<R, 'logits'> & { logits: null };
/** forward's result with { heads }. */
export type ForwardResultHeads = WithHeads<ForwardResult>;
/** HeadScores with { heads: { repeat } }: induction and duplicate are there. */
export type HeadScoresRepeat = HeadScores & { induction: Float32Array; duplicate: Float32Array };
/** A result with { heads: { repeat } }. */
type WithRepeat<R> = R & MapOf & { heads: HeadScoresRepeat };

/** A result with { attention: true }: every layer's and every head's map. */
type WithAllMaps<R> = R & { attention: Matrix[][] };
/** A result with { attention: { layers, heads } }: those maps; null for the heads not asked for. */
type WithSomeMaps<R> = R & { attention: (Matrix | null)[][] };
/** forward's result with { attention: true }. */
export type ForwardResultAll = WithAllMaps<ForwardResult>;
/** forward's result with { attention: { layers, heads } }. */
export type ForwardResultSome = WithSomeMaps<ForwardResult>;

/** Which maps forward returns: each a list of indices, all when left out. */
export interface AttentionChoice {
  layers?: number[];
  heads?: number[];
}

export interface ForwardOptions {
  /** true: every layer's and head's map; { layers, heads }: those only (each a list of indices, default all). */
  attention?: boolean | AttentionChoice;
  /** true or { repeat }: every head's scores (result.heads) and result.map, without keeping the maps. */
  heads?: boolean | HeadsChoice;
  /** true (default): every row's logits; 'last': the last token's only, (1, vocab_size); false: none (null). */
  logits?: boolean | 'last';
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

/** The sizes the runtime uses, normalised over the families, and raw: config.json as it was read. */
export type ModelConfig = Readonly<{
  family: 'gpt2' | 'llama';
  layers: number;
  /** Query heads per layer. */
  heads: number;
  /** Key/value heads per layer (GQA: query head i reads key/value head i / (heads / kvHeads)); heads for GPT-2. */
  kvHeads: number;
  headDim: number;
  hidden: number;
  vocab_size: number;
  n_positions: number;
  n_layer: number;
  n_head: number;
  n_embd: number;
  raw: GPT2Config | LlamaConfig;
  [key: string]: unknown;
}>;

export interface Model {
  /** The sizes the runtime uses, and raw: config.json as it was read. */
  readonly config: ModelConfig;
  /** 'tokenizer.json', 'bpe', 'wordpiece', 'gguf' (a GGUF file's metadata) or null (ids only). */
  readonly tokenizer: 'tokenizer.json' | 'bpe' | 'wordpiece' | 'gguf' | null;
  /** Token ids; special tokens added as the tokenizer's post-processor says, unless { specialTokens: false }. */
  encode(text: string, options?: { specialTokens?: boolean }): number[];
  decode(ids: ArrayLike<number>): string;
  /** Each token as readable text for labels (▁ marks a space, <0xE7> a byte of a split character). */
  tokens(ids: ArrayLike<number>): string[];
  /**
   * The full pass from position 0. Unknown options are refused (INVALID_ARGUMENT). With
   * { attention: true } the result's attention holds every map; with { attention: { layers,
   * heads } } a map or null per head; otherwise none.
   */
  forward(ids: ArrayLike<number>, options: ForwardOptions & { heads: { repeat: number }; logits: false }): WithoutLogits<WithRepeat<ForwardResult>>;
  forward(ids: ArrayLike<number>, options: ForwardOptions & { heads: { repeat: number } }): WithRepeat<ForwardResult>;
  forward(ids: ArrayLike<number>, options: ForwardOptions & { heads: true | HeadsChoice; logits: false }): WithoutLogits<ForwardResultHeads>;
  forward(ids: ArrayLike<number>, options: ForwardOptions & { heads: true | HeadsChoice }): ForwardResultHeads;
  forward(ids: ArrayLike<number>, options: ForwardOptions & { logits: false }): WithoutLogits<ForwardResult>;
  forward(ids: ArrayLike<number>, options: ForwardOptions & { attention: true }): ForwardResultAll;
  forward(ids: ArrayLike<number>, options: ForwardOptions & { attention: AttentionChoice }): ForwardResultSome;
  forward(ids: ArrayLike<number>, options?: ForwardOptions): ForwardResult;
  /**
   * forward, with the C call made by a worker over the shared memory where the model runs on the
   * threaded build (offThread: loadModel's offThread or threads > 1, where the host has threads),
   * so that this thread (a page's main thread) stays free; elsewhere forward here. The same bits.
   * While it runs, every other call of the model is refused (INVALID_ARGUMENT).
   */
  forwardAsync(ids: ArrayLike<number>, options: ForwardOptions & { heads: { repeat: number }; logits: false }): Promise<WithoutLogits<WithRepeat<ForwardResult>>>;
  forwardAsync(ids: ArrayLike<number>, options: ForwardOptions & { heads: { repeat: number } }): Promise<WithRepeat<ForwardResult>>;
  forwardAsync(ids: ArrayLike<number>, options: ForwardOptions & { heads: true | HeadsChoice; logits: false }): Promise<WithoutLogits<ForwardResultHeads>>;
  forwardAsync(ids: ArrayLike<number>, options: ForwardOptions & { heads: true | HeadsChoice }): Promise<ForwardResultHeads>;
  forwardAsync(ids: ArrayLike<number>, options: ForwardOptions & { logits: false }): Promise<WithoutLogits<ForwardResult>>;
  forwardAsync(ids: ArrayLike<number>, options: ForwardOptions & { attention: true }): Promise<ForwardResultAll>;
  forwardAsync(ids: ArrayLike<number>, options: ForwardOptions & { attention: AttentionChoice }): Promise<ForwardResultSome>;
  forwardAsync(ids: ArrayLike<number>, options?: ForwardOptions): Promise<ForwardResult>;
  /** Whether forwardAsync and mapAsync leave this thread free (the model is on the threaded build). */
  readonly offThread: boolean;
  /** One token at a time with the KV cache. */
  generate(ids: ArrayLike<number>, options?: GenerateOptions): AsyncGenerator<GenerateStep, void, undefined>;
  /** Threads the model runs on: loadModel's options.threads, at most the host's cores
   * (os.availableParallelism() in Node, navigator.hardwareConcurrency in a browser: more threads
   * than cores run slower than one); 1 in a page that is not cross-origin isolated; after a
   * THREAD_FAILED error, the threads left (the failed one is ended, the numbers stay the same). */
  readonly threads: number;
  /** The threads asked for: options.threads, or the default. More than `threads` where the host
   * has fewer cores (clamped to them) or runs no threads. */
  readonly threadsRequested: number;
  /** Frees the model's wasm memory and ends its threads; later calls throw. Called during a call
   * (from a getter of its arguments), it waits for the call to end, and that call then throws
   * INVALID_ARGUMENT "the model was disposed during the call". A model dropped without dispose()
   * has its threads ended when it is garbage-collected. */
  dispose(): void;
}

/** An encoder's forward options (BERT): attention and heads as a decoder's (its scores over the tokens the mask keeps). */
export interface EncoderForwardOptions extends Omit<ForwardOptions, 'logits'> {
  /** One per id: 0 for the first sentence, 1 for the second (default all 0). */
  tokenTypes?: ArrayLike<number>;
  /** One per id: 1 for a real token, 0 for padding, which no token attends to (default all 1). */
  mask?: ArrayLike<number>;
}

export interface EncoderForwardResult {
  /** (n, vocab_size) through the masked-LM head, when the checkpoint has one (BertForMaskedLM). */
  logits?: Matrix;
  /** (n, hidden_size): the last layer's states, when it has no head (BertModel). */
  hidden?: Matrix;
  /** [layer][head], each (n, n) over every token (no causal mask), when asked; null: a head not asked for. */
  attention?: (Matrix | null)[][];
}

/** An encoder's forward result with { attention: true }: every map. */
export type EncoderForwardResultAll = WithAllMaps<EncoderForwardResult>;
/** An encoder's forward result with { attention: { layers, heads } }: a map or null per head. */
export type EncoderForwardResultSome = WithSomeMaps<EncoderForwardResult>;

/** One [MASK]'s answer: its position among the ids, and the likeliest tokens there. */
export interface FillMaskAnswer {
  index: number;
  /** Likeliest first: the id, the token as the vocabulary spells it ('##小'), as text, and its probability. */
  top: { id: number; token: string; text: string; p: number }[];
}

/**
 * A BERT encoder (config.encoder is true): every token sees every other, and it fills gaps
 * instead of generating. loadModel<EncoderModel>('google-bert/bert-base-chinese').
 */
export interface EncoderModel extends Omit<Model, 'config' | 'encode' | 'forward' | 'forwardAsync' | 'generate'> {
  readonly config: Readonly<Omit<ModelConfig, 'family'> & { family: 'bert'; encoder: true; types: number }>;
  /** [CLS] a [SEP] (b [SEP]) and its token types (0 up to the first [SEP], then 1). */
  encode(a: string, b?: string): { ids: number[]; tokenTypes: number[] };
  forward(ids: ArrayLike<number>, options: EncoderForwardOptions & { heads: true | HeadsChoice }): WithHeads<EncoderForwardResult>;
  forward(ids: ArrayLike<number>, options: EncoderForwardOptions & { attention: true }): EncoderForwardResultAll;
  forward(ids: ArrayLike<number>, options: EncoderForwardOptions & { attention: AttentionChoice }): EncoderForwardResultSome;
  forward(ids: ArrayLike<number>, options?: EncoderForwardOptions): EncoderForwardResult;
  /** forward off this thread, as Model's forwardAsync. */
  forwardAsync(ids: ArrayLike<number>, options: EncoderForwardOptions & { heads: true | HeadsChoice }): Promise<WithHeads<EncoderForwardResult>>;
  forwardAsync(ids: ArrayLike<number>, options: EncoderForwardOptions & { attention: true }): Promise<EncoderForwardResultAll>;
  forwardAsync(ids: ArrayLike<number>, options: EncoderForwardOptions & { attention: AttentionChoice }): Promise<EncoderForwardResultSome>;
  forwardAsync(ids: ArrayLike<number>, options?: EncoderForwardOptions): Promise<EncoderForwardResult>;
  /**
   * For each [MASK] in the text, the topK (default 5, at most 1000) likeliest tokens; with pair,
   * the text is read as [CLS] text [SEP] pair [SEP] and each answer's index counts in that.
   */
  fillMask(text: string, options?: { topK?: number; pair?: string }): FillMaskAnswer[];
  /** Always throws INVALID_ARGUMENT: an encoder has no next token (use fillMask). */
  generate(ids: ArrayLike<number>, options?: GenerateOptions): never;
}

/** loadModel's options. */
export interface LoadOptions extends FetchOptions, HubOptions {
  /** Each file's bytes as they are read or downloaded. */
  onProgress?: (progress: LoadProgress) => void;
  /** Run the model on this many threads (1 to 16), each heavy step split so that the numbers are
   * the bits of one thread: worker_threads in Node, Web Workers in a cross-origin isolated page
   * (COOP + COEP); elsewhere one thread. At most the host's cores (model.threads says what was
   * used). Default: the cores up to 8 for a model of 4 M parameters or more, else 1. */
  threads?: number;
  /** The threaded build even on one thread, where the host has threads, so that forwardAsync and
   * mapAsync run off this thread (model.offThread). Default false. */
  offThread?: boolean;
}

/** Options of a load by Hugging Face repo id ('Qwen/Qwen2.5-0.5B'). */
export interface HubOptions {
  /** A branch, tag or commit (default 'main'). */
  revision?: string;
  /** Another hub with the same API, such as a mirror (Node: default HF_ENDPOINT, else https://huggingface.co). */
  hubUrl?: string;
  /** A token for gated repos, sent to the hub's host only (Node: default HF_TOKEN, else HF_HOME/token). */
  token?: string;
  /** Node: never use the network (default HF_HUB_OFFLINE). */
  offline?: boolean;
  /** Node: the Hugging Face cache folder (default HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub). */
  cacheDir?: string;
  /**
   * A GGUF repo's file to load, a .gguf at the repo's top ('qwen2.5-0.5b-instruct-q4_0.gguf':
   * letters, digits, "_", ".", "+", "-"; no folder, no ".."): only that file is fetched, into the
   * cache (Node: the Hugging Face cache; a browser: the Cache API). Left out, a repo that is no safetensors checkpoint loads its one .gguf (mmproj-*.gguf
   * aside); several are INVALID_ARGUMENT naming them, and so is a file the repo lacks. Node: a
   * folder on disk is read the same way (loadModel('models/', { file })).
   */
  file?: string;
  /** Browsers: false keeps nothing in the Cache API (default true). */
  cache?: boolean;
  /** Cancels the download. */
  signal?: AbortSignal;
}

/** A model in the cache: the browser's Cache API, or in Node the Hugging Face cache. */
/** A Hugging Face repo in the cache (Node: the cache Python shares; a browser: the Cache API). */
export interface CachedHubModel {
  source: 'huggingface';
  /** The repo id. */
  name: string;
  repo: string;
  revision: string;
  commit: string;
  bytes: number;
  /** Node: config.json's model_type (null for a GGUF repo's snapshot). */
  modelType?: string | null;
  /** The .gguf files of a GGUF repo kept (Node: its snapshot's), each loaded with loadModel(repo, { file }). */
  gguf?: string[];
}

/** Node: a GGUF model in Ollama's or LM Studio's store, loaded by name (loadModel('ollama:NAME[:TAG]'), 'lmstudio:PUBLISHER/REPO[/FILE]'); read only. */
export interface CachedStoreModel<S extends 'ollama' | 'lmstudio' = 'ollama' | 'lmstudio'> {
  source: S;
  /** The name loadModel takes, with its prefix. */
  name: string;
  bytes: number;
  /** The GGUF file's path. */
  file?: string;
}

/** One entry of cachedModels(): tell them apart by source. */
export type CachedModel = CachedHubModel | CachedStoreModel<'ollama'> | CachedStoreModel<'lmstudio'>;

export interface FetchOptions {
  /** The files the folder holds: only these are fetched (no request for the optional files it lacks). */
  files?: string[];
  /** A download with no bytes for this long fails with a ModelFetchError (default 30,000 ms). Also a load by name. */
  stallMs?: number;
  /** Once graceMs have passed, a file must average at least this many bytes per second, else a
   * ModelFetchError: a server that drips a byte now and then fails (default 65,536; 0: no minimum). Also a load by name. */
  minRate?: number;
  /** How long a file may take before minRate applies (default 60,000 ms). */
  graceMs?: number;
}

/** A file of a checkpoint folder that could not be fetched: its URL and HTTP status (0: no answer). An AttentionError with code FETCH_FAILED. */
export class ModelFetchError extends AttentionError {
  readonly name: 'ModelFetchError';
  readonly url: string;
  readonly status: number;
}

/**
 * Load a checkpoint: its files; or a checkpoint folder's URL (fetched; relative to the page in a
 * browser: config.json, model.safetensors, and vocab.json + merges.txt or vocab.txt when there);
 * a .gguf file's URL (the one file, at most 4 GiB). In Node also a GGUF repo's file by repo id
 * (options.file), a folder's or a .gguf file's path,
 * 'ollama:NAME[:TAG]', 'lmstudio:PUBLISHER/REPO[/FILE]', or the name of a model shipped in the
 * package ('toy-zh').
 * Rejects with an AttentionError: INVALID_MODEL (a broken or unsupported checkpoint, naming the
 * file and the field or tensor), TOO_LARGE, INVALID_ARGUMENT; or a ModelFetchError.
 */
export function loadModel<M extends Model | EncoderModel = Model>(files: CheckpointFiles | GgufFiles | string, options?: LoadOptions): Promise<M>;

/**
 * A checkpoint's tokenizer alone: from tokenizer.json (+ tokenizer_config.json), vocab.json +
 * merges.txt, vocab.txt, or a GGUF file's metadata (its bytes, a Blob, or parseGguf's result; a
 * vocab-only file will do).
 */
export function loadTokenizer(files:
  | { tokenizer: string | object; tokenizerConfig?: string | object }
  | { vocab: string | Record<string, number>; merges: string }
  | { vocabTxt: string; lowercase?: boolean }
  | { gguf: Uint8Array | ArrayBuffer | Blob | { metadata: Map<string, unknown> } | Map<string, unknown> }): Promise<Tokenizer>;

export interface Tokenizer {
  readonly kind: 'tokenizer.json' | 'bpe' | 'wordpiece' | 'gguf';
  readonly vocabSize: number;
  encode(text: string, options?: { specialTokens?: boolean }): number[];
  decode(ids: ArrayLike<number>): string;
  tokens(ids: ArrayLike<number>): string[];
}

/**
 * The bytes loading repo (options.file: one of a GGUF repo's files) would download, from the hub's
 * file list: only the files attnmap reads. gguf: the repo's .gguf files, when it has any; with
 * several and no options.file, files is empty and loadModel needs one of them as { file }.
 */
export function hubSize(repo: string, options?: HubOptions): Promise<{ files: { path: string; size: number }[]; total: number; gguf?: { path: string; size: number }[] }>;

/** The models a load by name finds without the network (browsers: the Cache API; Node: the Hugging Face cache, options.cacheDir). */
export function cachedModels(options?: { cacheDir?: string; ollamaDir?: string; lmstudioDir?: string }): Promise<CachedModel[]>;

/** Forgets a repo's cached files, every revision (Node: removes its folder from the Hugging Face cache). */
export function deleteCachedModel(repo: string, options?: { cacheDir?: string }): Promise<void>;

/** The files of a checkpoint folder at url (relative to base), as loadModel takes them (weights over 16 MiB as FetchedWeights). */
export function fetchCheckpoint(url: string, base?: string, options?: FetchOptions): Promise<CheckpointFiles>;
