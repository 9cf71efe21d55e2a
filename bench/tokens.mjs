// SPDX-License-Identifier: ISC
// Measures mcpd's token estimate (bytes/4, daemon/gateway-cost.c) against a
// real tokenizer (gpt-tokenizer's o200k_base and cl100k_base) on the search
// fixture, listed as mcpd's gateway lists it (server__tool, _meta added):
// per server and in all. Not part of the build: the tokenizer is installed
// only for this measurement (npm install gpt-tokenizer in DIR).
// usage: node bench/tokens.mjs DIR [tests/fixtures/toolsearch/tools.json]
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const [dir, file = 'tests/fixtures/toolsearch/tools.json'] =
    process.argv.slice(2);
const require = createRequire(join(dir, 'package.json'));
const o200k = require('gpt-tokenizer/cjs/encoding/o200k_base');
const cl100k = require('gpt-tokenizer/cjs/encoding/cl100k_base');

const entries = JSON.parse(readFileSync(file, 'utf8'));
const listed = entries.map(({ server, tool }) => ({ ...tool,
    name: `${server}__${tool.name}`, _meta: { ...(tool._meta ?? {}),
    'io.mcpd/server': server, 'io.mcpd/tool': tool.name } }));
const count = (tools) => {
	const text = JSON.stringify({ tools });
	const bytes = Buffer.byteLength(text);
	return { tools: tools.length, bytes, estimate: Math.ceil(bytes / 4),
	    o200k: o200k.encode(text).length,
	    cl100k: cl100k.encode(text).length };
};
const servers = [...new Set(entries.map((e) => e.server))];
const rows = servers.map((s) => ({ server: s,
    ...count(listed.filter((t) => t._meta['io.mcpd/server'] === s)) }));
rows.push({ server: 'total', ...count(listed) });
const ratio = (a, b) => (a / b).toFixed(2);
console.log('server\ttools\tbytes\tbytes/4\to200k\tcl100k\test/o200k\test/cl100k');
for (const r of rows)
	console.log([r.server, r.tools, r.bytes, r.estimate, r.o200k, r.cl100k,
	    ratio(r.estimate, r.o200k), ratio(r.estimate, r.cl100k)].join('\t'));
