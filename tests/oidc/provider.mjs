// A real authorization server for the end-to-end authorization tests: the npm package
// `oidc-provider` (panva/node-oidc-provider, MIT, a certified OpenID Provider), configured
// as the authorization server of an MCP server on loopback. Run it through
// `scripts/oidc-provider run [options]`, which installs the pinned package first.
//
// Options:
//   --port N          listen on 127.0.0.1:N (0, the default, picks a free port)
//   --keys FILE       signing keys (private JWKs): loaded from FILE, created there if missing
//   --rotate          with --keys: a new signing key goes first, the old ones stay published
//   --access-ttl S    lifetime of access tokens in seconds (default 300)
//   --dpop            accept DPoP proofs (RFC 9449): a token request with one gets a token bound
//                     to its key (`cnf.jkt`), and the metadata says so
//   --dpop-nonce      with --dpop, require a server nonce in the proofs (RFC 9449 §8)
//   --client-jwks F   register the client `smcp-e2e-jwt` (client credentials, private_key_jwt)
//                     with the public JWKS in file F
//
// What it serves:
//   - every resource indicator (RFC 8707) gets JWT access tokens (RFC 9068, ES256) whose
//     `aud` is that resource, with the scopes `mcp:tools` and `mcp:admin` available;
//   - the pre-registered public client `smcp-e2e` (PKCE, any loopback redirect port), the
//     confidential client `smcp-e2e-m2m` (client credentials, secret `smcp-e2e-m2m-secret`),
//     the resource server client `smcp-e2e-rs` (introspection, secret `smcp-e2e-rs-secret`);
//   - Dynamic Client Registration (RFC 7591) at /reg, and Client ID Metadata Documents;
//   - the provider's development login and consent pages (any login name is accepted; the
//     account id is the login), which the tests drive over HTTP as a browser would;
//   - refresh tokens for every client allowed the refresh_token grant;
//   - with --dpop, DPoP-bound tokens for token requests that carry a proof;
//   - with --client-jwks, `smcp-e2e-jwt`, which authenticates with private_key_jwt (ES256).
//
// Once listening it prints one JSON line on stdout: {"issuer": "...", "port": N}.

import { createRequire } from 'node:module';
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createServer } from 'node:http';

const home = process.env.OIDC_PROVIDER_HOME;
if (!home) {
  console.error('OIDC_PROVIDER_HOME is not set: run this through scripts/oidc-provider run');
  process.exit(2);
}
const require = createRequire(join(home, 'package.json'));
const { default: Provider } = await import(pathToFileURL(require.resolve('oidc-provider')).href);

function parseArgs(argv) {
  const opts = { port: 0, keys: undefined, rotate: false, accessTtl: 300, dpop: false, dpopNonce: false, clientJwks: undefined };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const value = () => {
      i += 1;
      if (i >= argv.length) throw new Error(`${arg} needs a value`);
      return argv[i];
    };
    switch (arg) {
      case '--port': opts.port = Number.parseInt(value(), 10); break;
      case '--keys': opts.keys = value(); break;
      case '--rotate': opts.rotate = true; break;
      case '--access-ttl': opts.accessTtl = Number.parseInt(value(), 10); break;
      case '--dpop': opts.dpop = true; break;
      case '--dpop-nonce': opts.dpopNonce = true; break;
      case '--client-jwks': opts.clientJwks = value(); break;
      default: throw new Error(`unknown option ${arg}`);
    }
  }
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) throw new Error('--port: not a port');
  if (!Number.isInteger(opts.accessTtl) || opts.accessTtl < 1) throw new Error('--access-ttl: not a positive integer');
  if (opts.rotate && !opts.keys) throw new Error('--rotate needs --keys');
  if (opts.dpopNonce && !opts.dpop) throw new Error('--dpop-nonce needs --dpop');
  return opts;
}

function newKey() {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg: 'ES256', use: 'sig' };
}

// The signing keys: from the file if there is one (rotated on demand), else fresh.
function signingKeys(opts) {
  let keys = [];
  if (opts.keys && existsSync(opts.keys)) keys = JSON.parse(readFileSync(opts.keys, 'utf8')).keys;
  if (keys.length === 0 || opts.rotate) keys = [newKey(), ...keys];
  if (opts.keys) {
    writeFileSync(`${opts.keys}.tmp`, JSON.stringify({ keys }), { mode: 0o600 });
    renameSync(`${opts.keys}.tmp`, opts.keys);
  }
  return keys;
}

// Binds first so that port 0 resolves to the port the issuer URL names.
async function listen(port) {
  const server = createServer();
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return server;
}

const opts = parseArgs(process.argv.slice(2));
const server = await listen(opts.port);
const { port } = server.address();
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  jwks: { keys: signingKeys(opts) },
  clients: [
    {
      client_id: 'smcp-e2e',
      application_type: 'native',
      token_endpoint_auth_method: 'none',
      redirect_uris: ['http://127.0.0.1/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    },
    {
      client_id: 'smcp-e2e-m2m',
      client_secret: 'smcp-e2e-m2m-secret',
      token_endpoint_auth_method: 'client_secret_basic',
      redirect_uris: [],
      grant_types: ['client_credentials'],
      response_types: [],
    },
    {
      client_id: 'smcp-e2e-rs',
      client_secret: 'smcp-e2e-rs-secret',
      token_endpoint_auth_method: 'client_secret_basic',
      redirect_uris: [],
      grant_types: [],
      response_types: [],
    },
    ...(opts.clientJwks ? [{
      client_id: 'smcp-e2e-jwt',
      token_endpoint_auth_method: 'private_key_jwt',
      token_endpoint_auth_signing_alg: 'ES256',
      jwks: JSON.parse(readFileSync(opts.clientJwks, 'utf8')),
      redirect_uris: [],
      grant_types: ['client_credentials'],
      response_types: [],
    }] : []),
  ],
  // The keys are P-256 only, so ID tokens are ES256 too (the library default is RS256).
  clientDefaults: { id_token_signed_response_alg: 'ES256' },
  scopes: ['openid', 'offline_access', 'mcp:tools', 'mcp:admin'],
  // The login name is the account id; no claims beyond `sub`.
  findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    dPoP: {
      enabled: opts.dpop,
      ...(opts.dpopNonce ? { nonceSecret: randomBytes(32), requireNonce: () => true } : {}),
    },
    introspection: {
      enabled: true,
      allowedPolicy: async (_ctx, client) => client.clientId === 'smcp-e2e-rs',
    },
    revocation: { enabled: true },
    clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, resource) => ({
        scope: 'mcp:tools mcp:admin',
        audience: resource,
        accessTokenTTL: opts.accessTtl,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  ttl: {
    AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? opts.accessTtl,
    ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? opts.accessTtl,
    Grant: 3600,
    Interaction: 600,
    Session: 3600,
    IdToken: 3600,
    RefreshToken: 3600,
  },
});
provider.on('server_error', (_ctx, err) => console.error('oidc-provider server_error:', err));

server.on('request', provider.callback());
process.stdout.write(`${JSON.stringify({ issuer, port })}\n`);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
