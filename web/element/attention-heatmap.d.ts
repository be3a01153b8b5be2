/**
 * `<attention-heatmap>`: the attention weights of the C core (WebAssembly) as an SVG heatmap.
 *
 * `attention-heatmap.js` defines the element (importing it is the side effect);
 * `attention-heatmap-element.js` exports the same class without defining anything.
 *
 * @example
 * ```html
 * <script type="module" src="/attnmap/web/element/attention-heatmap.js"></script>
 * <attention-heatmap tokens="猫 吃 鱼"
 *   q="[[1.0,0.2,0.1,0.0],[0.3,0.8,0.2,0.1],[0.1,0.1,0.9,0.3]]"
 *   k="[[0.9,0.1,0.0,0.2],[0.2,0.7,0.3,0.0],[0.0,0.2,1.0,0.1]]"></attention-heatmap>
 * ```
 *
 * @example
 * ```ts
 * import 'attnmap/attention-heatmap';
 *
 * const el = document.createElement('attention-heatmap');
 * el.tokens = ['猫', '吃', '鱼'];
 * el.q = { data: new Float32Array([1, 0.2, 0.1, 0, 0.3, 0.8, 0.2, 0.1, 0.1, 0.1, 0.9, 0.3]), shape: [3, 4] };
 * el.k = [[0.9, 0.1, 0.0, 0.2], [0.2, 0.7, 0.3, 0.0], [0.0, 0.2, 1.0, 0.1]];
 * el.addEventListener('attention-computed', (e) => console.log(e.detail.weights.data.subarray(3, 6)));
 * document.body.append(el);   // row of 吃: 0.3157, 0.3686, 0.3157
 * ```
 *
 * @example
 * ```html
 * <!-- episode 06: one heatmap per head; W_Q, W_K, W_V, W_O drawn from the seed as PyTorch does -->
 * <attention-heatmap heads="2" seed="0" tokens="猫 吃 鱼" x="[[-1.1258,…],…]"></attention-heatmap>
 * ```
 *
 * @example
 * ```html
 * <!-- issue 16: one layer's and head's attention of a GPT-2-family checkpoint (attnmap/model) -->
 * <attention-heatmap model="toy-zh" text="猫吃鱼" layer="0" head="1"></attention-heatmap>
 * <attention-heatmap model="/models/my-gpt2/" ids="[464, 3797, 257]" layer="3" head="7"></attention-heatmap>
 * ```
 * Attributes of that mode (attributes only, no properties): `model` (the shipped `toy-zh`, or a
 * checkpoint folder's URL resolved against the document: config.json, model.safetensors, and
 * vocab.json + merges.txt or vocab.txt, fetched from there), `text` (through the checkpoint's
 * tokenizer) or `ids` (a JSON array of token ids), `layer` and `head` (from 0, default 0), and
 * `lang`, `decimals` as usual; the attributes of the other modes must be absent. The model code
 * and data load on first use, once per page for each model; the element shows a loading line
 * (with `aria-busy` on its root part) meanwhile. Its `<svg>` carries `data-model`, `data-layer`,
 * `data-head` and `data-ids` (JSON). The one-file embed loads `attnmap-model.js` and `toy-zh.js`
 * from its own folder as classic scripts. Over 256 tokens (up to the model's context, at most
 * 4,096) the head is drawn on a `<canvas>` instead (`::part(canvas)`; its box carries the same
 * data-* plus `data-n`, the canvas `data-r0`, `data-c0`, `data-k`: the window shown), with zoom
 * and pan (wheel, pinch, drag; `+ − arrows 0` on the focused canvas), the hovered cell's i, j,
 * tokens and value in the caption line, and a PNG button (`::part(png)`); docs/EMBED.md, "Long
 * inputs".
 *
 * Bad input never throws: the element shows a readable message (with the core's
 * `AttentionError` message) and `error` holds the error.
 *
 * Budgets, checked before anything is computed (docs/EMBED.md, "Budgets"): at most 65,536 SVG cells
 * over all heatmaps of one element (every head's weights plus the output) and 16,384 characters
 * of tokens in all; over either, the message names the budget and the numbers received. Tokens
 * are shown cut to ⌊1,048,576 / (all cells)⌋ characters (16 at 65,536 cells); `result.tokens`
 * keeps them whole.
 */
