import { expect } from 'chai';
import { FieldPath, fieldErrorMessage } from '../../../../../src/apis/validation';
import { validateSchemaRules } from '../../../../../src/apiextensions/cel/schema-rules';
import type { JsonSchemaProps } from '../../../../../src/apiextensions/json-schema';

/**
 * Schemas of our own with the constructs of the Gateway API's gateways and httproutes CRDs
 * (v0.8.1, v1.0.0), which kube-apiserver v1.25 accepts: a conditional over `self.mode` beside an
 * unbounded enum string, all()/exists_one() over a bounded list of listeners, regexes and
 * contains() over bounded paths, filter().size() over bounded filters, all nested under bounded
 * lists. Then the same shapes without their bounds, which v1.25 refuses with its messages.
 */

const SCHEMA_PATH = FieldPath.root('spec', 'versions').index(0).child('schema', 'openAPIV3Schema');

const str = (maxLength?: number): JsonSchemaProps => ({ type: 'string', maxLength });

function tlsConfig(): JsonSchemaProps {
  return {
    type: 'object',
    properties: {
      // An enum with a default and no maxLength: its size is the request's.
      mode: { type: 'string', enum: ['Terminate', 'Passthrough'], default: 'Terminate' },
      certificateRefs: {
        type: 'array',
        maxItems: 64,
        items: { type: 'object', required: ['name'], properties: { group: str(253), kind: str(63), name: str(253), namespace: str(63) } },
      },
      options: { type: 'object', maxProperties: 16, additionalProperties: str(4096) },
    },
    'x-kubernetes-validations': [
      { message: 'certificateRefs or options must be specified when mode is Terminate', rule: "self.mode == 'Terminate' ? size(self.certificateRefs) > 0 || size(self.options) > 0 : true" },
    ],
  };
}

function listeners(bounded: boolean): JsonSchemaProps {
  return {
    type: 'array',
    maxItems: bounded ? 64 : undefined,
    minItems: 1,
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['name'],
    items: {
      type: 'object',
      required: ['name', 'port', 'protocol'],
      properties: {
        name: str(bounded ? 253 : undefined),
        hostname: str(bounded ? 253 : undefined),
        port: { type: 'integer', minimum: 1, maximum: 65535 },
        protocol: str(bounded ? 255 : undefined),
        tls: tlsConfig(),
      },
    },
    'x-kubernetes-validations': [
      { message: 'tls must be specified for protocols HTTPS and TLS', rule: "self.all(l, l.protocol in ['HTTPS', 'TLS'] ? has(l.tls) : true)" },
      { message: 'tls must not be specified for protocols HTTP, TCP and UDP', rule: "self.all(l, l.protocol in ['HTTP', 'TCP', 'UDP'] ? !has(l.tls) : true)" },
      { message: 'hostname must not be specified for protocols TCP and UDP', rule: "self.all(l, l.protocol in ['TCP', 'UDP'] ? (!has(l.hostname) || l.hostname == '') : true)" },
      { message: 'listener names must be unique', rule: 'self.all(l1, self.exists_one(l2, l1.name == l2.name))' },
      {
        message: 'port, protocol and hostname must be unique',
        rule: 'self.all(l1, self.exists_one(l2, l1.port == l2.port && l1.protocol == l2.protocol && (has(l1.hostname) && has(l2.hostname) ? l1.hostname == l2.hostname : !has(l1.hostname) && !has(l2.hostname))))',
      },
    ],
  };
}

function gateway(bounded: boolean): JsonSchemaProps {
  return {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        required: ['gatewayClassName', 'listeners'],
        properties: {
          gatewayClassName: str(253),
          listeners: listeners(bounded),
          addresses: {
            type: 'array',
            maxItems: 16,
            items: {
              type: 'object',
              required: ['value'],
              properties: { type: { ...str(253), default: 'IPAddress' }, value: str(253) },
              'x-kubernetes-validations': [
                { message: 'hostname addresses must be hostnames', rule: "self.type == 'Hostname' ? self.value.matches(r\"\"\"^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$\"\"\"): true" },
              ],
            },
            'x-kubernetes-validations': [
              { message: 'IP addresses must be unique', rule: "self.all(a1, a1.type == 'IPAddress' ? self.exists_one(a2, a2.type == a1.type && a2.value == a1.value) : true )" },
            ],
          },
        },
      },
    },
  };
}

const PREFIX_TYPES = "(self.type in ['Exact','PathPrefix'])";

