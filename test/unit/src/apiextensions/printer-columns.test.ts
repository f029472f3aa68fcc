import { expect } from 'chai';
import { PrinterColumns } from '../../../../src/apiextensions/printer-columns';
import type { PrinterColumn } from '../../../../src/apiextensions/crd-model';
import type { TableRequest } from '../../../../src/registry/strategy';

type Obj = Record<string, any>;

const NOW = Date.parse('2026-06-10T12:00:00Z');
const request: TableRequest = { tableApiVersion: 'meta.k8s.io/v1', includeObject: 'None', objectKind: { apiVersion: 'cert.example.com/v1', kind: 'Certificate' } };

/** The printer columns of cert-manager's Certificate, in our own words: a filter column, a date column, a priority-1 column. */
const certificateColumns: PrinterColumn[] = [
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status', priority: 0 },
  { name: 'Secret', type: 'string', jsonPath: '.spec.secretName', priority: 0 },
  { name: 'Issuer', type: 'string', jsonPath: '.spec.issuerRef.name', priority: 1 },
  { name: 'Status', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].message', priority: 1 },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.', priority: 0 },
];

function certificate(name: string, created: string, ready?: string): Obj {
  return {
    apiVersion: 'cert.example.com/v1',
    kind: 'Certificate',
    metadata: { name, creationTimestamp: created },
    spec: { secretName: `${name}-tls`, issuerRef: { name: 'letsencrypt' } },
    status: ready === undefined ? {} : { conditions: [{ type: 'Issuing', status: 'False' }, { type: 'Ready', status: ready, message: 'Certificate is up to date' }] },
  };
}

function cells(columns: PrinterColumn[], objects: Obj[]): unknown[][] {
  return (new PrinterColumns(columns).toTable(objects, {}, request, NOW) as Obj).rows.map((row: Obj) => row.cells);
}

