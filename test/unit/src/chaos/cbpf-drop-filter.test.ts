/**
 * The cBPF programs are run here by a tiny interpreter of the instructions they use, on
 * hand-built Ethernet/IPv4 headers, so their verdicts are checked without a kernel.
 */
import { expect } from 'chai';
import { cbpfDropProgram, ipv4ToNumber } from '../../../../src/chaos/cbpf-drop-filter';

const SHOT = 2;
const UNSPEC = 0xffffffff;

function packet(source: string, destination: string, ethertype = 0x0800): Buffer {
  const bytes = Buffer.alloc(34);
  bytes.writeUInt16BE(ethertype, 12);
  bytes.writeUInt32BE(ipv4ToNumber(source), 26);
  bytes.writeUInt32BE(ipv4ToNumber(destination), 30);
  return bytes;
}

function run(bytecode: string, data: Buffer, random: () => number = () => 0): number {
  const [count, ...rest] = bytecode.split(',');
  const program = rest.map((i) => i.split(' ').map(Number));
  expect(program).to.have.length(Number(count));
  let accumulator = 0;
  for (let pc = 0; pc < program.length; pc++) {
    const [code, jt, jf, k] = program[pc];
    if (code === 0x28) accumulator = data.readUInt16BE(k);
    else if (code === 0x20) accumulator = k === ((-0x1000 + 56) >>> 0) ? random() : data.readUInt32BE(k);
    else if (code === 0x15) pc += accumulator === k ? jt : jf;
    else if (code === 0x25) pc += accumulator > k ? jt : jf;
    else if (code === 0x06) return k;
    else throw new Error(`unexpected opcode ${code}`);
  }
  throw new Error('fell off the program');
}

describe('chaos: cBPF drop filters', () => {
  it('drops exactly the packets from one address to another', () => {
    const program = cbpfDropProgram([{ source: '10.213.0.11', destination: '10.213.0.12' }]);
    expect(run(program, packet('10.213.0.11', '10.213.0.12'))).to.equal(SHOT);
    expect(run(program, packet('10.213.0.12', '10.213.0.11'))).to.equal(UNSPEC);
    expect(run(program, packet('10.213.0.11', '10.213.0.13'))).to.equal(UNSPEC);
    expect(run(program, packet('10.213.0.11', '10.213.0.12', 0x0806))).to.equal(UNSPEC);
  });

  it('drops what any of several rules matches (a leader cut from its peers)', () => {
    const program = cbpfDropProgram([{ destination: '10.213.0.12' }, { destination: '10.213.0.13' }]);
    expect(run(program, packet('10.213.0.11', '10.213.0.12'))).to.equal(SHOT);
    expect(run(program, packet('10.213.0.11', '10.213.0.13'))).to.equal(SHOT);
    expect(run(program, packet('10.213.0.11', '10.213.0.1'))).to.equal(UNSPEC);
  });

  it('drops a share of the packets by the random draw', () => {
    const program = cbpfDropProgram([{ ratio: 0.25 }]);
    expect(run(program, packet('10.213.0.11', '10.213.0.1'), () => 0x10000000)).to.equal(SHOT);
    expect(run(program, packet('10.213.0.11', '10.213.0.1'), () => 0x50000000)).to.equal(UNSPEC);
  });

  it('refuses bad addresses and ratios', () => {
    expect(() => cbpfDropProgram([{ source: '10.213.0.300' }])).to.throw(RangeError);
    expect(() => cbpfDropProgram([{ ratio: 0 }])).to.throw(RangeError);
  });
});