import type { Matrix, MatrixInput, MultiHeadAttentionResult, SelfAttentionResult } from '../core/attention.js';

export type { Matrix, MatrixInput } from '../core/attention.js';

/** The detail of `attention-computed`: the core's matrices plus the tokens. */
export type AttentionComputedDetail = QKDetail | XSeedDetail | HeadsDetail | ModelDetail;

/** With `model`: one layer's and head's weights of the checkpoint. */
export interface ModelDetail {
  /** The model attribute, trimmed. */
  model: string;
  /** The token ids shown (from text through the tokenizer, or ids as given). */
  ids: number[];
  /** The labels: the tokenizer's tokens, or the ids as strings for a checkpoint without one. */
  tokens: string[];
  layer: number;
  head: number;
  /** (n, n), causal: 0 above the diagonal (an encoder's has none). Over 256 tokens, the forward's `map(layer, head)`. */
  weights: Matrix;
}

/** From `q`, `k` (and `v`). */
export interface QKDetail {
  /** The labels, or null when no tokens were given. */
  tokens: string[] | null;
  /** (n, d_k) as used */ q: Matrix;
  /** (m, d_k) as used */ k: Matrix;
  /** (m, d_v), only when `v` was given */ v?: Matrix;
  /** (n, m), rows sum to 1; with `causal`, the upper triangle is 0 */ weights: Matrix;
  /** (n, d_v) = weights · V, only when `v` was given */ output?: Matrix;
}

/** From `x` and `seed` (or `x` and `wq`, `wk`, `wv`), without `heads`: every step of `selfAttention`, plus the inputs. */
export interface XSeedDetail extends SelfAttentionResult {
  tokens: string[] | null;
  /** (n, d_model) as used */ x: Matrix;
  /** (d_model, d_k): W_Q drawn from the seed (d_k = d_model) or as given, in the episode's layout (Q = X · W_Q) */ wq: Matrix;
  /** (d_model, d_k) */ wk: Matrix;
  /** (d_model, d_v) */ wv: Matrix;
}

/**
 * With `heads` (episode 06): `multiHeadAttention`'s result plus the inputs. Note the names:
 * `weights` is an array with one (n, n) matrix per head, and `heads` (as the core calls it) the
 * per-head outputs, not the number of heads (that is `weights.length`).
 */
export interface HeadsDetail extends Required<MultiHeadAttentionResult> {
  tokens: string[] | null;
  /** (n, d_model) as used */ x: Matrix;
  /** (d_model, d_model): drawn from the seed or as given; head i uses columns [i·d_head, (i+1)·d_head) */ wq: Matrix;
  /** (d_model, d_model) */ wk: Matrix;
  /** (d_model, d_model) */ wv: Matrix;
  /** (d_model, d_model): output = concat · W_O */ wo: Matrix;
}

export type AttentionComputedEvent = CustomEvent<AttentionComputedDetail>;

export class AttentionHeatmapElement extends HTMLElement {
  /** `tokens q k v x wq wk wv wo seed heads causal scale decimals lang model text ids layer head`: every attribute the element reads. */
  static readonly observedAttributes: string[];

  /**
   * One label per row (and column). Set: `string[]`, or a string parsed like the attribute
   * (space-separated words, or a JSON array of strings). Takes precedence over the attribute;
   * `null` falls back to it. Not reflected. At most 16,384 characters in all.
   */
  get tokens(): string[] | null;
  set tokens(value: readonly string[] | string | null | undefined);

