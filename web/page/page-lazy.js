// page-lazy.js - draw the page's sections when they are needed (issue 24, "paint fast"): a section
// near the viewport is drawn at once, the others when they come near it, or in idle time after
// first paint, one per idle callback, so that the hero paints first and no task blocks for long.
//
//   const lazy = createLazy({ onComplete, onPending });
//   const part = lazy.section(el, draw, { name, defer });   // register; part starts stale
//                          // el: an element, or an array of them (near when any of them is)
//   part.invalidate();     // the state changed: redraw now, or, if off-screen and `defer`, later
//   part.stale             // true until drawn (to its end) with the latest state
//   draw() may return a function: the draw is not finished, and that function, its next slice,
//   runs in idle time (and may return another); a long computation so never blocks for long
//   lazy.invalidate();     // every section
//   lazy.start();          // after the first paint: draw the stale sections in idle time
//   whenVisible(el, fn)    // (a lazy of its own) fn() once, when el comes near the viewport or at idle
//
// Sections are drawn in their registration order in idle time. "Near" is within NEAR of the
// viewport (IntersectionObserver's rootMargin), so that scrolling does not show blanks. Where
// IntersectionObserver is missing, every section counts as near: drawn at once, as before.
// onPending() is called when a section becomes stale and is left for later, onComplete() when no
// section is stale any more (the page sets <html data-complete> from these). Each draw is
// measured as performance.measure('attnmap:draw:' + name).

const NEAR = '800px 0px';
const idle = (fn) => (typeof requestIdleCallback === 'function' ? requestIdleCallback(fn, { timeout: 200 }) : setTimeout(fn, 1));

export function createLazy({ onComplete = () => {}, onPending = () => {} } = {}) {
  const parts = [];
  let started = false, queued = false;
  const io = typeof IntersectionObserver === 'function'
    ? new IntersectionObserver((entries) => {
      for (const e of entries) {
        const p = parts.find((q) => q.els.includes(e.target));
        p.seen.set(e.target, e.isIntersecting);
        p.near = [...p.seen.values()].some(Boolean);
        if (p.near && p.stale && started) run(p);
      }
      settle();
    }, { rootMargin: NEAR })
    : null;

  /**
   * Draw p from the start (p.stale), or go on with a draw in progress (p.next). A draw that
   * returns a function is not finished: that function is its next slice, run in idle time. A
   * section that throws is reported (as an uncaught error, after this task) and does not stop the others.
   */
  function run(p) {
    const step = p.stale ? p.draw : p.next;
    p.stale = false;
    p.next = null;
    const t0 = performance.now();
    try {
      const more = step();
      if (typeof more === 'function') p.next = more;
    } catch (e) {
      setTimeout(() => { throw e; }, 0);
    }
    performance.measure?.(`attnmap:draw:${p.name}`, { start: t0, end: performance.now() });
  }

  const pending = (p) => p.stale || p.next !== null;

  /** No section left to draw: say so; else draw the next one (or its next slice) in idle time. */
  function settle() {
    if (!started) return;
    if (!parts.some(pending)) { onComplete(); return; }
    onPending();
    if (queued) return;
    queued = true;
    idle(() => {
      queued = false;
      const p = parts.find((q) => q.next) ?? parts.find((q) => q.stale);
      if (p) run(p);
      settle();
    });
  }

  function invalidatePart(p) {
    p.stale = true;
    p.next = null;                       // a draw in progress was for the old state
    if (started && (p.near || !p.defer)) run(p);
  }

  return {
    section(el, draw, { name = [el].flat()[0].id || 'section', defer = true } = {}) {
      const els = [el].flat();
      const p = { els, draw, name, defer, stale: true, next: null, near: !io, seen: new Map() };
      parts.push(p);
      for (const e of els) io?.observe(e);
      return { invalidate: () => { invalidatePart(p); settle(); }, get stale() { return pending(p); } };
    },
    invalidate() {
      for (const p of parts) invalidatePart(p);
      settle();
    },
    /** Draw the sections near the viewport now, the rest in idle time. */
    start() {
      started = true;
      for (const p of parts) if (p.stale && p.near) run(p);
      settle();
    },
  };
}

/** fn() once, when el comes near the viewport (or in idle time after the page's first paint). */
export function whenVisible(el, fn) {
  const lazy = createLazy();
  lazy.section(el, fn, { name: el.id || 'visible' });
  lazy.start();
}
