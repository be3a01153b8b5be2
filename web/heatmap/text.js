// text.js - text and numbers as the heatmap writes them: escaping, cleaning, bidi isolation, width
// estimates, cutting, and number formats. Pure; the page prints its numbers with the same fixed().

const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Escape for XML text and double- or single-quoted attributes. */
export const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ESC[c]);

// Characters XML 1.0 forbids (C0 controls except tab/LF/CR, U+FFFE/FFFF, lone surrogates) become
// U+FFFD; tab, LF and CR become spaces (a label is one line).
export function clean(s) {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) { out += s[i] + s[i + 1]; i++; } else out += '\ufffd';
    } else if (c >= 0xdc00 && c <= 0xdfff) out += '\ufffd';
    else if (c === 9 || c === 10 || c === 13) out += ' ';
    else if (c < 0x20 || c === 0xfffe || c === 0xffff) out += '\ufffd';
    else out += s[i];
  }
  return out;
}

// Right-to-left letters or bidi controls: wrap in FSI … PDI so the token cannot reorder the text
// around it (the arrow and the value in "吃 → 猫: 0.3157") and its own embeddings end with it.
const BIDI = /[\u0590-\u08ff\u200e\u200f\u202a-\u202e\u2066-\u2069\ufb1d-\ufdff\ufe70-\ufefc]|\ud802[\udc00-\udfff]|\ud83a[\udc00-\udfff]/;
export const isolate = (s) => (BIDI.test(s) ? `\u2068${s}\u2069` : s);

const ZERO_WIDTH = (cp) => (cp >= 0x300 && cp <= 0x36f) || (cp >= 0x1ab0 && cp <= 0x1aff) ||
  (cp >= 0x20d0 && cp <= 0x20ff) || (cp >= 0xfe20 && cp <= 0xfe2f) || (cp >= 0x200b && cp <= 0x200f) ||
  (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2069) || (cp >= 0xfe00 && cp <= 0xfe0f) ||
  cp === 0xfeff || (cp >= 0xe0000 && cp <= 0xe01ef);
const WIDE = (cp) => (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2600 && cp <= 0x27bf) ||
  (cp >= 0x2e80 && cp <= 0xa4cf) || (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) ||
  (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) || (cp >= 0xffe0 && cp <= 0xffe6) ||
  (cp >= 0x1f000 && cp <= 0x1faff) || (cp >= 0x20000 && cp <= 0x3fffd);

/** Rough width in em of one grapheme: CJK, fullwidth and emoji 1, marks and controls 0, else 0.6. */
function graphemeEm(g) {
  for (const ch of g) {
    const cp = ch.codePointAt(0);
    if (ZERO_WIDTH(cp)) continue;
    return WIDE(cp) ? 1 : (cp === 0x20 ? 0.3 : 0.6);
  }
  return 0;
}

const segmenter = typeof Intl === 'object' && typeof Intl.Segmenter === 'function'
  ? new Intl.Segmenter('en', { granularity: 'grapheme' }) : null;

// Each step of Intl.Segmenter's iterator costs time in the length of the whole string it was
// given (Node 20: a 100,000-character token took seconds to minutes to label), so a string is
// segmented a window at a time. A window's last grapheme may go on past its end: it is left for
// the next window, which starts where it starts (a boundary: segmenting from there gives the
// same graphemes). A grapheme that fills a window gets a window twice as large, from which only
// that grapheme is taken.
const WINDOW = 256;   // UTF-16 units

// the end of the window of `size` units from `at`: the string's end, or before a surrogate pair
function windowEnd(s, at, size) {
  const end = at + size;
  if (end >= s.length) return s.length;
  const c = s.charCodeAt(end - 1);
  return c >= 0xd800 && c <= 0xdbff ? end - 1 : end;
}

/** The graphemes of s in order, lazily (a caller that stops early segments no further). */
export function* graphemes(s) {
  if (!segmenter) { yield* s; return; }
  for (let at = 0, size = WINDOW; at < s.length;) {
    const end = windowEnd(s, at, size), whole = end === s.length;
    const it = segmenter.segment(s.slice(at, end))[Symbol.iterator]();
    let g = it.next().value.segment, next = it.next();
    if (next.done && !whole) { size *= 2; continue; }   // one grapheme fills the window
    const one = size > WINDOW;                          // a widened window: its first grapheme only
    size = WINDOW;
    for (;;) {
      yield g;
      at += g.length;
      if (one || next.done) break;
      g = next.value.segment;
      next = it.next();
      if (next.done && !whole) break;                   // g may go on past the window
    }
  }
}

export function textEm(s) {
  let w = 0;
  for (const g of graphemes(s)) w += graphemeEm(g);
  return w;
}

/**
 * Cut to at most maxEm (with "…"), on grapheme boundaries. Returns { text, em, cut }. Reads
 * only as far as it must: once the width passes maxEm the text is cut, and what is kept is
 * already known (it stops growing at maxEm - 1).
 */
export function fit(s, maxEm) {
  let total = 0, out = '', growing = true;
  for (const g of graphemes(s)) {
    const gw = graphemeEm(g);
    if (growing && total + gw > maxEm - 1) growing = false;
    total += gw;
    if (total > maxEm) {
      out = out.replace(/\s+$/, '');
      return { text: out + '…', em: textEm(out) + 1, cut: true };
    }
    if (growing) out += g;
  }
  return { text: s, em: total, cut: false };
}

/** At most max UTF-16 units (with "…"), on grapheme boundaries. */
export function cut(s, max) {
  if (s.length <= max) return s;
  let out = '';
  for (const g of graphemes(s)) {
    if (out.length + g.length > max - 1) break;
    out += g;
  }
  return out.replace(/\s+$/, '') + '…';
}

/** Coordinates: at most 2 decimals, no trailing zeros, no "-0". */
export function n(x) {
  const r = Math.round(x * 100) / 100;
  return Object.is(r, -0) ? '0' : String(r);
}

/** A value as shown: fixed decimals, never "-0.00". */
export function fixed(x, d) {
  const s = x.toFixed(d);
  return /^-0\.?0*$/.test(s) ? s.slice(1) : s;
}

/** Tick labels: compact ("0", "0.25", "1"). */
export function compact(x, d) {
  const r = Number(x.toFixed(d));
  return Object.is(r, -0) ? '0' : String(r);
}
