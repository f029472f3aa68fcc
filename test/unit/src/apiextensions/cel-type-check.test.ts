import { expect } from 'chai';
import { compileRule } from '../../../../src/apiextensions/cel/rule-compiler';
import type { JsonSchemaProps } from '../../../../src/apiextensions/json-schema';

const spec: JsonSchemaProps = {
  type: 'object',
  properties: {
    replicas: { type: 'integer' },
    minReplicas: { type: 'integer' },
    maxReplicas: { type: 'integer' },
    name: { type: 'string', maxLength: 63 },
    ratio: { type: 'number' },
    enabled: { type: 'boolean' },
    items: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 20 } },
    labels: { type: 'object', maxProperties: 10, additionalProperties: { type: 'string', maxLength: 20 } },
    containers: { type: 'array', maxItems: 10, items: { type: 'object', properties: { name: { type: 'string', maxLength: 20 }, image: { type: 'string', maxLength: 100 } } } },
    timeout: { type: 'string', format: 'duration' },
    notBefore: { type: 'string', format: 'date-time' },
    notAfter: { type: 'string', format: 'date-time' },
    data: { type: 'string', format: 'byte', maxLength: 100 },
    port: { 'x-kubernetes-int-or-string': true },
    extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    'max-surge': { type: 'integer' },
    endpoint: { type: 'string', maxLength: 100 },
  },
};
const root: JsonSchemaProps = { type: 'object', properties: { metadata: { type: 'object' }, spec } };

function message(rule: string, schema: JsonSchemaProps = spec, isResource = false): string | undefined {
  const outcome = compileRule({ rule }, schema, isResource);
  return outcome.ok ? undefined : outcome.message;
}

function block(rule: string, column: number, text: string): string {
  return `compilation failed: ERROR: <input>:1:${column}: ${text}\n | ${rule}\n | ${'.'.repeat(column - 1)}^`;
}

