// trusted.js - the one Trusted Types policy of attnmap, "attnmap" (CSP require-trusted-types-for
// 'script'; a page that lists the names it allows, trusted-types …, must list attnmap; docs/EMBED.md).
// Created on first use, once per page: a second createPolicy of one name fails.
//   html(svg)        the SVG strings of renderHeatmap, which escapes every label: passed through
//   scriptUrl(url)   the classic bundles' own files beside them (classic-import.js): only the
//                    files named in SCRIPTS, over http(s) or file:, are let through
const SCRIPTS = /^(attnmap-model|toy-zh)\.js$/;
let policy;

function get() {
  if (policy === undefined) {
    try {
      policy = globalThis.trustedTypes?.createPolicy('attnmap', {
        createHTML: (s) => s,
        createScriptURL: (u) => {
          const url = new URL(u);
          if (!/^(https?|file):$/.test(url.protocol) || !SCRIPTS.test(url.pathname.split('/').pop())) throw new TypeError(`attnmap: ${u} is not one of its scripts`);
          return url.href;
        },
      }) ?? null;
    } catch { policy = null; }
  }
  return policy;
}

export const html = (svg) => (get() ? policy.createHTML(svg) : svg);
export const scriptUrl = (url) => (get() ? policy.createScriptURL(url) : url);
