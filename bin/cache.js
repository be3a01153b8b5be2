// cache.js - `attnmap cache`: the models in the Hugging Face cache (the one Python's transformers
// fills, and loadModel('ORG/NAME') reads) that attnmap can load, with their revisions and sizes.
import fs from 'node:fs';
import path from 'node:path';

export const CACHE_USAGE = `Usage: attnmap cache [--dir DIR]

Lists the models in the Hugging Face cache that attnmap can load by name (attnmap model
ORG/NAME, loadModel('ORG/NAME')): those whose snapshot has config.json of a family attnmap
runs and safetensors weights. The cache is DIR, else HF_HUB_CACHE, else HF_HOME/hub, else
~/.cache/huggingface/hub.
`;

// the reason a snapshot cannot be loaded, or null; and its model_type
function loadable(dir) {
  let config;
  try { config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')); } catch { return { why: 'no config.json' }; }
  const type = config?.model_type ?? 'gpt2';
  if (!['gpt2', 'llama', 'qwen2', 'qwen3'].includes(type)) return { type, why: `model_type ${type}` };
  const has = (f) => fs.existsSync(path.join(dir, f));
  if (!has('model.safetensors') && !has('model.safetensors.index.json')) return { type, why: 'no safetensors weights' };
  return { type, why: null };
}

const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;

/** attnmap cache ...: the listing's text. */
export async function runCache(argv, { usage }) {
  if (argv.includes('-h') || argv.includes('--help')) return CACHE_USAGE;
  const at = argv.indexOf('--dir');
  if (argv.length && !(at === 0 && argv.length === 2)) usage('attnmap cache takes only --dir DIR (see attnmap cache --help)');
  const { hubCacheDir } = await import('../web/model/hub-node.js');
  const dir = at === 0 ? argv[1] : hubCacheDir();
  if (!fs.existsSync(dir)) return `no Hugging Face cache at ${dir}\n`;
  const { scanCacheDir } = await import('@huggingface/hub');
  const { repos } = await scanCacheDir(dir);
  const lines = [];
  for (const repo of repos.filter((r) => r.id.type === 'model').sort((a, b) => a.id.name.localeCompare(b.id.name))) {
    for (const rev of repo.revisions) {
      const { type, why } = loadable(rev.path);
      const refs = rev.refs.length ? rev.refs.join(', ') : rev.commitOid.slice(0, 12);
      lines.push(`${repo.id.name}  ${refs}  ${mb(rev.size)}  ${why ? `(not loadable: ${why})` : type}`);
    }
  }
  return lines.length ? `${lines.join('\n')}\n` : `no models in the Hugging Face cache at ${dir}\n`;
}
