// page-cues.js - where the page points the reader (issue 24, defects 11 and 15):
//
//   tableCue(box, overflowing, hint)   a table wider than its box says so: a line above it (the
//                                      box's data-hint, drawn by page.css) and a fade at the edge
//                                      it scrolls toward, as the heatmaps have (page.js mapFrame)
//   revealExplanation(panel, map)      after a tap on a cell, bring its explanation into view when
//                                      the layout put it below the map and out of sight
//
// DOM only; no strings of its own (page.js passes the hint from page-strings.js).

/** Which edges of a scrolling table have more beyond them (page.css fades those). */
function markTableEdges(box) {
  box.classList.toggle('at-start', box.scrollLeft <= 1);
  box.classList.toggle('at-end', box.scrollLeft + box.clientWidth >= box.scrollWidth - 1);
}

/**
 * box: a .table-scroll; overflowing: its content is wider than it (measured by the caller, all
 * reads before all writes); hint: trusted text, set as an attribute (page.css shows it).
 */
export function tableCue(box, overflowing, hint) {
  box.classList.toggle('scrolls', overflowing);
  if (!overflowing) {
    box.removeAttribute('data-hint');
    return;
  }
  box.setAttribute('data-hint', hint);
  if (!box.dataset.cueBound) {
    box.dataset.cueBound = 'true';
    box.addEventListener('scroll', () => markTableEdges(box), { passive: true });
  }
  markTableEdges(box);
}

/**
 * panel: the explanation a cell's tap just filled; map: the heatmap's box. Only when the panel
 * sits below the map (a narrow screen stacks them; a wide one puts them side by side, where
 * words like "beside" would hold) and is not wholly in view; smoothly unless the reader asked for
 * reduced motion. Called for taps and clicks only: arrow keys move the focus, and the page must
 * not jump under them.
 */
export function revealExplanation(panel, map) {
  if (!panel || !map) return;
  const p = panel.getBoundingClientRect(), m = map.getBoundingClientRect();
  const below = p.top >= m.bottom - 1;
  const inView = p.top >= 0 && p.bottom <= window.innerHeight;
  if (!below || inView) return;
  const reduce = window.matchMedia('(prefers-reduced-motion: reduce)').matches;
  panel.scrollIntoView({ behavior: reduce ? 'auto' : 'smooth', block: 'nearest' });
}
