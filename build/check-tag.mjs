#!/usr/bin/env node
// Release guard: the pushed tag must be exactly `v` + package.json's version, the only version there is.
// Usage: node build/check-tag.mjs <tag>   (the workflow passes $GITHUB_REF_NAME)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

/** @returns {string | null} null when the tag releases `version`, else the reason it does not. */
export function tagProblem(tag, version) {
  if (!SEMVER.test(version)) return `package.json version ${JSON.stringify(version)} is not a semantic version (x.y.z)`;
  if (!tag) return 'no tag given';
  if (tag !== `v${version}`) return `tag ${tag} does not match package.json version ${version} (expected v${version})`;
  return null;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const tag = process.argv[2] ?? process.env.GITHUB_REF_NAME ?? '';
  const problem = tagProblem(tag, version);
  if (problem) {
    process.stderr.write(`check-tag: ${problem}\n`);
    process.exit(1);
  }
  process.stdout.write(`check-tag: ${tag} releases version ${version}\n`);
}
