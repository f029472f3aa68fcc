/**
 * `GET /version`: k8s.io/apimachinery pkg/version.Info of the official kube-apiserver v1.25.16
 * release build (tag commit c5f43560a4f98f2af3743a59299fb79f07924373, built 2023-11-15 with
 * go1.20.10, as `kubectl version` of that release prints). major and minor follow gitVersion when
 * the caller overrides it, so clients comparing minor versions see a consistent answer.
 */
import type { VersionInfo } from './types';

export interface VersionInfoOptions {
  /** e.g. "v1.25.16-carina.1"; must start with v1.<minor>. */
  gitVersion?: string;
  gitCommit?: string;
  buildDate?: string;
}

export const KUBE_APISERVER_VERSION: VersionInfo = Object.freeze({
  major: '1',
  minor: '25',
  gitVersion: 'v1.25.16',
  gitCommit: 'c5f43560a4f98f2af3743a59299fb79f07924373',
  gitTreeState: 'clean',
  buildDate: '2023-11-15T22:39:12Z',
  goVersion: 'go1.20.10',
  compiler: 'gc',
  platform: 'linux/amd64',
});

export function versionInfo(options: VersionInfoOptions = {}): VersionInfo {
  const gitVersion = options.gitVersion ?? KUBE_APISERVER_VERSION.gitVersion;
  const match = /^v(\d+)\.(\d+)/.exec(gitVersion);
  return {
    major: match?.[1] ?? KUBE_APISERVER_VERSION.major,
    minor: match?.[2] ?? KUBE_APISERVER_VERSION.minor,
    gitVersion,
    gitCommit: options.gitCommit ?? KUBE_APISERVER_VERSION.gitCommit,
    gitTreeState: KUBE_APISERVER_VERSION.gitTreeState,
    buildDate: options.buildDate ?? KUBE_APISERVER_VERSION.buildDate,
    goVersion: KUBE_APISERVER_VERSION.goVersion,
    compiler: KUBE_APISERVER_VERSION.compiler,
    platform: KUBE_APISERVER_VERSION.platform,
  };
}
