import { expect } from 'chai';
import { JsonPath, JsonPathError } from '../../../../../src/apis/jsonpath';

/** A custom resource with the shapes printer columns read: conditions, lists, labels, numbers. */
const certificate = {
  apiVersion: 'cert.example.com/v1',
  kind: 'Certificate',
  metadata: { name: 'web', creationTimestamp: '2026-01-01T00:00:00Z', labels: { 'app.kubernetes.io/name': 'web', tier: 'front' } },
  spec: { secretName: 'web-tls', dnsNames: ['a.example.com', 'b.example.com', 'c.example.com', 'd.example.com'], duration: 2160, ratio: 0.5, renew: true, empty: null },
  status: {
    conditions: [
      { type: 'Issuing', status: 'False', observedGeneration: 1 },
      { type: 'Ready', status: 'True', observedGeneration: 2, reason: 'Issued' },
      { status: 'Unknown' },
    ],
    notAfter: '2026-04-01T00:00:00Z',
  },
};

/** Printer columns read with missing keys allowed; `failure` reads without. */
function run(template: string, data: unknown = certificate, allowMissingKeys = true): string {
  return JsonPath.parse(template).execute(data, { allowMissingKeys });
}

function failure(template: string, data: unknown = certificate): { code: string; message: string } {
  try {
    JsonPath.parse(template).execute(data);
  } catch (err) {
    if (err instanceof JsonPathError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error(`${template} did not fail`);
}

describe('apis/jsonpath: kubectl JSONPath over a document', () => {
  const cases: Array<[construct: string, template: string, output: string]> = [
    ['plain text', 'hello', 'hello'],
    ['text around an action', 'name={.metadata.name}!', 'name=web!'],
    ['fields', '{.spec.secretName}', 'web-tls'],
    ['root markers $ and @', '{$.metadata.name} {@.kind}', 'web Certificate'],
    ['an object prints as compact JSON, keys sorted', '{.metadata.labels}', '{"app.kubernetes.io/name":"web","tier":"front"}'],
    ['an array prints as JSON', '{.spec.dnsNames}', '["a.example.com","b.example.com","c.example.com","d.example.com"]'],
    ['numbers and booleans as Go prints them', '{.spec.duration} {.spec.ratio} {.spec.renew}', '2160 0.5 true'],
    ['null as Go prints nil', '{.spec.empty}', '<nil>'],
    ['escaped dot in a key', '{.metadata.labels.app\\.kubernetes\\.io/name}', 'web'],
    ['quoted key', "{.metadata['name']}", 'web'],
    ['quoted key: its dots still separate fields', "{['metadata.name']}", 'web'],
    ['index', '{.spec.dnsNames[1]}', 'b.example.com'],
    ['negative index', '{.spec.dnsNames[-1]}', 'd.example.com'],
    ['[*]', '{.status.conditions[*].status}', 'False True Unknown'],
    ['slice', '{.spec.dnsNames[1:3]}', 'b.example.com c.example.com'],
    ['slice with a step', '{.spec.dnsNames[0:4:2]}', 'a.example.com c.example.com'],
    ['open slice', '{.spec.dnsNames[2:]}', 'c.example.com d.example.com'],
    ['negative slice', '{.spec.dnsNames[:-2]}', 'a.example.com b.example.com'],
    ['empty slice', '{.spec.dnsNames[2:2]}', ''],
    ['union of indexes', '{.spec.dnsNames[0,3]}', 'a.example.com d.example.com'],
    ['union of keys', "{.spec['secretName','duration']}", 'web-tls 2160'],
    ['wildcard over an object (sorted keys)', '{.metadata.labels.*}', 'web front'],
    ['recursive descent', '{..observedGeneration}', '1 2'],
    ['recursive descent then a dotted field', '{...reason}', 'Issued'],
    ['filter ==', '{.status.conditions[?(@.type=="Ready")].status}', 'True'],
    ['filter == with single quotes and spaces', "{.status.conditions[?(@.type == 'Issuing')].status}", 'False'],
    ['filter !=', '{.status.conditions[?(@.type!="Ready")].status}', 'False'],
    ['filter <', '{.status.conditions[?(@.observedGeneration<2)].type}', 'Issuing'],
    ['filter >', '{.status.conditions[?(@.observedGeneration>1)].type}', 'Ready'],
    ['filter <=', '{.status.conditions[?(@.observedGeneration<=2)].type}', 'Issuing Ready'],
    ['filter >=', '{.status.conditions[?(@.observedGeneration>=2)].type}', 'Ready'],
    ['filter on strings compares bytes', '{.spec.dnsNames[?(@>"b")]}', 'b.example.com c.example.com d.example.com'],
    ['filter on the element itself', '{.spec.dnsNames[?(@=="c.example.com")]}', 'c.example.com'],
    ['existence filter', '{.status.conditions[?(@.reason)].type}', 'Ready'],
    ['a parenthesis inside the quoted operand', '{.status.conditions[?(@.type=="(x)")].status}', ''],
    ['quoted text', '{"{"}{"\\t"}', '{\t'],
    ['range and end', '{range .status.conditions[*]}{.status},{end}', 'False,True,Unknown,'],
    ['nested range, text after the inner end', '{range .status.conditions[0:2]}{.type}:{range .status}{@}{end};{end}', 'Issuing:False;Ready:True;'],
    ['empty range', '{range .spec.none[*]}{.x}{end}[{.kind}]', '[Certificate]'],
  ];
  for (const [construct, template, output] of cases) {
    it(`${construct}: ${template} gives ${JSON.stringify(output)}`, () => {
      expect(run(template)).to.equal(output);
    });
  }

  it('a filter over an array of objects', () => {
    expect(run('{[?(@.renew==true)].secretName}', [certificate.spec])).to.equal('web-tls');
  });

  it('a missing key is an error, or nothing when missing keys are allowed', () => {
    expect(failure('{.spec.issuerRef.name}')).to.deep.equal({ code: 'ExecuteError', message: 'issuerRef is not found' });
    expect(run('{.spec.issuerRef.name}')).to.equal('');
    // The third condition has no type: with missing keys allowed it is skipped, else an error.
    expect(run('{.status.conditions[?(@.type=="Ready")].status}')).to.equal('True');
    expect(failure('{.status.conditions[?(@.type=="Ready")].status}')).to.deep.equal({ code: 'ExecuteError', message: 'type is not found' });
  });

  it('results are one list per top-level node, values in document order', () => {
    const path = JsonPath.parse('{.status.conditions[?(@.status)].status} and {.kind}');
    expect(path.findResults(certificate, { allowMissingKeys: true })).to.deep.equal([['False', 'True', 'Unknown'], [' and '], ['Certificate']]);
  });

  it('compares as Go text/template does: an int never equals a float, null is not comparable', () => {
    expect(failure('{.status.conditions[?(@.observedGeneration==1.0)].type}')).to.deep.equal({ code: 'ExecuteError', message: 'incompatible types for comparison' });
    expect(failure('{.status.conditions[?(@.status==1)].type}')).to.deep.equal({ code: 'ExecuteError', message: 'incompatible types for comparison' });
    expect(failure('{[?(@.a<true)]}', [{ a: false }])).to.deep.equal({ code: 'ExecuteError', message: 'invalid type for comparison' });
    expect(failure('{[?(@.a=="x")]}', [{ a: null }])).to.deep.equal({ code: 'ExecuteError', message: 'invalid type for comparison' });
    expect(run('{[?(@.a==1.5)].b}', [{ a: 1.5, b: 'float' }])).to.equal('float');
  });

  it('refuses malformed templates with kubectl\'s parse errors', () => {
    const parseErrors: Array<[string, string]> = [
      ['{.hello', 'unclosed action'],
      ['{*}', "unrecognized character in action: U+002A '*'"],
      ['{+12.3.0}', 'cannot parse number +12.3.0'],
      ['{[1}', 'unterminated array'],
      ['{[?(.price]}', 'unterminated filter'],
      ['{[?(@.a==1)}', 'unclosed array expect ]'],
      ['{........}', 'invalid multiple recursive descent'],
      ['{"abc}', 'unterminated quoted string'],
      ['{"\\q"}', 'unquote string "\\q" error invalid syntax'],
      ['{[a]}', 'invalid array index a'],
      ['{[1:x]}', 'invalid array index 1:x'],
      ['{.a\n}', 'unclosed action'],
    ];
    for (const [template, message] of parseErrors) {
      let caught: unknown;
      try {
        JsonPath.parse(template);
      } catch (err) {
        caught = err;
      }
      expect(caught, template).to.be.instanceOf(JsonPathError);
      expect((caught as JsonPathError).code, template).to.equal('ParseError');
      expect((caught as JsonPathError).message, template).to.equal(message);
    }
  });

  it('reports kubectl\'s execution errors', () => {
    const executeErrors: Array<[string, string]> = [
      ['{hello}', 'unrecognized identifier hello'],
      ['{.metadata[0]}', 'map[string]interface {} is not array or slice'],
      ['{.spec.dnsNames[4]}', 'array index out of bounds: index 4, length 4'],
      ['{.spec.dnsNames[-5]}', 'array index out of bounds: index -1, length 4'],
      ['{.spec.dnsNames[3:1]}', 'starting index 3 is greater than ending index 1'],
      ['{.spec.dnsNames[0:4:0]}', 'step must be > 0'],
      ['{.spec[?(@.a)]}', 'map[dnsNames:[a.example.com b.example.com c.example.com d.example.com] duration:2160 empty:<nil> ratio:0.5 renew:true secretName:web-tls] is not array or slice and cannot be filtered'],
      ['{.status.conditions[?(@.type<>"Ready")]}', 'unrecognized filter operator <>'],
      ['{.status.conditions[?(@.*=="True")]}', 'can only compare one element at a time'],
      ['{range .spec.dnsNames[*]}{@}{end}{end}', 'not in range, nothing to end'],
    ];
    for (const [template, message] of executeErrors) expect(failure(template), template).to.deep.equal({ code: 'ExecuteError', message });
  });

  it('prints floats as Go\'s %v does', () => {
    expect(run('{.a} {.b} {.c} {.d}', { a: 1234567.5, b: 0.00001, c: 123456.5, d: 1e-7 })).to.equal('1.2345675e+06 1e-05 123456.5 1e-07');
  });
});
