// SPDX-License-Identifier: ISC
// The official TypeScript SDK client (v1) against mcpd's gateway, as an
// agent would run it: the stdio client transport spawns COMMAND ARGS (a
// relay to mcpd's socket), or the Streamable HTTP one posts to URL with the
// token. The commands it takes on stdin are gateway-commands.mjs's.
// usage: node gateway-client.mjs PEERS_DIR COMMAND [ARGS...]
//        node gateway-client.mjs PEERS_DIR --http URL TOKEN

import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { serve } from './gateway-commands.mjs';

const [peers, command, ...args] = process.argv.slice(2);
const require = createRequire(join(peers, 'package.json'));
const sdk = (path) => import(pathToFileURL(
    require.resolve(`@modelcontextprotocol/sdk/${path}`)).href);

const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const { StreamableHTTPClientTransport } =
    await sdk('client/streamableHttp.js');
const { ToolListChangedNotificationSchema } = await sdk('types.js');

const client = new Client({ name: 'mcpd-gateway-test', version: '1' });
let changed = 0;
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
	changed++;
});

await serve({
	client,
	// --http URL TOKEN: Streamable HTTP to mcpd --listen-http.
	connect: () => client.connect(command === '--http' ?
	    new StreamableHTTPClientTransport(new URL(args[0]), {
		requestInit: { headers: {
		    Authorization: `Bearer ${args[1]}` } } }) :
	    new StdioClientTransport({ command, args, stderr: 'inherit' })),
	callTool: (name, a, options) => client.callTool({ name,
	    arguments: a }, undefined, options),
	changes: () => changed,
	takeChanges: () => {
		const r = { changed };
		changed = 0;
		return r;
	},
	info: () => ({ server: client.getServerVersion() ?? null }),
});