function httpRoute(bounded: boolean): JsonSchemaProps {
  const pathMatch: JsonSchemaProps = {
    type: 'object',
    properties: {
      type: { type: 'string', enum: ['Exact', 'PathPrefix', 'RegularExpression'], default: 'PathPrefix' },
      value: { type: 'string', maxLength: bounded ? 1024 : undefined, default: '/' },
    },
    'x-kubernetes-validations': [
      { message: 'value must be an absolute path', rule: `${PREFIX_TYPES} ? self.value.startsWith('/') : true` },
      { message: 'must not contain //', rule: `${PREFIX_TYPES} ? !self.value.contains('//') : true` },
      { message: 'must not contain /./', rule: `${PREFIX_TYPES} ? !self.value.contains('/./') : true` },
      { message: 'must not contain %2f', rule: `${PREFIX_TYPES} ? !self.value.contains('%2f') && !self.value.contains('%2F') : true` },
      { message: 'must not end with /..', rule: `${PREFIX_TYPES} ? !self.value.endsWith('/..') : true` },
      { message: 'type must be known', rule: "self.type in ['Exact','PathPrefix'] || self.type == 'RegularExpression'" },
      { message: 'must only contain valid characters', rule: `${PREFIX_TYPES} ? self.value.matches(r"""^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$""") : true` },
    ],
  };
  const filter: JsonSchemaProps = {
    type: 'object',
    required: ['type'],
    properties: {
      type: { type: 'string', enum: ['RequestHeaderModifier', 'ResponseHeaderModifier', 'RequestMirror', 'RequestRedirect', 'URLRewrite', 'ExtensionRef'] },
      requestRedirect: { type: 'object', properties: { path: { type: 'object', properties: { type: str(), replacePrefixMatch: str(1024) } } } },
    },
  };
  const rule: JsonSchemaProps = {
    type: 'object',
    properties: {
      matches: { type: 'array', maxItems: 8, items: { type: 'object', properties: { path: pathMatch } } },
      filters: {
        type: 'array',
        maxItems: 16,
        items: filter,
        'x-kubernetes-validations': [
          { message: 'RequestRedirect and URLRewrite cannot both be used', rule: "!(self.exists(f, f.type == 'RequestRedirect') && self.exists(f, f.type == 'URLRewrite'))" },
          { message: 'RequestHeaderModifier cannot be repeated', rule: "self.filter(f, f.type == 'RequestHeaderModifier').size() <= 1" },
          { message: 'RequestRedirect cannot be repeated', rule: "self.filter(f, f.type == 'RequestRedirect').size() <= 1" },
        ],
      },
      backendRefs: { type: 'array', maxItems: 16, items: { type: 'object', properties: { name: str(253) } } },
    },
    'x-kubernetes-validations': [
      { message: 'RequestRedirect filter must not be used together with backendRefs', rule: '(has(self.backendRefs) && size(self.backendRefs) > 0) ? (!has(self.filters) || self.filters.all(f, !has(f.requestRedirect))): true' },
      {
        message: 'replacePrefixMatch needs exactly one PathPrefix match',
        rule: "(has(self.filters) && self.filters.exists_one(f, has(f.requestRedirect) && has(f.requestRedirect.path) && f.requestRedirect.path.type == 'ReplacePrefixMatch' && has(f.requestRedirect.path.replacePrefixMatch))) ? ((size(self.matches) != 1 || !has(self.matches[0].path) || self.matches[0].path.type != 'PathPrefix') ? false : true) : true",
      },
    ],
  };
  return {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          hostnames: { type: 'array', maxItems: 16, items: str(253) },
          rules: {
            type: 'array',
            maxItems: bounded ? 16 : undefined,
            items: rule,
            'x-kubernetes-validations': [
              { message: 'at most 128 matches across rules', rule: '(self.size() > 0 ? self[0].matches.size() : 0) + (self.size() > 1 ? self[1].matches.size() : 0) + (self.size() > 2 ? self[2].matches.size() : 0) <= 128' },
            ],
          },
        },
      },
    },
  };
}

const check = (schema: JsonSchemaProps): string[] => validateSchemaRules(schema, SCHEMA_PATH).map(fieldErrorMessage);

const COST_HINT = '(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)';

