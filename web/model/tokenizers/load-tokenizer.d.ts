// Types for load-tokenizer.js: a checkpoint's tokenizer from its files.

/** tokenizer.json (+ tokenizer_config.json), read by Hugging Face's @huggingface/tokenizers: Qwen3, Llama 3, … */
export interface TokenizerJsonFiles {
  /** tokenizer.json: its text or the parsed object (not changed). */
  tokenizer: string | object;
  /** tokenizer_config.json: its text or the parsed object (optional). */
  tokenizerConfig?: string | object;
}

/** GPT-2's byte-level BPE: vocab.json (text or object) and merges.txt (text). */
export interface BpeFiles {
  vocab: string | Record<string, number>;
  merges: string;
}

/** BERT's WordPiece: vocab.txt; lower-cased unless lowercase is false (default: tokenizerConfig's do_lower_case, else true). */
export interface WordPieceFiles {
  vocabTxt: string;
  lowercase?: boolean;
  tokenizerConfig?: string | object;
}

/**
 * A GGUF file's tokenizer (tokenizer.ggml.*: model gpt2, byte-level BPE with the pre-tokenizer
 * tokenizer.ggml.pre names, or llama, SentencePiece BPE): the file's bytes, a Blob or File (only
 * its header is read), parseGguf's result, or its metadata Map. A vocab-only file will do.
 */
export interface GgufTokenizerFiles {
  gguf: Uint8Array | ArrayBuffer | Blob | { metadata: Map<string, unknown> } | Map<string, unknown>;
}

export interface EncodeOptions {
  /**
   * tokenizer.json: add the special tokens its post-processor adds (default true, as Hugging Face
   * does: Llama 3's <|begin_of_text|> where its template says; Qwen3 adds none). false: none.
   * Special-token strings written in the text are special tokens either way.
   * WordPiece (vocab.txt): [CLS] … [SEP] when true (default false). GPT-2's files: no effect.
   * GGUF: BOS and EOS as tokenizer.ggml.add_bos_token and add_eos_token say (default true).
   */
  specialTokens?: boolean;
}

export interface Tokenizer {
  /** Which files it was made from. */
  readonly kind: 'tokenizer.json' | 'bpe' | 'wordpiece' | 'gguf';
  /** The vocabulary's size, added tokens included: ids are below it. */
  readonly vocabSize: number;
  encode(text: string, options?: EncodeOptions): number[];
  /** The text of the ids (special tokens kept; no clean-up of spaces). */
  decode(ids: ArrayLike<number>): string;
  /**
   * Each token as readable text for labels: a byte-level token's bytes as the text they decode
   * to, ▁ for a space, ↵ \n, ⇥ \t, ␍ \r, <0xE7> for a byte of a character split over tokens;
   * special tokens as themselves.
   */
  tokens(ids: ArrayLike<number>): string[];
}

/**
 * A checkpoint's tokenizer from its files, each as text or parsed, or from a GGUF file's metadata
 * ({ gguf }, given alone). tokenizer.json, when given, is the tokenizer (vocab.json, merges.txt and
 * vocab.txt beside it are not read). Async because the tokenizer.json reader (and the GGUF one)
 * is imported on first use.
 *
 * @example
 *   const tok = await loadTokenizer({ tokenizer: await (await fetch('tokenizer.json')).text() });
 *   const ids = tok.encode('我看见那只猫在吃鱼');   // Qwen3: 我 / 看见 / 那只 / 猫 / 在 / 吃 / 鱼
 *   tok.tokens(ids);                                 // labels for a heatmap
 *   tok.decode(ids);                                 // '我看见那只猫在吃鱼'
 *   const gg = await loadTokenizer({ gguf: new Uint8Array(await (await fetch('qwen3.gguf')).arrayBuffer()) });
 *
 * Rejects with an AttentionError: INVALID_MODEL for a broken or unsupported file (naming it),
 * INVALID_ARGUMENT for a bad argument. encode, decode and tokens throw AttentionErrors too.
 */
export function loadTokenizer(files: TokenizerJsonFiles | BpeFiles | WordPieceFiles | GgufTokenizerFiles): Promise<Tokenizer>;
