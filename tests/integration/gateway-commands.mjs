// SPDX-License-Identifier: ISC
// The command loop the SDK client scripts share (gateway-client.mjs for the
// TypeScript SDK v1, gateway-client-v2.mjs for v2): commands on stdin, one
// per line, each answered with one JSON line on stdout, so that a pytest can
// drive a real client of mcpd's gateway:
//   tools                    -> {"tools": [names], "meta": [_meta...]}
//   call NAME JSON           -> {"result": ...} or {"error": {code, message}}
//   progress NAME JSON       -> as call, plus {"progress": [[p, total]...]}
//   cancel NAME JSON FILE    -> aborts the call once FILE exists (the test
//                               makes it when the server has the call):
//                               {"error": ...}
//   changed MS               -> {"changed": n} tools list_changed seen within
//                               MS (and what the SDK says besides)
//   prompts | resources | templates -> the merged lists
//   prompt NAME JSON | read URI | complete JSON -> the server's answer
//   info                     -> what the SDK says of the connection
//   asked                    -> {"asked": [[method, params]...]} requests
//                               of the server it answered since the last
//   roots JSON               -> lists the roots JSON from now on and sends
//                               notifications/roots/list_changed:
//                               {"roots": n}
//   quit
// A client that could not connect answers its first command with
// {"error": {...}, "at": "connect"} and exits 1.

import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';

const say = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');

// The code (JSON-RPC's, or the SDK's own name), the HTTP status when there
// is one, and the message.
export const failed = (e) => {
	const error = { code: e?.code ?? null, message: String(e?.message ?? e) };
	if (typeof e?.status === 'number')
		error.status = e.status;
	return { error };
};

// The transport a client script connects with, from its SDK's classes:
// "--http URL TOKEN" is Streamable HTTP to mcpd --listen-http with the
// token, else COMMAND ARGS... run as a stdio server (mcpctl bridge) with
// this environment, not the SDK's default few variables: the bridge sees
// the tests' MCPD_NO_AUTOSTART, and never starts an mcpd of its own when
// a test's mcpd goes away under it.
export const transportOf = (Http, Stdio, command, args) =>
    command === '--http' ?
	new Http(new URL(args[0]), { requestInit: { headers: {
	    Authorization: `Bearer ${args[1]}` } } }) :
	new Stdio({ command, args, env: process.env, stderr: 'inherit' });

// sdk: { client, connect(): Promise, callTool(name, args, options),
//        changes(): how many tools list_changed so far,
//        takeChanges(): {changed: n, ...}, counting again from 0,
//        info(): what the SDK says of the connection,
//        asked(): the server's requests answered since the last call,
//        setRoots(list): Promise, the roots from now on, announced }
export async function serve(sdk) {
	const { client } = sdk;
	// stdin is read once connected: a line read before the loop below
	// iterates would be lost.
	try {
		await sdk.connect();
	} catch (e) {
		for await (const line of createInterface({
		    input: process.stdin })) {
			if (line !== 'quit')
				say({ ...failed(e), at: 'connect' });
			break;
		}
		process.exit(1);
	}
	const call = (name, json, options) => sdk.callTool(name,
	    JSON.parse(json), options).then((result) => ({ result }), failed);

	for await (const line of createInterface({ input: process.stdin })) {
		// VERB NAME JSON [FILE]: the JSON may hold spaces, FILE is the
		// last word.
		const words = line.split(' ');
		const [verb, name] = words;
		const flag = verb === 'cancel' ? words.pop() : undefined;
		const json = words.slice(2).join(' ');

		if (verb === 'quit')
			break;
		if (verb === 'tools') {
			say(await client.listTools().then((r) => ({
			    tools: r.tools.map((t) => t.name),
			    meta: r.tools.map((t) => t._meta) }), failed));
		} else if (verb === 'call') {
			say(await call(name, json));
		} else if (verb === 'progress') {
			const progress = [];
			const r = await call(name, json, { onprogress: (p) =>
			    progress.push([p.progress, p.total]) });
			say({ ...r, progress });
		} else if (verb === 'cancel') {
			const abort = new AbortController();
			const watch = setInterval(() => existsSync(flag) &&
			    abort.abort('the test gave up'), 20);
			say(await call(name, json, { signal: abort.signal }));
			clearInterval(watch);
		} else if (verb === 'prompts') {
			say(await client.listPrompts().then((r) => ({
			    prompts: r.prompts }), failed));
		} else if (verb === 'prompt') {
			say(await client.getPrompt({ name,
			    arguments: JSON.parse(json) }).catch(failed));
		} else if (verb === 'resources') {
			say(await client.listResources().then((r) => ({
			    resources: r.resources }), failed));
		} else if (verb === 'templates') {
			say(await client.listResourceTemplates().then((r) => ({
			    templates: r.resourceTemplates }), failed));
		} else if (verb === 'read') {
			say(await client.readResource({ uri: name })
			    .catch(failed));
		} else if (verb === 'complete') {
			say(await client.complete(JSON.parse(
			    words.slice(1).join(' '))).catch(failed));
		} else if (verb === 'changed') {
			const until = Date.now() + Number(name);
			while (sdk.changes() === 0 && Date.now() < until)
				await new Promise((r) => setTimeout(r, 20));
			say(sdk.takeChanges());
		} else if (verb === 'info') {
			say(sdk.info());
		} else if (verb === 'asked') {
			say({ asked: sdk.asked?.() ?? [] });
		} else if (verb === 'roots' && sdk.setRoots) {
			const list = JSON.parse(words.slice(1).join(' '));
			say(await sdk.setRoots(list).then(() => ({
			    roots: list.length }), failed));
		} else {
			say({ error: { code: null,
			    message: `unknown command ${verb}` } });
		}
	}
	await client.close();
}
