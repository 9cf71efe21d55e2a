// SPDX-License-Identifier: ISC
// Preloaded into the conformance harness's node (`node --import
// tests/conformance/bearer.mjs ...` by tests/conformance/server): adds
// `Authorization: Bearer $MCPD_CONFORMANCE_TOKEN` to every request the
// harness sends to mcpd's HTTP front ($MCPD_CONFORMANCE_ORIGIN, e.g.
// http://127.0.0.1:8750), and to nothing else.
//
// This is a stand-in for the header an agent is configured with (a client's
// "headers": {"Authorization": "Bearer ..."}): the harness has no option to
// send one, and mcpd has no way in without a token, on purpose.  The harness
// reaches mcpd three ways, and each is covered:
//   - fetch (the SDK's Streamable HTTP client, the raw probes) and undici's
//     request() (dns-rebinding-protection): both dispatch through the
//     global dispatcher, globalThis[Symbol.for('undici.globalDispatcher.1')],
//     which is replaced here by an Agent with an interceptor;
//   - node:http's request() (http-header-validation): wrapped below.

import { createRequire } from 'node:module';
import http from 'node:http';
import { syncBuiltinESMExports } from 'node:module';

const require = createRequire(import.meta.url);
const { Agent, setGlobalDispatcher } =
  require('../peers/node_modules/undici/index.js');

const origin = new URL(process.env.MCPD_CONFORMANCE_ORIGIN ?? '');
const token = process.env.MCPD_CONFORMANCE_TOKEN ?? '';
if (token === '') throw new Error('bearer.mjs: MCPD_CONFORMANCE_TOKEN is empty');
const value = `Bearer ${token}`;

function isMcpd(host, port) {
  return String(host).replace(/^\[|\]$/g, '') ===
      origin.hostname.replace(/^\[|\]$/g, '') &&
    String(port || 80) === String(origin.port || 80);
}

// undici's dispatch options take headers as an object, an array of
// [name, value] pairs or a flat [name, value, ...] array: made flat, with
// any Authorization of the caller's replaced.
function flatWithAuth(headers) {
  const flat = [];
  const add = (k, v) => {
    if (String(k).toLowerCase() === 'authorization') return;
    for (const x of Array.isArray(v) ? v : [v]) flat.push(String(k), x);
  };
  if (headers == null) {
    // none
  } else if (Array.isArray(headers) && !Array.isArray(headers[0])) {
    for (let i = 0; i + 1 < headers.length; i += 2) add(headers[i], headers[i + 1]);
  } else if (typeof headers[Symbol.iterator] === 'function') {
    for (const [k, v] of headers) add(k, v);
  } else {
    for (const [k, v] of Object.entries(headers)) add(k, v);
  }
  flat.push('authorization', value);
  return flat;
}

setGlobalDispatcher(new Agent().compose((dispatch) => (opts, handler) => {
  const o = new URL(String(opts.origin));
  if (!isMcpd(o.hostname, o.port)) return dispatch(opts, handler);
  return dispatch({ ...opts, headers: flatWithAuth(opts.headers) }, handler);
}));

const request = http.request;
http.request = function (...args) {
  let url = null;
  if (typeof args[0] === 'string' || args[0] instanceof URL) url = new URL(args.shift());
  const options = typeof args[0] === 'object' && args[0] !== null ? args.shift() : {};
  const host = options.hostname ?? options.host ?? url?.hostname;
  const port = options.port ?? url?.port;
  if (!isMcpd(host, port)) return request.call(this, ...(url ? [url] : []), options, ...args);
  const headers = { ...(options.headers ?? {}) };
  for (const k of Object.keys(headers)) if (k.toLowerCase() === 'authorization') delete headers[k];
  headers.Authorization = value;
  return request.call(this, ...(url ? [url] : []), { ...options, headers }, ...args);
};
syncBuiltinESMExports();
