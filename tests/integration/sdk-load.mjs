// SPDX-License-Identifier: ISC
// The official TypeScript SDK's modules, from the node_modules of the
// peers' directory (scripts/install-deps --test-peers), for the client
// scripts the tests drive: sdkOf(peers)('client/index.js') imports
// @modelcontextprotocol/sdk/client/index.js from there.

import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const sdkOf = (peers) => {
    const require = createRequire(join(peers, 'package.json'));
    return (path) => import(pathToFileURL(
        require.resolve(`@modelcontextprotocol/sdk/${path}`)).href);
};
