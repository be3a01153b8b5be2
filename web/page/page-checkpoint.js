// page-checkpoint.js - "load a real model" (issues 16, 22, 25, 38): the reader picks or drops a
// GPT-2, LLaMA or BERT checkpoint folder's files (config.json, model.safetensors, and vocab.json +
// merges.txt, vocab.txt or tokenizer.json), or one .gguf file (config, tensors and tokenizer in
// one, read by ranges), types a text, and sees every layer × head as a small
// heatmap; one of them enlarged with its tokens and numbers; generation token by token with the
// KV cache, each new row of each head appearing as it is produced.
//
// Nothing leaves the browser: the files are read with File.stream() (page-files.js) and run by
// attnmap/model (web/model/model.js), which loads only when the first checkpoint does: in the
// page's bundle, scripts/build-model.js turns the import() below into a <script src> for
// web/dist/attnmap-model.js beside page.js, so it also works from file://.
//
// "Hide the first token": trained models park most of their attention on the first token. With
// the option on, the first token's row and column are left out and each remaining row is divided
// by what is left of it (w[i][j] / Σ_{k≥1} w[i][k]): the maps show how the rest is shared out.
//
// An encoder (BERT, issue 25) reads the whole text at once: its maps are full squares, with no
// causal triangle; a second sentence makes a pair ([CLS] A [SEP] B [SEP]); the switch hides
// [CLS] and [SEP] instead of the first token; a fill-mask box takes the place of generation
// (page-encoder.js).
//
// DOM part only; the section builds its own markup inside <section id="checkpoint">. Its maps:
// page-checkpoint-maps.js; its words: page-checkpoint-strings.js (T.models.ckpt).
import { sortCheckpointFiles, weightsSize, modelFiles, dropFiles, parseIds, formatBytes } from './page-files.js';
import { appendThumbRow } from './page-thumbs.js';
import { createHubPanel } from './page-hub.js';
import { createHeadView } from './page-headview.js';
import { createHeadsPanel } from './page-heads.js';
import { errorParts } from './page-load-errors.js';
import { fillMaskList } from './page-encoder.js';
import { nextTask, scaleOf, keptOf, rowsOf, drawGrid, drawBig, moveCell, renderOptionsNote } from './page-checkpoint-maps.js';
import { wireCells } from './page-grid.js';

export const MAX_GRID_TOKENS = 64;     // the grid of GPT-2 small (144 heads) stays light below this
const DEFAULT_TEXT = { bpe: 'The cat ate the fish because it was hungry', wordpiece: '猫吃鱼', 'tokenizer.json': '我看见那只猫在吃鱼', none: '0 1 2 3 4 5' };
// a GGUF file's tokenizer (Qwen's, Llama's …): the Chinese example when its vocabulary has 猫, else the English one
const GGUF_TEXT = { zh: DEFAULT_TEXT['tokenizer.json'], en: DEFAULT_TEXT.bpe };
// an encoder's: a gap to fill, in Chinese when its vocabulary has 猫, else in English
const ENCODER_TEXT = { zh: '猫吃[MASK]', en: 'the cat ate the [MASK].' };

/** env: { $, h, getT(), getState() }. Returns { bind(), render() } (render: the texts, in the page's language). */
export function createCheckpointSection(env) {
  const s = {
    model: null, name: '', kind: null, run: null, big: { layer: 0, head: 0 },
    active: null,          // the enlarged map's active cell { row, col } (issue 39 P6)
    gen: null, drawId: 0, textTimer: 0, loading: false,
    fill: null,            // an encoder's fill-mask box: { results } | { say: (C) => text } | { error }
    texts: new Map(),      // element -> (C) => its text: written again when the language changes (put)
  };
  return { bind: () => bind(env, s), render: () => renderTexts(env, s) };
}

// ------------------------------------------------------------------------------------------------
// markup and events

