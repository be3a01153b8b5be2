// page-hub.js - "load from Hugging Face" beside the checkpoint loader (issue 23): the reader types
// a model id (Qwen/Qwen2.5-0.5B), sees how much would be downloaded, says yes once, and watches
// the download with a cancel button; the files stay in the browser's Cache API, listed below
// with a delete button each, so a second visit loads offline. The page touches the network only
// when the reader asks (the size button); the list of cached models is read from the browser.
// ?hub=URL in the page's address uses another hub with the same API (a mirror). A GGUF repo with
// several .gguf files (Qwen/Qwen2.5-0.5B-Instruct-GGUF) gets a list to pick one from, with sizes.
//
//   const panel = createHubPanel(env, { adopt, drop, busy });   // adopt(model, name): the checkpoint section
//                                                    // takes it; drop(): a download starts, the model shown goes
//   panel.bind(anchor); panel.render();              // the panel goes right after anchor
//
// attnmap/model (web/model/model.js: loadModel, hubSize, cachedModels, deleteCachedModel) loads
// on the first use, as the file loader's does (web/dist/attnmap-model.js in the classic bundle).
import { formatBytes } from './page-files.js';
import { loadError, errorParts } from './page-load-errors.js';

const importModel = () => import('../model/model.js');

// another hub (a mirror, such as https://hf-mirror.com, or a test's) from the page's query: ?hub=URL
function hubUrl() {
  try {
    const u = new URLSearchParams(globalThis.location?.search ?? '').get('hub');
    return u && /^https?:\/\//.test(u) ? u : undefined;
  } catch { return undefined; }
}

export function createHubPanel(env, { adopt, drop = () => {}, busy }) {
  // said: id -> (H) => its text, see say(); parts: an error's element -> (T) => its text, see sayError()
  // file: the .gguf picked from #hub-file (undefined: not a repo of several)
  const s = { abort: null, id: '', size: null, file: undefined, said: new Map(), parts: new Map() };
  return { bind: (anchor) => bind(env, s, anchor, { adopt, drop, busy }), render: () => render(env, s) };
}

function bind(env, s, anchor, hooks) {
  const { $, h } = env;
  anchor.after(h('div', { id: 'hub', class: 'card hub' },
    h('label', { for: 'hub-id', id: 'hub-label', class: 'seg-label' }),
    h('div', { class: 'hub-row' },
      h('input', { id: 'hub-id', name: 'hub-id', type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'Qwen/Qwen2.5-0.5B' }),
      h('button', { id: 'hub-check', type: 'button' })),
    h('p', { id: 'hub-pick', class: 'hub-row', hidden: true }, h('label', { for: 'hub-file', id: 'hub-file-label', class: 'note' }), h('select', { id: 'hub-file', name: 'hub-file' })),
    h('p', { id: 'hub-ask', class: 'note', hidden: true }, h('span', { id: 'hub-ask-text' }), ' ', h('button', { id: 'hub-go', type: 'button' })),
    h('div', { class: 'hub-row' }, h('progress', { id: 'hub-progress', hidden: true }), h('button', { id: 'hub-cancel', type: 'button', hidden: true })),
    h('p', { id: 'hub-status', class: 'note', 'aria-live': 'polite' }),
    h('div', { id: 'hub-msg', class: 'msg error', role: 'alert' }),      // (a div: it may hold a <details>)
    h('p', { id: 'hub-cached-title', class: 'note' }),
    h('ul', { id: 'hub-cached', class: 'hub-cached' })));
  $('hub-check').addEventListener('click', () => check(env, s, hooks));
  $('hub-id').addEventListener('keydown', (e) => { if (e.key === 'Enter') check(env, s, hooks); });
  $('hub-go').addEventListener('click', () => download(env, s, hooks));
  $('hub-file').addEventListener('change', () => pick(env, s));
  $('hub-cancel').addEventListener('click', () => s.abort?.abort());
  $('hub-cached').addEventListener('click', async (e) => {
    const b = e.target.closest('button[data-repo]');
    if (!b) return;
    await (await importModel()).deleteCachedModel(b.dataset.repo);
    listCached(env);
  });
  listCached(env);
}

const text = (env, id, value) => { env.$(id).textContent = value; };

/** #id's text is fn(H), H = T.models.hub (fn null: none); render() writes it again in a new language. */
function say(env, s, id, fn) {
  if (fn) s.said.set(id, fn);
  else s.said.delete(id);
  text(env, id, fn ? fn(env.getT().models.hub) : '');
}

/**
 * Why the hub failed, in the reader's words: a key of T.models.hub.causes, or null for a broken
 * or too large model, whose cause the file loader's table gives (page-load-errors.js). The
 * loader's message is English and names the URL and the status; it goes in the <details>.
 */
function hubCause(e) {
  const { key } = loadError(e);
  if (key !== 'other' && key !== 'refused') return null;
  if (e?.code === 'INVALID_ARGUMENT') return 'badId';
  if (e?.code !== 'FETCH_FAILED') return 'unknown';
  const m = String(e.message);
  if (/no answer within|too slow/.test(m)) return 'slow';
  if (e.status === 0) return 'offline';
  return { 401: 'gated', 403: 'gated', 404: 'notFound' }[e.status] ?? 'server';
}

