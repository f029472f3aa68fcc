/**
 * The certificate and bootstrap controllers of the replica that holds the controller Lease
 * (kube-controller-manager's csrsigning, csrapproving, csrcleaner, bootstrapsigner and
 * tokencleaner; spec 02 §2.2, §2.3, §3, §5.5, §8), assembled from `--controllers` and the
 * signing flags (src/cli/certificate-flags.ts):
 *
 * - csrsigning loads each signer's CA from its files when leadership starts (a file that cannot
 *   be read is logged and tried again every `retryMs`), and signs with the signers it could load;
 * - csrapproving asks the API server's own authorizer chain, as a SubjectAccessReview would;
 * - bootstrapsigner first publishes cluster-info and kubeadm's bootstrap RBAC when they are
 *   missing (retried until the store takes them), then keeps the signatures.
 *
 * `start()` runs on leadership, `stop()` when it ends; nothing is kept between terms.
 */
import type { AuthorizationAttributes, AuthorizationResult } from '../authz';
import { loadSigningAuthority, type BuiltInSignerName, type SigningAuthority } from '../certificates';
import { BootstrapSigner } from '../controllers/bootstrap-signer';
import { publishClusterInfo } from '../controllers/bootstrap-cluster-info';
import { CsrApprovingController } from '../controllers/csr-approving-controller';
import { CsrCleaner } from '../controllers/csr-cleaner';
import { CsrSigningController } from '../controllers/csr-signing-controller';
import { TokenCleaner } from '../controllers/token-cleaner';
import type { GenericRegistry, ServedResource } from '../registry';
import type { WatchCache } from '../storage';

export type CarinaControllerName = 'namespace' | 'garbagecollector' | 'clusterrole-aggregation' | 'serviceaccount' | 'serviceaccount-token' | 'root-ca-cert-publisher' | 'resourcequota' | 'csrsigning' | 'csrapproving' | 'csrcleaner' | 'bootstrapsigner' | 'tokencleaner';

export interface CertificateSettings {
  /** Whether the lease holder runs controller `name` (--controllers). */
  readonly enabled: (name: CarinaControllerName) => boolean;
  /** The CA files of each built-in signer that signs. */
  readonly signerFiles: ReadonlyMap<BuiltInSignerName, { certFile: string; keyFile: string }>;
  /** --cluster-signing-duration. */
  readonly signingDurationMs: number;
  /** --control-plane-endpoint, or '' for this replica's own URL. */
  readonly controlPlaneEndpoint: string;
}

export interface CertificateControllerDeps {
  readonly registry: GenericRegistry;
  readonly cache: WatchCache;
  readonly lookup: (group: string, version: string, resource: string) => ServedResource | undefined;
  /** The API server's authorizer chain. */
  readonly authorize: (attributes: AuthorizationAttributes) => Promise<AuthorizationResult>;
  /** The cluster CA (PEM) and the server URL cluster-info publishes. */
  readonly clusterCaPem: string;
  readonly clusterInfoServer: string;
  readonly log: (line: string) => void;
  readonly retryMs?: number;
}

/** The controllers by their --controllers name: what `onStartedLeading` starts. */
export function startCertificateControllers(deps: CertificateControllerDeps, settings: CertificateSettings): { stop(): void } {
  const resource = (group: string, name: string): ServedResource => {
    const found = deps.lookup(group, 'v1', name);
    if (found === undefined) throw new Error(`the catalogue has no ${group}/${name}`);
    return found;
  };
  const csrs = resource('certificates.k8s.io', 'certificatesigningrequests');
  // A CA that cannot be read waits for an operator; cluster-info only for the system namespaces.
  const retryMs = deps.retryMs ?? 10_000;
  const publishRetryMs = Math.min(retryMs, 1000);
  const running: Array<{ stop(): void }> = [];
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  const later = (work: () => Promise<void>, delayMs: number) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      void work();
    }, delayMs);
    timer.unref();
    timers.add(timer);
  };
  const run = <T extends { start(): void; stop(): void }>(controller: T): T => {
    running.push(controller);
    controller.start();
    return controller;
  };

  if (settings.enabled('csrsigning') && settings.signerFiles.size > 0) {
    const startSigning = async (): Promise<void> => {
      const loaded = new Map<string, SigningAuthority>();
      try {
        const byFiles = new Map<string, Promise<SigningAuthority>>();
        for (const [signer, files] of settings.signerFiles) {
          const key = `${files.certFile}\n${files.keyFile}`;
          if (!byFiles.has(key)) byFiles.set(key, loadSigningAuthority(files.certFile, files.keyFile));
          loaded.set(signer, await (byFiles.get(key) as Promise<SigningAuthority>));
        }
      } catch (err) {
        deps.log(`csrsigning: ${(err as Error).message}; trying again in ${retryMs} ms`);
        if (!stopped) later(startSigning, retryMs);
        return;
      }
      if (stopped) return;
      run(new CsrSigningController({ registry: deps.registry, csrs, feed: deps.cache, authorities: loaded, maxDurationMs: settings.signingDurationMs, log: deps.log }));
    };
    void startSigning();
  }
  if (settings.enabled('csrapproving')) run(new CsrApprovingController({ registry: deps.registry, csrs, feed: deps.cache, authorize: deps.authorize, log: deps.log }));
  if (settings.enabled('csrcleaner')) run(new CsrCleaner({ registry: deps.registry, csrs, feed: deps.cache, log: deps.log }));
  if (settings.enabled('tokencleaner')) run(new TokenCleaner({ registry: deps.registry, secrets: resource('', 'secrets'), feed: deps.cache, log: deps.log }));
  if (settings.enabled('bootstrapsigner')) {
    const configMaps = resource('', 'configmaps');
    const rbac = (name: string) => resource('rbac.authorization.k8s.io', name);
    const publish = async (): Promise<void> => {
      try {
        await publishClusterInfo({
          registry: deps.registry,
          resources: { configMaps, roles: rbac('roles'), roleBindings: rbac('rolebindings'), clusterRoles: rbac('clusterroles'), clusterRoleBindings: rbac('clusterrolebindings') },
          caPem: deps.clusterCaPem,
          server: deps.clusterInfoServer,
          log: deps.log,
        });
      } catch (err) {
        deps.log(`bootstrapsigner: publishing cluster-info: ${(err as Error).message}; trying again in ${publishRetryMs} ms`);
        if (!stopped) later(publish, publishRetryMs);
      }
    };
    void publish();
    run(new BootstrapSigner({ registry: deps.registry, configMaps, feed: deps.cache, log: deps.log }));
  }
  return {
    stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const controller of running.splice(0)) controller.stop();
    },
  };
}
