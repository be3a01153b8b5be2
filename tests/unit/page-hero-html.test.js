// page-hero-html.test.js - issue 24, "paint fast": index.html carries the hero's text (the header
// and <section class="hero">) in Chinese, so that it paints before the script runs; the script
// sets the same elements from web/strings/page.js (and English on the switch). This checks that
// the static text and the zh strings table say the same, so that the two cannot drift apart, and
// that the static form shows the default state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { root } from '../helpers.js';
import { zh } from '../../web/strings/page.js';
import { DEFAULT_STATE, DK_CHOICES } from '../../web/page/page-state.js';

const html = fs.readFileSync(path.join(root, 'index.html'), 'utf8');
// from the header to the end of the hero section
const start = html.indexOf('<header'), end = html.indexOf('</section>', html.indexOf('<section class="hero"'));
const hero = html.slice(start, end);

/** Every element with data-i18n in the hero: { key, label, labelKey, inner } (innerHTML up to its closing tag). */
function i18nElements(text) {
  const out = [];
  const open = /<(\w+)([^>]*?)\sdata-i18n="(\w+)"([^>]*)>/g;
  for (let m; (m = open.exec(text));) {
    const [, tag, before, key, after] = m;
    const attrs = before + after;
    const close = text.indexOf(`</${tag}>`, open.lastIndex);
    out.push({
      key, inner: text.slice(open.lastIndex, close),
      labelKey: /data-i18n-label="(\w+)"/.exec(attrs)?.[1], label: /aria-label="([^"]*)"/.exec(attrs)?.[1],
    });
  }
  return out;
}

test('the hero\'s static text in index.html is the zh strings table\'s, element by element', () => {
  assert.ok(start >= 0 && end > start, 'index.html has a header and a hero section');
  const els = i18nElements(hero);
  const keys = els.map((e) => e.key);
  for (const k of ['kicker', 'title', 'lede', 'coreNote', 'tokensLabel', 'seedLabel', 'dkLabel', 'causalLabel', 'explainTitle']) {
    assert.ok(keys.includes(k), `${k} is in the hero`);
  }
  for (const e of els) {
    assert.equal(typeof zh[e.key], 'string', `${e.key}: a string of the zh table`);
    assert.equal(e.inner, zh[e.key], `${e.key}: index.html says what web/strings/page.js says`);
    if (e.labelKey) assert.equal(e.label, zh[e.labelKey], `${e.labelKey}: the aria-label`);
  }
  const lang = /<button id="lang"[^>]*\slang="([^"]*)"[^>]*aria-label="([^"]*)"[^>]*>([^<]*)<\/button>/.exec(hero);
  assert.ok(lang, 'the language button has its text, lang and label');
  assert.deepEqual(lang.slice(1), [zh.langButtonLang, zh.langButtonLabel, zh.langButton]);
  assert.equal(/<title>([^<]*)<\/title>/.exec(html)[1], zh.docTitle);
  assert.match(html, new RegExp(`<html lang="${zh.htmlLang}"`));
});

test('the hero\'s static form shows the default state: tokens, seed, d_k', () => {
  assert.equal(/<input id="tokens"[^>]*\svalue="([^"]*)"/.exec(hero)?.[1], DEFAULT_STATE.tokens.join(' '));
  assert.equal(/<input id="seed"[^>]*\svalue="([^"]*)"/.exec(hero)?.[1], String(DEFAULT_STATE.seed));
  const select = /<select id="dk">(.*?)<\/select>/.exec(hero)?.[1] ?? '';
  assert.deepEqual([...select.matchAll(/<option[^>]*>(\d+)<\/option>/g)].map((m) => Number(m[1])), [...DK_CHOICES]);
  assert.equal(/<option selected>(\d+)<\/option>/.exec(select)?.[1], String(DEFAULT_STATE.dk));
});
