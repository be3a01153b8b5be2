// page-strings.js - the page's strings, one object per language (T): the words several sections
// share (web/strings/page.js) and each section's own (page-<section>-strings.js, shaped as the part
// of T it fills), merged. page.js reads T = STRINGS[lang]; the sections read their part of it.
// (The RoPE section reads its words, page-rope-strings.js, directly.)
import * as SHARED from '../strings/page.js';
import * as STEPS from './page-steps-strings.js';
import * as SCALING from './page-scaling-strings.js';
import * as MHA from './page-mha-strings.js';
import * as PE from './page-pe-strings.js';
import * as VIEW from './page-scale-strings.js';
import * as TRAINED from './page-trained-strings.js';
import * as CHECKPOINT from './page-checkpoint-strings.js';
import * as HUB from './page-hub-strings.js';
import * as HEADS from './page-heads-strings.js';

const SECTIONS = [STEPS, SCALING, MHA, PE, VIEW, TRAINED, CHECKPOINT, HUB, HEADS];

const plain = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** into + part, merged key by key; two parts that set the same word is a mistake, said at once. */
function merge(into, part, at = '') {
  for (const [k, v] of Object.entries(part)) {
    if (plain(into[k]) && plain(v)) merge(into[k], v, `${at}${k}.`);
    else if (k in into) throw new Error(`page-strings.js: ${at}${k} is set twice`);
    else into[k] = plain(v) ? merge({}, v, `${at}${k}.`) : v;
  }
  return into;
}

export const zh = SECTIONS.reduce((T, s) => merge(T, s.zh), merge({}, SHARED.zh));
export const en = SECTIONS.reduce((T, s) => merge(T, s.en), merge({}, SHARED.en));
