/**
 * A JSON or merge patch that changes the object's apiVersion or kind, answered as v1.25 answers
 * it. Its patch handler decodes the patched JSON into the served kind's internal type: the
 * decoder builds the type the JSON names and then finds no conversion from it (another kind the
 * scheme registers), or finds no type at all (a kind the scheme does not know); either is the
 * 422 quoting the patched document (`patch: Invalid value: ...`). Another version of the same
 * kind converts: that is let through. A custom resource decodes whatever it says, and its
 * validator refuses the object (customResourceValidator.ValidateTypeMeta): a 422 named after the
 * kind and group the object now says (customResourceTypeMetaInvalid).
 *
 * The texts are the built-in scheme's (k8s.io/kubernetes pkg/api/legacyscheme): the groups of
 * other schemes (apiextensions.k8s.io, apiregistration.k8s.io) are let through too.
 */
import { FieldPath, fieldErrorCause, invalid, invalidMessage, qualifiedKind, type FieldError } from '../apis/validation';
import { errors, type ApiError } from '../util';

/** The name runtime.NewScheme gives the built-in scheme (its call site, as a -trimpath build records it). */
const LEGACY_SCHEME_NAME = 'pkg/api/legacyscheme/scheme.go:30';
/** Groups whose kinds are not in the built-in scheme. */
const OTHER_SCHEMES = new Set(['apiextensions.k8s.io', 'apiregistration.k8s.io']);
/** Internal packages not named after the group's first label. */
const INTERNAL_PACKAGES: Readonly<Record<string, string>> = { '': 'core', 'events.k8s.io': 'core', 'internal.apiserver.k8s.io': 'apiserverinternal' };
/** Kinds every group-version of the scheme registers (metav1.AddToGroupVersion) and the unversioned ones. */
const META_KINDS = new Set(['WatchEvent', 'ListOptions', 'GetOptions', 'DeleteOptions', 'CreateOptions', 'UpdateOptions', 'PatchOptions', 'Status', 'APIVersions', 'APIGroupList', 'APIGroup', 'APIResourceList']);

export interface TypeMeta {
  readonly apiVersion: string;
  readonly kind: string;
}

/** True when the built-in scheme registers `kind` in `apiVersion` (a served kind or its list kind). */
export type RegisteredKind = (group: string, version: string, kind: string) => boolean;

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/**
 * The decoder's error for a built-in object patched from `current` to `patched`, or undefined
 * when v1.25 decodes it (or when this is not the built-in scheme's to say).
 */
export function typeMetaChangeRefusal(current: TypeMeta, patched: TypeMeta, registered: RegisteredKind): string | undefined {
  if (current.apiVersion === patched.apiVersion && current.kind === patched.kind) return undefined;
  const from = splitApiVersion(current.apiVersion);
  if (OTHER_SCHEMES.has(from.group)) return undefined;
  const to = splitApiVersion(patched.apiVersion);
  const isMetaKind = META_KINDS.has(patched.kind) && to.version !== '';
  if (!isMetaKind && !registered(to.group, to.version, patched.kind)) {
    return `no kind ${JSON.stringify(patched.kind)} is registered for version ${JSON.stringify(patched.apiVersion)} in scheme ${JSON.stringify(LEGACY_SCHEME_NAME)}`;
  }
  // The same kind in another version converts to the same internal type.
  if (patched.kind === current.kind && to.group === from.group) return undefined;
  // reflect prints a type as its package's name and the type's: the meta kinds live in meta/v1.
  const sourcePackage = isMetaKind ? 'v1' : to.version;
  const targetPackage = INTERNAL_PACKAGES[from.group] ?? from.group.split('.')[0];
  return `converting (${sourcePackage}.${patched.kind}) to (${targetPackage}.${current.kind}): unknown conversion`;
}

/**
 * v1.25's 422 for a custom resource whose apiVersion or kind is not its own: the validator's
 * errors, under the GroupKind the object says (the strategy's typer reads it from the object).
 */
export function customResourceTypeMetaInvalid(served: TypeMeta, object: TypeMeta, name: string): ApiError | undefined {
  const problems: FieldError[] = [];
  if (object.kind !== served.kind) problems.push(invalid(FieldPath.root('kind'), object.kind, `must be ${served.kind}`));
  if (object.apiVersion !== served.apiVersion) problems.push(invalid(FieldPath.root('apiVersion'), object.apiVersion, `must be ${served.apiVersion}`));
  if (problems.length === 0) return undefined;
  const { group } = splitApiVersion(object.apiVersion);
  return errors.invalid(group, object.kind, name, invalidMessage(qualifiedKind(group, object.kind), name, problems), problems.map(fieldErrorCause));
}
