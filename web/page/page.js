// page.js - the interactive page (index.html) for EP05, self-attention on 猫吃鱼: the wiring. It
// holds the page's state, computes the model, draws the hero, and binds the controls; each section
// below the hero is a module of its own, driven from here.
//
// Layout: a section is web/page/page-<section>.js, and its words (Chinese and English) sit beside
// it in web/page/page-<section>-strings.js, shaped as the part of the page's strings (T) they
// fill. web/strings/page.js holds the words several sections share; page-strings.js merges them
// and the sections' into one object per language. The sections: steps (page-steps.js, with step
// ④'s picture in page-step4.js), the √d_k demo (page-scaling.js), the heatmap's view
// (page-scale.js), words and positions (page-pe.js), multi-head attention (page-mha.js), RoPE
// (page-rope.js), the trained toy (page-trained.js), a checkpoint (page-checkpoint.js and its
// parts) and the hub (page-hub.js).
// The helpers they share: page-dom.js (elements, tables), page-heatmaps.js (navigable heatmaps and
// the explanation of a cell, page-explain.js), page-scroll.js, page-problems.js, page-export.js.
//
// Bundled by scripts/build-page.js into web/dist/page.js, a classic script (an IIFE), because a
// page opened from disk (file://) cannot import ES modules. The wasm is inlined in
// attention-wasm.js, so nothing is fetched: the page works offline and from disk.
//
// Every number shown comes from the C core (attn.selfAttention / attn.attention). JavaScript only
// formats them, and spells out the arithmetic of one cell (the dot-product terms, exp, row sum)
// from the Q and K the core returned; the weight it ends on is the core's.
//
// Safety: tokens are user input (and come from the URL). They reach the DOM only through
// textContent / setAttribute, or through renderHeatmap, which escapes them. innerHTML takes only
// the trusted strings (page-strings.js: web/strings/page.js and the sections' words) and the
// renderer's SVG, which the page inserts as it is (roles, tab stop and focus ring are
// renderHeatmap options).
import { createAttention, AttentionError, toRows } from '../core/attention.js';
import * as STRINGS from './page-strings.js';
import {
  DK_CHOICES, defaultState, parseHash, formatHash, splitTokens, parseSeed, parseNumber, hashProblems,
} from './page-state.js';
import { fixed, pythonSnippet } from './page-format.js';
import { h, matrixTable } from './page-dom.js';
import { createScrollables } from './page-scroll.js';
import { createHeatmaps } from './page-heatmaps.js';
import { classifyX, xProblemNodes, linkNoteParts } from './page-problems.js';
import { createMainExport, createCopier } from './page-export.js';
import { createStepsSection } from './page-steps.js';
import { createScalingSection } from './page-scaling.js';
import { createMhaSection } from './page-mha.js';
import { createWordsSection, inputWeights, resizeX } from './page-pe.js';   // issue 14
import { createHeatmapView, heroContext, setHtml } from './page-scale.js';
import { createTrainedSection } from './page-trained.js';              // issue 16
import { createRopeSection } from './page-rope.js';                    // issue 24
import { createCheckpointSection } from './page-checkpoint.js';
import { createLazy } from './page-lazy.js';                       // issue 24: paint fast

const $ = (id) => document.getElementById(id);

let attn;            // the C core
let state;           // { tokens, seed, dk, causal, x, lang } (page-state.js)
let T;               // STRINGS[state.lang]
let model;           // the current self-attention, see computeModel()
let mha;             // the episode-06 section (page-mha.js)
let words, view;     // issue 14: page-pe.js, page-scale.js
let steps, scaling;  // page-steps.js (with page-step4.js), page-scaling.js
let trained, checkpoint; // issue 16: page-trained.js, page-checkpoint.js
let rope;                // issue 24: page-rope.js
let lazy, sections;         // issue 24: the sections below the hero, drawn when needed (page-lazy.js)

const getT = () => T, getState = () => state;
const scroll = createScrollables(getT);
const updateScrollables = (scope) => scroll.update(scope);
const maps = createHeatmaps({ $, getT, getState, onMainRow: (i) => steps.followRow(i) });
const copyText = createCopier(getT);

// ------------------------------------------------------------------------------------------------
// computing (everything numeric goes through the C core)

