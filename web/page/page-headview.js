// page-headview.js - the head view (BertViz's picture) of a loaded model on the page, under the
// checkpoint section's grid: one layer at a time, a toggle per head in its colour, the tokens in
// two columns; hovering or focusing a token (Tab, then the arrow keys) keeps its lines alone;
// the SVG can be saved as a file. The drawing is renderHeadView's (web/heatmap/head-view.js),
// re-rendered with options, never patched.
//
//   const view = createHeadView(env, { id });  // env: { $, h, getT() }; id: the prefix of its
//                                              // element ids (default 'headview'; the trained
//                                              // section's is 'trained-hv', page-trained.js)
//   view.bind(parent);                         // the card, appended to parent (hidden until show)
//   view.show({ maps, labels, ids, name, kvHeads }); // maps[layer][head]: { data, shape: [n, n] }
//   view.render();                             // the words again, in the page's language
import { renderHeadView, HEAD_COLOURS } from '../heatmap/head-view.js';
import * as WORDS from '../strings/head-view.js';

export function createHeadView(env, { id = 'headview' } = {}) {
  const s = { id, run: null, layer: 0, hidden: new Set(), focus: null, redrawing: false };
  return { bind: (parent) => bind(env, s, parent), show: (run) => show(env, s, run), render: () => render(env, s) };
}

// the section's words: web/strings/head-view.js, in the page's language
const lang = (env) => (env.getT().htmlLang === 'en' ? 'en' : 'zh');
const words = (env) => WORDS[lang(env)].page;

function bind(env, s, parent) {
  const { $, h } = env;
  const id = (part = '') => `${s.id}${part}`;
  // named by its heading and its drawing's title, which names the model: the trained toy's and a
  // checkpoint's head views are two landmarks, each with a name of its own (issue 39 P11)
  parent.append(h('section', { id: id(), class: 'card headview', hidden: true, 'aria-labelledby': `${id('-title')} ${id('-map-title')}` },
    h('h3', { id: id('-title') }),
    h('p', { id: id('-hint'), class: 'note' }),
    h('div', { class: 'headview-controls' },
      h('label', { for: id('-layer'), id: id('-layer-label') }),
      h('select', { id: id('-layer'), name: id('-layer') }),
      h('div', { id: id('-heads'), class: 'headview-heads', role: 'group' }),
      h('button', { id: id('-save'), type: 'button' })),
    h('div', { id: id('-svg'), class: 'headview-svg' })));
  $(`${s.id}-layer`).addEventListener('change', (e) => { s.layer = Number(e.target.value); s.focus = null; draw(env, s); });
  $(`${s.id}-heads`).addEventListener('click', (e) => {
    const b = e.target.closest('button[data-head]');
    if (!b) return;
    const k = b.dataset.head;
    if (s.hidden.has(k)) s.hidden.delete(k); else s.hidden.add(k);
    b.setAttribute('aria-pressed', String(!s.hidden.has(k)));
    draw(env, s);
  });
  $(`${s.id}-save`).addEventListener('click', () => save(env, s));
  bindTokens(env, s);
}