describe('apiextensions CEL: the Gateway API\'s rule shapes cost what v1.25 estimates', () => {
  it('accepts the gateway: a conditional over an unbounded enum compares at the literal\'s size', () => {
    expect(check(gateway(true))).to.deep.equal([]);
  });

  it('accepts the httproute: contains(), matches() and filter().size() under bounded lists', () => {
    expect(check(httpRoute(true))).to.deep.equal([]);
  });

  it('refuses the quadratic listener rules when the listeners and their strings are unbounded', () => {
    const listenersPath = 'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[listeners]';
    const tlsRule = `${listenersPath}.items.properties[tls].x-kubernetes-validations[0].rule`;
    expect(check(gateway(false))).to.deep.equal([
      // Under an unbounded list a rule counts as often as its node fits in a request: 11 x 1,048,576.
      `${tlsRule}: Forbidden: estimated rule cost exceeds budget by factor of 1.153434x ${COST_HINT}`,
      `${listenersPath}.x-kubernetes-validations[3].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${COST_HINT}`,
      `${listenersPath}.x-kubernetes-validations[4].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${COST_HINT}`,
      `${listenersPath}.x-kubernetes-validations[4].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
      `${listenersPath}.x-kubernetes-validations[3].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
      `${tlsRule}: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
      `${listenersPath}.x-kubernetes-validations[2].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
      `spec.versions[0].schema.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x ${COST_HINT}`,
    ]);
  });

  it('refuses path rules under an unbounded list of rules, multiplying by the path node\'s cardinality', () => {
    const errs = check(httpRoute(false));
    const rules = 'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[rules]';
    const pathRules = `${rules}.items.properties[matches].items.properties[path]`;
    // startsWith('/') costs 17; the path node fits 1,048,576 times in a request.
    expect(errs).to.include(`${pathRules}.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 1.8x ${COST_HINT}`);
    expect(errs).to.include(`${pathRules}.x-kubernetes-validations[1].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${COST_HINT}`);
    expect(errs).to.include(`${rules}.items.properties[filters].x-kubernetes-validations[1].rule: Forbidden: estimated rule cost exceeds budget by factor of 31.7x ${COST_HINT}`);
    expect(errs[errs.length - 1]).to.equal(`spec.versions[0].schema.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x ${COST_HINT}`);
  });

  it('words a factor under 1.5 with six decimals, and larger ones with one', () => {
    // contains() on an unbounded string costs 314,574 (1 + ceil(3,145,726 / 10) x ceil(1 / 10)).
    const tags = (maxItems: number): JsonSchemaProps => ({
      type: 'object',
      properties: { tags: { type: 'array', maxItems, items: { type: 'string', 'x-kubernetes-validations': [{ rule: "self.contains('x')" }] } } },
    });
    const rulePath = 'spec.versions[0].schema.openAPIV3Schema.properties[tags].items.x-kubernetes-validations[0].rule';
    expect(check(tags(31))).to.deep.equal([]);
    expect(check(tags(40))).to.deep.equal([`${rulePath}: Forbidden: estimated rule cost exceeds budget by factor of 1.258296x ${COST_HINT}`]);
    expect(check(tags(64))).to.deep.equal([`${rulePath}: Forbidden: estimated rule cost exceeds budget by factor of 2.0x ${COST_HINT}`]);
  });
});

describe('apiextensions CEL: a rule\'s own text, checked before it compiles', () => {
  const root = 'spec.versions[0].schema.openAPIV3Schema';
  const textErrors = (rules: Array<{ rule: string; message?: string }>): string[] => check({ type: 'object', 'x-kubernetes-validations': rules });

  it('words blank rules and messages, and line breaks, as v1.25 does', () => {
    expect(textErrors([{ rule: ' ' }, { rule: 'true', message: ' ' }, { rule: 'true', message: 'a\nb' }, { rule: 'true &&\ntrue' }, { rule: 'true &&\ntrue', message: 'fine' }])).to.deep.equal([
      `${root}.x-kubernetes-validations[0].rule: Required value: rule is not specified`,
      `${root}.x-kubernetes-validations[1].message: Invalid value: " ": message must be non-empty if specified`,
      `${root}.x-kubernetes-validations[2].message: Invalid value: "a\\nb": message must not contain line breaks`,
      `${root}.x-kubernetes-validations[3].message: Required value: message must be specified if rule contains line breaks`,
    ]);
  });

  it('reports a node that CEL cannot describe as an internal error', () => {
    expect(check({ type: 'object', properties: { raw: { 'x-kubernetes-preserve-unknown-fields': true, 'x-kubernetes-validations': [{ rule: 'true' }] } } })).to.deep.equal([
      `${root}.properties[raw].x-kubernetes-validations: Internal error: internal error: failed to construct type information for x-kubernetes-validations rules: unable to convert structural schema to CEL declarations`,
    ]);
  });
});
