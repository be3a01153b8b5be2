// axe.js - axe-core (from node_modules) run in a Playwright page: WCAG 2.0 and 2.1, levels A and
// AA, with the experimental rule label-content-name-mismatch (issue 24 item 17). Shared by the
// page's and the element's accessibility tests.
import fs from 'node:fs';
import path from 'node:path';
import { root } from '../helpers.js';

const AXE = fs.readFileSync(path.join(root, 'node_modules/axe-core/axe.min.js'), 'utf8');
const AXE_OPTIONS = {
  runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
  rules: { 'label-content-name-mismatch': { enabled: true } },          // experimental: off unless named
  resultTypes: ['violations'],
};

/** axe over the whole document (shadow roots included): its violations, one line per rule and node. */
export async function axe(page) {
  if (!(await page.evaluate(() => Boolean(window.axe)))) await page.evaluate(AXE);
  const violations = await page.evaluate((o) => window.axe.run(document, o).then((r) => r.violations), AXE_OPTIONS);
  return violations.flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}): ${n.target.join(' >>> ')} — ${(n.failureSummary ?? '').split('\n').slice(1).join(' ').trim()}`));
}

/** The message of a failed check: how many, where, one line each. */
export const axeReport = (found, where) => `${found.length} violations ${where}:\n  ${found.join('\n  ')}`;
