// cache.js - `attnmap cache`: the models in the Hugging Face cache (the one Python's transformers
// fills, and loadModel('ORG/NAME') reads) that attnmap can load, with their revisions and sizes.
import fs from 'node:fs';

export const CACHE_USAGE = `Usage: attnmap cache [--dir DIR]

Lists the models in the Hugging Face cache that attnmap can load by name (attnmap model
ORG/NAME, loadModel('ORG/NAME')): those whose snapshot has config.json of a family attnmap
runs and safetensors weights. The cache is DIR, else HF_HUB_CACHE, else HF_HOME/hub, else
~/.cache/huggingface/hub.
`;

const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;

/** attnmap cache ...: the listing's text. */
export async function runCache(argv, { usage }) {
  if (argv.includes('-h') || argv.includes('--help')) return CACHE_USAGE;
  const at = argv.indexOf('--dir');
  if (argv.length && !(at === 0 && argv.length === 2)) usage('attnmap cache takes only --dir DIR (see attnmap cache --help)');
  const { hubCacheDir } = await import('../web/model/hub-node.js');
  const { scanHubCache } = await import('../web/model/hub-cache-node.js');
  const dir = at === 0 ? argv[1] : hubCacheDir();
  if (!fs.existsSync(dir)) return `no Hugging Face cache at ${dir}\n`;
  const lines = (await scanHubCache(dir)).map(({ repo, refs, commit, bytes, modelType, why }) =>
    `${repo}  ${refs.length ? refs.join(', ') : commit.slice(0, 12)}  ${mb(bytes)}  ${why ? `(not loadable: ${why})` : modelType}`);
  return lines.length ? `${lines.join('\n')}\n` : `no models in the Hugging Face cache at ${dir}\n`;
}
