/**
 * The flags Node itself is started with for `carina server`: bin/carina's first line, the
 * replicas `carina local-cluster` and the chaos suite start, deploy/systemd, and the benchmarks
 * (keep them in step; the first line of bin/carina cannot import this).
 *
 * --max-semi-space-size=32 (MiB; Node 20's default is 16): a LIST or a watch's first events
 * allocate a page of decoded and encoded objects that lives across a few awaits. With V8's
 * default young generation it survives two scavenges, is promoted, and the old generation grows
 * (by a multiple of the live heap) before a full collection frees it. Measured on an unpaged
 * LIST of 50,000 Pods (bench/api scale): 9.8 s and +517 MB of RSS while it ran with the
 * default; 6.0 s and +14 MB with 32. The cost is up to ~48 MB more of young generation when busy.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32'];
