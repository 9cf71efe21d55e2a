// SPDX-License-Identifier: ISC
// The official TypeScript SDK client (v1) against mcpd's gateway, as an
// agent would run it: the stdio client transport spawns COMMAND ARGS (a
// relay to mcpd's socket), or the Streamable HTTP one posts to URL with the
// token. The commands it takes on stdin are gateway-commands.mjs's.
// usage: node gateway-client.mjs PEERS_DIR COMMAND [ARGS...]
//        node gateway-client.mjs PEERS_DIR --http URL TOKEN
// MCPD_TEST_CAPS (JSON) is what it declares: with sampling it answers
// "sampled: " and the first message's text (model "mcpd-test-model"); with
// elicitation it accepts with {"name": "Ada"}; with roots it lists
// MCPD_TEST_ROOTS (JSON, default file:///mcpd-test-root), which the command
// "roots" changes. The command "asked" tells what it answered.

import { serve, transportOf } from './gateway-commands.mjs';
import { sdkOf } from './sdk-load.mjs';

const [peers, command, ...args] = process.argv.slice(2);
const sdk = sdkOf(peers);

const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const { StreamableHTTPClientTransport } =
    await sdk('client/streamableHttp.js');
const { ToolListChangedNotificationSchema, CreateMessageRequestSchema,
    ElicitRequestSchema, ListRootsRequestSchema } = await sdk('types.js');

const capabilities = JSON.parse(process.env.MCPD_TEST_CAPS ?? '{}');
const client = new Client({ name: 'mcpd-gateway-test', version: '1' },
    { capabilities });
const asked = [];
const answer = (schema, fn) => client.setRequestHandler(schema, (req) => {
	asked.push([req.method, req.params]);
	return fn(req.params);
});
if (capabilities.sampling)
	answer(CreateMessageRequestSchema, (p) => ({ model: 'mcpd-test-model',
	    role: 'assistant', content: { type: 'text',
	    text: `sampled: ${p.messages[0].content.text}` } }));
if (capabilities.elicitation)
	answer(ElicitRequestSchema, () => ({ action: 'accept',
	    content: { name: 'Ada' } }));
let roots = JSON.parse(process.env.MCPD_TEST_ROOTS ?? 'null') ??
    [{ uri: 'file:///mcpd-test-root', name: 'mcpd test root' }];
if (capabilities.roots)
	answer(ListRootsRequestSchema, () => ({ roots }));
let changed = 0;
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
	changed++;
});

await serve({
	client,
	connect: () => client.connect(transportOf(
	    StreamableHTTPClientTransport, StdioClientTransport, command,
	    args)),
	callTool: (name, a, options) => client.callTool({ name,
	    arguments: a }, undefined, options),
	changes: () => changed,
	takeChanges: () => {
		const r = { changed };
		changed = 0;
		return r;
	},
	info: () => ({ server: client.getServerVersion() ?? null }),
	asked: () => asked.splice(0),
	setRoots: (list) => {
		roots = list;
		return client.sendRootsListChanged();
	},
});
