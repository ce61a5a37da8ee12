#!/usr/bin/env node
// `npm run bench`: loads the instances page with 10,000 instances in Chromium and prints the time to
// first rows and the gzipped JS size, against a blank page loaded in the same run from a bare
// node:http server (the baseline: what a page costs before any app work).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { chromium } from 'playwright-core';
import { chromiumLaunchOptions } from '../../build/chromium.mjs';
import { root, sampleInstances, startHeadless } from '../../build/headless-server.mjs';

const COUNT = 10_000;
const ROUNDS = 5;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const assets = path.join(root, 'dist', 'renderer', 'assets');
// The build's list of what the first load fetches (main) and what each lazy page adds (the usage page).
const bundle = JSON.parse(fs.readFileSync(path.join(root, 'dist', 'renderer', 'bundle.json'), 'utf8'));
const sizeOf = (files) => ({
  bytes: files.reduce((sum, f) => sum + fs.statSync(path.join(assets, f)).size, 0),
  gzip: files.reduce((sum, f) => sum + zlib.gzipSync(fs.readFileSync(path.join(assets, f)), { level: 9 }).length, 0),
});
const main = sizeOf(bundle.main);
const usage = sizeOf(bundle.lazy.Usage ?? []);
const MAIN_BUDGET = 30 * 1024;

const blank = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>blank</title><p>blank</p>'));
blank.listen(0, '127.0.0.1');
await new Promise((resolve) => blank.once('listening', resolve));
const blankUrl = `http://127.0.0.1:${blank.address().port}/`;

const server = await startHeadless();
const browser = await chromium.launch(await chromiumLaunchOptions());
try {
  const seeding = Date.now();
  await server.seedInstances(sampleInstances(COUNT));
  process.stderr.write(`seeded ${COUNT} instances in ${Date.now() - seeding} ms\n`);
  const signedIn = await browser.newContext();
  await server.signInPage(await signedIn.newPage());
  const storageState = await signedIn.storageState();
  await signedIn.close();

  const blankTimes = [];
  const firstRows = [];
  const scrollTimes = [];
  let rendered = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const context = await browser.newContext({ storageState, viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    let started = performance.now();
    await page.goto(blankUrl, { waitUntil: 'load' });
    await page.waitForSelector('p');
    blankTimes.push(performance.now() - started);

    started = performance.now();
    await page.goto(`${server.url}/instances`);
    await page.waitForSelector('table.instances tbody tr[data-vmid]');
    firstRows.push(performance.now() - started);
    await page.waitForFunction((n) => document.querySelector('[data-testid="counts"]')?.textContent?.includes(n), COUNT.toLocaleString('en'));
    rendered = await page.locator('table.instances tbody tr[data-vmid]').count();

    // Jump to the middle of the list and wait until that row is drawn.
    started = performance.now();
    await page.getByTestId('instance-scroller').evaluate((el) => (el.scrollTop = el.scrollHeight / 2));
    await page.waitForFunction(() => {
      const rows = document.querySelectorAll('table.instances tbody tr[data-vmid]');
      const scroller = document.querySelector('[data-testid="instance-scroller"]');
      return rows.length > 0 && scroller && rows[0].getBoundingClientRect().top < scroller.getBoundingClientRect().bottom && rows[rows.length - 1].getBoundingClientRect().bottom > scroller.getBoundingClientRect().top + 100;
    });
    scrollTimes.push(performance.now() - started);
    await context.close();
  }

  const blankMs = median(blankTimes);
  const rowsMs = median(firstRows);
  const scrollMs = median(scrollTimes);
  const lines = [
    `dashboard bench: ${COUNT.toLocaleString('en')} instances, median of ${ROUNDS} rounds, Chromium headless`,
    `blank page load (baseline)      ${blankMs.toFixed(1)} ms`,
    `instances page to first rows    ${rowsMs.toFixed(1)} ms   (${(rowsMs / blankMs).toFixed(1)}× the blank page)`,
    `scroll to the middle, drawn     ${scrollMs.toFixed(1)} ms`,
    `rows in the DOM                 ${rendered} of ${COUNT.toLocaleString('en')}   (${((rendered / COUNT) * 100).toFixed(2)}%)`,
    `main bundle (first load JS)     ${(main.bytes / 1024).toFixed(1)} KiB, ${(main.gzip / 1024).toFixed(1)} KiB gzipped   (${((main.gzip / MAIN_BUDGET) * 100).toFixed(0)}% of the 30 KiB budget)`,
    `usage page chunk (on /usage)    ${(usage.bytes / 1024).toFixed(1)} KiB, ${(usage.gzip / 1024).toFixed(1)} KiB gzipped   (loaded only when the page opens)`,
  ];
  console.log(lines.join('\n'));
  if (main.gzip > MAIN_BUDGET) process.exitCode = 1;
} finally {
  await browser.close();
  await server.stop();
  blank.close();
}