function computeModel() {
  const n = state.tokens.length;
  const w = inputWeights(state);     // X = torch.randn (the article), or E[token] + PE (page-pe.js)
  const x = state.x ?? toRows(w.x);
  const res = attn.selfAttention({ x, wq: w.wq, wk: w.wk, wv: w.wv }, { causal: state.causal });
  return {
    tokens: [...state.tokens], n, dk: state.dk, causal: state.causal, seed: state.seed,
    x, w, res,
    q: toRows(res.q), k: toRows(res.k),
    scores: toRows(res.scores), scaled: toRows(res.scaled), weights: toRows(res.weights),
    output: toRows(res.output), scale: 1 / Math.sqrt(state.dk),
  };
}

// ------------------------------------------------------------------------------------------------
// problems with X and with the link, said in the reader's language (issue 14; page-problems.js)

let xProblem = null;      // { source, about, tokens, kind, row, col, value, code, message }, see showXMsg
let linkProblems = [];    // hashProblems() of the link the page was opened with, until dismissed

/** What X a problem is about: when this changes (tokens, seed, d_k, mask, X), the problem is gone. */
const xKey = () => JSON.stringify([state.tokens, state.seed, state.dk, state.causal, state.x, state.input, state.pe]);

/** #x-msg from xProblem, in the current language; a problem about an X no longer in use is dropped. */
function showXMsg() {
  if (xProblem && xProblem.about !== xKey()) xProblem = null;
  const el = $('x-msg');
  if (!xProblem) { el.replaceChildren(); return; }
  const lead = { link: T.xLink, typed: T.xTyped, dropped: T.xDropped }[xProblem.source];
  el.replaceChildren(lead, ' ', ...xProblemNodes(T, xProblem, xProblem.tokens));
}

/** The note about what the link asked for and did not get. */
function showLinkNote() {
  const box = $('link-note');
  box.hidden = linkProblems.length === 0;
  if (box.hidden) return;
  $('link-note-text').replaceChildren(...linkNoteParts(T, linkProblems));
}

// ------------------------------------------------------------------------------------------------
// rendering the page

function applyLang() {
  T = STRINGS[state.lang];
  document.documentElement.lang = T.htmlLang;
  document.title = T.docTitle;
  // index.html holds the Chinese text already: rewriting it unchanged would lay the page out anew (issue 24's first paint)
  for (const el of document.querySelectorAll('[data-i18n]')) if (el.innerHTML !== T[el.dataset.i18n]) el.innerHTML = T[el.dataset.i18n];
  for (const el of document.querySelectorAll('[data-i18n-label]')) el.setAttribute('aria-label', T[el.dataset.i18nLabel]);
  const b = $('lang');
  b.textContent = T.langButton;
  b.setAttribute('lang', T.langButtonLang);
  b.setAttribute('aria-label', T.langButtonLabel);
}

function renderHero() {
  const m = model;
  const ctx = heroContext(attn, m, state);                                    // page-scale.js
  maps.draw('main', $('main-heatmap'), ctx,
    state.temp === 1 ? T.heatmapTitle(m.seed, m.dk, m.causal) : T.teach.heroTitle(m.seed, m.dk, m.causal, state.temp));
  view.render(ctx);
  setHtml($('source-note'), T.sourceNote(m.seed, m.dk, Boolean(state.x), state.input === 'embed', state.pe) +   // numbers only
    (state.temp === 1 ? '' : T.teach.view.codeAtTemp(state.temp)));
}

/**
 * Issue 39 P2: the captions below the hero that say a map is the one at the top (the trained
 * section's random mode, the one-head note) name the temperature that one is drawn at. The hero's
 * own note about the code is renderHero's.
 */
function renderTempCaptions() {
  trained.renderTemp();
  mha.renderTemp();
}

function renderSnippet() {
  $('snippet').textContent = pythonSnippet(state, state.lang);
}

function syncControls() {
  const tokens = $('tokens');
  const typed = splitTokens(tokens.value);
  // keep what the reader typed if it means the same tokens (spacing), else show the state
  if (!typed.tokens || JSON.stringify(typed.tokens) !== JSON.stringify(state.tokens)) tokens.value = state.tokens.join(' ');
  tokens.removeAttribute('aria-invalid');
  $('tokens-msg').textContent = '';
  if (parseSeed($('seed').value) !== state.seed) $('seed').value = String(state.seed);
  $('seed').removeAttribute('aria-invalid');
  $('seed-msg').textContent = '';
  $('dk').value = String(state.dk);
  $('causal').checked = state.causal;
}

function writeHash() {
  clearTimeout(hashTimer);
  hashTimer = 0;
  const hash = '#' + formatHash(state);
  if (location.hash !== hash) history.replaceState(null, '', hash);
}

