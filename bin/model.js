// model.js - `attnmap model`: a checkpoint's attention on a text, as an SVG heatmap of one head
// or a summary of the strongest head of each layer (bin/attnmap.js hands the arguments over).
import { parseArgs } from 'node:util';
import { renderHeatmap } from '../web/heatmap/heatmap.js';
import { clean, cut } from '../web/heatmap/text.js';
import { quote } from '../web/core/errors.js';

export const MODEL_USAGE = `Usage: attnmap model FOLDER (--text TEXT | --ids IDS) [options] > heatmap.svg

Runs a checkpoint on the text and writes one head's attention weights as an SVG heatmap:
rows are the tokens looking, columns the tokens looked at. FOLDER is a checkpoint folder of
GPT-2, the LLaMA family (Llama 3, SmolLM2, Qwen2.5, Qwen3) or BERT (bert-base-chinese, an
encoder: every token sees every other): config.json; model.safetensors,
or model.safetensors.index.json and its shards; tokenizer.json, or vocab.json + merges.txt, or
vocab.txt. Or the name of the model shipped with attnmap: toy-zh. Or a Hugging Face repo
id (ORG/NAME): read from the Hugging Face cache (the one Python's transformers fills), else
downloaded into it, with a progress bar on a terminal (HF_HUB_OFFLINE=1: the cache only;
HF_TOKEN: for gated models; HF_ENDPOINT: another hub; see attnmap cache). Or a GGUF file
(llama.cpp's, quantized or not: path/to/model.gguf), a GGUF repo (ORG/NAME-GGUF, with --file
when it holds several), or a model of Ollama's or LM Studio's store: ollama:NAME[:TAG],
lmstudio:PUBLISHER/REPO[/FILE.gguf] (docs/MODELS.md).

Options:
  --text TEXT          the text, tokenised with the checkpoint's own tokenizer
  --file NAME          with a GGUF repo (ORG/NAME-GGUF) or a folder: its .gguf file to read
  --ids IDS            token ids instead, comma-separated ("464,3797,15063")
  --layer L            the layer, from 0 (default 0)
  --head H             the head, from 0 (default 0)
  --pair TEXT          BERT: a second sentence, read as the pair [CLS] TEXT [SEP] PAIR [SEP]
  --fill-mask          BERT: write, instead of the SVG, the likeliest tokens for each [MASK]
                       of the text, with their probabilities
  --top-k N            tokens listed per [MASK] with --fill-mask, 1 to 100 (default 5)
  --summary            write, instead of the SVG, the 3 heads of each layer that look
                       hardest at one other token (the first token aside), that look,
                       and where most rows look (the previous token, the token itself, ...)
  --lang zh|en         language of the captions (default zh)
  --decimals N         decimals printed in each cell, 0 to 10 (default 2)
  --title TEXT         title above the heatmap
  --max-bytes N        refuse to write more than N bytes, SVG or summary (default and
                       at most 33554432, 32 MiB)
  -h, --help           show this help

At most 256 tokens, and 32 MiB of output (--max-bytes): over either budget nothing is
written (exit 2). The summary cuts each token to 40 characters. Example:
  attnmap model ./gpt2 --text "The cat ate the fish" --layer 5 --head 1 > head.svg
  attnmap model ./gpt2 --text "The cat ate the fish" --summary
  attnmap model ./Qwen2.5-0.5B --text 我看见那只猫在吃鱼 --summary
  attnmap model ./bert-base-chinese --text 猫吃[MASK] --fill-mask
`;

const MAX_TOKENS = 256;   // 65,536 cells, the heatmap's budget
const OPTIONS = {
  text: { type: 'string' }, ids: { type: 'string' }, layer: { type: 'string' }, head: { type: 'string' },
  summary: { type: 'boolean' }, pair: { type: 'string' }, 'fill-mask': { type: 'boolean' }, 'top-k': { type: 'string' },
  lang: { type: 'string' }, decimals: { type: 'string' }, title: { type: 'string' },
  'max-bytes': { type: 'string' }, file: { type: 'string' }, help: { type: 'boolean', short: 'h' },
};

function intArg(text, flag, max) {
  if (text === undefined) return 0;
  const v = /^\d{1,9}$/.test(text) ? Number(text) : NaN;
  return v <= max ? v : { error: `${flag} must be a whole number from 0 to ${max}; received ${JSON.stringify(text)}` };
}

// where a row's strongest look off the first token goes, in words (j >= 1)
function pattern(i, j) {
  if (j === i) return 'the token itself';
  if (j === i - 1) return 'the previous token';
  if (j === i + 1) return 'the next token';
  return j < i ? 'an earlier token' : 'a later token';
}

const SUMMARY_HEADS = 3;   // heads listed per layer
const SUMMARY_LABEL = 40;  // UTF-16 units of a token in the summary ("…" included)

/**
 * One head, from its weights (n, n), causal or (an encoder's) not: its strongest look at another
 * token than the first and itself ({ i, j, w }: row i gives w to column j, 0 < j, j < i when
 * causal; null under 3 tokens), and where the rows 1..n-1 look most off the first token (the
 * commonest pattern, and in how many rows).
 */
