// SPDX-License-Identifier: MIT
// tests/export_browser.sh's web server: speedscope's built files and one
// profile, on 127.0.0.1 at a port the kernel picks, read-only.
//
//   node serve.mjs DIST PROFILE PORTFILE
//
// GET /profile.folded is PROFILE; any other path a file under DIST (no
// path leaves it: ".." and links out are 404). The port is written to
// PORTFILE (through a rename: whoever waits for it never reads half) once
// the server listens. It runs until it is killed.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const [dist, profile, portfile] = process.argv.slice(2);
if (!dist || !profile || !portfile) {
	process.stderr.write('usage: node serve.mjs DIST PROFILE PORTFILE\n');
	process.exit(2);
}
const root = fs.realpathSync(dist);
const types = {
	'.html': 'text/html; charset=utf-8',
	'.js': 'text/javascript',
	'.css': 'text/css',
	'.json': 'application/json',
	'.wasm': 'application/wasm',
	'.png': 'image/png',
	'.ico': 'image/x-icon',
	'.woff2': 'font/woff2',
	'.txt': 'text/plain; charset=utf-8',
};

function send(res, code, type, body) {
	res.writeHead(code, { 'content-type': type, 'cache-control': 'no-store' });
	res.end(body);
}

const server = http.createServer((req, res) => {
	let p;
	try {
		p = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname);
	} catch {
		return send(res, 400, 'text/plain', 'bad path\n');
	}
	if (req.method !== 'GET' && req.method !== 'HEAD')
		return send(res, 405, 'text/plain', 'GET only\n');
	if (p === '/profile.folded')
		return send(res, 200, 'text/plain; charset=utf-8', fs.readFileSync(profile));
	let file;
	try {
		file = fs.realpathSync(path.join(root, p === '/' ? 'index.html' : p));
	} catch {
		return send(res, 404, 'text/plain', 'not found\n');
	}
	if (!file.startsWith(root + path.sep) || !fs.statSync(file).isFile())
		return send(res, 404, 'text/plain', 'not found\n');
	send(res, 200, types[path.extname(file)] || 'application/octet-stream', fs.readFileSync(file));
});

server.listen(0, '127.0.0.1', () => {
	fs.writeFileSync(portfile + '.tmp', String(server.address().port));
	fs.renameSync(portfile + '.tmp', portfile);
});