/**
 * The slider writes the link once it rests: history.replaceState costs Chromium a same-document
 * navigation, about a third of a slider step's main-thread work at 3 tokens (bench/page-paint.js).
 * Copying the link writes it first.
 */
const HASH_REST_MS = 200;
let hashTimer = 0;
function writeHashSoon() {
  clearTimeout(hashTimer);
  hashTimer = setTimeout(writeHash, HASH_REST_MS);
}

/**
 * Recompute from `state`: the hero now, the sections below it now or when due (registerSections).
 * fromLink: the state came from a link.
 */
function render(fromLink = false) {
  try {
    model = computeModel();
  } catch (e) {
    if (!(e instanceof AttentionError) || !state.x) throw e;
    // an edited X that the core refuses (from a link, e.g. it overflows, or an edited X with a
    // new d_k): fall back to random X, and say which value it was about
    const refused = state.x;
    state.x = null;
    model = computeModel();
    xProblem = { source: fromLink ? 'link' : 'dropped', ...classifyX(refused, e), tokens: [...state.tokens], about: xKey() };
  }
  showXMsg();
  renderHero();
  for (const key of ['snippet', 'words', 'steps', 'scaling', 'mha', 'trained', 'rope']) sections[key].invalidate();
  writeHash();
  updateScrollables();
}

/**
 * The sections below the hero (issue 24): each is drawn when it comes near the viewport, or in
 * idle time after the hero's first paint (page-lazy.js). A state change redraws them at once,
 * except the √d_k demo when it is off-screen: it is computed in slices of idle time (it needs
 * only the seed and the language, and costs most). <html data-complete> says whether every
 * section is drawn; data-ready, set before, that the hero is.
 */
function registerSections() {
  const html = document.documentElement;
  lazy = createLazy({
    onComplete: () => { html.dataset.complete = 'true'; },
    onPending: () => { html.dataset.complete = 'false'; },
  });
  // a draw may come in slices (it returns the next one); the boxes are checked once it is done
  const done = (more) => (typeof more === 'function' ? () => done(more()) : updateScrollables());
  const part = (els, draw, opts = {}) => lazy.section(els, () => done(draw()), opts);
  sections = {
    snippet: part($('reproduce'), renderSnippet, { defer: false, name: 'snippet' }),
    words: part($('words'), () => words.render(), { defer: false }),
    steps: part(['step-x', 'step-w', 'step-qkv', 'step-1', 'step-2', 'step-3', 'step-4'].map($), () => steps.render(), { defer: false, name: 'steps' }),
    s5: part($('section-5'), () => steps.renderSection5(), { defer: false }),
    trained: part($('trained'), () => trained.render(), { defer: false }),
    scaling: part($('scaling'), () => scaling.render(), { defer: true }),
    mha: part($('mha'), () => mha.show(model.x, model.tokens), { defer: false }),
    rope: part($('rope'), () => rope.render(), { defer: false }),
    checkpoint: part($('checkpoint'), () => checkpoint.render(), { defer: false }),
  };
}

/** The temperature and the colour scale change the main heatmap alone (page-scale.js says so). */
function renderView() {
  const t0 = performance.now();
  const before = maps.heatmaps.main && { n: maps.heatmaps.main.ctx.tokens.length, cell: maps.heatmaps.main.cellSize };
  renderHero();
  renderTempCaptions();
  writeHashSoon();
  // the same tokens in the same cells: the map's box, and so what scrolls or hides its numbers, is unchanged
  const same = before && before.n === maps.heatmaps.main.ctx.tokens.length && before.cell === maps.heatmaps.main.cellSize;
  if (!same) updateScrollables($('main-heatmap').closest('section'));
  performance.measure('attnmap:view', { start: t0, end: performance.now() });      // bench/page-paint.js
}

/**
 * The slider sends an input event per pixel dragged, several per frame: the first in a frame
 * draws at once, the rest wait for the next frame, which draws the latest state once.
 */
let viewFrame = 0, viewPending = false;
function setView(change) {
  Object.assign(state, change);
  // a click, not a drag: the link follows at once, and the maps below take the reader's scale (issue 39 P7)
  if ('colour' in change) { writeHash(); for (const key of ['words', 'mha', 'rope', 'trained']) sections[key].invalidate(); }
  if (viewFrame) { viewPending = true; return; }
  renderView();
  viewFrame = requestAnimationFrame(() => {
    viewFrame = 0;
    if (viewPending) { viewPending = false; setView({}); }
  });
}