function headSummary({ data, shape: [n] }, h, causal) {
  let look = null;
  const counts = {};
  for (let i = 1; i < n; i++) {
    let top = 1;
    for (let j = 1; j <= (causal ? i : n - 1); j++) {
      const w = data[i * n + j];
      if (w > data[i * n + top]) top = j;
      if (j !== i && (!look || w > look.w)) look = { i, j, w };
    }
    const p = pattern(i, top);
    counts[p] = (counts[p] ?? 0) + 1;
  }
  const [mostly, rows] = Object.entries(counts).sort((a, b) => b[1] - a[1])[0] ?? ['-', 0];
  return { h, look, mostly, rows, of: n - 1 };
}

/**
 * Per layer, the heads with the strongest look at an earlier token (any other token for an
 * encoder; not the first token, which many GPT-2 heads rest on, nor the token itself), strongest first: "head 3: 吃 → 猫 0.807;
 * most rows look at an earlier token (4 of 8)". At most SUMMARY_HEADS heads per layer.
 */
export function summarize(attention, tokens, { heads: H, kvHeads: G, encoder = false } = {}) {
  // (cut to what can be shown before it is cleaned: one more code point decides the last boundary)
  const labels = tokens.map((t) => cut(clean(t.slice(0, SUMMARY_LABEL + 2)), SUMMARY_LABEL));
  if (labels.length === 1) return `1 token: ${labels[0]}; it can only look at itself\n`;
  const lines = [`${labels.length} tokens: ${labels.join(' ')}`];
  const group = G && G < H ? H / G : 0;   // GQA: query heads group·g … group·g + group - 1 share key/value head g
  if (group) lines.push(`${H} query heads per layer in ${G} groups of ${group}: each group reads one key/value head (GQA)`);
  attention.forEach((heads, l) => {
    lines.push(`layer ${l}`);
    const ranked = heads.map((head, h) => headSummary(head, h, !encoder)).sort((a, b) => (b.look?.w ?? -1) - (a.look?.w ?? -1) || a.h - b.h);
    for (const { h, look, mostly, rows, of } of ranked.slice(0, SUMMARY_HEADS)) {
      const strongest = look ? `${labels[look.i]} → ${labels[look.j]} ${look.w.toFixed(3)}` : `no ${encoder ? 'other' : 'earlier'} token but the first`;
      lines.push(`  head ${h}${group ? ` (kv ${Math.floor(h / group)})` : ''}: ${strongest}; most rows look at ${mostly} (${rows} of ${of})`);
    }
  });
  return `${lines.join('\n')}\n`;
}

/**
 * attnmap model ...: the output text. cli: bin/attnmap.js's usage(message) (throws),
 * maxBytesArg(text) and budget(out, maxBytes, what, advice); or throws an AttentionError.
 */
export async function runModel(argv, cli) {
  const { args, folder, lang, decimals, maxBytes } = readArgs(argv, cli);
  if (args.help) return MODEL_USAGE;
  const { loadModel } = await import('../web/model/model-node.js');
  const { progressBar } = await import('./progress.js');
  const model = await loadModel(folder, { onProgress: progressBar(process.stderr), ...(args.file === undefined ? {} : { file: args.file }) });
  try {
    const { n_layer: L, n_head: H } = model.config;
    const layer = intArg(args.layer, '--layer', L - 1), head = intArg(args.head, '--head', H - 1);
    for (const x of [layer, head]) if (x.error) cli.usage(x.error);
    const encoder = Boolean(model.config.encoder);
    if (!encoder && (args.pair !== undefined || args['fill-mask'])) cli.usage(`--${args.pair !== undefined ? 'pair' : 'fill-mask'} is for BERT encoders; this checkpoint is ${model.config.modelType ?? model.config.family}, a decoder`);
    if (args['fill-mask']) return cli.budget(fillMaskText(model, args, cli.usage), maxBytes, 'the answer', 'use a smaller --top-k');
    const { ids, tokenTypes } = textIds(model, args, cli.usage);
    if (ids.length === 0) cli.usage('the text has no tokens');
    if (ids.length > MAX_TOKENS) cli.usage(`${ids.length} tokens; at most ${MAX_TOKENS}: use a shorter text`);
    const labels = labelsOf(model, ids);
    if (!args.summary) labelBudget(labels, maxBytes, cli.usage);
    // the summary reads every head; one SVG only the head it draws
    const attention = args.summary ? true : { layers: [layer], heads: [head] };
    const r = model.forward(ids, encoder && tokenTypes ? { attention, tokenTypes } : { attention });
    if (args.summary) return cli.budget(summarize(r.attention, labels, model.config), maxBytes, 'the summary', 'use a shorter text');
    const title = args.title ?? `layer ${layer} · head ${head}`;
    const masked = encoder ? {} : { masked: 'causal' };   // an encoder's token sees every other
    const svg = renderHeatmap(r.attention[layer][head], { rowLabels: labels, colLabels: labels, ...masked, lang, decimals, title, standalone: true });
    return cli.budget(svg, maxBytes, 'the SVG', 'use a shorter text or title, or --summary');
  } finally {
    model.dispose();
  }
}

