// ESLint (eslint.config.js, `npm run lint`, the first step of `npm test`): the rule that keeps a
// function on a screen works at its limit, and the files of issue 21's lint change stay clean.
// The whole repository is `npm run lint`'s to check (other work is still fixing its files).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ESLint } from 'eslint';
import { MAX_FUNCTION_LINES } from '../../eslint.config.js';
import { root } from '../helpers.js';

const eslint = new ESLint({ cwd: root });   // finds eslint.config.js, as `npx eslint .` does

// a module whose one function has `lines` lines that count, plus blank and comment lines that
// do not (the rule skips both)
function moduleWithFunction(lines) {
  const body = Array.from({ length: lines - 4 }, (_, i) => `  s += ${i};`);
  for (let i = 0; i < 5; i++) body.splice(10 * i + 5, 0, '', `  // a comment, not counted (${i})`);
  return ['export function long() {', '  let s = 0;', ...body, '  return s;', '}', ''].join('\n');
}

async function lint(text, file) {
  const [result] = await eslint.lintText(text, { filePath: path.join(root, file) });
  return result.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

test(`max-lines-per-function: ${MAX_FUNCTION_LINES + 1} lines in web/ is an error, ${MAX_FUNCTION_LINES} is not (blank lines and comments aside)`, async () => {
  assert.equal(MAX_FUNCTION_LINES, 80);
  const over = moduleWithFunction(81), at = moduleWithFunction(80);
  assert.equal(over.split('\n').filter((l) => l.trim() && !l.trim().startsWith('//')).length, 81);
  assert.equal(at.split('\n').length, 80 + 10 + 1, '80 lines, 5 blank, 5 comments, the last newline');
  assert.deepEqual(await lint(over, 'web/core/x.js'), ['max-lines-per-function: Function \'long\' has too many lines (81). Maximum allowed is 80.']);
  assert.deepEqual(await lint(at, 'web/core/x.js'), []);
  // tests are exempt (their cases are long test() bodies), the rule's only override
  assert.deepEqual(await lint(over, 'tests/unit/x.test.js'), []);
});

// issue 21: the files whose findings this change fixed (the others are fixed by their owners)
const OWNED = ['eslint.config.js', 'bench', 'scripts', 'tests', 'web/pool', 'web/page', 'web/heatmap', 'web/rng', 'web/core/errors.js', 'web/core/ops.js'];
const NOT_OWNED = [/^scripts\/serve\.js$/, /^web\/heatmap\/text\.js$/, /^tests\/unit\/hostile-[^/]*\.test\.js$/, /^tests\/unit\/model-[^/]*\.test\.js$/, /^tests\/fuzz\/model-load\.test\.js$/];

test('no ESLint finding in the files of issue 21\'s lint change', { timeout: 300000 }, async () => {
  const results = await eslint.lintFiles(OWNED);
  const files = results.map((r) => path.relative(root, r.filePath).split(path.sep).join('/')).filter((f) => !NOT_OWNED.some((re) => re.test(f)));
  assert.ok(files.includes('web/pool/pool.js') && files.includes('tests/unit/lint.test.js') && files.length > 80, `${files.length} files linted`);
  const findings = results.filter((r) => files.includes(path.relative(root, r.filePath).split(path.sep).join('/')))
    .flatMap((r) => r.messages.map((m) => `${path.relative(root, r.filePath)}:${m.line}:${m.column} ${m.ruleId}: ${m.message}`));
  assert.deepEqual(findings, []);
});
