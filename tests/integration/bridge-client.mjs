// SPDX-License-Identifier: ISC
// The official TypeScript SDK client (v1) over `mcpctl bridge`, for the
// tests of the bridge across mcpd's restarts (test_bridge_reconnect.py).
// It connects once and never again. Commands come on stdin, one JSON
// object per line with a "tag", and run at once, concurrently: each is
// answered by one JSON line with the same tag when it ends.
//   {"op": "tools"}                   -> {"tools": [names]}
//   {"op": "call", "name", "args"}    -> {"result"} or {"error"}
//   {"op": "subscribe", "uri"}        -> {"result"} or {"error"}
//   {"op": "level", "level"}          -> {"result"} or {"error"}
//   {"op": "seen"}                    -> {"updated": [uris], "changed":
//                                         {tools, prompts, resources},
//                                         "messages": [levels]}
//   {"op": "quit"}
// An error is {code, message, data} as the SDK gives it.
// usage: node bridge-client.mjs PEERS_DIR COMMAND [ARGS...]

import { createInterface } from 'node:readline';

import { sdkOf } from './sdk-load.mjs';

const [peers, command, ...args] = process.argv.slice(2);
const sdk = sdkOf(peers);

const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const types = await sdk('types.js');

const say = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
const failed = (e) => ({ error: { code: e?.code ?? null,
    message: String(e?.message ?? e), data: e?.data ?? null } });

const client = new Client({ name: 'mcpd-bridge-test', version: '1' },
    { capabilities: {} });
const updated = [];
const messages = [];
const changed = { tools: 0, prompts: 0, resources: 0 };
client.setNotificationHandler(types.ResourceUpdatedNotificationSchema,
    (n) => { updated.push(n.params.uri); });
client.setNotificationHandler(types.ToolListChangedNotificationSchema,
    () => { changed.tools++; });
client.setNotificationHandler(types.PromptListChangedNotificationSchema,
    () => { changed.prompts++; });
client.setNotificationHandler(types.ResourceListChangedNotificationSchema,
    () => { changed.resources++; });
client.setNotificationHandler(types.LoggingMessageNotificationSchema,
    (n) => { messages.push(n.params.level); });

let closed = false;
// The bridge gets this environment (MCPD_NO_AUTOSTART included), not the
// SDK's default few variables.
const transport = new StdioClientTransport({ command, args,
    env: process.env, stderr: 'inherit' });
transport.onclose = () => { closed = true; };
try {
	await client.connect(transport);
} catch (e) {
	say({ tag: 'connect', ...failed(e) });
	process.exit(1);
}
say({ tag: 'connect', connected: true });

// Long calls must not end on the SDK's own 60 s timeout.
const options = { timeout: 600000 };
const ops = {
	tools: () => client.listTools().then((r) => ({
	    tools: r.tools.map((t) => t.name) })),
	call: (c) => client.callTool({ name: c.name, arguments: c.args ?? {} },
	    undefined, options).then((result) => ({ result })),
	subscribe: (c) => client.subscribeResource({ uri: c.uri })
	    .then((result) => ({ result })),
	level: (c) => client.setLoggingLevel(c.level)
	    .then((result) => ({ result })),
	seen: async () => ({ updated, changed, messages, closed }),
};

for await (const line of createInterface({ input: process.stdin })) {
	const c = JSON.parse(line);
	if (c.op === 'quit')
		break;
	const op = ops[c.op];
	if (op === undefined) {
		say({ tag: c.tag, error: { message: `unknown op ${c.op}` } });
		continue;
	}
	op(c).then((r) => say({ tag: c.tag, ...r }),
	    (e) => say({ tag: c.tag, ...failed(e) }));
}
await client.close();