function bind(env, s) {
  const { $, h } = env;
  const check = (id) => h('label', { class: 'switch' }, h('input', { id, name: id, type: 'checkbox', role: 'switch' }), h('span', { id: `${id}-label` }));
  $('checkpoint').setAttribute('aria-labelledby', 'checkpoint-title');
  $('checkpoint').replaceChildren(
    h('p', { id: 'checkpoint-kicker', class: 'preview' }), h('h2', { id: 'checkpoint-title' }), h('p', { id: 'checkpoint-text' }),
    h('div', { id: 'checkpoint-drop', class: 'card drop' },
      h('label', { for: 'checkpoint-files', id: 'checkpoint-files-label', class: 'seg-label' }),
      h('input', { id: 'checkpoint-files', type: 'file', name: 'checkpoint', multiple: true }),
      h('p', { id: 'checkpoint-drop-hint', class: 'note' }),
      h('progress', { id: 'checkpoint-progress', hidden: true }),
      h('p', { id: 'checkpoint-status', class: 'note', 'aria-live': 'polite' }),
      h('div', { id: 'checkpoint-msg', class: 'msg error', role: 'alert' })),      // (a div: it may hold a <details>)
    h('div', { id: 'checkpoint-model', hidden: true },
      h('div', { class: 'field' },
        h('label', { for: 'model-text', id: 'model-text-label' }),
        h('input', { id: 'model-text', name: 'model-text', type: 'text', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'model-text-msg' }),
        h('div', { id: 'model-text-msg', class: 'msg', 'aria-live': 'polite' })),
      h('div', { id: 'model-pair-field', class: 'field', hidden: true },                 // encoders only
        h('label', { for: 'model-pair', id: 'model-pair-label' }),
        h('input', { id: 'model-pair', name: 'model-pair', type: 'text', autocomplete: 'off', spellcheck: 'false' })),
      h('div', { class: 'ckpt-options' }, check('model-log'), check('model-hide-first')),
      h('p', { id: 'model-options-note', class: 'note' }),
      h('div', { id: 'model-fill', class: 'worked fill-mask', 'aria-live': 'polite', hidden: true }),   // encoders only
      h('div', { id: 'model-gen', class: 'ckpt-gen' },
        h('label', { for: 'model-max', id: 'model-max-label' }),
        h('input', { id: 'model-max', name: 'model-max', type: 'number', min: 1, max: MAX_GRID_TOKENS, value: 16, inputmode: 'numeric' }),
        h('button', { id: 'model-generate', type: 'button' }), h('button', { id: 'model-stop', type: 'button', disabled: true })),
      h('div', { id: 'model-output', class: 'worked', 'aria-live': 'polite', hidden: true }),
      h('p', { id: 'checkpoint-grid-hint', class: 'hint' }),
      h('div', { class: 'ckpt-layout' },
        h('div', { id: 'checkpoint-grid', class: 'ckpt-grid' }),
        h('figure', { class: 'card figure ckpt-big-card' }, h('div', { id: 'checkpoint-big', class: 'ckpt-big' }),
          h('p', { id: 'checkpoint-cell', class: 'note ckpt-cell', 'aria-live': 'polite' }),     // the active cell's weight (issue 39 P6)
          h('figcaption', { id: 'checkpoint-big-note', class: 'note' })))));
  bindFiles(env, s);
  bindModelControls(env, s);
  s.hub = createHubPanel(env, { adopt: (model, name) => adopt(env, s, model, name, []), drop: () => drop(env, s), busy: () => s.loading });
  s.hub.bind($('checkpoint-drop'));
  s.headView = createHeadView(env);
  s.headView.bind($('checkpoint-model'));
  s.heads = createHeadsPanel(env, { model: () => s.model, text: () => $('model-text').value, busy: () => Boolean(s.gen) });   // page-heads.js
  s.heads.bind($('checkpoint-model'));
  // the enlarged map's cells: hover, focus and the arrow keys move its active cell (page-grid.js)
  wireCells($('checkpoint-big'), { size: () => (s.run ? keptOf(env, s).length : 0), move: (i, j, focus) => moveCell(env, s, i, j, focus) });
  // the enlarged map fits its card's width: drawn again when that changes (a turned phone)
  new ResizeObserver(() => { if (s.run && Math.abs($('checkpoint-big').clientWidth - s.bigWidth) > 4) drawBig(env, s); }).observe($('checkpoint-big'));
}

function bindFiles(env, s) {
  const { $ } = env;
  $('checkpoint-files').addEventListener('change', (e) => { if (e.target.files.length) load(env, s, Array.from(e.target.files)); });
  const drop = $('checkpoint-drop');
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', async (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    let files;
    try { files = await dropFiles(e.dataTransfer); } catch (err) { return sayError(env, s, env.$('checkpoint-msg'), err); }
    if (files.length) load(env, s, files);
  });
}

