// SPDX-License-Identifier: ISC
// The official TypeScript SDK v2 client (@modelcontextprotocol/client)
// against mcpd's gateway, as an agent would run it: the stdio client
// transport spawns COMMAND ARGS (a relay to mcpd's socket), or the
// Streamable HTTP one posts to URL with the token. ERA is the SDK's
// versionNegotiation mode: "legacy" (its default: initialize, 2025-11-25)
// or "auto" (server/discover first, then 2026-07-28 where the server offers
// it). List changes are taken as the SDK offers them to users: the
// listChanged option, which refreshes the list itself (notifications in the
// 2025 era, a subscriptions/listen stream in 2026-07-28). The commands it
// takes on stdin are gateway-commands.mjs's; `changed` also says the tool
// names the SDK fetched after the last change.
// usage: node gateway-client-v2.mjs PEERS_DIR ERA COMMAND [ARGS...]
//        node gateway-client-v2.mjs PEERS_DIR ERA --http URL TOKEN

import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { failed, serve, transportOf } from './gateway-commands.mjs';

const [peers, era, command, ...args] = process.argv.slice(2);
const require = createRequire(join(peers, 'package.json'));
const sdk = (path) => import(pathToFileURL(require.resolve(path)).href);

const { Client, StreamableHTTPClientTransport } =
    await sdk('@modelcontextprotocol/client');
const { StdioClientTransport } = await sdk('@modelcontextprotocol/client/stdio');

let changed = 0, tools = null, changeError = null;
const errors = [];
const client = new Client({ name: 'mcpd-gateway-test-v2', version: '1' }, {
	versionNegotiation: { mode: era },
	listChanged: { tools: { debounceMs: 0, onChanged: (error, list) => {
		changed++;
		changeError = error ? failed(error).error : null;
		tools = list ? list.map((t) => t.name) : null;
	} } },
});
// What the SDK reports outside any request (a refused subscription, say).
client.onerror = (e) => errors.push(String(e?.message ?? e));

await serve({
	client,
	connect: () => client.connect(transportOf(
	    StreamableHTTPClientTransport, StdioClientTransport, command,
	    args)),
	callTool: (name, a, options) => client.callTool({ name,
	    arguments: a }, options),
	changes: () => changed,
	takeChanges: () => {
		const r = { changed, tools, error: changeError };
		changed = 0;
		return r;
	},
	info: () => ({ era: client.getProtocolEra() ?? null,
	    version: client.getNegotiatedProtocolVersion() ?? null,
	    server: client.getServerVersion() ?? null,
	    subscribed: client.autoOpenedSubscription !== undefined,
	    errors }),
});
