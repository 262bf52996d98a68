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
//   --workload-jwks F workload identity federation: the JWT bearer grant (RFC 7523) for the
//                     public client `smcp-e2e-workload`, with workload JWTs signed by a key
//                     in file F whose `aud` is this issuer
//   --idp             act as an enterprise identity provider too: the token exchange grant
//                     (RFC 8693) turns an ID token it issued to `smcp-e2e` into an ID-JAG
//                     (`typ` oauth-id-jag+jwt) for the `audience` and `resource` asked for,
//                     naming the client `smcp-e2e-jag` (the client at the MCP server's
//                     authorization server)
//   --trust-idp URL   accept ID-JAGs issued by the identity provider URL (its keys from
//                     URL/jwks) in the JWT bearer grant of the confidential client
//                     `smcp-e2e-jag` (secret `smcp-e2e-jag-secret`)
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
//   - with --client-jwks, `smcp-e2e-jwt`, which authenticates with private_key_jwt (ES256);
//   - with --workload-jwks, --idp or --trust-idp, the grants oidc-provider does not implement,
//     registered as its own extension point allows (`registerGrantType`).
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
const { default: Provider, errors } = await import(pathToFileURL(require.resolve('oidc-provider')).href);
const jose = await import(pathToFileURL(require.resolve('jose')).href);