function bindModelControls(env, s) {
  const { $ } = env;
  for (const id of ['model-text', 'model-pair']) {
    $(id).addEventListener('input', (e) => {
      e.target.dataset.typed = 'true';
      clearTimeout(s.textTimer);
      s.textTimer = setTimeout(() => { stopGeneration(s); compute(env, s); }, 250);
    });
  }
  for (const id of ['model-log', 'model-hide-first']) {
    $(id).addEventListener('change', () => {
      if (s.run) { drawGrid(env, s); drawBig(env, s); }
      renderOptionsNote(env, s);
    });
  }
  $('model-generate').addEventListener('click', () => generate(env, s));
  $('model-stop').addEventListener('click', () => stopGeneration(s));
  // a thumbnail is a <button>: click, Enter or Space enlarges it
  $('checkpoint-grid').addEventListener('click', (e) => {
    const b = e.target.closest('button.thumb');
    if (!b) return;
    s.big = { layer: Number(b.dataset.layer), head: Number(b.dataset.head) };
    drawBig(env, s);
  });
}

// ------------------------------------------------------------------------------------------------
// loading

/**
 * el's text is fn(C), C = T.models.ckpt in the page's language (fn null: no text). renderTexts
 * writes it again after a language switch, so that what the section said follows the switch too.
 */
function put(env, s, el, fn) {
  if (fn) s.texts.set(el, fn);
  else s.texts.delete(el);
  el.textContent = fn ? fn(env.getT().models.ckpt) : '';
}

/** #checkpoint-msg says fn(C) (null: nothing); the rest of the page is untouched. */
function say(env, s, fn) {
  put(env, s, env.$('checkpoint-msg'), fn);
}

/** An error in el: its plain cause, then the loader's words in a <details> (page-load-errors.js; options { gguf }: a .gguf's load). */
function sayError(env, s, el, e, options) {
  put(env, s, el, null);
  el.replaceChildren(...errorParts(env.h, (part, fn) => put(env, s, part, () => fn(env.getT())), e, undefined, options));
}

async function load(env, s, files) {
  const { $ } = env;
  if (s.loading) return;
  drop(env, s);                           // the model shown goes, whether this one loads or not
  say(env, s, null);
  const picked = sortCheckpointFiles(files);
  const names = (picked.ggufs.length && !picked.gguf ? picked.ggufs : picked.ignored).join(', ');   // the .gguf files in question, else what is not used
  if (picked.problem) return say(env, s, (C) => C.errors[picked.problem](names));
  s.loading = true;
  const progress = $('checkpoint-progress');
  const status = $('checkpoint-status');
  try {
    progress.hidden = false;
    progress.max = weightsSize(picked);
    progress.value = 0;
    const given = await modelFiles(picked);
    const size = formatBytes(progress.max);
    put(env, s, status, (C) => C.starting(size));
    await nextTask();
    const { loadModel } = await import('../model/model.js');
    const model = await loadModel(given.files, { onProgress: readProgress(env, s, progress, status), offThread: true });   // offThread: page-heads.js
    progress.hidden = true;
    adopt(env, s, model, given.name, picked.ignored);
  } catch (e) {
    progress.hidden = true;
    put(env, s, status, null);
    sayError(env, s, $('checkpoint-msg'), e, { gguf: Boolean(picked.gguf) });
  } finally {
    s.loading = false;
  }
}

/** A loaded model becomes the section's: the status line, the text's example, the grid. */
function adopt(env, s, model, name, ignored) {
  const { $ } = env;
  stopGeneration(s);
  say(env, s, null);
  s.model?.dispose();
  Object.assign(s, { model, name, big: { layer: 0, head: 0 }, run: null, active: null });
  put(env, s, $('checkpoint-status'), (C) => C.loaded(name, model.config, model.tokenizer, ignored, model.threads));
  $('checkpoint-model').hidden = false;
  const encoder = Boolean(model.config.encoder);
  $('model-pair-field').hidden = !encoder;
  $('model-gen').hidden = encoder;                        // an encoder has no next token to generate
  const t = $('model-text'), kind = `${encoder ? 'encoder ' : ''}${model.tokenizer ?? 'none'}`;
  if (!t.value || !t.dataset.typed || kind !== s.kind) {  // another kind of model or tokenizer: its own example
    t.value = encoder && model.tokenizer ? encoderText(model) : model.tokenizer === 'gguf' ? ggufText(model) : DEFAULT_TEXT[model.tokenizer ?? 'none'];
    $('model-pair').value = '';
    if (encoder !== s.kind?.startsWith('encoder ')) $('model-hide-first').checked = false;   // [CLS] and [SEP] shown at first
  }
  s.kind = kind;
  renderTexts(env, s);
  compute(env, s);
  s.heads.adopt();
}

