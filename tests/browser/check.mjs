// SPDX-License-Identifier: MIT
// tests/export_browser.sh's browser side: drive speedscope, in a Chromium
// the script started, over the DevTools protocol (playwright-core), and
// read from the page what it made of the folded export.
//
//   node check.mjs MODULES CDP SERVER EXPECT OUTDIR
//
// MODULES holds node_modules (npm ci of tests/browser/package-lock.json),
// CDP the browser's DevTools endpoint (http://127.0.0.1:PORT), SERVER
// serve.mjs's (speedscope at /index.html, the profile at
// /profile.folded), EXPECT a JSON file:
//   { "title": a title for the page, "requests": [names],
//     "frames": { name: [total, self], ... } }
// speedscope is opened with the profile and the title in its URL's hash
// (#profileURL=...&title=...).
// speedscope draws its flame charts on a canvas; its sandwich view lists
// every frame in a table of DOM text, with its total and self weight (only
// the rows in sight are in the DOM: the table is scrolled through).
// Every frame of EXPECT must be a row with those weights, the requests
// among them. Screenshots go to OUTDIR: the flame chart as loaded, the
// sandwich view with the first request selected (its callers and callees),
// and the left-heavy flame chart. The browser is not closed here: the
// script that started it stops it by its pid.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const [modules, cdp, server, expectFile, outdir] = process.argv.slice(2);
if (!outdir) {
	process.stderr.write('usage: node check.mjs MODULES CDP SERVER EXPECT OUTDIR\n');
	process.exit(2);
}
const { chromium } = createRequire(path.join(modules, 'package.json'))('playwright-core');
const want = JSON.parse(fs.readFileSync(expectFile, 'utf8'));
const url = `${server}/index.html#profileURL=${encodeURIComponent(`${server}/profile.folded`)}` +
	    `&title=${encodeURIComponent(want.title)}`;
const problems = [];

// A weight as the table prints it ("1,234"); NaN for a form not known.
function number(s) {
	const t = s.replace(/,/g, '');
	return /^[0-9]+(\.[0-9]+)?$/.test(t) ? Number(t) : NaN;
}

// The sandwich table's rows, name -> [total, self], read as it is
// scrolled from top to bottom.
async function tableRows(page) {
	const rows = new Map();
	const read = async () => {
		const text = await page.evaluate(() => document.body.innerText);
		for (const m of text.matchAll(/^(\S+) \([^)\n]*\)\n\t(\S+) \([^)\n]*\)\n\t(.*)$/gm))
			rows.set(m[3], [number(m[1]), number(m[2])]);
		return text;
	};
	fs.writeFileSync(path.join(outdir, 'sandwich.txt'), await read());
	// the scroller: the tallest element that scrolls
	const scroller = await page.evaluateHandle(() => {
		let best = null;
		for (const e of document.querySelectorAll('*')) {
			const y = getComputedStyle(e).overflowY;
			if ((y === 'auto' || y === 'scroll') && e.scrollHeight > e.clientHeight + 1 &&
			    (!best || e.scrollHeight > best.scrollHeight))
				best = e;
		}
		return best;
	});
	if (await scroller.evaluate((e) => e === null))
		return rows;
	for (let i = 0; i < 100000; i++) {
		const end = await scroller.evaluate((e) => {
			e.scrollTop += Math.max(1, e.clientHeight / 2);
			return e.scrollTop + e.clientHeight >= e.scrollHeight - 1;
		});
		await page.evaluate(
			() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
		await read();
		if (end)
			break;
	}
	await scroller.evaluate((e) => {
		e.scrollTop = 0;
	});
	return rows;
}

const browser = await chromium.connectOverCDP(cdp, { timeout: 30000 });
try {
	const context = browser.contexts()[0] ?? (await browser.newContext());
	const page = await context.newPage();
	const pageErrors = [];
	page.on('pageerror', (e) => pageErrors.push(String(e)));
	await page.setViewportSize({ width: 1400, height: 900 });
	await page.goto(url, { timeout: 30000 });
	// The title is shown once the profile is imported.
	await page.waitForFunction((t) => document.body.innerText.includes(t), want.title, {
		timeout: 30000,
	});
	await page.waitForTimeout(500);
	await page.screenshot({ path: path.join(outdir, 'speedscope-time-order.png') });

	await page.keyboard.press('3'); // the sandwich view
	await page.waitForFunction(() => document.body.innerText.includes('Symbol Name'), null, {
		timeout: 15000,
	});
	const rows = await tableRows(page);
	let compared = 0;
	for (const [name, [total, self]] of Object.entries(want.frames)) {
		const row = rows.get(name);
		if (!row) {
			problems.push(`frame not in the sandwich table: ${JSON.stringify(name)}`);
			continue;
		}
		if (Number.isNaN(row[0]) || Number.isNaN(row[1]))
			continue;
		compared++;
		if (Math.abs(row[0] - total) > 1e-6 || Math.abs(row[1] - self) > 1e-6)
			problems.push(`${JSON.stringify(name)}: total ${row[0]}, self ${row[1]}; ` +
				      `the folded file says ${total}, ${self}`);
	}
	for (const r of want.requests)
		if (!rows.has(r))
			problems.push(`request not in the sandwich table: ${JSON.stringify(r)}`);
	if (rows.size !== Object.keys(want.frames).length)
		problems.push(`the table has ${rows.size} frames, the folded file ` +
			      `${Object.keys(want.frames).length}`);
	if (!compared)
		problems.push('no weight of the table could be read as a number');

	if (want.requests.length) {
		await page.getByText(want.requests[0], { exact: true }).first().click();
		await page.waitForTimeout(1000);
	}
	await page.screenshot({ path: path.join(outdir, 'speedscope-sandwich.png') });
	await page.keyboard.press('2'); // left heavy: the causal frames at the root
	await page.waitForTimeout(1000);
	await page.screenshot({ path: path.join(outdir, 'speedscope-left-heavy.png') });
	for (const e of pageErrors)
		problems.push(`page error: ${e}`);
	console.log(`speedscope: ${rows.size} frames in the sandwich table, ${compared} weights ` +
		    `compared, requests ${JSON.stringify(want.requests)}`);
} catch (e) {
	problems.push(`the page: ${e.message}`);
} finally {
	// connectOverCDP: this disconnects; the browser itself is the
	// script's to stop
	await browser.close().catch(() => {});
}
for (const p of problems)
	console.log(`FAIL: ${p}`);
process.exit(problems.length ? 1 : 0);
