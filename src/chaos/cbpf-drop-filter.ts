/**
 * Classic BPF programs for `tc filter ... bpf da bytecode`, that drop IPv4 packets by source and
 * destination address, all of them or a random share. This kernel family may lack netem and the
 * gact `drop` action, but cls_bpf in direct-action mode is enough: a program returns the verdict
 * itself (TC_ACT_SHOT drops, TC_ACT_UNSPEC lets the next filter decide), and cBPF's ancillary
 * random load gives packet loss.
 */

export interface DropRule {
  /** Dotted IPv4 source to match; any when absent. */
  source?: string;
  /** Dotted IPv4 destination to match; any when absent. */
  destination?: string;
  /** Share of matching packets dropped, (0, 1]; 1 when absent. */
  ratio?: number;
}

interface Instruction {
  code: number;
  /** Targets as labels; resolved to relative offsets at the end. */
  jumpTrue?: string;
  jumpFalse?: string;
  k: number;
  label?: string;
}

const LD_H_ABS = 0x28;
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGT_K = 0x25;
const RET_K = 0x06;
/** SKF_AD_OFF + SKF_AD_RANDOM: a fresh random 32-bit value. */
const RANDOM_OFFSET = (-0x1000 + 56) >>> 0;
/** At tc's egress and ingress hooks the packet starts at the Ethernet header. */
const ETHERTYPE_OFFSET = 12;
const IPV4_SOURCE_OFFSET = 14 + 12;
const IPV4_DESTINATION_OFFSET = 14 + 16;
const TC_ACT_SHOT = 2;
const TC_ACT_UNSPEC = 0xffffffff;

export function ipv4ToNumber(address: string): number {
  const parts = address.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) throw new RangeError(`not an IPv4 address: ${address}`);
  return ((parts[0] << 24) | (parts[1] << 16) | (parts[2] << 8) | parts[3]) >>> 0;
}

/** The bytecode string tc expects ("count,code jt jf k,..."), for a program dropping what any rule matches. */
export function cbpfDropProgram(rules: readonly DropRule[]): string {
  const program: Instruction[] = [];
  program.push({ code: LD_H_ABS, k: ETHERTYPE_OFFSET });
  program.push({ code: JEQ_K, k: 0x0800, jumpFalse: 'accept' });
  rules.forEach((rule, index) => {
    const nextRule = `rule-${index + 1}`;
    const start = program.length;
    if (rule.source !== undefined) {
      program.push({ code: LD_W_ABS, k: IPV4_SOURCE_OFFSET });
      program.push({ code: JEQ_K, k: ipv4ToNumber(rule.source), jumpFalse: nextRule });
    }
    if (rule.destination !== undefined) {
      program.push({ code: LD_W_ABS, k: IPV4_DESTINATION_OFFSET });
      program.push({ code: JEQ_K, k: ipv4ToNumber(rule.destination), jumpFalse: nextRule });
    }
    const ratio = rule.ratio ?? 1;
    if (!(ratio > 0 && ratio <= 1)) throw new RangeError(`drop ratio must be in (0, 1], got ${ratio}`);
    if (ratio < 1) {
      program.push({ code: LD_W_ABS, k: RANDOM_OFFSET });
      // Random values above the threshold pass: the dropped share is threshold / 2^32.
      program.push({ code: JGT_K, k: Math.floor(ratio * 0xffffffff) >>> 0, jumpTrue: 'accept' });
    }
    program.push({ code: RET_K, k: TC_ACT_SHOT });
    if (program.length > start) program[start].label = `rule-${index}`;
  });
  program.push({ code: RET_K, k: TC_ACT_UNSPEC, label: 'accept' });
  // A rule label that names no instruction (the last rule's next) means "accept".
  const positions = new Map<string, number>();
  program.forEach((instruction, position) => {
    if (instruction.label !== undefined) positions.set(instruction.label, position);
  });
  const resolve = (label: string | undefined, from: number): number => {
    if (label === undefined) return 0;
    const target = positions.get(label) ?? positions.get('accept') as number;
    const offset = target - from - 1;
    if (offset < 0 || offset > 255) throw new RangeError('cBPF jump out of range: too many rules');
    return offset;
  };
  const lines = program.map((instruction, position) => `${instruction.code} ${resolve(instruction.jumpTrue, position)} ${resolve(instruction.jumpFalse, position)} ${instruction.k >>> 0}`);
  return `${lines.length},${lines.join(',')}`;
}
