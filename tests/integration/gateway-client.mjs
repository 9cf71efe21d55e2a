// SPDX-License-Identifier: ISC
// The official TypeScript SDK client (v1) against mcpd's gateway, as an
// agent would run it: the stdio client transport spawns COMMAND ARGS (a
// relay to mcpd's socket). Reads commands on stdin, one per line, and
// answers each with one JSON line on stdout, so that a pytest can drive it:
//   tools                    -> {"tools": [names]}
//   call NAME JSON           -> {"result": ...} or {"error": {code, message}}
//   progress NAME JSON       -> as call, plus {"progress": [[p, total]...]}
//   cancel NAME JSON MS      -> aborts the call after MS ms: {"error": ...}
//   changed MS               -> {"changed": n} list_changed seen within MS
//   asked                    -> {"asked": [[method, params]...]} requests
//                               of the server answered since the last asked
//   prompts | resources | templates -> the merged lists
//   prompt NAME JSON | read URI | complete JSON -> the server's answer
//   quit
// usage: node gateway-client.mjs PEERS_DIR COMMAND [ARGS...]
//        node gateway-client.mjs PEERS_DIR --http URL TOKEN
// MCPD_TEST_CAPS (JSON) is what it declares: with sampling it answers
// "sampled: " and the first message's text (model "mcpd-test-model"); with
// elicitation it accepts with {"name": "Ada"}; with roots it lists
// file:///mcpd-test-root.

import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const [peers, command, ...args] = process.argv.slice(2);
const require = createRequire(join(peers, 'package.json'));
const sdk = (path) => import(pathToFileURL(
    require.resolve(`@modelcontextprotocol/sdk/${path}`)).href);

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
if (capabilities.roots)
	answer(ListRootsRequestSchema, () => ({ roots: [
	    { uri: 'file:///mcpd-test-root', name: 'mcpd test root' }] }));
let changed = 0;
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
	changed++;
});
// --http URL TOKEN: Streamable HTTP to mcpd --listen-http, with its token.
await client.connect(command === '--http' ?
    new StreamableHTTPClientTransport(new URL(args[0]), { requestInit: {
	headers: { Authorization: `Bearer ${args[1]}` } } }) :
    new StdioClientTransport({ command, args, stderr: 'inherit' }));

const say = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
const failed = (e) => ({ error: { code: e.code ?? null,
    message: String(e.message ?? e) } });

async function call(name, argsJson, extra) {
	try {
		return { result: await client.callTool({ name,
		    arguments: JSON.parse(argsJson) }, undefined, extra) };
	} catch (e) {
		return failed(e);
	}
}

for await (const line of createInterface({ input: process.stdin })) {
	// VERB NAME JSON [MS]: the JSON may hold spaces, MS is the last word.
	const words = line.split(' ');
	const [verb, name] = words;
	const ms = verb === 'cancel' ? words.pop() : undefined;
	const json = words.slice(2).join(' ');

	if (verb === 'quit')
		break;
	if (verb === 'tools') {
		const r = await client.listTools();
		say({ tools: r.tools.map((t) => t.name), meta: r.tools.map(
		    (t) => t._meta) });
	} else if (verb === 'call') {
		say(await call(name, json));
	} else if (verb === 'progress') {
		const progress = [];
		const r = await call(name, json, { onprogress: (p) =>
		    progress.push([p.progress, p.total]) });
		say({ ...r, progress });
	} else if (verb === 'cancel') {
		const abort = new AbortController();
		setTimeout(() => abort.abort('the test gave up'), Number(ms));
		say(await call(name, json, { signal: abort.signal }));
	} else if (verb === 'prompts') {
		say({ prompts: (await client.listPrompts()).prompts });
	} else if (verb === 'prompt') {
		say(await client.getPrompt({ name, arguments: JSON.parse(json) })
		    .catch(failed));
	} else if (verb === 'resources') {
		say({ resources: (await client.listResources()).resources });
	} else if (verb === 'templates') {
		say({ templates: (await client.listResourceTemplates())
		    .resourceTemplates });
	} else if (verb === 'read') {
		say(await client.readResource({ uri: name }).catch(failed));
	} else if (verb === 'complete') {
		say(await client.complete(JSON.parse(words.slice(1).join(' ')))
		    .catch(failed));
	} else if (verb === 'asked') {
		say({ asked: asked.splice(0) });
	} else if (verb === 'changed') {
		const until = Date.now() + Number(name);
		while (changed === 0 && Date.now() < until)
			await new Promise((r) => setTimeout(r, 20));
		say({ changed });
		changed = 0;
	}
}
await client.close();