describe('apiextensions printer columns: the Table of custom resources', () => {
  it('reads a filter column and shows dates as ages (HumanDuration)', () => {
    const table = new PrinterColumns(certificateColumns).toTable([
      certificate('fresh', '2026-06-10T11:55:00Z', 'True'),
      certificate('older', '2026-06-07T08:00:00Z', 'False'),
      certificate('pending', '2026-06-10T11:59:30Z'),
    ], { resourceVersion: '12' }, request, NOW) as Obj;
    expect(table.columnDefinitions.map((c: Obj) => [c.name, c.type, c.format, c.priority])).to.deep.equal([
      ['Name', 'string', 'name', 0],
      ['Ready', 'string', '', 0],
      ['Secret', 'string', '', 0],
      ['Issuer', 'string', '', 1],
      ['Status', 'string', '', 1],
      ['Age', 'date', '', 0],
    ]);
    expect(table.columnDefinitions[1].description).to.equal('Custom resource definition column (in JSONPath format): .status.conditions[?(@.type=="Ready")].status');
    expect(table.columnDefinitions[5].description).to.equal('CreationTimestamp is a timestamp representing the server time when this object was created.');
    expect(table.rows.map((row: Obj) => row.cells)).to.deep.equal([
      ['fresh', 'True', 'fresh-tls', 'letsencrypt', 'Certificate is up to date', '5m'],
      ['older', 'False', 'older-tls', 'letsencrypt', 'Certificate is up to date', '3d4h'],
      ['pending', null, 'pending-tls', 'letsencrypt', null, '30s'],
    ]);
    expect(table.metadata).to.deep.equal({ resourceVersion: '12' });
  });

  it('follows HumanDuration at each of its boundaries', () => {
    const ages = ['2026-06-10T11:59:59Z', '2026-06-10T11:58:00Z', '2026-06-10T11:54:30Z', '2026-06-10T10:00:00Z', '2026-06-10T06:30:00Z', '2026-06-09T12:00:00Z', '2026-06-01T12:00:00Z', '2025-01-10T12:00:00Z', '2020-06-10T12:00:00Z', '2026-06-10T12:00:01Z', '2026-06-10T12:00:05Z'];
    const rows = cells([{ name: 'Age', type: 'date', jsonPath: '.t', priority: 0 }], ages.map((t) => ({ metadata: { name: 'x' }, t })));
    expect(rows.map((row) => row[1])).to.deep.equal(['1s', '2m', '5m30s', '120m', '5h30m', '24h', '9d', '516d', '6y1d', '0s', '<invalid>']);
  });

  it('defaults to an Age column described as creationTimestamp', () => {
    const table = new PrinterColumns([]).toTable([certificate('a', '2026-06-10T11:00:00Z')], {}, request, NOW) as Obj;
    expect(table.columnDefinitions.map((c: Obj) => c.name)).to.deep.equal(['Name', 'Age']);
    expect(table.columnDefinitions[1]).to.include({ type: 'date', format: '', priority: 0 });
    expect(table.columnDefinitions[1].description).to.match(/^CreationTimestamp is a timestamp representing the server time/);
    expect(table.rows[0].cells).to.deep.equal(['a', '60m']);
  });

  it('converts each column type as v1.25 does, and null when the value has another type', () => {
    const columns: PrinterColumn[] = [
      { name: 'Int', type: 'integer', jsonPath: '.v', priority: 0 },
      { name: 'Num', type: 'number', jsonPath: '.v', priority: 0 },
      { name: 'Bool', type: 'boolean', jsonPath: '.v', priority: 0 },
      { name: 'Str', type: 'string', jsonPath: '.v', priority: 0 },
      { name: 'Date', type: 'date', jsonPath: '.v', priority: 0 },
    ];
    const values = [7, 2.9, true, 'text', { a: [1, 'b'] }, null, '2026-06-10T11:00:00+01:00', '0001-01-01T00:00:00Z', '', '2026-02-30T00:00:00Z', '2026-06-10t11:00:00Z'];
    expect(cells(columns, values.map((v) => ({ metadata: { name: 'x' }, v }))).map((row) => row.slice(1))).to.deep.equal([
      [7, 7, null, '7', null],
      [2, 2.9, null, '2.9', null],
      [null, null, true, 'true', null],
      [null, null, null, 'text', '<invalid>'],
      [null, null, null, '{"a":[1,"b"]}', null],
      [null, null, null, '<no value>', null],
      [null, null, null, '2026-06-10T11:00:00+01:00', '120m'],
      [null, null, null, '0001-01-01T00:00:00Z', '<unknown>'],
      [null, null, null, '', '<unknown>'],
      [null, null, null, '2026-02-30T00:00:00Z', '<invalid>'],
      [null, null, null, '2026-06-10t11:00:00Z', '<invalid>'],
    ]);
  });

  it('takes the first value of a list result, and null for a path that finds nothing or fails', () => {
    const columns: PrinterColumn[] = [
      { name: 'Hosts', type: 'string', jsonPath: '.spec.hosts[*]', priority: 0 },
      { name: 'Third', type: 'string', jsonPath: '.spec.hosts[2]', priority: 0 },
      { name: 'Missing', type: 'integer', jsonPath: '.spec.replicas', priority: 0 },
    ];
    expect(cells(columns, [{ metadata: { name: 'x' }, spec: { hosts: ['a', 'b'] } }])).to.deep.equal([['x', 'a', null, null]]);
  });

  it('keeps the columns before one whose path does not parse, and none after it', () => {
    const columns: PrinterColumn[] = [
      { name: 'Good', type: 'string', jsonPath: '.a', priority: 0 },
      { name: 'Bad', type: 'string', jsonPath: '.a[', priority: 0 },
      { name: 'After', type: 'string', jsonPath: '.b', priority: 0 },
    ];
    const table = new PrinterColumns(columns).toTable([{ metadata: { name: 'x' }, a: 'A', b: 'B' }], {}, request, NOW) as Obj;
    expect(table.columnDefinitions.map((c: Obj) => c.name)).to.deep.equal(['Name', 'Good']);
    expect(table.rows[0].cells).to.deep.equal(['x', 'A']);
  });

  it('shows the row object as asked by includeObject', () => {
    const object = certificate('a', '2026-06-10T11:00:00Z');
    const metadata = new PrinterColumns([]).toTable([object], {}, { ...request, includeObject: 'Metadata' }, NOW) as Obj;
    expect(metadata.rows[0].object).to.deep.equal({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata });
    const whole = new PrinterColumns([]).toTable([object], {}, { ...request, includeObject: 'Object' }, NOW) as Obj;
    expect(whole.rows[0].object).to.equal(object);
  });
});