function renderAll(fromLink = false) {
  applyLang();
  showLinkNote();
  for (const el of document.querySelectorAll('#dk option')) el.textContent = el.value;
  sections.s5.invalidate();
  sections.checkpoint.invalidate();
  render(fromLink);
}

// ------------------------------------------------------------------------------------------------
// controls

function commitX(input) {
  const i = Number(input.dataset.row), j = Number(input.dataset.col);
  const v = parseNumber(input.value);
  const current = model.x;
  if (Math.fround(v) === current[i][j]) {
    input.removeAttribute('aria-invalid');
    xProblem = null;
    showXMsg();
    return;
  }
  const x = current.map((r) => [...r]);
  x[i][j] = v;
  try {
    // the core checks the value (NaN, ±Infinity, beyond float32, a result that overflows)
    attn.selfAttention({ x, wq: model.w.wq, wk: model.w.wk, wv: model.w.wv }, { causal: state.causal });
  } catch (e) {
    if (!(e instanceof AttentionError)) throw e;
    input.setAttribute('aria-invalid', 'true');
    xProblem = { source: 'typed', ...classifyX(x, e), tokens: [...state.tokens], about: xKey() };
    showXMsg();
    return;
  }
  input.removeAttribute('aria-invalid');
  xProblem = null;
  state.x = x.map((r) => r.map(Math.fround));
  render();
}

function bindControls() {
  $('controls').addEventListener('submit', (e) => e.preventDefault());
  bindTokensAndSeed();
  bindSettings();
  bindX();
  bindActions();
  bindHeatmaps();
  bindWindow();
}

/** The sentence and the seed: checked as they are typed; a valid value recomputes. */
function bindTokensAndSeed() {
  $('tokens').addEventListener('input', checkTokens);
  $('seed').addEventListener('input', checkSeed);
  $('seed-new').addEventListener('click', () => {
    let v;
    do { v = Math.floor(Math.random() * 10000); } while (v === state.seed);
    state.seed = v;
    syncControls();
    render();
  });
}

/** The sentence as typed: its message, and the page recomputed when it means other tokens. */
function checkTokens() {
  const r = splitTokens($('tokens').value);
  const msg = $('tokens-msg');
  if (r.error) {
    $('tokens').setAttribute('aria-invalid', 'true');
    msg.textContent = T.tokenErrors[r.error](r.count);
    msg.classList.add('error');
    return;
  }
  $('tokens').removeAttribute('aria-invalid');
  msg.textContent = '';
  msg.classList.remove('error');
  if (JSON.stringify(r.tokens) === JSON.stringify(state.tokens)) return;
  if (r.tokens.length !== state.tokens.length) state.x = resizeX(state.x, state, r.tokens);
  state.tokens = r.tokens;
  render();
}

/** The seed as typed: its message, and the page recomputed when it is another seed. */
function checkSeed() {
  const v = parseSeed($('seed').value);
  const msg = $('seed-msg');
  if (v === null) {
    $('seed').setAttribute('aria-invalid', 'true');
    msg.textContent = T.seedError;
    msg.classList.add('error');
    return;
  }
  $('seed').removeAttribute('aria-invalid');
  msg.textContent = '';
  if (v === state.seed) return;
  state.seed = v;
  render();
}

/** d_k, the causal mask, reset, and the language. */
function bindSettings() {
  $('dk').replaceChildren(...DK_CHOICES.map((d) => h('option', { value: d }, String(d))));
  $('dk').addEventListener('change', () => { state.dk = Number($('dk').value); render(); });
  $('causal').addEventListener('change', () => { state.causal = $('causal').checked; render(); });
  $('reset').addEventListener('click', () => {
    state = { ...defaultState(), lang: state.lang };
    xProblem = null;
    syncControls();
    render();
  });
  $('lang').addEventListener('click', () => {
    state.lang = state.lang === 'zh' ? 'en' : 'zh';
    $('x-table').dataset.key = '';
    $('action-msg').textContent = '';
    renderAll();
    // the message under an invalid control is in the old language: recheck it (as a call, not an
    // input event: the sections listen for what the reader types, and a switch types nothing, issue 39 P5)
    checkTokens();
    checkSeed();
  });
}

