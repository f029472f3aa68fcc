import { expect } from 'chai';
import { decodeGoBase64 } from '../../../../../src/apis/schema/go-base64';
import { quantityDecodeError, QUANTITY_FORMAT_WRONG, QUANTITY_SUFFIX_WRONG } from '../../../../../src/apis/schema/go-quantity';
import { formatGoTime, parseGoTime } from '../../../../../src/apis/schema/go-time';

describe('src/apis/schema go-time (Go time.Parse with RFC3339 layouts)', () => {
  const layout = '"2006-01-02T15:04:05Z07:00"';
  const cases: Array<[string, string]> = [
    ['2008-13-01T00:00:00Z', 'parsing time "2008-13-01T00:00:00Z": month out of range'],
    ['2008-02-30T00:00:00Z', 'parsing time "2008-02-30T00:00:00Z": day out of range'],
    ['2008-01-01 00:00:00Z', `parsing time "2008-01-01 00:00:00Z" as ${layout}: cannot parse " 00:00:00Z" as "T"`],
    ['2008-01-01T00:00:00', `parsing time "2008-01-01T00:00:00" as ${layout}: cannot parse "" as "Z07:00"`],
    ['2008-01-01T00:00:00Zjunk', 'parsing time "2008-01-01T00:00:00Zjunk": extra text: "junk"'],
    ['2008-1-01T00:00:00Z', `parsing time "2008-1-01T00:00:00Z" as ${layout}: cannot parse "1-01T00:00:00Z" as "01"`],
    ['2008-01-01T25:00:00Z', 'parsing time "2008-01-01T25:00:00Z": hour out of range'],
    ['é', `parsing time "\\xc3\\xa9" as ${layout}: cannot parse "\\xc3\\xa9" as "2006"`],
  ];
  for (const [value, message] of cases) {
    it(`rejects ${JSON.stringify(value)} with Go's ParseError text`, () => {
      expect(parseGoTime(value, 'RFC3339')).to.deep.equal({ ok: false, message });
    });
  }

  it('accepts offsets and fractions, and formats back in UTC', () => {
    const parsed = parseGoTime('2008-01-01T01:01:01.999+05:30', 'RFC3339');
    expect(parsed.ok).to.equal(true);
    if (parsed.ok) {
      expect(formatGoTime(parsed.instant, 'RFC3339')).to.equal('2007-12-31T19:31:01Z');
      expect(formatGoTime(parsed.instant, 'RFC3339Micro')).to.equal('2007-12-31T19:31:01.999000Z');
    }
  });
});

describe('src/apis/schema go-base64 (Go base64.StdEncoding.Decode offsets)', () => {
  const cases: Array<[string, number | undefined]> = [
    ['aGVsbG8=', undefined],
    ['aGk=', undefined],
    ['aGVs\nbG8=', undefined],
    ['aGVsbG8', 4],
    ['a', 0],
    ['aG=k', 2],
    ['aGk=x', 4],
    ['aGV$', 3],
    ['=AAA', 0],
  ];
  for (const [input, offset] of cases) {
    it(`${JSON.stringify(input)} -> ${offset === undefined ? 'ok' : `byte ${offset}`}`, () => {
      const result = decodeGoBase64(input);
      if (offset === undefined) expect(result.ok).to.equal(true);
      else expect(result).to.deep.equal({ ok: false, message: `illegal base64 data at input byte ${offset}` });
    });
  }
});

describe('src/apis/schema go-quantity (resource.ParseQuantity acceptance)', () => {
  it('accepts the quantity forms', () => {
    for (const value of ['1', '0', '100m', '1.5Gi', '2e3', '1E', '+.5', '-1k', ' 250Mi ', 0.25, 7]) {
      expect(quantityDecodeError(value), String(value)).to.equal(undefined);
    }
  });

  it('rejects malformed values with ErrFormatWrong and bad suffixes with ErrSuffix', () => {
    for (const value of ['', 'abc', '1 Gi', true, {}, [1], '1e']) {
      expect(quantityDecodeError(value), JSON.stringify(value)).to.equal(value === '1e' ? QUANTITY_SUFFIX_WRONG : QUANTITY_FORMAT_WRONG);
    }
    expect(quantityDecodeError('1Q')).to.equal(QUANTITY_FORMAT_WRONG);
    expect(quantityDecodeError('1ki')).to.equal(QUANTITY_SUFFIX_WRONG);
  });
});
