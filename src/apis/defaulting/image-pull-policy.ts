/**
 * The default imagePullPolicy of a container (k8s.io/kubernetes pkg/apis/core/v1/defaults.go,
 * SetDefaults_Container): "Always" when the reference's tag is "latest", which is also the tag of a
 * reference naming neither tag nor digest, else "IfNotPresent". A reference the Docker grammar
 * rejects has no tag, so it gets "IfNotPresent" too (kubelet's parsers.ParseImageName).
 */

// The grammar of github.com/docker/distribution/reference as vendored by v1.25.
const ALPHA_NUMERIC = '[a-z0-9]+';
const SEPARATOR = '(?:[._]|__|[-]*)';
const NAME_COMPONENT = `${ALPHA_NUMERIC}(?:${SEPARATOR}${ALPHA_NUMERIC})*`;
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*(?::[0-9]+)?`;
const NAME = `(?:${DOMAIN}/)?${NAME_COMPONENT}(?:/${NAME_COMPONENT})*`;
const TAG = '[\\w][\\w.-]{0,127}';
const DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const REFERENCE = new RegExp(`^(${NAME})(?::(${TAG}))?(?:@(${DIGEST}))?$`);
const HEX_IDENTIFIER = /^[a-f0-9]{64}$/;
const DIGEST_HEX_LENGTH: Record<string, number> = { sha256: 64, sha384: 96, sha512: 128 };
const NAME_TOTAL_LENGTH_MAX = 255;

/** The tag kubelet's ParseImageName reports: "latest" when none is named, "" when the reference is invalid. */
export function imageTag(image: string): string {
  if (HEX_IDENTIFIER.test(image)) return '';
  const match = REFERENCE.exec(image);
  if (match === null) return '';
  const [, name = '', tag, digest] = match;
  if (name.length > NAME_TOTAL_LENGTH_MAX) return '';
  // Normalisation rejects upper case in the path; only the registry host may hold it.
  const firstSlash = name.indexOf('/');
  const firstPart = firstSlash < 0 ? '' : name.slice(0, firstSlash);
  const hasDomain = firstPart.includes('.') || firstPart.includes(':') || firstPart === 'localhost';
  const path = hasDomain ? name.slice(firstSlash + 1) : name;
  if (path !== path.toLowerCase()) return '';
  if (digest !== undefined) {
    const [algorithm = '', hex = ''] = digest.split(':');
    if (DIGEST_HEX_LENGTH[algorithm] !== hex.length) return '';
  }
  if (tag !== undefined) return tag;
  return digest === undefined ? 'latest' : '';
}

export function defaultImagePullPolicy(image: unknown): 'Always' | 'IfNotPresent' {
  return typeof image === 'string' && imageTag(image) === 'latest' ? 'Always' : 'IfNotPresent';
}