const knowsCat = (model, ids) => model.tokens(ids).includes('猫');

/** An encoder's example: Chinese when its vocabulary knows 猫 (bert-base-chinese), else English. */
function encoderText(model) {
  const { ids } = model.encode('猫');
  return knowsCat(model, ids) ? ENCODER_TEXT.zh : ENCODER_TEXT.en;
}

/** A GGUF model's example: as an encoder's, by its vocabulary. */
const ggufText = (model) => (knowsCat(model, model.encode('猫')) ? GGUF_TEXT.zh : GGUF_TEXT.en);

// loadModel's onProgress -> the bar and "reading NAME: read / total", at most 20 times a second
function readProgress(env, s, progress, status) {
  const done = new Map();
  let last = 0;
  return ({ file, loaded, total }) => {
    done.set(file, loaded);
    const now = performance.now();
    if (loaded !== total && now - last < 50) return;
    last = now;
    progress.value = [...done.values()].reduce((a, b) => a + b, 0);
    const read = formatBytes(loaded), size = formatBytes(total);
    put(env, s, status, (C) => C.reading(file, read, size));
  };
}

/**
 * No model (issue 24 item 12, one state, one view): a load that starts or fails leaves nothing of
 * the model before it, whose memory goes back before the next one takes its own.
 */
function drop(env, s) {
  stopGeneration(s);
  s.model?.dispose();
  Object.assign(s, { model: null, big: { layer: 0, head: 0 } });
  put(env, s, env.$('checkpoint-status'), null);
  env.$('checkpoint-model').hidden = true;
  clearRun(env, s);
  s.heads?.clear();
}

/** No maps: the text gives no tokens, or the model refused them, or there is no model. */
function clearRun(env, s) {
  const { $ } = env;
  s.run = null;
  s.active = null;
  s.drawId++;                                                  // a drawing under way stops
  $('checkpoint-grid').replaceChildren();
  $('checkpoint-grid').dataset.state = 'empty';
  $('checkpoint-big').replaceChildren();
  $('checkpoint-cell').textContent = '';
  $('checkpoint-big-note').textContent = '';
  put(env, s, $('model-output'), null);
  $('model-output').hidden = true;
  $('model-options-note').textContent = '';
  s.fill = null;
  $('model-fill').hidden = true;
  const heads = $('headview');                                 // page-headview.js's card: no run, no lines
  if (heads) heads.hidden = true;
}

// ------------------------------------------------------------------------------------------------
// the forward pass and what it shows

/**
 * The text field -> ids: through the tokenizer, or ids typed as numbers for a model without one.
 * A problem or a note is (C) => text, for put().
 */
function readIds(env, s) {
  const text = env.$('model-text').value;
  const m = s.model, v = m.config.vocab_size;
  let ids, tokenTypes;
  if (m.tokenizer && m.config.encoder) ({ ids, tokenTypes } = m.encode(text, env.$('model-pair').value.trim() || undefined));
  else if (m.tokenizer) ids = m.encode(text);
  else {
    ids = parseIds(text);
    if (!ids) return { problem: (C) => C.idsOnly(v) };
  }
  if (!ids.length) return { problem: (C) => C.noTokens };
  const bad = ids.find((i) => i >= v);
  if (bad !== undefined) return { problem: (C) => C.idOutside(bad, v) };
  const cap = Math.min(MAX_GRID_TOKENS, m.config.n_positions), n = ids.length;
  return n > cap ? { ids: ids.slice(0, cap), tokenTypes: tokenTypes?.slice(0, cap), note: (C) => C.cut(n, cap) } : { ids, tokenTypes, note: null };
}