// the arguments, checked before the checkpoint is read
// `--head -1`: parseArgs takes "-1" for an option and says "ambiguous"; joined as --head=-1, the
// value reaches intArg, which names the range
const withNegatives = (argv) => argv.flatMap((a, i) => {
  const name = /^--([\w-]+)$/.exec(a)?.[1];
  if (name && OPTIONS[name]?.type === 'string' && /^-\d/.test(argv[i + 1] ?? '')) return [`${a}=${argv[i + 1]}`];
  return /^-\d/.test(a) && OPTIONS[/^--([\w-]+)$/.exec(argv[i - 1] ?? '')?.[1]]?.type === 'string' ? [] : [a];
});

function readArgs(argv, { usage, maxBytesArg }) {
  let parsed;
  try {
    parsed = parseArgs({ args: withNegatives(argv), options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    usage(`${e.message.replace(/\s+/g, ' ').trim()} (see attnmap model --help)`);
  }
  const { values: args, positionals } = parsed;
  if (args.help) return { args };
  if (positionals.length !== 1) usage('expected one checkpoint folder: attnmap model FOLDER --text TEXT (see attnmap model --help)');
  if ((args.text === undefined) === (args.ids === undefined)) usage('give --text TEXT or --ids IDS (one of them)');
  if (args.pair !== undefined && args.text === undefined) usage('--pair goes with --text: the pair is --text then --pair');
  const lang = args.lang ?? 'zh';
  if (lang !== 'zh' && lang !== 'en') usage(`--lang must be zh or en; received ${JSON.stringify(lang)}`);
  const decimals = intArg(args.decimals ?? '2', '--decimals', 10);
  if (decimals.error) usage(decimals.error);
  return { args, folder: positionals[0], lang, decimals, maxBytes: maxBytesArg(args['max-bytes']) };
}

// the ids of --text (with --pair: a BERT pair, with token types) or --ids
function textIds(model, args, usage) {
  if (args.text === undefined) return { ids: idsArg(args.ids, model, usage), tokenTypes: null };
  if (!model.config.encoder) return { ids: model.encode(args.text), tokenTypes: null };
  const { ids, tokenTypes } = model.encode(args.text, args.pair);
  return { ids, tokenTypes };
}

// --fill-mask: one line per [MASK], its likeliest tokens and their probabilities
function fillMaskText(model, args, usage) {
  if (args.text === undefined) usage('--fill-mask needs --text with a [MASK] in it');
  const k = args['top-k'] === undefined ? 5 : /^\d{1,3}$/.test(args['top-k']) ? Number(args['top-k']) : NaN;
  if (!(k >= 1 && k <= 100)) usage(`--top-k must be a whole number from 1 to 100; received ${JSON.stringify(args['top-k'])}`);
  const answers = model.fillMask(args.text, { topK: k });
  return answers.map(({ index, top }) => `[MASK] (token ${index}): ${top.map((t) => `${clean(t.text)} ${t.p.toFixed(4)}`).join(', ')}`).join('\n') + '\n';
}

// --ids: comma-separated ids, each below the model's vocab_size (checked here, so that the
// message names the option, not the model's argument)
function idsArg(text, model, usage) {
  const ids = text.split(',').map((s) => (/^\s*\d{1,9}\s*$/.test(s) ? Number(s) : NaN));
  if (ids.some(Number.isNaN)) usage(`--ids must be comma-separated token ids such as 464,3797; received ${quote(text)}`);
  const V = model.config.vocab_size, bad = ids.find((id) => id >= V);
  if (bad !== undefined) usage(`--ids: ${bad} is not a token id of this model (vocab_size = ${V}: ids 0 to ${V - 1})`);
  return ids;
}

// Each id as the tokenizer spells it; by its number without a tokenizer, or for an id the model
// has and its tokenizer lacks (a vocabulary padded past the tokenizer's, as nanoGPT's 50304).
function labelsOf(model, ids) {
  if (!model.tokenizer) return ids.map(String);
  try {
    return model.tokens(ids);
  } catch {
    return ids.map((id) => { try { return model.tokens([id])[0]; } catch { return String(id); } });
  }
}

// The SVG writes every row's and every column's label whole (drawn, or in the <title> of a cut
// one; escaping and cleaning never make it shorter in UTF-8): refused before the model runs
// when that alone is over the output budget.
function labelBudget(labels, maxBytes, usage) {
  let bytes = 0;
  for (const l of labels) bytes += 2 * Buffer.byteLength(l);
  if (bytes > maxBytes) {
    usage(`the tokens' labels alone would make ${bytes} bytes of SVG (each is written whole for its row and its column); ` +
      `the output budget is ${maxBytes} bytes: use a shorter text or --summary`);
  }
}
