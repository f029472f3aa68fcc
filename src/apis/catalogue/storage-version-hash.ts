/**
 * The storageVersionHash kube-apiserver puts in discovery: base64 of the first 8 bytes of the
 * SHA-256 of "<group>/<version>/<kind>" of the version the resource is stored in. The core group is
 * the empty string, so core kinds hash "/v1/<Kind>". Clients (the storage version migrator) only
 * compare hashes for equality, so the value must be stable and shared by every version served from
 * the same storage. Source: k8s.io/apiserver pkg/endpoints/discovery/storageversionhash.go.
 */
import { createHash } from 'node:crypto';

const HASH_BYTES = 8;

export function storageVersionHash(group: string, version: string, kind: string): string {
  const digest = createHash('sha256').update(`${group}/${version}/${kind}`).digest();
  return digest.subarray(0, HASH_BYTES).toString('base64');
}
