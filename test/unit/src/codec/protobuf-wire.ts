/**
 * A tiny Protobuf writer for tests, independent of the codec under test: bytes are spelled out
 * field by field, the way Go's generated marshaller lays them out.
 */

export type Bytes = Buffer;

function varint(value: bigint): Bytes {
  let rest = BigInt.asUintN(64, value);
  const out: number[] = [];
  do {
    const low = Number(rest & 0x7fn);
    rest >>= 7n;
    out.push(rest === 0n ? low : low | 0x80);
  } while (rest !== 0n);
  return Buffer.from(out);
}

/** A varint field (wire type 0): int32, int64, bool. */
export function int(id: number, value: number | bigint | boolean): Bytes {
  const number = typeof value === 'boolean' ? (value ? 1n : 0n) : BigInt(value);
  return Buffer.concat([varint(BigInt(id << 3)), varint(number)]);
}

/** A length-delimited field (wire type 2) holding `payload`. */
export function bytes(id: number, payload: Bytes | string): Bytes {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  return Buffer.concat([varint(BigInt((id << 3) | 2)), varint(BigInt(body.length)), body]);
}

/** A nested message field: the concatenation of `fields`, length-delimited. */
export function message(id: number, ...fields: Bytes[]): Bytes {
  return bytes(id, Buffer.concat(fields));
}

/** A full body: `k8s\0` and runtime.Unknown{typeMeta{apiVersion, kind}, raw, "", ""}. */
export function envelope(apiVersion: string, kind: string, ...fields: Bytes[]): Bytes {
  return Buffer.concat([
    Buffer.from('k8s\0', 'latin1'),
    message(1, bytes(1, apiVersion), bytes(2, kind)),
    message(2, ...fields),
    bytes(3, ''),
    bytes(4, ''),
  ]);
}
