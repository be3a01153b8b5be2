// cache.js - `attnmap cache`: the models in the Hugging Face cache (the one Python's transformers
// fills, and loadModel('ORG/NAME') reads) that attnmap can load, with their revisions and sizes;
// then the GGUF files of Ollama's and LM Studio's stores (loadModel('ollama:NAME'), stores-node.js).
import fs from 'node:fs';

export const CACHE_USAGE = `Usage: attnmap cache [--dir DIR]

Lists the models in the Hugging Face cache, one line per snapshot: the repo, its revisions, its
size, and the family when attnmap can load it by name (attnmap model ORG/NAME,
loadModel('ORG/NAME')): config.json of a family attnmap runs and safetensors weights, or a GGUF
repo's .gguf files (gguf: their names, for loadModel('ORG/NAME', { file })). Any other
entry says why not (a missing or broken file, a link that leads nowhere, a folder whose name is
not a repo); one bad entry never hides the rest. The cache is DIR, else HF_HUB_CACHE, else
HF_HOME/hub, else ~/.cache/huggingface/hub.

Then the GGUF models of Ollama's store (OLLAMA_MODELS, else ~/.ollama/models) and LM Studio's
(LMSTUDIO_MODELS, else ~/.lmstudio/models, else ~/.cache/lm-studio/models), one line each: the
name attnmap model and loadModel take (ollama:NAME:TAG, lmstudio:PUBLISHER/REPO/FILE), the
source, the size. attnmap reads those stores and never changes them.
`;

const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;

// names come from folder and file names anyone can write: control and bidi characters are shown
// escaped, so a name cannot move the cursor, recolour the terminal or reorder the line
// eslint-disable-next-line no-control-regex -- control characters are what this finds
const shown = (s) => String(s).replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
  (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

// a GGUF repo's files, as loadModel(repo, { file }) takes them: the first 10, and how many more
const ggufNames = (names) => `gguf: ${names.slice(0, 10).join(', ')}${names.length > 10 ? `, and ${names.length - 10} more` : ''}`;

// one entry of the listing: repo, revisions (or the commit; "-" when the entry has neither), size,
// family (and a GGUF repo's files) or why not
function line({ repo, refs, commit, bytes, modelType, why, gguf }) {
  const revisions = refs.length ? refs.join(', ') : commit ? commit.slice(0, 12) : '-';
  const what = [modelType, gguf && ggufNames(gguf)].filter(Boolean).join(', ');
  return shown(`${repo}  ${revisions}  ${mb(bytes)}  ${why ? `(not loadable: ${why})` : what}`);
}

// one model of Ollama's or LM Studio's store: name, source, size, gguf or why not
const storeLine = ({ source, name, bytes, why }) => shown(`${name}  ${source}  ${mb(bytes)}  ${why ? `(not loadable: ${why})` : 'gguf'}`);

// the stores' lines, after the Hugging Face cache's (nothing when neither store is there)
async function storeLines() {
  const { scanStores } = await import('../web/model/hub/stores-node.js');
  return scanStores().map((e) => `${storeLine(e)}\n`).join('');
}

/** attnmap cache ...: the listing's text. */
export async function runCache(argv, { usage }) {
  if (argv.includes('-h') || argv.includes('--help')) return CACHE_USAGE;
  const at = argv.indexOf('--dir');
  if (argv.length && !(at === 0 && argv.length === 2)) usage('attnmap cache takes only --dir DIR (see attnmap cache --help)');
  const { hubCacheDir } = await import('../web/model/hub/hub-node.js');
  const { scanHubCache } = await import('../web/model/hub/hub-cache-node.js');
  const dir = at === 0 ? argv[1] : hubCacheDir();
  if (!fs.existsSync(dir)) return `no Hugging Face cache at ${shown(dir)}\n${await storeLines()}`;
  let entries;
  try {
    entries = await scanHubCache(dir);
  } catch (e) {
    // the folder itself cannot be listed (a file given as --dir): the user's to fix
    if (e?.code === 'INVALID_ARGUMENT') usage(e.message.replace(/^scanHubCache: /, ''));
    throw e;
  }
  // one entry's trouble is that entry's line: the rest of the cache is listed all the same
  const hub = entries.length ? `${entries.map(line).join('\n')}\n` : `no models in the Hugging Face cache at ${shown(dir)}\n`;
  return hub + await storeLines();
}