/** X: commit on change (Enter or leaving the cell). */
function bindX() {
  $('x-table').addEventListener('change', (e) => { if (e.target.matches('input')) commitX(e.target); });
  $('x-table').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && e.target.matches('input')) { e.preventDefault(); commitX(e.target); }
  });
  $('reset-x').addEventListener('click', () => { state.x = null; xProblem = null; render(); });
}

/** Exports and copies. */
function bindActions() {
  $('link-note-close').addEventListener('click', () => { linkProblems = []; showLinkNote(); });
  const exports = createMainExport({ $, getModel: () => model, getMap: () => maps.heatmaps.main });   // page-export.js
  $('export-svg').addEventListener('click', () => exports.svg());
  $('export-png').addEventListener('click', () => {
    exports.png().catch((e) => { $('action-msg').textContent = T.exportFailed + e.message; });
  });
  $('copy-link').addEventListener('click', () => { writeHash(); copyText(location.href, T.linkCopied, $('action-msg')); });
  $('copy-code').addEventListener('click', () => copyText($('snippet').textContent, T.codeCopied, $('copy-code')));
}

/** The heatmaps' pointer and keyboard, and the episode-06 section. */
function bindHeatmaps() {
  maps.wire('main', $('main-heatmap'));
  maps.wire('s5', $('s5-heatmap'));
  mha = createMhaSection({
    $, h, matrixTable, drawHeatmap: maps.draw, wireHeatmap: maps.wire, heatmaps: maps.heatmaps, narrowestHeatmap: maps.narrowest,
    getState: () => state, getT: () => T, getAttn: () => attn,
    setHeads: (heads) => { state.heads = heads; render(); },
    copy: (text, button) => copyText(text, T.codeCopied, button),
  });
  mha.bind();
  bindTeach();
}

/** Issue 14: where X comes from (page-pe.js), the steps with step ④'s picture (page-steps.js), the heatmap's view (page-scale.js). */
function bindTeach() {
  const env = { $, h, matrixTable, fixed, getState: () => state, getT: () => T, getAttn: () => attn, getModel: () => model };
  words = createWordsSection({ ...env, setInput: (change) => {
    if (change.input && change.input !== state.input) state.x = null;          // a new source of X
    Object.assign(state, change);
    render();
  } });
  steps = createStepsSection({ ...env, maps, stepsStale: () => sections?.steps.stale });
  view = createHeatmapView({ ...env, set: setView });
  words.bind(); steps.bind(); view.bind();
  scaling = createScalingSection(env);
  trained = createTrainedSection(env);
  checkpoint = createCheckpointSection(env);
  trained.bind(); checkpoint.bind();
  // the checkpoint section's words name its controls (the file input, the hub's button): written
  // now, not with the lazy draw, which may come seconds later (issue 39 P11). With no model
  // loaded, its render() is its words alone.
  checkpoint.render();
  rope = createRopeSection(env);
  rope.bind();
}

/** A link's new hash, and a window that changes size. */
function bindWindow() {
  window.addEventListener('hashchange', () => {
    state = parseHash(location.hash);
    linkProblems = hashProblems(location.hash, state);
    xProblem = null;
    $('x-table').dataset.key = '';
    syncControls();
    renderAll(true);
  });

  let timer = 0, lastWidth = window.innerWidth;
  window.addEventListener('resize', () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      maps.redrawResized();
      if (window.innerWidth !== lastWidth) {         // these maps fit their boxes when drawn (issue 39 P7)
        lastWidth = window.innerWidth;
        for (const key of ['words', 'rope', 'trained']) sections[key].invalidate();
      }
      updateScrollables();
    }, 150);
  });
}

async function main() {
  document.documentElement.dataset.complete = 'false';
  state = parseHash(location.hash);
  T = STRINGS[state.lang];
  try {
    attn = await createAttention({ relaxed: false });   // one file fewer; the page's sizes gain nothing
  } catch (e) {
    const el = $('fatal');
    el.hidden = false;
    el.textContent = T.fatal + (e?.message ?? String(e));
    delete document.documentElement.dataset.complete;          // nothing more will be drawn
    return;
  }
  bindControls();
  linkProblems = hashProblems(location.hash, state);
  registerSections();
  syncControls();
  renderAll(true);                    // the hero now; the sections below it are left to lazy
  performance.mark('attnmap:first-heatmap');                   // bench/page-paint.js
  document.documentElement.dataset.ready = 'true';
  // after the hero's first paint (a frame, then a task): the sections near the viewport, the
  // others in idle time
  requestAnimationFrame(() => setTimeout(() => lazy.start(), 0));
}

main();
