/** Bootstrap token Secrets for tests, as `kubeadm token create` writes them (spec 02 §2.2). */
import type { JsonObject } from '../../src/apis/object';

/** A Secret `kube-system/bootstrap-token-<id>` for the token `<id>.<secret>`, usable for authentication and signing unless `data` says otherwise. */
export function tokenSecret(id: string, secret: string, data: Record<string, string> = {}, type = 'bootstrap.kubernetes.io/token'): JsonObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
    type,
    stringData: { 'token-id': id, 'token-secret': secret, 'usage-bootstrap-authentication': 'true', 'usage-bootstrap-signing': 'true', ...data },
  };
}