describe('apiextensions CEL type check at CRD write time', () => {
  it('refuses the operators and calls v1.25 finds no overload for, with cel-go\'s message and location', () => {
    expect(message('self.replicas + "x"')).to.equal(block('self.replicas + "x"', 15, "found no matching overload for '_+_' applied to '(int, string)'"));
    expect(message('self.replicas > "a"')).to.equal(block('self.replicas > "a"', 15, "found no matching overload for '_>_' applied to '(int, string)'"));
    expect(message('self.replicas.startsWith("a")')).to.equal(block('self.replicas.startsWith("a")', 25, "found no matching overload for 'startsWith' applied to 'int.(string)'"));
    expect(message('self.name.size() == "3"')).to.equal(block('self.name.size() == "3"', 18, "found no matching overload for '_==_' applied to '(int, string)'"));
    expect(message('self.items.all(x, x + 1)')).to.equal(block('self.items.all(x, x + 1)', 21, "found no matching overload for '_+_' applied to '(string, int)'"));
  });

  it('refuses a rule whose result is not a bool', () => {
    expect(message('self.replicas')).to.equal('cel expression must evaluate to a bool');
    expect(message('self.name + "x"')).to.equal('cel expression must evaluate to a bool');
    expect(message('self.items.map(i, i == "a")')).to.equal('cel expression must evaluate to a bool');
    // int-or-string is dyn for cel-go too, and a dyn result is not a bool.
    expect(message('self.port')).to.equal('cel expression must evaluate to a bool');
  });

  it('types formatted strings as timestamps, durations and bytes, printed as cel-go v0.12 does', () => {
    expect(message('self.timeout == "1h"')).to.equal(block('self.timeout == "1h"', 14, "found no matching overload for '_==_' applied to '(duration, string)'"));
    expect(message('self.notBefore.startsWith("2")')).to.equal(block('self.notBefore.startsWith("2")', 26, "found no matching overload for 'startsWith' applied to 'timestamp.(string)'"));
    expect(message('self.data + "x" == self.data')).to.equal(block('self.data + "x" == self.data', 11, "found no matching overload for '_+_' applied to '(bytes, string)'"));
    expect(message('self.notAfter - self.notBefore > duration("1h") && self.timeout < duration("5m") && self.data.size() < 10')).to.equal(undefined);
  });

  it('names object types after the rule\'s generated self type, and lists and maps by their elements', () => {
    expect(message('self.spec + 1 > 0', root, true)).to.match(/^compilation failed: ERROR: <input>:1:11: found no matching overload for '_\+_' applied to '\(selfType\d+\.spec, int\)'\n/);
    expect(message('self.items + 1 == self.items')).to.equal(block('self.items + 1 == self.items', 12, "found no matching overload for '_+_' applied to '(list(string), int)'"));
    expect(message('self.labels - self.labels == self.labels')).to.equal(block('self.labels - self.labels == self.labels', 13, "found no matching overload for '_-_' applied to '(map(string, string), map(string, string))'"));
  });

  it('does not compare numbers of different types (v1.25 leaves cross-type comparisons off)', () => {
    expect(message('self.ratio > 0')).to.equal(block('self.ratio > 0', 12, "found no matching overload for '_>_' applied to '(double, int)'"));
    expect(message('self.ratio > 0.0 && self.replicas > 0')).to.equal(undefined);
  });

  it('reports every issue in source order, each with its own caret', () => {
    const rule = 'self.nope > 0 && self.name + 1 == "a"';
    expect(message(rule)).to.equal(`compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | ${rule}\n | ....^\nERROR: <input>:1:28: found no matching overload for '_+_' applied to '(string, int)'\n | ${rule}\n | ...........................^`);
  });

  it('locates calls at their parenthesis and macro expansions at the macro\'s', () => {
    expect(message('size(self.replicas) > 0')).to.equal(block('size(self.replicas) > 0', 5, "found no matching overload for 'size' applied to '(int)'"));
    expect(message('self.items.all(x, x)')).to.equal(block('self.items.all(x, x)', 15, "found no matching overload for '_&&_' applied to '(bool, string)'"));
    expect(message('has(self.nope)')).to.equal(block('has(self.nope)', 4, "undefined field 'nope'"));
    expect(message('self.replicas.foo == 1')).to.equal(block('self.replicas.foo == 1', 14, "type 'int' does not support field selection"));
    expect(message('self.all(x, true)')).to.match(/^compilation failed: ERROR: <input>:1:1: expression of type 'selfType\d+' cannot be range of a comprehension \(must be list, map, or dynamic\)\n/);
  });

  it('keeps literal lists and maps homogeneous, as v1.25\'s environment asks', () => {
    expect(message('[1, "a"].size() == 2')).to.equal(block('[1, "a"].size() == 2', 5, "expected type 'int' but found 'string'"));
    expect(message('self.port in [1, "a"]')).to.not.equal(undefined);
    expect(message('{"a": 1, "b": 2}.size() == 2')).to.equal(undefined);
  });

  it('checks the Kubernetes libraries\' signatures', () => {
    expect(message('self.items.sum() > 0')).to.equal(block('self.items.sum() > 0', 15, "found no matching overload for 'sum' applied to 'list(string).()'"));
    expect(message('self.endpoint.getScheme() == "https"')).to.equal(block('self.endpoint.getScheme() == "https"', 24, "found no matching overload for 'getScheme' applied to 'string.()'"));
    expect(message('url(self.endpoint).startsWith("h")')).to.equal(block('url(self.endpoint).startsWith("h")', 30, "found no matching overload for 'startsWith' applied to 'kubernetes.URL.(string)'"));
    expect(message('self.name.find(1) == ""')).to.equal(block('self.name.find(1) == ""', 15, "found no matching overload for 'find' applied to 'string.(int)'"));
  });

  it('accepts the rules real operators write', () => {
    const valid = [
      'self.minReplicas <= self.maxReplicas',
      '!has(self.name) || self.name.size() > 0',
      'self.replicas >= 0 && self.replicas % 2 == 1',
      'size(self.items) <= 10',
      'self.name + "-suffix" != "x-suffix"',
      'self.containers.map(x, x.name).size() == self.containers.size()',
      'self.containers.all(c, c.image.startsWith("registry.example.com/"))',
      'self.containers.exists(c, c.name == "main") && self.containers.exists_one(c, c.name == "main")',
      'self.items.filter(i, i.startsWith("a")).size() <= 1',
      "self.items.all(i, i.matches('^[a-z]+$'))",
      'self.items.isSorted() && self.items.indexOf("a") < 5 && self.items.lastIndexOf("b") >= -1',
      'self.items.map(i, i.size()).sum() < 100 && self.items.map(i, i.size()).max() < 20',
      '"a" in self.labels && self.labels["a"] == "b" && self.labels.a == "b"',
      'self.labels.all(k, k.startsWith("x") && self.labels[k].size() < 20)',
      'self.notBefore < self.notAfter',
      'self.notAfter - self.notBefore <= duration("24h")',
      'self.timeout > duration("1s") && self.timeout.getSeconds() < 600',
      'timestamp(self.name) > self.notBefore && self.notBefore.getFullYear() > 2000',
      "type(self.port) == int ? self.port < 65536 : self.port.matches('^[a-z]+$')",
      "type(self.port) == string || self.port > 0",
      'self.port == 8080 || self.port == "http"',
      'self.enabled',
      '!self.enabled || self.replicas > 0',
      'self.replicas < 10 ? self.enabled : !self.enabled',
      'self.extra.anything > 3 && self.extra.nested.deeper == "x"',
      'self.max__dash__surge >= 0',
      'isURL(self.endpoint) && url(self.endpoint).getScheme() == "https" && url(self.endpoint).getQuery().size() == 0',
      'self.name.lowerAscii().split("-").size() == 2 && self.name.charAt(0) != "-" && self.name.substring(1).trim() != ""',
      'self.name.findAll("[0-9]").size() < 3 && self.name.find("[a-z]+") != ""',
      'int(self.name) > 0 || string(self.replicas) == self.name || double(self.replicas) > self.ratio',
      'dyn(self.replicas) == 1',
      'self.containers[0].name == self.containers[1].name',
      '-self.replicas < 0 && self.replicas * 2 / 2 == self.replicas',
      'self.ratio * 2.0 > 1.0',
      'self.items == ["a", "b"] || self.items.size() == 0',
    ];
    for (const rule of valid) expect(message(rule), rule).to.equal(undefined);
  });

  it('accepts rules at resource roots and across oldSelf', () => {
    expect(message('self.metadata.name.startsWith("a") && self.kind == "Widget" && self.apiVersion != ""', root, true)).to.equal(undefined);
    expect(message('self.spec.replicas >= oldSelf.spec.replicas && self.spec == oldSelf.spec', root, true)).to.equal(undefined);
    expect(message('self.metadata.labels.size() > 0', root, true)).to.match(/undefined field 'labels'/);
    const embedded: JsonSchemaProps = { type: 'object', properties: { template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } } };
    expect(message('self.template.kind == "Pod" && self.template.metadata.name != "" && self.template.spec.x == 1', embedded)).to.equal(undefined);
  });

  it('never refuses what it does not model: unknown fields kept by the schema and untyped nodes are dyn', () => {
    const loose: JsonSchemaProps = {
      type: 'object',
      properties: {
        extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'integer' } } },
        blob: { 'x-kubernetes-preserve-unknown-fields': true },
      },
    };
    expect(message('self.extra.unknown + 1 > 0 && self.extra.unknown.startsWith("a") && self.extra.known >= 0', loose)).to.equal(undefined);
    expect(message('self.blob.a.b == "x" && self.blob.items.all(i, i.size() > 0) && self.blob + 1 == 2', loose)).to.equal(undefined);
    // A result the pass cannot type is not called non-bool either.
    expect(message('self.blob.flag', loose)).to.equal(undefined);
    // What is declared is still checked.
    expect(message('self.extra.known + "x" == "1x"', loose)).to.match(/found no matching overload for '_\+_' applied to '\(int, string\)'/);
  });

  it('marks rules that read oldSelf as transition rules', () => {
    const transition = compileRule({ rule: 'self.replicas >= oldSelf.replicas' }, spec, false);
    const plain = compileRule({ rule: 'self.replicas >= 0' }, spec, false);
    expect(transition.ok && transition.compiled.isTransitionRule).to.equal(true);
    expect(plain.ok && plain.compiled.isTransitionRule).to.equal(false);
  });
});