const labelsOf = (m, ids) => (m.tokenizer ? m.tokens(ids) : ids.map(String));

function compute(env, s) {
  const { $ } = env;
  if (!s.model) return;
  if (s.heads.busy()) return void s.heads.idle().then(() => compute(env, s));   // the heads panel's forward holds the model
  const msg = $('model-text-msg');
  const r = readIds(env, s);
  $('model-text').toggleAttribute('aria-invalid', Boolean(r.problem));
  put(env, s, msg, r.problem ?? r.note);
  msg.classList.toggle('error', Boolean(r.problem));
  if (r.problem) return clearRun(env, s);                     // no maps of an earlier text beside the message
  let attention, logits;
  try {
    ({ attention, logits } = s.model.forward(r.ids, { attention: true, ...(r.tokenTypes ? { tokenTypes: r.tokenTypes } : {}) }));
  } catch (e) {
    sayError(env, s, msg, e);
    msg.classList.add('error');
    return clearRun(env, s);
  }
  // heads[l][h][i]: the row of query i (keys 0..i used), a view of the model's copy
  const heads = attention.map((layer) => layer.map(({ data, shape: [n] }) => Array.from({ length: n }, (_, i) => data.subarray(i * n, i * n + n))));
  s.run = { ids: r.ids, labels: labelsOf(s.model, r.ids), heads };
  s.active = null;                                             // new tokens: the enlarged map's first cell again
  $('model-output').hidden = true;
  drawGrid(env, s);
  drawBig(env, s);
  renderOptionsNote(env, s);
  if (s.model.config.encoder) fillMask(env, s, r.ids, Boolean(logits));
  // copies: a generation adds rows to s.run's labels and ids, not to these maps
  s.headView.show({ maps: attention, labels: [...s.run.labels], ids: Array.from(r.ids), name: s.name, kvHeads: s.model.config.kvHeads ?? s.model.config.n_head });
}

/**
 * The fill-mask box (encoders): the likeliest tokens for each [MASK] of the text (and its pair),
 * or why there are none. A second forward, without attention: the text is short.
 */
function fillMask(env, s, ids, hasHead) {
  const mask = s.model.tokens(ids).some((t) => t === '[MASK]' || t === '<mask>');
  s.fill = !hasHead ? { say: (C) => C.fillNoHead } : !mask ? { say: (C) => C.fillHint } : null;
  if (!s.fill) {
    const pair = env.$('model-pair').value.trim();
    try {
      s.fill = { results: s.model.fillMask(env.$('model-text').value, { topK: 5, ...(pair ? { pair } : {}) }) };
    } catch (e) {
      s.fill = { error: e };
    }
  }
  renderFill(env, s);
}

/** s.fill in the page's language. */
function renderFill(env, s) {
  const box = env.$('model-fill'), f = s.fill, C = env.getT().models.ckpt;
  box.hidden = !f;
  if (!f) return;
  if (f.error) return sayError(env, s, box, f.error);
  put(env, s, box, f.say ?? null);
  if (f.results) box.replaceChildren(env.h('p', { class: 'fill-lead' }, C.fillLead), fillMaskList(env.h, C, f.results));
}

// ------------------------------------------------------------------------------------------------
// generation: the KV cache, one token at a time

function stopGeneration(s) {
  if (s.gen) s.gen.stop = true;
}

/**
 * The prompt as text: decoded by the model's tokenizer, as the continuation is (step.text), not its
 * token labels ("The▁cat▁ate"); a model without a tokenizer shows its ids.
 */
const promptText = (model, ids) => (model.tokenizer ? model.decode(ids) : ids.join(' '));

