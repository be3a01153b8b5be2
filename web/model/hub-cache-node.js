// hub-cache-node.js - the Hugging Face cache as attnmap/model's Node users see it (the cache
// Python's transformers fills and loadModel('ORG/NAME') reads, hub-node.js), and the hub's sizes:
//
//   await cachedModels({ cacheDir })   // [{ repo, revision, commit, bytes, modelType }]: loadable snapshots
//   await scanHubCache(dir)            // every model snapshot, with why it cannot be loaded (attnmap cache)
//   await deleteCachedModel(repo, { cacheDir })   // removes models--ORG--NAME (every revision)
//   await hubSize(repo, options)       // hub-browser.js's, with Node's endpoint and token (HF_ENDPOINT, HF_TOKEN)
//
// The listing is @huggingface/hub's scanCacheDir (its sizes count each blob once); what attnmap
// can load is decided here: config.json of a family it runs, and safetensors weights.
import fs from 'node:fs';
import path from 'node:path';
import { ErrorCode, describe, fail } from '../core/errors.js';
import { MODEL_TYPES } from './families/index.js';
import { parseRepoId } from './hub.js';
import { hubSize as hubSizeOf } from './hub-browser.js';
import { hubCacheDir, hubContext } from './hub-node.js';

// a repo id ('ORG/NAME' or 'NAME'), or INVALID_ARGUMENT
function repoArg(repo, fn) {
  const id = parseRepoId(repo);
  if (!id) fail(ErrorCode.INVALID_ARGUMENT, `${fn}: expected a Hugging Face repo id such as "Qwen/Qwen2.5-0.5B"; received ${describe(repo)}`);
  return id;
}

// why a snapshot folder cannot be loaded (null when it can), and its model_type
function loadable(dir) {
  let config;
  try { config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')); } catch { return { modelType: null, why: 'no config.json' }; }
  const modelType = typeof config?.model_type === 'string' ? config.model_type : 'gpt2';
  if (!MODEL_TYPES.includes(modelType)) return { modelType, why: `model_type ${modelType}` };
  const has = (f) => fs.existsSync(path.join(dir, f));
  if (!has('model.safetensors') && !has('model.safetensors.index.json')) return { modelType, why: 'no safetensors weights' };
  return { modelType, why: null };
}

/** Every model snapshot in the cache at dir: [{ repo, refs, commit, bytes, modelType, why }], by repo. */
export async function scanHubCache(dir) {
  if (!fs.existsSync(dir)) return [];
  const { scanCacheDir } = await import('@huggingface/hub');
  const { repos } = await scanCacheDir(dir);
  const out = [];
  for (const repo of repos.filter((r) => r.id.type === 'model').sort((a, b) => a.id.name.localeCompare(b.id.name))) {
    for (const rev of repo.revisions) out.push({ repo: repo.id.name, refs: rev.refs, commit: rev.commitOid, bytes: rev.size, ...loadable(rev.path) });
  }
  return out;
}

/** The models loadModel('ORG/NAME') can load from the cache: one entry per revision name (or commit). */
export async function cachedModels(options = {}) {
  const snapshots = await scanHubCache(options.cacheDir ?? hubCacheDir());
  return snapshots.filter((s) => !s.why).flatMap(({ repo, refs, commit, bytes, modelType }) =>
    (refs.length ? refs : [commit]).map((revision) => ({ repo, revision, commit, bytes, modelType })));
}

/** Removes a repo's folder (every revision, its blobs) from the cache: Python's transformers will download it again. */
export async function deleteCachedModel(repo, options = {}) {
  const id = repoArg(repo, 'deleteCachedModel');
  const dir = path.join(options.cacheDir ?? hubCacheDir(), `models--${id.replace('/', '--')}`);
  fs.rmSync(dir, { recursive: true, force: true });
}

/** The bytes loadModel(repo) would download: { files: [{ path, size }], total } (the hub's file list). */
export async function hubSize(repo, options = {}) {
  const ctx = hubContext(repoArg(repo, 'hubSize'), options);
  return hubSizeOf(ctx.repo, { revision: options.revision, hubUrl: ctx.hub, token: ctx.token, signal: options.signal });
}
