// rules.js - reading config.json's keys the way every family does: required sizes (under their
// name or Hugging Face's alias), flags with the one value the runtime supports, epsilons that
// float32 can hold. Every refusal is INVALID_MODEL "config: …" naming the key and the value.
import { ErrorCode, fail, describe } from '../../core/errors.js';

const MAX_DIM = 0x7fffffff;     // C int, as web/core/args.js

export const bad = (message) => fail(ErrorCode.INVALID_MODEL, `config: ${message}`);
/** A key present, and not null (HF reads null as absent). */
export const has = (obj, key) => Object.hasOwn(obj, key) && obj[key] !== null && obj[key] !== undefined;

/** A required positive integer under its name or HF's alias (both given: they must agree). */
export function positiveSize(raw, key, alias = null) {
  const a = has(raw, key), b = alias !== null && has(raw, alias);
  if (!a && !b) bad(`${key} is missing${alias ? ` (nor is its alias ${alias} given)` : ''}: expected a positive integer`);
  if (a && b && raw[key] !== raw[alias]) bad(`${key} = ${describe(raw[key])} and its alias ${alias} = ${describe(raw[alias])} disagree`);
  const name = a ? key : alias, value = raw[name];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) bad(`${name} must be a positive integer; received ${describe(value)}`);
  if (value > MAX_DIM) fail(ErrorCode.TOO_LARGE, `config: ${name} = ${value} is above ${MAX_DIM}`);
  return value;
}

/** A boolean key that, when present, must hold `allowed` (meaning: what the other value would do). */
export function flag(raw, key, allowed, meaning) {
  if (!has(raw, key)) return;
  const v = raw[key];
  if (typeof v !== 'boolean') bad(`${key} must be true or false; received ${describe(v)}`);
  if (v !== allowed) bad(`${key}: ${v} is not supported (${meaning}); only ${allowed} is`);
}

/** A positive epsilon that float32, which the runtime computes in, keeps above 0. */
export function epsilonOf(raw, key, fallback) {
  if (!has(raw, key)) return fallback;
  const e = raw[key];
  if (typeof e !== 'number' || !Number.isFinite(e) || e <= 0) bad(`${key} must be a positive finite number; received ${describe(e)}`);
  if (Math.fround(e) === 0) bad(`${key} = ${e} underflows to 0 in float32, which the runtime computes in (the smallest it keeps is about 1.4e-45)`);
  if (!Number.isFinite(Math.fround(e))) bad(`${key} = ${e} is beyond float32's range (about 3.4e38)`);
  return e;
}