async function generate(env, s) {
  const { $, h } = env;
  if (!s.model || !s.run || s.gen) return;
  const run = s.run;
  const room = Math.min(MAX_GRID_TOKENS, s.model.config.n_positions) - run.ids.length;
  const max = Math.min(room, Math.max(1, Math.floor(Number($('model-max').value) || 1)));
  const out = $('model-output');
  out.hidden = false;
  put(env, s, out, max < 1 ? (C) => C.genFull(MAX_GRID_TOKENS) : null);
  if (max < 1) return;
  await s.heads.idle();                   // the heads panel's forward holds the model until it ends
  if (s.run !== run) return;
  const gen = (s.gen = { stop: false, count: 0 });
  $('model-generate').disabled = true;
  $('model-stop').disabled = false;
  out.dataset.state = 'running';
  const lead = h('span', { class: 'gen-lead' }), produced = h('span', { class: 'tok gen' });
  put(env, s, lead, (C) => C.genLead);
  out.replaceChildren(lead, h('span', { class: 'tok gen-prompt' }, promptText(s.model, run.ids)), ' → ', produced);
  let pending = null;                     // the id chosen last: its row comes with the next step
  try {
    for await (const step of s.model.generate(run.ids, { maxTokens: max, attention: true })) {
      if (s.run !== run) break;            // a new text or model took over
      if (pending !== null) addRow(env, s, run, pending, step.attention);
      pending = step.id;
      gen.count++;
      produced.textContent += s.model.tokenizer ? step.text : ` ${step.id}`;
      out.dataset.count = String(gen.count);
      await nextTask();                    // let the page paint and the stop button be pressed
      if (gen.stop) break;
    }
    out.dataset.state = gen.stop ? 'stopped' : 'done';
    const { stop, count } = gen, end = h('span', { class: 'muted' });
    out.append(end);
    put(env, s, end, (C) => ` ${stop ? C.genStopped(count) : C.genDone(count)}`);
  } catch (e) {
    out.dataset.state = 'failed';
    const end = h('span', { class: 'error' });
    out.append(' ', end);
    sayError(env, s, end, e);
  } finally {
    s.gen = null;
    $('model-generate').disabled = false;
    $('model-stop').disabled = true;
  }
}

/**
 * The row of the token id just fed to the model (attention[l][h]: its weights over every position
 * so far) joins every head: the run, the thumbnails in place, and the enlarged map.
 */
function addRow(env, s, run, id, attention) {
  run.ids.push(id);
  run.labels.push(...labelsOf(s.model, [id]));
  const scale = scaleOf(env), kept = keptOf(env, s);
  const grid = env.$('checkpoint-grid');
  attention.forEach((layer, l) => layer.forEach((row, k) => {
    run.heads[l][k].push(row);
    const svg = grid.querySelector(`button.thumb[data-layer="${l}"][data-head="${k}"] svg`);
    if (!svg) return;
    appendThumbRow(svg, rowsOf(s, run.heads[l][k], kept).at(-1), scale);
    svg.setAttribute('data-ids', JSON.stringify(kept.map((i) => run.ids[i])));
  }));
  drawBig(env, s);
}

// ------------------------------------------------------------------------------------------------
// texts

function renderTexts(env, s) {
  const { $ } = env;
  const C = env.getT().models.ckpt;
  $('checkpoint-kicker').textContent = C.kicker;
  $('checkpoint-title').textContent = C.title;
  $('checkpoint-text').innerHTML = C.text;                                        // trusted string
  $('checkpoint-files-label').textContent = C.filesLabel;
  $('checkpoint-drop-hint').textContent = C.dropHint;
  $('model-text-label').textContent = s.model && !s.model.tokenizer ? C.idsLabel : C.textLabel;
  $('model-log-label').textContent = C.logLabel;
  $('model-hide-first-label').textContent = s.model?.config.encoder ? C.hideSpecialLabel : C.hideLabel;
  $('model-pair-label').textContent = C.pairLabel;
  $('model-max-label').textContent = C.maxLabel;
  $('model-generate').textContent = C.generate;
  $('model-stop').textContent = C.stop;
  // what the section has said (status, messages, the generation line) and the thumbnails' names
  for (const [el, fn] of s.texts) {
    if (el.isConnected) el.textContent = fn(C);
    else s.texts.delete(el);
  }
  for (const b of $('checkpoint-grid').querySelectorAll('button.thumb')) b.setAttribute('aria-label', C.thumbLabel(Number(b.dataset.layer), Number(b.dataset.head)));
  s.hub?.render();
  s.headView?.render();
  s.heads?.render();
  const c = s.model?.config;
  $('checkpoint-grid-hint').textContent = C.gridHint + (c && c.kvHeads < c.n_head ? ` ${C.gqaHint(c.n_head, c.kvHeads)}` : '');
  if (s.run) { drawBig(env, s); renderOptionsNote(env, s); }
  if (s.fill?.results) renderFill(env, s);          // (a message in it follows through s.texts)
}
