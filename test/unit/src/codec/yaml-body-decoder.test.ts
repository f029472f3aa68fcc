import { expect } from 'chai';
import { YamlBodyDecoder, YamlCodecError } from '../../../../src/codec';

async function refusal(promise: Promise<unknown>): Promise<YamlCodecError> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(YamlCodecError);
    return error as YamlCodecError;
  }
  throw new Error('expected the body to be refused');
}

describe('YamlBodyDecoder (YAML bodies on a worker thread)', function () {
  this.timeout(60_000);
  let decoder: YamlBodyDecoder;

  beforeEach(() => {
    decoder = new YamlBodyDecoder();
  });

  afterEach(async () => {
    await decoder.close();
  });

  it('answers the JSON text of a body and its duplicate keys', async () => {
    const decoded = await decoder.decode('kind: ConfigMap\ndata:\n  a: "1"\n  a: yes\n', true);
    expect(JSON.parse(decoded.json)).to.deep.equal({ kind: 'ConfigMap', data: { a: true } });
    expect(decoded.duplicateKeysError).to.equal('error converting YAML to JSON: yaml: unmarshal errors:\n  line 4: key "a" already set in map');
  });

  it('passes the codec\'s refusals back with their reason', async () => {
    let bomb = 'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
    for (let level = 1; level < 9; level++) bomb += `a${level}: &a${level} [${Array(9).fill(`*a${level - 1}`).join(',')}]\n`;
    expect((await refusal(decoder.decode(bomb, false))).message).to.equal('yaml: document contains excessive aliasing');
    expect((await refusal(decoder.decode(`a: ${'['.repeat(3_000_000)}`, false))).reason).to.equal('TooDeep');
    expect((await refusal(decoder.decode('a: [1\n', false))).reason).to.equal('Malformed');
  });

  it('reads the deepest body a JSON body may be (1,000 levels) and refuses one level more', async () => {
    const nested = (depth: number) => `a: ${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}\n`;
    expect((await decoder.decode(nested(1000), false)).json).to.equal(`{"a":${'['.repeat(999)}${']'.repeat(999)}}`);
    expect((await refusal(decoder.decode(nested(1001), false))).reason).to.equal('TooDeep');
  });

  it('leaves the event loop running while a mebibyte of tiny nodes decodes', async () => {
    // On this thread the decode takes seconds without a turn of the loop; here the loop turns throughout.
    const body = `a: [${Array(500_000).fill('1').join(',')}]\n`;
    let turns = 0;
    let turning = true;
    const turn = (): void => {
      turns++;
      if (turning) setImmediate(turn);
    };
    setImmediate(turn);
    const decoded = await decoder.decode(body, true);
    turning = false;
    expect(decoded.json.length).to.be.greaterThan(1_000_000);
    expect(turns).to.be.greaterThan(100);
  });

  it('refuses a body that exhausts the worker\'s heap as too large, and decodes the next body on a new worker', async () => {
    const small = new YamlBodyDecoder({ heapMb: 32 });
    try {
      const error = await refusal(small.decode(`a: [${Array(500_000).fill('1').join(',')}]\n`, false));
      expect(error.reason).to.equal('TooLarge');
      expect(JSON.parse((await small.decode('b: 2\n', false)).json)).to.deep.equal({ b: 2 });
    } finally {
      await small.close();
    }
  });
});
