// page-scroll.js - boxes that may scroll sideways (tables and heatmaps): a tab stop and a label
// when they overflow, a cue and a fade on the edge they scroll toward, and the frame around a
// heatmap (its title as HTML, the scroll box, the hint below).
//
//   const scroll = createScrollables(getT);   // getT(): the page's strings, read when drawing
//   scroll.update(scope?)                     // once per frame, for scope or the whole document
//   mapFrame(container)                       // the frame around a heatmap's box, made once
import { h } from './page-dom.js';
import { tableCue } from './page-cues.js';          // issue 24: defects 11, 15
import { numbersTooSmall } from './page-fit.js';     // issue 39 P7

/**
 * Scrollable boxes get a tab stop (so keyboards can scroll them) only when they overflow; a
 * heatmap that scrolls gets a cue (a fade at the edge it scrolls toward, and a hint), and one
 * whose numbers would be drawn below page-fit.js's MIN_VALUE_PX hides them (hover or focus shows
 * a value). The heatmaps: .heatmap (page-heatmaps.js) and .words-map (titled maps, page-pe.js,
 * issue 39 P7). Once per frame, and all reads before all writes, so that layout is computed once.
 */
const MAPS = '.heatmap, .words-map';
const TITLE_SPACE = 16 * 0.9 + 10;   // the renderer's title line (font 16, 10 above the rest), drawn here as HTML

export function createScrollables(getT) {
  let queued = false;
  const scopes = new Set();
  /** scope: the element whose boxes may have changed (the hero alone after a temperature step), or the document. */
  function update(scope = document) {
    scopes.add(scope);
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      const from = scopes.has(document) ? [document] : [...scopes];
      scopes.clear();
      const boxes = from.flatMap((s) => [...s.querySelectorAll(`.table-scroll, ${MAPS}`)]);
      const overflowing = boxes.map((el) => el.scrollWidth > el.clientWidth + 1);
      const edges = boxes.map(edgesOf);              // read here: read after the writes below, each forced a layout
      const maps = boxes.map(mapScale);
      boxes.forEach((el, k) => {
        markScrollable(el, overflowing[k]);
        if (el.matches('.table-scroll')) tableCue(el, overflowing[k], getT().tableScrolls);
        if (!maps[k]) return;
        const frame = el.closest('.map');
        frame.classList.toggle('scrolls', overflowing[k]);
        frame.classList.toggle('values-hidden', maps[k].small);
        el.style.setProperty('--svg-shift', `${-(TITLE_SPACE * maps[k].scale).toFixed(1)}px`);   // page.css: the svg's margin-top
        markEdges(el, edges[k]);
      });
    });
  }
  return { update };
}

/** A heatmap's box: the scale its SVG is drawn at, and whether its numbers would be too small (null: not a heatmap in a frame). */
function mapScale(el) {
  const svg = el.matches(MAPS) && el.closest('.map') && el.querySelector('svg');
  if (!svg) return null;
  const scale = svg.getBoundingClientRect().width / Number(svg.getAttribute('width'));
  return { scale, small: numbersTooSmall(svg, scale) };
}

/** Which edges of a scrolling heatmap have more beyond them (page.css fades those). */
const edgesOf = (el) => ({ start: el.scrollLeft <= 1, end: el.scrollLeft + el.clientWidth >= el.scrollWidth - 1 });
function markEdges(el, e = edgesOf(el)) {
  const frame = el.closest('.map');
  if (!frame) return;
  frame.classList.toggle('at-start', e.start);
  frame.classList.toggle('at-end', e.end);
}

/**
 * The frame around a heatmap's box, made once: the title as HTML above it (it wraps where the
 * SVG's one line would be cut; page.css hides the SVG's own, which exports keep), a box for the
 * scroll fades, and the hint below.
 */
export function mapFrame(container) {
  if (container.parentElement.classList.contains('map-box')) return container.parentElement.parentElement;
  const frame = h('div', { class: 'map' }, h('p', { class: 'map-title', 'aria-hidden': 'true' }));
  const box = h('div', { class: 'map-box' });
  container.before(frame);
  box.append(container);
  frame.append(box, mapHint());
  watchEdges(container);
  return frame;
}

/** The hint below a map's box (page.css shows its parts): it scrolls, its numbers are hidden. */
export const mapHint = () => h('p', { class: 'map-hint' }, h('span', { class: 'hint-scroll' }), h('span', { class: 'hint-values' }));

/** A map's box that may scroll: its frame's fades follow the scroll. */
export function watchEdges(box) {
  box.addEventListener('scroll', () => markEdges(box), { passive: true });
}

function markScrollable(el, overflowing) {
  if (overflowing) {
    el.setAttribute('tabindex', '0');
    el.setAttribute('role', 'region');
    const cap = el.querySelector('caption, svg');
    el.setAttribute('aria-label', cap ? (cap.getAttribute('aria-label') ?? cap.textContent) : '');
  } else {
    el.removeAttribute('tabindex'); el.removeAttribute('role'); el.removeAttribute('aria-label');
  }
}