// hover or focus a token: its lines alone; leave, blur or Escape: every line; arrows move along a column
function bindTokens(env, s) {
  const box = env.$(`${s.id}-svg`);
  const tokenOf = (e) => e.target.closest?.('g.hv-token');
  // a new drawing replaces the focused token: the focus and blur events that causes, and the
  // focus given back to the new token, happen while s.redrawing and are not acted on
  const set = (focus, refocus = focus) => {
    if (s.redrawing || JSON.stringify(focus) === JSON.stringify(s.focus)) return;
    const had = box.contains(document.activeElement);
    s.redrawing = true;
    try {
      s.focus = focus;
      draw(env, s);
      if (refocus && had) box.querySelector(`g.hv-token[data-side="${refocus.side}"][data-index="${refocus.index}"]`)?.focus({ preventScroll: true });
    } finally {
      s.redrawing = false;
    }
  };
  const from = (g) => ({ side: g.dataset.side, index: Number(g.dataset.index) });
  box.addEventListener('pointerover', (e) => { const g = tokenOf(e); if (g) set(from(g)); });
  box.addEventListener('pointerleave', () => set(null));
  box.addEventListener('focusin', (e) => { const g = tokenOf(e); if (g) set(from(g)); });
  box.addEventListener('focusout', (e) => { if (!box.contains(e.relatedTarget)) set(null); });
  box.addEventListener('keydown', (e) => {
    const g = tokenOf(e);
    if (!g) return;
    const n = s.run.labels.length, f = from(g);
    const step = { ArrowDown: 1, ArrowUp: -1 }[e.key], side = { ArrowLeft: 'query', ArrowRight: 'key' }[e.key];
    if (e.key === 'Escape') { e.preventDefault(); set(null, f); return; }   // every line; the token keeps the focus
    if (step === undefined && side === undefined) return;
    e.preventDefault();
    set({ side: side ?? f.side, index: step === undefined ? f.index : (f.index + step + n) % n });
  });
}

function show(env, s, run) {
  const { $, h } = env;
  const L = run.maps.length;
  if (s.run?.name !== run.name) { s.layer = 0; s.hidden = new Set(); }
  s.run = run;
  s.layer = Math.min(s.layer, L - 1);
  s.focus = null;
  $(s.id).hidden = false;
  $(`${s.id}-layer`).replaceChildren(...Array.from({ length: L }, (_, l) => h('option', { value: l, selected: l === s.layer }, '')));
  const H = run.maps[0].length;
  $(`${s.id}-heads`).replaceChildren(...Array.from({ length: H }, (_, k) => h('button', {
    type: 'button', class: 'headview-head', 'data-head': String(k), 'aria-pressed': String(!s.hidden.has(String(k))),
    style: `--head: ${HEAD_COLOURS[k % HEAD_COLOURS.length]}`,
  }, '')));
  render(env, s);
}

// the words (language), then the drawing
function render(env, s) {
  const { $ } = env;
  const C = words(env);
  $(`${s.id}-title`).textContent = C.title;
  $(`${s.id}-hint`).textContent = C.hint;
  $(`${s.id}-layer-label`).textContent = C.layer;
  $(`${s.id}-heads`).setAttribute('aria-label', C.heads);
  $(`${s.id}-save`).textContent = C.save;
  if (!s.run) return;
  for (const o of $(`${s.id}-layer`).options) o.textContent = C.layerOption(Number(o.value));
  for (const b of $(`${s.id}-heads`).querySelectorAll('button')) {
    const k = Number(b.dataset.head), kv = s.run.kvHeads < s.run.maps[0].length ? Math.floor(k / (s.run.maps[0].length / s.run.kvHeads)) : null;
    b.textContent = C.headButton(k, kv);
  }
  draw(env, s);
}

function svgOf(env, s) {
  const maps = s.run.maps[s.layer];
  return renderHeadView(maps, {
    tokens: s.run.labels, heads: maps.map((_, k) => k), hidden: [...s.hidden], focus: s.focus,
    lang: lang(env), title: words(env).svgTitle(s.run.name, s.layer), idPrefix: `${s.id}-map`,   // (s.id-title is the card's heading)
  });
}

function draw(env, s) {
  if (!s.run) return;
  const box = env.$(`${s.id}-svg`);
  box.innerHTML = svgOf(env, s);
  const svg = box.querySelector('svg');
  svg.dataset.layer = String(s.layer);
  svg.dataset.ids = JSON.stringify(s.run.ids);
}

// the SVG as a standalone file: the page's text colour in place of currentColor
function save(env, s) {
  if (!s.run) return;
  const colour = getComputedStyle(env.$(`${s.id}-svg`)).color || '#000';
  const blob = new Blob([svgOf(env, s).replaceAll('currentColor', colour)], { type: 'image/svg+xml' });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = `head-view-${s.run.name.replace(/[^\w.-]+/g, '_') || 'model'}-layer${s.layer + 1}.svg`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}
