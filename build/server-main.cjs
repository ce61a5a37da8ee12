// dist/server/main.cjs (build.mjs copies this file there; `npm start` requires it, and
// dist/server/main.js only imports it): runs the server bundle, server.cjs, from V8's
// code cache when the build left a valid one beside it. Compiling the 1 MB bundle and the functions a
// start calls was a third of the CPU time from spawn to the first answer; with the cache V8
// deserializes that code instead. Node 20 has no code cache for ES modules, hence CommonJS and vm.
//
// V8 checks a cache against the source's length only, so the cache file starts with the SHA-256 of
// the bundle it was made from; any other bundle compiles from source, as one without a cache does.
// HOMEFLEET_WRITE_CODE_CACHE=1 (the build's cache step, nothing else) writes the cache at exit, after
// the server has started, answered a request and stopped, so it holds the code of all three.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');
const vm = require('node:vm');

const filename = path.join(__dirname, 'server.cjs');
const cacheFile = `${filename}.cache`;
const writeCache = Boolean(process.env.HOMEFLEET_WRITE_CODE_CACHE);

/** The compiled bundle; the file's bytes and the cache are not kept past this (a megabyte and more of RSS). */
function compile() {
  // The bundle is ASCII (build.mjs), so latin1 reads it straight into a one-byte string. The digest is
  // of the bytes as read: hashing the string made them again from it first.
  const bytes = fs.readFileSync(filename);
  const digest = crypto.createHash('sha256').update(bytes).digest();
  const source = bytes.toString('latin1');
  let cachedData;
  try {
    const cache = writeCache ? undefined : fs.readFileSync(cacheFile);
    if (cache?.subarray(0, digest.length).equals(digest)) cachedData = cache.subarray(digest.length);
  } catch {
    // No cache: the bundle compiles from source.
  }
  const script = new vm.Script(source, { filename, cachedData });
  if (writeCache) process.once('exit', () => fs.writeFileSync(cacheFile, Buffer.concat([digest, script.createCachedData()])));
  return script;
}

const bundle = new Module(filename);
bundle.filename = filename;
bundle.paths = Module._nodeModulePaths(path.dirname(filename));
compile().runInThisContext().call(bundle.exports, bundle.exports, Module.createRequire(filename), bundle, filename, path.dirname(filename));