  /** Queries (n, d_k). Takes precedence over the `q` attribute (JSON number[][]); null falls back to it. Not reflected. */
  get q(): MatrixInput | null;
  set q(value: MatrixInput | null | undefined);
  /** Keys (m, d_k), m = n. */
  get k(): MatrixInput | null;
  set k(value: MatrixInput | null | undefined);
  /** Values (m, d_v). When present, the output (n, d_v) is drawn below the weights. */
  get v(): MatrixInput | null;
  set v(value: MatrixInput | null | undefined);
  /**
   * Token vectors (n, d_model), used with `seed` instead of q/k/v: W_Q, W_K, W_V are drawn as the
   * episode's PyTorch snippet draws them after `torch.manual_seed(seed)` (web/rng/torch-rng.js,
   * loaded only then). Weights and output are shown.
   */
  get x(): MatrixInput | null;
  set x(value: MatrixInput | null | undefined);
  /**
   * Projections (d_model, d_model) in the episode's layout (Q = X · W_Q, a PyTorch
   * `nn.Linear(...).weight.T`), used with `x` instead of `seed`: `wq`, `wk`, `wv` for
   * self-attention, plus `wo` with `heads`. Take precedence over the attributes; not reflected.
   */
  get wq(): MatrixInput | null;
  set wq(value: MatrixInput | null | undefined);
  get wk(): MatrixInput | null;
  set wk(value: MatrixInput | null | undefined);
  get wv(): MatrixInput | null;
  set wv(value: MatrixInput | null | undefined);
  /** The output projection W_O (d_model, d_model); only with `heads`. */
  get wo(): MatrixInput | null;
  set wo(value: MatrixInput | null | undefined);

  /** Reflects the `seed` attribute (a non-negative integer); null when absent or invalid. */
  seed: number | null;
  /**
   * Reflects `heads` (an integer 1–256 dividing d_model): multi-head attention with x, one heatmap
   * per head. With `seed`, W_Q, W_K, W_V and then W_O are drawn as four
   * `nn.Linear(d_model, d_model, bias=False)`. null when absent or invalid. All heads and the output
   * together draw at most 65,536 cells (heads × n² + n × d_model).
   */
  heads: number | null;
  /** Reflects the boolean `causal` attribute: query i sees keys j <= i; hidden cells are hatched. */
  causal: boolean;
  /** Reflects `scale`, the multiplier of Q·Kᵀ (a finite number >= 0); null = 1/√d_k (with heads, 1/√d_head). */
  scale: number | null;
  /** Reflects `decimals`, the digits printed in each cell (0–10, default 2). Captions use at least 4. */
  decimals: number;
  /** HTMLElement's own `lang`, reflecting the attribute: "zh" (default) or "en". */
  lang: string;

  /** The detail of the last `attention-computed`, or null while computing or after an error. */
  readonly result: AttentionComputedDetail | null;
  /** The error shown inside the element (an `AttentionError` for bad matrices), or null. */
  readonly error: Error | null;

  addEventListener<K extends keyof AttentionHeatmapEventMap>(type: K,
    listener: (this: AttentionHeatmapElement, ev: AttentionHeatmapEventMap[K]) => unknown,
    options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject,
    options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof AttentionHeatmapEventMap>(type: K,
    listener: (this: AttentionHeatmapElement, ev: AttentionHeatmapEventMap[K]) => unknown,
    options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject,
    options?: boolean | EventListenerOptions): void;
}

export interface AttentionHeatmapEventMap extends HTMLElementEventMap {
  /** Fired (bubbles, composed) after every successful render. */
  'attention-computed': AttentionComputedEvent;
}

declare global {
  interface HTMLElementTagNameMap {
    'attention-heatmap': AttentionHeatmapElement;
  }
  // bubbles and is composed: heard on elements, document and window alike
  interface GlobalEventHandlersEventMap {
    'attention-computed': AttentionComputedEvent;
  }
}