function parseArgs(argv) {
  const opts = { port: 0, keys: undefined, rotate: false, accessTtl: 300, dpop: false, dpopNonce: false, clientJwks: undefined, workloadJwks: undefined, idp: false, trustIdp: undefined };
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
      case '--workload-jwks': opts.workloadJwks = value(); break;
      case '--idp': opts.idp = true; break;
      case '--trust-idp': opts.trustIdp = value(); break;
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

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_JAG = 'urn:ietf:params:oauth:token-type:id-jag';

const opts = parseArgs(process.argv.slice(2));
const server = await listen(opts.port);
const { port } = server.address();
const issuer = `http://127.0.0.1:${port}`;

function resourceServerInfo(resource) {
  return {
    scope: 'mcp:tools mcp:admin',
    audience: resource,
    accessTokenTTL: opts.accessTtl,
    accessTokenFormat: 'jwt',
    jwt: { sign: { alg: 'ES256' } },
  };
}

const keys = signingKeys(opts);
const provider = new Provider(issuer, {
  jwks: { keys },
  clients: [
    {
      client_id: 'smcp-e2e',
      application_type: 'native',
      token_endpoint_auth_method: 'none',
      redirect_uris: ['http://127.0.0.1/callback'],
      grant_types: ['authorization_code', 'refresh_token', ...(opts.idp ? [TOKEN_EXCHANGE] : [])],
      response_types: ['code'],
    },
    ...(opts.workloadJwks ? [{
      client_id: 'smcp-e2e-workload',
      token_endpoint_auth_method: 'none',
      redirect_uris: [],
      grant_types: [JWT_BEARER],
      response_types: [],
    }] : []),
    ...(opts.trustIdp ? [{
      client_id: 'smcp-e2e-jag',
      client_secret: 'smcp-e2e-jag-secret',
      token_endpoint_auth_method: 'client_secret_basic',
      redirect_uris: [],
      grant_types: [JWT_BEARER],
      response_types: [],
    }] : []),
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
      getResourceServerInfo: async (_ctx, resource) => resourceServerInfo(resource),
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
// An access token for `resource` (a JWT, as for every resource here) with the scopes asked for
// that the resource offers: what the client credentials grant issues, for a custom grant.
async function issueAccessToken(ctx, resource) {
  const { client, params } = ctx.oidc;
  const { ClientCredentials, ResourceServer } = ctx.oidc.provider;
  if (!resource) throw new errors.InvalidTarget('resource is required');
  const info = resourceServerInfo(resource);
  const offered = new Set(info.scope.split(' '));
  const scope = (params.scope || '').split(' ').filter((s) => offered.has(s)).join(' ') || undefined;
  const token = new ClientCredentials({ client, scope });
  token.resourceServer = new ResourceServer(resource, info);
  const value = await token.save();
  ctx.body = { access_token: value, token_type: 'Bearer', expires_in: token.expiration, scope };
}

function jwtBearerGrant(workloadKeys, idpKeys) {
  return async (ctx) => {
    const { assertion, resource } = ctx.oidc.params;
    if (!assertion) throw new errors.InvalidRequest('assertion is required');
    let header;
    try { header = jose.decodeProtectedHeader(assertion); } catch { throw new errors.InvalidGrant('the assertion is not a JWT'); }
    try {
      if (header.typ === 'oauth-id-jag+jwt') {
        if (!idpKeys) throw new Error('no trusted identity provider');
        const { payload } = await jose.jwtVerify(assertion, idpKeys, { issuer: opts.trustIdp, audience: issuer, typ: 'oauth-id-jag+jwt' });
        if (payload.client_id !== ctx.oidc.client.clientId) throw new Error('the ID-JAG names another client');
        if (resource && payload.resource !== resource) throw new Error('the ID-JAG names another resource');
        return issueAccessToken(ctx, payload.resource);
      }
      if (!workloadKeys) throw new Error('no trusted workload issuer');
      const { payload } = await jose.jwtVerify(assertion, workloadKeys, { audience: issuer });
      return issueAccessToken(ctx, resource);
    } catch (err) {
      if (err instanceof errors.OIDCProviderError) throw err;
      throw new errors.InvalidGrant(`assertion refused: ${err.message}`);
    }
  };
}

if (opts.workloadJwks || opts.trustIdp) {
  const workloadKeys = opts.workloadJwks ? jose.createLocalJWKSet(JSON.parse(readFileSync(opts.workloadJwks, 'utf8'))) : undefined;
  const idpKeys = opts.trustIdp ? jose.createRemoteJWKSet(new URL(`${opts.trustIdp}/jwks`)) : undefined;
  provider.registerGrantType(JWT_BEARER, jwtBearerGrant(workloadKeys, idpKeys), ['assertion', 'scope', 'resource']);
}

if (opts.idp) {
  const publicKeys = jose.createLocalJWKSet({ keys: keys.map(({ d, ...pub }) => pub) });
  const signing = await jose.importJWK(keys[0], 'ES256');
  provider.registerGrantType(TOKEN_EXCHANGE, async (ctx) => {
    const p = ctx.oidc.params;
    if (p.requested_token_type !== ID_JAG) throw new errors.InvalidRequest(`requested_token_type must be ${ID_JAG}`);
    if (p.subject_token_type !== 'urn:ietf:params:oauth:token-type:id_token') throw new errors.InvalidRequest('subject_token_type must be an ID token');
    if (!p.audience || !p.resource) throw new errors.InvalidRequest('audience and resource are required');
    let payload;
    try {
      ({ payload } = await jose.jwtVerify(p.subject_token, publicKeys, { issuer, audience: ctx.oidc.client.clientId }));
    } catch (err) {
      throw new errors.InvalidGrant(`subject_token refused: ${err.message}`);
    }
    const jag = await new jose.SignJWT({ sub: payload.sub, client_id: 'smcp-e2e-jag', resource: p.resource, ...(p.scope ? { scope: p.scope } : {}) })
      .setProtectedHeader({ alg: 'ES256', typ: 'oauth-id-jag+jwt', kid: keys[0].kid })
      .setIssuer(issuer).setAudience(p.audience).setIssuedAt().setExpirationTime('5m').setJti(randomUUID())
      .sign(signing);
    ctx.body = { access_token: jag, issued_token_type: ID_JAG, token_type: 'N_A', expires_in: 300 };
  }, ['subject_token', 'subject_token_type', 'requested_token_type', 'audience', 'resource', 'scope']);
}

provider.on('server_error', (_ctx, err) => console.error('oidc-provider server_error:', err));

server.on('request', provider.callback());
process.stdout.write(`${JSON.stringify({ issuer, port })}\n`);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
