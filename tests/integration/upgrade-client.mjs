// SPDX-License-Identifier: ISC
// The official TypeScript SDK client (v1) calling tools in a loop, one call
// at a time, as an agent that never stops while mcpd upgrades in place
// (test_upgrade.py; bench/upgrade.bash for the longest pause). It connects
// once, over `mcpctl bridge` (COMMAND ARGS) or Streamable HTTP (--http URL
// TOKEN), and never again. Commands on stdin, one per line, each answered
// with one JSON line on stdout:
//   loop TOOL[,TOOL...] PREFIX
//                        -> {"looping": true}: calls each tool in turn with
//                           {"message": "PREFIX-<n>"}, the next as soon as
//                           the last is answered (a result that does not
//                           echo the message counts as a failure)
//   count                -> {"answers": n, "failures": n} so far
//   stop                 -> {"calls", "failures": [{at, tool, message,
//                           error}],
//                           "answers": [ms...], "longest_gap_ms",
//                           "longest_gap_at", "median_gap_ms"}: the loop
//                           ends after the call in flight; answers are the
//                           wall clock (ms since the epoch) of each
//                           answer, failures included; gaps are between
//                           consecutive answers
//   quit                 -> ends the loop, and the session (an HTTP one
//                           with DELETE)
// An error is gateway-commands.mjs's, plus "cause": the code and message
// of what a failed fetch says underneath (an HTTP connection closed).
// usage: node upgrade-client.mjs PEERS_DIR COMMAND [ARGS...]
//        node upgrade-client.mjs PEERS_DIR --http URL TOKEN

import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';

import { failed, transportOf } from './gateway-commands.mjs';
import { sdkOf } from './sdk-load.mjs';

const [peers, command, ...args] = process.argv.slice(2);
const sdk = sdkOf(peers);

const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const { StreamableHTTPClientTransport } =
    await sdk('client/streamableHttp.js');

const say = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
const now = () => performance.timeOrigin + performance.now();

const client = new Client({ name: 'mcpd-upgrade-test', version: '1' },
    { capabilities: {} });
const transport = transportOf(StreamableHTTPClientTransport,
    StdioClientTransport, command, args);
try {
	await client.connect(transport);
} catch (e) {
	say({ ...failed(e), at: 'connect' });
	process.exit(1);
}
say({ connected: true });

// What a failure was, with what a failed fetch says underneath.
const failure = (e) => {
	const r = failed(e);
	if (e?.cause !== undefined)
		r.error.cause = { code: e.cause?.code ?? null,
		    message: String(e.cause?.message ?? e.cause) };
	return r.error;
};

let looping = null;
let stopping = false;
const answers = [];
const failures = [];

async function loop(tools, prefix) {
	for (let n = 0; !stopping; n++) {
		const tool = tools[n % tools.length];
		const message = `${prefix}-${n}`;
		let error = null;
		try {
			const r = await client.callTool({ name: tool,
			    arguments: { message } });
			if (r.isError || r.structuredContent?.message !== message)
				error = { code: null, message: 'a wrong answer',
				    result: r };
		} catch (e) {
			error = failure(e);
		}
		const at = now();
		answers.push(at);
		if (error !== null)
			failures.push({ at, tool, message, error });
	}
}

function summary() {
	const gaps = [];
	let longest = 0, longestAt = null;

	for (let i = 1; i < answers.length; i++) {
		const gap = answers[i] - answers[i - 1];
		gaps.push(gap);
		if (gap > longest) {
			longest = gap;
			longestAt = answers[i - 1];
		}
	}
	gaps.sort((a, b) => a - b);
	return { calls: answers.length, failures, answers,
	    longest_gap_ms: longest, longest_gap_at: longestAt,
	    median_gap_ms: gaps.length ? gaps[(gaps.length - 1) >> 1] : null };
}

for await (const line of createInterface({ input: process.stdin })) {
	const [verb, list, prefix] = line.split(' ');

	if (verb === 'quit') {
		stopping = true;
		await looping;
		break;
	}
	if (verb === 'loop' && looping === null) {
		looping = loop(list.split(','), prefix);
		say({ looping: true });
	} else if (verb === 'count') {
		say({ answers: answers.length, failures: failures.length });
	} else if (verb === 'stop' && looping !== null) {
		stopping = true;
		await looping;
		say(summary());
	} else {
		say({ error: { code: null, message: `cannot ${line} now` } });
	}
}
// An HTTP session is ended (DELETE), as a bridge's ends with its socket.
await transport.terminateSession?.();
await client.close();
