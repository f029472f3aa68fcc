/**
 * Packages that only some configurations or events use, loaded at their first use rather than when
 * the server starts (issue 32): compiling undici alone costs about 0.1 s of CPU at every start, yet
 * a replica without webhooks or an OIDC issuer never sends an HTTP request of its own.
 *
 * Each accessor requires its package once and returns the same module after; `require` is
 * synchronous, so callers stay synchronous and behave as with a static import.
 */
/* eslint-disable @typescript-eslint/no-require-imports */

let undiciModule: typeof import('undici') | undefined;
let joseModule: typeof import('jose') | undefined;
let forgeModule: typeof import('node-forge') | undefined;

/** undici (the webhook, OIDC and conversion clients' HTTP). */
export function undici(): typeof import('undici') {
  undiciModule ??= require('undici') as typeof import('undici');
  return undiciModule;
}

/** jose (JWS signing and verification: service account tokens, OIDC ID tokens). */
export function jose(): typeof import('jose') {
  joseModule ??= require('jose') as typeof import('jose');
  return joseModule;
}

/** node-forge (issuing certificates; reading CSRs' subjects). */
export function nodeForge(): typeof import('node-forge') {
  forgeModule ??= require('node-forge') as typeof import('node-forge');
  return forgeModule;
}
