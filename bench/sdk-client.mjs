// SPDX-License-Identifier: ISC
// Calls a tool N times at concurrency C through the official TypeScript SDK
// client, over Streamable HTTP (the default), HTTP+SSE or stdio, and prints
// mcpd-bench's one-line report.
//
// usage: node bench/sdk-client.mjs [OPTIONS] URL
//        node bench/sdk-client.mjs [OPTIONS] --stdio -- COMMAND [ARG...]
// OPTIONS: [-n CALLS] [-c CONCURRENCY] [-w WARMUP] [-t TIMEOUT_S]
//          [--peers DIR] [--sse] [-H 'NAME: VALUE']... [--tool NAME]
//          [--mode LABEL]
// --sse speaks HTTP+SSE to URL instead of Streamable HTTP; -H adds a header
// to every HTTP request; --stdio spawns COMMAND with the SDK's
// StdioClientTransport and adds child_rss_kb= to the report: the child's
// VmRSS after the last call (the child alone, not its own children). --tool
// names the tool (default echo), --mode the report's mode= (default
// sdk-direct).
// The SDK is taken from DIR/node_modules (default: the repository's
// tests/peers), so that the script runs from anywhere without an npm install
// of its own. Like mcpd-bench, the first WARMUP calls are made on the same
// stream but not measured, and each of the C callers sends its next call as
// soon as its previous one is answered.

import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

const SDK = '@modelcontextprotocol/sdk';
const EXIT_USAGE = 2;

function usage(why) {
	if (why) process.stderr.write(`sdk-client: ${why}\n`);
	process.stderr.write('usage: sdk-client.mjs [-n CALLS] [-c CONCURRENCY] ' +
	    '[-w WARMUP] [-t TIMEOUT_S] [--peers DIR] [--sse] ' +
	    '[-H \'NAME: VALUE\']... [--tool NAME] [--mode LABEL] ' +
	    '(URL | --stdio -- COMMAND [ARG...])\n');
	process.exit(EXIT_USAGE);
}

function number(name, s, min) {
	const v = Number(s);

	if (!/^[0-9]+$/.test(s ?? '') || v < min)
		usage(`${name} wants an integer >= ${min}`);
	return v;
}

function header(headers, s) {
	const colon = (s ?? '').indexOf(':');

	if (colon < 1)
		usage('-H wants NAME: VALUE');
	headers[s.slice(0, colon).trim()] = s.slice(colon + 1).trim();
}

function options(argv) {
	const here = dirname(fileURLToPath(import.meta.url));
	const o = { calls: 10000, concurrency: 1, warmup: 200, timeout_s: 300,
	    peers: join(here, '..', 'tests', 'peers'), url: null,
	    transport: 'http', headers: {}, tool: 'echo', mode: 'sdk-direct',
	    command: null };

	for (let i = 0; i < argv.length; i++) {
		const a = argv[i];

		if (a === '-n' || a === '--calls')
			o.calls = number(a, argv[++i], 1);
		else if (a === '-c' || a === '--concurrency')
			o.concurrency = number(a, argv[++i], 1);
		else if (a === '-w' || a === '--warmup')
			o.warmup = number(a, argv[++i], 0);
		else if (a === '-t' || a === '--timeout')
			o.timeout_s = number(a, argv[++i], 1);
		else if (a === '--peers' && i + 1 < argv.length)
			o.peers = argv[++i];
		else if (a === '--sse')
			o.transport = 'sse';
		else if (a === '--stdio')
			o.transport = 'stdio';
		else if (a === '-H' || a === '--header')
			header(o.headers, argv[++i]);
		else if (a === '--tool' && i + 1 < argv.length)
			o.tool = argv[++i];
		else if (a === '--mode' && i + 1 < argv.length)
			o.mode = argv[++i];
		else if (a === '--' && o.transport === 'stdio') {
			o.command = argv.slice(i + 1);
			break;
		} else if (a.startsWith('-') || o.url !== null)
			usage(`unexpected argument ${a}`);
		else
			o.url = a;
	}
	if (o.transport === 'stdio') {
		if (o.url !== null || !o.command?.length)
			usage('--stdio wants -- COMMAND [ARG...] and no URL');
	} else if (o.url === null)
		usage('give the URL of the server');
	return o;
}

