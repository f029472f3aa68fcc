/**
 * The one proxy of the API server (kube-apiserver v1.25's upgrade-aware proxy handler and its
 * transports): every caller that passes a request on to another server, the connect
 * subresources of pods, nodes and services and the aggregation layer alike, goes through here.
 * A caller says where (a URL) and how (a ProxyTransport); this module dials, forwards plain
 * requests and HTTP/1.1 upgrades, copies a streamed GET's body by hand (pods/log,
 * streamed-get.ts), streams with back-pressure, rewrites redirects and HTML links
 * as kube's proxy transport does (link-rewriting.ts), and turns failures into the Status kube
 * sends for them.
 */
export { BackendDialError, dialBackend, goDialErrorText, joinHostPort, type ProxyTransport } from './proxy-transport';
export { UnknownReasonError, UpgradeProxyError, reachFailure, upgradeFailure } from './proxy-errors';
export { proxyUpgrade, type UpgradeOutcome, type UpgradeRequest } from './upgrade-proxy';
export { proxyRequest, sendToBackend, streamBody, type BackendResponse, type ProxiedRequest, type ProxyResponseSink } from './http-proxy';
export { streamedGet, Http1BodyDecoder, type StreamedBodySink, type StreamedResponse } from './streamed-get';
export { rewriteProxiedUrl, type LinkRewriting } from './link-rewriting';
export { isProxyableAddress } from './destinations';
export { DEFAULT_KUBELET_PORT, DEFAULT_KUBELET_PREFERRED_ADDRESS_TYPES, kubeletEndpoint, preferredNodeAddress, type KubeletEndpoint } from './kubelet-connection';