/**
 * A failed download in #hub-msg, as the file loader says its own (issue 24 item 13, issue 39 P9):
 * a plain cause in the page's language, then the loader's words, unchanged, in a closed <details>.
 */
function sayError(env, s, e) {
  const cause = hubCause(e);
  say(env, s, 'hub-msg', null);
  const put = (el, fn) => { s.parts.set(el, fn); el.textContent = fn(env.getT()); };
  const lead = cause ? (T) => T.models.hub.failed(T.models.hub.causes[cause]) : (T, said) => T.models.hub.failed(said);
  env.$('hub-msg').replaceChildren(...errorParts(env.h, put, e, lead));
}

// the size of what a load would download, asked of the hub; then one question
async function check(env, s, hooks) {
  const id = env.$('hub-id').value.trim();
  say(env, s, 'hub-msg', null);
  env.$('hub-ask').hidden = env.$('hub-pick').hidden = true;
  s.file = undefined;
  if (!id) return say(env, s, 'hub-msg', (H) => H.noId);
  if (hooks.busy()) return undefined;
  say(env, s, 'hub-status', (H) => H.checking(id));
  try {
    const m = await importModel();
    const cached = (await m.cachedModels()).some((c) => c.repo === id);
    if (cached) return download(env, s, hooks, id);        // nothing to download: load at once
    const { total, files, gguf } = await m.hubSize(id, { hubUrl: hubUrl() });
    Object.assign(s, { id, size: total });
    if (!files.length && gguf?.length) offer(env, s, gguf);   // several .gguf files: one to pick
    else say(env, s, 'hub-ask-text', (H) => H.ask(id, formatBytes(total), files.length));
    env.$('hub-ask').hidden = false;
    say(env, s, 'hub-status', null);
  } catch (e) {
    say(env, s, 'hub-status', null);
    sayError(env, s, e);
  }
  return undefined;
}

// a GGUF repo's files in #hub-file (name and size), the first picked
function offer(env, s, gguf) {
  env.$('hub-file').replaceChildren(...gguf.map((f) => env.h('option', { value: f.path, 'data-size': String(f.size ?? 0) }, `${f.path} (${formatBytes(f.size ?? 0)})`)));
  env.$('hub-pick').hidden = false;
  pick(env, s);
}

// the file picked: its size in the question
function pick(env, s) {
  const option = env.$('hub-file').selectedOptions[0], id = s.id;
  if (!option) return;
  const file = option.value, size = Number(option.dataset.size);
  Object.assign(s, { file, size });
  say(env, s, 'hub-ask-text', (H) => H.ask(`${id} · ${file}`, formatBytes(size), 1));
}

async function download(env, s, hooks, id = s.id) {
  const { $ } = env;
  $('hub-ask').hidden = $('hub-pick').hidden = true;
  say(env, s, 'hub-msg', null);
  hooks.drop();                            // one model on the page: the one shown goes (issue 24 item 12)
  s.abort = new AbortController();
  $('hub-progress').hidden = $('hub-cancel').hidden = false;
  $('hub-progress').max = s.size ?? 1;
  const done = new Map();
  try {
    const { loadModel } = await importModel();
    const model = await loadModel(id, {
      signal: s.abort.signal, hubUrl: hubUrl(), offThread: true,   // the heads panel's forward off the main thread (page-heads.js)
      ...(s.file === undefined ? {} : { file: s.file }),
      onProgress: ({ file, loaded, total }) => {
        done.set(file, loaded);
        $('hub-progress').value = [...done.values()].reduce((a, b) => a + b, 0);
        const read = formatBytes(loaded), size = formatBytes(total);
        say(env, s, 'hub-status', (H) => H.progress(file, read, size));
      },
    });
    say(env, s, 'hub-status', null);
    hooks.adopt(model, s.file === undefined ? id : `${id} · ${s.file}`);
  } catch (e) {
    say(env, s, 'hub-status', null);
    if (s.abort.signal.aborted) say(env, s, 'hub-msg', (H) => H.cancelled);
    else sayError(env, s, e);
  } finally {
    $('hub-progress').hidden = $('hub-cancel').hidden = true;
    s.abort = null;
    listCached(env);
  }
}

// the Cache API's models, each with a delete button (no network)
async function listCached(env) {
  const { $, h } = env, H = env.getT().models.hub;
  let list = [];
  try { list = await (await importModel()).cachedModels(); } catch { /* no Cache API (file://): nothing kept */ }
  $('hub-cached-title').textContent = list.length ? H.cachedTitle : '';
  $('hub-cached').replaceChildren(...list.map((c) => h('li', { 'data-repo': c.repo },
    h('code', {}, c.repo), ` ${c.revision} · ${formatBytes(c.bytes)} `,
    h('button', { type: 'button', 'data-repo': c.repo, 'aria-label': H.deleteLabel(c.repo) }, H.delete))));
}

function render(env, s) {
  const H = env.getT().models.hub;
  text(env, 'hub-label', H.label);
  text(env, 'hub-check', H.check);
  text(env, 'hub-cancel', H.cancel);
  text(env, 'hub-go', H.go);
  text(env, 'hub-file-label', H.pick);
  for (const [id, fn] of s.said) text(env, id, fn(H));      // what the panel has said, in the new language
  const T = env.getT();
  for (const [el, fn] of s.parts) {
    if (el.isConnected) el.textContent = fn(T);
    else s.parts.delete(el);
  }
  listCached(env);
}