// Imports SUBPATH of the SDK the way an ESM import from DIR would: the
// package is looked for in the node_modules directories require would
// search, the file found through its "import" export (an exact key or the
// "./*" pattern).
async function sdk_import(peers, subpath) {
	const require = createRequire(join(peers, 'package.json'));
	const root = (require.resolve.paths(SDK) ?? [])
	    .map((d) => join(d, SDK))
	    .find((d) => existsSync(join(d, 'package.json')));

	if (root === undefined)
		throw new Error(`${SDK} is not installed under ${peers}`);
	const pkg = JSON.parse(readFileSync(join(root, 'package.json')));
	const key = `./${subpath}`;
	const target = pkg.exports?.[key]?.import ??
	    pkg.exports?.['./*']?.import?.replace('*', subpath);
	if (!target)
		throw new Error(`${SDK} exports no ${key} for import`);
	return import(pathToFileURL(join(root, target)).href);
}

// The nearest-rank percentile P of sorted latencies, as mcpd-bench takes it.
function percentile(sorted, p) {
	const rank = Math.floor((sorted.length * p + 99) / 100);

	return sorted[rank > 0 ? rank - 1 : 0];
}

async function run(o, client) {
	const total = o.warmup + o.calls;
	const lat = [];
	let issued = 0;
	let start = performance.now();

	async function caller() {
		while (issued < total) {
			const i = issued++;
			const t0 = performance.now();

			if (i === o.warmup) start = t0;
			const r = await client.callTool({ name: o.tool,
			    arguments: { message: 'bench' } });
			if (r.isError)
				throw new Error(`call ${i}: the tool returned isError`);
			if (i >= o.warmup)
				lat.push(Math.round((performance.now() - t0) * 1000));
		}
	}

	const callers = [];
	for (let k = 0; k < o.concurrency; k++)
		callers.push(caller());
	await Promise.all(callers);
	const secs = (performance.now() - start) / 1000;
	lat.sort((a, b) => a - b);
	return { rate: secs > 0 ? lat.length / secs : 0, lat };
}

// undici drops the abort listener that each fetch puts on the transport's
// signal only when the request is garbage-collected, so a long run on one
// transport trips Node's listener-leak warning, printed once per call past
// the limit: noise (and cost) that is not the SDK's per-call work.
function quiet_listener_warnings() {
	process.removeAllListeners('warning');
	process.on('warning', (w) => {
		if (w.name !== 'MaxListenersExceededWarning')
			process.stderr.write(`sdk-client: ${w.name}: ${w.message}\n`);
	});
}

// The transport O asks for, made from the SDK's own classes.
async function transport_new(o) {
	const requestInit = { headers: o.headers };

	if (o.transport === 'stdio') {
		const { StdioClientTransport } =
		    await sdk_import(o.peers, 'client/stdio.js');
		return new StdioClientTransport({ command: o.command[0],
		    args: o.command.slice(1), env: process.env,
		    stderr: 'inherit' });
	}
	if (o.transport === 'sse') {
		const { SSEClientTransport } =
		    await sdk_import(o.peers, 'client/sse.js');
		return new SSEClientTransport(new URL(o.url), { requestInit });
	}
	const { StreamableHTTPClientTransport } =
	    await sdk_import(o.peers, 'client/streamableHttp.js');
	return new StreamableHTTPClientTransport(new URL(o.url),
	    { requestInit });
}

// VmRSS of process PID in kB, or -1 when it cannot be read.
function rss_kb(pid) {
	try {
		const m = /^VmRSS:\s+([0-9]+) kB$/m.exec(
		    readFileSync(`/proc/${pid}/status`, 'utf8'));
		return m ? Number(m[1]) : -1;
	} catch {
		return -1;
	}
}

async function main() {
	const o = options(process.argv.slice(2));

	quiet_listener_warnings();
	const { Client } = await sdk_import(o.peers, 'client/index.js');
	const transport = await transport_new(o);
	const client = new Client({ name: 'mcpd-bench-sdk', version: '1' });
	const deadline = setTimeout(() => {
		process.stderr.write(`sdk-client: timed out after ${o.timeout_s} s\n`);
		process.exit(1);
	}, o.timeout_s * 1000);

	await client.connect(transport);
	const { rate, lat } = await run(o, client);
	clearTimeout(deadline);
	let line = `mode=${o.mode} concurrency=${o.concurrency} ` +
	    `calls=${lat.length} calls_per_s=${rate.toFixed(1)} ` +
	    `p50_us=${percentile(lat, 50)} p99_us=${percentile(lat, 99)}`;
	if (o.transport === 'stdio')
		line += ` child_rss_kb=${rss_kb(transport.pid)}`;
	console.log(line);
	// End the session on the server, as mcpd does on unload.
	if (o.transport === 'http')
		await transport.terminateSession().catch(() => {});
	await client.close();
}

main().catch((e) => {
	process.stderr.write(`sdk-client: ${e?.stack ?? e}\n`);
	process.exit(1);
});
