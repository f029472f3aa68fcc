import { expect } from 'chai';
import { fieldErrorMessage } from '../../../../src/apis/validation';
import { validateCrdCreate, validateCrdUpdate } from '../../../../src/apiextensions/crd-validation';
import { withSchemaDefaults } from '../../../../src/apiextensions/defaulting';

type Obj = Record<string, any>;

function crd(overrides: (c: Obj) => void = () => undefined): Obj {
  const c: Obj = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } } } } }],
      conversion: { strategy: 'None' },
    },
  };
  overrides(c);
  return c;
}

const messages = (c: Obj) => validateCrdCreate(c).map(fieldErrorMessage);

describe('apiextensions CRD validation', () => {
  it('accepts a well-formed CRD', () => {
    expect(messages(crd())).to.deep.equal([]);
  });

  it('checks a CRD\'s finalizers as apimachinery does: a qualified name without a \'/\' is fine', () => {
    expect(messages(crd((c) => { c.metadata.finalizers = ['cleanup.example.com']; }))).to.deep.equal([]);
  });

  it('requires the name to be plural.group and the group to have a dot', () => {
    expect(messages(crd((c) => { c.metadata.name = 'widget.example.com'; }))).to.deep.equal(['metadata.name: Invalid value: "widget.example.com": must be spec.names.plural+"."+spec.group']);
    expect(messages(crd((c) => { c.spec.group = 'example'; c.metadata.name = 'widgets.example'; }))).to.deep.equal(['spec.group: Invalid value: "example": should be a domain with at least one dot']);
  });

  it('reports a rule that is empty or does not compile at the rule field of x-kubernetes-validations, as v1.25 does', () => {
    // An empty rule is a schema error: v1.25 then compiles none of the node's rules.
    const empty = messages(crd((c) => {
      c.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'] = [{ rule: ' ' }, { rule: 'self.a + 1 == 2' }];
    }));
    expect(empty).to.deep.equal(['spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Required value: rule is not specified']);
    const errs = messages(crd((c) => {
      c.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'] = [{ rule: 'true' }, { rule: 'self.a + 1 == 2' }];
    }));
    expect(errs).to.have.length(1);
    expect(errs[0]).to.match(/^spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[spec\]\.x-kubernetes-validations\[1\]\.rule: Invalid value: apiextensions\.ValidationRule\{Rule:"self\.a \+ 1 == 2", Message:""\}: compilation failed: ERROR: <input>:1:8: found no matching overload for '_\+_' applied to '\(string, int\)'/);
  });

  it('accepts the Go (RE2) patterns of real operators\' CRDs and refuses the ones Go refuses, under junctors too', () => {
    const withPatterns = (patterns: Record<string, string>, anyOf?: string) => crd((c) => {
      const spec = c.spec.versions[0].schema.openAPIV3Schema.properties.spec;
      for (const [name, pattern] of Object.entries(patterns)) spec.properties[name] = { type: 'string', pattern };
      if (anyOf !== undefined) spec.anyOf = [{ properties: { a: { pattern: anyOf } } }];
    });
    // prometheus-operator's partial_response_strategy, and the other RE2-only spellings.
    expect(messages(withPatterns({ strategy: '^(?i)(abort|warn)?$', name: '^[[:alpha:]]+\\z', letters: '^\\pL+$' }))).to.deep.equal([]);
    expect(messages(withPatterns({ backref: '(a)\\1' }, '(?=x)'))).to.deep.equal([
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].anyOf[0].properties[a].pattern: Invalid value: "(?=x)": must be a valid regular expression, but isn\'t: error parsing regexp: invalid or unsupported Perl syntax: `(?=`',
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[backref].pattern: Invalid value: "(a)\\\\1": must be a valid regular expression, but isn\'t: error parsing regexp: invalid escape sequence: `\\1`',
    ]);
  });

  it('requires exactly one storage version and unique version names', () => {
    const two = messages(crd((c) => { c.spec.versions.push({ ...c.spec.versions[0] }); }));
    expect(two.some((m) => m.includes('spec.versions: Invalid value:') && m.endsWith('must contain unique version names'))).to.equal(true);
    expect(two.some((m) => m.endsWith('must have exactly one version marked as storage version'))).to.equal(true);
  });

  it('reports the structural-schema rules with v1.25 paths, sorted', () => {
    const errs = messages(crd((c) => {
      c.spec.versions[0].schema.openAPIV3Schema = { type: 'object', additionalProperties: { type: 'string' }, properties: { spec: { properties: { list: { type: 'array' } } }, metadata: { type: 'object', properties: { labels: { type: 'object' } } } } };
    }));
    expect(errs).to.deep.equal([
      'spec.versions[0].schema.openAPIV3Schema.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive',
      'spec.versions[0].schema.openAPIV3Schema.additionalProperties: Forbidden: must not be used at the root',
      'spec.versions[0].schema.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified',
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[list].items: Required value: must be specified',
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields',
    ]);
  });

  it('checks defaults against their schema, list-map keys, printer columns and scale paths', () => {
    const errs = messages(crd((c) => {
      const spec = c.spec.versions[0].schema.openAPIV3Schema.properties.spec;
      spec.properties.n = { type: 'integer', default: 'x' };
      spec.properties.l = { type: 'array', 'x-kubernetes-list-type': 'map', items: { type: 'object', properties: { k: { type: 'string' } } } };
      c.spec.versions[0].additionalPrinterColumns = [{ name: 'X', type: 'weird', jsonPath: 'spec.x' }];
      c.spec.versions[0].subresources = { scale: { specReplicasPath: '.status.replicas', statusReplicasPath: '.status.replicas' } };
    }));
    expect(errs).to.include('spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[l].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map');
    expect(errs).to.include('spec.versions[0].additionalPrinterColumns[0].type: Invalid value: "weird": must be one of boolean,date,integer,number,string');
    expect(errs).to.include('spec.versions[0].additionalPrinterColumns[0].JSONPath: Invalid value: "spec.x": must be a simple json path starting with .');
    expect(errs).to.include('spec.versions[0].subresources.scale.specReplicasPath: Invalid value: ".status.replicas": should be a json path under .spec');
  });

  it('checks printer columns as v1.25 does: five types, eight formats, any JSONPath starting with a dot', () => {
    const errs = messages(crd((c) => {
      c.spec.versions[0].additionalPrinterColumns = [
        { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
        { name: 'Age', type: 'date', format: 'date-time', jsonPath: '.metadata.creationTimestamp', priority: 1 },
        { name: 'List', type: 'array', format: 'binary', jsonPath: '.spec.list' },
        { name: '', type: '', jsonPath: '' },
      ];
      c.spec.versions[0].subresources = { scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: 'status.replicas', labelSelectorPath: '.metadata.labels' } };
    }));
    expect(errs).to.deep.equal([
      'spec.versions[0].subresources.scale.statusReplicasPath: Invalid value: "status.replicas": must be a simple json path starting with .',
      'spec.versions[0].subresources.scale.labelSelectorPath: Invalid value: ".metadata.labels": should be a json path under either .spec or .status',
      'spec.versions[0].additionalPrinterColumns[2].type: Invalid value: "array": must be one of boolean,date,integer,number,string',
      'spec.versions[0].additionalPrinterColumns[2].format: Invalid value: "binary": must be one of byte,date,date-time,double,float,int32,int64,password',
      'spec.versions[0].additionalPrinterColumns[3].name: Required value',
      'spec.versions[0].additionalPrinterColumns[3].type: Required value: must be one of boolean,date,integer,number,string',
      'spec.versions[0].additionalPrinterColumns[3].JSONPath: Required value',
    ]);
  });

  it('checks defaults against their own schema once the schema is structural', () => {
    const errs = messages(crd((c) => { c.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.n = { type: 'integer', default: 'x' }; }));
    expect(errs).to.deep.equal(['spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[n].default: Invalid value: "string":  in body must be of type integer: "string"']);
  });

  it('requires a webhook client config for Webhook conversion', () => {
    const errs = messages(crd((c) => { c.spec.conversion = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v2'] } }; }));
    expect(errs).to.deep.equal([
      'spec.conversion.webhook.conversionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1',
      'spec.conversion.webhook.clientConfig: Required value: exactly one of url or service is required',
    ]);
  });

  it('keeps group and plural immutable, and scope and kind once established', () => {
    const old = crd((c) => { c.metadata.resourceVersion = '5'; c.status = { conditions: [{ type: 'Established', status: 'True' }] }; });
    const changed = crd((c) => { c.metadata.resourceVersion = '5'; c.spec.scope = 'Cluster'; c.spec.names.kind = 'Gadget'; c.spec.names.listKind = 'GadgetList'; });
    const errs = validateCrdUpdate(changed, old).map(fieldErrorMessage);
    expect(errs).to.include('spec.scope: Invalid value: "Cluster": field is immutable');
    expect(errs).to.include('spec.names.kind: Invalid value: "Gadget": field is immutable');
  });
});

describe('apiextensions defaulting on read', () => {
  it('copies only what it defaults and leaves shared input untouched', () => {
    const schema = { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string', default: 'x' }, b: { type: 'object', properties: { c: { type: 'integer' } } } } } } };
    const shared = { spec: { b: { c: 1 } } };
    const out = withSchemaDefaults(shared, schema) as Obj;
    expect(out).to.deep.equal({ spec: { a: 'x', b: { c: 1 } } });
    expect(shared).to.deep.equal({ spec: { b: { c: 1 } } });
    expect(out.spec.b).to.equal(shared.spec.b);
    const complete = { spec: { a: 'y' } };
    expect(withSchemaDefaults(complete, schema)).to.equal(complete);
  });
});
